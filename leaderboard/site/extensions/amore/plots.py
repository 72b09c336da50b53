"""The AMORE track's figures: layer-wise Acc@1 and Recall@K curves (plotly figure JSON).

The figure builders are pure functions of the long-format DataFrames that :mod:`leaderboard.site.build`
exports (``site/data/results.csv.gz`` and ``site/data/recall_at_k.csv.gz``). They return a figure as a
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

Writing a figure to the site (:func:`leaderboard.site.figures.figure_html`,
:func:`leaderboard.site.figures.dumps_figure`) and the layout and trace pieces are in
:mod:`leaderboard.site.figures`; the order of augmentations and layers is :mod:`leaderboard.tracks`.

Invariants
----------
- Deterministic: the same frames give the same dict (floats rounded to
  :data:`leaderboard.site.figures.FLOAT_DIGITS` decimals, models and augmentations in a fixed order,
  layers in :func:`leaderboard.tracks.layer_sort_key` order, colours assigned by sorted submission id).
- No network, no mlflow, no files.

References
----------
.. [1] Ganeeva, V., Khrabrov, K., Kadurin, A. and Tutubalina, E. (2024). "Measuring chemical
   LLM robustness to molecular representations: a SMILES variation-based framework" (AMORE).
   Journal of Cheminformatics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from leaderboard.site.figures import (
    PALETTE,
    display_name,
    figure_dict,
    line_trace,
    panel_axes,
    panels,
    scatter_trace,
    single_panel,
    submission_colours,
)
from leaderboard.tracks import STACK_ORDER, layer_sort_key, ordered_by, parse_layer, track

__all__ = [
    "SETTING",
    "layerwise_figure",
    "n_pairs_by_augmentation",
    "recall_figure",
]

#: The plotted setting (both figures): non-trivial pairs, L2 distance, original → augmented.
SETTING: Mapping[str, str] = {
    "subset": "non_trivial",
    "distance": "l2",
    "direction": "original_to_augmented",
}

_TRACK = "amore"
#: Augmentations in the order the track declares them (the paper's order).
AUGMENTATION_ORDER: tuple[str, ...] = track(_TRACK).dimension("augmentation").values
_STACK_DASH = {"": "solid", "encoder": "solid", "decoder": "dashdot"}
_CHANCE_COLOR = "#9e9e9e"


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------


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
        Long-format results (columns of ``site/data/results.csv.gz``). Only AMORE rows of
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
    augs = ordered_by(rows["augmentation"], AUGMENTATION_ORDER)
    y_title = "Acc@1 (non-trivial, L2)"
    # One pass over the rows: (augmentation, submission, stack) -> (layer, index, value) points in layer
    # order (numeric: encoder.10 after encoder.2).
    layer_key = {label: layer_sort_key(label) for label in parsed}
    lines: dict[tuple[str, str, str], list[tuple[Any, int, float]]] = {}
    for aug, sub, layer, stack, idx, val in layered[
        ["augmentation", "submission", "layer", "stack", "index", "value"]
    ].values:
        lines.setdefault((str(aug), str(sub), str(stack)), []).append((layer, int(idx), float(val)))
    for points in lines.values():
        points.sort(key=lambda p: (layer_key[p[0]], p[2]))

    if submission is not None:
        traces: list[dict[str, Any]] = []
        multi_stack = layered["stack"].nunique() > 1
        for a_i, aug in enumerate(augs):
            colour = PALETTE[_order_index(aug, AUGMENTATION_ORDER, a_i) % len(PALETTE)]
            stacks = ordered_by([k[2] for k in lines if k[0] == aug], STACK_ORDER)
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
                    line_trace(
                        label,
                        colour,
                        *_xy(points),
                        dash=_STACK_DASH.get(stack),
                    )
                )
        return single_panel(
            traces, x_axis={"title": {"text": "layer"}, "rangemode": "tozero"}, y_title=y_title
        )

    fig, cells = panels(augs)
    colours = submission_colours(rows["submission"])
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
        axes = panel_axes(r, c)
        lo, hi = range_by_aug.get(aug, (0, 0))
        for sub in subs_by_aug.get(aug, []):
            label = display_name(names, sub)
            stacks = ordered_by([k[2] for k in lines if k[0] == aug and k[1] == sub], STACK_ORDER)
            if not stacks:
                if (aug, sub) not in last_value:
                    continue
                label = f"{label} (single layer)"
                v = last_value[(aug, sub)]
                trace = (
                    line_trace(label, colours[sub], [lo, hi], [v, v], dash="dash", markers=False)
                    if hi > lo
                    else _single_layer_trace(label, colours[sub], v)
                )
            else:
                for stack in stacks[1:]:  # extra stacks of an encoder-decoder: own traces
                    points = lines[(aug, sub, stack)]
                    extra = line_trace(
                        f"{label} ({stack})",
                        colours[sub],
                        *_xy(points),
                        dash=_STACK_DASH.get(stack),
                        group=sub,
                        legend=False,
                    )
                    traces.append({**extra, **axes})
                points = lines[(aug, sub, stacks[0])]
                trace = line_trace(
                    label,
                    colours[sub],
                    *_xy(points),
                    dash=_STACK_DASH.get(stacks[0]),
                )
            trace.update(legendgroup=sub, showlegend=sub not in shown, **axes)
            shown.add(sub)
            traces.append(trace)
    fig.update_yaxes(range=[0, 1.02])
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_xaxes(title_text="layer")
    return figure_dict(fig, traces)


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
        Long-format curves (columns of ``site/data/recall_at_k.csv.gz``). Only AMORE rows of
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
    augs = ordered_by(rows["augmentation"], AUGMENTATION_ORDER)
    y_title = "Recall@K (non-trivial, L2)"
    rows = rows.sort_values("k", kind="mergesort")
    curve: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    for (aug, sub), grp in rows.groupby(["augmentation", "submission"], sort=False):
        curve[(str(aug), str(sub))] = ([int(k) for k in grp["k"]], [float(v) for v in grp["recall"]])

    def chance(n: float | None, ks: Sequence[int], *, name: str, show: bool) -> dict[str, Any] | None:
        if n is None:
            return None
        return scatter_trace(
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
            colour = PALETTE[_order_index(aug, AUGMENTATION_ORDER, a_i) % len(PALETTE)]
            traces.append(line_trace(aug, colour, ks, recall, markers=False, x_label="K"))
        # One dotted line per distinct N (augmentations usually share it).
        levels = sorted({n_pairs[a] for a in augs if a in n_pairs})
        ks = sorted(set(rows["k"]))
        for n in levels:
            name = "chance K/N" if len(levels) == 1 else f"chance K/N (N = {n:g})"
            traces.append(chance(n, ks, name=name, show=True))
        return single_panel(traces, x_axis={"title": {"text": "K"}, "type": "log"}, y_title=y_title)

    fig, cells = panels(augs)
    colours = submission_colours(rows["submission"])
    shown: set[str] = set()
    for aug, (r, c) in zip(augs, cells, strict=True):
        axes = panel_axes(r, c)
        subs = sorted(s for a, s in curve if a == aug)
        for sub in subs:
            ks, recall = curve[(aug, sub)]
            trace = line_trace(display_name(names, sub), colours[sub], ks, recall, markers=False, x_label="K")
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
    return figure_dict(fig, traces)


def n_pairs_by_augmentation(
    results: pd.DataFrame, dataset: str, *, submission: str | None = None
) -> dict[str, float]:
    """Return the number of pairs N per augmentation (metric ``n_pairs``), for the chance line K/N.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format results (columns of ``site/data/results.csv.gz``).
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


def _xy(points: Sequence[tuple[Any, int, float]]) -> tuple[list[int], list[float]]:
    """Split ``(layer, index, value)`` points into the x (layer index) and y (value) lists of a line."""
    return [p[1] for p in points], [p[2] for p in points]


def _is_positive(value: Any) -> bool:
    try:
        return math.isfinite(float(value)) and float(value) > 0
    except (TypeError, ValueError):
        return False


def _single_layer_trace(name: str, colour: str, value: float) -> dict[str, Any]:
    return scatter_trace(
        x=[0],
        y=[value],
        mode="markers",
        name=name,
        marker={"color": colour, "size": 9, "symbol": "diamond"},
        hovertemplate="last layer: %{y:.3f}<extra>%{fullData.name}</extra>",
    )
