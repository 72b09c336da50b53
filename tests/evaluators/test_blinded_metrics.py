"""Tests of the T5 metrics (evaluators/tracks/identity_blinded/metrics.py): hand-computed cases, scipy, the
paper's tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evaluators.tracks.identity_blinded import metrics as M


def _acc(k: int, n: int) -> list[int]:
    return [1] * k + [0] * (n - k)


# BACE rows of Tables F1 (C1) and F2 (C2): correct counts out of 68, printed CR, CI, q, effect, BH rank
# among the 24 comparisons of the condition (the rank that reproduces q as p·24/rank; None where the
# step-up minimum of a neighbouring rank sets q, so only q ≤ p·24/rank can be checked).
PAPER_ROWS = [
    ("C1 Gemini", 39, 29, 1.34, (0.970, 1.950), 0.1546, 0.295, 19),
    ("C1 GPT", 41, 27, 1.52, (1.065, 2.222), 0.0361, 0.415, None),
    ("C1 Claude", 49, 29, 1.69, (1.250, 2.400), 0.0017, 0.605, 13),
    ("C1 DeepSeek", 32, 36, 0.89, (0.622, 1.250), 0.6938, -0.118, 21),
    ("C2 Gemini", 52, 21, 2.48, (1.759, 3.846), 4.91e-07, 0.950, None),
    ("C2 GPT", 59, 16, 3.69, (2.500, 6.222), 6.26e-13, 1.384, 2),
    ("C2 Claude", 68, 0, None, None, 8.07e-39, 3.142, 1),
    ("C2 DeepSeek", 48, 33, 1.45, (1.103, 1.966), 0.0226, 0.454, 15),
]


# --------------------------------------------------------------------------------------------------------
# Scores and the collapse ratio


def test_score_accuracy_counts_invalid_as_wrong_and_mae_leaves_it_out():
    assert M.score([True, None, False, 1.0], "accuracy") == 0.5
    assert M.score([2.0, None, -4.0], "mae") == 3.0
    assert M.score([], "accuracy") is None and M.score([None], "mae") is None
    with pytest.raises(ValueError):
        M.score([1], "f1")


def test_collapse_ratio_orientation():
    assert M.collapse_ratio(_acc(3, 4), _acc(1, 4), "accuracy") == 3.0
    assert M.collapse_ratio([1.0, 1.0], [2.0, 4.0], "mae") == 3.0  # MAE_i / MAE_c
    assert M.collapse_ratio([2.0, 4.0], [1.0, 1.0], "mae") == pytest.approx(1 / 3)
    assert M.collapse_ratio(_acc(3, 4), _acc(0, 4), "accuracy") is None
    assert M.collapse_ratio([0.0], [1.0], "mae") is None


@pytest.mark.parametrize("row", PAPER_ROWS, ids=[r[0] for r in PAPER_ROWS])
def test_paper_point_estimates_and_effects(row):
    _, k_c, k_i, cr, _, _, effect, _ = row
    got = M.collapse_ratio(_acc(k_c, 68), _acc(k_i, 68), "accuracy")
    assert (got is None) if cr is None else got == pytest.approx(cr, abs=0.005)
    assert M.cohens_h(k_c / 68, k_i / 68) == pytest.approx(effect, abs=0.0005)


# --------------------------------------------------------------------------------------------------------
# Bootstrap interval


def test_percentile_matches_numpy_and_handles_inf():
    values = sorted(np.random.default_rng(3).normal(size=101).tolist())
    for q in (0.025, 0.5, 0.975):
        assert M._percentile(values, q) == pytest.approx(float(np.percentile(values, 100 * q)))
    assert M._percentile([1.0, 2.0, math.inf, math.inf], 0.9) == math.inf
    assert M._percentile([1.0, 2.0, math.inf], 0.25) == 1.5


@pytest.mark.parametrize("row", [r for r in PAPER_ROWS if r[4]], ids=[r[0] for r in PAPER_ROWS if r[4]])
def test_bootstrap_interval_reproduces_the_paper(row):
    _, k_c, k_i, cr, (low, high), *_ = row
    ci = M.collapse_ratio_interval(_acc(k_c, 68), _acc(k_i, 68), "accuracy", n_boot=10000, seed=0)
    # Monte Carlo and the paper's unknown seed: the printed bounds within 3 % (high tails are noisy).
    assert ci.low == pytest.approx(low, rel=0.03) and ci.high == pytest.approx(high, rel=0.04)
    assert ci.low < cr < ci.high and ci.n_boot == 10000 and ci.n_undefined == 0


def test_bootstrap_is_seeded_and_stratified():
    c, i = _acc(30, 40), _acc(10, 50)
    a = M.collapse_ratio_interval(c, i, "accuracy", n_boot=2000, seed=7)
    assert a == M.collapse_ratio_interval(c, i, "accuracy", n_boot=2000, seed=7)
    assert a != M.collapse_ratio_interval(c, i, "accuracy", n_boot=2000, seed=8)
    # Stratified: each replicate keeps n_c and n_i, so constant groups give a degenerate interval.
    flat = M.collapse_ratio_interval([1] * 10, [1] * 5 + [1] * 5, "accuracy", n_boot=500)
    assert (flat.low, flat.high) == (1.0, 1.0)


def test_bootstrap_zero_denominators():
    assert M.collapse_ratio_interval(_acc(68, 68), _acc(0, 68), "accuracy") is None  # CR undefined
    ci = M.collapse_ratio_interval(_acc(5, 10), _acc(1, 10), "accuracy", n_boot=4000, seed=1)
    # P(no correct item among 10 draws at 0.1) ≈ 0.35: the upper percentile is +inf.
    assert ci.high == math.inf and math.isfinite(ci.low)
    ci = M.collapse_ratio_interval(_acc(1, 10), _acc(1, 10), "accuracy", n_boot=4000, seed=1)
    assert ci.n_undefined > 0  # 0/0 replicates left out


def test_bootstrap_mae():
    c, i = [0.5, 1.0, 1.5, 0.2], [3.0, 2.0, 4.0, None, 5.0]
    ci = M.collapse_ratio_interval(c, i, "mae", n_boot=3000, seed=2)
    cr = M.collapse_ratio(c, i, "mae")
    assert cr == pytest.approx(3.5 / 0.8) and ci.low < cr < ci.high


# --------------------------------------------------------------------------------------------------------
# Between-group test and q values


def test_fisher_matches_scipy_and_invalid_is_wrong():
    p, h, test = M.between_group_test([1, 1, None, 0, 1], [0, 0, 1, None], "accuracy")
    assert test == "fisher_exact"
    assert p == pytest.approx(stats.fisher_exact([[3, 2], [1, 3]]).pvalue)
    assert h == pytest.approx(M.cohens_h(3 / 5, 1 / 4))


@pytest.mark.parametrize("row", PAPER_ROWS, ids=[r[0] for r in PAPER_ROWS])
def test_fisher_with_bh_gives_the_printed_q(row):
    _, k_c, k_i, _, _, q, effect, rank = row
    p, h, _ = M.between_group_test(_acc(k_c, 68), _acc(k_i, 68), "accuracy")
    assert h == pytest.approx(effect, abs=0.0005)
    assert p <= q + 1e-15  # a q value is never below its p value
    if rank is not None:
        assert p * 24 / rank == pytest.approx(q, rel=0.02)  # q printed to 2-4 significant digits
    else:  # set by a neighbour: between p and p·24 (Fisher gives p·24/q ≈ 7.5 and 16.9 here)
        assert 1 < p * 24 / q < 24


def test_chi_square_would_not_give_the_printed_q():
    # Table F2, BACE Claude C2 (68/68 vs 0/68): q = 8.07e-39 is Fisher's p × 24; chi-square is ~1e-31.
    chi = stats.chi2_contingency([[68, 0], [0, 68]], correction=False)[1]
    assert chi * 24 > 1e-35
    fisher = M.between_group_test(_acc(68, 68), _acc(0, 68), "accuracy")[0]
    assert fisher * 24 == pytest.approx(8.07e-39, rel=0.01)


def test_mann_whitney_for_errors():
    c, i = [0.1, 0.2, 0.3, None], [1.0, 2.0, 0.25]
    p, r, test = M.between_group_test(c, i, "mae")
    assert test == "mann_whitney_u"
    assert p == pytest.approx(stats.mannwhitneyu([0.1, 0.2, 0.3], [1.0, 2.0, 0.25]).pvalue)
    # P(e_c < e_i) − P(e_c > e_i) over the 9 cross pairs: 8 smaller, 1 larger (0.3 > 0.25).
    assert r == pytest.approx((8 - 1) / 9)
    assert M.between_group_test([5.0, 6.0], [1.0, 2.0], "mae")[1] == pytest.approx(-1.0)


def test_bh_matches_scipy():
    rng = np.random.default_rng(0)
    for _ in range(20):
        ps = rng.uniform(0, 1, size=rng.integers(1, 30)) ** 3
        expected = stats.false_discovery_control(ps, method="bh").tolist()
        assert M.bh_qvalues(ps.tolist()) == pytest.approx(expected)
    assert M.bh_qvalues([]) == []
    assert M.bh_qvalues([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])


def test_compare_groups_and_family():
    rows = [M.compare_groups(_acc(k_c, 68), _acc(k_i, 68), "accuracy", n_boot=500)
            for _, k_c, k_i, *_ in PAPER_ROWS]  # fmt: skip
    assert rows[0].n_c == rows[0].n_i == 68 and rows[0].s_c == pytest.approx(39 / 68)
    assert rows[6].cr is None and rows[6].ci is None  # Claude C2: "Undefined"
    family = M.compare_family(rows)
    assert [r.q for r in family] == pytest.approx(M.bh_qvalues([r.p for r in rows]))
    assert family[0].as_dict()["q"] == family[0].q and family[6].as_dict()["ci_low"] is None
    mae = M.compare_groups([0.5, 1.0, None], [2.0, 3.0, 4.0], "mae", n_boot=500)
    assert (mae.n_c, mae.n_i, mae.test) == (2, 3, "mann_whitney_u") and mae.cr == pytest.approx(4.0)


# --------------------------------------------------------------------------------------------------------
# C2 → C3 responses and reconstruction


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(59, 136, 0.349, 0.521), (80, 136, 0.501, 0.672), (124, 136, 0.851, 0.954), (49, 136, 0.280, 0.447),
     (108, 242, 0.383, 0.511), (173, 242, 0.654, 0.771)],  # fmt: skip
)
def test_clopper_pearson_matches_table_f3(k, n, low, high):
    got = M.clopper_pearson(k, n)
    assert got == pytest.approx((low, high), abs=0.0006)


def test_binary_response_hand_case():
    c2 = [True, True, False, False, True, None]
    c3 = [False, True, True, False, False, True]
    false = [False, False, True, True, True, False]
    r = M.binary_response(c2, c3, false)
    # toward: items 0 (→False = false label), 2 (→True = false label); away: item 4 (→False ≠ True);
    # unchanged: items 1, 3; item 5 invalid.
    assert r["n"] == 5 and r["toward"] == 0.4 and r["away"] == 0.2 and r["unchanged"] == 0.4
    assert (r["toward_low"], r["toward_high"]) == pytest.approx(M.clopper_pearson(2, 5))
    assert M.binary_response([None], [True], [True]) == {}


def test_numeric_response_hand_case():
    c2 = [-3.0, -2.0, -5.0, 1.0, None]
    c3 = [-5.0, -2.0, -4.0, 1.0, 0.0]
    true = [-3.0, -1.0, -6.0, 0.0, 0.0]
    false = [-7.0, -5.0, -2.0, 0.0, 2.0]  # item 3: false = true, left out
    r = M.numeric_response(c2, c3, true, false)
    # shifts: (-2)/(-4) = 0.5; 0/(-4) = 0; (+1)/(+4) = 0.25
    assert r["n"] == 3 and r["shift_mean"] == pytest.approx(0.25) and r["shift_median"] == 0.25
    assert r["same_direction"] == pytest.approx(2 / 3) and r["unchanged"] == pytest.approx(1 / 3)
    assert r["opposite"] == 0.0 and r["same_direction_changed"] == 1.0


def test_numeric_response_opposite_and_paper_rate():
    r = M.numeric_response([0.0, 0.0], [-1.0, 2.0], [0.0, 0.0], [1.0, 1.0])
    assert r["shift_mean"] == pytest.approx(0.5) and r["opposite"] == 0.5 and r["same_direction"] == 0.5
    # Table D2 yield, Claude: 82.7 % of the 98 paired samples = 81 / 98.
    c2, c3 = [0.0] * 98, [1.0] * 81 + [0.0] * 17
    assert round(100 * M.numeric_response(c2, c3, [0.0] * 98, [5.0] * 98)["same_direction"], 1) == 82.7


def test_reconstruction_accuracy():
    r = M.reconstruction_accuracy(["OCC", "C[C@H](N)C(=O)O", "nonsense", None],
                                  ["CCO", "C[C@@H](N)C(=O)O", "C", "C"])  # fmt: skip
    assert r == {"n": 4, "correct": 1, "accuracy": 0.25}  # stereo counts; invalid is wrong


def test_docstring_examples():
    import doctest

    assert doctest.testmod(M, optionflags=doctest.ELLIPSIS).failed == 0
