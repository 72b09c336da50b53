"""The retrieval metrics of the AMORE track (T1) as pure functions of the ranks, and their declarations.

Reference: AMORE (``shared/papers/amore-smiles-augmentation-robustness.txt``), §3: top-k accuracy of
retrieving the augmented string's embedding given the original's; MRR as in standard retrieval. Function
names follow scikit-learn: ``*_score`` is higher-is-better.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evaluators.metrics import register_metric
from evaluators.schema import MetricSpec

__all__ = ["RANK_METRICS", "accuracy_at_k_score", "mean_reciprocal_rank_score", "recall_at_k_curve"]


def _check(ranks: np.ndarray) -> np.ndarray:
    ranks = np.asarray(ranks, dtype=np.float64)
    if ranks.ndim != 1 or ranks.size == 0:
        raise ValueError(f"ranks must be a non-empty 1-d array, got shape {ranks.shape}")
    if not np.all(ranks >= 1.0):
        raise ValueError("ranks must be >= 1")
    return ranks


def accuracy_at_k_score(ranks: np.ndarray, *, k: int) -> float:
    """Share of queries whose true match is ranked within the top ``k``.

    Notes
    -----
    ``Acc@k = (1/n) · Σ_i [rank_i ≤ k]``. A tied rank of 1.5 does not count for ``k = 1``: a true match
    indistinguishable from another item is not retrieved first.

    Examples
    --------
    >>> accuracy_at_k_score(np.array([1.0, 1.5, 3.0, 7.0]), k=1)
    0.25
    >>> accuracy_at_k_score(np.array([1.0, 1.5, 3.0, 7.0]), k=5)
    0.75
    """
    return float(np.mean(_check(ranks) <= k))


def mean_reciprocal_rank_score(ranks: np.ndarray) -> float:
    """Mean reciprocal rank, ``MRR = (1/n) · Σ_i 1/rank_i``.

    Examples
    --------
    >>> mean_reciprocal_rank_score(np.array([1.0, 2.0, 4.0]))
    0.5833333333333334
    """
    return float(np.mean(1.0 / _check(ranks)))


def recall_at_k_curve(ranks: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Recall@K for every K in ``ks`` (with one true match per query, Recall@K = Acc@K)."""
    ranks = _check(ranks)
    return (ranks[None, :] <= np.asarray(ks)[:, None]).mean(axis=1)


#: The rank metrics AMORE computes for every (augmentation, layer, distance, direction, subset).
RANK_METRICS: dict[str, Callable[[np.ndarray], float]] = {
    "acc_at_1": lambda r: accuracy_at_k_score(r, k=1),
    "acc_at_5": lambda r: accuracy_at_k_score(r, k=5),
    "mrr": mean_reciprocal_rank_score,
}

for _spec in (
    MetricSpec("acc_at_1", True, "Acc@1", "Top-1 retrieval accuracy.", 0.0, 1.0),
    MetricSpec("acc_at_5", True, "Acc@5", "Top-5 retrieval accuracy.", 0.0, 1.0),
    MetricSpec("mrr", True, "MRR", "Mean reciprocal rank of the true partner.", 0.0, 1.0),
    MetricSpec("chance_acc_at_1", True, "chance Acc@1", "Acc@1 of a random ranking, 1/N.", 0.0, 1.0),
    MetricSpec("n_pairs", True, "n pairs", "Pairs scored (identity check passed).", 0.0, integral=True),
    MetricSpec(
        "n_non_trivial",
        True,
        "n non-trivial",
        "Pairs whose rewrite differs from the original.",
        0.0,
        integral=True,
    ),  # fmt: skip
    MetricSpec(
        "n_truncated",
        False,
        "n truncated",
        "Pairs where the model saw a truncated string.",
        0.0,
        integral=True,
    ),  # fmt: skip
    MetricSpec(
        "n_ties", False, "n ties", "Queries whose true partner tied with another item.", 0.0, integral=True
    ),  # fmt: skip
):
    register_metric(_spec)
