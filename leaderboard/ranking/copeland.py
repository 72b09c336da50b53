"""Copeland ranking of systems over criteria, after Vote'n'Rank.

Each system is a candidate and each criterion (track, task, variant, metric) is a weighted
voter that prefers the system with the higher score. For every pair of systems the weighted
criteria each one wins are counted; the pair's weighted majority gives a win, a tie or a loss;
the Copeland score of a system is its number of pairwise wins minus its number of pairwise
losses (the leaderboard variant used by Vote'n'Rank). A Condorcet winner is a system that wins
every pairwise majority; one need not exist.

Invariants
----------
- Input tables are systems (index) x criteria (columns), oriented higher-is-better; NaN means
  missing. A criterion missing for either system of a pair is ignored for that pair, and equal
  scores count for neither system.
- Everything is deterministic: no randomness, output sorted by rank then system name.
- Pure functions of their inputs; no side effects, no I/O.

References
----------
.. [1] Rofin, M., Mikhailov, V., Florinsky, M., Kravchenko, A., Shavrina, T., Tutubalina, E.,
   Karabekyan, D. and Artemova, E. (2023). "Vote'n'Rank: Revision of Benchmarking with Social
   Choice Theory". Proceedings of EACL 2023. https://arxiv.org/abs/2210.05769
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "condorcet_winner",
    "copeland_ranking",
    "pairwise_majority",
    "pairwise_wins",
]

#: Relative tolerance under which two weighted win counts are considered equal, so that sums of
#: fractional weights (e.g. thirds) that are equal in exact arithmetic compare as a tie.
_TIE_RTOL = 1e-9

#: Upper bound on the number of cells of the temporary systems x systems x criteria array.
_BLOCK_CELLS = 1 << 22


def _validate(table: pd.DataFrame, weights: pd.Series | None) -> tuple[np.ndarray, np.ndarray]:
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


def _wins_array(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted criterion-win counts for every ordered pair of systems.

    Parameters
    ----------
    values : numpy.ndarray
        ``(n_systems, n_criteria)`` scores, higher is better, NaN = missing.
    w : numpy.ndarray
        ``(n_criteria,)`` non-negative weights.

    Returns
    -------
    numpy.ndarray
        ``(n_systems, n_systems)`` array whose ``[a, b]`` entry is the total weight of the
        criteria on which system ``a`` scores strictly higher than system ``b``.
    """
    n, m = values.shape
    wins = np.zeros((n, n), dtype=float)
    # Broadcast over criteria: (k, 1, m) > (1, n, m). Comparisons with NaN are False, so a
    # criterion missing for either system counts for neither; equal scores are not ">".
    # Rows are processed in blocks to bound the temporary (k, n, m) array to ~_BLOCK_CELLS.
    step = max(1, _BLOCK_CELLS // max(1, n * m))
    for start in range(0, n, step):
        block = values[start : start + step]
        beats = block[:, None, :] > values[None, :, :]
        wins[start : start + step] = beats.astype(float) @ w
    return wins


def _majority_array(wins: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Turn weighted win counts into a +1 / 0 / -1 pairwise-majority matrix.

    Parameters
    ----------
    wins : numpy.ndarray
        ``(n, n)`` weighted win counts from :func:`_wins_array`.
    w : numpy.ndarray
        The criterion weights, used to scale the tie tolerance.

    Returns
    -------
    numpy.ndarray
        ``(n, n)`` integer array: +1 where the row wins the weighted majority against the column,
        -1 where it loses, 0 for a tie and on the diagonal.
    """
    margin = wins - wins.T
    tol = _TIE_RTOL * max(1.0, float(w.sum()))
    out = np.where(margin > tol, 1, np.where(margin < -tol, -1, 0)).astype(int)
    np.fill_diagonal(out, 0)
    return out


def pairwise_wins(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Count, for each ordered pair of systems, the weighted criteria the first one wins.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing
        score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's column names (extra entries
        are ignored). ``None`` (default) gives every criterion weight 1.

    Returns
    -------
    pandas.DataFrame
        Systems x systems matrix; entry ``(a, b)`` is the total weight of the criteria on which
        ``a`` scores strictly higher than ``b``. The diagonal is 0.

    Raises
    ------
    ValueError
        If system or criterion names repeat, scores are not numeric, or a weight is missing,
        negative or not finite.

    Notes
    -----
    With scores :math:`x_{s,c}` and weights :math:`w_c`,

    .. math:: W(a, b) = \sum_c w_c \, [x_{a,c} > x_{b,c}],

    where criteria with a missing score for ``a`` or ``b`` contribute nothing. Equal scores
    contribute to neither :math:`W(a, b)` nor :math:`W(b, a)`. The computation broadcasts over
    criteria, costing :math:`O(n^2 m)` time and memory for ``n`` systems and ``m`` criteria.

    References
    ----------
    .. [1] Rofin et al. (2023), "Vote'n'Rank: Revision of Benchmarking with Social Choice
       Theory", EACL 2023.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [1.0, 0.0], "c2": [0.0, 1.0], "c3": [1.0, None]}, index=["a", "b"])
    >>> pairwise_wins(t)
         a    b
    a  0.0  1.0
    b  1.0  0.0
    """
    values, w = _validate(table, weights)
    wins = _wins_array(values, w)
    return pd.DataFrame(wins, index=table.index.copy(), columns=table.index.copy())


def pairwise_majority(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Decide every pair of systems by weighted majority over criteria.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing
        score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's column names. ``None``
        (default) gives every criterion weight 1.

    Returns
    -------
    pandas.DataFrame
        Systems x systems integer matrix: +1 where the row system wins the weighted majority
        against the column system, -1 where it loses, 0 for a tie (and on the diagonal). The
        matrix is antisymmetric.

    Raises
    ------
    ValueError
        As :func:`pairwise_wins`.

    Notes
    -----
    ``M(a, b) = sign(W(a, b) - W(b, a))`` with ``W`` from :func:`pairwise_wins`. Differences
    within ``1e-9 * max(1, sum(weights))`` count as ties, so that fractional weights that are
    equal in exact arithmetic (e.g. three thirds against one) do not decide a pair by rounding
    error. A pair with no criterion observed for both systems is a tie.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [2.0, 1.0], "c2": [2.0, 3.0], "c3": [5.0, 4.0]}, index=["a", "b"])
    >>> pairwise_majority(t)
       a  b
    a  0  1
    b -1  0
    """
    values, w = _validate(table, weights)
    maj = _majority_array(_wins_array(values, w), w)
    return pd.DataFrame(maj, index=table.index.copy(), columns=table.index.copy())


def copeland_ranking(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Rank systems by Copeland score (pairwise-majority wins minus losses).

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing
        score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's column names. ``None``
        (default) gives every criterion weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system (index name ``"system"``), with integer columns

        - ``score``: ``wins - losses``;
        - ``wins``, ``losses``, ``ties``: number of other systems beaten, lost to and tied with
          on the weighted pairwise majority (they sum to ``n_systems - 1``);
        - ``rank``: 1 for the best score; tied scores share the minimum rank (1, 2, 2, 4).

        Rows are sorted by rank, then by system name.

    Raises
    ------
    ValueError
        As :func:`pairwise_wins`.

    See Also
    --------
    pairwise_majority : The win / tie / loss matrix the score is computed from.
    condorcet_winner : The system that wins every pairwise majority, if any.

    Notes
    -----
    Vote'n'Rank's leaderboard variant of the Copeland rule [1]_:

    .. math:: \mathrm{Copeland}(a) = \#\{b : M(a, b) = 1\} - \#\{b : M(a, b) = -1\}.

    References
    ----------
    .. [1] Rofin et al. (2023), "Vote'n'Rank: Revision of Benchmarking with Social Choice
       Theory", EACL 2023.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame(
    ...     {"c1": [3.0, 2.0, 1.0], "c2": [3.0, 1.0, 2.0]}, index=["x", "y", "z"]
    ... )
    >>> copeland_ranking(t)  # doctest: +NORMALIZE_WHITESPACE
            score  wins  losses  ties  rank
    system
    x           2     2       0     0     1
    y          -1     0       1     1     2
    z          -1     0       1     1     2
    """
    values, w = _validate(table, weights)
    maj = _majority_array(_wins_array(values, w), w)
    wins = (maj == 1).sum(axis=1)
    losses = (maj == -1).sum(axis=1)
    n = len(table.index)
    ties = np.maximum(n - 1, 0) - wins - losses
    index = pd.Index(table.index.copy(), name="system")
    out = pd.DataFrame(
        {
            "score": (wins - losses).astype(int),
            "wins": wins.astype(int),
            "losses": losses.astype(int),
            "ties": ties.astype(int),
        },
        index=index,
    )
    out["rank"] = out["score"].rank(method="min", ascending=False).astype(int)
    # Sort by rank, then by the system name's string form (stable for mixed label types).
    order = np.lexsort((np.array([str(s) for s in out.index], dtype=object), out["rank"].to_numpy()))
    return out.iloc[order]


def condorcet_winner(table: pd.DataFrame, weights: pd.Series | None = None) -> str | None:
    """Return the system that beats every other system on weighted pairwise majority.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing
        score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's column names. ``None``
        (default) gives every criterion weight 1.

    Returns
    -------
    str or None
        The Condorcet winner's name, or ``None`` when no system wins all its pairwise
        majorities (e.g. a cycle, or a tie with the runner-up) or the table has no rows. With a
        single system, that system is returned (it has no one to lose to).

    Raises
    ------
    ValueError
        As :func:`pairwise_wins`.

    Notes
    -----
    At most one system can win every pairwise majority, so the result is unique when it
    exists. The Condorcet winner, when present, is always ranked first by Copeland.

    Examples
    --------
    >>> import pandas as pd
    >>> cycle = pd.DataFrame(
    ...     {"v1": [3, 2, 1], "v2": [1, 3, 2], "v3": [2, 1, 3]}, index=["rock", "paper", "scissors"]
    ... )
    >>> condorcet_winner(cycle) is None
    True
    >>> condorcet_winner(cycle.drop(index="scissors"))
    'rock'
    """
    values, w = _validate(table, weights)
    n = values.shape[0]
    if n == 0:
        return None
    maj = _majority_array(_wins_array(values, w), w)
    winners = np.flatnonzero((maj == 1).sum(axis=1) == n - 1)
    if len(winners) != 1:
        return None
    return str(table.index[winners[0]])
