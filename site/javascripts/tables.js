/*
 * ChemRobust site: draws the embedded number tables and makes every table sortable.
 *
 * Hand-written static file, committed with the site (not generated). Loaded on every page through
 * `extra_javascript` in mkdocs.yml, after javascripts/tablesort/tablesort.min.js and its number sort
 * (vendored from the npm package tablesort 5.7.1, see javascripts/tablesort/README.md; no CDN).
 *
 * 1. Every `<script type="application/json" class="chemrobust-table">` written by leaderboard/site/build.py
 *    (a model page's "All N numbers": {"columns": [...], "align": [...], "rows": [[text, ...], ...]},
 *    cells already formatted) is replaced by an HTML table built with DOM calls (text only, no HTML
 *    parsing of the data). Embedding the rows as JSON keeps thousands of cells out of the MkDocs build
 *    and the search index.
 * 2. Material for MkDocs' documented recipe: `document$` emits on every page load (also with instant
 *    navigation), and every table in the article without a class attribute gets a Tablesort: click a
 *    header to sort, click again to reverse. Numeric columns (ranks, scores, "0.890", "+2") sort
 *    numerically; a cell's `data-sort` attribute, when present, is used instead of its text.
 */
(function () {
  "use strict";

  function renderTable(script) {
    var spec;
    try {
      spec = JSON.parse(script.textContent);
    } catch (err) {
      return;
    }
    var table = document.createElement("table");
    var head = table.createTHead().insertRow();
    spec.columns.forEach(function (name, i) {
      var th = document.createElement("th");
      th.textContent = name;
      th.style.textAlign = spec.align[i] || "left";
      head.appendChild(th);
    });
    var body = table.createTBody();
    spec.rows.forEach(function (row) {
      var tr = body.insertRow();
      row.forEach(function (text, i) {
        var td = tr.insertCell();
        td.textContent = text;
        td.style.textAlign = spec.align[i] || "left";
      });
    });
    /* The wrappers Material puts around Markdown tables (horizontal scrolling on narrow screens). */
    var scroll = document.createElement("div");
    scroll.className = "md-typeset__scrollwrap";
    var wrap = document.createElement("div");
    wrap.className = "md-typeset__table";
    wrap.appendChild(table);
    scroll.appendChild(wrap);
    script.parentNode.insertBefore(scroll, script);
    script.parentNode.removeChild(script);
  }

  function init() {
    document.querySelectorAll('script.chemrobust-table[type="application/json"]').forEach(renderTable);
    if (typeof Tablesort === "undefined") {
      return;
    }
    document.querySelectorAll("article table:not([class])").forEach(function (table) {
      if (!table.hasAttribute("data-sortable")) {
        table.setAttribute("data-sortable", "");
        new Tablesort(table);
      }
    });
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
