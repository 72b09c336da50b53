"""Rank intervals by a paired bootstrap over items (molecules), re-ranked with Copeland (SPEC section 5).

Input: per-item results in long form, one row per (submission, criterion, item) with the columns
:data:`ITEM_COLUMNS` — ``criterion`` a criteria-table column such as ``"amore/chebi20/kekule/acc_at_1"``,
``item`` the molecule id, ``value`` the item's score oriented higher-is-better (for Acc@1, 1.0 when the
true match has rank 1, else 0.0; a tied rank of 1.5 is a miss). An optional ``dataset`` column names the
pool items are resampled from; without it, it is the criterion's second ``/`` field (``chebi20``).
:func:`item_values_from_ranks` builds this table from :meth:`leaderboard.store.ResultStore.export_item_ranks`.

Method: for each bootstrap replicate, and for each dataset, draw ``n`` item ids with replacement from that
dataset's ``n`` ids; the same draw serves every submission and every criterion of the dataset (a paired
bootstrap: the systems are compared on the same resampled molecules, and an augmentation's criterion uses
the drawn ids it has, e.g. only the non-trivial pairs). Each criterion's mean is recomputed per submission,
the table is re-ranked with Copeland (:func:`leaderboard.ranking.copeland_score_array`, same pairwise
rules and weights as the leaderboard), and the ranks are collected.

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
- Means are rounded to 12 decimals, so systems with identical per-item values tie exactly whatever the
  floating-point summation order.
- A criterion observed for a submission on no drawn item is missing (NaN) in that replicate and ignored
  pairwise, as in the leaderboard.

Side effects: :func:`cached_rank_intervals` reads and writes ``rank_intervals-<key>.json`` in its cache
folder (created if needed, written atomically); everything else is pure.

References
----------
.. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13 (percentile
   intervals). Chapman & Hall.
.. [2] Rofin et al. (2023), "Vote'n'Rank: Revision of Benchmarking with Social Choice Theory", EACL 2023.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from leaderboard.ranking.copeland import copeland_ranking
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
]

#: Columns :func:`rank_intervals` needs in its ``items`` argument (``dataset`` is optional).
ITEM_COLUMNS: tuple[str, ...] = ("submission", "criterion", "item", "value")
#: Columns of the :func:`rank_intervals` result (indexed by system).
INTERVAL_COLUMNS: tuple[str, ...] = ("score", "rank", "rank_lo", "rank_hi", "rank_median", "group")

#: Bumped whenever the method changes, so that stale cache files are never reused.
_CACHE_VERSION = 1
#: Decimals kept in per-criterion means (identical items => exactly equal means).
_MEAN_DECIMALS = 12
#: Cap on the float64 cells of one block of bootstrap means (replicates x criterion columns).
_BLOCK_CELLS = 1 << 24


@dataclass(frozen=True)
class _Group:
    """The items of one resampling pool (dataset)."""

    name: str
    n_items: int
    criteria: np.ndarray  # column indices into the criteria list
    values: np.ndarray  # (n_items, n_criteria_in_group * n_systems), NaN = not observed


@dataclass(frozen=True)
class _Prepared:
    """Per-item results in canonical (sorted) array form."""

    systems: list[str]
    criteria: list[str]
    weights: np.ndarray
    groups: tuple[_Group, ...]


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
# Input
# --------------------------------------------------------------------------------------------


def item_values_from_ranks(
    ranks: pd.DataFrame,
    *,
    metric: str = "acc_at_1",
    subset: str = "non_trivial",
    distance: str = "l2",
    direction: str = "original_to_augmented",
) -> pd.DataFrame:
    """Turn per-molecule AMORE ranks into the per-item table that :func:`rank_intervals` resamples.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Rows of :meth:`leaderboard.store.ResultStore.export_item_ranks`: ``submission, track, dataset,
        augmentation, distance, direction, id, status, rank``.
    metric : {"acc_at_1", "acc_at_5", "mrr"}, default "acc_at_1"
        Per-item score: ``rank <= 1`` (a tied rank of 1.5 is a miss), ``rank <= 5``, or ``1 / rank``.
    subset : {"non_trivial", "all"}, default "non_trivial"
        ``non_trivial`` keeps the pairs whose augmented string differs from the original (status
        ``changed``), the headline; ``all`` keeps every scored pair.
    distance, direction : str
        Which retrieval setting to keep (rows of other settings are dropped); defaults are the headline's.

    Returns
    -------
    pandas.DataFrame
        Columns ``submission, criterion, dataset, item, value`` with ``criterion`` =
        ``"<track>/<dataset>/<augmentation>/<metric>"`` (the criteria-table column of the headline
        ranking) and ``dataset`` the resampling pool.

    Raises
    ------
    ValueError
        If a column is missing, ``metric`` or ``subset`` is unknown, or a rank is not a number >= 1.

    Examples
    --------
    >>> import pandas as pd
    >>> ranks = pd.DataFrame(
    ...     {
    ...         "submission": ["m", "m", "m"],
    ...         "track": "amore",
    ...         "dataset": "chebi20",
    ...         "augmentation": "kekule",
    ...         "distance": "l2",
    ...         "direction": "original_to_augmented",
    ...         "id": ["a", "b", "c"],
    ...         "status": ["changed", "changed", "identical"],
    ...         "rank": [1.0, 1.5, 1.0],
    ...     }
    ... )
    >>> item_values_from_ranks(ranks)["value"].tolist()
    [1.0, 0.0]
    """
    needed = ("submission", "track", "dataset", "augmentation", "id", "status", "rank")
    missing = [c for c in needed if c not in ranks.columns]
    if missing:
        raise ValueError(
            f"ranks: missing columns {missing}; got {list(map(str, ranks.columns))}. "
            "Pass the rows of ResultStore.export_item_ranks()."
        )
    if subset not in ("non_trivial", "all"):
        raise ValueError(f"subset must be 'non_trivial' or 'all', got {subset!r}.")
    rows = ranks
    if "distance" in rows.columns:
        rows = rows.loc[rows["distance"] == distance]
    if "direction" in rows.columns:
        rows = rows.loc[rows["direction"] == direction]
    if subset == "non_trivial":
        rows = rows.loc[rows["status"] == "changed"]
    rank = pd.to_numeric(rows["rank"], errors="coerce").to_numpy(dtype=float)
    if np.any(~(rank >= 1.0)):
        raise ValueError("ranks: column 'rank' must hold numbers >= 1 (1 = the true match ranked first).")
    if metric == "acc_at_1":
        value = (rank <= 1.0).astype(float)
    elif metric == "acc_at_5":
        value = (rank <= 5.0).astype(float)
    elif metric == "mrr":
        value = 1.0 / rank
    else:
        raise ValueError(f"metric must be one of 'acc_at_1', 'acc_at_5', 'mrr'; got {metric!r}.")
    # Build the criterion names once per (track, dataset, augmentation), not once per row.
    parts = [_category(rows[c]) for c in ("track", "dataset", "augmentation")]
    combo = (
        parts[0].cat.codes.to_numpy(np.int64) * len(parts[1].cat.categories)
        + parts[1].cat.codes.to_numpy(np.int64)
    ) * len(parts[2].cat.categories) + parts[2].cat.codes.to_numpy(np.int64)
    combo_code, combo_uniques = pd.factorize(combo, sort=True)
    names = []
    for c in combo_uniques:
        rest, a = divmod(int(c), len(parts[2].cat.categories))
        t, d = divmod(rest, len(parts[1].cat.categories))
        names.append(
            f"{parts[0].cat.categories[t]}/{parts[1].cat.categories[d]}/{parts[2].cat.categories[a]}/{metric}"
        )
    return pd.DataFrame(
        {
            "submission": _category(rows["submission"]).array,
            "criterion": pd.Categorical.from_codes(combo_code, names),
            "dataset": parts[1].array,
            "item": _category(rows["id"]).array,
            "value": value,
        }
    )


def _category(column: pd.Series) -> pd.Series:
    """Return the column as a categorical of strings, with only the categories it uses."""
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype(str).astype("category")
    column = column.cat.remove_unused_categories()
    if not all(isinstance(c, str) for c in column.cat.categories):
        column = column.astype(str).astype("category")
    return column


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Sorted integer codes of a column and its unique values as strings."""
    codes, uniques = pd.factorize(column.astype(str) if column.dtype == object else column, sort=True)
    names = [str(u) for u in uniques]
    if len(set(names)) != len(names):  # e.g. 1 and "1" in one column
        codes, uniques = pd.factorize(column.astype(str), sort=True)
        names = [str(u) for u in uniques]
    return codes.astype(np.int64), names


def _prepare(items: pd.DataFrame, weights: pd.Series | None) -> _Prepared:
    """Validate the per-item table and arrange it as one value matrix per resampling pool."""
    if not isinstance(items, pd.DataFrame):
        raise TypeError(f"items must be a pandas DataFrame, got {type(items).__name__}.")
    missing = [c for c in ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise ValueError(
            f"items: missing required columns {missing}; got {list(map(str, items.columns))}. "
            f"Per-item results need the columns {list(ITEM_COLUMNS)} (and optionally 'dataset')."
        )
    try:
        value = pd.to_numeric(items["value"], errors="raise").to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"items: column 'value' must be numeric (NaN for missing): {exc}") from exc
    if np.isinf(value).any():
        raise ValueError("items: column 'value' holds an infinite value; per-item scores must be finite.")
    keep = ~np.isnan(value)
    if not keep.all():
        items, value = items.loc[keep], value[keep]
    if items.empty:
        raise ValueError("items: no per-item results to rank (the table is empty or all NaN).")

    sys_code, systems = _codes(items["submission"])
    crit_code, criteria = _codes(items["criterion"])
    if "dataset" in items.columns:
        pool = items["dataset"].astype(str).to_numpy()
    else:
        parts = [c.split("/") for c in criteria]
        pool = np.array([p[1] if len(p) >= 3 else "/".join(p) for p in parts], dtype=object)[crit_code]
    pool_code, pools = _codes(pd.Series(pool, index=items.index))
    crit_pool = np.full(len(criteria), -1, dtype=np.int64)
    crit_pool[crit_code] = pool_code
    if np.any(crit_pool[crit_code] != pool_code):
        bad = sorted({criteria[c] for c in crit_code[crit_pool[crit_code] != pool_code]})
        raise ValueError(
            f"items: criteria {bad[:5]} draw items from more than one dataset. Each criterion must belong "
            "to exactly one 'dataset' (resampling pool)."
        )

    n_sys = len(systems)
    groups: list[_Group] = []
    item_col = items["item"]
    for g, name in enumerate(pools):
        rows = np.flatnonzero(pool_code == g)
        item_code, item_names = _codes(item_col.iloc[rows])
        crit_idx = np.flatnonzero(crit_pool == g)
        local = np.full(len(criteria), -1, dtype=np.int64)
        local[crit_idx] = np.arange(len(crit_idx))
        col = local[crit_code[rows]] * n_sys + sys_code[rows]
        flat = item_code * (len(crit_idx) * n_sys) + col
        seen = np.bincount(flat, minlength=len(item_names) * len(crit_idx) * n_sys)
        if seen.max(initial=0) > 1:
            first = rows[np.flatnonzero(seen[flat] > 1)[0]]
            raise ValueError(
                "items: duplicated (submission, criterion, item) rows, e.g. "
                f"({systems[sys_code[first]]!r}, {criteria[crit_code[first]]!r}, "
                f"{str(item_col.iloc[first])!r}). "
                "Each submission has at most one value per criterion and item; drop the repeats."
            )
        values = np.full((len(item_names), len(crit_idx) * n_sys), np.nan)
        values[item_code, col] = value[rows]
        groups.append(_Group(name=name, n_items=len(item_names), criteria=crit_idx, values=values))

    if weights is None:
        w = np.ones(len(criteria))
    else:
        if not isinstance(weights, pd.Series):
            raise TypeError(f"weights must be a pandas Series or None, got {type(weights).__name__}.")
        absent = [c for c in criteria if c not in weights.index]
        if absent:
            raise ValueError(
                f"weights: no weight for criteria {absent[:10]}. Give a weight for every criterion of the "
                "per-item table (0 to ignore one)."
            )
        w = weights.reindex(criteria).to_numpy(dtype=float)
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"weights: every weight must be finite and >= 0, got {w.tolist()[:10]}.")
    return _Prepared(systems=systems, criteria=criteria, weights=w, groups=tuple(groups))


def _means(counts: np.ndarray | None, group: _Group, n_sys: int) -> np.ndarray:
    """Per-criterion means of one pool, ``(n_rep, n_systems, n_criteria_in_group)``.

    ``counts`` is ``(n_rep, n_items)`` (how often each item was drawn), ``None`` for the full data.
    """
    obs = ~np.isnan(group.values)
    filled = np.where(obs, group.values, 0.0)
    if counts is None:
        sums, nobs = filled.sum(axis=0)[None, :], obs.sum(axis=0)[None, :].astype(float)
    else:
        sums = counts @ filled
        nobs = counts @ obs.astype(float) if not obs.all() else np.full_like(sums, group.n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(nobs > 0, sums / np.where(nobs > 0, nobs, 1.0), np.nan)
    means = np.round(means, _MEAN_DECIMALS)
    return means.reshape(len(means), len(group.criteria), n_sys).transpose(0, 2, 1)


def _point_values(prep: _Prepared) -> np.ndarray:
    """Return the full-data table as a ``(n_systems, n_criteria)`` array."""
    n_sys = len(prep.systems)
    out = np.full((n_sys, len(prep.criteria)), np.nan)
    for group in prep.groups:
        out[:, group.criteria] = _means(None, group, n_sys)[0]
    return out


def point_table(items: pd.DataFrame) -> pd.DataFrame:
    """Per-criterion means of the per-item results: the table the bootstrap resamples.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results with the columns :data:`ITEM_COLUMNS` (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        Systems (index ``"submission"``, sorted) x criteria (sorted), the mean of each criterion's items
        per system (rounded to 12 decimals), NaN where a system has no item of a criterion.

    Raises
    ------
    ValueError
        If a column is missing, a value is not numeric or infinite, or a (submission, criterion, item) row
        repeats.

    Examples
    --------
    >>> import pandas as pd
    >>> items = pd.DataFrame(
    ...     {"submission": ["a", "a", "b"], "criterion": ["t/d/x/m"] * 3, "item": ["1", "2", "1"],
    ...      "value": [1.0, 0.0, 1.0]}
    ... )
    >>> point_table(items)["t/d/x/m"].to_dict()
    {'a': 0.5, 'b': 1.0}
    """
    prep = _prepare(items, None)
    table = pd.DataFrame(_point_values(prep), index=pd.Index(prep.systems, name="submission"))
    table.columns = pd.Index(prep.criteria)
    return table


# --------------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------------


def _run_bootstrap(prep: _Prepared, *, seed: int, n_boot: int) -> BootstrapResult:
    """Draw the replicates, re-rank each with Copeland and collect the ranks."""
    n_sys, n_crit = len(prep.systems), len(prep.criteria)
    point_values = _point_values(prep)
    point = copeland_ranking(
        pd.DataFrame(point_values, index=prep.systems, columns=prep.criteria),
        pd.Series(prep.weights, index=prep.criteria),
    )
    rng = np.random.default_rng(seed)
    ranks = np.empty((n_boot, n_sys), dtype=np.int64)
    # Replicates in blocks so that the (block, n_systems, n_criteria) means stay bounded in memory; the
    # draws depend only on the seed (blocks are drawn in order, pools in sorted order within a block).
    block = max(1, min(n_boot, _BLOCK_CELLS // max(1, n_sys * n_crit)))
    for start in range(0, n_boot, block):
        stop = min(n_boot, start + block)
        means = np.empty((stop - start, n_sys, n_crit))
        for group in prep.groups:
            n = group.n_items
            draws = rng.integers(0, n, size=(stop - start, n))
            offsets = (np.arange(stop - start) * n)[:, None]
            counts = np.bincount((draws + offsets).ravel(), minlength=(stop - start) * n)
            means[:, :, group.criteria] = _means(counts.reshape(stop - start, n).astype(float), group, n_sys)
        for b in range(stop - start):
            scores = copeland_score_array(means[b], prep.weights)
            ranks[start + b] = 1 + (scores[None, :] > scores[:, None]).sum(axis=1)
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
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``), oriented
        higher-is-better.
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
    return _run_bootstrap(_prepare(items, weights), seed=int(seed), n_boot=int(n_boot))


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
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``), oriented
        higher-is-better; see the module docstring.
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
    prep = _prepare(items, weights)
    return _summarise(_run_bootstrap(prep, seed=int(seed), n_boot=int(n_boot)), float(level))


# --------------------------------------------------------------------------------------------
# Cache
# --------------------------------------------------------------------------------------------


def _cache_key(prep: _Prepared, *, seed: int, n_boot: int, level: float) -> str:
    """sha256 over the canonical per-item arrays, the weights and the parameters."""
    h = hashlib.sha256()
    header = {
        "version": _CACHE_VERSION,
        "seed": seed,
        "n_boot": n_boot,
        "level": level,
        "systems": prep.systems,
        "criteria": prep.criteria,
        "weights": [float(x) for x in prep.weights],
        "pools": [(g.name, g.n_items, g.criteria.tolist()) for g in prep.groups],
    }
    h.update(json.dumps(header, sort_keys=True).encode())
    for g in prep.groups:
        obs = ~np.isnan(g.values)
        h.update(np.packbits(obs).tobytes())
        h.update(np.ascontiguousarray(np.where(obs, g.values, 0.0), dtype="<f8").tobytes())
    return h.hexdigest()


def _read_cache(path: Path, key: str) -> pd.DataFrame | None:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(payload, dict)
        or payload.get("key") != key
        or not isinstance(payload.get("rows"), list)
    ):
        return None
    try:
        frame = pd.DataFrame(payload["rows"], columns=["system", *INTERVAL_COLUMNS]).set_index("system")
        return frame.astype({c: (float if c == "rank_median" else int) for c in INTERVAL_COLUMNS})
    except (KeyError, TypeError, ValueError):
        return None


def _write_cache(path: Path, key: str, params: dict[str, Any], frame: pd.DataFrame) -> None:
    rows = [
        {"system": str(s), **{c: (float(v) if c == "rank_median" else int(v)) for c, v in row.items()}}
        for s, row in frame.iterrows()
    ]
    text = json.dumps({"key": key, "params": params, "rows": rows}, indent=1, sort_keys=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    The key is the sha256 of the canonical per-item data (systems, criteria, datasets, item ids in sorted
    order and every value, so the row order of `items` does not matter), the weights, ``seed``,
    ``n_boot``, ``level`` and a method version. The file is ``<cache_dir>/rank_intervals-<key[:32]>.json``
    (the full key inside is checked on reading); an unreadable or mismatching file is recomputed and
    overwritten. Side effects: creates `cache_dir` and writes that file atomically.
    """
    _check_params(seed, n_boot, level)
    prep = _prepare(items, weights)
    key = _cache_key(prep, seed=int(seed), n_boot=int(n_boot), level=float(level))
    path = Path(cache_dir) / f"rank_intervals-{key[:32]}.json"
    cached = _read_cache(path, key)
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
    _write_cache(path, key, params, frame)
    return frame
