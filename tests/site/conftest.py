"""Fixtures of the browser tests: the synthetic site built and served once per session, Chromium, a tab.

See ``_browser.py`` for how the site is built.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.site._browser import CHROMIUM, CHROMIUM_ARGS, BrowserPage, build_site_for_browser, require_browser


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
