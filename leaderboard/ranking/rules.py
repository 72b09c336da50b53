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
- The validation of tables and weights is :mod:`leaderboard.ranking.copeland`'s.

References
----------
.. [1] Rofin, M., Mikhailov, V., Florinsky, M., Kravchenko, A., Shavrina, T., Tutubalina, E.,
   Karabekyan, D. and Artemova, E. (2023). "Vote'n'Rank: Revision of Benchmarking with Social
   Choice Theory". Proceedings of EACL 2023. https://arxiv.org/abs/2210.05769
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from leaderboard.ranking import copeland as _copeland
from leaderboard.ranking.copeland import condorcet_winner, copeland_ranking

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

#: Scores are rounded to this many decimals before ranking (ties in exact arithmetic stay ties).
_SCORE_DECIMALS = 9

Rule = Callable[[pd.DataFrame, "pd.Series | None"], pd.DataFrame]


def _result(
    index: pd.Index,
    score: np.ndarray,
    *,
    higher_is_better: bool,
    extra: Mapping[str, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Build a rule's output: ``score``, extra columns and ``rank``, sorted by rank then system name."""
    out = pd.DataFrame({"score": score, **(extra or {})}, index=pd.Index(index.copy(), name="system"))
    rounded = pd.Series(np.round(np.asarray(score, dtype=float), _SCORE_DECIMALS), index=out.index)
    rank = rounded.rank(method="min", ascending=not higher_is_better, na_option="bottom")
    out["rank"] = rank.astype(int)
    order = np.lexsort((np.array([str(s) for s in out.index], dtype=object), out["rank"].to_numpy()))
    return out.iloc[order]


def _observed_both(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Total weight of the criteria observed for both systems of every ordered pair, ``(n, n)``."""
    obs = (~np.isnan(values)).astype(float)
    return (obs * w) @ obs.T


def copeland(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Copeland rule, wins minus losses (Vote'n'Rank's leaderboard variant).

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` (default) gives every
        criterion weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (wins - losses), ``wins``, ``losses``, ``ties`` and ``rank``, as
        :func:`leaderboard.ranking.copeland.copeland_ranking`.

    Raises
    ------
    ValueError
        If system or criterion names repeat, scores are not numeric, or a weight is missing, negative or
        not finite.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"c1": [3.0, 2.0, 1.0], "c2": [3.0, 1.0, 2.0]}, index=["x", "y", "z"])
    >>> copeland(t)["score"].to_dict()
    {'x': 2, 'y': -1, 'z': -1}
    """
    return copeland_ranking(table, weights)


def copeland_half_ties(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Copeland rule, wins plus half the ties (Vote'n'Rank's other variant).

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` gives weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (float, ``wins + ties / 2``), ``wins``, ``losses``, ``ties``, ``rank``.

    Raises
    ------
    ValueError
        As :func:`copeland`.

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
    return _result(ranking.index, score, higher_is_better=True, extra=extra)


def borda(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Weighted Borda count, half a point per tie, missing scores ignored pairwise.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` gives weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (float, higher is better) and ``rank``.

    Raises
    ------
    ValueError
        As :func:`copeland`.

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
    values, w = _copeland._validate(table, weights)
    wins = _copeland._wins_array(values, w)
    ties = _observed_both(values, w) - wins - wins.T
    np.fill_diagonal(ties, 0.0)
    score = wins.sum(axis=1) + 0.5 * ties.sum(axis=1)
    return _result(table.index, score, higher_is_better=True)


def minimax(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Minimax rule (margins): minus the largest weighted margin by which any other system beats this one.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` gives weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (float, higher is better; positive when the system beats everyone) and
        ``rank``.

    Raises
    ------
    ValueError
        As :func:`copeland`.

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
    values, w = _copeland._validate(table, weights)
    n = values.shape[0]
    if n <= 1:
        return _result(table.index, np.zeros(n), higher_is_better=True)
    wins = _copeland._wins_array(values, w)
    defeat = wins.T - wins  # [a, b]: margin of b over a
    np.fill_diagonal(defeat, -np.inf)
    return _result(table.index, -defeat.max(axis=1), higher_is_better=True)


def _weighted_mean(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Row means over the observed cells with the weights renormalised; NaN where no positive weight."""
    obs = ~np.isnan(values)
    num = (np.where(obs, values, 0.0) * w).sum(axis=1)
    den = (obs * w).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def mean_rank(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Weighted mean of per-criterion ranks (lower is better).

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` gives weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (the mean rank, **lower is better**, NaN without any observed
        criterion of positive weight) and ``rank`` (1 = lowest mean rank; NaN scores last).

    Raises
    ------
    ValueError
        As :func:`copeland`.

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
    values, w = _copeland._validate(table, weights)
    ranks = pd.DataFrame(values).rank(axis=0, method="average", ascending=False).to_numpy(dtype=float)
    return _result(table.index, _weighted_mean(ranks, w), higher_is_better=False)


def mean(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    r"""Weighted arithmetic mean of the scores over the criteria a system has.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` gives weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system: ``score`` (higher is better; NaN without any observed criterion of positive
        weight) and ``rank``.

    Raises
    ------
    ValueError
        As :func:`copeland`.

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
    values, w = _copeland._validate(table, weights)
    return _result(table.index, _weighted_mean(values, w), higher_is_better=True)


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


def compare_rules(table: pd.DataFrame, weights: pd.Series | None = None) -> pd.DataFrame:
    """Rank the systems under every rule of :data:`RULES` and show how far each moves against Copeland.

    Parameters
    ----------
    table : pandas.DataFrame
        Systems (index) x criteria (columns), oriented higher-is-better; NaN marks a missing score.
    weights : pandas.Series, optional
        Non-negative weight per criterion, indexed by the table's columns. ``None`` gives weight 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by system (name ``"system"``), sorted by Copeland rank then name, with for every rule
        ``<rule>`` of :data:`RULES` the columns ``score_<rule>`` and ``rank_<rule>``, for every rule but
        Copeland ``change_<rule> = rank_copeland - rank_<rule>`` (positive: that rule places the system
        higher than Copeland does), and ``condorcet_winner`` (bool, True for at most one system).

    Raises
    ------
    ValueError
        As :func:`copeland`.

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

    The array-level fast path for the bootstrap (:mod:`leaderboard.ranking.uncertainty`), built on the same
    pairwise counts and tie tolerance as :func:`leaderboard.ranking.copeland.copeland_ranking`.

    Parameters
    ----------
    values : numpy.ndarray
        ``(n_systems, n_criteria)`` float scores, higher is better, NaN = missing.
    w : numpy.ndarray
        ``(n_criteria,)`` non-negative weights.

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
    return _copeland._majority_array(_copeland._wins_array(values, w), w).sum(axis=1)
