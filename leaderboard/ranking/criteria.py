"""Turn long results rows into the systems x criteria table that Copeland ranks.

A criterion is one column ``"track/criterion/metric"`` (for example
``"amore/chebi20/kekule/acc_at_1"``). Values are oriented higher-is-better: a metric registered
as lower-is-better is negated. Default weights follow SPEC section 5 and Vote'n'Rank: each track
sums to 1, split evenly over that track's criteria (columns).

Invariants
----------
- Deterministic: rows of the table are sorted by submission, columns by name.
- Every (submission, column) pair appears at most once in the input; a repeat is an error, never
  silently averaged.
- Every metric must have a declared direction; an unknown metric is an error, never guessed.
- A criterion missing for a submission is NaN in the table (ignored pairwise by Copeland).

Side effects: none (pure function of its inputs).

References
----------
.. [1] Rofin et al. (2023), "Vote'n'Rank: Revision of Benchmarking with Social Choice Theory",
   EACL 2023. https://arxiv.org/abs/2210.05769
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

__all__ = ["REQUIRED_COLUMNS", "criteria_table"]

#: Columns ``criteria_table`` needs in its ``rows`` argument.
REQUIRED_COLUMNS: tuple[str, ...] = ("submission", "track", "criterion", "metric", "value")


def criteria_table(
    rows: pd.DataFrame, *, higher_is_better: Mapping[str, bool]
) -> tuple[pd.DataFrame, pd.Series]:
    """Pivot long results rows into an oriented criteria table with per-track weights.

    Parameters
    ----------
    rows : pandas.DataFrame
        Long results with at least the columns ``submission, track, criterion, metric, value``.
        ``criterion`` is a name unique within its track (e.g. ``"chebi20/kekule"``); ``value``
        is numeric, NaN meaning missing. Other columns are ignored.
    higher_is_better : Mapping[str, bool]
        Direction of every metric present in `rows`: ``True`` if larger values are better,
        ``False`` if smaller are (those values are negated).

    Returns
    -------
    table : pandas.DataFrame
        Submissions (index, named ``"submission"``, sorted) x criteria (columns named
        ``"track/criterion/metric"``, sorted), float values oriented higher-is-better, NaN where
        a submission has no value for a criterion.
    weights : pandas.Series
        Weight per column of `table` (same order, named ``"weight"``): each track's weights sum
        to 1, split evenly over that track's columns.

    Raises
    ------
    TypeError
        If `rows` is not a DataFrame.
    ValueError
        If a required column is missing, a metric has no entry in `higher_is_better`, a
        ``(submission, column)`` pair occurs more than once, or a value is not numeric.

    Notes
    -----
    For a track with :math:`k` criteria every criterion gets weight :math:`1 / k`, so each track
    has the same total say in the pairwise majorities regardless of how many criteria it has.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame(
    ...     {
    ...         "submission": ["a", "b", "a", "b", "a"],
    ...         "track": ["t1", "t1", "t1", "t1", "t2"],
    ...         "criterion": ["x", "x", "y", "y", "z"],
    ...         "metric": ["acc", "acc", "err", "err", "acc"],
    ...         "value": [0.9, 0.8, 0.1, 0.3, 0.5],
    ...     }
    ... )
    >>> table, weights = criteria_table(rows, higher_is_better={"acc": True, "err": False})
    >>> table  # doctest: +NORMALIZE_WHITESPACE
                t1/x/acc  t1/y/err  t2/z/acc
    submission
    a                0.9      -0.1       0.5
    b                0.8      -0.3       NaN
    >>> weights.to_dict()
    {'t1/x/acc': 0.5, 't1/y/err': 0.5, 't2/z/acc': 1.0}
    """
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"rows must be a pandas DataFrame, got {type(rows).__name__}.")
    missing_cols = [c for c in REQUIRED_COLUMNS if c not in rows.columns]
    if missing_cols:
        raise ValueError(
            f"rows: missing required columns {missing_cols}; got {list(map(str, rows.columns))}. "
            f"Results rows need the columns {list(REQUIRED_COLUMNS)}."
        )

    data = rows.loc[:, list(REQUIRED_COLUMNS)].copy()
    for col in ("submission", "track", "criterion", "metric"):
        data[col] = data[col].astype(str)

    unknown = sorted(set(data["metric"]) - set(higher_is_better))
    if unknown:
        raise ValueError(
            f"rows: metric(s) {unknown} have no direction in higher_is_better "
            f"(known: {sorted(higher_is_better)}). Register each metric with its "
            "higher_is_better flag before ranking."
        )

    try:
        values = pd.to_numeric(data["value"], errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rows: column 'value' must be numeric (NaN for missing): {exc}") from exc

    data["column"] = data["track"] + "/" + data["criterion"] + "/" + data["metric"]
    sign = data["metric"].map(lambda m: 1.0 if higher_is_better[m] else -1.0).astype(float)
    data["oriented"] = values.to_numpy() * sign.to_numpy()

    dup_mask = data.duplicated(subset=["submission", "column"], keep=False)
    if dup_mask.any():
        dups = (
            data.loc[dup_mask, ["submission", "column"]]
            .drop_duplicates()
            .sort_values(["submission", "column"])
        )
        pairs = [f"({s!r}, {c!r})" for s, c in dups.itertuples(index=False)]
        shown = ", ".join(pairs[:10]) + (f" and {len(pairs) - 10} more" if len(pairs) > 10 else "")
        raise ValueError(
            f"rows: duplicated (submission, track/criterion/metric) pairs: {shown}. "
            "Each submission must have at most one value per criterion; drop or aggregate "
            "the repeated rows first."
        )

    table = data.pivot(index="submission", columns="column", values="oriented")
    table = table.sort_index(axis=0).sort_index(axis=1).astype(float)
    table.index.name = "submission"
    table.columns.name = None

    col_track = data.drop_duplicates("column").set_index("column")["track"].reindex(table.columns)
    per_track = col_track.map(col_track.value_counts())
    weights = pd.Series(1.0 / per_track.to_numpy(dtype=float), index=table.columns.copy(), name="weight")
    return table, weights
