"""Per-item results: the long table the rank bootstrap resamples, and its canonical array form.

The table has one row per (submission, criterion, item) — per (submission, criterion, part, item) for a
criterion made of parts (below) — with the columns :data:`ITEM_COLUMNS` —
``criterion`` a criteria-table column such as ``"amore/chebi20/kekule/acc_at_1"``, ``item`` the molecule
id, ``value`` the item's score oriented higher-is-better (for Acc@1, 1.0 when the true match has rank 1,
else 0.0; a tied rank of 1.5 is a miss). An optional ``dataset`` column names the pool items are resampled
from; without it, it is the criterion's second ``/`` field (``chebi20``).

- :func:`leaderboard.ranking.item_ranks.item_values_from_ranks` builds the table from
  :meth:`leaderboard.store.ResultStore.export_item_ranks`.
- :func:`prepare_items` validates it and arranges it as one pool of items per resampling pool
  (:class:`PreparedItems`, :class:`~leaderboard.ranking.item_pools.ItemGroup`: the observed cells of an
  items x columns matrix), systems, criteria, parts, pools and items in sorted order, so the input's row
  order does not matter. The columns are the *raw columns*: one per criterion without parts, one per
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

from dataclasses import dataclass

import numpy as np
import pandas as pd

from leaderboard.frames import recode, text_codes
from leaderboard.ranking.item_pools import ItemGroup, pool_means
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
        One per resampling pool, in sorted pool order; their cells hold the raw columns.
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
    """Validate the per-item table and arrange it as one pool of observed cells per resampling pool.

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
    if "dataset" in items.columns:  # each distinct name converted once (millions of rows, a few pools)
        pool_code, pools = text_codes(items["dataset"], missing="nan", sort=True)
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
        width = len(col_idx) * n_sys
        flat = item_code * width + col
        cells, cell_values, repeat = _pool_cells(flat, value[rows], len(item_names) * width)
        if repeat is not None:
            first = rows[repeat]
            key, part = "criterion", ""
            if layout is not None:
                key, part = "criterion, part", f"{layout.part[col_code[first]]!r}, "
            raise ValueError(
                f"items: duplicated (submission, {key}, item) rows, e.g. "
                f"({systems[sys_code[first]]!r}, {criteria[crit_code[first]]!r}, {part}"
                f"{str(item_col.iloc[first])!r}). "
                f"Each submission has at most one value per {key} and item; drop the repeats."
            )
        groups.append(ItemGroup(name, len(item_names), col_idx, width, cells, cell_values))

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


def _pool_cells(flat: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, int | None]:
    """Sort a pool's cells (flat indices < ``size``) with their values; name the first repeated row.

    Returns the ascending cells, their values and the position in ``flat`` of the first row whose cell
    another row has too (``None`` when none has). A mostly observed pool is laid out in one pass over its
    matrix; a sparse one (most of the board's pools) is sorted, never holding a matrix of its size.
    """
    if len(flat) > 0.5 * size:
        seen = np.bincount(flat, minlength=size)
        twice = np.flatnonzero(seen[flat] > 1)
        cells = np.flatnonzero(seen)
        dense = np.empty(size)
        dense[flat] = values
        return cells, dense[cells], (int(twice[0]) if len(twice) else None)
    order = np.argsort(flat, kind="stable")
    cells = flat[order]
    repeated = cells[1:] == cells[:-1]
    if not repeated.any():
        return cells, values[order], None
    twice = np.zeros(len(cells), dtype=bool)
    twice[1:] |= repeated
    twice[:-1] |= repeated
    return cells, values[order], int(order[twice].min())


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
