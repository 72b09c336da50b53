"""The pairwise comparison every ranking rule is a formula over, and the rules' shared pieces.

:class:`Pairwise` validates a systems x criteria table and its weights once and holds the weighted
pairwise counts of Vote'n'Rank (see :mod:`leaderboard.ranking.copeland`): ``wins[a, b]``, the weight of
the criteria on which ``a`` scores strictly higher than ``b``; ``observed[a, b]``, the weight observed for
both; ``ties``, the weight observed for both and equal; and ``majority``, the +1 / 0 / -1 weighted-majority
matrix. :meth:`Pairwise.from_arrays` is the array-level path for the bootstrap (no validation, no pandas).

Also here, so that each rule module states only its formulas: :func:`ranked`, which builds a rule's
output (``score``, extra columns, ``rank``, sorted by rank then system name), and :func:`fill_doc` with
the shared ``Parameters`` and ``Raises`` sections of the rules' docstrings.

Invariants
----------
- Input tables are systems (index) x criteria (columns), oriented higher-is-better; NaN means missing. A
  criterion missing for either system of a pair is ignored for that pair; equal scores count for neither.
- Pure and deterministic: no randomness, no I/O; the arrays are computed on first use and not modified.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

import numpy as np
import pandas as pd

__all__ = ["PARAMETERS_DOC", "RAISES_DOC", "Pairwise", "fill_doc", "ranked", "rule_doc", "validate"]

#: Relative tolerance under which two weighted win counts are considered equal, so that sums of
#: fractional weights (e.g. thirds) that are equal in exact arithmetic compare as a tie.
_TIE_RTOL = 1e-9

#: Upper bound on the number of cells of the temporary systems x systems x criteria array.
_BLOCK_CELLS = 1 << 22

#: Scores are rounded to this many decimals before ranking (ties in exact arithmetic stay ties).
_SCORE_DECIMALS = 9

#: The ``Parameters`` section shared by every rule taking ``(table, weights=None)``.
PARAMETERS_DOC = """\
Parameters
----------
table : pandas.DataFrame
    Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
weights : pandas.Series, optional
    Non-negative weight per criterion, indexed by the table's column names (extra entries are ignored).
    ``None`` (default) gives every criterion weight 1."""

#: The ``Raises`` section shared by every rule taking ``(table, weights=None)``.
RAISES_DOC = """\
Raises
------
TypeError
    If `table` is not a DataFrame or `weights` is neither ``None`` nor a Series.
ValueError
    If system or criterion names repeat, scores are not numeric, or a weight is missing, negative or not
    finite."""

_F = TypeVar("_F", bound=Callable[..., object])


def fill_doc(**blocks: str) -> Callable[[_F], _F]:
    r"""Substitute text blocks into a function's docstring, like pandas' ``Substitution``.

    Each line of the docstring that is exactly ``%(name)s`` (after its indentation) is replaced by the
    block ``name``, every line indented as the placeholder was. Other text, ``%`` included, is untouched.

    Parameters
    ----------
    **blocks : str
        The blocks by placeholder name, unindented.

    Returns
    -------
    callable
        A decorator returning the function itself with its ``__doc__`` filled in (left ``None`` under
        ``python -OO``).

    Examples
    --------
    >>> @fill_doc(params="Parameters\n----------\nx : int\n    A number.")
    ... def f(x):
    ...     '''Return x.
    ...
    ...     %(params)s
    ...     '''
    ...     return x
    >>> print(f.__doc__.splitlines()[4])
        x : int
    """

    def decorate(func: _F) -> _F:
        doc = func.__doc__
        if doc is not None:
            for name, text in blocks.items():
                pattern = re.compile(rf"^([ \t]*)%\({re.escape(name)}\)s[ \t]*$", re.MULTILINE)
                doc = pattern.sub(lambda m, text=text: textwrap.indent(text, m.group(1)), doc)
            func.__doc__ = doc
        return func

    return decorate


#: The decorator filling ``%(parameters)s`` and ``%(raises)s`` with the shared sections.
rule_doc = fill_doc(parameters=PARAMETERS_DOC, raises=RAISES_DOC)


def validate(table: pd.DataFrame, weights: pd.Series | None) -> tuple[np.ndarray, np.ndarray]:
    """Check a criteria table and its weights and return them as float arrays.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), higher is better, NaN = missing.
    weights : pandas.Series or None
        Non-negative weight per criterion (indexed by the table's columns); ``None`` gives every
        criterion weight 1.

    Returns
    -------
    values : numpy.ndarray
        The table as a ``(n_systems, n_criteria)`` float array.
    w : numpy.ndarray
        The weights aligned with the table's columns, shape ``(n_criteria,)``.

    Raises
    ------
    TypeError
        If `table` is not a DataFrame or `weights` is neither ``None`` nor a Series.
    ValueError
        If system or criterion names repeat, values are not numeric, or weights are missing,
        non-finite or negative.
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a pandas DataFrame, got {type(table).__name__}.")
    if not table.index.is_unique:
        dup = sorted(map(str, table.index[table.index.duplicated()].unique()))
        raise ValueError(
            f"table: system names must be unique, got duplicates {dup}. "
            "Aggregate or rename the repeated rows first."
        )
    if not table.columns.is_unique:
        dup = sorted(map(str, table.columns[table.columns.duplicated()].unique()))
        raise ValueError(
            f"table: criterion names must be unique, got duplicates {dup}. "
            "Give each criterion its own column name."
        )
    try:
        values = table.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"table: all scores must be numeric (NaN for missing); conversion failed: {exc}"
        ) from exc

    if weights is None:
        w = np.ones(table.shape[1], dtype=float)
    else:
        if not isinstance(weights, pd.Series):
            raise TypeError(f"weights must be a pandas Series or None, got {type(weights).__name__}.")
        missing = [c for c in table.columns if c not in weights.index]
        if missing:
            raise ValueError(
                f"weights: no weight for criteria {sorted(map(str, missing))[:10]}. "
                "Give a weight for every column of the table (0 to ignore a criterion)."
            )
        if not weights.index.is_unique:
            raise ValueError("weights: the index must be unique, one weight per criterion.")
        w = weights.reindex(table.columns).to_numpy(dtype=float)
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"weights: every weight must be finite and >= 0, got {w.tolist()[:10]}.")
    return values, w


@dataclass(frozen=True, eq=False)
class Pairwise:
    r"""Weighted pairwise comparison of the systems of one table, each array computed on first use.

    Parameters
    ----------
    values : numpy.ndarray
        ``(n_systems, n_criteria)`` float scores, higher is better, NaN = missing.
    w : numpy.ndarray
        ``(n_criteria,)`` non-negative weights.
    index : pandas.Index or None
        The system names (the table's index); ``None`` on the array-level path.

    Attributes
    ----------
    wins : numpy.ndarray
        ``(n, n)``: :math:`W(a, b) = \sum_c w_c [x_{a,c} > x_{b,c}]`, the weight of the criteria on which
        ``a`` scores strictly higher than ``b`` (comparisons with NaN are false; the diagonal is 0).
    observed : numpy.ndarray
        ``(n, n)``: the weight of the criteria observed for both systems.
    ties : numpy.ndarray
        ``(n, n)``: :math:`T(a, b)`, the weight observed for both and equal, ``observed - W - W^T`` with a
        zero diagonal.
    majority : numpy.ndarray
        ``(n, n)`` integers: +1 where the row wins the weighted majority against the column, -1 where it
        loses, 0 for a tie and on the diagonal. Margins within ``1e-9 * max(1, sum(w))`` are ties.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [2.0, 1.0], "c2": [2.0, 3.0], "c3": [5.0, None]}, index=["a", "b"])
    >>> pw = Pairwise.from_table(t)
    >>> pw.wins.tolist(), pw.ties.tolist(), pw.majority.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[0, 0], [0, 0]])
    """

    values: np.ndarray
    w: np.ndarray
    index: pd.Index | None = None

    @classmethod
    def from_table(cls, table: pd.DataFrame, weights: pd.Series | None = None) -> Pairwise:
        """Validate a table and its weights (see :func:`validate`) and wrap them.

        Parameters
        ----------
        table : pandas.DataFrame
            Systems (index) x criteria (columns), higher is better, NaN = missing.
        weights : pandas.Series or None, optional
            Non-negative weight per criterion; ``None`` gives every criterion weight 1.

        Returns
        -------
        Pairwise
            The comparison of the table's systems, ``index`` set to the table's index.
        """
        values, w = validate(table, weights)
        return cls(values, w, table.index)

    @classmethod
    def from_arrays(cls, values: np.ndarray, w: np.ndarray) -> Pairwise:
        """Wrap bare arrays without validation (the bootstrap's fast path).

        Parameters
        ----------
        values, w : numpy.ndarray
            The scores and weights, as the fields of the class.

        Returns
        -------
        Pairwise
            The comparison, with no ``index``.
        """
        return cls(values, w)

    @property
    def n(self) -> int:
        """Number of systems."""
        return self.values.shape[0]

    @cached_property
    def wins(self) -> np.ndarray:
        """Weighted criterion-win counts of every ordered pair, ``(n, n)``."""
        n, m = self.values.shape
        wins = np.zeros((n, n), dtype=float)
        # Broadcast over criteria: (k, 1, m) > (1, n, m). Comparisons with NaN are False, so a
        # criterion missing for either system counts for neither; equal scores are not ">".
        # Rows are processed in blocks to bound the temporary (k, n, m) array to ~_BLOCK_CELLS.
        step = max(1, _BLOCK_CELLS // max(1, n * m))
        for start in range(0, n, step):
            block = self.values[start : start + step]
            beats = block[:, None, :] > self.values[None, :, :]
            wins[start : start + step] = beats.astype(float) @ self.w
        return wins

    @cached_property
    def observed(self) -> np.ndarray:
        """Total weight of the criteria observed for both systems of every ordered pair, ``(n, n)``."""
        obs = (~np.isnan(self.values)).astype(float)
        return (obs * self.w) @ obs.T

    @cached_property
    def ties(self) -> np.ndarray:
        """Weight of the criteria observed for both systems and equal, ``(n, n)``, zero diagonal."""
        ties = self.observed - self.wins - self.wins.T
        np.fill_diagonal(ties, 0.0)
        return ties

    @cached_property
    def majority(self) -> np.ndarray:
        """The +1 / 0 / -1 weighted pairwise-majority matrix, ``(n, n)``."""
        margin = self.wins - self.wins.T
        tol = _TIE_RTOL * max(1.0, float(self.w.sum()))
        out = np.where(margin > tol, 1, np.where(margin < -tol, -1, 0)).astype(int)
        np.fill_diagonal(out, 0)
        return out

    def frame(self, matrix: np.ndarray) -> pd.DataFrame:
        """Label an ``(n, n)`` matrix with the system names as a systems x systems DataFrame.

        Parameters
        ----------
        matrix : numpy.ndarray
            One of the pairwise arrays (or any ``(n, n)`` array).

        Returns
        -------
        pandas.DataFrame
            Rows and columns indexed by (copies of) :attr:`index`.
        """
        return pd.DataFrame(matrix, index=self.index.copy(), columns=self.index.copy())


def ranked(
    index: pd.Index,
    score: np.ndarray,
    *,
    higher_is_better: bool,
    extra: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Build a rule's output: ``score``, extra columns and ``rank``, sorted by rank then system name.

    Parameters
    ----------
    index : pandas.Index
        The system names, in the order of `score`.
    score : numpy.ndarray
        One score per system; NaN ranks last.
    higher_is_better : bool
        Direction of `score`.
    extra : mapping of str to numpy.ndarray, optional
        Further columns, placed between ``score`` and ``rank``.

    Returns
    -------
    pandas.DataFrame
        Indexed by system (index name ``"system"``); ``rank`` is 1 for the best score rounded to 9
        decimals, tied scores sharing the minimum rank (1, 2, 2, 4). Sorted by rank, then by the system
        name's string form (stable for mixed label types).
    """
    out = pd.DataFrame({"score": score, **(extra or {})}, index=pd.Index(index.copy(), name="system"))
    rounded = pd.Series(np.round(np.asarray(score, dtype=float), _SCORE_DECIMALS), index=out.index)
    rank = rounded.rank(method="min", ascending=not higher_is_better, na_option="bottom")
    out["rank"] = rank.astype(int)
    order = np.lexsort((np.array([str(s) for s in out.index], dtype=object), out["rank"].to_numpy()))
    return out.iloc[order]
