"""``randomized``: a SMILES written from a random atom order, seeded per molecule (T3's third writing)."""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.notations.augmentations import get_augmentation
from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation
from evaluators.notations.smiles import canonical_smiles


@REPRESENTATIONS.register("randomized")
class RandomizedRepresentation(Representation):
    """The ``random_order`` augmentation's output, checked to encode the same molecule."""

    name = "randomized"
    label = "randomized SMILES"
    phrase = "the molecule with the SMILES {text}"
    summary = "A random-atom-order SMILES (the `random_order` augmentation), seeded per molecule."

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        # The augmentation's own per-example RNG, so this writing equals the one T1 and T3 have always used.
        pair = get_augmentation("random_order", self.seed).apply(key, smiles)
        if pair.status == "excluded" or pair.augmented is None:
            raise NotWritable(f"no random-order SMILES of {smiles[:80]!r}: {pair.reason}")
        return pair.augmented

    def read(self, text: str) -> str | None:  # noqa: D102
        return canonical_smiles(text.strip())
