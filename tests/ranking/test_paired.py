"""Paired comparison of two models' 0/1 scores: McNemar's exact p and the paired bootstrap interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from leaderboard.ranking.paired import paired_difference


def test_mcnemar_p_is_the_two_sided_binomial_tail_of_the_discordant_items() -> None:
    # 2 items only a gets right, 8 only b: p = 2 * P(X <= 2), X ~ Bin(10, 1/2) = 2 * 56 / 1024.
    a = [1, 1] + [0] * 8 + [1] * 5 + [0] * 5
    b = [0, 0] + [1] * 8 + [1] * 5 + [0] * 5
    r = paired_difference(a, b, n_boot=500)
    assert (r.only_a, r.only_b, r.n) == (2, 8, 20)
    assert math.isclose(r.p, 2 * (1 + 10 + 45) / 1024)
    assert math.isclose(r.diff, 0.3) and r.mean_a == 0.35 and r.mean_b == 0.65


def test_identical_models_have_no_difference_and_p_one() -> None:
    a = [1, 0, 1, 1, 0]
    r = paired_difference(a, a, n_boot=200)
    assert (r.diff, r.low, r.high, r.p, r.verdict) == (0.0, 0.0, 0.0, 1.0, "no difference")


def test_interval_is_seeded_and_says_which_way() -> None:
    rng = np.random.default_rng(1)
    a = (rng.random(400) < 0.3).astype(int)
    b = np.where(rng.random(400) < 0.5, 1, a)  # b keeps a's hits and adds more
    first = paired_difference(a, b, seed=3)
    assert first == paired_difference(a, b, seed=3)
    assert first.low > 0 and first.verdict == "higher"
    assert paired_difference(b, a, seed=3).verdict == "lower"
    assert first.low <= first.diff <= first.high


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="aligned"):
        paired_difference([1, 0], [1])
    with pytest.raises(ValueError, match="0 or 1"):
        paired_difference([0.5], [1])


@pytest.mark.parametrize("n", [1, 2, 7, 331, 3300])
def test_interval_is_the_plain_bootstrap_of_the_mean_difference_to_the_last_bit(n: int) -> None:
    # Independent computation: the textbook percentile bootstrap with int64 draws and float means, as the
    # function computed it before its int32/int8 form — the site's committed intervals must not move.
    rng = np.random.default_rng(n)
    a, b = (rng.random(n) < 0.4).astype(float), (rng.random(n) < 0.6).astype(float)
    r = paired_difference(a, b, n_boot=2000, seed=7)
    if r.only_a + r.only_b == 0:
        assert (r.low, r.high) == (0.0, 0.0)
        return
    draws = np.random.default_rng(7).integers(0, n, size=(2000, n))
    low, high = np.quantile((b - a)[draws].mean(axis=1), [0.025, 0.975])
    assert (r.low, r.high) == (float(low), float(high))
