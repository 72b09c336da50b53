"""Build the embedded ``pubchem-names`` set: PubChem molecules whose systematic name OPSIN reads back.

Source: ``chemicals/Identifiers/chemical identifiers pubchem large.tsv`` from the ``chemicals`` package
(MIT; 71 347 PubChem compounds, tab-separated, no header: CID, CAS, formula, molecular weight, SMILES,
InChI, InChIKey, systematic IUPAC name, common name, synonyms…). Its names are lower-cased; the build
restores the case OPSIN needs (:func:`evaluators.answers.opsin.restore_locant_case`) and keeps a molecule only
when OPSIN parses the restored name back to the same structure, so every kept pair is consistent by
construction — a T3 reference must not penalise a model for the source's naming errors.

Selection, in this order (the first failed rule is the rejection reason in ``build_report.json``):

1. a systematic name (column 8) is present;
2. a single component (no ``.`` in the SMILES);
3. RDKit parses the SMILES;
4. organic: contains carbon, only H, B, C, N, O, F, P, S, Cl, Br, I (a net charge is allowed);
5. no isotope labels, no radicals (a few PubChem SMILES carry radicals their names do not);
6. 3 to 50 heavy atoms (tiny molecules are trivial; long names strain the models' context, not naming);
7. OPSIN parses the name, to the same canonical **isomeric** SMILES: stereo must match both ways — a name
   without stereodescriptors for a SMILES with stereo (or the reverse) is rejected, since T3 compares
   structures including stereo;
8. not a duplicate of an already kept structure.

Determinism: rows are sorted by CID, shuffled by ``random.Random(seed)``, and examined in that order in
blocks (one OPSIN process per block) until ``size`` molecules are kept; ``drawn`` counts the rows examined
up to the last kept one. The output depends only on the source file, the seed and the RDKit and OPSIN
versions (all in the report), and the registry pins its sha256. ``build_report.json`` holds no times, so it
is byte-identical across builds too; it is informative and not pinned. Rules 1-8 are :func:`screen_rows`;
the seq2seq training corpus (:mod:`leaderboard.tools.name_corpus`) applies them to every row.
Side effects: writes ``molecules.csv`` and ``build_report.json`` in the target's folder; runs Java.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import importlib.resources
import io
import itertools
import json
import os
import random
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from evaluators.answers.opsin import OPSIN_VERSION, names_to_smiles, restore_locant_case
from evaluators.datasets import file_sha256

PUBCHEM_NAMES_SIZE = 1000
PUBCHEM_NAMES_SEED = 20240501
PUBCHEM_TABLE = "chemical identifiers pubchem large.tsv"
HEAVY_ATOMS = (3, 50)
ORGANIC_ELEMENTS = frozenset({"H", "B", "C", "N", "O", "F", "P", "S", "Cl", "Br", "I"})
# Rows examined per OPSIN process: about 70 % pass the cheap filters, 99 % of those OPSIN reads back,
# so one block usually yields the 1000 molecules (≈ 1450 rows drawn).
_BLOCK = 2000

REASONS = (
    "no systematic name",
    "multi-component",
    "RDKit cannot parse the SMILES",
    "no carbon",
    "element outside the organic subset",
    "isotope label",
    "radical",
    "heavy atoms outside 3-50",
    "OPSIN cannot parse the name",
    "OPSIN structure differs in stereo only",
    "OPSIN structure differs",
    "duplicate structure",
)


def write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` through a temporary file in the same folder, readable by all."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp_name, 0o644)  # read by the sandbox's unprivileged user
        os.replace(tmp_name, target)
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)


def write_built_table(
    target: Path, columns: list[str], rows: list[dict[str, Any]], report: dict[str, Any], digest_key: str
) -> str:
    """Write a built data set's CSV and ``build_report.json`` beside it, both atomically.

    The report gets the CSV's sha256 under ``digest_key``; returns the sha256 as read back from disk.
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    data = buffer.getvalue().encode("utf-8")
    write_atomic(target, data)
    report[digest_key] = hashlib.sha256(data).hexdigest()
    text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(target.parent / "build_report.json", text.encode("utf-8"))
    return file_sha256(target)


def _unquote(name: str) -> str:
    # Four names in the table are CSV-quoted because they hold double primes (n"), written as "".
    if len(name) > 1 and name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name


def read_table() -> tuple[list[list[str]], str]:
    """Return the table's rows (columns split on tabs) sorted by CID, and the table's sha256."""
    source = importlib.resources.files("chemicals") / "Identifiers" / PUBCHEM_TABLE
    raw = source.read_bytes()
    rows = [line.split("\t") for line in raw.decode("utf-8").splitlines() if line.strip()]
    for number, row in enumerate(rows, start=1):
        if len(row) < 8 or not row[0].isdigit():
            raise ValueError(
                f"{PUBCHEM_TABLE} row {number}: expected a CID and at least 8 columns, got {row[:3]}"
            )
    rows.sort(key=lambda row: int(row[0]))
    return rows, hashlib.sha256(raw).hexdigest()


def _name(row: list[str]) -> str:
    return restore_locant_case(_unquote(row[7].strip()))


def _prefilter(row: list[str]) -> tuple[str | None, str | None]:
    """Return ``(reason, canonical)``: a rejection reason, or ``None`` and the canonical SMILES."""
    from rdkit import Chem

    smiles, name = row[4].strip(), _unquote(row[7].strip())
    if not name:
        return REASONS[0], None
    if "." in smiles:
        return REASONS[1], None
    mol = Chem.MolFromSmiles(smiles) if smiles else None
    if mol is None:
        return REASONS[2], None
    elements = {atom.GetSymbol() for atom in mol.GetAtoms()}
    if "C" not in elements:
        return REASONS[3], None
    if not elements <= ORGANIC_ELEMENTS:
        return REASONS[4], None
    if any(atom.GetIsotope() for atom in mol.GetAtoms()):
        return REASONS[5], None
    if any(atom.GetNumRadicalElectrons() for atom in mol.GetAtoms()):
        return REASONS[6], None
    if not HEAVY_ATOMS[0] <= mol.GetNumHeavyAtoms() <= HEAVY_ATOMS[1]:
        return REASONS[7], None
    return None, Chem.MolToSmiles(mol)


def _flat(smiles: str) -> str | None:
    """Canonical SMILES without stereo, to tell a stereo-only mismatch from a different molecule."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else Chem.MolToSmiles(mol, isomericSmiles=False)


class Screened(NamedTuple):
    """The verdict on one table row (:func:`screen_rows`)."""

    row: list[str]
    #: The first rule the row fails (an entry of :data:`REASONS`), or ``None`` when it is kept.
    reason: str | None
    #: Canonical isomeric SMILES of the row's structure (``None`` when a rule before OPSIN rejected it).
    smiles: str | None
    #: The name with its locant case restored (``None`` when a rule before OPSIN rejected the row).
    name: str | None


def screen_rows(
    rows: Iterable[list[str]], *, block: int = _BLOCK, tmp_dir: Path | None = None
) -> Iterator[Screened]:
    """Apply rules 1-8 of the module docstring to ``rows``, in order, and yield one verdict per row.

    Rows are checked in blocks of ``block`` (one OPSIN process per block), lazily: a consumer that stops
    early (:func:`select_pubchem_names`) starts no further Java process. Rule 8 (duplicates) compares with
    the rows kept earlier in this call, so the verdicts depend on the order of ``rows``; the block size does
    not change them.

    Parameters
    ----------
    rows : iterable of list of str
        Table rows as :func:`read_table` returns them.
    block : int
        Rows per OPSIN process (a memory and latency bound only).
    tmp_dir : pathlib.Path, optional
        Where OPSIN's private temporary folder goes (default: the system's).

    Yields
    ------
    Screened
        The row, its rejection reason or ``None``, its canonical isomeric SMILES and its restored name.

    Raises
    ------
    evaluators.answers.opsin.OpsinError
        If Java is missing or an OPSIN process fails as a whole.
    """
    seen: set[str] = set()
    pending = iter(rows)
    while chunk := list(itertools.islice(pending, block)):
        checked = [(row, *_prefilter(row)) for row in chunk]
        names = [_name(row) for row, reason, _ in checked if reason is None]
        parsed = iter(names_to_smiles(names, tmp_dir=tmp_dir))
        for row, reason, canonical in checked:
            if reason is not None:
                yield Screened(row, reason, canonical, None)
                continue
            name, opsin = _name(row), next(parsed)
            if opsin is None:
                reason = REASONS[8]
            elif opsin != canonical:
                reason = REASONS[9] if _flat(opsin) == _flat(canonical) else REASONS[10]
            elif canonical in seen:
                reason = REASONS[11]
            else:
                seen.add(canonical)
            yield Screened(row, reason, canonical, name)


def select_pubchem_names(
    *, size: int = PUBCHEM_NAMES_SIZE, seed: int = PUBCHEM_NAMES_SEED, tmp_dir: Path | None = None
) -> tuple[list[dict[str, str]], dict[str, object]]:
    """Draw the sample by the rules of the module docstring.

    Parameters
    ----------
    size, seed : int
        Molecules to keep and the sampling seed.
    tmp_dir : pathlib.Path, optional
        Where OPSIN's private temporary folder goes (default: the system's).

    Returns
    -------
    kept : list of dict of str to str
        ``id`` (CID), ``smiles`` (as in the table), ``iupac`` (case restored), ``formula``; sorted by CID.
    report : dict
        Counts (drawn, kept, rejected by reason), rates, the rules and the versions: ``build_report.json``.
    """
    rows, table_sha = read_table()
    order = random.Random(seed).sample(rows, len(rows))
    rejected: Counter[str] = Counter()
    kept: list[dict[str, str]] = []
    drawn = 0
    for screened in screen_rows(order, tmp_dir=tmp_dir):
        drawn += 1
        if screened.reason is not None:
            rejected[screened.reason] += 1
            continue
        row = screened.row
        kept.append({"id": row[0], "smiles": row[4].strip(), "iupac": screened.name, "formula": row[2]})
        if len(kept) == size:
            break
    kept.sort(key=lambda record: int(record["id"]))
    sent = drawn - sum(rejected[r] for r in REASONS[:8])
    round_trips = sent - sum(rejected[r] for r in REASONS[8:11])
    from rdkit import __version__ as rdkit_version

    report: dict[str, object] = {
        "data_set": "pubchem-names",
        "source": {
            "package": f"chemicals {importlib.metadata.version('chemicals')}",
            "file": f"chemicals/Identifiers/{PUBCHEM_TABLE}",
            "sha256": table_sha,
            "rows": len(rows),
        },
        "seed": seed,
        "target_size": size,
        "heavy_atoms": list(HEAVY_ATOMS),
        "organic_elements": sorted(ORGANIC_ELEMENTS),
        "stereo": "isomeric canonical SMILES must match (stereo both ways)",
        "versions": {
            "opsin": OPSIN_VERSION,
            "py2opsin": importlib.metadata.version("py2opsin"),
            "rdkit": rdkit_version,
        },
        "drawn": drawn,
        "kept": len(kept),
        "acceptance": round(len(kept) / drawn, 4) if drawn else None,
        "names_checked_by_opsin": sent,
        "opsin_round_trip_rate": round(round_trips / sent, 4) if sent else None,
        "rejected": {reason: rejected[reason] for reason in REASONS},
    }
    return kept, report


def build_pubchem_names(
    target: Path, *, size: int = PUBCHEM_NAMES_SIZE, seed: int = PUBCHEM_NAMES_SEED
) -> str:
    """Write ``molecules.csv`` (``id`` = PubChem CID, ``smiles``, ``iupac``, ``formula``) and its report.

    Parameters
    ----------
    target : pathlib.Path
        The CSV file to write; ``build_report.json`` goes next to it.
    size, seed : int
        Molecules to keep and the sampling seed.

    Returns
    -------
    str
        sha256 of the written CSV.

    Raises
    ------
    evaluators.answers.opsin.OpsinError
        If Java is missing (the message says which package to install).
    """
    kept, report = select_pubchem_names(size=size, seed=seed)
    return write_built_table(target, ["id", "smiles", "iupac", "formula"], kept, report, "molecules_sha256")


if __name__ == "__main__":  # pragma: no cover - a manual check: python -m leaderboard.data.pubchem_names
    import sys
    import time

    started = time.perf_counter()
    out = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()) / "molecules.csv"
    print(build_pubchem_names(out), out, f"{time.perf_counter() - started:.1f} s")
