"""Rank intervals by a paired bootstrap over items (molecules), re-ranked with Copeland (SPEC section 5).

Input: per-item results in long form, one row per (submission, criterion, item) with the columns
:data:`ITEM_COLUMNS` — ``criterion`` a criteria-table column such as ``"amore/chebi20/kekule/acc_at_1"``,
``item`` the molecule id, ``value`` the item's score oriented higher-is-better (for Acc@1, 1.0 when the
true match has rank 1, else 0.0; a tied rank of 1.5 is a miss). An optional ``dataset`` column names the
pool items are resampled from; without it, it is the criterion's second ``/`` field (``chebi20``). Optional
``part`` and ``combine`` columns make a criterion a function of several per-item means (e.g. the mean over
prompt templates of per-template means, or minus the spread between the best and worst template; see
:mod:`leaderboard.ranking.item_table`).
:func:`item_values_from_ranks` builds this table from :meth:`leaderboard.store.ResultStore.export_item_ranks`;
:mod:`leaderboard.ranking.item_table` holds the table's validation and canonical form.

Method: for each bootstrap replicate, and for each dataset, draw ``n`` item ids with replacement from that
dataset's ``n`` ids; the same draw serves every submission and every criterion of the dataset (a paired
bootstrap: the systems are compared on the same resampled molecules, and an augmentation's criterion uses
the drawn ids it has, e.g. only the non-trivial pairs). Each criterion's mean is recomputed per submission
(for a criterion with parts, each part's mean from the same draw, then their combination: mean, negated
range, minus the root of the mean, or worst drop from the ``"original"`` variant), the table is re-ranked
with Copeland (:func:`leaderboard.ranking.copeland_score_array`, same pairwise rules and weights as the
leaderboard), and the ranks are collected.

Outputs (:func:`rank_intervals`): each system's point Copeland score and rank (from the full data), the
``level`` (default 90 %) percentile interval of its bootstrap ranks — lower bound the ``(1 - level) / 2``
quantile rounded down to an observed rank, upper bound the ``(1 + level) / 2`` quantile rounded up, widened
when needed to contain the point rank — and its ``group``: systems that cannot be separated.

Inseparable groups
------------------
Two systems are *separated* when one ranks strictly better than the other in at least ``(1 + level) / 2``
of the replicates (95 % for a 90 % level: the same one-sided error as the interval's ends). Groups are
consecutive tiers along the point ranking: the first system leads group 1; each next system joins the
current group if it is not separated from that group's leader, and otherwise leads a new group. Tiers
never chain (unlike connected components of overlapping intervals, which merge almost everything on a
large board), every group is a run of adjacent ranks, and two systems with identical per-item results are
never separated (they tie in every replicate).

Invariants
----------
- Deterministic given ``seed``: one ``numpy.random.Generator(PCG64(seed))``; datasets are drawn in sorted
  order, items within a dataset in sorted id order, so the input's row order does not matter.
- Means (and the values combined from part means) are rounded to 12 decimals, so systems with identical
  per-item values tie exactly whatever the floating-point summation order.
- A criterion observed for a submission on no drawn item is missing (NaN) in that replicate and ignored
  pairwise, as in the leaderboard.

Side effects: :func:`cached_rank_intervals` reads and writes ``rank_intervals-<key>.json`` in its cache
folder (created if needed, written atomically; the key and file format are
:mod:`leaderboard.ranking.bootstrap_cache`); everything else is pure.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13 (percentile
   intervals). Chapman & Hall.
.. [2] Rofin et al. (2023), "Vote'n'Rank: Revision of Benchmarking with Social Choice Theory", EACL 2023.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from leaderboard.cpus import usable_cpus
from leaderboard.ranking.bootstrap_cache import cache_key, read_cache, write_cache
from leaderboard.ranking.copeland import copeland_ranking
from leaderboard.ranking.item_ranks import item_values_from_ranks
from leaderboard.ranking.item_table import (
    ITEM_COLUMNS,
    PreparedItems,
    combine_parts,
    point_table,
    point_values,
    pool_means,
    prepare_items,
)
from leaderboard.ranking.rules import copeland_score_array

__all__ = [
    "INTERVAL_COLUMNS",
    "ITEM_COLUMNS",
    "BootstrapResult",
    "bootstrap_ranks",
    "cached_rank_intervals",
    "item_values_from_ranks",
    "point_table",
    "rank_intervals",
    "replicate_values",
]

#: Columns of the :func:`rank_intervals` result (indexed by system).
INTERVAL_COLUMNS: tuple[str, ...] = ("score", "rank", "rank_lo", "rank_hi", "rank_median", "group")
#: Type of each :data:`INTERVAL_COLUMNS` column (as cached).
_INTERVAL_TYPES: dict[str, type] = {c: (float if c == "rank_median" else int) for c in INTERVAL_COLUMNS}
#: From this many systems the replicates are re-ranked on several threads (below, a thread costs more than
#: a replicate's ranking).
_THREADED_SYSTEMS = 64
#: Cap on the float64 cells of one block of bootstrap means (replicates x criterion columns).
_BLOCK_CELLS = 1 << 24


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap replicates of a Copeland ranking.

    Attributes
    ----------
    point : pandas.DataFrame
        :func:`leaderboard.ranking.copeland.copeland_ranking` of the full-data table (indexed by system).
    ranks : pandas.DataFrame
        ``n_boot`` x systems integer ranks, one row per replicate (columns in sorted system order).
    p_better : pandas.DataFrame
        Systems x systems: share of replicates in which the row system ranks strictly better than the
        column system.
    seed : int
        The generator's seed.
    """

    point: pd.DataFrame
    ranks: pd.DataFrame
    p_better: pd.DataFrame
    seed: int


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def replicate_values(prep: PreparedItems, *, seed: int, n_boot: int) -> Iterator[np.ndarray]:
    """Yield the bootstrap replicates' criterion values, in blocks of shape ``(block, systems, criteria)``.

    Each pool's items are drawn with replacement (one draw serves every criterion of the pool) and the
    criteria are recomputed from the resampled means (:func:`combine_parts`). Replicates come in blocks so
    that the means stay bounded in memory; the draws depend only on the seed (blocks are drawn in order,
    pools in sorted order within a block), so the rank bootstrap and any statistic of the criteria
    (:mod:`leaderboard.ranking.robustness`) see the same replicates for the same items and seed.
    """
    n_sys, n_cols = len(prep.systems), len(prep.columns)
    rng = np.random.default_rng(seed)
    block = max(1, min(n_boot, _BLOCK_CELLS // max(1, n_sys * n_cols)))
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        means = np.empty((stop - start, n_sys, n_cols))
        for group in prep.groups:
            n = group.n_items
            draws = rng.integers(0, n, size=(stop - start, n))
            offsets = (np.arange(stop - start) * n)[:, None]
            counts = np.bincount((draws + offsets).ravel(), minlength=(stop - start) * n)
            means[:, :, group.columns] = pool_means(
                counts.reshape(stop - start, n).astype(float), group, n_sys
            )
        yield combine_parts(means, prep.layout)


def _run_bootstrap(prep: PreparedItems, *, seed: int, n_boot: int) -> BootstrapResult:
    """Draw the replicates, re-rank each with Copeland and collect the ranks."""
    n_sys = len(prep.systems)
    full = point_values(prep)
    point = copeland_ranking(
        pd.DataFrame(full, index=prep.systems, columns=prep.criteria),
        pd.Series(prep.weights, index=prep.criteria),
    )
    ranks = np.empty((n_boot, n_sys), dtype=np.int64)

    def rerank(values: np.ndarray) -> np.ndarray:
        scores = copeland_score_array(values, prep.weights)
        return 1 + (scores[None, :] > scores[:, None]).sum(axis=1)

    # Replicates are re-ranked side by side on a large board (numpy releases the GIL in the comparisons);
    # each lands in its own row, so the ranks do not depend on the thread count.
    threads = min(usable_cpus(), 8) if n_sys >= _THREADED_SYSTEMS else 1
    pool = ThreadPoolExecutor(threads, thread_name_prefix="bootstrap") if threads > 1 else None
    try:
        start = 0
        for values in replicate_values(prep, seed=seed, n_boot=n_boot):
            for b, rank in enumerate(pool.map(rerank, values) if pool is not None else map(rerank, values)):
                ranks[start + b] = rank
            start += len(values)
    finally:
        if pool is not None:
            pool.shutdown()
    better = np.zeros((n_sys, n_sys))
    step = max(1, _BLOCK_CELLS // max(1, n_sys * n_sys))
    for start in range(0, n_boot, step):
        r = ranks[start : start + step]
        better += (r[:, :, None] < r[:, None, :]).sum(axis=0)
    systems = pd.Index(prep.systems, name="system")
    return BootstrapResult(
        point=point,
        ranks=pd.DataFrame(ranks, columns=systems),
        p_better=pd.DataFrame(better / n_boot, index=systems, columns=systems.copy()),
        seed=seed,
    )


def _check_params(seed: Any, n_boot: Any, level: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}.")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    if not isinstance(level, float | int) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a number in (0, 1), e.g. 0.9, got {level!r}.")


def bootstrap_ranks(
    items: pd.DataFrame, *, seed: int, n_boot: int, weights: pd.Series | None = None
) -> BootstrapResult:
    """Resample items within each dataset and re-rank with Copeland, ``n_boot`` times.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``, ``part`` and
        ``combine``), oriented higher-is-better.
    seed : int
        Seed of the ``numpy.random.Generator``; the same seed and input give the same replicates.
    n_boot : int
        Number of bootstrap replicates.
    weights : pandas.Series, optional
        Weight per criterion (as :func:`leaderboard.ranking.copeland.copeland_ranking`); ``None`` weighs every
        criterion 1 (the same ranking as the leaderboard's per-track weights when there is one track).

    Returns
    -------
    BootstrapResult
        Point ranking, per-replicate ranks and pairwise "ranks strictly better" shares.

    Raises
    ------
    ValueError
        If the items or weights are malformed (see :func:`point_table`) or a parameter is out of range.
    """
    _check_params(seed, n_boot, 0.5)
    return _run_bootstrap(prepare_items(items, weights), seed=int(seed), n_boot=int(n_boot))


def _summarise(result: BootstrapResult, level: float) -> pd.DataFrame:
    """Percentile intervals and inseparable groups from the replicates."""
    alpha = (1.0 - level) / 2.0
    point = result.point
    systems = list(result.ranks.columns)
    ranks = result.ranks.to_numpy()
    lo = np.quantile(ranks, alpha, axis=0, method="lower").astype(int)
    hi = np.quantile(ranks, 1.0 - alpha, axis=0, method="higher").astype(int)
    med = np.median(ranks, axis=0)
    out = pd.DataFrame(
        {"rank_lo": lo, "rank_hi": hi, "rank_median": med}, index=pd.Index(systems, name="system")
    )
    out = out.reindex(point.index)
    out.insert(0, "score", point["score"].astype(int))
    out.insert(1, "rank", point["rank"].astype(int))
    out["rank_lo"] = np.minimum(out["rank_lo"], out["rank"]).astype(int)
    out["rank_hi"] = np.maximum(out["rank_hi"], out["rank"]).astype(int)

    p = result.p_better.reindex(index=point.index, columns=point.index).to_numpy()
    group = np.zeros(len(out), dtype=int)
    leader = 0
    for i in range(len(out)):
        if i == 0:
            group[i] = 1
        elif max(p[leader, i], p[i, leader]) >= 1.0 - alpha:
            group[i] = group[i - 1] + 1
            leader = i
        else:
            group[i] = group[i - 1]
    out["group"] = group
    out.index.name = "system"
    return out.loc[:, list(INTERVAL_COLUMNS)]


def rank_intervals(
    items: pd.DataFrame,
    *,
    seed: int,
    n_boot: int,
    weights: pd.Series | None = None,
    level: float = 0.9,
) -> pd.DataFrame:
    """Bootstrap rank intervals and inseparable groups of the Copeland ranking.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``, ``part`` and
        ``combine``), oriented higher-is-better; see the module docstring.
    seed : int
        Seed of the ``numpy.random.Generator``.
    n_boot : int
        Number of bootstrap replicates (1000 for the site; a few hundred is enough for a quick look).
    weights : pandas.Series, optional
        Weight per criterion; ``None`` weighs every criterion 1.
    level : float, default 0.9
        Coverage of the percentile interval; also sets the separation threshold ``(1 + level) / 2``.

    Returns
    -------
    pandas.DataFrame
        Indexed by system (name ``"system"``), sorted by point rank then name, columns
        :data:`INTERVAL_COLUMNS`: ``score`` and ``rank`` (Copeland on the full data), ``rank_lo`` and
        ``rank_hi`` (the interval, containing ``rank``), ``rank_median`` and ``group`` (1, 2, ...:
        consecutive tiers of systems that cannot be separated; see the module docstring).

    Raises
    ------
    ValueError
        If the items or weights are malformed or a parameter is out of range.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> items = pd.DataFrame(
    ...     [(s, f"t/d/{c}/acc", f"m{i}", float(rng.random() < p))
    ...      for s, p in (("strong", 0.9), ("weak", 0.2)) for c in "xyz" for i in range(50)],
    ...     columns=["submission", "criterion", "item", "value"],
    ... )
    >>> rank_intervals(items, seed=0, n_boot=200)[["rank", "rank_lo", "rank_hi", "group"]]
    ... # doctest: +NORMALIZE_WHITESPACE
            rank  rank_lo  rank_hi  group
    system
    strong     1        1        1      1
    weak       2        2        2      2
    """
    _check_params(seed, n_boot, level)
    prep = prepare_items(items, weights)
    return _summarise(_run_bootstrap(prep, seed=int(seed), n_boot=int(n_boot)), float(level))


# --------------------------------------------------------------------------------------------
# Cache
# --------------------------------------------------------------------------------------------


def cached_rank_intervals(
    items: pd.DataFrame,
    *,
    seed: int,
    n_boot: int,
    cache_dir: Path,
    weights: pd.Series | None = None,
    level: float = 0.9,
) -> pd.DataFrame:
    """:func:`rank_intervals`, stored in ``cache_dir`` and reused while the input and parameters match.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results (see :func:`rank_intervals`).
    seed : int
        Seed of the ``numpy.random.Generator``.
    n_boot : int
        Number of bootstrap replicates.
    cache_dir : pathlib.Path
        Folder of the cache files (created if needed).
    weights : pandas.Series, optional
        Weight per criterion; ``None`` weighs every criterion 1.
    level : float, default 0.9
        Coverage of the interval.

    Returns
    -------
    pandas.DataFrame
        As :func:`rank_intervals`.

    Raises
    ------
    ValueError
        As :func:`rank_intervals`.

    Notes
    -----
    The key is the sha256 of the canonical per-item data (systems, criteria, their parts and combine
    methods, datasets, item ids in sorted order and every value, so the row order of `items` does not
    matter), the weights, ``seed``, ``n_boot``, ``level`` and a method version. The file is
    ``<cache_dir>/rank_intervals-<key[:32]>.json`` (the full key inside is checked on reading); an
    unreadable or mismatching file is recomputed and overwritten. Side effects: creates `cache_dir` and
    writes that file atomically.
    """
    _check_params(seed, n_boot, level)
    prep = prepare_items(items, weights)
    key = cache_key(prep, seed=int(seed), n_boot=int(n_boot), level=float(level))
    path = Path(cache_dir) / f"rank_intervals-{key[:32]}.json"
    cached = read_cache(path, key, _INTERVAL_TYPES)
    if cached is not None:
        return cached
    frame = _summarise(_run_bootstrap(prep, seed=int(seed), n_boot=int(n_boot)), float(level))
    params = {
        "seed": int(seed),
        "n_boot": int(n_boot),
        "level": float(level),
        "n_items": {g.name: g.n_items for g in prep.groups},
        "criteria": prep.criteria,
        "weights": dict(zip(prep.criteria, map(float, prep.weights), strict=True)),
    }
    if prep.layout is not None:
        params["columns"] = prep.columns
        params["combine"] = dict(zip(prep.criteria, prep.layout.combine, strict=True))
    write_cache(path, key, params, frame, _INTERVAL_TYPES)
    return frame
