"""The built site in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

The site is built the way ``python -m leaderboard site`` builds it — this checkout's ``mkdocs.yml`` and
committed scripts, styles and vendored tablesort, pages from :func:`leaderboard.site.build.generate_pages`,
``mkdocs build --strict`` — from synthetic exports of four submissions (``leaderboard.tools.bench_ranking``'s
generators) in a temporary repository. The per-molecule table carries small valid SMILES strings, so that
the failure explorer draws real molecules. ``public/`` is served over HTTP on 127.0.0.1 and
Chromium checks what a visitor sees: every top-level page and a submission page load without a console
error, a click on a table header sorts a numeric column, plots render (plotly's ``.main-svg``), the
embedded number table and the molecule drawings appear, search answers, and the palette switches to dark.
Full-page screenshots are saved to ``test-artifacts/screenshots/`` (git-ignored; CI keeps them).

Without ``/usr/bin/chromium`` or the ``playwright`` package the test is skipped, except when ``CI`` is set:
then it fails (CI installs both).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests._mkdocs import copy_mkdocs_config

pytestmark = pytest.mark.slow

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


def _require_browser() -> None:
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


def _build(root: Path) -> Path:
    """Build the site from synthetic exports into ``root``; return ``root/public``."""
    from leaderboard.site.build import build_site, generate_pages, write_exports
    from leaderboard.tools.bench_ranking import synthetic_curves, synthetic_exports, synthetic_item_ranks

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
    site = root / "site"
    tables = {"recall_at_k": synthetic_curves(results), "item_ranks": ranks}
    write_exports(results, runs, submissions, site, tables=tables)
    generate_pages(site, repo_root=root)
    return build_site(root, strict=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the built site, served from a thread."""
    _require_browser()
    public = _build(tmp_path_factory.mktemp("browser-site"))

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(public)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser(server: str) -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class _Page:
    """A browser page that records console errors and uncaught exceptions."""

    def __init__(self, browser: object) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900})
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


@pytest.fixture
def page(browser: object) -> Iterator[_Page]:
    tab = _Page(browser)
    yield tab
    tab.close()


@pytest.mark.parametrize("name", [*TOP_PAGES, "submission"])
def test_page_loads_without_console_errors(server: str, page: _Page, name: str) -> None:
    url = server + (TOP_PAGES[name] if name in TOP_PAGES else "submissions/sub000/")
    tab = page.open(url)
    tab.wait_for_selector("article h1")
    # Plots and number tables are drawn after load; give them the chance to fail before checking.
    for plot in tab.query_selector_all(".chemrobust-plot"):
        plot.wait_for_selector(".main-svg", state="attached", timeout=15_000)
    path = page.shot(name)
    assert path.stat().st_size > 10_000
    assert page.errors == [], page.errors
    assert not tab.query_selector_all(".chemrobust-plot--error")


def _column(table: object, index: int, *, number: bool = True) -> list:
    cells = [c.inner_text().strip() for c in table.query_selector_all(f"tbody tr td:nth-child({index + 1})")]
    return [float(re.sub(r"[^0-9.+-]", "", c)) for c in cells] if number else cells


def test_table_sorts_on_header_click(server: str, page: _Page) -> None:
    tab = page.open(server)
    table = tab.locator("article table", has=tab.locator("th", has_text="W / L / T")).element_handle()
    headers = [h.inner_text().strip() for h in table.query_selector_all("thead th")]
    index = next(i for i, h in enumerate(headers) if h.startswith("chebi20"))
    before = _column(table, index)
    pairs = set(zip(_column(table, 1, number=False), before, strict=True))
    assert len(before) == N_SUBMISSIONS
    header = table.query_selector_all("thead th")[index]
    header.click()
    first = header.get_attribute("aria-sort")
    assert first in ("ascending", "descending")
    assert _column(table, index) == sorted(before, reverse=first == "descending")
    header.click()
    assert header.get_attribute("aria-sort") != first
    assert _column(table, index) == sorted(before, reverse=first != "descending")
    # Whole rows moved: every model still sits beside its own value.
    assert set(zip(_column(table, 1, number=False), _column(table, index), strict=True)) == pairs
    page.shot("overview-sorted")
    assert page.errors == [], page.errors


def test_plots_render(server: str, page: _Page) -> None:
    tab = page.open(server + "tracks/amore/")
    plots = tab.query_selector_all(".chemrobust-plot")
    assert len(plots) >= 6  # layer-wise and Recall@K per data set
    for plot in plots:
        plot.wait_for_selector(".main-svg", timeout=15_000)
    assert tab.query_selector_all(".chemrobust-plot .scatterlayer .trace")
    tab = page.open(server)
    heatmap = tab.wait_for_selector("#overview-pairwise .main-svg", timeout=15_000)
    assert heatmap.bounding_box()["height"] > 200
    assert page.errors == [], page.errors


def test_submission_page_numbers_and_failure_explorer(server: str, page: _Page) -> None:
    tab = page.open(server + "submissions/sub003/")
    # "All N numbers": the embedded JSON became a sortable HTML table.
    rows = tab.query_selector_all("details.chemrobust-numbers table tbody tr")
    assert len(rows) > 100
    assert not tab.query_selector_all("script.chemrobust-table")
    details = tab.query_selector("details.chemrobust-numbers")
    details.query_selector("summary").click()
    assert details.query_selector("table").get_attribute("data-sortable") is not None
    # The failure explorer drew molecules of the embedded data set (RDKit SVG) with their ranks.
    text = tab.inner_text("article")
    assert "Failure explorer" in text and "rank" in text
    images = tab.query_selector_all(".chemrobust-molecules img")
    assert images
    images[0].scroll_into_view_if_needed()
    tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=images[0], timeout=10_000)
    assert "MLflow run id" in text and "nox -s evaluate -- --submission sub003" in text
    page.shot("submission-explorer")
    assert page.errors == [], page.errors


def test_search_and_dark_mode(server: str, page: _Page) -> None:
    tab = page.open(server)
    tab.click("input.md-search__input")  # visible in the header at desktop width
    tab.keyboard.type("methodology", delay=20)  # Material searches on key events, not on fill()
    tab.wait_for_selector(".md-search-result__item", timeout=15_000)
    tab.keyboard.press("Escape")
    scheme = tab.get_attribute("body", "data-md-color-scheme")
    tab.click("form[data-md-component='palette'] label:visible")
    tab.wait_for_function(
        "before => document.body.getAttribute('data-md-color-scheme') !== before", arg=scheme
    )
    tab.wait_for_selector("#overview-pairwise .main-svg")
    page.shot("overview-" + ("dark" if scheme != "slate" else "light"))
    assert page.errors == [], page.errors


def test_no_cdn_in_built_pages(server: str, page: _Page) -> None:
    tab = page.open(server)
    external = tab.evaluate(
        "() => [...document.querySelectorAll('script[src], link[href]')]"
        ".map(e => e.src || e.href).filter(u => !u.startsWith(location.origin))"
    )
    assert external == []
