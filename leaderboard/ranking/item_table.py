"""Per-item results: the long table the rank bootstrap resamples, and its canonical array form.

The table has one row per (submission, criterion, item) with the columns :data:`ITEM_COLUMNS` —
``criterion`` a criteria-table column such as ``"amore/chebi20/kekule/acc_at_1"``, ``item`` the molecule
id, ``value`` the item's score oriented higher-is-better (for Acc@1, 1.0 when the true match has rank 1,
else 0.0; a tied rank of 1.5 is a miss). An optional ``dataset`` column names the pool items are resampled
from; without it, it is the criterion's second ``/`` field (``chebi20``).

- :func:`item_values_from_ranks` builds the table from
  :meth:`leaderboard.store.ResultStore.export_item_ranks`.
- :func:`prepare_items` validates it and arranges it as one value matrix per resampling pool
  (:class:`PreparedItems`), systems, criteria, pools and items in sorted order, so the input's row order
  does not matter.
- :func:`pool_means`, :func:`point_values` and :func:`point_table` give the per-criterion means, rounded
  to :data:`MEAN_DECIMALS` decimals so that systems with identical per-item values tie exactly whatever
  the floating-point summation order.

The resampling itself is :mod:`leaderboard.ranking.uncertainty`. Everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "ITEM_COLUMNS",
    "MEAN_DECIMALS",
    "ItemGroup",
    "PreparedItems",
    "item_values_from_ranks",
    "point_table",
    "point_values",
    "pool_means",
    "prepare_items",
]

#: Columns :func:`leaderboard.ranking.uncertainty.rank_intervals` needs in its ``items`` argument
#: (``dataset`` is optional).
ITEM_COLUMNS: tuple[str, ...] = ("submission", "criterion", "item", "value")
#: Decimals kept in per-criterion means (identical items => exactly equal means).
MEAN_DECIMALS = 12


@dataclass(frozen=True)
class ItemGroup:
    """The items of one resampling pool (dataset).

    Attributes
    ----------
    name : str
        The pool (dataset) name.
    n_items : int
        Number of distinct items in the pool.
    criteria : numpy.ndarray
        Column indices into :attr:`PreparedItems.criteria` of the criteria drawn from this pool.
    values : numpy.ndarray
        ``(n_items, n_criteria_in_group * n_systems)``, NaN where not observed.
    """

    name: str
    n_items: int
    criteria: np.ndarray  # column indices into the criteria list
    values: np.ndarray  # (n_items, n_criteria_in_group * n_systems), NaN = not observed


@dataclass(frozen=True)
class PreparedItems:
    """Per-item results in canonical (sorted) array form.

    Attributes
    ----------
    systems : list of str
        Submissions, sorted.
    criteria : list of str
        Criteria, sorted.
    weights : numpy.ndarray
        Weight per criterion (in :attr:`criteria` order).
    groups : tuple of ItemGroup
        One per resampling pool, in sorted pool order.
    """

    systems: list[str]
    criteria: list[str]
    weights: np.ndarray
    groups: tuple[ItemGroup, ...]


def item_values_from_ranks(
    ranks: pd.DataFrame,
    *,
    metric: str = "acc_at_1",
    subset: str = "non_trivial",
    distance: str = "l2",
    direction: str = "original_to_augmented",
) -> pd.DataFrame:
    """Turn per-item ranks (a retrieval track's ``item_ranks`` table) into the table the bootstrap resamples.

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


def prepare_items(items: pd.DataFrame, weights: pd.Series | None) -> PreparedItems:
    """Validate the per-item table and arrange it as one value matrix per resampling pool.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``).
    weights : pandas.Series or None
        Weight per criterion; ``None`` weighs every criterion 1.

    Returns
    -------
    PreparedItems
        Systems, criteria, weights and one :class:`ItemGroup` per pool, all in sorted order.

    Raises
    ------
    TypeError
        If ``items`` is not a DataFrame or ``weights`` not a Series.
    ValueError
        If a column is missing, a value is not numeric or infinite, a (submission, criterion, item) row
        repeats, a criterion spans two pools, or a weight is missing, negative or not finite.
    """
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
    groups: list[ItemGroup] = []
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
        groups.append(ItemGroup(name=name, n_items=len(item_names), criteria=crit_idx, values=values))

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
    return PreparedItems(systems=systems, criteria=criteria, weights=w, groups=tuple(groups))


def pool_means(counts: np.ndarray | None, group: ItemGroup, n_sys: int) -> np.ndarray:
    """Per-criterion means of one pool.

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
        ``(n_rep, n_systems, n_criteria_in_group)`` (``n_rep`` = 1 for the full data), rounded to
        :data:`MEAN_DECIMALS` decimals, NaN where a system has no drawn item of a criterion.
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
    means = np.round(means, MEAN_DECIMALS)
    return means.reshape(len(means), len(group.criteria), n_sys).transpose(0, 2, 1)


def point_values(prep: PreparedItems) -> np.ndarray:
    """Return the full-data table as an array.

    Parameters
    ----------
    prep : PreparedItems
        Per-item results from :func:`prepare_items`.

    Returns
    -------
    numpy.ndarray
        ``(n_systems, n_criteria)`` means, NaN where a system has no item of a criterion.
    """
    n_sys = len(prep.systems)
    out = np.full((n_sys, len(prep.criteria)), np.nan)
    for group in prep.groups:
        out[:, group.criteria] = pool_means(None, group, n_sys)[0]
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
    prep = prepare_items(items, None)
    table = pd.DataFrame(point_values(prep), index=pd.Index(prep.systems, name="submission"))
    table.columns = pd.Index(prep.criteria)
    return table
