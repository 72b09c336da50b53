"""Generic plotly figure helpers of the ChemRobust site: layouts, traces, deterministic JSON, files.

The per-kind figures (:mod:`leaderboard.site.extensions.amore.plots`, :mod:`leaderboard.site.pairwise`)
are built from these pieces and returned as plain
JSON-able dicts (``{"data": [...], "layout": {...}}``) without a layout template: the page script
``site/javascripts/plots.js`` supplies a light or dark template matching the Material palette.

- Layout: :func:`panels` (a grid of panels sharing the y axis, one per augmentation), :func:`panel_axes`,
  :func:`single_panel`, :func:`legend`, :func:`figure_dict`.
- Traces: :func:`scatter_trace`, :func:`line_trace`, colours from :data:`PALETTE`
  (:func:`submission_colours`), :func:`display_name` for legend labels.
- Output: :func:`round_floats`, :func:`dumps_figure`; :func:`figure_html` writes a figure to
  ``site/data/plots/<element_id>.json`` and returns the ``<div data-figure=...>`` snippet that
  ``plots.js`` turns into a plot; :func:`plotly_js_source` names the ``plotly.min.js`` of the installed
  (pinned) plotly package, which the site build serves (no CDN, no copy in the source tree).

Invariants
----------
- Deterministic: the same figure dict gives the same bytes from :func:`dumps_figure` (sorted keys, floats
  rounded to :data:`FLOAT_DIGITS` decimals); colours are assigned by sorted submission id.
- No network, no mlflow.

Side effects
------------
- :func:`figure_html` creates ``<site_dir>/data/plots/`` and overwrites one JSON file in it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

__all__ = [
    "FLOAT_DIGITS",
    "PALETTE",
    "PLOTLY_JS",
    "PLOTS_DIR",
    "display_name",
    "dumps_figure",
    "figure_dict",
    "figure_html",
    "legend",
    "line_trace",
    "panel_axes",
    "panels",
    "plotly_js_source",
    "round_floats",
    "scatter_trace",
    "single_panel",
    "submission_colours",
]

#: Folder of the figure JSON files, relative to the MkDocs ``docs_dir`` (and to the site root).
PLOTS_DIR = "data/plots"
#: Where the built site serves plotly.js (:func:`plotly_js_source`), relative to the site root.
PLOTLY_JS = "javascripts/vendor/plotly.min.js"
#: Decimals kept for every float in a figure's JSON.
FLOAT_DIGITS = 6
#: Trace colours, assigned by position (submissions in sorted order, augmentations in display order).
PALETTE: tuple[str, ...] = tuple(qualitative.Plotly) + tuple(qualitative.D3)

_ELEMENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PANEL_COLS = 3
_PANEL_HEIGHT = 300


# --------------------------------------------------------------------------------------------
# Files and HTML
# --------------------------------------------------------------------------------------------


def dumps_figure(fig_json: Mapping[str, Any]) -> str:
    """Serialise a figure dict deterministically (sorted keys, rounded floats, one trailing newline).

    Parameters
    ----------
    fig_json : mapping
        A figure as returned by :func:`~leaderboard.site.extensions.amore.plots.layerwise_figure`.

    Returns
    -------
    str
        Compact JSON text.
    """
    return (
        json.dumps(
            round_floats(fig_json), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        + "\n"
    )


def figure_html(fig_json: Mapping[str, Any], element_id: str, *, site_dir: Path) -> str:
    """Write a figure to ``<site_dir>/data/plots/<element_id>.json`` and return its placeholder div.

    Parameters
    ----------
    fig_json : mapping
        A figure as returned by :func:`~leaderboard.site.extensions.amore.plots.layerwise_figure`.
    element_id : str
        HTML id of the div and name of the JSON file (letters, digits, ``.``, ``_``, ``-``).
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).

    Returns
    -------
    str
        ``<div class="chemrobust-plot" id="<element_id>" data-figure="data/plots/<element_id>.json"></div>``.
        The ``data-figure`` path is relative to the site root; ``plots.js`` resolves it against its
        own URL (``<root>/javascripts/plots.js``), so it works on pages at any depth.

    Raises
    ------
    ValueError
        If ``element_id`` is not a plain slug.
    """
    if not _ELEMENT_ID.fullmatch(element_id):
        raise ValueError(
            f"figure element id {element_id!r} must be letters, digits, '.', '_' or '-' "
            "(it names a file and an HTML id)."
        )
    plots = Path(site_dir) / PLOTS_DIR
    plots.mkdir(parents=True, exist_ok=True)
    (plots / f"{element_id}.json").write_text(dumps_figure(fig_json), encoding="utf-8")
    figure = f"{PLOTS_DIR}/{element_id}.json"
    return f'<div class="chemrobust-plot" id="{element_id}" data-figure="{figure}"></div>'


def plotly_js_source() -> Path:
    """Return the ``plotly.min.js`` bundled with the installed (pinned) plotly package.

    The MkDocs hook (:mod:`leaderboard.site.mkdocs_hooks`) serves it as
    ``javascripts/vendor/plotly.min.js`` of the built site, so the site needs no CDN and the source tree
    holds no copy.

    Returns
    -------
    pathlib.Path
        The file inside the plotly package.

    Raises
    ------
    FileNotFoundError
        If the installed plotly package does not ship ``package_data/plotly.min.js``.
    """
    source = resources.files("plotly") / "package_data" / "plotly.min.js"
    if not source.is_file():
        raise FileNotFoundError(
            f"{source}: the installed plotly package has no bundled plotly.min.js. Install plotly "
            "from leaderboard/requirements.lock."
        )
    return Path(str(source))


# --------------------------------------------------------------------------------------------
# Layout and traces
# --------------------------------------------------------------------------------------------


def submission_colours(submissions: Iterable[str]) -> dict[str, str]:
    """Assign a :data:`PALETTE` colour to each submission, by sorted submission id.

    Parameters
    ----------
    submissions : iterable of str
        Submission ids, possibly repeated (e.g. a DataFrame column).

    Returns
    -------
    dict of str to str
        Colour per distinct submission; the palette repeats beyond its length.

    Examples
    --------
    >>> submission_colours(["b", "a", "b"]) == {"a": PALETTE[0], "b": PALETTE[1]}
    True
    """
    return {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(sorted(set(submissions)))}


def display_name(names: Mapping[str, str], sub: str) -> str:
    """Return the display name of a submission, HTML-escaped for a plotly trace name.

    Parameters
    ----------
    names : mapping of str to str
        Display name per submission id.
    sub : str
        Submission id (used when it has no name).

    Returns
    -------
    str
        The name with ``&``, ``<`` and ``>`` escaped: plotly renders a small HTML subset in names, and
        manifest names are shown literally.

    Examples
    --------
    >>> display_name({"m": "A <b> & C"}, "m"), display_name({}, "x")
    ('A &lt;b&gt; &amp; C', 'x')
    """
    return str(names.get(sub) or sub).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def legend(y: float) -> dict[str, Any]:
    """Horizontal legend under the plot area.

    Parameters
    ----------
    y : float
        Top of the legend in plot-area fractions (negative: below the x-axis title).

    Returns
    -------
    dict
        The ``layout.legend`` of a figure.
    """
    return {"orientation": "h", "x": 0.0, "xanchor": "left", "y": y, "yanchor": "top"}


def panels(titles: Sequence[str]) -> tuple[go.Figure, list[tuple[int, int]]]:
    """Lay out one panel per title, at most three per row, sharing the y axis.

    Parameters
    ----------
    titles : sequence of str
        Panel titles (augmentations), in display order.

    Returns
    -------
    fig : plotly.graph_objects.Figure
        The empty subplot grid (height, legend, margins set; unused cells of the last row hidden).
    cells : list of (int, int)
        ``(row, col)`` of each title's panel, 1-based (for :func:`panel_axes`).
    """
    cols = min(len(titles), _PANEL_COLS)
    rows = math.ceil(len(titles) / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=list(titles),
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=0.16 if rows > 1 else 0.0,
    )
    fig.update_layout(
        height=_PANEL_HEIGHT * rows + 60,
        legend=legend(-0.09 if rows > 1 else -0.25),
        margin={"l": 60, "r": 20, "t": 40, "b": 40},
        hovermode="closest",
    )
    cells = [(i // cols + 1, i % cols + 1) for i in range(rows * cols)]
    for r, c in cells[len(titles) :]:  # empty cells of the last row
        fig.update_xaxes(visible=False, row=r, col=c)
        fig.update_yaxes(visible=False, row=r, col=c)
    return fig, cells[: len(titles)]


def panel_axes(row: int, col: int) -> dict[str, str]:
    """Axis references of the panel at (row, col) of :func:`panels` (``make_subplots`` numbers row-major).

    Parameters
    ----------
    row, col : int
        1-based cell, as :func:`panels` returns it.

    Returns
    -------
    dict of str to str
        ``{"xaxis": "x<n>", "yaxis": "y<n>"}`` (no number for the first panel), to merge into a trace.

    Examples
    --------
    >>> panel_axes(1, 1), panel_axes(2, 1)
    ({'xaxis': 'x', 'yaxis': 'y'}, {'xaxis': 'x4', 'yaxis': 'y4'})
    """
    index = (row - 1) * _PANEL_COLS + col  # rows > 1 only when there are more than _PANEL_COLS panels
    suffix = "" if index == 1 else str(index)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def scatter_trace(**props: Any) -> dict[str, Any]:
    """Return a scatter trace as plotly's JSON (``None`` properties left out, as ``go.Scatter`` does).

    Parameters
    ----------
    **props
        Trace properties in plotly's JSON schema (``x``, ``y``, ``mode``, ``name``, ``line``...).

    Returns
    -------
    dict
        ``{"type": "scatter", ...}``.

    Examples
    --------
    >>> scatter_trace(x=[1], y=[0.5], name=None)
    {'type': 'scatter', 'x': [1], 'y': [0.5]}
    """
    return {"type": "scatter", **{k: v for k, v in props.items() if v is not None}}


def line_trace(
    name: str,
    colour: str,
    x: Sequence[Any] | pd.Series,
    y: Sequence[Any] | pd.Series,
    *,
    dash: str | None = "solid",
    markers: bool = True,
    group: str | None = None,
    legend: bool = True,
    x_label: str = "layer",
) -> dict[str, Any]:
    """Return a line trace (integer x, float y) with the site's hover text.

    Parameters
    ----------
    name : str
        Legend and hover name (already escaped, see :func:`display_name`).
    colour : str
        Line colour.
    x, y : sequence
        Points; x values are cast to int (layer index, K), y values to float.
    dash : str, optional
        Plotly dash style (``None``: solid).
    markers : bool, default True
        Draw a marker at each point.
    group : str, optional
        Legend group.
    legend : bool, default True
        Show the trace in the legend.
    x_label : str, default "layer"
        Name of x in the hover text.

    Returns
    -------
    dict
        A scatter trace (:func:`scatter_trace`).
    """
    return scatter_trace(
        x=[int(v) for v in x],
        y=[float(v) for v in y],
        mode="lines+markers" if markers else "lines",
        name=name,
        legendgroup=group,
        showlegend=legend,
        line={"color": colour, "dash": dash or "solid", "width": 2},
        marker={"size": 5} if markers else None,
        hovertemplate=f"{x_label} %{{x}}: %{{y:.3f}}<extra>%{{fullData.name}}</extra>",
    )


def single_panel(
    traces: Sequence[Mapping[str, Any]], *, x_axis: dict[str, Any], y_title: str
) -> dict[str, Any]:
    """Return a one-panel figure, its layout as ``go.Figure().update_layout(...)`` would give it.

    Parameters
    ----------
    traces : sequence of mapping
        The traces.
    x_axis : dict
        ``layout.xaxis``.
    y_title : str
        Title of the y axis (range 0 to 1.02).

    Returns
    -------
    dict
        The figure, floats rounded (:func:`round_floats`).
    """
    layout = {
        "height": 420,
        "legend": legend(-0.2),
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
        "xaxis": x_axis,
        "yaxis": {"title": {"text": y_title}, "range": [0, 1.02]},
    }
    return round_floats({"data": [dict(t) for t in traces], "layout": layout})


def figure_dict(fig: go.Figure, traces: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the figure's layout (from ``fig``, without its template) with the given traces.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure whose layout to keep (e.g. from :func:`panels`); its own traces are ignored.
    traces : sequence of mapping
        The traces, as plain dicts.

    Returns
    -------
    dict
        ``{"data": [...], "layout": {...}}``, floats rounded (:func:`round_floats`).
    """
    layout = dict(fig.to_plotly_json().get("layout", {}))
    layout.pop("template", None)  # plots.js supplies the light or dark template
    return round_floats({"data": [dict(t) for t in traces], "layout": layout})


def round_floats(value: Any) -> Any:
    """Return ``value`` with every float rounded to :data:`FLOAT_DIGITS` (NaN/inf -> None), as plain JSON.

    Parameters
    ----------
    value : Any
        A JSON-like value (dicts, lists, tuples, arrays, numpy scalars).

    Returns
    -------
    Any
        The same structure with plain Python types: floats rounded, integral floats as ``int``, non-finite
        floats as ``None``, mappings as dicts with string keys, sequences and arrays as lists.

    Examples
    --------
    >>> round_floats({"a": [0.1234567891, 2.0, float("nan")], 1: (3,)})
    {'a': [0.123457, 2, None], '1': [3]}
    """
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):
            return None
        v = round(value, FLOAT_DIGITS)
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if kind is str or kind is int or value is None:
        return value
    if kind is list:
        return [round_floats(v) for v in value]
    if kind is dict:
        return {str(k): round_floats(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {str(k): round_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [round_floats(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return round_floats(float(value))
    return value
