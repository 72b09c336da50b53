"""The data set registry's types: a set's files, its spec, and what loading it gives.

:data:`DATASETS` is filled by :mod:`evaluators.datasets` (the molecule sets of T1),
:mod:`evaluators.datasets.text` (the text sets of T3 and T4) and :mod:`evaluators.datasets.edit_pairs` (T5),
which all import this module; import :mod:`evaluators.datasets` to get every set registered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.registry import Registry

__all__ = ["DATASETS", "DataFile", "DatasetSpec", "ID_SOURCES", "LoadedDataset", "Molecule",
           "SkippedMolecule", "TrainingSplit", "register_dataset"]  # fmt: skip

#: Public databases a set's molecule ids can belong to (``DatasetSpec.id_source``): ``pubchem`` (PubChem
#: compound ids, CIDs) and ``chebi`` (ChEBI ids, with or without the ``CHEBI:`` prefix). The site links an id
#: to its database entry (:mod:`leaderboard.site.molecule_ids`).
ID_SOURCES: tuple[str, ...] = ("pubchem", "chebi")


@dataclass(frozen=True, slots=True)
class DataFile:
    """One file of a data set: path relative to the set's folder, public URL (or ``None``) and sha256."""

    path: str
    sha256: str | None
    url: str | None = None


@dataclass(frozen=True, slots=True)
class TrainingSplit:
    """A split of a data set that a model may be *given* (mounted at ``/models``), never one it is scored on.

    Its files are disjoint from every evaluation set of the ``tracks`` it serves (no molecule in common by
    canonical SMILES; a test checks it on the real files), so a model that reads them learns nothing of
    the answers: ChEBI-20's validation split is the gallery of the retrieval captioners (issue 34).
    The files are **not** part of the set's ``files``: the set's content hash (the benchmark version of
    every result on it) stays what it was, and a job's ``/data`` never receives them through the set.

    Attributes
    ----------
    name : str
        The split's name in a manifest (``model.split``), e.g. ``validation``.
    files : tuple of DataFile
        Its files, pinned by sha256 and public URL, in the set's folder of a mirror or cache.
    reader : callable
        ``reader(folder) -> list[tuple[id, smiles]]``: its molecules (for the disjointness check).
    tracks : tuple of str
        The only tracks a model given this split may run (the intake refuses others): the tracks whose
        evaluation sets it was checked against.
    description : str
        One line for the manifest's documentation and the model card.
    """

    name: str
    files: tuple[DataFile, ...]
    reader: Callable[[Path], list[tuple[str, str]]]
    tracks: tuple[str, ...]
    description: str = ""


@dataclass(frozen=True, slots=True)
class Molecule:
    """One molecule of a data set: a stable id and the SMILES string as written in the source."""

    id: str
    smiles: str


@dataclass(frozen=True, slots=True)
class SkippedMolecule:
    """A molecule left out of the evaluation, with the reason."""

    id: str
    smiles: str
    reason: str


@dataclass(frozen=True, slots=True)
class LoadedDataset:
    """Valid molecules plus the skipped ones, in file order, and the set's records (:func:`load_records`)."""

    molecules: list[Molecule]
    skipped: list[SkippedMolecule]
    records: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    """A registered data set.

    Attributes
    ----------
    name : str
        Registry name, also the folder name under the data directory.
    files : tuple of DataFile
        The files with their checksums (also for the embedded set, which is built rather than downloaded:
        its checksum pins the exact sample).
    reader : callable
        ``reader(folder) -> list[tuple[id, smiles]]`` for the raw rows.
    description, source, license, citation : str
        Shown on the site's methodology page.
    tracks : tuple of str
        The tracks the set is meant for.
    records : callable, optional
        ``records(folder) -> list[dict[str, str]]``: one dict per item with at least ``id`` and ``smiles``
        (module docstring); ``None`` for sets with nothing beyond ``(id, smiles)``.
    mirror_folders : tuple of str
        Other names the set's folder may have in a local mirror (the shared data calls
        ``smiles-iupac-pairs`` ``smiles_iupac``); the host copies such files into its cache.
    id_source : str
        The public database the set's ids belong to (one of :data:`ID_SOURCES`), ``""`` when they are the
        set's own (row numbers, internal keys): the site links only ids of a declared database.
    name_field : str
        The record field that names a molecule (``iupac``), ``""`` when the set has none; the site names
        an item by the text it was asked in that representation.
    training_splits : tuple of TrainingSplit
        Splits of the same source that a model may be given (:class:`TrainingSplit`); empty for most sets.
    """

    name: str
    files: tuple[DataFile, ...]
    reader: Callable[[Path], list[tuple[str, str]]]
    description: str = ""
    source: str = ""
    license: str = ""
    citation: str = ""
    tracks: tuple[str, ...] = field(default=("amore",))
    records: Callable[[Path], list[dict[str, str]]] | None = None
    mirror_folders: tuple[str, ...] = ()
    id_source: str = ""
    name_field: str = ""
    training_splits: tuple[TrainingSplit, ...] = ()

    def training_split(self, name: str) -> TrainingSplit | None:
        """Return the training split called ``name``, or ``None`` when the set declares none so called."""
        return next((split for split in self.training_splits if split.name == name), None)


DATASETS: Registry[DatasetSpec] = Registry("dataset")


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    """Add ``spec`` to :data:`DATASETS` under its name and return it.

    Raises
    ------
    ValueError
        If a set of that name is already registered, its ``id_source`` is not one of :data:`ID_SOURCES`, or
        a training split repeats a name, shares a file with the set's evaluation files, lacks a sha256 or
        serves no track.
    """
    if spec.id_source and spec.id_source not in ID_SOURCES:
        raise ValueError(f"data set {spec.name!r}: id_source {spec.id_source!r} is not one of {ID_SOURCES}")
    evaluated = {f.path for f in spec.files}
    names: set[str] = set()
    for split in spec.training_splits:
        # A split that named an evaluation file would hand the gold answers to the model: refused here,
        # at import, before any manifest can ask for it.
        shared = evaluated & {f.path for f in split.files}
        unpinned = [f.path for f in split.files if f.sha256 is None]
        if split.name in names or shared or unpinned or not split.files or not split.tracks:
            raise ValueError(
                f"data set {spec.name!r}: training split {split.name!r} repeats a name, is empty, serves no "
                f"track, or names evaluation or unpinned files ({sorted(shared | set(unpinned))})"
            )
        names.add(split.name)
    DATASETS.register(spec.name)(spec)
    return spec
