"""Ground truths of the prompt-robustness track (T4): one function per single-molecule task (host side).

A new task is one entry of ``prompt_templates.json`` and one function here (relational tasks, whose truth
depends on other molecules of the data set, are composed in :mod:`.relational`). Each function takes the
record and the answer kind asked and returns the normalised true answer, or ``None`` when RDKit cannot
compute it (the item is then left out and counted, never held against a model).

- formula (Hill, charges left out), molecular weight (RDKit ``MolWt``, average atomic masses) and
  Lipinski's rule of five (at most one violation; RDKit's Lipinski definitions);
- ring count (RDKit ``CalcNumRings``: the smallest set of smallest rings, as a chemist counts rings) and
  aromatic ring count (``CalcNumAromaticRings`` on RDKit's aromaticity model);
- measured values and labels as the data set records them: hydration free energy, log solubility,
  clinical-trial toxicity (ClinTox ``CT_TOX``) and blood–brain barrier penetration (BBBP ``p_np``), the
  latter two only where RDKit reads the molecule (what the model is shown is RDKit's canonical SMILES);
- structures (name ↔ SMILES, drawing → SMILES or name, reaction products): RDKit canonical SMILES.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaluators.notations.smiles import canonical_smiles

__all__ = ["TRUTHS", "formula_of"]


def _mol(smiles: str):
    from rdkit import Chem

    return Chem.MolFromSmiles(smiles)


def formula_of(smiles: str) -> str | None:
    """Hill formula of ``smiles`` as answers are normalised (charges left out), or ``None``."""
    from rdkit.Chem import rdMolDescriptors

    from evaluators.answers import normalise_formula

    mol = _mol(smiles)
    return None if mol is None else normalise_formula(rdMolDescriptors.CalcMolFormula(mol))


def _weight(smiles: str) -> float | None:
    from rdkit.Chem import Descriptors

    mol = _mol(smiles)
    return None if mol is None else float(Descriptors.MolWt(mol))


def _lipinski(smiles: str) -> bool | None:
    from evaluators.asking.tasks import TASKS, truth

    return truth(next(t for t in TASKS if t.name == "lipinski"), {"smiles": smiles})


def _rings(smiles: str, aromatic: bool) -> int | None:
    from rdkit.Chem import rdMolDescriptors

    mol = _mol(smiles)
    if mol is None:
        return None
    return int(rdMolDescriptors.CalcNumAromaticRings(mol) if aromatic else rdMolDescriptors.CalcNumRings(mol))


def _measured_label(record: dict[str, str], field: str) -> bool | None:
    if _mol(str(record.get("smiles") or "")) is None:
        return None
    return float(record[field]) == 1.0


#: Task → truth(record, answer kind).
TRUTHS: dict[str, Callable[[dict[str, str], str], Any]] = {
    "formula": lambda r, kind: formula_of(r["smiles"]),
    "molecular_weight": lambda r, kind: _weight(r["smiles"]),
    "lipinski": lambda r, kind: _lipinski(r["smiles"]),
    "ring_count": lambda r, kind: _rings(r["smiles"], aromatic=False),
    "aromatic_ring_count": lambda r, kind: _rings(r["smiles"], aromatic=True),
    "hydration_free_energy": lambda r, kind: float(r["value"]),
    "aqueous_solubility": lambda r, kind: float(r["log_solubility"]),
    "clinical_toxicity": lambda r, kind: _measured_label(r, "CT_TOX"),
    "bbb_penetration": lambda r, kind: _measured_label(r, "p_np"),
    "iupac_to_smiles": lambda r, kind: canonical_smiles(r["smiles"]),
    "smiles_to_iupac": lambda r, kind: canonical_smiles(r["smiles"]),
    "image_to_smiles": lambda r, kind: canonical_smiles(r["smiles"]),
    "image_to_iupac": lambda r, kind: canonical_smiles(r["smiles"]),
    "forward_reaction": lambda r, kind: (
        formula_of(r["product_smiles"]) if kind == "formula" else canonical_smiles(r["product_smiles"])
    ),
}
