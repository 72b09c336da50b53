"""``kekule``: kekulized canonical SMILES (alternating single/double bonds), the AMORE "kekul" variant."""

from __future__ import annotations

import random

from rdkit import Chem

from evaluators.notations.augmentations import AUGMENTATIONS, Augmentation, parse_smiles


@AUGMENTATIONS.register("kekule")
class KekuleAugmentation(Augmentation):
    """``Chem.Kekulize(mol, clearAromaticFlags=True)`` then ``kekuleSmiles=True``. Deterministic."""

    name = "kekule"
    summary = "Kekulized SMILES (`Kekulize(mol, clearAromaticFlags=True)`, `kekuleSmiles=True`)."

    def transform(self, smiles: str, rng: random.Random) -> str:  # noqa: D102
        mol = Chem.Mol(parse_smiles(smiles))
        Chem.Kekulize(mol, clearAromaticFlags=True)
        return Chem.MolToSmiles(mol, kekuleSmiles=True)
