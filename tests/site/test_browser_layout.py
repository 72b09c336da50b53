"""Layout of the built site at desktop (1366 × 900) and phone (390 × 844) size (issue 19).

On every top page, every track page and a submission page, at both sizes:

(a) the ranking table's model column stays in view, and on top, after its scroller is scrolled to the end
    (compact view and all columns): the cell lies within the viewport and ``document.elementFromPoint`` at
    its centre is the cell itself or inside it;
(b) no plot (``.js-plotly-plot``, ``.main-svg``) is wider than the viewport or its container;
(c) no two texts of a plot (tick labels, titles, legend entries, annotations) overlap by more than
    :data:`TOLERANCE_PX`; each text is the rectangle of its SVG bounding box mapped to the screen (so a
    rotated label is a rotated rectangle), and the overlap depth is found by separating axes;
(d) on the phone the page itself does not scroll sideways (tables scroll inside their own wrappers), and
    plots have no modebar (it covered the heatmap's top row).

Also: the ranking starts compact (rank, model, Copeland, interval, group, one mean rank per track) with the
criteria behind a button that still leaves the table sortable, and a rule that ties most models shows
*tied* instead of an arrow. Screenshots go to ``test-artifacts/screenshots/layout-<size>-<page>.png``.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from leaderboard.tracks import track_names
from tests.site._browser import SHOWN_PLOTS_DRAWN_JS, TOP_PAGES, BrowserPage, unfold

pytestmark = pytest.mark.slow

VIEWPORTS = {"desktop": (1366, 900), "phone": (390, 844)}
#: Every top page, every registered track's page and a submission page.
PAGES = {**TOP_PAGES, "submission": "submissions/sub000/"}
PAGES.update({f"track-{t}": f"tracks/{t}/" for t in track_names() if f"tracks/{t}/" not in PAGES.values()})
#: Texts of a plot may touch (antialiasing, glyph boxes taller than the glyphs), not overlap.
TOLERANCE_PX = 2.0
#: The tallest a page may be at desktop width before anything is unfolded (issue 35: track pages fold
#: their detail behind collapsible sections).
MAX_HEIGHT_PX = 15_000
#: Pages not held to it yet, and why (each a known gap of issue 35, to be removed when fixed).
HEIGHT_EXEMPT: dict[str, str] = {}

# Scrolls the ranking table's scroller (the closest ancestor that scrolls sideways) to its end, then reports
# for the header and the first and last row whether the model cell is in the viewport and on top.
#: The start of the table scripts below: ``frame()`` waits for a repaint, ``scroller`` is the closest ancestor
#: of ``table`` that scrolls sideways (null when the page itself would).
_SCROLLER_JS = """
  const frame = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  let scroller = table;
  while (scroller && !(scroller.scrollWidth > scroller.clientWidth + 1
                       && /(auto|scroll)/.test(getComputedStyle(scroller).overflowX))) {
    scroller = scroller.parentElement;
  }
  if (scroller === document.documentElement || scroller === document.body) scroller = null;
"""
_MODEL_COLUMN_JS = """
async (table) => {
""" + _SCROLLER_JS + """  if (scroller) { scroller.scrollLeft = scroller.scrollWidth; await frame(); }
  const rows = [...table.rows];
  const report = [];
  for (const row of [rows[0], rows[1], rows[rows.length - 1]]) {
    const cell = row.cells[1];
    let box = cell.getBoundingClientRect();
    window.scrollBy(0, box.top + box.height / 2 - innerHeight / 2);
    await frame();
    box = cell.getBoundingClientRect();
    const x = box.left + box.width / 2, y = box.top + box.height / 2;
    const hit = document.elementFromPoint(x, y);
    report.push({
      text: cell.textContent.trim(), left: box.left, right: box.right, top: box.top, bottom: box.bottom,
      onTop: !!hit && cell.contains(hit), hit: hit ? hit.tagName + "." + hit.className : null,
    });
  }
  return {scrolled: scroller ? scroller.scrollLeft : 0, overflow: !!scroller, cells: report,
          width: innerWidth, height: innerHeight};
}
"""

# Every non-empty text of a plot as a screen quadrilateral (its SVG bbox through its screen matrix), and
# the pairs whose overlap depth (separating axis theorem) exceeds the tolerance.
_PLOT_TEXT_JS = """
(plot, tolerance) => {
  const selector = ".xtick text, .ytick text, .gtitle, .xtitle, .ytitle, .g-xtitle text, .g-ytitle text, "
    + ".legendtext, .annotation text";
  const items = [];
  for (const node of new Set(plot.querySelectorAll(selector))) {
    const text = node.textContent.trim();
    const style = getComputedStyle(node);
    if (!text || style.display === "none" || style.visibility === "hidden" || +style.opacity === 0) continue;
    const box = node.getBBox();
    if (!box.width || !box.height) continue;
    const m = node.getScreenCTM();
    const corners = [[box.x, box.y], [box.x + box.width, box.y], [box.x + box.width, box.y + box.height],
                     [box.x, box.y + box.height]];
    const pts = corners.map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    const kind = node.getAttribute("class") || node.parentNode.getAttribute("class") || node.tagName;
    items.push({text, kind, pts});
  }
  const depth = (p, q) => {
    let least = Infinity;
    for (const poly of [p, q]) {
      for (let i = 0; i < poly.length; i++) {
        const a = poly[i], b = poly[(i + 1) % poly.length];
        let nx = b[1] - a[1], ny = a[0] - b[0];
        const len = Math.hypot(nx, ny);
        if (!len) continue;
        nx /= len; ny /= len;
        const pp = p.map(([x, y]) => x * nx + y * ny), qq = q.map(([x, y]) => x * nx + y * ny);
        const overlap = Math.min(Math.max(...pp), Math.max(...qq))
          - Math.max(Math.min(...pp), Math.min(...qq));
        least = Math.min(least, overlap);
      }
    }
    return least;
  };
  const clashes = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const d = depth(items[i].pts, items[j].pts);
      if (d > tolerance) {
        clashes.push(`${items[i].kind} "${items[i].text}" overlaps ${items[j].kind} "${items[j].text}" by `
                     + `${d.toFixed(1)} px`);
      }
    }
  }
  return {count: items.length, clashes};
}
"""


def _open(browser: object, server: str, viewport: str, path: str) -> tuple[BrowserPage, object]:
    """Open ``path`` at one viewport size and wait until every figure shown (not folded) is drawn."""
    width, height = VIEWPORTS[viewport]
    page = BrowserPage(browser, width, height)
    tab = page.open(server + path)
    tab.wait_for_selector("article h1")
    tab.wait_for_function(SHOWN_PLOTS_DRAWN_JS, timeout=20_000)
    return page, tab


def _model_column_problems(tab: object) -> list[str]:
    """Where the ranking table's model column leaves the screen or hides after a sideways scroll."""
    table = tab.query_selector(".chemrobust-ranking table")
    if table is None:
        return []
    problems = []
    for view in ("compact", "all columns"):
        if view == "all columns":
            tab.click(".chemrobust-ranking__toggle")
        report = table.evaluate(_MODEL_COLUMN_JS)
        if view == "all columns" and not report["scrolled"]:
            problems.append("the full ranking table does not scroll sideways (nothing to check)")
        for cell in report["cells"]:
            inside = -1 <= cell["left"] and cell["right"] <= report["width"] + 1
            inside = inside and 0 <= cell["top"] and cell["bottom"] <= report["height"]
            if not (inside and cell["onTop"]):
                problems.append(
                    f"{view}: model cell {cell['text']!r} hidden after scrolling the table: {cell}"
                )
    tab.click(".chemrobust-ranking__toggle")  # back to the compact view
    return problems


def _plot_problems(tab: object, *, phone: bool) -> list[str]:
    """Plots wider than the viewport or their container, overlapping texts, a modebar on a phone."""
    problems = []
    width = tab.evaluate("innerWidth")
    for plot in tab.query_selector_all(".chemrobust-plot"):
        name = plot.get_attribute("id")
        if phone and plot.query_selector(".modebar"):
            problems.append(f"{name}: plotly's modebar on a phone (it covers the top of the plot)")
        plot.scroll_into_view_if_needed()
        container = plot.evaluate("el => el.parentElement.getBoundingClientRect().width")
        for part in plot.query_selector_all(".js-plotly-plot, .main-svg"):
            box = part.bounding_box()
            if box and (
                box["width"] > min(width, container) + 1
                or box["x"] < -1
                or box["x"] + box["width"] > width + 1
            ):
                problems.append(
                    f"{name}: plot {box} wider than the viewport ({width}) or its container ({container})"
                )
        result = plot.evaluate(_PLOT_TEXT_JS, TOLERANCE_PX)
        if not result["count"]:
            problems.append(f"{name}: no text found in the plot (selectors out of date?)")
        problems += [f"{name}: {clash}" for clash in result["clashes"]]
    return problems


@pytest.mark.parametrize("name", list(PAGES))
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_layout(server: str, browser: object, viewport: str, name: str) -> None:
    page, tab = _open(browser, server, viewport, PAGES[name])
    try:
        problems = []
        height = tab.evaluate("document.documentElement.scrollHeight")
        if viewport == "desktop" and height > MAX_HEIGHT_PX and name not in HEIGHT_EXEMPT:
            problems.append(f"the page is {height} px tall before unfolding anything (> {MAX_HEIGHT_PX})")
        unfold(tab)  # the checks below cover the folded sections too
        problems += _model_column_problems(tab) + _plot_problems(tab, phone=viewport == "phone")
        if viewport == "phone":
            scroll = tab.evaluate("[document.documentElement.scrollWidth, innerWidth]")
            if scroll[0] > scroll[1] + 1:
                problems.append(
                    f"the page scrolls sideways on a phone: scrollWidth {scroll[0]} > {scroll[1]}"
                )
        tab.evaluate("window.scrollTo(0, 0)")
        page.shot(f"layout-{viewport}-{name}")
        assert problems == [], "\n".join(problems)
        assert page.errors == [], page.errors
    finally:
        page.close()


# For the first table after each "Headline" heading: at the table's first scroll position, whether the
# first two cells (model, headline value) of the header and of the first and last rows lie in the viewport
# and on top; then, scrolled to the end, whether the model cell still does.
_HEADLINE_COLUMNS_JS = """
async (table) => {
""" + _SCROLLER_JS + """  const rows = [...table.rows];
  const report = [];
  const look = async (columns, when) => {
    for (const row of [rows[0], rows[1], rows[rows.length - 1]]) {
      for (const i of columns) {
        const cell = row.cells[i];
        let box = cell.getBoundingClientRect();
        window.scrollBy(0, box.top + box.height / 2 - innerHeight / 2);
        await frame();
        box = cell.getBoundingClientRect();
        const x = box.left + Math.min(box.width / 2, 20), y = box.top + box.height / 2;
        const hit = document.elementFromPoint(x, y);
        const inside = box.left >= -1 && box.right <= innerWidth + 1
          && box.top >= 0 && box.bottom <= innerHeight;
        report.push({when, column: i, text: cell.textContent.trim().slice(0, 40), inside,
                     onTop: !!hit && cell.contains(hit), left: box.left, right: box.right});
      }
    }
  };
  if (scroller) { scroller.scrollLeft = 0; await frame(); }
  await look([0, 1], "unscrolled");
  if (scroller) { scroller.scrollLeft = scroller.scrollWidth; await frame(); await look([0], "scrolled"); }
  return report;
}
"""


def _headline_tables(tab: object) -> list[object]:
    """The first table after each "Headline" heading of a track page."""
    return tab.query_selector_all(
        "xpath=//article//h3[starts-with(normalize-space(.), 'Headline')]"
        "/following::table[1]"
    )


@pytest.mark.parametrize("track", track_names())
@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_headline_tables_keep_the_model_and_the_headline_value_in_view(
    server: str, browser: object, viewport: str, track: str
) -> None:
    """Issue 35: on a phone as on a laptop, a headline table shows the model and its headline value
    without scrolling, and the model stays in view when the table is scrolled sideways."""
    page, tab = _open(browser, server, viewport, f"tracks/{track}/")
    try:
        tables = _headline_tables(tab)
        if not tables:
            pytest.skip(f"no headline table on the {track} page of the synthetic board")
        problems = []
        for table in tables:
            if not table.is_visible():
                continue
            headers = [c.inner_text().strip() for c in table.query_selector_all("thead th")]
            assert headers[0] == "Model", headers
            for cell in table.evaluate(_HEADLINE_COLUMNS_JS):
                if not (cell["inside"] and cell["onTop"]):
                    problems.append(f"{headers[:2]}: {cell}")
        assert problems == [], "\n".join(problems)
    finally:
        page.close()


def test_every_track_page_is_checked(server: str, page: BrowserPage) -> None:
    tab = page.open(server + "tracks/")
    links = tab.eval_on_selector_all("article a[href]", "as => as.map(a => new URL(a.href).pathname)")
    tracks = {p.lstrip("/") for p in links if re.fullmatch(r"/tracks/[^/]+/", p)}
    assert tracks and tracks <= set(PAGES.values()), tracks - set(PAGES.values())


#: The first board's ranking table (embedding models): each board's table works the same way.
_FIRST_RANKING = ".chemrobust-ranking >> nth=0 >> table"


def _visible_headers(tab: object) -> list[str]:
    return tab.eval_on_selector_all(
        f"{_FIRST_RANKING} thead th",
        "ths => ths.filter(th => th.getClientRects().length).map(th => th.textContent.trim())",
    )


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_ranking_starts_compact_and_the_toggle_shows_every_criterion(
    server: str, browser: object, viewport: str
) -> None:
    page, tab = _open(browser, server, viewport, "")
    try:
        compact = _visible_headers(tab)
        assert compact[:4] == ["Rank", "Model", "Robust skill", "Copeland"], compact
        assert "amore mean rank" in compact and "Rank interval" in compact
        assert "W / L / T" not in compact and not [h for h in compact if "·" in h], compact
        button = tab.query_selector(".chemrobust-ranking__toggle")
        assert button.get_attribute("aria-expanded") == "false"
        button.click()
        full = _visible_headers(tab)
        assert "W / L / T" in full and len([h for h in full if "·" in h]) >= 10, full
        assert set(compact) < set(full) and button.get_attribute("aria-expanded") == "true"
        # Sorting still works with every column shown, and whole rows move.
        headers = tab.query_selector_all(f"{_FIRST_RANKING} thead th")
        index = next(i for i, h in enumerate(headers) if h.inner_text().strip().startswith("amore mean rank"))
        headers[index].click()
        cells = tab.eval_on_selector_all(
            f"{_FIRST_RANKING} tbody tr td:nth-child({index + 1})",
            "tds => tds.map(td => td.textContent)",
        )
        values = [float(c) for c in cells if re.fullmatch(r"\s*[0-9.]+\s*", c)]
        assert values == sorted(values) or values == sorted(values, reverse=True), values
        button.click()
        assert _visible_headers(tab) == compact
        page.shot(f"layout-{viewport}-overview-compact")
        assert page.errors == [], page.errors
    finally:
        page.close()


def test_ranking_without_scripts_shows_every_column(server: str, browser: object) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.goto(server, wait_until="load")
        headers = tab.eval_on_selector_all(
            ".chemrobust-ranking table thead th", "ths => ths.map(t => t.textContent)"
        )
        assert "W / L / T" in headers and not tab.query_selector_all(".chemrobust-ranking__toggle")
        sticky = tab.eval_on_selector(
            ".chemrobust-ranking table td:nth-child(2)", "td => getComputedStyle(td).position"
        )
        assert sticky == "sticky"
    finally:
        context.close()


def _degenerate(ranks: list[str]) -> bool:
    """The page's definition (``overview.rule_ties``): half the models or more share one rank, or 3+ models
    get at most two distinct ranks."""
    counts = Counter(ranks)
    most = max(counts.values())
    return most >= 2 and (2 * most >= len(ranks) or (len(ranks) >= 3 and len(counts) <= 2))


def test_rules_table_shows_degenerate_ties_as_ties(server: str, page: BrowserPage) -> None:
    tab = page.open(server)
    table = tab.locator("article table", has=tab.locator("th", has_text="Minimax")).first.element_handle()
    headers = [h.inner_text().strip() for h in table.query_selector_all("thead th")]
    rows = [
        [td.inner_text().strip() for td in tr.query_selector_all("td")]
        for tr in table.query_selector_all("tbody tr")
    ]
    seen_tie = False
    for i, header in enumerate(headers):
        if header in ("Model", "Copeland", "Δ"):
            continue
        ranks = [row[i].rstrip("=") for row in rows]
        deltas = [row[i + 1] for row in rows]
        if _degenerate(ranks):
            shared = Counter(ranks).most_common(1)[0][0]
            tied = [d for r, d in zip(ranks, deltas, strict=True) if r == shared]
            assert set(tied) == {"tied"}, (header, ranks, deltas)
            assert not any(c in d for d in tied for c in "↑↓")
            seen_tie = True
        else:
            assert "tied" not in deltas, (header, ranks, deltas)
    # The synthetic board is built so that at least one rule ties most models (see _browser.py).
    assert seen_tie, rows


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_both_boards_show_robust_skill_beside_the_rank(server: str, browser: object, viewport: str) -> None:
    """Each of the overview's two boards opens with rank, model and robust skill in view, at both sizes."""
    page, tab = _open(browser, server, viewport, "")
    try:
        titles = tab.eval_on_selector_all("article h3", "hs => hs.map(h => h.textContent.trim())")
        assert any(t.startswith("Embedding models") for t in titles), titles
        assert any(t.startswith("Generative models") for t in titles), titles
        tables = tab.query_selector_all(".chemrobust-ranking table")
        assert len(tables) == 2
        width = tab.evaluate("innerWidth")
        for table in tables:
            heads = table.eval_on_selector_all(
                "thead th",
                "ths => ths.filter(th => th.getClientRects().length)"
                ".map(th => [th.textContent.trim(), th.getBoundingClientRect().right])",
            )
            assert [h for h, _ in heads[:3]] == ["Rank", "Model", "Robust skill"], heads
            # Rank, model and the number to quote are on screen without scrolling sideways.
            assert all(right <= width + 1 for _, right in heads[:3]), (viewport, heads[:3])
            if viewport == "desktop":  # on a laptop the whole compact view fits: no column scrolled away
                edge = table.evaluate("t => t.closest('.chemrobust-ranking').getBoundingClientRect().right")
                assert all(right <= edge + 1 for _, right in heads), (edge, heads)
        assert page.errors == [], page.errors
    finally:
        page.close()
