"""Criteria made of parts: how per-part means combine into a criterion's value (the rank bootstrap's).

Most criteria of the rank bootstrap (:mod:`leaderboard.ranking.uncertainty`) are item means. A criterion
that is a function of several per-item means — the prompt robustness track's mean or spread over templates,
the downstream track's RMSE (``"root"``), its worst-case degradation over rewritten test sets
(``"worst_drop"``, ``"worst_drop_root"``) or its score on the worst rewritten test set
(``"worst_variant"``, ``"worst_variant_root"``) — has *parts*; :class:`PartLayout` says which raw
column belongs to which criterion and part, and :func:`combine_parts` turns the raw columns' means into the
criteria's values. The methods are described in :mod:`leaderboard.ranking.item_table` (its "Criteria made of
parts" section), which validates the ``part`` and ``combine`` columns. Everything here is pure.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "COMBINE_METHODS",
    "MEAN_DECIMALS",
    "REFERENCE",
    "PartLayout",
    "combine_parts",
    "missing_reference",
    "variant_of",
]

#: Decimals kept in per-criterion means (identical items => exactly equal means).
MEAN_DECIMALS = 12
#: Values of the optional ``combine`` column: how a criterion's part means make its value.
COMBINE_METHODS: tuple[str, ...] = (
    "mean",
    "range",
    "min",
    "root",
    "worst_drop",
    "worst_drop_root",
    "worst_variant",
    "worst_variant_root",
)
#: The combine methods that compare variants of a criterion with its ``"original"`` variant.
WORST_DROP: tuple[str, ...] = ("worst_drop", "worst_drop_root")
#: The combine methods that take the worst variant's value (its sub-parts averaged, the root taken after).
WORST_VARIANT: tuple[str, ...] = ("worst_variant", "worst_variant_root")
#: The variant of a ``"worst_drop*"`` criterion that the others are compared with.
REFERENCE = "original"


def variant_of(part: str) -> str:
    """Return the variant of a part name: the text before its first ``|``."""
    return part.split("|", 1)[0]


def missing_reference(criterion: np.ndarray, part: tuple[str, ...], combine: tuple[str, ...]) -> list[int]:
    """Return the ``"worst_drop*"`` criteria (indices) that have no part of the ``"original"`` variant."""
    return [
        c
        for c, how in enumerate(combine)
        if how in WORST_DROP
        and not any(variant_of(part[k]) == REFERENCE for k in np.flatnonzero(criterion == c).tolist())
    ]


@dataclass(frozen=True)
class PartLayout:
    """How the raw columns of a table with parts make its criteria.

    Attributes
    ----------
    criterion : numpy.ndarray
        ``(n_columns,)`` integers: the index into :attr:`PreparedItems.criteria` of each raw column's
        criterion; non-decreasing, every criterion has at least one column.
    part : tuple of str
        The part of each raw column (``""`` for a criterion without parts).
    combine : tuple of str
        Per criterion, one of :data:`COMBINE_METHODS`.

    Raises
    ------
    ValueError
        If the arrays disagree in length, a criterion has no column or its columns are not adjacent, a
        method is unknown, or a ``"worst_drop*"`` criterion has no ``"original"`` variant.
    """

    criterion: np.ndarray
    part: tuple[str, ...]
    combine: tuple[str, ...]

    def __post_init__(self) -> None:
        crit = np.asarray(self.criterion)
        if crit.ndim != 1 or len(crit) != len(self.part):
            raise ValueError("PartLayout: 'criterion' and 'part' must give one entry per raw column.")
        if not np.array_equal(np.unique(crit), np.arange(len(self.combine))) or np.any(np.diff(crit) < 0):
            raise ValueError(
                "PartLayout: 'criterion' must number the criteria 0, 1, ... in non-decreasing order, each "
                "criterion owning at least one raw column."
            )
        unknown = sorted(set(self.combine) - set(COMBINE_METHODS))
        if unknown:
            raise ValueError(
                f"PartLayout: unknown combine {unknown}; expected one of {list(COMBINE_METHODS)}."
            )
        absent = missing_reference(crit, self.part, self.combine)
        if absent:
            c = absent[0]
            raise ValueError(
                f"PartLayout: criterion {c} combines by {self.combine[c]!r} but has no part of variant "
                f"{REFERENCE!r}; the reference part must be called {REFERENCE!r} (or "
                f"'{REFERENCE}|<sub>')."
            )

    def starts(self) -> np.ndarray:
        """Return the index of each criterion's first raw column."""
        return np.searchsorted(np.asarray(self.criterion), np.arange(len(self.combine)))


def _root(mean: np.ndarray) -> np.ndarray:
    """Return ``-sqrt(-mean)``: minus the RMSE when ``mean`` is a mean of negated squared errors.

    A positive mean cannot come from such items; it counts as 0 rather than making NaN. NaN stays NaN.
    """
    # ``+ 0.0`` turns the -0.0 of a zero error into +0.0, so that it prints and hashes as 0.
    return -np.sqrt(np.maximum(-mean, 0.0)) + 0.0


def _nan_mean(raw: np.ndarray) -> np.ndarray:
    """Mean over the last axis of the entries that are not NaN (NaN if none), without a warning."""
    obs = ~np.isnan(raw)
    n = obs.sum(axis=-1)
    sums = np.where(obs, raw, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, sums / np.where(n > 0, n, 1), np.nan)


def _variant_values(raw: np.ndarray, parts: tuple[str, ...], *, root: bool) -> dict[str, np.ndarray]:
    """Each variant's value: the mean of its sub-parts' means (``-sqrt(-m)`` of it when ``root``)."""
    variants = np.array([variant_of(p) for p in parts], dtype=object)
    value = {}
    # Variants are grouped by mask, not by position: sorted part names need not keep a variant's parts
    # adjacent ("a", "a2|x", "a|y" sort in that order).
    for v in sorted(set(variants.tolist())):
        m = _nan_mean(raw[:, :, variants == v])
        value[v] = _root(m) if root else m
    return value


def _worst_variant(raw: np.ndarray, parts: tuple[str, ...], *, root: bool) -> np.ndarray:
    """Return the least value over a criterion's variants (``(n_rep, n_systems)``; NaN if all are NaN)."""
    value = _variant_values(raw, parts, root=root)
    return np.fmin.reduce(np.stack([value[v] for v in sorted(value)], axis=-1), axis=-1)


def _worst_drop(raw: np.ndarray, parts: tuple[str, ...], *, root: bool) -> np.ndarray:
    """Return minus the worst degradation of a criterion's variants from its ``"original"`` variant.

    Parameters
    ----------
    raw : numpy.ndarray
        ``(n_rep, n_systems, n_parts)`` part means of one criterion.
    parts : tuple of str
        The criterion's part names, ``"<variant>"`` or ``"<variant>|<sub>"``; one variant is
        ``"original"``.
    root : bool
        Whether a variant's value is ``-sqrt(-m)`` of its sub-parts' mean ``m`` rather than ``m``.

    Returns
    -------
    numpy.ndarray
        ``(n_rep, n_systems)``: ``min(value_v - value_original)`` over the other variants, skipping NaN
        (NaN when the original or every other variant is NaN).
    """
    value = _variant_values(raw, parts, root=root)
    reference = value.pop(REFERENCE)
    if not value:
        return np.full(raw.shape[:2], np.nan)
    drops = np.stack([value[v] - reference for v in sorted(value)], axis=-1)
    # fmin skips NaN: a variant a system has no item of does not count; all NaN gives NaN.
    return np.fmin.reduce(drops, axis=-1)


def combine_parts(raw: np.ndarray, layout: PartLayout | None) -> np.ndarray:
    """Turn raw column means into the criteria's values.

    Parameters
    ----------
    raw : numpy.ndarray
        ``(n_rep, n_systems, n_columns)`` means of the raw columns (:attr:`PreparedItems.columns`), as
        :func:`pool_means` gives them; NaN where a system has no item of a column.
    layout : PartLayout or None
        How the raw columns make the criteria (:attr:`PreparedItems.layout`); ``None`` when the raw
        columns are the criteria.

    Returns
    -------
    numpy.ndarray
        ``(n_rep, n_systems, n_criteria)``. Per criterion: ``"mean"``, the mean of its columns that are
        not NaN (NaN if none); ``"range"``, minus the range (max - min) of those columns (NaN if none, 0
        if one); ``"min"``, the least of those columns (the worst part; NaN if none); ``"root"``,
        ``-sqrt(-mean)``; ``"worst_drop"`` and ``"worst_drop_root"``, the least
        difference between a variant's value and the ``"original"`` variant's (see the module
        docstring); ``"worst_variant"`` and ``"worst_variant_root"``, the least variant value (a
        variant's value the mean of its ``"<variant>|<sub>"`` parts, its root taken for ``_root``).
        A criterion with one column and ``"mean"`` is that column as is; other values are rounded to
        :data:`MEAN_DECIMALS` decimals. Without a layout, ``raw`` itself is returned.

    Raises
    ------
    ValueError
        If ``raw`` is not 3-dimensional with one column per raw column of the layout.

    Examples
    --------
    >>> import numpy as np
    >>> layout = PartLayout(criterion=np.array([0, 0, 0, 1, 1]), part=("t1", "t2", "t3", "t1", "t2"),
    ...                     combine=("mean", "range"))
    >>> combine_parts(np.array([[[0.2, 0.4, np.nan, -3.0, -1.0]]]), layout).tolist()
    [[[0.3, -2.0]]]
    >>> layout = PartLayout(criterion=np.array([0, 0, 0]), part=("t1", "t2", "t3"), combine=("min",))
    >>> combine_parts(np.array([[[0.2, 0.4, np.nan]]]), layout).tolist()
    [[[0.2]]]
    >>> layout = PartLayout(criterion=np.array([0, 1, 1, 1]), part=("all", "kekule", "original", "smiles"),
    ...                     combine=("root", "worst_drop"))
    >>> combine_parts(np.array([[[-4.0, 0.5, 0.75, 0.875]]]), layout).tolist()
    [[[-2.0, -0.25]]]
    >>> layout = PartLayout(criterion=np.array([0, 0, 0, 0]), part=("a|neg", "a|pos", "b|neg", "b|pos"),
    ...                     combine=("worst_variant",))
    >>> combine_parts(np.array([[[0.6, 0.8, 0.9, 0.9]]]), layout).tolist()
    [[[0.7]]]
    """
    if layout is None:
        return raw
    raw = np.asarray(raw, dtype=float)
    n_cols = len(layout.part)
    if raw.ndim != 3 or raw.shape[2] != n_cols:
        raise ValueError(
            f"combine_parts: raw must be (n_rep, n_systems, {n_cols}) for this layout, got {raw.shape}."
        )
    starts = layout.starts()
    ends = np.append(starts[1:], n_cols)
    single = ends - starts == 1
    how = np.array(layout.combine, dtype=object)
    is_range = how == "range"
    worst = np.isin(how, WORST_DROP + WORST_VARIANT)
    out = np.empty((*raw.shape[:2], len(starts)))
    # A one-part mean is its part mean, copied rather than recomputed so that it stays bit-identical to
    # the same criterion given without parts.
    copy = single & (how == "mean")
    out[:, :, copy] = raw[:, :, starts[copy]]
    reduced = ~copy & ~worst
    if reduced.any():
        obs = ~np.isnan(raw)
        n = np.add.reduceat(obs, starts, axis=2, dtype=float)
        sums = np.add.reduceat(np.where(obs, raw, 0.0), starts, axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(n > 0, sums / np.where(n > 0, n, 1.0), np.nan)
        # fmin/fmax skip NaN (NaN only when every part is NaN); min - max is the negated range and is +0.0,
        # not -0.0, for a single part. Each is reduced only when a criterion asks for it (the replicates
        # pass through here: millions of cells per block).
        is_min = how == "min"
        least = np.fmin.reduceat(raw, starts, axis=2) if (is_range | is_min).any() else None
        values = mean
        if is_range.any():
            values = np.where(is_range, least - np.fmax.reduceat(raw, starts, axis=2), values)
        if is_min.any():
            values = np.where(is_min, least, values)
        is_root = how == "root"
        if is_root.any():
            values = np.where(is_root, _root(mean), values)
        values = np.round(values, MEAN_DECIMALS)
        out[:, :, reduced] = values[:, :, reduced]
    # Few criteria compare variants, so a loop over them costs little.
    for c in np.flatnonzero(worst).tolist():
        cols = slice(int(starts[c]), int(ends[c]))
        root = str(how[c]).endswith("_root")
        if how[c] in WORST_VARIANT:
            value = _worst_variant(raw[:, :, cols], layout.part[cols], root=root)
        else:
            value = _worst_drop(raw[:, :, cols], layout.part[cols], root=root)
        out[:, :, c] = np.round(value, MEAN_DECIMALS)
    return out
