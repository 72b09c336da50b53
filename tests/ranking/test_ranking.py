"""Tests for ``leaderboard.ranking.rules``: every rule, the GLUE cross-check, agreement with ``pref_voting``.

``pref_voting`` is the independent implementation. It imports ``numba`` (a JIT, used only for speed) and
``ortools`` (LP solvers for methods not used here) when its modules load; ``numba`` pins ``numpy < 2.4``,
so the lock installs ``pref_voting`` without its dependencies and this module puts inert stand-ins for
those two in ``sys.modules`` when they are not installed (with them installed, the real ones are used).

How a table maps to a ``pref_voting`` election: each criterion is a voter, the systems are candidates, and
the voter ranks the systems by score (higher first). A criterion's weight is the voter's count (integer
weights only). Tables without NaN or equal scores become a ``Profile`` of linear orders; with equal scores
(a tie in the voter's ranking) and NaN (the system is left unranked) they become a ``ProfileWithTies``,
whose default margins compare only candidates that a voter ranks — exactly our "missing is ignored
pairwise, equal counts for neither".
"""

from __future__ import annotations

import importlib.util
import sys
import types

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking.rules import (
    HIGHER_IS_BETTER,
    RULE_LABELS,
    RULES,
    borda,
    compare_rules,
    condorcet_winner,
    copeland,
    copeland_half_ties,
    copeland_score_array,
    mean,
    mean_rank,
    minimax,
)
from tests._glue import load_glue


def _install_stand_ins() -> None:
    """Put inert ``numba`` / ``ortools`` modules in place for ``pref_voting``, only when they are absent."""
    if importlib.util.find_spec("numba") is None:
        numba = types.ModuleType("numba")

        def jit(*args, **kwargs):
            if args and callable(args[0]) and not kwargs:
                return args[0]
            return lambda fn: fn

        numba.jit = numba.njit = jit
        numba.float32 = float
        sys.modules["numba"] = numba
    if importlib.util.find_spec("ortools") is None:
        ortools = types.ModuleType("ortools")
        solver = types.ModuleType("ortools.linear_solver")
        solver.pywraplp = types.ModuleType("ortools.linear_solver.pywraplp")
        ortools.linear_solver = solver
        sys.modules.update(
            {
                "ortools": ortools,
                "ortools.linear_solver": solver,
                "ortools.linear_solver.pywraplp": solver.pywraplp,
            }
        )


_install_stand_ins()
from pref_voting.margin_based_methods import minimax as pv_minimax  # noqa: E402
from pref_voting.margin_based_methods import minimax_scores  # noqa: E402
from pref_voting.profiles import Profile  # noqa: E402
from pref_voting.profiles_with_ties import ProfileWithTies  # noqa: E402


@pytest.fixture(scope="module")
def glue() -> tuple[pd.DataFrame, pd.Series]:
    return load_glue()


# --------------------------------------------------------------------------- GLUE (SPEC section 5)


def test_glue_copeland_wins_minus_losses(glue: tuple[pd.DataFrame, pd.Series]) -> None:
    table, weights = glue
    ranking = RULES["copeland"](table, weights)
    score = ranking["score"]
    assert {s: int(score[s]) for s in ("ERNIE", "DeBERTa + CLEVER", "StructBERT + CLEVER")} == {
        "ERNIE": 29,
        "DeBERTa + CLEVER": 25,
        "StructBERT + CLEVER": 24,
    }
    shared = ["DeBERTa / TuringNLRv4", "T5", "GLUE Human Baselines"]
    assert score[shared].eq(22).all()
    assert ranking.loc[shared, "rank"].eq(4).all()
    assert ranking.index[-1] == "BERT on STILTs"
    assert score["BERT on STILTs"] == -29
    assert ranking.loc["BERT on STILTs", "rank"] == 30


def test_glue_copeland_half_ties_variant(glue: tuple[pd.DataFrame, pd.Series]) -> None:
    table, weights = glue
    half = copeland_half_ties(table, weights)
    # 30 systems: wins + ties/2 = 14.5 + (wins - losses)/2.
    expected = {
        "ERNIE": 29.0,
        "DeBERTa + CLEVER": 27.0,
        "StructBERT + CLEVER": 26.5,
        "DeBERTa / TuringNLRv4": 25.5,
        "T5": 25.5,
        "GLUE Human Baselines": 25.5,
        "BERT on STILTs": 0.0,
    }
    assert {s: float(half.loc[s, "score"]) for s in expected} == expected
    base = copeland(table, weights)
    pd.testing.assert_series_equal(half["rank"], base["rank"].reindex(half.index))
    np.testing.assert_allclose(half["score"], 14.5 + base["score"].reindex(half.index) / 2)


def test_glue_compare_rules(glue: tuple[pd.DataFrame, pd.Series]) -> None:
    table, weights = glue
    out = compare_rules(table, weights)
    assert len(out) == 30
    assert out.index[0] == "ERNIE"
    assert out["condorcet_winner"].sum() == 1 and bool(out.loc["ERNIE", "condorcet_winner"])
    # Minimax is Condorcet-consistent: the Condorcet winner is its unique winner.
    assert out.index[out["rank_minimax"] == 1].tolist() == ["ERNIE"]
    for name in RULES:
        if name != "copeland":
            assert (out[f"change_{name}"] == out["rank_copeland"] - out[f"rank_{name}"]).all()
    assert (out["change_copeland_half_ties"] == 0).all()


# --------------------------------------------------------------------------- hand-computed table

# Weights c1 = 2, c2 = c3 = 1. c2: a and b tie, c missing; c3: a missing.
HAND = pd.DataFrame(
    {"c1": [3.0, 2.0, 1.0], "c2": [1.0, 1.0, np.nan], "c3": [np.nan, 0.0, 5.0]}, index=["a", "b", "c"]
)
HAND_W = pd.Series({"c1": 2.0, "c2": 1.0, "c3": 1.0})


def test_hand_copeland_and_condorcet() -> None:
    # a beats b (2 vs 0) and c (2 vs 0); b beats c (2 vs 1).
    assert copeland(HAND, HAND_W)["score"].to_dict() == {"a": 2, "b": 0, "c": -2}
    assert copeland_half_ties(HAND, HAND_W)["score"].to_dict() == {"a": 2.0, "b": 1.0, "c": 0.0}
    assert condorcet_winner(HAND, HAND_W) == "a"


def test_hand_borda_with_missing_ties_and_weights() -> None:
    # c1 (w 2): a beats b, c -> 4; b beats c -> 2. c2 (w 1): a = b -> 0.5 each, c unobserved.
    # c3 (w 1): c beats b -> 1, a unobserved.
    out = borda(HAND, HAND_W)
    assert out["score"].to_dict() == pytest.approx({"a": 4.5, "b": 2.5, "c": 1.0})
    assert out["rank"].to_dict() == {"a": 1, "b": 2, "c": 3}


def test_hand_minimax_margins() -> None:
    # Worst defeat margins: a none (beats b by 2, c by 2) -> +2; b loses to a by 2 -> -2;
    # c loses to a by 2 and to b by 1 -> -2.
    out = minimax(HAND, HAND_W)
    assert out["score"].to_dict() == {"a": 2.0, "b": -2.0, "c": -2.0}
    assert out["rank"].to_dict() == {"a": 1, "b": 2, "c": 2}


def test_hand_mean_rank_over_observed_criteria() -> None:
    # Ranks: c1 a1 b2 c3; c2 a1.5 b1.5; c3 c1 b2. a (2*1 + 1.5)/3, b (2*2 + 1.5 + 2)/4, c (2*3 + 1)/3.
    out = mean_rank(HAND, HAND_W)
    assert out["score"].to_dict() == pytest.approx({"a": 3.5 / 3, "b": 7.5 / 4, "c": 7 / 3})
    assert out["rank"].to_dict() == {"a": 1, "b": 2, "c": 3}
    assert not HIGHER_IS_BETTER["mean_rank"]


def test_hand_mean_renormalises_weights_and_ties_share_rank() -> None:
    # a (2*3 + 1)/3 = 7/3, b (2*2 + 1 + 0)/4 = 5/4, c (2*1 + 5)/3 = 7/3: a and c tie at the top.
    out = mean(HAND, HAND_W)
    assert out["score"].to_dict() == pytest.approx({"a": 7 / 3, "b": 1.25, "c": 7 / 3})
    assert out["rank"].to_dict() == {"a": 1, "c": 1, "b": 3}
    assert list(out.index) == ["a", "c", "b"]


def test_hand_compare_rules_changes() -> None:
    out = compare_rules(HAND, HAND_W)
    assert list(out.index) == ["a", "b", "c"]
    assert out["rank_copeland"].tolist() == [1, 2, 3]
    assert out["rank_mean"].tolist() == [1, 3, 1]
    assert out["change_mean"].tolist() == [0, -1, 2]  # c moves up two places under the mean
    assert out["condorcet_winner"].tolist() == [True, False, False]


def test_borda_fractional_weights_that_tie_exactly_rank_as_a_tie() -> None:
    table = pd.DataFrame(
        {"x1": [1.0, 0.0], "x2": [1.0, 0.0], "x3": [1.0, 0.0], "y": [0.0, 1.0]}, index=["a", "b"]
    )
    weights = pd.Series({"x1": 1 / 3, "x2": 1 / 3, "x3": 1 / 3, "y": 1.0})
    assert borda(table, weights)["rank"].tolist() == [1, 1]
    assert minimax(table, weights)["rank"].tolist() == [1, 1]


def test_system_without_observed_criteria_ranks_last_under_averaging_rules() -> None:
    table = pd.DataFrame({"c1": [0.2, 0.1, np.nan], "c2": [0.3, 0.4, np.nan]}, index=["a", "b", "z"])
    for rule in (mean, mean_rank):
        out = rule(table)
        assert np.isnan(out.loc["z", "score"])
        assert out.loc["z", "rank"] == 3


# --------------------------------------------------------------------------- registry-wide properties


def _random_table(rng: np.random.Generator, *, ties: bool, missing: bool) -> pd.DataFrame:
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 8))
    values = rng.integers(0, 4, size=(n, m)).astype(float) if ties else rng.normal(size=(n, m))
    if missing:
        values[rng.random(values.shape) < 0.2] = np.nan
    return pd.DataFrame(
        values, index=[f"s{i}" for i in rng.permutation(n)], columns=[f"c{j}" for j in range(m)]
    )


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_output_shape(name: str) -> None:
    rng = np.random.default_rng(3)
    table = _random_table(rng, ties=True, missing=True)
    out = RULES[name](table, None)
    assert out.index.name == "system"
    assert sorted(out.index) == sorted(table.index)
    assert {"score", "rank"} <= set(out.columns)
    assert pd.api.types.is_integer_dtype(out["rank"])
    assert out["rank"].is_monotonic_increasing and out["rank"].iloc[0] == 1
    assert name in RULE_LABELS and name in HIGHER_IS_BETTER
    # Equal scores share the minimum rank.
    for _, grp in out.groupby("rank"):
        assert grp["score"].round(9).nunique(dropna=False) == 1


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("seed", range(6))
def test_integer_weight_equals_repeated_criterion(name: str, seed: int) -> None:
    """How weights extend every rule: weight k counts as k copies of the criterion (weight 0 as none)."""
    rng = np.random.default_rng(100 + seed)
    table = _random_table(rng, ties=True, missing=True)
    k = rng.integers(0, 4, size=table.shape[1])
    weights = pd.Series(k.astype(float), index=table.columns)
    copies = pd.concat(
        [
            table[[c]].rename(columns={c: f"{c}#{i}"})
            for c, kk in zip(table.columns, k, strict=True)
            for i in range(kk)
        ],
        axis=1,
    )
    if copies.shape[1] == 0:
        copies = pd.DataFrame(index=table.index)
    got = RULES[name](table, weights)
    want = RULES[name](copies, None)
    pd.testing.assert_series_equal(got["rank"], want["rank"].reindex(got.index))
    np.testing.assert_allclose(got["score"], want["score"].reindex(got.index))


@pytest.mark.parametrize("name", sorted(RULES))
def test_invalid_inputs_raise(name: str) -> None:
    rule = RULES[name]
    table = pd.DataFrame({"c1": [1.0, 2.0], "c2": [2.0, 1.0]}, index=["a", "a"])
    with pytest.raises(ValueError, match="system names must be unique"):
        rule(table, None)
    table.index = ["a", "b"]
    with pytest.raises(ValueError, match="no weight for criteria"):
        rule(table, pd.Series({"c1": 1.0}))
    with pytest.raises(ValueError, match=">= 0"):
        rule(table, pd.Series({"c1": 1.0, "c2": -1.0}))


@pytest.mark.parametrize("name", sorted(RULES))
def test_single_system_ranks_first(name: str) -> None:
    out = RULES[name](pd.DataFrame({"c": [0.5]}, index=["only"]), None)
    assert out["rank"].tolist() == [1]


def test_copeland_score_array_matches_copeland() -> None:
    rng = np.random.default_rng(5)
    table = _random_table(rng, ties=True, missing=True)
    w = rng.integers(0, 3, size=table.shape[1]).astype(float)
    scores = copeland_score_array(table.to_numpy(), w)
    want = copeland(table, pd.Series(w, index=table.columns))["score"].reindex(table.index)
    assert scores.tolist() == want.tolist()


# --------------------------------------------------------------------------- pref_voting cross-check


def _linear_profile(table: pd.DataFrame, counts: np.ndarray) -> Profile:
    """Each criterion is a voter ranking the systems (candidates 0..n-1, table row order) by score."""
    rankings = [list(np.argsort(-table[c].to_numpy(), kind="stable")) for c in table.columns]
    return Profile(rankings, rcounts=[int(x) for x in counts])


def _profile_with_ties(table: pd.DataFrame, counts: np.ndarray) -> ProfileWithTies:
    """Equal scores share a position; a NaN leaves the system unranked by that voter."""
    rankings = []
    for c in table.columns:
        col = table[c]
        dense = col.rank(method="dense", ascending=False)
        rankings.append({i: int(r) for i, r in enumerate(dense) if not np.isnan(r)})
    return ProfileWithTies(rankings, rcounts=[int(x) for x in counts], candidates=list(range(len(table))))


def _ours(rule, table: pd.DataFrame, counts: np.ndarray) -> np.ndarray:
    """A rule's scores in table row order (candidate i = row i)."""
    weights = pd.Series(counts.astype(float), index=table.columns)
    return rule(table, weights)["score"].reindex(table.index).to_numpy(dtype=float)


def _pv(scores: dict, n: int) -> np.ndarray:
    return np.array([float(scores[i]) for i in range(n)])


@pytest.mark.parametrize("seed", range(24))
def test_agrees_with_pref_voting_on_linear_profiles(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 10))
    # Each criterion ranks the systems in a random order: no equal scores, nothing missing.
    table = pd.DataFrame(
        np.array([rng.permutation(n) for _ in range(m)]).T.astype(float) + rng.random((n, m)) * 0.1,
        index=[f"s{i}" for i in range(n)],
        columns=[f"c{j}" for j in range(m)],
    )
    counts = rng.integers(1, 4, size=m) if seed % 2 else np.ones(m, dtype=int)
    prof = _linear_profile(table, counts)

    np.testing.assert_array_equal(_ours(copeland, table, counts), _pv(prof.copeland_scores(), n))
    np.testing.assert_array_equal(
        _ours(copeland_half_ties, table, counts), _pv(prof.copeland_scores(scores=(1, 0.5, 0)), n)
    )
    np.testing.assert_allclose(_ours(borda, table, counts), _pv(prof.borda_scores(), n))

    # Minimax: ours is minus the largest margin against the system over all opponents; pref_voting's
    # "margins" score counts only defeats (0 when undefeated), its "pairwise_opposition" score is minus
    # the largest support against, which on linear orders is (total weight + margin) / 2.
    ours_mm = _ours(minimax, table, counts)
    np.testing.assert_allclose(np.minimum(ours_mm, 0.0), _pv(minimax_scores(prof), n))
    opposition = _pv(minimax_scores(prof, score_method="pairwise_opposition"), n)
    np.testing.assert_allclose(ours_mm, counts.sum() + 2 * opposition)
    ours_winners = set(np.flatnonzero(ours_mm == ours_mm.max()))
    pv_winners = set(pv_minimax(prof))
    assert ours_winners <= pv_winners  # pref_voting ties every undefeated system; we break by margin
    if len(pv_winners) == 1 or ours_mm.max() < 0:
        assert ours_winners == pv_winners

    cw = prof.condorcet_winner()
    assert condorcet_winner(table, pd.Series(counts.astype(float), index=table.columns)) == (
        None if cw is None else f"s{cw}"
    )


@pytest.mark.parametrize("seed", range(24))
def test_agrees_with_pref_voting_with_ties_and_missing(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 10))
    values = rng.integers(0, 4, size=(n, m)).astype(float)  # few distinct values: many equal scores
    values[rng.random(values.shape) < 0.2] = np.nan
    table = pd.DataFrame(values, index=[f"s{i}" for i in range(n)], columns=[f"c{j}" for j in range(m)])
    counts = rng.integers(1, 4, size=m) if seed % 2 else np.ones(m, dtype=int)
    prof = _profile_with_ties(table, counts)

    np.testing.assert_array_equal(_ours(copeland, table, counts), _pv(prof.copeland_scores(), n))
    np.testing.assert_array_equal(
        _ours(copeland_half_ties, table, counts), _pv(prof.copeland_scores(scores=(1, 0.5, 0)), n)
    )
    np.testing.assert_allclose(np.minimum(_ours(minimax, table, counts), 0.0), _pv(minimax_scores(prof), n))
    cw = prof.condorcet_winner()
    assert condorcet_winner(table, pd.Series(counts.astype(float), index=table.columns)) == (
        None if cw is None else f"s{cw}"
    )


@pytest.mark.parametrize("seed", range(12))
def test_borda_with_ties_is_half_symmetric_borda(seed: int) -> None:
    """With equal scores (nothing missing) our Borda is pref_voting's symmetric Borda, shifted and halved.

    Per voter, (below + tied / 2) = ((below - above) + (n - 1)) / 2.
    """
    rng = np.random.default_rng(2000 + seed)
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 10))
    table = pd.DataFrame(
        rng.integers(0, 3, size=(n, m)).astype(float),
        index=[f"s{i}" for i in range(n)],
        columns=[f"c{j}" for j in range(m)],
    )
    counts = rng.integers(1, 4, size=m)
    symmetric = _pv(_profile_with_ties(table, counts).borda_scores(), n)
    np.testing.assert_allclose(_ours(borda, table, counts), (symmetric + counts.sum() * (n - 1)) / 2)
