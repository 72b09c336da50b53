"""Hostile: return NaN embeddings (the evaluator must refuse them)."""

from __future__ import annotations

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings


class Attack(EmbeddingAdapter):
    def embed(self, strings):
        return Embeddings({"last": np.full((len(strings), 8), np.nan, dtype=np.float32)})
