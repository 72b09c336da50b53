"""Hostile: return one embedding more than it was given strings (the evaluator must refuse them)."""

from __future__ import annotations

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings


class Attack(EmbeddingAdapter):
    def embed(self, strings):
        return Embeddings({"last": np.ones((len(strings) + 1, 8), dtype=np.float32)})
