"""Criteria made of parts (``part`` and ``combine`` columns of the per-item table) in the rank bootstrap."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking import uncertainty
from leaderboard.ranking.bootstrap_cache import cache_key
from leaderboard.ranking.item_table import PartLayout, combine_parts, point_values, prepare_items
from leaderboard.ranking.uncertainty import (
    bootstrap_ranks,
    cached_rank_intervals,
    point_table,
    rank_intervals,
)

COLUMNS = ["submission", "criterion", "item", "value", "part", "combine"]
MEAN = "T4/d/mw/mae_mean"
SPREAD = "T4/d/mw/mae_spread"
PLAIN = "T4/d/valid/acc"


def _plain_table() -> pd.DataFrame:
    """Four close systems, two pools, two criteria each, about a tenth of the items missing."""
    rng = np.random.default_rng(123)
    rows = []
    for system, p in (("a", 0.62), ("b", 0.6), ("c", 0.55), ("d", 0.45)):
        for dataset, n in (("d1", 30), ("d2", 20)):
            for crit in ("x", "y"):
                for i in range(n):
                    if rng.random() < 0.1:
                        continue
                    rows.append(
                        (system, f"t/{dataset}/{crit}/acc", f"{dataset}-{i:02d}", float(rng.random() < p))
                    )
    return pd.DataFrame(rows, columns=["submission", "criterion", "item", "value"])


def _hand_table() -> pd.DataFrame:
    """Per-template errors (negated) of three systems, the same rows feeding a mean and a spread."""
    per_part = [
        # system, part, item, value
        ("a", "t1", "i1", -1.0),
        ("a", "t1", "i2", -3.0),
        ("a", "t2", "i1", -0.5),
        ("a", "t3", "i2", -1.5),
        ("a", "t3", "i3", np.nan),  # NaN: dropped, as any NaN value
        ("b", "t1", "i1", -2.0),  # b has no item of t2 or t3
    ]
    rows = []
    for criterion, how in ((MEAN, "mean"), (SPREAD, "range")):
        rows += [(s, criterion, i, v, t, how) for s, t, i, v in per_part]
    # A plain criterion in the same table: no part, no combine. c has no item of the criteria with parts.
    rows += [
        (s, PLAIN, i, v, None, None) for s, i, v in (("a", "i1", 1.0), ("b", "i1", 0.0), ("c", "i1", 1.0))
    ]
    rows += [("c", PLAIN, "i2", 0.0, None, None)]
    return pd.DataFrame(rows, columns=COLUMNS)


# --------------------------------------------------------------------------- point values


def test_point_table_combines_part_means() -> None:
    table = point_table(_hand_table())
    assert list(table.columns) == [MEAN, SPREAD, PLAIN]
    assert list(table.index) == ["a", "b", "c"]
    # a: part means t1 = -2, t2 = -0.5, t3 = -1.5 (its NaN row is dropped).
    assert table.loc["a", MEAN] == np.round(-4.0 / 3.0, 12)
    assert table.loc["a", SPREAD] == -1.5
    # b: only t1 = -2 (no item of t2 or t3): the mean of one part, and a spread of 0 (+0.0, not -0.0).
    assert table.loc["b", MEAN] == -2.0
    assert table.loc["b", SPREAD] == 0.0 and not np.signbit(table.loc["b", SPREAD])
    # c: no item of any part: NaN.
    assert np.isnan(table.loc["c", MEAN]) and np.isnan(table.loc["c", SPREAD])
    assert table[PLAIN].to_dict() == {"a": 1.0, "b": 0.0, "c": 0.5}


def test_prepared_layout_and_raw_columns() -> None:
    prep = prepare_items(_hand_table(), None)
    assert prep.criteria == [MEAN, SPREAD, PLAIN]
    assert prep.columns == [
        f"{MEAN}[t1]",
        f"{MEAN}[t2]",
        f"{MEAN}[t3]",
        f"{SPREAD}[t1]",
        f"{SPREAD}[t2]",
        f"{SPREAD}[t3]",
        PLAIN,
    ]
    assert prep.layout is not None
    assert prep.layout.criterion.tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert prep.layout.combine == ("mean", "range", "mean")
    assert prep.weights.tolist() == [1.0, 1.0, 1.0]
    assert len(prep.groups) == 1 and prep.groups[0].columns.tolist() == list(range(7))


def test_combined_values_are_rounded_so_equal_spreads_tie() -> None:
    # 0.3 - 0.1 and 0.7 - 0.5 differ in the last bits; rounded, the two spreads are equal.
    rows = [
        (s, SPREAD, "i1", v, t, "range")
        for s, parts in (("x", (0.3, 0.1)), ("y", (0.7, 0.5)))
        for t, v in zip(("t1", "t2"), parts, strict=True)
    ]
    table = point_table(pd.DataFrame(rows, columns=COLUMNS))
    assert 0.3 - 0.1 != 0.7 - 0.5
    assert table.loc["x", SPREAD] == table.loc["y", SPREAD] == -0.2


def test_combine_parts_directly() -> None:
    layout = PartLayout(
        criterion=np.array([0, 0, 0, 1, 1, 1, 2]),
        part=("t1", "t2", "t3", "t1", "t2", "t3", ""),
        combine=("mean", "range", "mean"),
    )
    nan = np.nan
    raw = np.array(
        [
            [
                [0.5, nan, 0.25, 0.5, nan, 0.25, 0.1],  # mean of two parts; spread of two parts
                [nan, nan, nan, nan, nan, nan, nan],  # no part at all: NaN
                [nan, 0.75, nan, nan, 0.75, nan, 0.2],  # one part: itself, and a spread of 0
            ]
        ]
    )
    out = combine_parts(raw, layout)
    assert out.shape == (1, 3, 3)
    np.testing.assert_array_equal(out[0, 0], [0.375, -0.25, 0.1])
    assert np.isnan(out[0, 1]).all()
    np.testing.assert_array_equal(out[0, 2], [0.75, 0.0, 0.2])
    assert combine_parts(raw, None) is raw
    with pytest.raises(ValueError, match="raw must be"):
        combine_parts(raw[:, :, :6], layout)
    with pytest.raises(ValueError, match="unknown combine"):
        PartLayout(criterion=np.array([0]), part=("t1",), combine=("median",))
    with pytest.raises(ValueError, match="non-decreasing"):
        PartLayout(criterion=np.array([1, 0]), part=("t1", "t1"), combine=("mean", "mean"))


# --------------------------------------------------------------------------- bootstrap replicates


def _parts_table() -> pd.DataFrame:
    """Three systems; pool d1 (8 items) with a mean and a spread over three templates, pool d2 plain.

    Some items are invalid in some templates, and system c has no item of template t3.
    """
    rng = np.random.default_rng(5)
    rows = []
    for system, skill in (("a", 1.0), ("b", 1.2), ("c", 1.1)):
        for t, part in enumerate(("t1", "t2", "t3")):
            if system == "c" and part == "t3":
                continue
            for i in range(8):
                if (i + t) % 4 == 0:  # the item is not valid in this template
                    continue
                error = float(np.round(skill * rng.exponential(1.0 + t), 3))
                rows.append((system, "T4/d1/mw/mae", f"m{i}", -error, part, "mean"))
                rows.append((system, "T4/d1/mw/spread", f"m{i}", -error, part, "range"))
        for i in range(5):
            rows.append((system, "T4/d2/valid/acc", f"n{i}", float(rng.random() < 0.6), None, None))
    return pd.DataFrame(rows, columns=COLUMNS)


def _brute_force_replicates(items: pd.DataFrame, seed: int, n_boot: int) -> list[pd.DataFrame]:
    """Recompute every replicate's table with pandas from the same draws, independently of the arrays."""
    rng = np.random.default_rng(seed)
    pool = items["criterion"].str.split("/").str[1]
    counts = {}
    # One block (the table is small): pools in sorted order, items in sorted id order.
    for name in sorted(pool.unique()):
        ids = sorted(items.loc[pool == name, "item"].unique())
        draws = rng.integers(0, len(ids), size=(n_boot, len(ids)))
        counts[name] = [Counter(ids[k] for k in row) for row in draws]
    systems = sorted(items["submission"].unique())
    criteria = sorted(items["criterion"].unique())
    kept = items.dropna(subset=["value"])
    tables = []
    for b in range(n_boot):
        weight = [counts[p][b][i] for p, i in zip(pool[kept.index], kept["item"], strict=True)]
        drawn = kept.assign(w=weight, wv=kept["value"] * weight, part=kept["part"].fillna(""))
        drawn = drawn.loc[drawn["w"] > 0]
        parts = drawn.groupby(["submission", "criterion", "part"])[["w", "wv"]].sum()
        parts["mean"] = parts["wv"] / parts["w"]
        how = kept.groupby("criterion")["combine"].first().fillna("mean")
        values = {}
        for (system, criterion), group in parts["mean"].groupby(level=[0, 1]):
            m = group.to_numpy()
            values[(system, criterion)] = m.mean() if how[criterion] == "mean" else -(m.max() - m.min())
        table = pd.Series(values).unstack().reindex(index=systems, columns=criteria)
        tables.append(table)
    return tables


def test_replicates_match_a_brute_force_recomputation(monkeypatch) -> None:
    items = _parts_table()
    seen: list[np.ndarray] = []
    real = uncertainty.copeland_score_array

    def capturing(values: np.ndarray, w: np.ndarray) -> np.ndarray:
        seen.append(np.array(values, copy=True))
        return real(values, w)

    monkeypatch.setattr(uncertainty, "copeland_score_array", capturing)
    n_boot = 25
    result = bootstrap_ranks(items, seed=3, n_boot=n_boot)
    expected = _brute_force_replicates(items, seed=3, n_boot=n_boot)
    assert len(seen) == n_boot
    # The replicates differ from each other: the draws do something.
    assert not all(np.array_equal(seen[0], s, equal_nan=True) for s in seen[1:])
    for b in range(n_boot):
        np.testing.assert_allclose(seen[b], expected[b].to_numpy(), rtol=0.0, atol=1e-12, equal_nan=True)
        scores = real(expected[b].to_numpy(), np.ones(expected[b].shape[1]))
        ranks = 1 + (scores[None, :] > scores[:, None]).sum(axis=1)
        assert result.ranks.iloc[b].tolist() == ranks.tolist()
    # The point table is the full-data version of the same computation.
    full = point_table(items)
    np.testing.assert_array_equal(point_values(prepare_items(items, None)), full.to_numpy())
    assert full.loc["c", "T4/d1/mw/spread"] <= 0.0


def test_parts_are_row_order_independent() -> None:
    items = _parts_table()
    a = bootstrap_ranks(items, seed=1, n_boot=40)
    b = bootstrap_ranks(items.sample(frac=1.0, random_state=2), seed=1, n_boot=40)
    pd.testing.assert_frame_equal(a.ranks, b.ranks)
    pd.testing.assert_frame_equal(a.p_better, b.p_better)


# --------------------------------------------------------------------------- tables without parts


#: ``rank_intervals(_plain_table(), seed=0, n_boot=60)``, ``bootstrap_ranks(..., seed=1, n_boot=8).ranks``
#: and the cache key, computed by the code before parts existed: a table without parts must not move.
PINNED_INTERVALS = {
    "system": ["a", "b", "d", "c"],
    "score": [3, 1, -1, -3],
    "rank": [1, 2, 3, 4],
    "rank_lo": [1, 1, 2, 2],
    "rank_hi": [1, 3, 4, 4],
    "rank_median": [1.0, 2.0, 3.0, 3.0],
    "group": [1, 1, 2, 2],
}
PINNED_RANKS = [[1, 2, 4, 3], [1, 2, 3, 3]] + [[1, 2, 4, 3]] * 4 + [[1, 2, 3, 3], [1, 2, 4, 3]]
# The key of CACHE_VERSION 2 (the pools hashed as their observed cells); the intervals and ranks above
# are those pinned before it.
PINNED_KEY = "277258886ce27c28fe45bf6cf61308740d5dff147a2a82bf72f79e4f6ec805cd"


def test_table_without_parts_is_unchanged() -> None:
    plain = _plain_table()
    assert rank_intervals(plain, seed=0, n_boot=60).reset_index().to_dict("list") == PINNED_INTERVALS
    assert bootstrap_ranks(plain, seed=1, n_boot=8).ranks.to_numpy().tolist() == PINNED_RANKS
    assert cache_key(prepare_items(plain, None), seed=0, n_boot=60, level=0.9) == PINNED_KEY
    # Empty part and combine columns (e.g. after concatenating with a track that has parts) change nothing.
    empty = plain.assign(part=np.where(np.arange(len(plain)) % 2, "", None), combine=None)
    prep = prepare_items(empty, None)
    assert prep.layout is None and prep.columns == prep.criteria
    assert cache_key(prep, seed=0, n_boot=60, level=0.9) == PINNED_KEY
    pd.testing.assert_frame_equal(
        rank_intervals(empty, seed=0, n_boot=60), rank_intervals(plain, seed=0, n_boot=60)
    )


def test_single_part_mean_equals_the_plain_criterion() -> None:
    plain = _plain_table()
    single = plain.assign(part="x", combine="mean")
    assert prepare_items(single, None).layout is not None
    pd.testing.assert_frame_equal(point_table(single), point_table(plain), check_exact=True)
    for kwargs in (
        {},
        {"weights": pd.Series([1.0, 2.0, 0.5, 1.0], index=sorted(plain["criterion"].unique()))},
    ):
        pd.testing.assert_frame_equal(
            rank_intervals(single, seed=0, n_boot=60, **kwargs),
            rank_intervals(plain, seed=0, n_boot=60, **kwargs),
        )
        a = bootstrap_ranks(single, seed=4, n_boot=80, **kwargs)
        b = bootstrap_ranks(plain, seed=4, n_boot=80, **kwargs)
        pd.testing.assert_frame_equal(a.ranks, b.ranks)
        pd.testing.assert_frame_equal(a.p_better, b.p_better)
        pd.testing.assert_frame_equal(a.point, b.point)


# --------------------------------------------------------------------------- cache


def test_cache_key_follows_parts_and_combine(tmp_path: Path) -> None:
    items = _parts_table()

    def key(frame: pd.DataFrame) -> str:
        return cache_key(prepare_items(frame, None), seed=0, n_boot=10, level=0.9)

    base = key(items)
    assert key(items.sample(frac=1.0, random_state=0)) == base
    is_mean = items["criterion"] == "T4/d1/mw/mae"
    assert key(items.assign(combine=np.where(is_mean, "range", items["combine"]))) != base
    assert key(items.assign(part=items["part"].replace({"t3": "t4"}))) != base
    # One part per criterion gives the plain values, but is another table for the cache.
    plain = _plain_table()
    assert key(plain.assign(part="x", combine="mean")) != key(plain)

    first = cached_rank_intervals(items, seed=0, n_boot=20, cache_dir=tmp_path)
    pd.testing.assert_frame_equal(first, rank_intervals(items, seed=0, n_boot=20))
    ranged = items.assign(combine=np.where(is_mean, "range", items["combine"]))
    cached_rank_intervals(ranged, seed=0, n_boot=20, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("rank_intervals-*.json"))) == 2


# --------------------------------------------------------------------------- validation


def _one(criterion: str, rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([(s, criterion, i, v, p, c) for s, i, v, p, c in rows], columns=COLUMNS)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [("a", "i1", 1.0, "t1", "mean"), ("a", "i2", 1.0, None, "mean")],
            "mix rows with and without a 'part'",
        ),
        ([("a", "i1", 1.0, "t1", "mean"), ("a", "i1", 1.0, "t2", "range")], "more than one 'combine'"),
        ([("a", "i1", 1.0, "t1", None), ("a", "i1", 1.0, "t2", "range")], "more than one 'combine'"),
        ([("a", "i1", 1.0, "t1", "median"), ("b", "i1", 1.0, "t1", "median")], "unknown 'combine' 'median'"),
        ([("a", "i1", 1.0, None, "range"), ("b", "i1", 0.0, None, "range")], "have no 'part'"),
        ([("a", "i1", 1.0, "t1", "mean"), ("a", "i1", 0.0, "t1", "mean")], "duplicated .*'t1'"),
    ],
)
def test_invalid_parts_name_the_criterion(rows: list[tuple], message: str) -> None:
    criterion = "T4/d/bad_criterion/mae"
    other = _one("T4/d/fine/acc", [("a", "i1", 1.0, None, None), ("b", "i1", 0.0, None, None)])
    items = pd.concat([other, _one(criterion, rows)], ignore_index=True)
    with pytest.raises(ValueError, match=message) as info:
        prepare_items(items, None)
    assert criterion in str(info.value)
    assert "T4/d/fine/acc" not in str(info.value)


def test_parts_of_a_criterion_share_one_pool() -> None:
    items = _one(MEAN, [("a", "i1", 1.0, "t1", "mean"), ("a", "i1", 1.0, "t2", "mean")])
    with pytest.raises(ValueError, match=re.escape(MEAN) + ".*more than one dataset"):
        prepare_items(items.assign(dataset=["p1", "p2"]), None)
    # The same item in two parts is two rows, not a repeat; a plain combine "mean" is accepted.
    assert prepare_items(items, None).columns == [f"{MEAN}[t1]", f"{MEAN}[t2]"]
    plain = _one(PLAIN, [("a", "i1", 1.0, None, "mean"), ("b", "i1", 0.0, None, None)])
    assert prepare_items(plain, None).layout is None
