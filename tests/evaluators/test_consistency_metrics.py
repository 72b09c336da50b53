"""T3 metrics against independent computations (paper appendix A.1, SPEC §4 T3).

The chance baselines are defined as expectations over two independent draws from the pooled predictions;
here they are computed by brute force over every ordered pair of draws (with replacement), which is that
expectation exactly, and compared with the closed forms (Σ p(y)², 2·Var(ŷ)) the module uses.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.tracks.consistency import metrics as cm


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from(["A", "B", "C", None]), min_size=n, max_size=n),
    st.lists(st.sampled_from(["A", "B", "C", None]), min_size=n, max_size=n),
)))  # fmt: skip
@settings(max_examples=200, deadline=None)
def test_chance_consistency_is_the_agreement_of_two_independent_draws(sides) -> None:
    a, b = sides
    pooled = [*a, *b]
    # Every ordered pair of draws with replacement; a missing answer agrees with nothing, itself included.
    brute = sum(x is not None and x == y for x, y in itertools.product(pooled, repeat=2)) / len(pooled) ** 2
    assert cm.chance_consistency(a, b) == pytest.approx(brute, abs=1e-12)
    assert cm.adjusted_consistency(a, b) == pytest.approx(cm.consistency(a, b) - brute, abs=1e-12)


def test_binary_chance_is_p0_squared_plus_p1_squared() -> None:
    # Paper eq. 8 on a worked example: 6 yes and 2 no among 8 predictions.
    a, b = [True, True, True, False], [True, True, True, False]
    assert cm.chance_consistency(a, b) == pytest.approx((6 / 8) ** 2 + (2 / 8) ** 2)
    assert cm.consistency(a, b) == 1.0
    assert cm.adjusted_consistency(a, b) == pytest.approx(1 - 0.625)


def test_a_constant_model_is_perfectly_consistent_and_adjusted_to_zero() -> None:
    a = b = ["yes"] * 50
    assert cm.consistency(a, b) == 1.0 and cm.chance_consistency(a, b) == 1.0
    assert cm.adjusted_consistency(a, b) == 0.0


def test_missing_answers_never_agree_and_never_count_as_chance() -> None:
    a, b = [None, None, "X"], [None, None, "X"]
    assert cm.consistency(a, b) == pytest.approx(1 / 3)
    assert cm.chance_consistency(a, b) == pytest.approx((2 / 6) ** 2)
    assert cm.accuracy([None, "X"], [None, "X"]) == 0.5  # a missing truth is never matched either


def test_false_consistency_counts_only_items_both_sides_get_wrong() -> None:
    truth = ["t1", "t2", "t3", "t4", "t5"]
    a = ["t1", "w", "w", "x", None]
    b = ["t1", "w", "t3", "y", None]
    # Both wrong: items 2 (agree), 4 (disagree), 5 (both missing: never agree). Items 1 and 3 are excluded.
    assert cm.false_consistency(a, b, truth) == pytest.approx(1 / 3)
    assert math.isnan(cm.false_consistency(["t1"], ["t1"], ["t1"]))


@given(
    st.lists(st.one_of(st.none(), st.floats(-20, 20, allow_nan=False)), min_size=1, max_size=10),
    st.lists(st.one_of(st.none(), st.floats(-20, 20, allow_nan=False)), min_size=1, max_size=10),
)
@settings(max_examples=200, deadline=None)
def test_numeric_chance_is_the_expected_squared_gap_of_two_draws(a, b) -> None:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    pooled = [v for v in (*a, *b) if v is not None]
    chance = cm.numeric_chance_mse(a, b)
    if len(pooled) < 2:
        assert math.isnan(chance)
        return
    brute = sum((x - y) ** 2 for x, y in itertools.product(pooled, repeat=2)) / len(pooled) ** 2
    assert chance == pytest.approx(brute, rel=1e-9, abs=1e-9)
    both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if both:
        mse = sum((x - y) ** 2 for x, y in both) / len(both)
        assert cm.numeric_consistency_mse(a, b) == pytest.approx(mse, rel=1e-9, abs=1e-12)
        assert cm.numeric_adjusted_consistency(a, b) == pytest.approx(brute - mse, rel=1e-9, abs=1e-9)


def test_numeric_forms_on_independent_random_predictions_are_near_zero_adjusted() -> None:
    rng = random.Random(7)
    a = [rng.gauss(0, 2) for _ in range(4000)]
    b = [rng.gauss(0, 2) for _ in range(4000)]
    # Independent predictions from one distribution: the MSE between them is the chance MSE (2σ² = 8).
    assert cm.numeric_chance_mse(a, b) == pytest.approx(8.0, rel=0.05)
    assert abs(cm.numeric_adjusted_consistency(a, b)) < 0.5
    assert cm.numeric_error_mse([1.0, None, 3.0], [0.0, 5.0, 1.0]) == pytest.approx((1 + 4) / 2)


def test_raw_agreement_compares_strings_not_molecules() -> None:
    assert cm.raw_agreement(["CCO", " OCC ", ""], ["CCO", "OCC", ""]) == pytest.approx(2 / 3)
    assert cm.consistency(["CCO"], ["OCC"]) == 0.0  # raw strings differ: only normalisation makes them equal


def test_sides_of_different_length_are_refused() -> None:
    with pytest.raises(ValueError, match="same items: 2 answers vs 1"):
        cm.consistency(["A", "B"], ["A"])
    assert math.isnan(cm.consistency([], [])) and np.isnan(cm.missing_share([]))


# ------------------------------------------------------------------------ issue 28: the headline forms

W = 88.0  # plausible width of ΔG_hyd


def test_numeric_agreement_scores_the_degenerate_answerers_as_documented() -> None:
    rng = random.Random(0)
    truth = [rng.uniform(-25, 3) for _ in range(400)]
    assert cm.numeric_agreement(truth, truth, W) == 1.0  # oracle
    assert cm.numeric_agreement([0.0] * 400, [0.0] * 400, W) == 0.0  # constant
    assert cm.numeric_agreement([None] * 400, [None] * 400, W) == -1.0  # abstaining / absurd
    a = [rng.uniform(-25, 3) for _ in truth]
    b = [rng.uniform(-25, 3) for _ in truth]
    assert abs(cm.numeric_agreement(a, b, W)) < 0.15  # independent random answers


def test_numeric_agreement_is_scale_free_and_bounded() -> None:
    """``2·Var − MSE`` grows with the answers' scale (4·10²⁸ on the board); κ_num does not."""
    a, b = [1.0, 2.0, 3.0, 4.0], [1.5, 2.0, 2.5, 4.5]
    k = cm.numeric_agreement(a, b, W)
    assert cm.numeric_agreement([1e6 * x for x in a], [1e6 * x for x in b], 1e6 * W) == pytest.approx(k)
    assert cm.numeric_adjusted_consistency([1e6 * x for x in a], [1e6 * x for x in b]) > 1e11
    wild = [-50.0, 30.0, -50.0, 30.0]
    assert -1.0 <= cm.numeric_agreement(wild, wild[::-1], W) <= 1.0


def test_numeric_agreement_charges_an_invalid_side_the_squared_width() -> None:
    a, b = [1.0, 2.0, 3.0, None], [1.0, 2.0, 3.0, 2.0]
    var = float(np.var([1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 2.0]))
    expected = 1 - (W**2 / 4) / (2 * var)
    assert cm.numeric_agreement(a, b, W) == pytest.approx(max(expected, -1.0))
    assert cm.numeric_agreement(a, b, W) < cm.numeric_agreement([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], W)
    a, b = [1.0, 2.0, 3.0, 2.5], [1.0, 2.5, 3.0, None]
    assert np.mean(cm.numeric_agreement_terms(a, b, 4.0)) == pytest.approx(cm.numeric_agreement(a, b, 4.0))


def test_kappa_rewards_the_oracle_on_imbalanced_labels_where_the_paper_form_does_not() -> None:
    """Measured on smiles-iupac-pairs: C − P_e ranked a 70 %-right answerer above the oracle."""
    truth = [True] * 18 + [False] * 2
    # Noisy: both sides wrong on items 0-5 in opposite ways (answers balance the labels, lowering chance).
    noisy_a = [not t if i < 6 else t for i, t in enumerate(truth)]
    noisy_b = list(noisy_a)
    noisy_b[0] = truth[0]
    assert cm.adjusted_consistency(noisy_a, noisy_b) > cm.adjusted_consistency(truth, truth)
    assert cm.kappa_consistency(truth, truth) == 1.0 > cm.kappa_consistency(noisy_a, noisy_b)


def test_kappa_scores_the_degenerate_answerers_as_documented() -> None:
    rng = random.Random(1)
    assert cm.kappa_consistency(["yes"] * 50, ["yes"] * 50) == 0.0  # constant
    assert cm.kappa_consistency([None] * 50, [None] * 50) == -1.0  # abstaining / unparseable
    a = [rng.random() < 0.5 for _ in range(400)]
    b = [rng.random() < 0.5 for _ in range(400)]
    assert abs(cm.kappa_consistency(a, b)) < 0.15  # random


def test_kappa_chance_is_over_valid_answers_so_failing_never_pays() -> None:
    """A constant that fails some items (a reaction answer repeating an input) must not beat 0.

    With the paper's chance (invalid answers in the denominator) this scored q / (1 + q) ≈ 0.49.
    """
    a = ["CCO"] * 23 + [None]
    assert cm.kappa_consistency(a, list(a)) < 0.0
    assert cm.valid_chance(a, a) == 1.0 and cm.chance_consistency(a, a) < 1.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["A", "B", "C", None]), st.sampled_from(["A", "B", None])),
                min_size=1, max_size=30))  # fmt: skip
def test_kappa_is_bounded_and_its_terms_average_to_it(pairs) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    k = cm.kappa_consistency(a, b)
    assert -1.0 <= k <= 1.0
    assert np.mean(cm.kappa_terms(a, b)) == pytest.approx(k)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(*[st.sampled_from([None, "a", "b", "c", 1, 2])] * 2), min_size=1, max_size=12),
    st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_kappa_of_resamples_is_kappa_of_each_resample(items, seed) -> None:
    """The vectorised bootstrap κ against the plain one, resample by resample (brute force)."""
    a, b = [x for x, _ in items], [y for _, y in items]
    picks = np.random.default_rng(seed).integers(0, len(a), (25, len(a)))
    got = cm.kappa_resampled(a, b, picks)
    want = [cm.kappa_consistency([a[i] for i in p], [b[i] for i in p]) for p in picks]
    assert np.allclose(got, want, rtol=0, atol=1e-12)


def test_kappa_of_resamples_covers_the_degenerate_answerers() -> None:
    whole = np.arange(4)[None, :]
    assert cm.kappa_resampled(["yes"] * 4, ["yes"] * 4, whole).tolist() == [0.0]  # constant
    assert cm.kappa_resampled([None] * 4, [None] * 4, whole).tolist() == [-1.0]  # abstaining
    assert cm.kappa_resampled(["C", None, "C", None], ["C", None, "C", None], whole).tolist() == [-0.5]
    with pytest.raises(ValueError, match="same items"):
        cm.kappa_resampled(["a"], [], whole)
