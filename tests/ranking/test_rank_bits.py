"""Tests of leaderboard.ranking.rank_bits: the bootstrap's Copeland equals the reference pairwise counts."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard.ranking import rank_bits
from leaderboard.ranking.pairwise import Pairwise
from leaderboard.ranking.rank_bits import copeland_scores, dense_ranks


def _reference(values: np.ndarray, w: np.ndarray) -> list[int]:
    return Pairwise.from_arrays(values, w).majority.sum(axis=1).tolist()


@pytest.fixture(autouse=True)
def _every_size_counts_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small tables take the counting path too (the module hands them to the reference)."""
    monkeypatch.setattr(rank_bits, "MIN_SYSTEMS", 1)


def _table(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """Scores with ties (few distinct rounded values), missing cells and a duplicated system."""
    values = np.round(rng.random((n, m)) * rng.integers(1, 5), int(rng.integers(0, 3)))
    values[rng.random((n, m)) < rng.random() * 0.4] = np.nan
    if n > 1:
        values[-1] = values[0]
    return values


@pytest.mark.parametrize("seed", range(6))
def test_equals_the_reference_on_random_tables(seed: int) -> None:
    """Ties, missing scores, weights of 0 and of several sizes (thirds and sevenths that sum unevenly)."""
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n, m = int(rng.integers(1, 90)), int(rng.integers(1, 40))
        values = _table(rng, n, m)
        w = rng.choice([0.0, 1 / 3, 1 / 7, 0.5, 2.0][: int(rng.integers(2, 6))], size=m)
        assert copeland_scores(values, w).tolist() == _reference(values, w)


def test_equals_the_reference_on_a_board_sized_table(monkeypatch) -> None:
    """400 systems x 120 criteria of five weights, in blocks of a few rows (the path large boards take)."""
    monkeypatch.setattr(rank_bits, "_BLOCK_CELLS", 1 << 16)
    rng = np.random.default_rng(1)
    values = _table(rng, 400, 120)
    w = rng.choice([1 / 29, 1 / 303, 1 / 58, 1 / 15, 1 / 14], size=120)
    assert copeland_scores(values, w).tolist() == _reference(values, w)


def test_many_distinct_weights_use_the_reference(monkeypatch) -> None:
    rng = np.random.default_rng(2)
    values = _table(rng, 70, 30)
    w = rng.random(30)  # 30 distinct weights > MAX_WEIGHT_GROUPS
    calls = []
    real = Pairwise.from_arrays
    counted = classmethod(lambda cls, v, ww: calls.append(1) or real(v, ww))
    monkeypatch.setattr(Pairwise, "from_arrays", counted)
    assert copeland_scores(values, w).tolist() == _reference(values, w)
    assert calls


def test_dense_ranks_order_and_missing() -> None:
    """Equal scores share a rank; a missing score never beats (left -1) and is never beaten (right n)."""
    values = np.array([[0.5, np.nan], [0.2, 1.0], [0.5, 0.0], [np.nan, 1.0]])
    left, right = dense_ranks(values)
    assert left[:, 0].tolist() == [1, 0, 1, -1] and right[:, 0].tolist() == [1, 0, 1, 4]
    assert left[:, 1].tolist() == [-1, 1, 0, 1] and right[:, 1].tolist() == [4, 1, 0, 1]
    beats = left[:, None, :] > right[None, :, :]
    with np.errstate(invalid="ignore"):
        want = values[:, None, :] > values[None, :, :]
    assert (beats == want).all()
