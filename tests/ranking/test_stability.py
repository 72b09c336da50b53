import doctest
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import leaderboard.ranking.stability as stability
from leaderboard.ranking.stability import (
    kendall_tau_b,
    kendall_tau_matrix,
    ranking_stability,
    template_summary,
)


def _long(table: dict[str, dict[str, float]]) -> pd.DataFrame:
    """{template: {model: score}} -> long rows."""
    rows = [(m, t, s) for t, col in table.items() for m, s in col.items()]
    return pd.DataFrame(rows, columns=["model", "template", "score"])


def test_doctests():
    result = doctest.testmod(stability, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("ties", [False, True])
def test_tau_b_matches_scipy(ties):
    rng = np.random.default_rng(13 + ties)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(2, 12))
        if ties:
            x = rng.integers(0, 4, n).astype(float)
            y = rng.integers(0, 4, n).astype(float)
        else:
            x = rng.normal(size=n)
            y = rng.normal(size=n)
        ours = kendall_tau_b(x, y)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            assert math.isnan(ours)
            continue
        ref = stats.kendalltau(x, y, variant="b").statistic
        assert ours == pytest.approx(ref, abs=1e-12)
        checked += 1
    assert checked > 150


def test_tau_b_nan_and_degenerate():
    assert math.isnan(kendall_tau_b([1.0], [2.0]))
    assert math.isnan(kendall_tau_b([1.0, np.nan, 3.0], [1.0, 2.0, np.nan]))  # one complete pair
    assert math.isnan(kendall_tau_b([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))  # constant side
    # NaN pairs dropped: equals tau over the complete pairs
    x = np.array([1.0, 2.0, np.nan, 4.0, 5.0])
    y = np.array([2.0, 1.0, 7.0, 4.0, np.nan])
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau([1, 2, 4], [2, 1, 4]).statistic)
    with pytest.raises(ValueError):
        kendall_tau_b([1.0, 2.0], [1.0])


# Hand-made 3 models x 3 templates (higher is better):
#         t1   t2   t3
#   a      3    3    3
#   b      2    1    2
#   c      1    2    2
# (t1, t2): t1 has b > c, t2 has c > b -> pair (b, c) reversed.
#           n_c = 2 (ab, ac), n_d = 1 (bc), n0 = 3, no ties -> tau = 1/3.
# (t1, t3): b, c tied under t3 -> not a reversal. n_c = 2, n_d = 0, n1 = 0, n2 = 1
#           -> tau = 2 / sqrt(3 * 2) = 0.8165.
# (t2, t3): same as (t1, t3) with t2's b < c; tie under t3 -> not a reversal, tau = 2 / sqrt(6).
# So 3 template pairs, 1 reversing, mean tau = (1/3 + 2 * 2/sqrt(6)) / 3, min tau = 1/3.
HAND = _long(
    {
        "t1": {"a": 3, "b": 2, "c": 1},
        "t2": {"a": 3, "b": 1, "c": 2},
        "t3": {"a": 3, "b": 2, "c": 2},
    }
)


def test_hand_example_matrix():
    m = kendall_tau_matrix(HAND)
    assert list(m.index) == ["t1", "t2", "t3"] and list(m.columns) == ["t1", "t2", "t3"]
    assert m.loc["t1", "t2"] == pytest.approx(1 / 3)
    assert m.loc["t1", "t3"] == pytest.approx(2 / math.sqrt(6))
    assert m.loc["t2", "t3"] == pytest.approx(2 / math.sqrt(6))
    np.testing.assert_allclose(m.to_numpy(), m.to_numpy().T)
    np.testing.assert_allclose(np.diag(m.to_numpy()), 1.0)


def test_hand_example_stability():
    r = ranking_stability(HAND)
    assert r["n_template_pairs"] == 3
    assert r["n_defined_pairs"] == 3
    assert r["n_reversing_pairs"] == 1
    assert r["mean_tau"] == pytest.approx((1 / 3 + 2 * 2 / math.sqrt(6)) / 3)
    assert r["min_tau"] == pytest.approx(1 / 3)


def test_stability_identical_and_single_template():
    same = _long({"t1": {"a": 1, "b": 2, "c": 3}, "t2": {"a": 10, "b": 20, "c": 30}})
    r = ranking_stability(same)
    assert r == {
        "mean_tau": 1.0,
        "min_tau": 1.0,
        "n_template_pairs": 1,
        "n_defined_pairs": 1,
        "n_reversing_pairs": 0,
    }
    one = ranking_stability(_long({"t1": {"a": 1, "b": 2}}))
    assert one["n_template_pairs"] == 0 and one["n_reversing_pairs"] == 0
    assert math.isnan(one["mean_tau"]) and math.isnan(one["min_tau"])


def test_matrix_uses_models_present_in_both():
    # c is missing under t2 and d is NaN under t1: only a, b are shared -> tau from 2 models
    df = _long({"t1": {"a": 1, "b": 2, "c": 3, "d": np.nan}, "t2": {"a": 5, "b": 4, "d": 1}})
    m = kendall_tau_matrix(df)
    assert m.loc["t1", "t2"] == -1.0
    r = ranking_stability(df)
    assert r["n_reversing_pairs"] == 1
    # fewer than 2 shared models -> NaN, not counted as defined
    df2 = _long({"t1": {"a": 1, "b": 2}, "t2": {"b": 3, "c": 4}})
    assert math.isnan(kendall_tau_matrix(df2).loc["t1", "t2"])
    r2 = ranking_stability(df2)
    assert r2["n_defined_pairs"] == 0 and r2["n_template_pairs"] == 1 and math.isnan(r2["mean_tau"])


def test_matrix_matches_scipy_on_random_tables():
    rng = np.random.default_rng(4)
    for _ in range(20):
        wide = pd.DataFrame(
            rng.integers(0, 5, size=(6, 4)).astype(float),
            index=[f"m{i}" for i in range(6)],
            columns=[f"t{j}" for j in range(4)],
        )
        long = wide.stack().rename("score").rename_axis(["model", "template"]).reset_index()
        m = kendall_tau_matrix(long)
        for a in wide.columns:
            for b in wide.columns:
                ref = stats.kendalltau(wide[a], wide[b], variant="b").statistic
                if np.isnan(ref):
                    assert np.isnan(m.loc[a, b])
                else:
                    assert m.loc[a, b] == pytest.approx(ref, abs=1e-12)


def test_summary_matches_numpy():
    rng = np.random.default_rng(7)
    table = {f"t{j}": {f"m{i}": float(rng.normal()) for i in range(4)} for j in range(5)}
    df = _long(table)
    s = template_summary(df)
    assert list(s.index) == ["m0", "m1", "m2", "m3"]
    for model, row in s.iterrows():
        x = df.loc[df["model"] == model, "score"].to_numpy()
        assert row["mean"] == pytest.approx(np.mean(x))
        assert row["sd"] == pytest.approx(np.std(x, ddof=0))
        assert row["min"] == pytest.approx(x.min()) and row["max"] == pytest.approx(x.max())
        assert row["worst"] == pytest.approx(x.min())
        assert row["spread"] == pytest.approx(x.max() - x.min()) and row["spread"] >= 0
        assert row["n_templates"] == 5 and row["n_missing"] == 0


def test_summary_lower_is_better():
    df = _long({"t1": {"a": 0.2, "b": 1.0}, "t2": {"a": 0.5, "b": 1.0}})
    hi = template_summary(df)
    lo = template_summary(df, higher_is_better=False)
    assert hi.loc["a", "worst"] == 0.2 and lo.loc["a", "worst"] == 0.5
    assert hi.loc["a", "spread"] == lo.loc["a", "spread"] == pytest.approx(0.3)
    assert lo.loc["b", "spread"] == 0.0 and lo.loc["b", "sd"] == 0.0


def test_summary_nan_handling():
    df = _long(
        {
            "t1": {"a": 1.0, "b": np.nan},
            "t2": {"a": np.nan, "b": np.nan},
            "t3": {"a": 3.0, "b": np.nan},
        }
    )
    s = template_summary(df)
    assert s.loc["a", "mean"] == 2.0 and s.loc["a", "sd"] == 1.0
    assert s.loc["a", "n_templates"] == 2 and s.loc["a", "n_missing"] == 1
    assert s.loc["b", "n_templates"] == 0 and s.loc["b", "n_missing"] == 3
    assert s.loc[["b"], ["mean", "sd", "min", "max", "worst", "spread"]].isna().all(axis=None)


def test_bad_input():
    with pytest.raises(ValueError):
        template_summary(pd.DataFrame({"model": ["a"], "score": [1.0]}))
    dup = pd.DataFrame({"model": ["a", "a"], "template": ["t", "t"], "score": [1.0, 2.0]})
    with pytest.raises(ValueError):
        kendall_tau_matrix(dup)
