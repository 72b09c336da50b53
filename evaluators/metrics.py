"""Retrieval metrics of the AMORE track: pure functions of the per-query ranks.

Each metric is registered with its direction (``higher_is_better``), which the host's Copeland
aggregation reads. Names follow scikit-learn: ``*_score`` is higher-is-better.

Reference: AMORE (``shared/papers/amore-smiles-augmentation-robustness.txt``), §3: top-k accuracy of
retrieving the augmented string's embedding given the original's; MRR as in standard retrieval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluators.registry import Registry


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A registered metric: name, direction and the function of the ranks."""

    name: str
    higher_is_better: bool
    fn: Callable[[np.ndarray], float]
    description: str


METRICS: Registry[MetricSpec] = Registry("metric")


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


for _spec in (
    MetricSpec("acc_at_1", True, lambda r: accuracy_at_k_score(r, k=1), "top-1 retrieval accuracy"),
    MetricSpec("acc_at_5", True, lambda r: accuracy_at_k_score(r, k=5), "top-5 retrieval accuracy"),
    MetricSpec("mrr", True, mean_reciprocal_rank_score, "mean reciprocal rank"),
):
    METRICS.register(_spec.name)(_spec)


def higher_is_better() -> dict[str, bool]:
    """Direction of every registered metric, as read by the aggregation."""
    return {name: METRICS.get(name).higher_is_better for name in METRICS.names()}
