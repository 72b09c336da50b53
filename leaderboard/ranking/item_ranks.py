"""Per-item results from a retrieval track's ranks: the rows the rank bootstrap resamples.

:func:`item_values_from_ranks` turns the ``item_ranks`` table
(:meth:`leaderboard.store.ResultStore.export_item_ranks`) into the long table described in
:mod:`leaderboard.ranking.item_table`. Pure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["item_values_from_ranks"]


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
