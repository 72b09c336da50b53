"""The failure explorer of the model pages: the items a model misses most, with the strings it saw.

It reads a per-item rank table (one row per item and variant: ``id``, ``status``, ``rank``, the variant
column such as ``augmentation``, and the ``original`` and ``augmented`` strings the track wrote), as a
track's extension hands it over. A *miss* is a non-trivial pair (status ``changed``) whose true partner
is not ranked first. The strings come from the table only — nothing is recomputed on the host; a table
exported before it carried them shows ids and ranks, without drawings.

Text from the table (ids, strings, variant names) reaches the page through :mod:`leaderboard.markdown`.
Side effects: drawing a string writes its SVG (:class:`leaderboard.site.molecules.Drawings`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from leaderboard.markdown import code, esc, table
from leaderboard.site.format import is_num, rank_text
from leaderboard.site.molecule_ids import molecule_cell
from leaderboard.site.molecules import Drawings
from leaderboard.tracks import ordered, track

__all__ = ["FAILURES_DRAWN", "FAILURES_LISTED", "Explorer", "Failures"]

#: Items listed per submission and data set, and how many of them are drawn.
FAILURES_LISTED = 10
FAILURES_DRAWN = 5
_KEYS = ["submission", "track", "dataset"]


@dataclass(frozen=True)
class Failures:
    """The items one model misses most on one data set (the explorer's table).

    Attributes
    ----------
    worst : list of (str, int, int, float)
        ``(id, misses, non-trivial pairs, mean rank)``, worst first.
    ranks : dict of (str, str) to float
        ``(id, variant) -> rank`` for the listed ids.
    strings : dict of (str, str) to (str, str)
        ``(id, variant) -> (original, augmented)`` for the listed ids (empty strings when not exported).
    variants : list of str
        Variants with non-trivial pairs, in display order.
    n_missed, n_items : int
        Items missed at least once, and items with a non-trivial pair.
    """

    worst: list[tuple[str, int, int, float]]
    ranks: dict[tuple[str, str], float]
    strings: dict[tuple[str, str], tuple[str, str]]
    variants: list[str]
    n_missed: int
    n_items: int


def find_failures(
    items: pd.DataFrame, variant: str, order: Callable[[list[str]], list[str]] | None = None
) -> dict[tuple[str, str, str], Failures]:
    """Rank every (submission, track, dataset)'s items by misses, in one pass over the table.

    Items are ordered by misses (descending), then mean rank over their non-trivial pairs (descending),
    then id; the first :data:`FAILURES_LISTED` are kept. ``order(values)`` puts variants in display order.
    """
    if items.empty:
        return {}
    changed = items.loc[(items["status"] == "changed").to_numpy(dtype=bool)]
    if changed.empty:
        return {}
    rank = changed["rank"].to_numpy(dtype=float)
    frame = changed.loc[:, [*_KEYS, "id", variant, "original", "augmented"]].assign(
        rank=rank, miss=rank > 1.0
    )
    stats = (
        frame.groupby([*_KEYS, "id"], observed=True, sort=False)
        .agg(pairs=("rank", "size"), misses=("miss", "sum"), mean_rank=("rank", "mean"))
        .reset_index()
    )
    stats["missed"] = stats["misses"] > 0
    totals = stats.groupby(_KEYS, observed=True, sort=False).agg(
        n_items=("missed", "size"), n_missed=("missed", "sum")
    )
    variants = frame.groupby(_KEYS, observed=True, sort=False)[variant].unique()
    worst = stats.loc[stats["missed"].to_numpy()]
    worst = worst.assign(id_text=worst["id"].astype(str)).sort_values(
        ["misses", "mean_rank", "id_text"], ascending=[False, False, True], kind="mergesort"
    )
    worst = worst.groupby(_KEYS, observed=True, sort=False).head(FAILURES_LISTED)

    def key_code(rows: pd.DataFrame) -> np.ndarray:
        out = np.zeros(len(rows), dtype=np.int64)
        for col in [*_KEYS, "id"]:
            out = out * (len(rows[col].cat.categories) + 1) + rows[col].cat.codes.to_numpy(np.int64)
        return out

    listed = frame.loc[np.isin(key_code(frame), key_code(worst))]
    ranks: dict[tuple[str, str, str], dict[tuple[str, str], float]] = {}
    strings: dict[tuple[str, str, str], dict[tuple[str, str], tuple[str, str]]] = {}
    columns = [*_KEYS, "id", variant, "rank", "original", "augmented"]
    for sub, trk, ds, mol, var, r, orig, aug in listed[columns].itertuples(index=False, name=None):
        key, item = (str(sub), str(trk), str(ds)), (str(mol), str(var))
        ranks.setdefault(key, {})[item] = float(r)
        strings.setdefault(key, {})[item] = (str(orig), str(aug))
    worst_by: dict[tuple[str, str, str], list[tuple[str, int, int, float]]] = {}
    for sub, trk, ds, mol, misses, pairs, mean_rank in worst[
        [*_KEYS, "id_text", "misses", "pairs", "mean_rank"]
    ].itertuples(index=False, name=None):
        worst_by.setdefault((str(sub), str(trk), str(ds)), []).append(
            (mol, int(misses), int(pairs), float(mean_rank))
        )
    out = {}
    for (sub, trk, ds), row in totals.iterrows():
        key = (str(sub), str(trk), str(ds))
        names = [str(v) for v in variants[(sub, trk, ds)]]
        out[key] = Failures(
            worst=worst_by.get(key, []),
            ranks=ranks.get(key, {}),
            strings=strings.get(key, {}),
            variants=order(names) if order is not None else sorted(set(names)),
            n_missed=int(row["n_missed"]),
            n_items=int(row["n_items"]),
        )
    return out


class Explorer:
    """The failure explorer of the model pages, drawing with ``drawings``.

    Parameters
    ----------
    drawings : leaderboard.site.molecules.Drawings
        Where the drawings of the listed strings go.
    """

    def __init__(self, drawings: Drawings) -> None:
        self.drawings = drawings
        self._found: dict[str, dict[tuple[str, str, str], Failures]] = {}

    def section(
        self,
        items: pd.DataFrame,
        key: tuple[str, str, str],
        *,
        table_name: str,
        variant: str,
        setting: str,
        names: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Markdown lines of one model's explorer on one data set (none without per-item ranks).

        Parameters
        ----------
        items : pandas.DataFrame
            The whole per-item rank table (its failures are computed once per ``table_name``).
        key : tuple of str
            ``(submission, track, dataset)``.
        table_name : str
            The table's export name (memo key).
        variant : str
            Column of the table that names the variant (``augmentation``); a dimension of the track.
        setting : str
            The setting the ranks were measured in, in words, already escaped (``last layer, L2 …``).
        names : mapping of str to str, optional
            Molecule names by id (:func:`leaderboard.site.molecule_ids.molecule_names`), shown beside the
            ids; the ids link to their database where the data set declares one.
        """
        if table_name not in self._found:
            dim = track(key[1]).dimension(variant)
            self._found[table_name] = find_failures(items, variant, order=lambda v: ordered(dim, v))
        found = self._found[table_name].get(key)
        if found is None:
            return []
        dataset = key[2]
        out = ["#### Failure explorer", ""]
        if not found.worst:
            return [*out, "This model retrieves every non-trivial pair of this data set at rank 1.", ""]
        out += [
            f"The molecules this model misses most on {esc(dataset)}: most variants whose true "
            f"partner it does not rank first, then highest mean rank ({found.n_missed} of "
            f"{found.n_items} molecules are missed at least once). A rank is the position of the "
            f"molecule's own rewritten string among all candidates for its original (1 = found; {setting}); "
            f"— = no non-trivial pair. Columns: {esc(variant)}.",
            "",
        ]
        rows = []
        for mol, misses, pairs, mean_rank in found.worst:
            named = molecule_cell(dataset, mol, (names or {}).get(mol))
            cells = [named, f"{misses} of {pairs}", f"{mean_rank:.1f}"]
            cells += [rank_text(found.ranks.get((mol, v), np.nan)) for v in found.variants]
            rows.append(cells)
        headers = ["Molecule", "Missed", "Mean rank", *map(esc, found.variants)]
        out += [table(headers, rows, align=["l", "r", "r"] + ["r"] * len(found.variants)), ""]
        out += self._drawings(found, [w[0] for w in found.worst[:FAILURES_DRAWN]])
        return out

    def _drawings(self, found: Failures, ids: Sequence[str]) -> list[str]:
        originals: dict[str, str] = {}
        for (mol, _variant), (original, _augmented) in found.strings.items():
            if original:
                originals.setdefault(mol, original)
        shown = [mol for mol in ids if mol in originals]
        if not shown:
            return [
                "*The exported table holds no strings for these molecules (it predates them): ids and ranks "
                "only, no drawings.*",
                "",
            ]
        out: list[str] = [
            f"The {len(shown)} molecules missed most, drawn with RDKit from the original string and from "
            "each variant whose partner was not ranked first (the strings the model saw, from the run's "
            "per-item table):",
            "",
        ]
        for mol in shown:
            cards = [self._card(originals[mol], f"original of {mol}", f"**{esc(mol)}** · original")]
            for var in found.variants:
                val = found.ranks.get((mol, var), np.nan)
                if not is_num(val) or val <= 1.0:
                    continue
                augmented = found.strings.get((mol, var), ("", ""))[1]
                label = f"{esc(var)} · rank **{rank_text(val)}**"
                if not augmented:
                    cards.append(f"-   {label}\n\n    (string not exported)")
                else:
                    cards.append(self._card(augmented, f"{var} of {mol}", label))
            # Blank lines between the items: Python-Markdown would read "-   ..." after a paragraph as
            # a lazy continuation of that paragraph.
            out += ['<div class="grid cards chemrobust-molecules" markdown>', "", "\n\n".join(cards)]
            out += ["", "</div>", ""]
        return out

    def _card(self, smiles: str, alt: str, label: str) -> str:
        path = self.drawings.path(smiles)
        image = f"![{esc(alt)}](../{path}){{ loading=lazy }}\n\n    " if path is not None else ""
        return f"-   {image}{label}\n\n    {code(smiles)}"
