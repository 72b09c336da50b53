"""``explicit_h``: every atom bracketed with its hydrogen count, the AMORE "hydro" variant.

``MolToSmiles(mol, allHsExplicit=True)`` is the reference behaviour (``[CH3][CH2][OH]``); adding explicit
``[H]`` atoms with ``AddHs`` is a different, optional variant not registered here.
"""

from __future__ import annotations

import random

from rdkit import Chem

from evaluators.notations.augmentations import AUGMENTATIONS, Augmentation, parse_smiles


@AUGMENTATIONS.register("explicit_h")
class ExplicitHydrogenAugmentation(Augmentation):
    """Canonical SMILES with all hydrogen counts written in brackets. Deterministic."""

    name = "explicit_h"
    summary = "`MolToSmiles(mol, allHsExplicit=True)`: every atom bracketed with its hydrogen count."
    params = {"allHsExplicit": True}

    def transform(self, smiles: str, rng: random.Random) -> str:  # noqa: D102
        return Chem.MolToSmiles(parse_smiles(smiles), allHsExplicit=True)
