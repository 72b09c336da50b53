"""Text columns of large tables as integer codes and their few distinct strings.

The board's per-item tables have millions of rows and a handful of distinct values per text column (tracks,
tasks, templates, data sets, models). Converting per row made the site build's slowest steps; these helpers
convert each distinct value once and carry integer codes for the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd


def text_codes(column: pd.Series, *, missing: str = "", sort: bool = False) -> tuple[np.ndarray, list[str]]:
    """Each row's code and the distinct strings the codes stand for.

    ``names[codes[i]]`` is ``str(column[i])``, or ``missing`` where the value is missing. A categorical
    column is read through its categories; values whose strings are equal (``1`` and ``"1"``, a ``""``
    category and a missing value with ``missing=""``) share one code. With ``sort`` the names are only
    those that occur, in string order: the codes of ``pandas.factorize(strings, sort=True)``.
    """
    if not isinstance(column.dtype, pd.CategoricalDtype):
        column = column.astype("category")
    names = [str(c) for c in column.cat.categories]
    codes = column.cat.codes.to_numpy().astype(np.int64)
    absent = codes < 0
    if absent.any():
        codes[absent] = len(names)
        names.append(missing)
    return recode(codes, names, sort=sort)


def recode(codes: np.ndarray, names: list[str], *, sort: bool = False) -> tuple[np.ndarray, list[str]]:
    """Merge equal ``names`` into one code each; with ``sort``, keep the names that occur, in string order."""
    if sort:
        used = np.flatnonzero(np.bincount(codes, minlength=len(names))).tolist()
        distinct = sorted({names[u] for u in used})
    else:
        distinct = list(dict.fromkeys(names))
    if distinct == names:
        return codes, names
    position = {n: i for i, n in enumerate(distinct)}
    lookup = np.array([position.get(n, -1) for n in names], dtype=np.int64)
    return lookup[codes], distinct


def text_values(column: pd.Series, convert: Callable[[str], Any] = str) -> np.ndarray:
    """``convert(str(value))`` of every row as an object array, ``convert("")`` where missing.

    Each distinct value is converted once.
    """
    codes, names = text_codes(column)
    return np.array([convert(n) for n in names] or [convert("")], dtype=object)[codes]
