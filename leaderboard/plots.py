"""Plotly figures of the ChemRobust site: layer-wise Acc@1 and Recall@K curves of the AMORE track.

The figure builders are pure functions of the long-format DataFrames that :mod:`leaderboard.site`
exports (``site/data/results.csv`` and ``site/data/recall_at_k.csv``). They return a figure as a
plain JSON-able dict (``{"data": [...], "layout": {...}}``, built with ``plotly.graph_objects`` and
``plotly.subplots.make_subplots``) without a layout template: the page script
``site/javascripts/plots.js`` supplies a light or dark template matching the Material palette.

- :func:`layerwise_figure`: Acc@1 (non-trivial pairs, L2, original → augmented) per layer index,
  one panel per augmentation and one line per model, or one line per augmentation for one model.
- :func:`recall_figure`: Recall@K against K (log axis) on the last layer, same setting and layout,
  with the chance level K/N dotted when N (the number of pairs) is known.
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
    parsed = rows["layer"].map(parse_layer)
    layered = rows.loc[parsed.notna()].assign(
        stack=parsed[parsed.notna()].map(lambda p: p[0]), index=parsed[parsed.notna()].map(lambda p: p[1])
    )
    last = rows.loc[rows["layer"] == "last"]
    augs = _ordered(rows["augmentation"], _AUGMENTATION_ORDER)
    y_title = "Acc@1 (non-trivial, L2)"

    if submission is not None:
        fig = go.Figure()
        multi_stack = layered["stack"].nunique() > 1
        for a_i, aug in enumerate(augs):
            colour = _PALETTE[_order_index(aug, _AUGMENTATION_ORDER, a_i) % len(_PALETTE)]
            sel = layered.loc[layered["augmentation"] == aug]
            if sel.empty:
                val = last.loc[last["augmentation"] == aug, "value"]
                if not val.empty:
                    fig.add_trace(_single_layer_trace(f"{aug} (single layer)", colour, float(val.iloc[0])))
                continue
            for stack in _ordered(sel["stack"], _STACK_ORDER):
                part = sel.loc[sel["stack"] == stack].sort_values("index")
                label = f"{aug} ({stack})" if multi_stack and stack else aug
                fig.add_trace(_line(label, colour, part["index"], part["value"], dash=_STACK_DASH.get(stack)))
        fig.update_layout(height=420, legend=_legend(-0.2), margin={"l": 60, "r": 20, "t": 20, "b": 40})
        fig.update_xaxes(title_text="layer", rangemode="tozero")
        fig.update_yaxes(title_text=y_title, range=[0, 1.02])
        return _to_dict(fig)

    fig, cells = _panels(augs)
    colours = _colours(rows["submission"])
    shown: set[str] = set()
    for aug, (r, c) in zip(augs, cells, strict=True):
        lay = layered.loc[layered["augmentation"] == aug]
        lo, hi = (int(lay["index"].min()), int(lay["index"].max())) if not lay.empty else (0, 0)
        for sub in sorted(set(rows.loc[rows["augmentation"] == aug, "submission"])):
            label = _name(names, sub)
            sel = lay.loc[lay["submission"] == sub]
            if sel.empty:
                val = last.loc[(last["augmentation"] == aug) & (last["submission"] == sub), "value"]
                if val.empty:
                    continue
                label = f"{label} (single layer)"
                v = float(val.iloc[0])
                trace = (
                    _line(label, colours[sub], [lo, hi], [v, v], dash="dash", markers=False)
                    if hi > lo
                    else _single_layer_trace(label, colours[sub], v)
                )
            else:
                stacks = _ordered(sel["stack"], _STACK_ORDER)
                for stack in stacks[1:]:  # extra stacks of an encoder-decoder: own traces
                    part = sel.loc[sel["stack"] == stack].sort_values("index")
                    fig.add_trace(
                        _line(
                            f"{label} ({stack})",
                            colours[sub],
                            part["index"],
                            part["value"],
                            dash=_STACK_DASH.get(stack),
                            group=sub,
                            legend=False,
                        ),
                        row=r,
                        col=c,
                    )
                part = sel.loc[sel["stack"] == stacks[0]].sort_values("index")
                trace = _line(
                    label, colours[sub], part["index"], part["value"], dash=_STACK_DASH.get(stacks[0])
                )
            trace.update(legendgroup=sub, showlegend=sub not in shown)
            shown.add(sub)
            fig.add_trace(trace, row=r, col=c)
    fig.update_yaxes(range=[0, 1.02])
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_xaxes(title_text="layer")
    return _to_dict(fig)


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

    def chance(n: float | None, ks: Sequence[int], *, name: str, show: bool) -> go.Scatter | None:
        if n is None:
            return None
        return go.Scatter(
            x=list(ks),
            y=[min(k / n, 1.0) for k in ks],
            mode="lines",
            name=name,
            legendgroup="chance",
            showlegend=show,
            line={"color": _CHANCE_COLOR, "dash": "dot", "width": 1.5},
            hovertemplate=f"K = %{{x}}: %{{y:.4f}}<extra>chance (N = {n:g})</extra>",
        )

    if submission is not None:
        fig = go.Figure()
        for a_i, aug in enumerate(augs):
            sel = rows.loc[rows["augmentation"] == aug].sort_values("k")
            colour = _PALETTE[_order_index(aug, _AUGMENTATION_ORDER, a_i) % len(_PALETTE)]
            fig.add_trace(_line(aug, colour, sel["k"], sel["recall"], markers=False, x_label="K"))
        # One dotted line per distinct N (augmentations usually share it).
        levels = sorted({n_pairs[a] for a in augs if a in n_pairs})
        ks = sorted(set(rows["k"]))
        for n in levels:
            name = "chance K/N" if len(levels) == 1 else f"chance K/N (N = {n:g})"
            fig.add_trace(chance(n, ks, name=name, show=True))
        fig.update_layout(height=420, legend=_legend(-0.2), margin={"l": 60, "r": 20, "t": 20, "b": 40})
        fig.update_xaxes(title_text="K", type="log")
        fig.update_yaxes(title_text=y_title, range=[0, 1.02])
        return _to_dict(fig)

    fig, cells = _panels(augs)
    colours = _colours(rows["submission"])
    shown: set[str] = set()
    for aug, (r, c) in zip(augs, cells, strict=True):
        arows = rows.loc[rows["augmentation"] == aug]
        for sub in sorted(set(arows["submission"])):
            sel = arows.loc[arows["submission"] == sub].sort_values("k")
            trace = _line(
                _name(names, sub), colours[sub], sel["k"], sel["recall"], markers=False, x_label="K"
            )
            trace.update(legendgroup=sub, showlegend=sub not in shown)
            shown.add(sub)
            fig.add_trace(trace, row=r, col=c)
        trace = chance(
            n_pairs.get(aug), sorted(set(arows["k"])), name="chance K/N", show="chance" not in shown
        )
        if trace is not None:
            shown.add("chance")
            fig.add_trace(trace, row=r, col=c)
    fig.update_xaxes(title_text="K", type="log")
    fig.update_yaxes(range=[0, 1.02])
    fig.update_yaxes(title_text=y_title, col=1)
    return _to_dict(fig)


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
        mask &= (frame[col].astype(str) == val).to_numpy()
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
) -> go.Scatter:
    return go.Scatter(
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


def _single_layer_trace(name: str, colour: str, value: float) -> go.Scatter:
    return go.Scatter(
        x=[0],
        y=[value],
        mode="markers",
        name=name,
        marker={"color": colour, "size": 9, "symbol": "diamond"},
        hovertemplate="last layer: %{y:.3f}<extra>%{fullData.name}</extra>",
    )


def _to_dict(fig: go.Figure) -> dict[str, Any]:
    raw = fig.to_plotly_json()
    layout = dict(raw.get("layout", {}))
    layout.pop("template", None)  # plots.js supplies the light or dark template
    return _round({"data": list(raw.get("data", [])), "layout": layout})


def _round(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _round(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_round(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            return None
        v = round(v, FLOAT_DIGITS)
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    return value
