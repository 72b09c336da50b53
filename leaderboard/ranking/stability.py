"""Prompt-template sensitivity: per-model summaries over templates and ranking stability across templates.

SPEC §4 T4 asks, per task, for the mean, population SD, min, max and worst case of each model's score
over prompt templates, and for the stability of the model ranking across templates: Kendall τ-b between
the per-template model rankings, and how many template pairs reverse at least one pair of models.

Invariants
----------
- Input is one task and representation in long form: columns ``model``, ``template``, ``score``, at most
  one row per (model, template). NaN scores are missing: excluded from statistics and counted.
- Kendall τ-b is computed here by pairwise concordance counting (no scipy), over the models scored
  under both templates.
- Pure functions of their inputs; deterministic; no I/O.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["kendall_tau_b", "kendall_tau_matrix", "ranking_stability", "template_summary"]

_COLUMNS = ("model", "template", "score")


def _wide(scores: pd.DataFrame) -> pd.DataFrame:
    """Pivot long ``model, template, score`` rows to a models x templates table (sorted labels)."""
    missing = [c for c in _COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lacks columns {missing}")
    if scores.duplicated(["model", "template"]).any():
        raise ValueError("scores has more than one row per (model, template)")
    wide = scores.pivot(index="model", columns="template", values="score").astype(float)
    return wide.sort_index(axis=0).sort_index(axis=1)


def template_summary(scores: pd.DataFrame, higher_is_better: bool = True) -> pd.DataFrame:
    """Summarise each model's score over prompt templates.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long rows with columns ``model``, ``template``, ``score`` for one task and representation.
    higher_is_better : bool, default True
        Orientation of the score; for errors pass ``False`` so the worst case is the maximum.

    Returns
    -------
    pandas.DataFrame
        Indexed by model (sorted), columns ``mean``, ``sd`` (population, ``sqrt(sum((x - mean)^2) / n)``),
        ``min``, ``max``, ``worst`` (``min`` if higher is better, else ``max``), ``spread``
        (best - worst = max - min, non-negative; lower means less template-sensitive), ``n_templates``
        (non-missing scores) and ``n_missing`` (NaN scores). A model with no scores has NaN statistics.

    Examples
    --------
    >>> df = pd.DataFrame({"model": ["a", "a", "a"], "template": ["t1", "t2", "t3"],
    ...                    "score": [0.5, 0.7, float("nan")]})
    >>> s = template_summary(df).loc["a"]
    >>> [round(float(s[c]), 3) for c in ("mean", "sd", "worst", "spread", "n_templates", "n_missing")]
    [0.6, 0.1, 0.5, 0.2, 2.0, 1.0]
    >>> float(template_summary(df, higher_is_better=False).loc["a", "worst"])
    0.7
    """
    missing = [c for c in _COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"scores lacks columns {missing}")
    values = scores.assign(score=scores["score"].astype(float))
    grouped = values.groupby("model", sort=True)["score"]
    out = pd.DataFrame(
        {
            "mean": grouped.mean(),
            "sd": grouped.std(ddof=0),
            "min": grouped.min(),
            "max": grouped.max(),
        }
    )
    out["worst"] = out["min"] if higher_is_better else out["max"]
    out["spread"] = out["max"] - out["min"]
    out["n_templates"] = grouped.count().astype(int)
    out["n_missing"] = grouped.size().astype(int) - out["n_templates"]
    out.index.name = "model"
    return out


def _pair_counts(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int, int]:
    """Return ``(n_c, n_d, n0, n1, n2)`` over pairs of positions where both ``x`` and ``y`` are finite."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    n = len(x)
    iu, ju = np.triu_indices(n, k=1)
    sx = np.sign(x[iu] - x[ju])
    sy = np.sign(y[iu] - y[ju])
    prod = sx * sy
    n_c = int(np.sum(prod > 0))
    n_d = int(np.sum(prod < 0))
    n0 = n * (n - 1) // 2
    n1 = int(np.sum(sx == 0))
    n2 = int(np.sum(sy == 0))
    return n_c, n_d, n0, n1, n2


def kendall_tau_b(x: np.ndarray | pd.Series, y: np.ndarray | pd.Series) -> float:
    """Return Kendall's τ-b between two paired score vectors, ignoring pairs with a NaN.

    With ``n`` complete pairs, ``n0 = n(n - 1)/2`` position pairs, ``n_c`` concordant and ``n_d``
    discordant pairs (strictly ordered the same / opposite way in both), ``n1`` pairs tied in ``x`` and
    ``n2`` pairs tied in ``y`` (``n1 = sum_i t_i(t_i - 1)/2`` over tie groups):

    ``τ_b = (n_c - n_d) / sqrt((n0 - n1)(n0 - n2))``.

    Parameters
    ----------
    x, y : array-like of float
        Paired scores of the same models, same length.

    Returns
    -------
    float
        τ-b in [-1, 1]; NaN if fewer than 2 complete pairs or either side is constant.

    Examples
    --------
    >>> kendall_tau_b([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    0.3333333333333333
    >>> kendall_tau_b([1.0, 2.0], [2.0, 1.0])
    -1.0
    """
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError("x and y must be 1-D and of the same length")
    n_c, n_d, n0, n1, n2 = _pair_counts(xa, ya)
    denom = (n0 - n1) * (n0 - n2)
    if n0 == 0 or denom == 0:
        return math.nan
    return (n_c - n_d) / math.sqrt(denom)


def kendall_tau_matrix(scores: pd.DataFrame) -> pd.DataFrame:
    """Return Kendall τ-b between every pair of templates' model scores.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long rows ``model, template, score``; see :func:`template_summary`.

    Returns
    -------
    pandas.DataFrame
        Symmetric templates x templates table (sorted labels); entry (A, B) is :func:`kendall_tau_b` over
        the models scored under both A and B (NaN if fewer than 2 or one side constant).

    Examples
    --------
    >>> df = pd.DataFrame({"model": list("abcabc"), "template": ["t1"] * 3 + ["t2"] * 3,
    ...                    "score": [1, 2, 3, 3, 2, 1]})
    >>> float(kendall_tau_matrix(df).loc["t1", "t2"])
    -1.0
    """
    wide = _wide(scores)
    templates = list(wide.columns)
    out = pd.DataFrame(np.nan, index=pd.Index(templates, name="template"), columns=templates)
    for i, a in enumerate(templates):
        for b in templates[i:]:
            tau = kendall_tau_b(wide[a].to_numpy(), wide[b].to_numpy())
            out.loc[a, b] = tau
            out.loc[b, a] = tau
    return out


def ranking_stability(scores: pd.DataFrame) -> dict[str, float | int]:
    """Summarise how stable the model ranking is across templates.

    A template pair (A, B) *reverses* a pair of models (i, j) when ``sign(A_i - A_j) * sign(B_i - B_j) < 0``,
    i.e. the two models are strictly ordered one way under A and strictly the other way under B; this is
    exactly ``n_d > 0`` in the τ-b counts.

    Parameters
    ----------
    scores : pandas.DataFrame
        Long rows ``model, template, score``; see :func:`template_summary`.

    Returns
    -------
    dict
        ``mean_tau`` and ``min_tau`` over distinct template pairs with a defined τ-b (NaN if none),
        ``n_template_pairs`` (``k(k - 1)/2`` for ``k`` templates), ``n_defined_pairs`` (pairs with a
        defined τ-b) and ``n_reversing_pairs`` (template pairs reversing at least one pair of models).

    Examples
    --------
    >>> df = pd.DataFrame({"model": list("abcabc"), "template": ["t1"] * 3 + ["t2"] * 3,
    ...                    "score": [1, 2, 3, 1, 3, 2]})
    >>> r = ranking_stability(df)
    >>> round(r["mean_tau"], 4), r["n_template_pairs"], r["n_reversing_pairs"]
    (0.3333, 1, 1)
    """
    wide = _wide(scores)
    templates = list(wide.columns)
    taus: list[float] = []
    n_pairs = 0
    n_reversing = 0
    for i, a in enumerate(templates):
        for b in templates[i + 1 :]:
            n_pairs += 1
            xa, xb = wide[a].to_numpy(), wide[b].to_numpy()
            _, n_d, _, _, _ = _pair_counts(xa, xb)
            n_reversing += int(n_d > 0)
            tau = kendall_tau_b(xa, xb)
            if not math.isnan(tau):
                taus.append(tau)
    return {
        "mean_tau": float(np.mean(taus)) if taus else math.nan,
        "min_tau": float(np.min(taus)) if taus else math.nan,
        "n_template_pairs": n_pairs,
        "n_defined_pairs": len(taus),
        "n_reversing_pairs": n_reversing,
    }
