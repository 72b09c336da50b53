"""Tests for the metric registry and AMORE's rank metrics: hand-computed cases and properties shared by every
registered metric."""

from __future__ import annotations

import numpy as np
import pytest

from evaluators.metrics import METRICS, higher_is_better
from evaluators.tracks.amore.metrics import (
    RANK_METRICS,
    accuracy_at_k_score,
    mean_reciprocal_rank_score,
    recall_at_k_curve,
)

RANKS = np.array([1.0, 1.5, 3.0, 7.0])  # one exact hit, one tie with one other item, two misses at k=1


def test_accuracy_at_k_hand_computed():
    assert accuracy_at_k_score(RANKS, k=1) == 0.25
    assert accuracy_at_k_score(RANKS, k=2) == 0.5
    assert accuracy_at_k_score(RANKS, k=3) == 0.75
    assert accuracy_at_k_score(RANKS, k=5) == 0.75
    assert accuracy_at_k_score(RANKS, k=7) == 1.0
    assert accuracy_at_k_score(np.array([2.0, 2.0]), k=1) == 0.0


def test_tied_rank_is_not_a_top1_hit():
    # A true match indistinguishable from one other item (rank 1.5) is not retrieved first ...
    assert accuracy_at_k_score(np.array([1.5]), k=1) == 0.0
    # ... but it is within the top 2.
    assert accuracy_at_k_score(np.array([1.5]), k=2) == 1.0
    assert RANK_METRICS["acc_at_1"](np.array([1.5, 1.0])) == 0.5


def test_mean_reciprocal_rank_hand_computed():
    assert mean_reciprocal_rank_score(np.array([1.0, 2.0, 4.0])) == pytest.approx((1 + 1 / 2 + 1 / 4) / 3)
    assert mean_reciprocal_rank_score(RANKS) == pytest.approx((1 + 1 / 1.5 + 1 / 3 + 1 / 7) / 4)
    assert mean_reciprocal_rank_score(np.array([1.0, 1.0])) == 1.0


def test_recall_at_k_curve_hand_computed():
    curve = recall_at_k_curve(RANKS, np.array([1, 2, 3, 6, 7, 100]))
    np.testing.assert_allclose(curve, [0.25, 0.5, 0.75, 0.75, 1.0, 1.0])
    # With one true match per query, Recall@K equals Acc@K at every K.
    for k in range(1, 10):
        assert recall_at_k_curve(RANKS, np.array([k]))[0] == accuracy_at_k_score(RANKS, k=k)


def test_rank_metrics_are_the_documented_ones():
    assert set(RANK_METRICS) == {"acc_at_1", "acc_at_5", "mrr"} <= set(METRICS.names())
    ranks = np.array([1.0, 2.0, 6.0, 1.5])
    assert RANK_METRICS["acc_at_1"](ranks) == accuracy_at_k_score(ranks, k=1)
    assert RANK_METRICS["acc_at_5"](ranks) == accuracy_at_k_score(ranks, k=5)
    assert RANK_METRICS["mrr"](ranks) == mean_reciprocal_rank_score(ranks)


@pytest.mark.parametrize("name", METRICS.names())
def test_every_registered_metric_declares_what_the_host_relies_on(name):
    """Registry-wide: direction, bounds, label and description (validation, ranking and pages read them)."""
    spec = METRICS.get(name)
    assert spec.name == name
    assert isinstance(spec.higher_is_better, bool)
    assert higher_is_better()[name] is spec.higher_is_better
    assert spec.label and spec.description.endswith(".")
    assert spec.low < spec.high
    if name.startswith("n_"):  # counts are whole non-negative numbers
        assert spec.integral and spec.low == 0.0
    if spec.integral:
        assert spec.low == int(spec.low)


@pytest.mark.parametrize("name", sorted(RANK_METRICS))
def test_rank_metrics_are_shares_and_higher_is_better(name):
    spec = METRICS.get(name)
    assert spec.higher_is_better is True and (spec.low, spec.high) == (0.0, 1.0)


@pytest.mark.parametrize("name", sorted(RANK_METRICS))
def test_registered_metric_shared_properties(name):
    fn = RANK_METRICS[name]
    # Perfect retrieval scores 1, and scores are shares in [0, 1].
    assert fn(np.ones(5)) == 1.0
    rng = np.random.default_rng(0)
    ranks = 1.0 + rng.integers(0, 20, size=50) / 2.0
    value = fn(ranks)
    assert isinstance(value, float)
    assert 0.0 <= value <= 1.0
    # Higher is better: pushing any true match further down never raises the score,
    # and pushing every match far down lowers it below perfect.
    for i in range(len(ranks)):
        worse = ranks.copy()
        worse[i] += 10.0
        assert fn(worse) <= value
    assert fn(np.full(5, 50.0)) < 1.0
    # The score does not depend on the order of the queries.
    assert fn(ranks[::-1]) == pytest.approx(value)


@pytest.mark.parametrize("name", sorted(RANK_METRICS))
@pytest.mark.parametrize(
    "bad",
    [
        np.array([]),
        np.array([0.5, 1.0]),
        np.array([0.0]),
        np.array([-1.0]),
        np.array([np.nan]),
        np.ones((2, 2)),
    ],
    ids=["empty", "half", "zero", "negative", "nan", "2d"],
)
def test_invalid_ranks_raise(name, bad):
    with pytest.raises(ValueError, match="ranks"):
        RANK_METRICS[name](bad)


@pytest.mark.parametrize(
    "call",
    [
        lambda r: accuracy_at_k_score(r, k=1),
        mean_reciprocal_rank_score,
        lambda r: recall_at_k_curve(r, np.array([1, 5])),
    ],
    ids=["accuracy", "mrr", "recall_curve"],
)
def test_invalid_ranks_raise_in_every_function(call):
    with pytest.raises(ValueError, match="non-empty"):
        call(np.array([]))
    with pytest.raises(ValueError, match=">= 1"):
        call(np.array([1.0, 0.0]))
