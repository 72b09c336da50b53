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
 * (`mkdocs serve` or any static server): browsers refuse fetch() on file:// URLs.
 */
(function () {
  "use strict";

  var SCRIPT = document.currentScript;
  var CONFIG = { responsive: true, displaylogo: false };
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

  function layoutFor(fig) {
    var layout = Object.assign({}, fig.layout);
    layout.template = isDark() ? TEMPLATES.dark : TEMPLATES.light;
    return layout;
  }

  function fail(el, message) {
    el.textContent = "Figure not available: " + message;
    el.classList.add("chemrobust-plot--error");
  }

  function draw(el, root) {
    var url = new URL(el.getAttribute("data-figure"), root).href;
    fetch(url)
      .then(function (response) {
        if (!response.ok) {
          throw new Error(response.status + " " + response.statusText + " for " + url);
        }
        return response.json();
      })
      .then(function (fig) {
        return Plotly.newPlot(el, fig.data, layoutFor(fig), CONFIG).then(function () {
          drawn.push({ el: el, fig: fig });
        });
      })
      .catch(function (err) {
        fail(el, String(err && err.message ? err.message : err));
      });
  }

  function redraw() {
    drawn.forEach(function (item) {
      Plotly.react(item.el, item.fig.data, layoutFor(item.fig), CONFIG);
    });
  }

  function init() {
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
      draw(el, root);
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
