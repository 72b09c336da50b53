"""Tests for leaderboard/ranking/boards.py: one board per kind of model, references shown but never ranked.

Built on the committed record (``site/data/results.csv.gz``: embedding and generative models and their
references) and on small hand-made frames.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking.boards import BOARDS, board_tracks, place_references, rank_board, rank_boards
from leaderboard.ranking.copeland import copeland_ranking
from leaderboard.settings import references
from leaderboard.site.exports import read_results
from leaderboard.tracks import track, track_names

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    return read_results(REPO_ROOT / "site")


@pytest.fixture(scope="module")
def refs() -> list[str]:
    return sorted(references(REPO_ROOT))


def _best_copy(results: pd.DataFrame, board: str, new_id: str) -> pd.DataFrame:
    """A reference that beats every model: the leader's rows, each value moved 1 in its good direction."""
    from evaluators.metrics import higher_is_better

    leader = str(rank_board(results, _spec(board)).ranking.copeland.index[0])
    rows = results.loc[(results["submission"] == leader) & results["track"].isin(board_tracks(_spec(board)))]
    rows = rows.copy()
    up = rows["metric"].map(higher_is_better()).astype(bool).to_numpy()
    rows["value"] = pd.to_numeric(rows["value"]) + np.where(up, 1.0, -1.0)
    rows["submission"] = new_id
    return rows


def _spec(name: str):
    return next(s for s in BOARDS if s.name == name)


def test_every_track_is_on_the_board_of_its_capability() -> None:
    placed = [t for spec in BOARDS for t in board_tracks(spec)]
    assert sorted(placed) == sorted(track_names())  # each track on exactly one board
    for spec in BOARDS:
        assert all(track(t).capability == spec.capability for t in board_tracks(spec))
    assert {"amore", "downstream"} <= set(board_tracks(_spec("embedding")))
    assert {"consistency", "prompt_robustness", "identity_blinded"} <= set(board_tracks(_spec("generative")))


@pytest.mark.parametrize("board", [s.name for s in BOARDS])
def test_adding_and_removing_a_reference_changes_no_model(committed, refs, board) -> None:
    """Reference invariance: with, without and with an unbeatable extra reference, the same scores."""
    without = rank_boards(committed.loc[~committed["submission"].isin(refs)], refs)[board]
    with_refs = rank_boards(committed, refs)[board]
    ceiling = _best_copy(committed, board, "extra-ceiling")
    more = rank_boards(pd.concat([committed, ceiling], ignore_index=True), [*refs, "extra-ceiling"])[board]
    for ranked in (with_refs, more):
        pd.testing.assert_frame_equal(ranked.ranking.copeland, without.ranking.copeland)
        assert not set(ranked.ranking.copeland.index) & {*refs, "extra-ceiling"}
    # The unbeatable reference is placed first; ranked, it would have cost every model one win.
    assert more.references.loc["extra-ceiling", "after"] == 0
    assert int(more.references.loc["extra-ceiling", "wins"]) == len(without.ranking.copeland)
    included = rank_boards(pd.concat([committed, ceiling], ignore_index=True), refs)[board]
    assert not included.ranking.copeland.drop(index="extra-ceiling")["score"].equals(
        without.ranking.copeland["score"]
    )  # the test would fail if references were ranked


def test_committed_references_are_placed_not_ranked(committed, refs) -> None:
    boards = rank_boards(committed, refs)
    assert "morgan-fingerprint-reference" in boards["embedding"].references.index
    assert {"rdkit-opsin-tools", "constant-baseline"} <= set(boards["generative"].references.index)
    for board in boards.values():
        rows = board.rows()
        assert [s for s, ref in rows if not ref] == list(board.ranking.copeland.index)
        assert {s for s, ref in rows if ref} == set(board.references.index)
    # The character n-gram baseline is a baseline model, ranked (leaderboard/references.toml says why).
    assert "char-ngram-baseline" in boards["embedding"].ranking.copeland.index


def test_model_with_both_capabilities_is_on_both_boards(committed) -> None:
    embed = committed.loc[committed["submission"] == "minilm-l6-text"]
    generate = committed.loc[(committed["submission"] == "chem-t5-ce")
                             & ~committed["track"].isin(["amore", "downstream"])]  # fmt: skip
    both = pd.concat([embed, generate]).assign(submission="both-kinds")
    boards = rank_boards(pd.concat([committed, both], ignore_index=True))
    for board in boards.values():
        assert "both-kinds" in board.ranking.copeland.index
        # The Chem-T5 references embed with their encoder too: on the committed board, on both boards.
        assert "chem-t5-ce" in board.ranking.copeland.index


def test_no_criterion_of_one_board_is_on_the_other(committed, refs) -> None:
    boards = rank_boards(committed, refs)
    for name, board in boards.items():
        own = set(board_tracks(board.spec))
        assert set(board.ranking.criteria["track"]) <= own, name
        assert all(c.split("/")[0] in own for c in board.ranking.table.columns), name
        assert list(board.reference_values.columns) == list(board.ranking.headline.columns)
    embedding, generative = boards["embedding"].ranking.table, boards["generative"].ranking.table
    assert not set(embedding.columns) & set(generative.columns)


def _brute_copeland(table: pd.DataFrame, weights: pd.Series) -> dict[str, int]:
    """Copeland by counting, pair by pair, the weight each side wins (NaN ignored); wins minus losses."""
    score = dict.fromkeys(table.index, 0)
    for a, b in itertools.combinations(table.index, 2):
        wa = wb = 0.0
        for c in table.columns:
            x, y = table.at[a, c], table.at[b, c]
            if pd.isna(x) or pd.isna(y):
                continue
            wa += weights[c] * (x > y)
            wb += weights[c] * (y > x)
        if abs(wa - wb) > 1e-9:
            winner, loser = (a, b) if wa > wb else (b, a)
            score[winner] += 1
            score[loser] -= 1
    return score


@pytest.mark.parametrize("board", [s.name for s in BOARDS])
def test_board_copeland_matches_a_brute_force_count(committed, refs, board) -> None:
    rk = rank_boards(committed, refs)[board].ranking
    expected = _brute_copeland(rk.table, rk.weights)
    assert {str(s): int(v) for s, v in rk.copeland["score"].items()} == expected


def test_placement_rule_on_a_small_example() -> None:
    # a > b > c on both criteria; the reference r sits between a and b (beats b and c, loses to a).
    table = pd.DataFrame({"x": [3.0, 2.0, 1.0, 2.5], "y": [3.0, 2.0, 1.0, 2.5]}, index=["a", "b", "c", "r"])
    weights = pd.Series({"x": 0.5, "y": 0.5})
    cop = copeland_ranking(table.loc[["a", "b", "c"]], weights)
    placed = place_references(table, weights, cop)
    assert placed.loc["r"].to_dict() == {"score": 1, "wins": 2, "losses": 1, "ties": 0, "after": 1}
    # Above everyone, below everyone.
    table.loc["r"] = [9.0, 9.0]
    assert place_references(table, weights, cop).at["r", "after"] == 0
    table.loc["r"] = [0.0, 0.0]
    assert place_references(table, weights, cop).at["r", "after"] == 3
