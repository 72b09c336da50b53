"""What the downstream track's (T2) container sees of a data set: one notation, opaque ids, a seeded order.

A label must not hide in how a set is written or kept (issue 29, measured on the files as DeepChem
distributes them): ClinTox writes every toxic aromatic molecule in Kekulé form and no non-toxic one (that
flag alone: test ROC-AUC 0.979), BBBP's stereo marks reach 0.747, and ``bace.csv`` / ``BBBP.csv`` are sorted
by class, so a row number reaches 0.99 / 0.96. :func:`build_view` therefore gives the container

- every molecule in **one notation**: RDKit's canonical SMILES without stereo marks (whether a source
  recorded stereo is bookkeeping of that source; the probe sees the constitution). The file's own strings
  are not kept as a variant: they are the leak itself;
- **opaque ids**: ``sha256(set, its files' hashes, row)``, 16 hex digits;
- a **seeded order** (by a hash of seed and opaque id);
- MoleculeNet's recommended **split**: scaffold for BBBP and BACE, random (seeded) for the regression sets
  and ClinTox (:data:`SPLIT_METHODS`).

:func:`leak_report` measures the shortcuts of :mod:`evaluators.datasets.leaks` on the view; the track
refuses a set whose view lets one through.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.datasets.leaks import ShortcutReport, shortcut_aucs
from evaluators.tracks.downstream.splits import random_split, scaffold_split

__all__ = ["SPLIT_METHODS", "ViewRow", "build_view", "leak_report", "opaque_id", "one_notation"]

#: Data set → split method (MoleculeNet's recommendation, Wu et al. 2018, Table 1).
SPLIT_METHODS: dict[str, str] = {
    "bbbp": "scaffold",
    "bace": "scaffold",
    "clintox": "random",
    "esol": "random",
    "lipophilicity": "random",
    "freesolv": "random",
    "solubility": "random",
}


@dataclass(frozen=True, slots=True)
class ViewRow:
    """One row of the view and the record it came from (the record, with its label, stays on the host)."""

    id: str
    split: str
    smiles: str
    record: dict[str, str]

    def shown(self) -> dict[str, str]:
        """Return the row as the container reads it."""
        return {"id": self.id, "split": self.split, "smiles": self.smiles}


def one_notation(smiles: str) -> str:
    """RDKit's canonical SMILES without stereo marks; the string itself when RDKit cannot read it.

    Examples
    --------
    >>> one_notation("C1=CC=CC=C1O"), one_notation("C[C@H](N)C(=O)O"), one_notation("not a molecule")
    ('Oc1ccccc1', 'CC(N)C(=O)O', 'not a molecule')
    """
    from rdkit import Chem

    from evaluators.notations.smiles import InvalidSmilesError, parse_smiles

    try:
        return Chem.MolToSmiles(parse_smiles(smiles), isomericSmiles=False)
    except InvalidSmilesError:
        return smiles


def opaque_id(dataset: str, version: str, record_id: str) -> str:
    """Return the id a view shows for a record: 16 hex digits of ``sha256(set, version, record id)``.

    Examples
    --------
    >>> opaque_id("bace", "f3fb9ce9", "0")
    'ff73d7e08394624e'
    """
    return hashlib.sha256(f"{dataset}\x00{version}\x00{record_id}".encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def _cached(
    dataset: str, version: str, ids: tuple[str, ...], smiles: tuple[str, ...], fractions: tuple, seed: int
) -> tuple[tuple[str, str, str], ...]:
    # The host builds a view twice per run (the container's view, then scoring): RDKit once.
    written = [one_notation(s) for s in smiles]
    opaque = [opaque_id(dataset, version, i) for i in ids]
    if SPLIT_METHODS.get(dataset, "scaffold") == "scaffold":
        splits = scaffold_split(written, fractions=fractions, seed=seed)
    else:
        splits = random_split(opaque, fractions=fractions, seed=seed)
    return tuple(zip(opaque, splits, written, strict=True))


def build_view(
    dataset: str,
    version: str,
    records: Sequence[dict[str, str]],
    *,
    fractions: tuple[float, float, float],
    seed: int,
) -> list[ViewRow]:
    """Return the view of ``records``: one notation, opaque ids, the split, in a seeded order.

    Parameters
    ----------
    dataset : str
        The data set (its split method, and part of every opaque id).
    version : str
        The set's version (its files' hashes): a new version gives new ids.
    records : sequence of dict
        The set's records as loaded (``id``, ``smiles``, the label), in file order.
    fractions : tuple of float
        Train / validation / test shares.
    seed : int
        Seed of the split and of the order.
    """
    built = _cached(dataset, version, tuple(r["id"] for r in records), tuple(r["smiles"] for r in records),
                    tuple(fractions), seed)  # fmt: skip
    rows = [ViewRow(i, s, w, dict(r)) for (i, s, w), r in zip(built, records, strict=True)]
    return sorted(rows, key=lambda r: hashlib.sha256(f"{seed}\x00order\x00{r.id}".encode()).hexdigest())


def leak_report(rows: Sequence[ViewRow], label_field: str, kind: str) -> ShortcutReport:
    """Measure every writing and bookkeeping shortcut on the view (:mod:`evaluators.datasets.leaks`)."""
    return shortcut_aucs([r.shown() for r in rows], [float(r.record[label_field]) for r in rows],
                         [r.split for r in rows], kind=kind)  # fmt: skip
