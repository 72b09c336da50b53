/*
 * ChemRobust site: draws the figures of the generated pages with plotly.js.
 *
 * Hand-written static file, committed with the site (not generated; leaderboard/site/build.py does not
 * touch it). Loaded on every page through `extra_javascript` in mkdocs.yml, after
 * javascripts/vendor/plotly.min.js (copied from the pinned plotly package by
 * leaderboard.site.build.generate_pages; no CDN).
 *
 * Every `<div class="chemrobust-plot" data-figure="data/plots/<id>.json">` written by
 * leaderboard/site/plots.py::figure_html is filled with the figure stored in that JSON file
 * ({"data": [...], "layout": {...}}, without a template). `data-figure` is relative to the site
 * root, which is derived from this script's own URL (<root>/javascripts/plots.js), so it resolves
 * the same on `amore/` and on `submissions/<id>/` (use_directory_urls) and under any base path.
 * The layout gets a light or dark template matching the Material palette (`slate` = dark) and is
 * redrawn when the reader toggles the palette. Figures need the site to be served over HTTP
 * (`mkdocs serve` or any static server): browsers refuse fetch() on file:// URLs, so a page opened from
 * disk says so at its top (`fileNotice`) and names `nox -s serve`. A figure inside a folded section
 * (closed `<details>`) is drawn when the section is first opened (`whenShown`): before, it has no width.
 *
 * The stored figure is a desktop layout; `adapt` fits it to its container at render time (issue 19, "a
 * board that reads on a phone") and the JSON files stay as they are:
 * - every axis title keeps a standoff from its tick labels (automargin makes room for both);
 * - below NARROW px: no modebar (it covered the top row of the heatmap), a grid of panels is stacked one
 *   per row, long heatmap labels are shortened (the hover keeps the full name), category ticks stand
 *   upright, and the legend goes below the lowest axis title;
 * - after drawing, `settle` measures the legend against the axis texts above it and moves it down (and
 *   the figure taller) until nothing overlaps.
 * Figures are re-fitted when a resize crosses NARROW.
 */
(function () {
  "use strict";

  var SCRIPT = document.currentScript;
  var CONFIG = { responsive: true, displaylogo: false };
  var NARROW = 600;  /* px of container width below which a figure gets the phone layout */
  var PANEL_PX = 220;  /* height of one stacked panel's plot area on a phone */
  var PANEL_GAP_PX = 86;  /* between stacked panels: x tick labels, x title, the next panel's title */
  var LABEL_CHARS = 16;  /* heatmap axis labels on a phone */
  var AXIS_LIGHT = { gridcolor: "#e3e3e3", linecolor: "#b0b0b0", zerolinecolor: "#c8c8c8" };
  var AXIS_DARK = { gridcolor: "#3a3e52", linecolor: "#6b7089", zerolinecolor: "#4b5066" };
  var TEMPLATES = {
    light: {
      layout: {
        paper_bgcolor: "rgba(0,0,0,0)",
        plot_bgcolor: "rgba(0,0,0,0)",
        font: { color: "#333333" },
        legend: { bgcolor: "rgba(0,0,0,0)" },
        xaxis: AXIS_LIGHT,
        yaxis: AXIS_LIGHT
      }
    },
    dark: {
      layout: {
        paper_bgcolor: "rgba(0,0,0,0)",
        plot_bgcolor: "rgba(0,0,0,0)",
        font: { color: "#d5d7e2" },
        legend: { bgcolor: "rgba(0,0,0,0)" },
        hoverlabel: { bgcolor: "#2e303e", font: { color: "#e2e4e9" } },
        xaxis: AXIS_DARK,
        yaxis: AXIS_DARK
      }
    }
  };
  var drawn = [];

  /* Site root URL: this script lives at <root>/javascripts/plots.js. */
  function siteRoot() {
    if (SCRIPT && SCRIPT.src) {
      return new URL("../", SCRIPT.src).href;
    }
    var config = document.getElementById("__config");  /* Material's page config: {"base": ...} */
    if (config) {
      try {
        return new URL(JSON.parse(config.textContent).base.replace(/\/?$/, "/"), window.location.href).href;
      } catch (err) { /* fall through */ }
    }
    return new URL("./", window.location.href).href;
  }

  function isDark() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }

  function clone(value) {
    return JSON.parse(JSON.stringify(value));
  }

  function axisKeys(layout) {
    return Object.keys(layout).filter(function (key) {
      return /^[xy]axis[0-9]*$/.test(key) && layout[key] && typeof layout[key] === "object";
    });
  }

  /* One panel per row: every visible x axis of a grid gets the full width and its own band of height. */
  function stackPanels(layout) {
    var panels = axisKeys(layout).filter(function (key) {
      var ax = layout[key];
      return key.charAt(0) === "x" && ax.visible !== false && Array.isArray(ax.domain) && ax.anchor;
    });
    var columns = {};
    panels.forEach(function (key) {
      columns[layout[key].domain[0].toFixed(3)] = true;
    });
    if (panels.length < 2 || Object.keys(columns).length < 2) {
      return false;
    }
    var yKey = function (key) {
      return "yaxis" + layout[key].anchor.slice(1);
    };
    panels.sort(function (a, b) {
      var ya = (layout[yKey(a)] || {}).domain || [0, 1];
      var yb = (layout[yKey(b)] || {}).domain || [0, 1];
      return (yb[1] - ya[1]) || (layout[a].domain[0] - layout[b].domain[0]);
    });
    var n = panels.length;
    var inner = n * PANEL_PX + (n - 1) * PANEL_GAP_PX;
    var annotations = layout.annotations || [];
    panels.forEach(function (key, i) {
      var xa = layout[key];
      var ya = layout[yKey(key)] || {};
      var oldX = xa.domain, oldY = ya.domain || [0, 1];
      var top = 1 - (i * (PANEL_PX + PANEL_GAP_PX)) / inner;
      var bottom = 1 - (i * (PANEL_PX + PANEL_GAP_PX) + PANEL_PX) / inner;
      /* The subplot title sits centred above its panel (make_subplots' annotation). */
      annotations.forEach(function (note) {
        if (note.xref === "paper" && note.yref === "paper" && !note._moved &&
            Math.abs(note.x - (oldX[0] + oldX[1]) / 2) < 0.02 && Math.abs(note.y - oldY[1]) < 0.02) {
          note.x = 0.5;
          note.y = top;
          note._moved = true;
        }
      });
      xa.domain = [0, 1];
      ya.domain = [bottom, top];
      /* Shared y axes hide the labels of all but the first column; stacked, each panel needs its own. */
      if (ya.matches) {
        ya.showticklabels = true;
      }
      layout[yKey(key)] = ya;
    });
    annotations.forEach(function (note) {
      delete note._moved;
    });
    var margin = layout.margin || {};
    layout.height = inner + (margin.t || 40) + (margin.b || 40);
    layout._stackedBottomGap = PANEL_GAP_PX / inner;
    return true;
  }

  function shorten(label) {
    var text = String(label);
    return text.length > LABEL_CHARS ? text.slice(0, LABEL_CHARS - 1) + "…" : text;
  }

  /* The layout (and plotly config) of a figure drawn `width` px wide, with the palette's template. */
  function adapt(fig, width) {
    var layout = clone(fig.layout || {});
    var narrow = width > 0 && width < NARROW;
    axisKeys(layout).forEach(function (key) {
      var ax = layout[key];
      if (key.charAt(0) === "y" && ax.ticklabelstandoff === undefined) {
        /* Room between the y labels and the axis: the lowest y label met the first x label in the corner. */
        ax.ticklabelstandoff = 4;
      }
      if (ax.title && ax.title.text) {
        /* With a standoff plotly measures the tick labels and puts the title beyond them. */
        ax.automargin = true;
        ax.title = Object.assign({ standoff: 8 }, ax.title);
      }
    });
    if (narrow) {
      var margin = Object.assign({ l: 60, r: 20, t: 40, b: 40 }, layout.margin || {});
      margin.l = Math.min(margin.l, 50);
      margin.r = Math.min(margin.r, 10);
      layout.margin = margin;
      var stacked = stackPanels(layout);
      var heatmap = (fig.data || []).filter(function (trace) {
        return trace.type === "heatmap";
      })[0];
      axisKeys(layout).forEach(function (key) {
        var ax = layout[key];
        var labels = heatmap && heatmap[key.charAt(0)];
        if (Array.isArray(labels) && labels.length) {
          ax.tickmode = "array";
          ax.tickvals = labels;
          ax.ticktext = labels.map(shorten);
          /* One row of text per cell: the font shrinks with the cells (the shortened labels and the
             colour bar take about 200 px of a phone's width). */
          var pitch = (width - 200) / labels.length;
          var size = Math.max(7, Math.min(12, Math.floor(pitch * 0.6)));
          ax.tickfont = Object.assign({}, ax.tickfont, { size: size });
        }
        if (key.charAt(0) === "x" && (ax.type === "category" || heatmap)) {
          ax.tickangle = -90;  /* upright labels never run into each other */
        }
      });
      /* Long axis titles shrink to fit the phone's width (or the plot's height) instead of running off
         the figure's edge; legend entries get the same smaller font. */
      axisKeys(layout).forEach(function (key) {
        var ax = layout[key];
        var text = ax.title && ax.title.text ? String(ax.title.text) : "";
        var room = key.charAt(0) === "x" ? width - 80 : (layout.height || 400) - 80;
        if (text && text.length * 0.55 * 14 > room) {
          var size = Math.max(9, Math.floor(room / (text.length * 0.55)));
          ax.title.font = Object.assign({}, ax.title.font, { size: size });
        }
      });
      if (layout.legend || (fig.data || []).length > 1) {
        /* Stacked: right under the last panel's x title. Otherwise the figure's own place, which
           `settle` moves further down if the phone's tick labels reach it. */
        var own = (layout.legend || {}).y;
        var below = stacked ? -layout._stackedBottomGap : (typeof own === "number" ? own : -0.25);
        layout.legend = Object.assign({}, layout.legend || {}, {
          orientation: "h", x: 0, xanchor: "left", y: below,
          yanchor: "top", font: Object.assign({ size: 11 }, (layout.legend || {}).font)
        });
      }
      delete layout._stackedBottomGap;
    }
    layout.template = isDark() ? TEMPLATES.dark : TEMPLATES.light;
    var config = Object.assign({}, CONFIG, narrow ? { displayModeBar: false } : {});
    return { layout: layout, config: config, narrow: narrow };
  }

  function rect(node) {
    return node.getBoundingClientRect();
  }

  /* Move the legend below every axis text it would cover, growing the figure by as much; a few rounds,
     because plotly re-flows the margins after each move. */
  function settle(el, item, round) {
    var legend = el.querySelector(".legend");
    var size = el._fullLayout && el._fullLayout._size;
    if (!legend || !size || round > 4 || !item.layout.legend) {
      return Promise.resolve();
    }
    var top = rect(legend).top;
    var lowest = -Infinity;
    el.querySelectorAll(".xtick text, .g-xtitle text, .xtitle").forEach(function (node) {
      var box = rect(node);
      if (box.width && box.bottom > top) {
        lowest = Math.max(lowest, box.bottom);
      }
    });
    if (lowest <= top) {
      return Promise.resolve();
    }
    var shift = lowest - top + 8;
    item.layout.legend.y -= shift / size.h;
    item.layout.height = (item.layout.height || el._fullLayout.height) + shift;
    return Plotly.react(el, item.fig.data, item.layout, item.config).then(function () {
      return settle(el, item, round + 1);
    });
  }

  function render(item) {
    var fitted = adapt(item.fig, item.el.clientWidth);
    item.layout = fitted.layout;
    item.config = fitted.config;
    item.narrow = fitted.narrow;
    return Plotly.react(item.el, item.fig.data, item.layout, item.config).then(function () {
      return settle(item.el, item, 0);
    });
  }

  function fail(el, message) {
    el.textContent = "Figure not available: " + message;
    el.classList.add("chemrobust-plot--error");
  }

  function draw(el, root) {
    var url = new URL(el.getAttribute("data-figure"), root).href;
    if (window.location.protocol === "file:") {
      fail(el, "figures need the site served over HTTP: run `nox -s serve` (see the note at the top)");
      return;
    }
    fetch(url)
      .then(function (response) {
        if (!response.ok) {
          throw new Error(response.status + " " + response.statusText + " for " + url);
        }
        return response.json();
      })
      .then(function (fig) {
        var item = { el: el, fig: fig };
        return render(item).then(function () {
          drawn.push(item);
          el.setAttribute("data-rendered", item.narrow ? "narrow" : "wide");
        });
      })
      .catch(function (err) {
        fail(el, String(err && err.message ? err.message : err));
      });
  }

  /* A figure inside a folded section (a closed `<details>`, pymdownx.details) has no width yet: it is
     drawn when the reader opens the section (and every closed section around it), not before. */
  function whenShown(el, then) {
    var closed = el.closest("details:not([open])");
    if (!closed) {
      then();
      return;
    }
    closed.addEventListener("toggle", function opened() {
      if (closed.open) {
        closed.removeEventListener("toggle", opened);
        whenShown(el, then);
      }
    });
  }

  /* Opened from disk (file://), the browser refuses to fetch the figures and the search index: say so on
     the page, with the command that serves the site. */
  function fileNotice() {
    if (window.location.protocol !== "file:" || document.querySelector(".chemrobust-file-notice")) {
      return;
    }
    var article = document.querySelector("article") || document.body;
    var note = document.createElement("div");
    note.className = "admonition warning chemrobust-file-notice";
    var title = document.createElement("p");
    title.className = "admonition-title";
    title.textContent = "Opened from disk: figures and search need the site served";
    var text = document.createElement("p");
    text.textContent = "Browsers refuse to load the figures' data and the search index from file:// pages. "
      + "Run `nox -s serve` (or `python -m http.server -d public`) and open the address it prints instead.";
    note.appendChild(title);
    note.appendChild(text);
    article.insertBefore(note, article.firstChild);
  }

  function redraw() {
    drawn.forEach(render);
  }

  /* A resize across NARROW (a phone turned sideways) re-fits the figures; other resizes are plotly's. */
  function refit() {
    drawn.forEach(function (item) {
      var width = item.el.clientWidth;
      if ((width > 0 && width < NARROW) !== item.narrow) {
        render(item).then(function () {
          item.el.setAttribute("data-rendered", item.narrow ? "narrow" : "wide");
        });
      }
    });
  }

  function init() {
    fileNotice();
    var elements = document.querySelectorAll("[data-figure]");
    if (!elements.length) {
      return;
    }
    if (typeof Plotly === "undefined") {
      elements.forEach(function (el) {
        fail(el, "plotly.js did not load (javascripts/vendor/plotly.min.js)");
      });
      return;
    }
    var root = siteRoot();
    elements.forEach(function (el) {
      whenShown(el, function () {
        draw(el, root);
      });
    });
    var timer = null;
    window.addEventListener("resize", function () {
      clearTimeout(timer);
      timer = setTimeout(refit, 200);
    });
    new MutationObserver(redraw).observe(document.body, {
      attributes: true,
      attributeFilter: ["data-md-color-scheme"]
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
