"""Helpers of the browser tests (``test_browser.py``, ``test_browser_layout.py``; fixtures: ``conftest.py``).

The site is built once per test session the way ``python -m leaderboard site`` builds it — this checkout's
``mkdocs.yml`` and committed scripts, styles and vendored tablesort, pages from
:func:`leaderboard.site.build.generate_pages`, ``mkdocs build --strict`` — from synthetic exports of four
submissions (``leaderboard.tools.bench_ranking``'s generators) in a temporary repository, and served over
HTTP on 127.0.0.1 to headless Chromium (Debian's ``chromium``) driven by Playwright.

Without ``/usr/bin/chromium`` or the ``playwright`` package the tests are skipped, except when ``CI`` is
set: then they fail (CI installs both).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from tests._mkdocs import copy_mkdocs_config

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
N_SUBMISSIONS = 4
TOP_PAGES = {
    "overview": "",
    "tracks": "tracks/",
    "amore": "tracks/amore/",
    "submissions": "submissions/",
    "methodology": "methodology/",
    "how-to-submit": "how-to-submit/",
    "security": "security/",
    "downloads": "downloads/",
}


def require_browser() -> None:
    """Skip without Chromium or Playwright; fail instead when ``CI`` is set."""
    missing = []
    if not CHROMIUM.is_file():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (leaderboard/requirements.lock)")
    if missing:
        message = "browser test needs " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(f"{message}, but CI is set: the CI job must install it", pytrace=False)
        pytest.skip(message)


def build_site_for_browser(root: Path) -> Path:
    """Build the site from synthetic exports into ``root``; return ``root/public``."""
    import pandas as pd

    from leaderboard.site.build import build_site, generate_pages, write_exports
    from leaderboard.tools.bench_ranking import synthetic_curves, synthetic_exports, synthetic_item_ranks
    from tests.site import _builders as builders

    copy_mkdocs_config(root)
    # The committed, hand-written assets (scripts, styles, vendored tablesort); pages and data are generated.
    skip = shutil.ignore_patterns("data", "submissions", "*.md", "vendor")
    shutil.copytree(REPO_ROOT / "site", root / "site", ignore=skip)
    ranks = synthetic_item_ranks(N_SUBMISSIONS, seed=3)
    # The strings the model saw: short alcohol chains, so that every one parses and is drawn.
    chain = ["C" * (1 + int(hashlib.sha256(c.encode()).hexdigest(), 16) % 6) for c in ranks["id"].astype(str)]
    ranks = ranks.assign(original=[f"{c}O" for c in chain], augmented=[f"O{c}" for c in chain])
    results, runs, submissions = synthetic_exports(ranks)
    for i, sub in enumerate(submissions):
        sub.update(name=f"Model {'ABCD'[i]} | synthetic", authors=["Test Author"], license="MIT")
    # Two generative models on T3, so that both boards are drawn (issue 35: one board per kind of model).
    generative = {"gen-a": 0.7, "gen-b": 0.4}
    results = pd.concat([results, builders.consistency_results(generative)], ignore_index=True)
    runs = pd.concat(
        [runs, pd.DataFrame([builders.run(g, "pubchem-names", track="consistency") for g in generative])],
        ignore_index=True,
    )
    caps = {g: ["generate"] for g in generative}
    submissions = [*submissions, *builders.submissions(list(generative), caps)]
    site = root / "site"
    tables = {"recall_at_k": synthetic_curves(results), "item_ranks": ranks}
    write_exports(results, runs, submissions, site, tables=tables)
    generate_pages(site, repo_root=root)
    return build_site(root, strict=True)


#: Opens every folded section of the article (pymdownx.details ``<details>``): plots.js draws the figures of
#: a section when it opens.
_UNFOLD_JS = "() => document.querySelectorAll('article details:not([open])').forEach((d) => (d.open = true))"
#: Whether every figure that is not inside a closed section is drawn (or failed visibly).
SHOWN_PLOTS_DRAWN_JS = """() => [...document.querySelectorAll('.chemrobust-plot')]
  .filter((el) => !el.closest('details:not([open])'))
  .every((el) => el.hasAttribute('data-rendered') || el.classList.contains('chemrobust-plot--error'))"""


def unfold(tab: object, timeout: int = 30_000) -> None:
    """Open every folded section of the page and wait until the figures they hold are drawn."""
    tab.evaluate(_UNFOLD_JS)
    tab.wait_for_function(SHOWN_PLOTS_DRAWN_JS, timeout=timeout)


class BrowserPage:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser: object, width: int = 1400, height: int = 900) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on(
            "console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None
        )
        self.page.on("pageerror", lambda exc: self.errors.append(f"exception: {exc}"))

    def _console(self, message: object) -> None:
        if message.type == "error":
            self.errors.append(f"console: {message.text} ({message.location.get('url')})")

    def open(self, url: str) -> object:
        response = self.page.goto(url, wait_until="networkidle")
        assert response is not None and response.status == 200, url
        return self.page

    def shot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.context.close()
