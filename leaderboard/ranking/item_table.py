"""Per-item results: the long table the rank bootstrap resamples, and its canonical array form.

The table has one row per (submission, criterion, item) — per (submission, criterion, part, item) for a
criterion made of parts (below) — with the columns :data:`ITEM_COLUMNS` —
``criterion`` a criteria-table column such as ``"amore/chebi20/kekule/acc_at_1"``, ``item`` the molecule
id, ``value`` the item's score oriented higher-is-better (for Acc@1, 1.0 when the true match has rank 1,
else 0.0; a tied rank of 1.5 is a miss). An optional ``dataset`` column names the pool items are resampled
from; without it, it is the criterion's second ``/`` field (``chebi20``).

- :func:`leaderboard.ranking.item_ranks.item_values_from_ranks` builds the table from
  :meth:`leaderboard.store.ResultStore.export_item_ranks`.
- :func:`prepare_items` validates it and arranges it as one value matrix per resampling pool
  (:class:`PreparedItems`), systems, criteria, parts, pools and items in sorted order, so the input's row
  order does not matter. The matrices hold the *raw columns*: one per criterion without parts, one per
  (criterion, part) otherwise (:attr:`PreparedItems.columns`, laid out by :class:`PartLayout`).
- :func:`pool_means` gives the raw columns' means, :func:`combine_parts` turns them into the criteria's
  values, and :func:`point_values` and :func:`point_table` give the full-data table. Means and combined
  values are rounded to :data:`MEAN_DECIMALS` decimals so that systems with identical per-item values tie
  exactly whatever the floating-point summation order.

The resampling itself is :mod:`leaderboard.ranking.uncertainty`. Everything here is pure.

Criteria made of parts
----------------------
Most criteria are item means. A criterion that is a function of several per-item means (the prompt
robustness track's mean over templates, or its spread between the best and the worst template) has rows
with the optional column ``part`` (``"t1"`` ... ``"t6"``): the rows of each (criterion, part) are averaged
into a *part mean* exactly as a criterion's rows are otherwise (NaN where a system has no item of the
part), and the optional column ``combine`` (one value per criterion, default ``"mean"``) says how the part
means make the criterion's value:

- ``"mean"``: the mean of the part means that are not NaN (NaN if none);
- ``"range"``: ``-(max - min)`` of the part means that are not NaN (NaN if none, 0 if one), negated so
  that the table stays higher-is-better (a smaller spread is better). The caller orients the item values
  higher-is-better (e.g. ``-abs(error)``), as for any criterion.
- ``"min"``: the least of the part means that are not NaN (NaN if none): the worst part, e.g. the worst
  template's accuracy (items oriented higher-is-better, as for any criterion).
- ``"root"``: ``-sqrt(-m)``, ``m`` the mean of the part means that are not NaN (NaN if none; a positive
  ``m``, which items ``-(squared error)`` cannot give, counts as 0). With squared errors as items this is
  minus the RMSE: a monotone transform of a mean, so exact on the full data, and resampled as the mean is.
- ``"worst_drop"``: minus the worst degradation from a reference. Parts are named ``"<variant>"`` or
  ``"<variant>|<sub>"`` (variant: the text before the first ``|``); a variant's value is the mean of its
  sub-parts' means that are not NaN (NaN if none), and the variant ``"original"`` is the reference. The
  value is ``min(value_v - value_original)`` over the other variants ``v`` that have a value: 0 when no
  variant is worse, positive when every variant is better, NaN when the original or every other variant
  is NaN. E.g. ROC-AUC from DeLong placement values as items, with parts ``"original|pos"``,
  ``"original|neg"``, ``"kekule|pos"``, ... : the mean placement of the positives and that of the
  negatives both equal the AUC on the full data, and their mean is what each variant's value is.
- ``"worst_drop_root"``: as ``"worst_drop"``, with each variant's value ``-sqrt(-m)`` as for ``"root"``
  (the worst RMSE increase from squared-error items, negated).
- ``"worst_variant"``: the least variant value (parts and variant values as for ``"worst_drop"``, no
  reference): the score on the worst test set, e.g. the ROC-AUC of the worst rewrite.
- ``"worst_variant_root"``: as ``"worst_variant"``, each variant's value ``-sqrt(-m)``: minus the RMSE of
  the worst rewrite.

An empty or missing (NaN) ``part`` means none, an empty or missing ``combine`` means ``"mean"``.
:func:`prepare_items` refuses a criterion whose rows mix rows with and without a part, that has more than
one ``combine`` or an unknown one, that has no parts and a ``combine`` other than ``"mean"`` (it is a
plain item mean), or that combines by ``"worst_drop"`` or ``"worst_drop_root"`` without an ``"original"``
variant. All the parts of a criterion draw from its one pool, so that one draw of items serves
every part: an item valid in several templates is paired across them (its value in each part is a row of
its own).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from leaderboard.frames import recode, text_codes
from leaderboard.ranking.parts import (
    COMBINE_METHODS,
    MEAN_DECIMALS,
    REFERENCE,
    PartLayout,
    combine_parts,
    missing_reference,
)

__all__ = [
    "COMBINE_METHODS",
    "ITEM_COLUMNS",
    "MEAN_DECIMALS",
    "ItemGroup",
    "PartLayout",
    "PreparedItems",
    "combine_parts",
    "point_table",
    "point_values",
    "pool_means",
    "prepare_items",
]

#: Columns :func:`leaderboard.ranking.uncertainty.rank_intervals` needs in its ``items`` argument
#: (``dataset`` is optional).
ITEM_COLUMNS: tuple[str, ...] = ("submission", "criterion", "item", "value")

@dataclass(frozen=True)
class ItemGroup:
    """The items of one resampling pool (dataset).

    Attributes
    ----------
    name : str
        The pool (dataset) name.
    n_items : int
        Number of distinct items in the pool.
    columns : numpy.ndarray
        Indices into :attr:`PreparedItems.columns` of the raw columns drawn from this pool (the criteria
        themselves when the table has no parts).
    values : numpy.ndarray
        ``(n_items, n_columns_in_group * n_systems)``, NaN where not observed.
    """

    name: str
    n_items: int
    columns: np.ndarray  # indices into PreparedItems.columns
    values: np.ndarray  # (n_items, n_columns_in_group * n_systems), NaN = not observed

    @functools.cached_property
    def filled(self) -> np.ndarray:
        """:attr:`values` with 0 where not observed (the sums' matrix), made once, not once per block."""
        return np.where(np.isnan(self.values), 0.0, self.values)

    @functools.cached_property
    def observed(self) -> np.ndarray | None:
        """1.0 where observed, 0.0 where not, as floats (the counts' matrix); ``None`` when all are."""
        obs = ~np.isnan(self.values)
        return None if obs.all() else obs.astype(float)

    @functools.cached_property
    def blocks(self) -> tuple[ObservedBlock, ...] | None:
        """The columns grouped by the items they observe, or ``None`` when one product over all is cheaper.

        A pool holds many tracks' criteria over one data set's items, each observing a few of them (on
        the board, a criterion's part observes 3–15 % of its pool's items, every model the same ones):
        the resampled sums then need only each group's items, and its counts are one row sum.
        """
        obs = ~np.isnan(self.values)
        n_items, n_cols = obs.shape
        if n_cols == 0 or obs.mean() > _DENSE_SHARE:
            return None
        pattern = _column_patterns(obs)
        if pattern.max() + 1 > max(1, n_cols // _MIN_COLUMNS_PER_BLOCK):
            return None
        order = np.argsort(pattern, kind="stable")
        starts = np.flatnonzero(np.diff(pattern[order], prepend=-1))
        out = []
        for cols in np.split(order, starts[1:]):
            rows = np.flatnonzero(obs[:, cols[0]])
            out.append(ObservedBlock(rows, cols, np.ascontiguousarray(self.values[np.ix_(rows, cols)])))
        return tuple(out)


@dataclass(frozen=True)
class ObservedBlock:
    """Columns of one pool that observe the same items: ``values[rows][:, cols]``, no NaN in it."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray


def _column_patterns(obs: np.ndarray) -> np.ndarray:
    """Label each column of a boolean matrix by its pattern (0, 1, …): equal labels for equal columns.

    Columns are hashed (their packed bits as 64-bit words, a fixed random weighting) and the labels
    checked against each pattern's first column, so a hash collision costs speed, never a wrong group.
    """
    packed = np.packbits(obs, axis=0)
    words = np.zeros(((len(packed) + 7) // 8 * 8, packed.shape[1]), dtype=np.uint8)
    words[: len(packed)] = packed
    words = np.ascontiguousarray(words.T).view(np.uint64)  # (columns, words)
    _, first, pattern = np.unique(_hash_rows(words), return_index=True, return_inverse=True)
    pattern = pattern.ravel()
    if not np.array_equal(words, words[first[pattern]]):  # a collision: group exactly, slowly
        pattern = np.unique(words, axis=0, return_inverse=True)[1].ravel()
    return pattern


def _hash_rows(words: np.ndarray) -> np.ndarray:
    """Hash each row of a ``uint64`` matrix to 64 bits (odd random weights, wrapping sums)."""
    weights = np.random.default_rng(0).integers(1, 2**63, size=words.shape[1], dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        return (words * weights).sum(axis=1, dtype=np.uint64)


#: Above this share of observed cells, one dense product beats per-block ones.
_DENSE_SHARE = 0.5
#: Below this many columns per block on average, the blocks' Python overhead beats the saved products.
_MIN_COLUMNS_PER_BLOCK = 8


@dataclass(frozen=True)
class PreparedItems:
    """Per-item results in canonical (sorted) array form.

    Attributes
    ----------
    systems : list of str
        Submissions, sorted.
    criteria : list of str
        Criteria, sorted: what Copeland ranks.
    weights : numpy.ndarray
        Weight per criterion (in :attr:`criteria` order).
    groups : tuple of ItemGroup
        One per resampling pool, in sorted pool order; their matrices hold the raw columns.
    layout : PartLayout or None
        How the raw columns make the criteria; ``None`` when no criterion has parts, and then the raw
        columns are the criteria.
    """

    systems: list[str]
    criteria: list[str]
    weights: np.ndarray
    groups: tuple[ItemGroup, ...]
    layout: PartLayout | None = None

    @property
    def columns(self) -> list[str]:
        """Names of the raw columns: a criterion without parts, or ``"<criterion>[<part>]"``."""
        if self.layout is None:
            return self.criteria
        return [
            self.criteria[c] if not p else f"{self.criteria[c]}[{p}]"
            for c, p in zip(self.layout.criterion.tolist(), self.layout.part, strict=True)
        ]


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Sorted integer codes of a column and its unique values as strings."""
    if isinstance(column.dtype, pd.CategoricalDtype) and not column.hasnans:
        # Through the categories, in the strings' order: factorize would sort a categorical by its
        # categories' order, and the bootstrap draws items in sorted id order.
        return text_codes(column, sort=True)
    codes, uniques = pd.factorize(column.astype(str) if column.dtype == object else column, sort=True)
    names = [str(u) for u in uniques]
    if len(set(names)) != len(names):  # e.g. 1 and "1" in one column
        codes, uniques = pd.factorize(column.astype(str), sort=True)
        names = [str(u) for u in uniques]
    return codes.astype(np.int64), names


def _optional_codes(items: pd.DataFrame, name: str, *, missing: str) -> tuple[np.ndarray, list[str]] | None:
    """Sorted codes and values of an optional text column, ``missing`` where empty; ``None`` without it."""
    if name not in items.columns:
        return None
    codes, names = text_codes(items[name], missing=missing)
    return recode(codes, [n or missing for n in names], sort=True)


def _name_list(names: list[str], mask: np.ndarray) -> list[str]:
    """Return the first few names where ``mask`` holds, for an error message."""
    return [names[i] for i in np.flatnonzero(mask)[:5]]


def _part_layout(
    items: pd.DataFrame, crit_code: np.ndarray, criteria: list[str]
) -> tuple[np.ndarray, PartLayout | None]:
    """Validate the optional ``part`` and ``combine`` columns; return each row's raw column and the layout.

    Without parts the raw columns are the criteria: the rows keep their criterion codes and the layout is
    ``None``, so that such a table is arranged exactly as before parts existed.
    """
    n_crit = len(criteria)
    part = _optional_codes(items, "part", missing="")
    has_part = np.zeros(n_crit, dtype=bool)
    if part is not None:
        named = np.array([p != "" for p in part[1]], dtype=float)[part[0]]
        with_part = np.bincount(crit_code, weights=named, minlength=n_crit)
        mixed = (with_part > 0) & (with_part < np.bincount(crit_code, minlength=n_crit))
        if mixed.any():
            raise ValueError(
                f"items: criteria {_name_list(criteria, mixed)} mix rows with and without a 'part'. A "
                "criterion's rows either all name a part or none does."
            )
        has_part = with_part > 0
    how = np.full(n_crit, "mean", dtype=object)
    combine = _optional_codes(items, "combine", missing="mean")
    if combine is not None:
        comb_code, comb_names = combine
        pairs = np.unique(crit_code * len(comb_names) + comb_code)
        pair_crit, pair_comb = np.divmod(pairs, len(comb_names))
        several = np.bincount(pair_crit, minlength=n_crit) > 1
        if several.any():
            c = int(np.flatnonzero(several)[0])
            raise ValueError(
                f"items: criterion {criteria[c]!r} has more than one 'combine' value "
                f"{[comb_names[k] for k in pair_comb[pair_crit == c]]} (empty = 'mean'); give one per "
                "criterion."
            )
        how[pair_crit] = np.array(comb_names, dtype=object)[pair_comb]
        unknown = ~np.isin(how, COMBINE_METHODS)
        if unknown.any():
            c = int(np.flatnonzero(unknown)[0])
            raise ValueError(
                f"items: criterion {criteria[c]!r} has an unknown 'combine' {how[c]!r}; expected one of "
                f"{list(COMBINE_METHODS)}."
            )
        plain = (how != "mean") & ~has_part
        if plain.any():
            raise ValueError(
                f"items: criteria {_name_list(criteria, plain)} combine with {sorted(set(how[plain]))} but "
                "have no 'part'; a criterion without parts is the mean of its items ('combine' empty or "
                "'mean')."
            )
    if part is None or not has_part.any():
        return crit_code, None
    part_code, part_names = part
    # Raw columns in (criterion, part) order: a criterion's parts are adjacent, and a criterion without
    # parts (part "") is one column.
    columns, col_code = np.unique(crit_code * len(part_names) + part_code, return_inverse=True)
    col_crit, col_part = np.divmod(columns, len(part_names))
    col_names = tuple(part_names[k] for k in col_part.tolist())
    combines = tuple(str(h) for h in how)
    # Checked here as well as in PartLayout so that the message names the criterion.
    absent = missing_reference(col_crit, col_names, combines)
    if absent:
        c = absent[0]
        raise ValueError(
            f"items: criterion {criteria[c]!r} combines by {combines[c]!r} but none of its parts "
            f"{sorted(set(col_names[k] for k in np.flatnonzero(col_crit == c).tolist()))[:5]} is of the "
            f"reference variant: the reference part must be called {REFERENCE!r} (or "
            f"'{REFERENCE}|<sub>', e.g. '{REFERENCE}|pos')."
        )
    layout = PartLayout(criterion=col_crit.astype(np.int64), part=col_names, combine=combines)
    return col_code.astype(np.int64).ravel(), layout


def prepare_items(items: pd.DataFrame, weights: pd.Series | None) -> PreparedItems:
    """Validate the per-item table and arrange it as one value matrix per resampling pool.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``, ``part`` and
        ``combine``; see the module docstring).
    weights : pandas.Series or None
        Weight per criterion; ``None`` weighs every criterion 1.

    Returns
    -------
    PreparedItems
        Systems, criteria, weights, the part layout (``None`` without parts) and one :class:`ItemGroup`
        per pool, all in sorted order.

    Raises
    ------
    TypeError
        If ``items`` is not a DataFrame or ``weights`` not a Series.
    ValueError
        If a column is missing, a value is not numeric or infinite, a (submission, criterion, part, item)
        row repeats, a criterion spans two pools, mixes rows with and without a part, has more than one
        or an unknown ``combine``, combines other than by ``"mean"`` without parts, or by
        ``"worst_drop*"`` without an ``"original"`` part, or a weight is missing, negative or not finite.
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
    col_code, layout = _part_layout(items, crit_code, criteria)
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
    # Without parts the raw columns are the criteria (col_code is crit_code).
    col_pool = crit_pool if layout is None else crit_pool[layout.criterion]
    groups: list[ItemGroup] = []
    item_col = items["item"]
    for g, name in enumerate(pools):
        rows = np.flatnonzero(pool_code == g)
        item_code, item_names = _codes(item_col.iloc[rows])
        col_idx = np.flatnonzero(col_pool == g)
        local = np.full(len(col_pool), -1, dtype=np.int64)
        local[col_idx] = np.arange(len(col_idx))
        col = local[col_code[rows]] * n_sys + sys_code[rows]
        flat = item_code * (len(col_idx) * n_sys) + col
        seen = np.bincount(flat, minlength=len(item_names) * len(col_idx) * n_sys)
        if seen.max(initial=0) > 1:
            first = rows[np.flatnonzero(seen[flat] > 1)[0]]
            key, part = "criterion", ""
            if layout is not None:
                key, part = "criterion, part", f"{layout.part[col_code[first]]!r}, "
            raise ValueError(
                f"items: duplicated (submission, {key}, item) rows, e.g. "
                f"({systems[sys_code[first]]!r}, {criteria[crit_code[first]]!r}, {part}"
                f"{str(item_col.iloc[first])!r}). "
                f"Each submission has at most one value per {key} and item; drop the repeats."
            )
        values = np.full((len(item_names), len(col_idx) * n_sys), np.nan)
        values[item_code, col] = value[rows]
        groups.append(ItemGroup(name=name, n_items=len(item_names), columns=col_idx, values=values))

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
    return PreparedItems(systems=systems, criteria=criteria, weights=w, groups=tuple(groups), layout=layout)


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
        filled, obs = group.filled, group.observed
        sums = filled.sum(axis=0)[None, :]
        nobs = obs.sum(axis=0)[None, :] if obs is not None else np.full_like(sums, group.n_items)
    elif group.blocks is not None:
        # Each block's items only: a column's count of drawn items is the row sum of its items' counts.
        sums = np.empty((len(counts), group.values.shape[1]))
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


def point_values(prep: PreparedItems) -> np.ndarray:
    """Return the full-data table as an array.

    Parameters
    ----------
    prep : PreparedItems
        Per-item results from :func:`prepare_items`.

    Returns
    -------
    numpy.ndarray
        ``(n_systems, n_criteria)`` values (see :func:`combine_parts`), NaN where a system has no item of
        a criterion.
    """
    n_sys = len(prep.systems)
    raw = np.full((1, n_sys, len(prep.columns)), np.nan)
    for group in prep.groups:
        raw[:, :, group.columns] = pool_means(None, group, n_sys)
    return combine_parts(raw, prep.layout)[0]


def point_table(items: pd.DataFrame) -> pd.DataFrame:
    """Per-criterion values of the per-item results: the table the bootstrap resamples.

    Parameters
    ----------
    items : pandas.DataFrame
        Per-item results with the columns :data:`ITEM_COLUMNS` (optionally ``dataset``, ``part`` and
        ``combine``; see the module docstring).

    Returns
    -------
    pandas.DataFrame
        Systems (index ``"submission"``, sorted) x criteria (sorted): the mean of each criterion's items
        per system, or for a criterion with parts the combination of its part means (rounded to 12
        decimals), NaN where a system has no item of a criterion.

    Raises
    ------
    ValueError
        If the table is malformed (see :func:`prepare_items`).

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
