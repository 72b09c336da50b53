"""Copeland ranking of systems over criteria, after Vote'n'Rank.

Each system is a candidate and each criterion (track, task, variant, metric) is a weighted
voter that prefers the system with the higher score. For every pair of systems the weighted
criteria each one wins are counted; the pair's weighted majority gives a win, a tie or a loss;
the Copeland score of a system is its number of pairwise wins minus its number of pairwise
losses (the leaderboard variant used by Vote'n'Rank). A Condorcet winner is a system that wins
every pairwise majority; one need not exist. The validation and the pairwise counts are
:class:`leaderboard.ranking.pairwise.Pairwise`'s; each function here is its formula over them.

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

from leaderboard.ranking.pairwise import Pairwise, ranked, rule_doc

__all__ = [
    "condorcet_winner",
    "copeland_ranking",
    "pairwise_majority",
    "pairwise_wins",
]


@rule_doc
def pairwise_wins(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Count, for each ordered pair of systems, the weighted criteria the first one wins.

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Systems x systems matrix; entry ``(a, b)`` is the total weight of the criteria on which
        ``a`` scores strictly higher than ``b``. The diagonal is 0.

    %(raises)s

    Notes
    -----
    With scores :math:`x_{s,c}` and weights :math:`w_c`,

    .. math:: W(a, b) = \sum_c w_c \, [x_{a,c} > x_{b,c}],

    where criteria with a missing score for ``a`` or ``b`` contribute nothing. Equal scores
    contribute to neither :math:`W(a, b)` nor :math:`W(b, a)`. The computation broadcasts over
    criteria, costing :math:`O(n^2 m)` time and memory for ``n`` systems and ``m`` criteria. These are
    Vote'n'Rank's pairwise counts (see the module's references), held by
    :class:`~leaderboard.ranking.pairwise.Pairwise`.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [1.0, 0.0], "c2": [0.0, 1.0], "c3": [1.0, None]}, index=["a", "b"])
    >>> pairwise_wins(t)
         a    b
    a  0.0  1.0
    b  1.0  0.0
    """
    pw = Pairwise.from_table(table, weights)
    return pw.frame(pw.wins)


@rule_doc
def pairwise_majority(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Decide every pair of systems by weighted majority over criteria.

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Systems x systems integer matrix: +1 where the row system wins the weighted majority
        against the column system, -1 where it loses, 0 for a tie (and on the diagonal). The
        matrix is antisymmetric.

    %(raises)s

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
    pw = Pairwise.from_table(table, weights)
    return pw.frame(pw.majority)


@rule_doc
def copeland_ranking(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Rank systems by Copeland score (pairwise-majority wins minus losses).

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system (index name ``"system"``), with integer columns

        - ``score``: ``wins - losses``;
        - ``wins``, ``losses``, ``ties``: number of other systems beaten, lost to and tied with
          on the weighted pairwise majority (they sum to ``n_systems - 1``);
        - ``rank``: 1 for the best score; tied scores share the minimum rank (1, 2, 2, 4).

        Rows are sorted by rank, then by system name.

    %(raises)s

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
    pw = Pairwise.from_table(table, weights)
    wins = (pw.majority == 1).sum(axis=1)
    losses = (pw.majority == -1).sum(axis=1)
    ties = np.maximum(pw.n - 1, 0) - wins - losses
    counts = {"wins": wins.astype(int), "losses": losses.astype(int), "ties": ties.astype(int)}
    return ranked(pw.index, (wins - losses).astype(int), higher_is_better=True, extra=counts)


@rule_doc
def condorcet_winner(table: pd.DataFrame, weights: pd.Series | None = None) -> str | None:
    """Return the system that beats every other system on weighted pairwise majority.

    %(parameters)s

    Returns
    -------
    str or None
        The Condorcet winner's name, or ``None`` when no system wins all its pairwise
        majorities (e.g. a cycle, or a tie with the runner-up) or the table has no rows. With a
        single system, that system is returned (it has no one to lose to).

    %(raises)s

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
    pw = Pairwise.from_table(table, weights)
    if pw.n == 0:
        return None
    winners = np.flatnonzero((pw.majority == 1).sum(axis=1) == pw.n - 1)
    if len(winners) != 1:
        return None
    return str(table.index[winners[0]])
