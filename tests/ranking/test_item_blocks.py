"""The resampled means of sparse pools: per-block products equal the dense product."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking import item_pools, item_table
from leaderboard.ranking.item_table import ItemGroup, pool_means
from leaderboard.ranking.uncertainty import bootstrap_ranks

N_SYS = 12


def _group(rng: np.random.Generator, *, n_items: int = 90, n_columns: int = 5, share: float = 0.1,
           integral: bool = False) -> ItemGroup:  # fmt: skip
    """Columns of N_SYS systems, each column observing its own few items (the board's shape), a few cells
    of one system missing too (a run that skipped items)."""
    values = np.full((n_items, n_columns * N_SYS), np.nan)
    for c in range(n_columns):
        rows = rng.choice(n_items, size=max(1, int(share * n_items)), replace=False)
        shape = (len(rows), N_SYS)
        block = rng.integers(0, 2, shape) if integral else rng.normal(size=shape) * 40
        values[np.ix_(rows, np.arange(c * N_SYS, (c + 1) * N_SYS))] = block
    values[rng.integers(0, n_items, 3), 2] = np.nan
    return ItemGroup.from_dense("pool", n_items, np.arange(n_columns), values)


def _counts(rng: np.random.Generator, n_rep: int, n_items: int) -> np.ndarray:
    draws = rng.integers(0, n_items, (n_rep, n_items))
    return np.stack([np.bincount(d, minlength=n_items) for d in draws]).astype(float)


def _dense(counts: np.ndarray, group: ItemGroup) -> np.ndarray:
    """The reference: one product over every item, 0 where not observed."""
    obs = ~np.isnan(group.values)
    sums, nobs = counts @ np.where(obs, group.values, 0.0), counts @ obs
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(nobs > 0, sums / np.where(nobs > 0, nobs, 1.0), np.nan)
    return np.round(means, 12).reshape(len(counts), -1, N_SYS).transpose(0, 2, 1)


@pytest.mark.parametrize("seed", range(5))
def test_blocks_give_the_dense_means(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for integral in (True, False):
        group = _group(rng, integral=integral)
        assert group.blocks is not None and len(group.blocks) > 1
        counts = _counts(rng, 40, group.n_items)
        got, want = pool_means(counts, group, N_SYS), _dense(counts, group)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        if integral:  # sums of whole numbers: exact in any order
            assert np.array_equal(got, want, equal_nan=True)
        else:
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-11)


def test_every_column_lands_in_one_block_of_its_own_items() -> None:
    group = _group(np.random.default_rng(9))
    cols = np.concatenate([b.cols for b in group.blocks])
    assert sorted(cols.tolist()) == list(range(group.values.shape[1]))
    for block in group.blocks:
        observed = ~np.isnan(group.values[:, block.cols])
        others = np.setdiff1d(np.arange(group.n_items), block.rows)
        assert observed[block.rows].all() and not observed[others].any()
        assert np.array_equal(block.values, group.values[np.ix_(block.rows, block.cols)])


def test_dense_or_scattered_pools_keep_one_product() -> None:
    rng = np.random.default_rng(3)
    assert _group(rng, share=0.8).blocks is None  # mostly observed
    scattered = np.where(rng.random((60, 40)) < 0.2, 1.0, np.nan)  # every column its own pattern
    assert ItemGroup.from_dense("pool", 60, np.arange(1), scattered).blocks is None


def test_a_hash_collision_still_groups_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    obs = np.random.default_rng(4).random((70, 30)) < 0.3
    obs[:, 10:20] = obs[:, [0]]
    obs[:, 25] = False  # a column that observes nothing
    reference = np.unique(obs.T, axis=0, return_inverse=True)[1].ravel()
    items = np.concatenate([np.flatnonzero(obs[:, c]) for c in range(obs.shape[1])])
    count = obs.sum(axis=0)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    for collide in (False, True):
        if collide:
            zeros = lambda items, start, count, n: np.zeros(len(count))  # noqa: E731
            monkeypatch.setattr(item_pools, "_set_hashes", zeros)
        labels, first = item_pools._column_patterns(items, start, count, obs.shape[0])
        assert np.array_equal(labels[:, None] == labels[None, :], reference[:, None] == reference[None, :])
        assert labels[first].tolist() == list(range(len(first)))


def test_sparse_twins_still_tie_in_every_replicate() -> None:
    """Two systems with the same items, on a pool whose criteria observe different items (blocks)."""
    rng = np.random.default_rng(5)
    rows = []
    for c in range(12):
        ids = rng.choice(400, size=30, replace=False)
        twin = rng.normal(size=30) * 7
        for sub, values in (("twin_a", twin), ("twin_b", twin.copy()), ("other", rng.normal(size=30) * 7)):
            rows += [(sub, f"crit{c}", f"i{i}", "pool", v) for i, v in zip(ids, values, strict=True)]
    items = pd.DataFrame(rows, columns=["submission", "criterion", "item", "dataset", "value"])
    result = bootstrap_ranks(items, seed=0, n_boot=100)
    assert (result.ranks["twin_a"] == result.ranks["twin_b"]).all()


@pytest.mark.parametrize("size", [40, 5000])  # mostly observed (one pass) and sparse (sorted)
def test_pool_cells_sort_and_find_the_first_repeat(size: int) -> None:
    rng = np.random.default_rng(size)
    for repeats in (False, True):
        flat = rng.choice(size, size=30, replace=False)
        if repeats:
            flat[[7, 19]] = flat[[25, 3]]  # rows 3, 7, 19 and 25 share cells: the first of them is 3
        values = rng.normal(size=30)
        cells, cell_values, repeat = item_table._pool_cells(flat, values, size)
        if repeats:  # the table is refused: the cells do not matter
            assert repeat == 3
        else:
            assert repeat is None
            assert cells.tolist() == sorted(flat.tolist())
            assert cell_values.tolist() == [values[flat.tolist().index(c)] for c in cells.tolist()]
