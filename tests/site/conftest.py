"""Fixtures of the site tests: the committed board built as a fresh clone builds it, once per session; and for
the browser tests the synthetic site built and served once per session, Chromium, a tab.

See ``_browser.py`` for how the synthetic site is built.
"""

from __future__ import annotations

import contextlib
import functools
import io
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.site._browser import CHROMIUM, CHROMIUM_ARGS, BrowserPage, build_site_for_browser, require_browser


@dataclass(frozen=True)
class FreshBuild:
    """What ``python -m leaderboard site`` did on a fresh clone: its repository, the tracked site files it
    started from, what it printed and its exit status."""

    root: Path
    tracked: tuple[str, ...]
    out: str
    status: int


@pytest.fixture(scope="session")
def fresh_clone_build(tmp_path_factory: pytest.TempPathFactory) -> FreshBuild:
    """The real CLI path (``python -m leaderboard --state-dir EMPTY site``) on a throw-away repository holding
    every file git tracks under this checkout's ``site/`` and its ``submissions/``: an empty MLflow store,
    the committed manifests, ``mkdocs build --strict``. Built once per session (about a minute): the merge
    tests check it regenerates the committed board byte for byte, the page tests read its rankings.
    """
    import leaderboard.__main__ as cli
    from tests.site import _builders as b

    tmp = tmp_path_factory.mktemp("fresh-clone")
    root, _ = b.repo(tmp)
    listed = subprocess.run(["git", "ls-files", "-z", "site"], cwd=b.REPO_ROOT, capture_output=True,
                            check=True).stdout.decode()  # fmt: skip
    tracked = tuple(sorted(name for name in listed.split("\0") if name))
    for rel in tracked:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(b.REPO_ROOT / rel, root / rel)
    shutil.copytree(b.REPO_ROOT / "submissions", root / "submissions")
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setattr(cli, "REPO_ROOT", root)
        status = cli.main(["--state-dir", str(tmp / "empty-state"), "site"])
    return FreshBuild(root, tracked, printed.getvalue(), status)


@pytest.fixture(scope="session")
def public_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site (``public/``), built once per session."""
    require_browser()
    return build_site_for_browser(tmp_path_factory.mktemp("browser-site"))


@pytest.fixture(scope="session")
def server(public_dir: Path) -> Iterator[str]:
    """Base URL of the built site, served from a thread."""
    public = public_dir

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


@pytest.fixture(scope="session")
def browser(server: str) -> Iterator[object]:
    """Headless Chromium, started once per session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[BrowserPage]:
    """A desktop-sized tab (1400 × 900), closed after the test."""
    tab = BrowserPage(browser)
    yield tab
    tab.close()
