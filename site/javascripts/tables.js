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
 * 3. The overview's ranking (`<div class="chemrobust-ranking" data-compact="0,1,2,...">` around the table,
 *    leaderboard/site/pages/overview.py::ranking_block) starts compact: the cells of every column not
 *    listed in `data-compact` get the class `chemrobust-detail`, hidden by chemrobust.css, and a button
 *    before the table shows or hides them. Sorting is untouched (Tablesort moves whole rows, and the
 *    hidden cells move with them). Without scripts the whole table shows.
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

  function compactRanking(wrapper) {
    var table = wrapper.querySelector("table");
    if (!table || wrapper.hasAttribute("data-compact-ready")) {
      return;
    }
    wrapper.setAttribute("data-compact-ready", "");
    var keep = {};
    wrapper.getAttribute("data-compact").split(",").forEach(function (i) {
      keep[i.trim()] = true;
    });
    var hidden = 0;
    Array.prototype.forEach.call(table.rows, function (row) {
      Array.prototype.forEach.call(row.cells, function (cell, i) {
        if (!keep[String(i)]) {
          cell.classList.add("chemrobust-detail");
          hidden += row.parentNode.tagName === "THEAD" ? 1 : 0;
        }
      });
    });
    if (!hidden) {
      return;
    }
    var more = "Show all columns (" + hidden + " more: W / L / T and every criterion)";
    var less = "Show the compact table";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "md-button chemrobust-ranking__toggle";
    button.textContent = more;
    button.setAttribute("aria-expanded", "false");
    button.addEventListener("click", function () {
      var compact = wrapper.classList.toggle("chemrobust-ranking--compact");
      button.textContent = compact ? more : less;
      button.setAttribute("aria-expanded", compact ? "false" : "true");
    });
    wrapper.classList.add("chemrobust-ranking--compact");
    wrapper.insertBefore(button, wrapper.firstChild);
  }

  function init() {
    document.querySelectorAll('script.chemrobust-table[type="application/json"]').forEach(renderTable);
    document.querySelectorAll(".chemrobust-ranking[data-compact]").forEach(compactRanking);
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
