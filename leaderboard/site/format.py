"""Plain-text formatting of the site's numbers, labels and values, and the selection of result rows.

Numbers become the strings the pages show (:func:`fmt`, :func:`fmt_range`, :func:`rank_text`,
:func:`change`, :func:`duration`); labels come from the registries (:func:`metric_label` from
:data:`evaluators.metrics.METRICS`, :func:`value_label` from a track's
:class:`~evaluators.schema.Dimension`), never from a name's spelling. Text a submission controls is
returned here *unescaped*: pages escape it with :mod:`leaderboard.markdown` where they place it.
Everything here is pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from evaluators.schema import Dimension
from leaderboard.markdown import NO_VALUE, is_missing
from leaderboard.tracks import metric

__all__ = [
    "change",
    "duration",
    "fmt",
    "fmt_range",
    "is_num",
    "metric_label",
    "plural",
    "rank_text",
    "select",
    "text",
    "value_label",
]


def is_num(value: Any) -> bool:
    """Whether ``value`` is a finite real number (not NaN, not a string, not a boolean)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(float(value))


def _integral(name: str) -> bool:
    try:
        return metric(name).integral
    except KeyError:  # a metric no registered track declares: shown as a plain number
        return False


def fmt(value: Any, metric_name: str = "", *, digits: int = 3) -> str:
    """Format a value of ``metric_name``: a whole count as an integer, else with ``digits`` decimals.

    Examples
    --------
    >>> fmt(0.8904, "acc_at_1"), fmt(100.0, "n_pairs"), fmt(float("nan"), "mrr"), fmt(-0.0002, "mrr")
    ('0.890', '100', '—', '0.000')
    """
    if not is_num(value):
        return NO_VALUE
    v = float(value)
    if v.is_integer() and _integral(metric_name):
        return str(int(v))
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # "-0.000" is 0.000


def fmt_range(values: pd.Series, metric_name: str, *, digits: int = 3) -> str:
    """``lo–hi`` of the non-missing ``values`` (one value when they agree), or a dash."""
    vals = pd.to_numeric(values, errors="coerce").dropna()
    if vals.empty:
        return NO_VALUE
    lo, hi = vals.min(), vals.max()
    if lo == hi:
        return fmt(lo, metric_name, digits=digits)
    return f"{fmt(lo, metric_name, digits=digits)}–{fmt(hi, metric_name, digits=digits)}"


def rank_text(value: Any) -> str:
    """Format a per-item rank: ``37``, ``1.5`` (a tie), or a dash."""
    if not is_num(value):
        return NO_VALUE
    v = float(value)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def change(value: int) -> str:
    """Format a rank change against Copeland: ``↑2`` (placed 2 higher), ``↓1``, or ``=``.

    Examples
    --------
    >>> change(2), change(-1), change(0)
    ('↑2', '↓1', '=')
    """
    return f"↑{value}" if value > 0 else f"↓{-value}" if value < 0 else "="


def duration(value: Any) -> str:
    """Format seconds as ``12.5 s`` (a dash when missing)."""
    return f"{float(value):.1f} s" if is_num(value) else NO_VALUE


def text(value: Any) -> str:
    """Flatten a manifest or provenance value to one line of plain (unescaped) text."""
    if isinstance(value, Mapping):
        if not value:
            return NO_VALUE
        return "; ".join(f"{k}: {text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(text(v) for v in value) if value else NO_VALUE
    if is_missing(value):
        return NO_VALUE
    return " ".join(str(value).split())


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 model``, ``2 models`` (``many`` for irregular plurals).

    Examples
    --------
    >>> plural(1, "criterion", "criteria"), plural(3, "model")
    ('1 criterion', '3 models')
    """
    return f"{n} {word if n == 1 else (many or word + 's')}"


def metric_label(name: str) -> str:
    """Display label of a registered metric (``Acc@1``); the name itself when none is registered."""
    try:
        return metric(name).label
    except KeyError:
        return name


def value_label(dim: Dimension | None, value: str) -> str:
    """Display label of a dimension value (``L2``), as the track declares it; the value itself otherwise."""
    return dim.label(value) if dim is not None else value


def select(frame: pd.DataFrame, **equal: str) -> pd.DataFrame:
    """Rows of ``frame`` whose columns equal the given values (a column the frame lacks matches nothing)."""
    mask = np.ones(len(frame), dtype=bool)
    for col, val in equal.items():
        if col not in frame.columns:
            return frame.iloc[0:0]
        mask &= (frame[col] == val).to_numpy(dtype=bool)
    return frame.loc[mask]
