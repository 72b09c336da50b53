"""The built site in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

The site is built the way ``python -m leaderboard site`` builds it — this checkout's ``mkdocs.yml`` and
committed scripts, styles and vendored tablesort, pages from :func:`leaderboard.site.build.generate_pages`,
``mkdocs build --strict`` — from synthetic exports of four submissions (``leaderboard.tools.bench_ranking``'s
generators) in a temporary repository. The per-molecule table carries small valid SMILES strings, so that
the failure explorer draws real molecules. ``public/`` is served over HTTP on 127.0.0.1 and
Chromium checks what a visitor sees: every top-level page and a submission page load without a console
error, a click on a table header sorts a numeric column, plots render (plotly's ``.main-svg``), the
embedded number table and the molecule drawings appear, search answers, and the palette switches to dark.
Full-page screenshots are saved to ``test-artifacts/screenshots/`` (git-ignored; CI keeps them). The
fixtures (build, server, browser, :class:`~tests.site.conftest.BrowserPage`) live in ``conftest.py``;
the layout checks at desktop and phone size in ``test_browser_layout.py``.

Without ``/usr/bin/chromium`` or the ``playwright`` package the test is skipped, except when ``CI`` is set:
then it fails (CI installs both).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.site._browser import N_SUBMISSIONS, SHOWN_PLOTS_DRAWN_JS, TOP_PAGES, BrowserPage, unfold

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name", [*TOP_PAGES, "submission"])
def test_page_loads_without_console_errors(server: str, page: BrowserPage, name: str) -> None:
    url = server + (TOP_PAGES[name] if name in TOP_PAGES else "submissions/sub000/")
    tab = page.open(url)
    tab.wait_for_selector("article h1")
    # Plots and number tables are drawn after load; give them the chance to fail before checking. Folded
    # sections are opened first: their plots are drawn when they open.
    unfold(tab)
    for plot in tab.query_selector_all(".chemrobust-plot"):
        plot.wait_for_selector(".main-svg", state="attached", timeout=15_000)
    path = page.shot(name)
    assert path.stat().st_size > 10_000
    assert page.errors == [], page.errors
    assert not tab.query_selector_all(".chemrobust-plot--error")


def _column(table: object, index: int, *, number: bool = True) -> list:
    cells = [c.inner_text().strip() for c in table.query_selector_all(f"tbody tr td:nth-child({index + 1})")]
    return [float(re.sub(r"[^0-9.+-]", "", c)) for c in cells] if number else cells


def test_table_sorts_on_header_click(server: str, page: BrowserPage) -> None:
    tab = page.open(server)
    tab.click(".chemrobust-ranking__toggle")  # the criteria columns start hidden (compact view)
    # The first board's table (embedding models; the generative board's works the same way).
    table = tab.locator("article table", has=tab.locator("th", has_text="W / L / T")).first.element_handle()
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


def test_plots_render(server: str, page: BrowserPage) -> None:
    tab = page.open(server + "tracks/amore/")
    plots = tab.query_selector_all(".chemrobust-plot")
    assert len(plots) >= 6  # layer-wise and Recall@K per data set
    # One plot is open with the page; a plot in a folded section is drawn when the section opens.
    tab.wait_for_function(SHOWN_PLOTS_DRAWN_JS, timeout=15_000)
    shown = [p for p in plots if not p.evaluate("el => !!el.closest('details:not([open])')")]
    folded = [p for p in plots if p not in shown]
    assert len(shown) == 1 and folded, (len(shown), len(folded))
    assert folded[0].get_attribute("data-rendered") is None
    folded[0].evaluate("el => el.closest('details').querySelector('summary').click()")
    folded[0].wait_for_selector(".main-svg", timeout=15_000)
    assert folded[0].bounding_box()["width"] > 300  # drawn at its section's width, not at zero
    unfold(tab)
    for plot in plots:
        plot.wait_for_selector(".main-svg", timeout=15_000)
    assert tab.query_selector_all(".chemrobust-plot .scatterlayer .trace")
    tab = page.open(server)
    heatmap = tab.wait_for_selector("#overview-pairwise-embedding .main-svg", timeout=15_000)
    assert heatmap.bounding_box()["height"] > 200
    assert page.errors == [], page.errors


def test_submission_page_numbers_and_failure_explorer(server: str, page: BrowserPage) -> None:
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
    unfold(tab)  # the explorer sits in a folded section (issue 35)
    images = tab.query_selector_all(".chemrobust-molecules img")
    assert images
    images[0].scroll_into_view_if_needed()
    tab.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=images[0], timeout=10_000)
    text = tab.inner_text("article")  # unfolded: the runs' provenance too (one folded block per run)
    assert "MLflow run id" in text and "nox -s evaluate -- --submission sub003" in text
    page.shot("submission-explorer")
    assert page.errors == [], page.errors


def test_search_and_dark_mode(server: str, page: BrowserPage) -> None:
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
    tab.wait_for_selector("#overview-pairwise-embedding .main-svg")
    page.shot("overview-" + ("dark" if scheme != "slate" else "light"))
    assert page.errors == [], page.errors


def test_no_cdn_in_built_pages(server: str, page: BrowserPage) -> None:
    tab = page.open(server)
    external = tab.evaluate(
        "() => [...document.querySelectorAll('script[src], link[href]')]"
        ".map(e => e.src || e.href).filter(u => !u.startsWith(location.origin))"
    )
    assert external == []


def test_page_opened_from_disk_says_to_serve_it(public_dir: Path, page: BrowserPage) -> None:
    """Opened as a file, figures and search cannot load: the page says so and names ``nox -s serve``."""
    tab = page.page
    tab.goto((public_dir / "index.html").as_uri(), wait_until="load")
    notice = tab.wait_for_selector(".chemrobust-file-notice", timeout=10_000)
    assert "nox -s serve" in notice.inner_text()
    assert notice.is_visible() and notice.bounding_box()["y"] < 900  # at the top, before any scrolling
    tab.wait_for_selector(".chemrobust-plot--error", timeout=10_000)
    assert "nox -s serve" in tab.inner_text(".chemrobust-plot--error")
