"""Plotly figures of the ChemRobust site: AMORE layer-wise Acc@1 and Recall@K curves, pairwise heatmap.

The figure builders are pure functions of the long-format DataFrames that :mod:`leaderboard.site.build`
exports (``site/data/results.csv`` and ``site/data/recall_at_k.csv``). They return a figure as a
plain JSON-able dict (``{"data": [...], "layout": {...}}``: the layout built with ``plotly.graph_objects``
and ``plotly.subplots.make_subplots``, the traces plain dicts in plotly's JSON schema, which is much faster
than ``go.Scatter`` objects on a board of 100 models) without a layout template: the page script
``site/javascripts/plots.js`` supplies a light or dark template matching the Material palette.

- :func:`layerwise_figure`: Acc@1 (non-trivial pairs, L2, original → augmented) per layer index,
  one panel per augmentation and one line per model, or one line per augmentation for one model.
- :func:`recall_figure`: Recall@K against K (log axis) on the last layer, same setting and layout,
  with the chance level K/N dotted when N (the number of pairs) is known.
- :func:`pairwise_figure`: heatmap of Copeland's pairwise majorities (+1 win, 0 tie, -1 loss of the row
  model against the column model), models in ranking order, with the weighted criteria won on hover.
- :func:`figure_html`: writes a figure to ``site/data/plots/<element_id>.json`` and returns the
  ``<div data-figure=...>`` snippet that ``plots.js`` turns into a plot.
- :func:`vendor_plotly_js`: copies ``plotly.min.js`` from the installed (pinned) plotly package to
  ``site/javascripts/vendor/``, so the site needs no CDN.

Invariants
----------
- Deterministic: the same frames give the same dict, and :func:`dumps_figure` the same bytes
  (sorted keys, floats rounded to :data:`FLOAT_DIGITS` decimals, models and augmentations in a fixed
  order, colours assigned by sorted submission id).
- No network, no mlflow.

Side effects
------------
- :func:`figure_html` creates ``<site_dir>/data/plots/`` and overwrites one JSON file in it.
- :func:`vendor_plotly_js` creates ``<site_dir>/javascripts/vendor/`` and (re)writes
  ``plotly.min.js`` there when its content differs.

References
----------
.. [1] Ganeeva, V., Khrabrov, K., Kadurin, A. and Tutubalina, E. (2024). "Measuring chemical
   LLM robustness to molecular representations: a SMILES variation-based framework" (AMORE).
   Journal of Cheminformatics.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
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
    "PLOTS_DIR",
    "PLOTLY_JS",
    "SETTING",
    "dumps_figure",
    "figure_html",
    "layerwise_figure",
    "n_pairs_by_augmentation",
    "pairwise_figure",
    "parse_layer",
    "recall_figure",
    "vendor_plotly_js",
]

#: The plotted setting (both figures): non-trivial pairs, L2 distance, original → augmented.
SETTING: Mapping[str, str] = {
    "subset": "non_trivial",
    "distance": "l2",
    "direction": "original_to_augmented",
}
#: Folder of the figure JSON files, relative to the MkDocs ``docs_dir`` (and to the site root).
PLOTS_DIR = "data/plots"
#: Where :func:`vendor_plotly_js` puts plotly.js, relative to the ``docs_dir``.
PLOTLY_JS = "javascripts/vendor/plotly.min.js"
#: Decimals kept for every float in a figure's JSON.
FLOAT_DIGITS = 6

_TRACK = "amore"
_AUGMENTATION_ORDER = ("canonical", "explicit_h", "kekule", "ring_renumber", "random_order")
_STACK_ORDER = ("", "encoder", "decoder")
_STACK_DASH = {"": "solid", "encoder": "solid", "decoder": "dashdot"}
_LAYER = re.compile(r"^(?:(?P<stack>[A-Za-z_][A-Za-z0-9_]*)\.)?(?P<index>\d+)$")
_ELEMENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PALETTE: tuple[str, ...] = tuple(qualitative.Plotly) + tuple(qualitative.D3)
_CHANCE_COLOR = "#9e9e9e"
_PANEL_COLS = 3
_PANEL_HEIGHT = 300


def _legend(y: float) -> dict[str, Any]:
    """Horizontal legend under the plot area (``y`` in plot-area fractions, below the x-axis title)."""
    return {"orientation": "h", "x": 0.0, "xanchor": "left", "y": y, "yanchor": "top"}


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------


def parse_layer(label: str) -> tuple[str, int] | None:
    """Split a layer label into its stack and index.

    Parameters
    ----------
    label : str
        Layer label as in the results: ``encoder.K``, ``decoder.K``, a bare index ``K``, ``last``
        or ``-`` (pair counts).

    Returns
    -------
    tuple of (str, int) or None
        ``(stack, K)`` with stack ``""`` for a bare index; ``None`` for ``last``, ``-`` and any
        label without an index (e.g. ``decoder.last``).

    Examples
    --------
    >>> parse_layer("encoder.3"), parse_layer("7"), parse_layer("last")
    (('encoder', 3), ('', 7), None)
    """
    match = _LAYER.fullmatch(str(label))
    if match is None:
        return None
    return (match.group("stack") or "", int(match.group("index")))


def layerwise_figure(
    results: pd.DataFrame,
    dataset: str,
    *,
    submission: str | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """Acc@1 per layer: one panel per augmentation and one line per model (or per augmentation).

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format results (columns of ``site/data/results.csv``). Only AMORE rows of
        ``dataset`` with metric ``acc_at_1`` in the :data:`SETTING` are used.
    dataset : str
        Dataset to plot.
    submission : str, optional
        Plot one model only: a single panel with one line per augmentation.
    names : mapping of str to str, optional
        Display name per submission id (default: the id).

    Returns
    -------
    dict or None
        The figure as ``{"data": [...], "layout": {...}}`` (no template), or ``None`` when there is
        nothing to plot. The x axis is the layer index K of ``encoder.K`` / ``decoder.K`` / ``K``
        (``last`` is not plotted: it repeats one of them). A model that reports only ``last``
        (fingerprints, n-grams) is drawn as a dashed horizontal line over the layer range of the
        other models, or as one marker at x = 0 when no model has layers; its legend entry ends
        in "(single layer)". An encoder-decoder's decoder stack is a dash-dotted line.
    """
    rows = _setting_rows(results, dataset, "acc_at_1")
    if submission is not None:
        rows = rows.loc[rows["submission"] == submission]
    rows = rows.loc[rows["value"].notna() & (rows["layer"] != "-")]
    if rows.empty:
        return None
    names = dict(names or {})
    parsed = {label: parse_layer(label) for label in rows["layer"].unique()}
    is_layered = rows["layer"].map(lambda label: parsed[label] is not None).to_numpy(dtype=bool)
    layered = rows.loc[is_layered]
    layered = layered.assign(
        stack=layered["layer"].map(lambda label: parsed[label][0]),
        index=layered["layer"].map(lambda label: parsed[label][1]),
    )
    last = rows.loc[rows["layer"] == "last"]
    last_value = {
        (str(a), str(s)): float(v) for a, s, v in last[["augmentation", "submission", "value"]].values
    }
    augs = _ordered(rows["augmentation"], _AUGMENTATION_ORDER)
    y_title = "Acc@1 (non-trivial, L2)"
    # One pass over the rows: (augmentation, submission, stack) -> sorted (index, value) points.
    lines: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for aug, sub, stack, idx, val in layered[
        ["augmentation", "submission", "stack", "index", "value"]
    ].values:
        lines.setdefault((str(aug), str(sub), str(stack)), []).append((int(idx), float(val)))
    for points in lines.values():
        points.sort()

    if submission is not None:
        traces: list[dict[str, Any]] = []
        multi_stack = layered["stack"].nunique() > 1
        for a_i, aug in enumerate(augs):
            colour = _PALETTE[_order_index(aug, _AUGMENTATION_ORDER, a_i) % len(_PALETTE)]
            stacks = _ordered([k[2] for k in lines if k[0] == aug], _STACK_ORDER)
            if not stacks:
                if (aug, submission) in last_value:
                    traces.append(
                        _single_layer_trace(f"{aug} (single layer)", colour, last_value[(aug, submission)])
                    )
                continue
            for stack in stacks:
                points = lines[(aug, submission, stack)]
                label = f"{aug} ({stack})" if multi_stack and stack else aug
                traces.append(
                    _line(
                        label,
                        colour,
                        [p[0] for p in points],
                        [p[1] for p in points],
                        dash=_STACK_DASH.get(stack),
                    )
                )
        return _single_panel(
            traces, x_axis={"title": {"text": "layer"}, "rangemode": "tozero"}, y_title=y_title
        )

    fig, cells = _panels(augs)
    colours = _colours(rows["submission"])
    subs_by_aug = {
        str(a): sorted(map(str, s))
        for a, s in rows.groupby("augmentation", sort=False)["submission"].unique().items()
    }
    range_by_aug = {
        str(a): (int(g.min()), int(g.max())) for a, g in layered.groupby("augmentation", sort=False)["index"]
    }
    traces = []
    shown: set[str] = set()
    for aug, (r, c) in zip(augs, cells, strict=True):
        axes = _axes(r, c)
        lo, hi = range_by_aug.get(aug, (0, 0))
        for sub in subs_by_aug.get(aug, []):
            label = _name(names, sub)
            stacks = _ordered([k[2] for k in lines if k[0] == aug and k[1] == sub], _STACK_ORDER)
            if not stacks:
                if (aug, sub) not in last_value:
                    continue
                label = f"{label} (single layer)"
                v = last_value[(aug, sub)]
                trace = (
                    _line(label, colours[sub], [lo, hi], [v, v], dash="dash", markers=False)
                    if hi > lo
                    else _single_layer_trace(label, colours[sub], v)
                )
            else:
                for stack in stacks[1:]:  # extra stacks of an encoder-decoder: own traces
                    points = lines[(aug, sub, stack)]
                    extra = _line(
                        f"{label} ({stack})",
                        colours[sub],
                        [p[0] for p in points],
                        [p[1] for p in points],
                        dash=_STACK_DASH.get(stack),
                        group=sub,
                        legend=False,
                    )
                    traces.append({**extra, **axes})
                points = lines[(aug, sub, stacks[0])]
                trace = _line(
                    label,
                    colours[sub],
                    [p[0] for p in points],
                    [p[1] for p in points],
                    dash=_STACK_DASH.get(stacks[0]),
                )
            trace.update(legendgroup=sub, showlegend=sub not in shown, **axes)
            shown.add(sub)
            traces.append(trace)
    fig.update_yaxes(range=[0, 1.02])
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_xaxes(title_text="layer")
    return _to_dict(fig, traces)


def recall_figure(
    curves: pd.DataFrame,
    dataset: str,
    *,
    submission: str | None = None,
    n_pairs: Mapping[str, float] | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """Recall@K against K (log axis): one panel per augmentation and one line per model.

    Parameters
    ----------
    curves : pandas.DataFrame
        Long-format curves (columns of ``site/data/recall_at_k.csv``). Only AMORE rows of
        ``dataset`` on the last layer in the :data:`SETTING` are used.
    dataset : str
        Dataset to plot.
    submission : str, optional
        Plot one model only: a single panel with one line per augmentation.
    n_pairs : mapping of str to float, optional
        Number of pairs N (the gallery size) per augmentation, e.g. from
        :func:`n_pairs_by_augmentation`; where given, the chance level min(K/N, 1) is drawn dotted.
    names : mapping of str to str, optional
        Display name per submission id (default: the id).

    Returns
    -------
    dict or None
        The figure as ``{"data": [...], "layout": {...}}`` (no template), or ``None`` when there is
        nothing to plot.
    """
    rows = _select(curves, track=_TRACK, dataset=dataset, layer="last", **SETTING)
    if submission is not None:
        rows = rows.loc[rows["submission"] == submission]
    rows = rows.loc[rows["recall"].notna()]
    if rows.empty:
        return None
    names = dict(names or {})
    n_pairs = {a: float(n) for a, n in (n_pairs or {}).items() if _is_positive(n)}
    augs = _ordered(rows["augmentation"], _AUGMENTATION_ORDER)
    y_title = "Recall@K (non-trivial, L2)"
    rows = rows.sort_values("k", kind="mergesort")
    curve: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    for (aug, sub), grp in rows.groupby(["augmentation", "submission"], sort=False):
        curve[(str(aug), str(sub))] = ([int(k) for k in grp["k"]], [float(v) for v in grp["recall"]])

    def chance(n: float | None, ks: Sequence[int], *, name: str, show: bool) -> dict[str, Any] | None:
        if n is None:
            return None
        return _scatter(
            x=list(ks),
            y=[min(k / n, 1.0) for k in ks],
            mode="lines",
            name=name,
            legendgroup="chance",
            showlegend=show,
            line={"color": _CHANCE_COLOR, "dash": "dot", "width": 1.5},
            hovertemplate=f"K = %{{x}}: %{{y:.4f}}<extra>chance (N = {n:g})</extra>",
        )

    traces: list[dict[str, Any]] = []
    if submission is not None:
        for a_i, aug in enumerate(augs):
            ks, recall = curve[(aug, submission)]
            colour = _PALETTE[_order_index(aug, _AUGMENTATION_ORDER, a_i) % len(_PALETTE)]
            traces.append(_line(aug, colour, ks, recall, markers=False, x_label="K"))
        # One dotted line per distinct N (augmentations usually share it).
        levels = sorted({n_pairs[a] for a in augs if a in n_pairs})
        ks = sorted(set(rows["k"]))
        for n in levels:
            name = "chance K/N" if len(levels) == 1 else f"chance K/N (N = {n:g})"
            traces.append(chance(n, ks, name=name, show=True))
        return _single_panel(traces, x_axis={"title": {"text": "K"}, "type": "log"}, y_title=y_title)

    fig, cells = _panels(augs)
    colours = _colours(rows["submission"])
    shown: set[str] = set()
    for aug, (r, c) in zip(augs, cells, strict=True):
        axes = _axes(r, c)
        subs = sorted(s for a, s in curve if a == aug)
        for sub in subs:
            ks, recall = curve[(aug, sub)]
            trace = _line(_name(names, sub), colours[sub], ks, recall, markers=False, x_label="K")
            trace.update(legendgroup=sub, showlegend=sub not in shown, **axes)
            shown.add(sub)
            traces.append(trace)
        aug_ks = sorted({k for sub in subs for k in curve[(aug, sub)][0]})
        trace = chance(n_pairs.get(aug), aug_ks, name="chance K/N", show="chance" not in shown)
        if trace is not None:
            shown.add("chance")
            traces.append({**trace, **axes})
    fig.update_xaxes(title_text="K", type="log")
    fig.update_yaxes(range=[0, 1.02])
    fig.update_yaxes(title_text=y_title, col=1)
    return _to_dict(fig, traces)


def pairwise_figure(
    majority: pd.DataFrame,
    *,
    wins: pd.DataFrame | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """Heatmap of pairwise majorities: +1 where the row model beats the column model, -1 where it loses.

    Parameters
    ----------
    majority : pandas.DataFrame
        Systems x systems matrix of +1 / 0 / -1, as :func:`leaderboard.ranking.copeland.pairwise_majority`,
        with rows and columns in the order to show (the ranking's, best first).
    wins : pandas.DataFrame, optional
        Systems x systems weighted criteria won by the row system against the column system
        (:func:`leaderboard.ranking.copeland.pairwise_wins`), shown on hover.
    names : mapping of str to str, optional
        Display name per submission id (default: the id).

    Returns
    -------
    dict or None
        The figure (a ``heatmap`` trace, no template), or ``None`` for fewer than two systems. Green is
        a win, grey a tie, red a loss; the diagonal is empty. Rows run top to bottom in the given order;
        axis labels are hidden above 40 models (hover shows them).
    """
    systems = [str(s) for s in majority.index]
    if len(systems) < 2:
        return None
    names = dict(names or {})
    labels = [_name(names, s) for s in systems]
    values = majority.reindex(index=systems, columns=systems).to_numpy(dtype=float)
    z: list[list[float | None]] = [
        [None if i == j else float(values[i, j]) for j in range(len(systems))] for i in range(len(systems))
    ]
    word = {1.0: "wins against", 0.0: "ties with", -1.0: "loses against"}
    if wins is not None:
        w = wins.reindex(index=systems, columns=systems).to_numpy(dtype=float)
        text = [
            [
                ""
                if i == j
                else f"{word[values[i, j]]}<br>criteria weight won {w[i, j]:.3g} vs {w[j, i]:.3g}"
                for j in range(len(systems))
            ]
            for i in range(len(systems))
        ]
    else:
        text = [
            ["" if i == j else word[values[i, j]] for j in range(len(systems))] for i in range(len(systems))
        ]
    lose, tie, win = "#d62728", "#bdbdbd", "#2ca02c"
    trace = {
        "type": "heatmap",
        "z": z,
        "x": labels,
        "y": labels,
        "text": text,
        "zmin": -1,
        "zmax": 1,
        "xgap": 1,
        "ygap": 1,
        "colorscale": [[0.0, lose], [1 / 3, lose], [1 / 3, tie], [2 / 3, tie], [2 / 3, win], [1.0, win]],
        "colorbar": {
            "tickvals": [-2 / 3, 0, 2 / 3],
            "ticktext": ["loss", "tie", "win"],
            "thickness": 12,
            "len": 0.6,
        },
        "hovertemplate": "%{y} %{text} %{x}<extra></extra>",
    }
    n = len(systems)
    show = n <= 40
    size = min(max(320, 22 * n + 200), 1400)
    axis = {"showticklabels": show, "automargin": True}  # automargin: room for the longest name
    layout = {
        "height": size,
        "margin": {"l": 40, "r": 20, "t": 20, "b": 40},
        "xaxis": {**axis, "tickangle": -45, "title": {"text": "opponent"}, "side": "bottom"},
        "yaxis": {**axis, "autorange": "reversed", "title": {"text": "model"}},
    }
    return _round({"data": [trace], "layout": layout})


def n_pairs_by_augmentation(
    results: pd.DataFrame, dataset: str, *, submission: str | None = None
) -> dict[str, float]:
    """Return the number of pairs N per augmentation (metric ``n_pairs``), for the chance line K/N.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format results (columns of ``site/data/results.csv``).
    dataset : str
        Dataset.
    submission : str, optional
        Use this model's counts only (default: the largest count over all models).

    Returns
    -------
    dict of str to float
        ``{augmentation: N}`` for the augmentations with a positive ``n_pairs`` (subset ``all``).
    """
    rows = _select(results, track=_TRACK, dataset=dataset, metric="n_pairs", subset="all")
    if submission is not None:
        rows = rows.loc[rows["submission"] == submission]
    rows = rows.loc[rows["value"].notna() & (rows["value"] > 0)]
    return {str(a): float(v) for a, v in rows.groupby("augmentation", sort=True)["value"].max().items()}


# --------------------------------------------------------------------------------------------
# Files and HTML
# --------------------------------------------------------------------------------------------


def dumps_figure(fig_json: Mapping[str, Any]) -> str:
    """Serialise a figure dict deterministically (sorted keys, rounded floats, one trailing newline).

    Parameters
    ----------
    fig_json : mapping
        A figure as returned by :func:`layerwise_figure` / :func:`recall_figure`.

    Returns
    -------
    str
        Compact JSON text.
    """
    return (
        json.dumps(
            _round(fig_json), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
        + "\n"
    )


def figure_html(fig_json: Mapping[str, Any], element_id: str, *, site_dir: Path) -> str:
    """Write a figure to ``<site_dir>/data/plots/<element_id>.json`` and return its placeholder div.

    Parameters
    ----------
    fig_json : mapping
        A figure as returned by :func:`layerwise_figure` / :func:`recall_figure`.
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


def vendor_plotly_js(site_dir: Path) -> Path:
    """Copy ``plotly.min.js`` from the installed plotly package into the site.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).

    Returns
    -------
    pathlib.Path
        ``<site_dir>/javascripts/vendor/plotly.min.js`` (a build artefact: git-ignored, copied from
        the plotly version pinned in ``leaderboard/requirements.lock``).

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
    content = source.read_bytes()
    target = Path(site_dir) / PLOTLY_JS
    if not target.is_file() or target.read_bytes() != content:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return target


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _select(frame: pd.DataFrame, **equal: str) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for col, val in equal.items():
        if col not in frame.columns:
            raise ValueError(f"expected a column {col!r}; got {list(map(str, frame.columns))}.")
        column = frame[col]
        if column.dtype != object and not isinstance(column.dtype, (pd.CategoricalDtype, pd.StringDtype)):
            column = column.astype(str)  # e.g. an integer layer column read without dtypes
        mask &= (column == val).to_numpy(dtype=bool)
    return frame.loc[mask]


def _setting_rows(results: pd.DataFrame, dataset: str, metric: str) -> pd.DataFrame:
    return _select(results, track=_TRACK, dataset=dataset, metric=metric, **SETTING)


def _order_index(value: str, preferred: Sequence[str], fallback: int) -> int:
    return preferred.index(value) if value in preferred else len(preferred) + fallback


def _ordered(values: pd.Series, preferred: Sequence[str]) -> list[str]:
    return sorted(
        set(values), key=lambda v: (preferred.index(v), "") if v in preferred else (len(preferred), v)
    )


def _colours(submissions: pd.Series) -> dict[str, str]:
    return {s: _PALETTE[i % len(_PALETTE)] for i, s in enumerate(sorted(set(submissions)))}


def _name(names: Mapping[str, str], sub: str) -> str:
    # Plotly renders a small HTML subset in names; show manifest names literally.
    return str(names.get(sub) or sub).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _is_positive(value: Any) -> bool:
    try:
        return math.isfinite(float(value)) and float(value) > 0
    except (TypeError, ValueError):
        return False


def _panels(augs: Sequence[str]) -> tuple[go.Figure, list[tuple[int, int]]]:
    cols = min(len(augs), _PANEL_COLS)
    rows = math.ceil(len(augs) / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=list(augs),
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=0.16 if rows > 1 else 0.0,
    )
    fig.update_layout(
        height=_PANEL_HEIGHT * rows + 60,
        legend=_legend(-0.09 if rows > 1 else -0.25),
        margin={"l": 60, "r": 20, "t": 40, "b": 40},
        hovermode="closest",
    )
    cells = [(i // cols + 1, i % cols + 1) for i in range(rows * cols)]
    for r, c in cells[len(augs) :]:  # empty cells of the last row
        fig.update_xaxes(visible=False, row=r, col=c)
        fig.update_yaxes(visible=False, row=r, col=c)
    return fig, cells[: len(augs)]


def _axes(row: int, col: int) -> dict[str, str]:
    """Axis references of the panel at (row, col) of :func:`_panels` (``make_subplots`` numbers row-major)."""
    index = (row - 1) * _PANEL_COLS + col  # rows > 1 only when there are more than _PANEL_COLS panels
    suffix = "" if index == 1 else str(index)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def _scatter(**props: Any) -> dict[str, Any]:
    """Return a scatter trace as plotly's JSON (``None`` properties left out, as ``go.Scatter`` does)."""
    return {"type": "scatter", **{k: v for k, v in props.items() if v is not None}}


def _line(
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
    return _scatter(
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


def _single_layer_trace(name: str, colour: str, value: float) -> dict[str, Any]:
    return _scatter(
        x=[0],
        y=[value],
        mode="markers",
        name=name,
        marker={"color": colour, "size": 9, "symbol": "diamond"},
        hovertemplate="last layer: %{y:.3f}<extra>%{fullData.name}</extra>",
    )


def _single_panel(
    traces: Sequence[Mapping[str, Any]], *, x_axis: dict[str, Any], y_title: str
) -> dict[str, Any]:
    """Return a one-panel figure, its layout as ``go.Figure().update_layout(...)`` would give it."""
    layout = {
        "height": 420,
        "legend": _legend(-0.2),
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
        "xaxis": x_axis,
        "yaxis": {"title": {"text": y_title}, "range": [0, 1.02]},
    }
    return _round({"data": [dict(t) for t in traces], "layout": layout})


def _to_dict(fig: go.Figure, traces: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the figure's layout (from ``fig``, without its template) with the given traces."""
    layout = dict(fig.to_plotly_json().get("layout", {}))
    layout.pop("template", None)  # plots.js supplies the light or dark template
    return _round({"data": [dict(t) for t in traces], "layout": layout})


def _round(value: Any) -> Any:
    """Return ``value`` with every float rounded to :data:`FLOAT_DIGITS` (NaN/inf -> None), as plain JSON."""
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):
            return None
        v = round(value, FLOAT_DIGITS)
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if kind is str or kind is int or value is None:
        return value
    if kind is list:
        return [_round(v) for v in value]
    if kind is dict:
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_round(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return _round(float(value))
    return value
