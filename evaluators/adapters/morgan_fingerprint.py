"""``morgan_fingerprint``: RDKit Morgan fingerprints with chirality, the structure-aware reference.

Invariant by construction to how a molecule is written: every valid SMILES of a molecule gives the same
bit vector, so its AMORE accuracy is 1 except where two different molecules share a fingerprint (which the
track reports as ties). A string RDKit cannot parse is an error: the track only embeds checked strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from rdkit.Chem import rdFingerprintGenerator

from evaluators.adapters import ADAPTERS, EmbeddingAdapter, Embeddings, ModelConfig
from evaluators.notations.smiles import parse_smiles


@ADAPTERS.register("morgan_fingerprint")
class MorganFingerprintAdapter(EmbeddingAdapter):
    """Morgan (ECFP-like) bit vectors; options ``radius`` (2), ``n_bits`` (2048), ``chirality`` (true)."""

    architectures: ClassVar[frozenset[str]] = frozenset({"non-neural"})
    weights: ClassVar[str] = "none"  # computed from the molecule alone

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        opts = config.options
        self.radius = int(opts.get("radius", 2))
        self.n_bits = int(opts.get("n_bits", 2048))
        self.chirality = bool(opts.get("chirality", True))
        self._generator = rdFingerprintGenerator.GetMorganGenerator(
            radius=self.radius, fpSize=self.n_bits, includeChirality=self.chirality
        )

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        out = np.zeros((len(strings), self.n_bits), dtype=np.float32)
        for i, smiles in enumerate(strings):
            out[i] = self._generator.GetFingerprintAsNumPy(parse_smiles(smiles))
        return Embeddings({"last": out})

    def describe(self) -> dict[str, Any]:  # noqa: D102
        return {"radius": self.radius, "n_bits": self.n_bits, "chirality": self.chirality}
