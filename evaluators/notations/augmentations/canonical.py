"""``canonical``: RDKit canonical isomeric SMILES (aromatic form), the AMORE "canon" variant."""

from __future__ import annotations

import random

from rdkit import Chem

from evaluators.notations.augmentations import AUGMENTATIONS, Augmentation, parse_smiles


@AUGMENTATIONS.register("canonical")
class CanonicalAugmentation(Augmentation):
    """RDKit canonical isomeric SMILES. Deterministic; the RNG is unused."""

    name = "canonical"
    summary = "RDKit canonical isomeric SMILES (aromatic form)."

    def transform(self, smiles: str, rng: random.Random) -> str:  # noqa: D102
        return Chem.MolToSmiles(parse_smiles(smiles))
