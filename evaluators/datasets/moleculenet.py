"""MoleculeNet sets of the downstream track (T2), registered by their public DeepChem URLs and pinned sha256.

Files exactly as DeepChem distributes them (``../shared/data/moleculenet/`` mirrors them; the README there
lists sources and hashes). Each record: ``id`` (0-based data row), ``smiles`` (as written), ``label`` (the
task's column; for the sets T4 asks about, also under the column's own name) — the labels stay on the
host: the T2 container gets a label-free strings table, the T4 container only the questions.

The downstream track's task table (:data:`evaluators.tracks.downstream.DOWNSTREAM_TASKS`) says which
record field is the label and whether it is a regression or a classification (MoleculeNet's metric: RMSE
/ ROC-AUC). ClinTox has two tasks; ``CT_TOX``
(clinical-trial toxicity) is the one used here. BACE's SMILES column is called ``mol``.

Registered in :data:`evaluators.datasets.specs.DATASETS` on import.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from evaluators.datasets.specs import DataFile, DatasetSpec, register_dataset

__all__ = ["MOLECULENET"]

_BASE = "https://deepchemdata.s3-us-west-1.amazonaws.com/datasets"

#: data set → (file, SMILES column, label column, kind, sha256, description, citation)
_SETS: dict[str, tuple[str, str, str, str, str, str, str]] = {
    "bbbp": ("BBBP.csv", "smiles", "p_np", "classification",
             "d07a38487aeac5cee5508413e468043ef3097451d2a112701c2d60be9ec6b662",
             "Blood–brain barrier penetration (2050 molecules, binary p_np).", "Martins et al. 2012"),
    "bace": ("bace.csv", "mol", "Class", "classification",
             "f3fb9ce90bada3e2bd6148b0df13f8f8145a357bf87df0dd5b391ede974fc737",
             "BACE-1 inhibitors (1513 molecules, binary Class).", "Subramanian et al. 2016"),
    "esol": ("delaney-processed.csv", "smiles", "measured log solubility in mols per litre", "regression",
             "8c06a76f0c6487d29ab0f903e6a7a7139f189ab3c1178f159c8be8964602f189",
             "ESOL aqueous solubility (1128 molecules, log mol/L).", "Delaney 2004"),
    "lipophilicity": ("Lipophilicity.csv", "smiles", "exp", "regression",
                      "aed41590cb30609d51d8e08ad3ff06495a76e80e211358801f596b10da69bacd",
                      "Octanol/water distribution coefficient logD at pH 7.4 (4200 molecules).",
                      "ChEMBL deposition by AstraZeneca"),
    "clintox": ("clintox.csv", "smiles", "CT_TOX", "classification",
                "9999816e760dd838358b5d88e81cea2fc062be4458ffa412ceecdba4f88a67b6",
                "Clinical-trial toxicity (1484 molecules, binary CT_TOX).", "Gayvert et al. 2016"),
}  # fmt: skip
#: Sets the prompt-robustness track (T4) also asks about (ChemDIRT's classification category): their
#: records carry the label under its column's name too (``CT_TOX``, ``p_np``), the field the T4 task needs.
_ASKED = ("bbbp", "clintox")


def _records(name: str):
    file, smiles_col, label_col, kind, *_ = _SETS[name]

    def read(folder: Path) -> list[dict[str, str]]:
        path = Path(folder) / file
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in (smiles_col, label_col) if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: missing column(s) {missing}; found {reader.fieldnames}")
            out = []
            for number, row in enumerate(reader):
                label = (row.get(label_col) or "").strip()
                try:
                    value = float(label)
                except ValueError:
                    raise ValueError(f"{path}: data row {number}, column {label_col!r}: {label!r} is not a "
                                     "number") from None  # fmt: skip
                if not math.isfinite(value) or (kind == "classification" and value not in (0.0, 1.0)):
                    raise ValueError(f"{path}: data row {number}, column {label_col!r}: {label!r} is not a "
                                     f"valid {kind} label")  # fmt: skip
                record = {"id": str(number), "smiles": (row.get(smiles_col) or "").strip(), "label": label}
                if name in _ASKED:  # the prompt-robustness task reads its own label by the column's name
                    record[label_col] = label
                out.append(record)
            return out

    return read


def _register(name: str) -> DatasetSpec:
    file, _, label_col, kind, sha256, description, citation = _SETS[name]
    # ClinTox is published compressed (clintox.csv.gz); the pinned file is its decompressed content, so it is
    # taken from a mirror (CHEMROBUST_DATA_DIR) rather than downloaded.
    url = None if name == "clintox" else f"{_BASE}/{file}"
    read = _records(name)
    return register_dataset(
        DatasetSpec(
            name=name,
            files=(DataFile(file, sha256=sha256, url=url),),
            reader=lambda folder: [(r["id"], r["smiles"]) for r in read(folder)],
            records=read,
            description=f"{description} MoleculeNet; label column {label_col!r} ({kind}). Ids are data rows "
            "from 0.",
            source=f"DeepChem's MoleculeNet copy, {_BASE}/{file}",
            license="see MoleculeNet (Wu et al. 2018) and the original publication",
            citation=f"Wu et al., MoleculeNet, Chem. Sci. 2018; {citation}",
            tracks=("downstream", "prompt_robustness") if name in _ASKED else ("downstream",),
            mirror_folders=("moleculenet",),
        )
    )


MOLECULENET: dict[str, DatasetSpec] = {name: _register(name) for name in _SETS}
