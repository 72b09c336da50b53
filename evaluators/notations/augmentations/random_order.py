"""``random_order``: a SMILES written from a random atom order (``doRandom``), seeded per molecule."""

from __future__ import annotations

import random

from rdkit import Chem

from evaluators.notations.augmentations import AUGMENTATIONS, Augmentation, parse_smiles


@AUGMENTATIONS.register("random_order")
class RandomOrderAugmentation(Augmentation):
    """One random-atom-order isomeric SMILES; RDKit's own RNG is seeded from the example's RNG."""

    name = "random_order"
    summary = "A random-atom-order SMILES (`doRandom=True`), seeded."
    params = {"doRandom": True}

    def transform(self, smiles: str, rng: random.Random) -> str:  # noqa: D102
        mol = parse_smiles(smiles)
        return Chem.MolToRandomSmilesVect(mol, 1, randomSeed=rng.randrange(1, 2**31 - 1))[0]
