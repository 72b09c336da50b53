"""The headline ranking: every track's declared criteria, ranked by Vote'n'Rank's Copeland rule.

One place computes it; the site's overview and the pull-request summary both call :func:`rank_headline`.
Criteria come from each track's ``headline`` declarations (:class:`~evaluators.schema.Criterion`):
the rows of its metric in its fixed setting, one criterion per data set and per value of its ``per``
dimensions. Directions come from the metric registry. Weights follow SPEC §5: each track sums to 1, split
evenly over its criteria (:func:`leaderboard.ranking.criteria.criteria_table`). A model without a track's
capability has no rows there: it is *missing* on those criteria (ignored pairwise), never scored zero.
Side effects: none.

References
----------
.. [1] Rofin, M. et al. (2023). "Vote'n'Rank: Revision of Benchmarking with Social Choice Theory".
   EACL 2023. https://arxiv.org/abs/2210.05769
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from evaluators.metrics import higher_is_better
from evaluators.schema import Dimension
from leaderboard.ranking.copeland import condorcet_winner, copeland_ranking, pairwise_majority, pairwise_wins
from leaderboard.ranking.criteria import criteria_table
from leaderboard.ranking.rules import compare_rules
from leaderboard.tracks import track, track_names

#: Columns of :func:`headline_rows`.
HEADLINE_COLUMNS: tuple[str, ...] = (
    "submission",
    "track",
    "dataset",
    "criterion",
    "metric",
    "value",
    "family",
)


def headline_rows(results: pd.DataFrame) -> pd.DataFrame:
    """Return the result rows that are headline criteria, with their criterion names.

    Parameters
    ----------
    results : pandas.DataFrame
        Long results (``submission, track, dataset``, the tracks' dimensions, ``metric, value``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`HEADLINE_COLUMNS`: ``criterion`` is ``<dataset>/<per values>`` (``chebi20/kekule``),
        ``family`` the index of the track's criterion family; rows with a missing value are dropped.
    """
    frames: list[pd.DataFrame] = []
    for name in track_names():
        cls = track(name)
        rows = results.loc[results["track"] == name] if "track" in results else results.iloc[0:0]
        for family, crit in enumerate(cls.headline):
            mask = (rows["metric"] == crit.metric).to_numpy().copy()
            for column, value in crit.where:
                mask &= (rows[column] == value).to_numpy() if column in rows else False
            picked = rows.loc[mask]
            if picked.empty:
                continue
            criterion = picked["dataset"].astype(str)
            for column in crit.per:
                criterion = criterion + "/" + picked[column].astype(str)
            if crit.flat:
                # A criterion that cannot separate an honest answerer from a degenerate one only adds
                # ties that reshuffle Copeland: declared flat, it is reported but not ranked.
                ranked = ~criterion.isin([name for name, _ in crit.flat]).to_numpy()
                picked, criterion = picked.loc[ranked], criterion.loc[ranked]
            frames.append(
                pd.DataFrame(
                    {
                        "submission": picked["submission"].astype(str).to_numpy(),
                        "track": name,
                        "dataset": picked["dataset"].astype(str).to_numpy(),
                        "criterion": criterion.to_numpy(),
                        "metric": crit.metric,
                        "value": pd.to_numeric(picked["value"]).astype(float).to_numpy(),
                        "family": family,
                    }
                )
            )
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "value" else str) for c in HEADLINE_COLUMNS})
    out = pd.concat(frames, ignore_index=True)
    return out.loc[out["value"].notna(), list(HEADLINE_COLUMNS)].reset_index(drop=True)


def criterion_order(rows: pd.DataFrame) -> list[str]:
    """Criteria columns (``track/criterion/metric``) in display order: track, family, data set, then values.

    Values of ``per`` dimensions are ordered as their track declares them (augmentations in the
    paper's order), not alphabetically.
    """
    keys: dict[str, tuple] = {}
    for row in rows.drop_duplicates(["track", "criterion", "metric"]).itertuples(index=False):
        cls = track(row.track)
        crit = cls.headline[int(row.family)]
        parts = str(row.criterion).split("/")
        dataset, values = parts[0], parts[1:]
        rank = tuple(_position(cls.dimension(d), v) for d, v in zip(crit.per, values, strict=False))
        keys[f"{row.track}/{row.criterion}/{row.metric}"] = (row.track, int(row.family), dataset, rank)
    return sorted(keys, key=keys.__getitem__)


def _position(dim: Dimension, value: str) -> tuple[int, str]:
    return (dim.values.index(value), "") if value in dim.values else (len(dim.values), value)


@dataclass(frozen=True)
class Ranking:
    """Copeland ranking over the headline criteria (empty when there are no results).

    Attributes
    ----------
    copeland : pandas.DataFrame
        Score, wins, losses, ties and rank per submission (index), best first.
    headline : pandas.DataFrame
        Submissions × criteria columns (``track/criterion/metric``, display order): raw values.
    criteria : pandas.DataFrame
        One row per criteria column: ``track, dataset, criterion, metric, weight``.
    weights : pandas.Series
        Weight per criteria column (each track sums to 1).
    condorcet : str or None
        The Condorcet winner, if one exists.
    table : pandas.DataFrame
        The oriented criteria table (Copeland's input).
    """

    copeland: pd.DataFrame
    headline: pd.DataFrame
    criteria: pd.DataFrame
    weights: pd.Series
    condorcet: str | None
    table: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_criteria(self) -> int:
        """Number of criteria ranked."""
        return int(self.table.shape[1])

    @cached_property
    def rules(self) -> pd.DataFrame | None:
        """Every rule of :data:`leaderboard.ranking.rules.RULES` side by side (``None`` without results)."""
        if self.copeland.empty:
            return None
        return compare_rules(self.table, self.weights).reindex(self.copeland.index)

    @cached_property
    def pairwise(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """Pairwise majorities and weighted wins in Copeland order (``None`` below two systems)."""
        if len(self.copeland) < 2:
            return None
        order = list(self.copeland.index)
        table = self.table.reindex(order)
        return pairwise_majority(table, self.weights), pairwise_wins(table, self.weights)


def rank_headline(results: pd.DataFrame) -> Ranking:
    """Rank the submissions in ``results`` by Copeland over every track's headline criteria.

    Parameters
    ----------
    results : pandas.DataFrame
        Long results (see :func:`headline_rows`).

    Returns
    -------
    Ranking
        The ranking, its inputs and the other rules; empty frames when no headline row exists.
    """
    rows = headline_rows(results)
    if rows.empty:
        empty = pd.DataFrame(columns=["score", "wins", "losses", "ties", "rank"])
        return Ranking(empty, pd.DataFrame(), pd.DataFrame(), pd.Series(dtype=float), None)
    table, weights = criteria_table(rows, higher_is_better=higher_is_better())
    order = criterion_order(rows)
    table, weights = table.loc[:, order], weights.loc[order]
    copeland = copeland_ranking(table, weights)
    winner = condorcet_winner(table, weights) if len(table) > 1 else None
    rows = rows.assign(column=rows["track"] + "/" + rows["criterion"] + "/" + rows["metric"])
    headline = rows.pivot(index="submission", columns="column", values="value").reindex(columns=order)
    headline.columns.name = None
    criteria = (
        rows.drop_duplicates("column")
        .set_index("column")
        .loc[order, ["track", "dataset", "criterion", "metric"]]
        .assign(weight=weights.to_numpy(dtype=float))
    )
    return Ranking(copeland, headline, criteria, weights, winner, table)


def headline_items_mask(items: pd.DataFrame, ranking: Ranking) -> np.ndarray:
    """Which per-item rows (``submission, criterion`` columns) belong to the ranking's models and criteria."""
    ranked = {str(s) for s in ranking.copeland.index}
    return (
        items["submission"].astype(str).isin(ranked) & items["criterion"].isin(list(ranking.table.columns))
    ).to_numpy()
