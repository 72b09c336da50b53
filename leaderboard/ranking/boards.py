"""Two boards, one per kind of model: each ranks its own tracks' criteria, references shown but never ranked.

An embedding model and a generative model never share a criterion, so one Copeland ranking over both only
counts ties and missing pairs between them. The boards split the ranking by the capability each track
declares (``Track.capability``, see :mod:`evaluators.tracks`): :data:`BOARDS` maps a capability to a
board, and a track joins the board of its capability (:func:`board_tracks`) — a new track, or a plug-in
one, needs no edit here. A model with both capabilities has rows on both boards and appears on both.

**References** (a submission whose manifest, or the maintainers' list ``leaderboard/references.toml``,
declares it one: a fingerprint ceiling, a tool user, constant answers) are not members of the ranking:
:func:`rank_board` removes their rows *before* Copeland (:func:`leaderboard.ranking.headline.rank_headline`),
so their presence changes no model's rank or score. Each is placed in the board's table by the rule of
:func:`place_references`: where its Copeland score against the ranked models would put it.

Side effects: none (pure functions of their inputs).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from leaderboard.ranking.copeland import pairwise_majority
from leaderboard.ranking.headline import Ranking, headline_rows, rank_headline
from leaderboard.tracks import track, track_names

__all__ = [
    "BOARDS",
    "REFERENCE_COLUMNS",
    "Board",
    "BoardSpec",
    "board_tracks",
    "place_references",
    "rank_board",
    "rank_boards",
]


@dataclass(frozen=True)
class BoardSpec:
    """One board: the capability its tracks declare, its title and the sentence saying what it measures.

    Attributes
    ----------
    name : str
        Identifier (``embedding``), used in anchors and figure names.
    capability : str
        The ``Track.capability`` of its tracks (``embed``).
    title : str
        Heading on the overview (``Embedding models``).
    measures : str
        One sentence, Markdown: what the board's ranking measures.
    """

    name: str
    capability: str
    title: str
    measures: str


#: The boards in display order; a track belongs to the board of its capability (registry, not names).
BOARDS: tuple[BoardSpec, ...] = (
    BoardSpec(
        "embedding",
        "embed",
        "Embedding models",
        "Whether a model's embedding of a molecule stays the same when only the writing of the molecule "
        "changes: retrieving the same molecule among others (AMORE) and predicting its properties from "
        "rewritten test sets (downstream).",
    ),
    BoardSpec(
        "generative",
        "generate",
        "Generative models",
        "Whether a model answers the same question about a molecule in the same, correct way when the "
        "molecule is written differently, the prompt is reworded, or its identity is hidden behind an edit.",
    ),
)

#: Columns of :attr:`Board.references`.
REFERENCE_COLUMNS: tuple[str, ...] = ("score", "wins", "losses", "ties", "after")


def board_tracks(spec: BoardSpec) -> list[str]:
    """Return the registered tracks whose declared capability is the board's, in registry order."""
    return [name for name in track_names() if getattr(track(name), "capability", None) == spec.capability]


@dataclass(frozen=True)
class Board:
    """One board's ranking of its members and the placement of its references.

    Attributes
    ----------
    spec : BoardSpec
        Which board.
    ranking : leaderboard.ranking.headline.Ranking
        Copeland over the board's tracks' headline criteria, of the ranked models only.
    references : pandas.DataFrame
        Indexed by reference id, columns :data:`REFERENCE_COLUMNS` (see :func:`place_references`), in
        display order; empty when no reference has a value on the board's criteria.
    reference_values : pandas.DataFrame
        References × the ranking's criteria columns: raw values (as ``ranking.headline``).
    reference_table : pandas.DataFrame
        The same, oriented higher-is-better (as ``ranking.table``).
    """

    spec: BoardSpec
    ranking: Ranking
    references: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(REFERENCE_COLUMNS)))
    reference_values: pd.DataFrame = field(default_factory=pd.DataFrame)
    reference_table: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def empty(self) -> bool:
        """Whether the board has neither a ranked model nor a reference."""
        return self.ranking.copeland.empty and self.references.empty

    def rows(self) -> list[tuple[str, bool]]:
        """Return the table's rows in display order: ``(submission, is_reference)``.

        Ranked models in Copeland order; each reference right after the ``after``-th of them.
        """
        ranked = [str(s) for s in self.ranking.copeland.index]
        out: list[tuple[str, bool]] = []
        refs = self.references
        for position in range(len(ranked) + 1):
            if position:
                out.append((ranked[position - 1], False))
            out += [(str(r), True) for r in refs.index[refs["after"] == position]]
        return out


def place_references(table: pd.DataFrame, weights: pd.Series, copeland: pd.DataFrame) -> pd.DataFrame:
    r"""Place each reference among the ranked models by its Copeland score against them.

    Parameters
    ----------
    table : pandas.DataFrame
        Oriented criteria table (higher is better) of the ranked models *and* the references, on the
        ranking's columns only.
    weights : pandas.Series
        The ranking's criterion weights.
    copeland : pandas.DataFrame
        The ranking of the models alone (:func:`leaderboard.ranking.copeland.copeland_ranking`), best first.

    Returns
    -------
    pandas.DataFrame
        One row per reference (the rows of ``table`` not in ``copeland``), columns
        :data:`REFERENCE_COLUMNS`, sorted by ``after`` then score (best first) then id.

    Notes
    -----
    With :math:`M` the weighted pairwise-majority matrix (+1 / 0 / −1) and :math:`s_m` a model's Copeland
    score among the models, reference :math:`r` scores

    .. math:: s_r = \sum_{m} M(r, m),

    over the ranked models :math:`m` only (other references never count), and, were it ranked, model
    :math:`m` would score :math:`s_m + M(m, r)`. The reference is shown after

    .. math:: \mathrm{after}(r) = \#\{m : s_m + M(m, r) \ge s_r\}

    models of the Copeland order (ties: the model first), i.e. at the rank its score would give it. It
    moves no model: the ranking is computed without it.
    """
    members = [str(s) for s in copeland.index]
    refs = sorted(str(s) for s in table.index if str(s) not in set(members))
    if not refs:
        return pd.DataFrame(columns=list(REFERENCE_COLUMNS), index=pd.Index([], name="reference"))
    order = members + refs
    majority = pairwise_majority(table.reindex(order), weights).to_numpy()
    n = len(members)
    scores = copeland["score"].to_numpy(dtype=int)
    rows = []
    for i, ref in enumerate(refs, start=n):
        versus = majority[i, :n]
        s_r = int(versus.sum())
        after = int(np.sum(scores - versus >= s_r))  # M(m, r) = -M(r, m)
        wins, losses = int((versus == 1).sum()), int((versus == -1).sum())
        rows.append((ref, s_r, wins, losses, n - wins - losses, after))
    out = pd.DataFrame(rows, columns=["reference", *REFERENCE_COLUMNS]).set_index("reference")
    out = out.assign(_key=-out["score"]).sort_values(["after", "_key"], kind="stable").drop(columns="_key")
    return out


def rank_board(results: pd.DataFrame, spec: BoardSpec, references: Collection[str] = ()) -> Board:
    """Rank one board: Copeland over its tracks' headline criteria, without the references.

    Parameters
    ----------
    results : pandas.DataFrame
        Long results (see :func:`leaderboard.ranking.headline.headline_rows`).
    spec : BoardSpec
        The board.
    references : collection of str
        Submission ids that are references: removed before ranking, then placed
        (:func:`place_references`).

    Returns
    -------
    Board
        The ranking of the other submissions on the board's tracks, and the references' placement and
        values on its criteria.
    """
    refs = {str(r) for r in references}
    tracks = board_tracks(spec)
    mine = results.loc[results["track"].astype(str).isin(tracks)] if "track" in results else results
    is_ref = mine["submission"].astype(str).isin(refs) if "submission" in mine else pd.Series(dtype=bool)
    ranking = rank_headline(mine.loc[~is_ref])
    ref_results = mine.loc[is_ref]
    if ranking.copeland.empty or ref_results.empty:
        return Board(spec, ranking)
    rows = headline_rows(ref_results)
    rows = rows.assign(column=rows["track"] + "/" + rows["criterion"] + "/" + rows["metric"])
    columns = list(ranking.table.columns)
    rows = rows.loc[rows["column"].isin(columns)]
    if rows.empty:
        return Board(spec, ranking)
    values = rows.pivot(index="submission", columns="column", values="value").reindex(columns=columns)
    values.columns.name = None
    # Orient as the ranking did: a column is negated there exactly when its metric is lower-is-better.
    sign = _orientation(ranking)
    oriented = values * sign
    table = pd.concat([ranking.table, oriented])
    placed = place_references(table, ranking.weights, ranking.copeland)
    return Board(spec, ranking, placed, values.reindex(placed.index), oriented.reindex(placed.index))


def _orientation(ranking: Ranking) -> pd.Series:
    """Return +1 or −1 per criteria column: how ``criteria_table`` oriented it (the metric's direction)."""
    from evaluators.metrics import higher_is_better

    directions = higher_is_better()
    signs = [1.0 if directions[str(m)] else -1.0 for m in ranking.criteria["metric"]]
    return pd.Series(signs, index=ranking.criteria.index)


def rank_boards(results: pd.DataFrame, references: Collection[str] = ()) -> Mapping[str, Board]:
    """Rank every board of :data:`BOARDS` that has a registered track, in display order (by board name)."""
    return {spec.name: rank_board(results, spec, references) for spec in BOARDS if board_tracks(spec)}
