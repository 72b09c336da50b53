"""Ranking rules over a systems x criteria table, after Vote'n'Rank (SPEC section 5).

Every rule is a pure function ``rule(table, weights=None) -> DataFrame`` over a table of systems (index) x
criteria (columns) oriented higher-is-better, with NaN for a missing score and an optional non-negative
weight per criterion (``None``: every criterion weighs 1). The result is indexed by system (index name
``"system"``) with at least the columns ``score`` and ``rank`` (1 = best; equal scores share the minimum
rank, 1, 2, 2, 4), rows sorted by rank then system name. :data:`RULES` maps each rule's name to its
function:

- ``copeland``: pairwise-majority wins minus losses (Vote'n'Rank's leaderboard variant; the ranking of
  record, from :func:`leaderboard.ranking.copeland.copeland_ranking`);
- ``copeland_half_ties``: wins + 1/2 ties (Vote'n'Rank's other variant; with ``n`` systems it equals
  ``(n - 1) / 2 + (wins - losses) / 2``, so it always gives the same ranks as ``copeland``);
- ``borda``: weighted Borda count, criterion by criterion, with half a point per tie;
- ``minimax``: minus the system's largest pairwise defeat margin (margins variant);
- ``mean_rank``: weighted mean of the system's per-criterion ranks (lower is better);
- ``mean``: weighted arithmetic mean of the raw scores (the usual benchmark average).

:func:`compare_rules` puts every rule's rank side by side with the change against Copeland, and marks the
Condorcet winner when one exists.

Missing values and weights
--------------------------
The pairwise rules (Copeland, Borda, Minimax) count, for each pair of systems, only the criteria observed
for both (as Copeland does); equal scores count for neither (Copeland, Minimax) or half for each (Borda).
Borda is therefore the sum over opponents of the pairwise criterion wins plus half the pairwise ties, which
is the textbook Borda count (``n - position`` points per criterion, averaged over tied positions) when
nothing is missing. The averaging rules (mean rank, mean) average a system over the criteria it has, with
the weights renormalised over those criteria; per-criterion ranks are taken among the systems observed on
that criterion (average rank for ties). A system with no observed criterion of positive weight has score
NaN under the averaging rules and is ranked last.

Invariants
----------
- Deterministic, no randomness, no I/O, no side effects.
- Scores are compared after rounding to 9 decimals, so sums of fractional weights that are equal in exact
  arithmetic (three thirds against one) rank as ties.
- Each rule is its formula over :class:`leaderboard.ranking.pairwise.Pairwise`, which validates the table
  and weights once and holds the pairwise counts (wins, criteria observed for both, ties, majority).

References
----------
Vote'n'Rank (Rofin et al., EACL 2023), cited in full in :mod:`leaderboard.ranking.copeland`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from leaderboard.ranking.copeland import condorcet_winner, copeland_ranking
from leaderboard.ranking.pairwise import Pairwise, ranked, rule_doc
from leaderboard.ranking.rank_bits import copeland_scores

__all__ = [
    "HIGHER_IS_BETTER",
    "RULES",
    "RULE_LABELS",
    "borda",
    "compare_rules",
    "condorcet_winner",
    "copeland",
    "copeland_half_ties",
    "copeland_score_array",
    "mean",
    "mean_rank",
    "minimax",
]

Rule = Callable[[pd.DataFrame, "pd.Series | None"], pd.DataFrame]


@rule_doc
def copeland(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Copeland rule, wins minus losses (Vote'n'Rank's leaderboard variant).

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (wins - losses), ``wins``, ``losses``, ``ties`` and ``rank``, as
        :func:`leaderboard.ranking.copeland.copeland_ranking`.

    %(raises)s

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [3.0, 2.0, 1.0], "c2": [3.0, 1.0, 2.0]}, index=["x", "y", "z"])
    >>> copeland(t)["score"].to_dict()
    {'x': 2, 'y': -1, 'z': -1}
    """
    return copeland_ranking(table, weights)


@rule_doc
def copeland_half_ties(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Copeland rule, wins plus half the ties (Vote'n'Rank's other variant).

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (float, ``wins + ties / 2``), ``wins``, ``losses``, ``ties``, ``rank``.

    %(raises)s

    Notes
    -----
    With :math:`n` systems, ``wins + losses + ties = n - 1``, so

    .. math::

        \mathrm{wins} + \tfrac12 \mathrm{ties}
        = \tfrac{n - 1}{2} + \tfrac12 (\mathrm{wins} - \mathrm{losses}),

    an increasing affine function of the wins - losses score: both variants give the same ranks.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [3.0, 2.0, 1.0], "c2": [3.0, 1.0, 2.0]}, index=["x", "y", "z"])
    >>> copeland_half_ties(t)["score"].to_dict()
    {'x': 2.0, 'y': 0.5, 'z': 0.5}
    """
    ranking = copeland_ranking(table, weights)
    score = ranking["wins"].to_numpy(dtype=float) + 0.5 * ranking["ties"].to_numpy(dtype=float)
    extra = {c: ranking[c].to_numpy() for c in ("wins", "losses", "ties")}
    return ranked(ranking.index, score, higher_is_better=True, extra=extra)


@rule_doc
def borda(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Weighted Borda count, half a point per tie, missing scores ignored pairwise.

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (float, higher is better) and ``rank``.

    %(raises)s

    Notes
    -----
    Each criterion gives a system one point per system it beats and half a point per system it ties with,
    among the systems observed on that criterion; points are weighted and summed:

    .. math:: \mathrm{Borda}(a) = \sum_{b \ne a} \big( W(a, b) + \tfrac12 T(a, b) \big),

    with :math:`W(a, b)` the weight of the criteria :math:`a` wins against :math:`b`
    (:func:`leaderboard.ranking.copeland.pairwise_wins`) and :math:`T(a, b)` the weight of those where
    both are
    observed and equal. Without missing values or ties this is the classic count (``n - position`` points
    per criterion, Vote'n'Rank's Borda with voter weights). A system missing on a criterion earns nothing
    from it, and its opponents earn nothing from it against that system.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [3.0, 2.0, 1.0], "c2": [1.0, 2.0, 2.0]}, index=["x", "y", "z"])
    >>> borda(t)["score"].to_dict()
    {'y': 2.5, 'x': 2.0, 'z': 1.5}
    """
    pw = Pairwise.from_table(table, weights)
    return ranked(pw.index, pw.wins.sum(axis=1) + 0.5 * pw.ties.sum(axis=1), higher_is_better=True)


@rule_doc
def minimax(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Minimax rule (margins): minus the largest weighted margin by which any other system beats this one.

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (float, higher is better; positive when the system beats everyone) and
        ``rank``.

    %(raises)s

    Notes
    -----
    .. math:: \mathrm{Minimax}(a) = -\max_{b \ne a} \big( W(b, a) - W(a, b) \big)

    with :math:`W` from :func:`leaderboard.ranking.copeland.pairwise_wins` (criteria missing for either
    system are
    ignored, equal scores count for neither). The winner is the system whose worst defeat is smallest. This
    is the "margins" variant (``pref_voting``'s default); on complete tables without ties it picks the same
    winners as the "winning votes" and "pairwise opposition" variants. A single system scores 0.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [3.0, 2.0, 1.0], "c2": [3.0, 1.0, 2.0]}, index=["x", "y", "z"])
    >>> minimax(t)["score"].to_dict()
    {'x': 2.0, 'y': -2.0, 'z': -2.0}
    """
    pw = Pairwise.from_table(table, weights)
    if pw.n <= 1:
        return ranked(pw.index, np.zeros(pw.n), higher_is_better=True)
    defeat = pw.wins.T - pw.wins  # [a, b]: margin of b over a
    np.fill_diagonal(defeat, -np.inf)
    return ranked(pw.index, -defeat.max(axis=1), higher_is_better=True)


def _weighted_mean(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row means over the observed cells with the weights renormalised; NaN where no positive weight."""
    obs = ~np.isnan(values)
    num = (np.where(obs, values, 0.0) * w).sum(axis=1)
    den = (obs * w).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


@rule_doc
def mean_rank(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Weighted mean of per-criterion ranks (lower is better).

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (the mean rank, **lower is better**, NaN without any observed
        criterion of positive weight) and ``rank`` (1 = lowest mean rank; NaN scores last).

    %(raises)s

    Notes
    -----
    On each criterion the observed systems are ranked 1 (best) to :math:`n_c`, ties taking the average of
    their positions; a system's score is :math:`\sum_c w_c r_{a,c} / \sum_c w_c` over the criteria it is
    observed on.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [3.0, 2.0, 1.0], "c2": [1.0, 2.0, 2.0]}, index=["x", "y", "z"])
    >>> mean_rank(t)["score"].to_dict()
    {'y': 1.75, 'x': 2.0, 'z': 2.25}
    """
    pw = Pairwise.from_table(table, weights)
    ranks = pd.DataFrame(pw.values).rank(axis=0, method="average", ascending=False).to_numpy(dtype=float)
    return ranked(pw.index, _weighted_mean(ranks, pw.w), higher_is_better=False)


@rule_doc
def mean(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Weighted arithmetic mean of the scores over the criteria a system has.

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (higher is better; NaN without any observed criterion of positive
        weight) and ``rank``.

    %(raises)s

    Notes
    -----
    :math:`\sum_c w_c x_{a,c} / \sum_c w_c` over the criteria observed for :math:`a`. Unlike the voting
    rules it mixes the criteria's scales: a criterion with a wide spread dominates.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [0.9, 0.5], "c2": [0.1, None]}, index=["x", "y"])
    >>> mean(t)["score"].to_dict()
    {'x': 0.5, 'y': 0.5}
    """
    pw = Pairwise.from_table(table, weights)
    return ranked(pw.index, _weighted_mean(pw.values, pw.w), higher_is_better=True)


#: Every ranking rule by name; each returns a DataFrame with ``score`` and ``rank`` (1 = best).
RULES: dict[str, Rule] = {
    "copeland": copeland,
    "copeland_half_ties": copeland_half_ties,
    "borda": borda,
    "minimax": minimax,
    "mean_rank": mean_rank,
    "mean": mean,
}

#: Direction of each rule's ``score`` column (``rank`` is always 1 = best).
HIGHER_IS_BETTER: dict[str, bool] = {name: name != "mean_rank" for name in RULES}

#: Display names of the rules.
RULE_LABELS: dict[str, str] = {
    "copeland": "Copeland (wins − losses)",
    "copeland_half_ties": "Copeland (wins + ½ ties)",
    "borda": "Borda",
    "minimax": "Minimax",
    "mean_rank": "Mean rank",
    "mean": "Mean score",
}


@rule_doc
def compare_rules(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Rank the systems under every rule of :data:`RULES` and show how far each moves against Copeland.

    %(parameters)s

    Returns
    -------
    pandas.DataFrame
        Indexed by system (name ``"system"``), sorted by Copeland rank then name, with for every rule
        ``<rule>`` of :data:`RULES` the columns ``score_<rule>`` and ``rank_<rule>``, for every rule but
        Copeland ``change_<rule> = rank_copeland - rank_<rule>`` (positive: that rule places the system
        higher than Copeland does), and ``condorcet_winner`` (bool, True for at most one system).

    %(raises)s

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame(
    ...     {"c1": [0.9, 0.8, 0.1], "c2": [0.5, 0.6, 0.4], "c3": [0.5, 0.6, 0.0]}, index=["a", "b", "c"]
    ... )
    >>> out = compare_rules(t)
    >>> cols = ["rank_copeland", "rank_mean", "change_mean", "condorcet_winner"]
    >>> out[cols]  # doctest: +NORMALIZE_WHITESPACE
            rank_copeland  rank_mean  change_mean  condorcet_winner
    system
    b                   1          1            0              True
    a                   2          2            0             False
    c                   3          3            0             False
    """
    results = {name: rule(table, weights) for name, rule in RULES.items()}
    base = results["copeland"]
    out = pd.DataFrame(index=base.index.copy())
    for name, res in results.items():
        out[f"score_{name}"] = res["score"].reindex(out.index)
        out[f"rank_{name}"] = res["rank"].reindex(out.index).astype(int)
    for name in RULES:
        if name != "copeland":
            out[f"change_{name}"] = (out["rank_copeland"] - out[f"rank_{name}"]).astype(int)
    winner = condorcet_winner(table, weights) if len(table.index) > 1 else None
    out["condorcet_winner"] = [str(s) == winner for s in out.index]
    return out


def copeland_score_array(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Copeland scores (wins - losses) of a bare ``(n_systems, n_criteria)`` array, without validation.

    The array-level fast path for the bootstrap (:mod:`leaderboard.ranking.uncertainty`): the same pairwise
    counts and tie tolerance as :func:`leaderboard.ranking.copeland.copeland_ranking`, computed on integer
    ranks (:func:`leaderboard.ranking.rank_bits.copeland_scores`).

    Parameters
    ----------
    values, w : numpy.ndarray
        ``(n_systems, n_criteria)`` scores and ``(n_criteria,)`` weights, as
        :class:`leaderboard.ranking.pairwise.Pairwise` takes them.

    Returns
    -------
    numpy.ndarray
        ``(n_systems,)`` integer Copeland scores.

    Examples
    --------
    >>> import numpy as np
    >>> copeland_score_array(np.array([[3.0, 3.0], [2.0, 1.0], [1.0, 2.0]]), np.ones(2)).tolist()
    [2, -1, -1]
    """
    return copeland_scores(values, w)
