"""One resampling pool's per-item values, kept as its observed cells, and the means of a resample.

A pool (a data set) holds every track's criteria over its items, each criterion (or part) observing a
few of them: on the board a part observes 3–15 % of its pool's items, every model the same ones. A dense
``items × (columns × systems)`` matrix was mostly NaN — 1.4 GB per copy at 100 models, ten times that at
1 000 — and the resampled sums multiplied those NaN-as-zero cells too. The pool therefore keeps its
observed cells only (:class:`ItemGroup`), groups its columns by the items they observe
(:attr:`ItemGroup.blocks`) and sums each group over its own items; a mostly observed pool keeps one dense
product. The sums are those of the dense product up to floating-point order, and the means are rounded to
:data:`leaderboard.ranking.parts.MEAN_DECIMALS` decimals as before.

Everything here is pure.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from leaderboard.ranking.parts import MEAN_DECIMALS

__all__ = ["ItemGroup", "ObservedBlock", "pool_means"]

#: Above this share of observed cells, one dense product beats per-block ones.
_DENSE_SHARE = 0.5
#: Below this many columns per block on average, the blocks' Python overhead beats the saved products.
_MIN_COLUMNS_PER_BLOCK = 8


@dataclass(frozen=True)
class ObservedBlock:
    """Columns of one pool that observe the same items: ``values[rows][:, cols]``, no NaN in it."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class ItemGroup:
    """The items of one resampling pool (dataset), as the cells that hold a value.

    Attributes
    ----------
    name : str
        The pool (dataset) name.
    n_items : int
        Number of distinct items in the pool.
    columns : numpy.ndarray
        Indices into :attr:`PreparedItems.columns` of the raw columns drawn from this pool (the criteria
        themselves when the table has no parts).
    width : int
        ``len(columns) * n_systems``: the pool's value columns, column ``c`` of system ``s`` at
        ``c * n_systems + s``.
    cells : numpy.ndarray
        ``item * width + value column`` of every observed cell, ascending (item-major).
    cell_values : numpy.ndarray
        The cells' values, in the same order.
    """

    name: str
    n_items: int
    columns: np.ndarray  # indices into PreparedItems.columns
    width: int
    cells: np.ndarray
    cell_values: np.ndarray

    @classmethod
    def from_dense(cls, name: str, n_items: int, columns: np.ndarray, values: np.ndarray) -> ItemGroup:
        """Build a pool from its ``(n_items, width)`` value matrix, NaN where not observed."""
        values = np.ascontiguousarray(values, dtype=float)
        cells = np.flatnonzero(~np.isnan(values))
        width = int(values.shape[1])
        return cls(name, int(n_items), np.asarray(columns), width, cells, values.ravel()[cells])

    @functools.cached_property
    def values(self) -> np.ndarray:
        """``(n_items, width)``, NaN where not observed: made for a mostly observed pool (or a reader)."""
        dense = np.full(self.n_items * self.width, np.nan)
        dense[self.cells] = self.cell_values
        return dense.reshape(self.n_items, self.width)

    @functools.cached_property
    def filled(self) -> np.ndarray:
        """:attr:`values` with 0 where not observed (the sums' matrix), made once, not once per block."""
        dense = np.zeros(self.n_items * self.width)
        dense[self.cells] = self.cell_values
        return dense.reshape(self.n_items, self.width)

    @functools.cached_property
    def observed(self) -> np.ndarray | None:
        """1.0 where observed, 0.0 where not, as floats (the counts' matrix); ``None`` when all are."""
        if len(self.cells) == self.n_items * self.width:
            return None
        dense = np.zeros(self.n_items * self.width)
        dense[self.cells] = 1.0
        return dense.reshape(self.n_items, self.width)

    @functools.cached_property
    def blocks(self) -> tuple[ObservedBlock, ...] | None:
        """The columns grouped by the items they observe, or ``None`` when one product over all is cheaper."""
        if self.width == 0 or len(self.cells) > _DENSE_SHARE * self.n_items * self.width:
            return None
        item, col = np.divmod(self.cells, self.width)
        by_col = np.lexsort((item, col))  # each column's cells together, in item order
        items = item[by_col]
        count = np.bincount(col, minlength=self.width)
        start = np.concatenate([[0], np.cumsum(count)[:-1]])
        pattern, first = _column_patterns(items, start, count, self.n_items)
        if len(first) > max(1, self.width // _MIN_COLUMNS_PER_BLOCK):
            return None
        ordered = self.cell_values[by_col]
        out = []
        for g, rep in enumerate(first.tolist()):
            cols = np.flatnonzero(pattern == g)
            k = int(count[rep])
            rows = items[start[rep] : start[rep] + k]
            out.append(ObservedBlock(rows, cols, ordered[start[cols][None, :] + np.arange(k)[:, None]]))
        return tuple(out)

    def point_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Each value column's sum and count over the full data.

        ``bincount`` adds each column's cells in item order, as a sum down the dense matrix did (its
        unobserved zeros changed no partial sum), so the full-data means are those of the dense sum.
        """
        col = self.cells % self.width if self.width else self.cells
        sums = np.bincount(col, weights=self.cell_values, minlength=self.width)
        return sums, np.bincount(col, minlength=self.width).astype(float)


def _column_patterns(
    items: np.ndarray, start: np.ndarray, count: np.ndarray, n_items: int
) -> tuple[np.ndarray, np.ndarray]:
    """Label each column by the set of items it observes; return the labels and each label's first column.

    ``items[start[c] : start[c] + count[c]]`` are column ``c``'s items, ascending. Sets are hashed (a
    fixed random 64-bit weight per item, summed with wrap-around, and the count) and every column checked
    item by item against its label's first column, so a collision costs speed, never a wrong group.
    """
    pattern, first = _labels(_set_hashes(items, start, count, n_items))
    if not _same_sets(items, start, count, first[pattern]):  # a collision: exact keys, slowly
        keys = [items[s : s + c].tobytes() for s, c in zip(start.tolist(), count.tolist(), strict=True)]
        pattern, first = _labels(np.array(keys, dtype=object))
    return pattern, first


def _set_hashes(items: np.ndarray, start: np.ndarray, count: np.ndarray, n_items: int) -> np.ndarray:
    """Hash each column's item set to 64 bits: its items' fixed random weights summed, and its count."""
    weight = np.random.default_rng(0).integers(1, 2**63, size=max(1, n_items), dtype=np.uint64)
    with np.errstate(over="ignore"):
        total = np.concatenate([[np.uint64(0)], np.cumsum(weight[items], dtype=np.uint64)])
        return (total[start + count] - total[start]) * np.uint64(1_000_003) + count.astype(np.uint64)


def _labels(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Label equal keys alike, by order of first appearance; return the labels and first positions."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # labels by first appearance: blocks in column order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.ravel()], first[order]


def _same_sets(items: np.ndarray, start: np.ndarray, count: np.ndarray, rep: np.ndarray) -> bool:
    """Whether every column observes exactly the items of its representative column ``rep``."""
    if not np.array_equal(count, count[rep]):
        return False
    col = np.repeat(np.arange(len(count)), count)
    position = np.arange(len(items)) - start[col]
    return bool(np.array_equal(items, items[start[rep[col]] + position]))


def pool_means(counts: np.ndarray | None, group: ItemGroup, n_sys: int) -> np.ndarray:
    """Per-column means of one pool (the criteria's means, or the part means of criteria with parts).

    Parameters
    ----------
    counts : numpy.ndarray or None
        ``(n_rep, n_items)``: how often each item was drawn in each replicate; ``None`` for the full data.
    group : ItemGroup
        The pool.
    n_sys : int
        Number of systems.

    Returns
    -------
    numpy.ndarray
        ``(n_rep, n_systems, n_columns_in_group)`` (``n_rep`` = 1 for the full data), rounded to
        :data:`MEAN_DECIMALS` decimals, NaN where a system has no drawn item of a column.
    """
    if counts is None:
        sums, nobs = (a[None, :] for a in group.point_sums())
    elif group.blocks is not None:
        # Each block's items only: a column's count of drawn items is the row sum of its items' counts.
        sums = np.empty((len(counts), group.width))
        nobs = np.empty_like(sums)
        for block in group.blocks:
            drawn = counts[:, block.rows]
            sums[:, block.cols] = drawn @ block.values
            nobs[:, block.cols] = drawn.sum(axis=1)[:, None]
    else:
        filled, obs = group.filled, group.observed
        sums = counts @ filled
        nobs = counts @ obs if obs is not None else np.full_like(sums, group.n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(nobs > 0, sums / np.where(nobs > 0, nobs, 1.0), np.nan)
    means = np.round(means, MEAN_DECIMALS)
    return means.reshape(len(means), len(group.columns), n_sys).transpose(0, 2, 1)
