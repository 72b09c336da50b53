"""Hashed character n-gram embeddings of SMILES strings: a surface-string baseline.

Runs inside the sandbox as the submission's own code (adapter ``custom``). Deterministic: BLAKE2 hashing,
no Python ``hash()`` (which is salted per process).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings, ModelConfig


class CharNgramAdapter(EmbeddingAdapter):
    """Character n-gram counts (``n_min``..``n_max``) hashed into ``buckets`` dimensions, L2-normalised."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.n_min = int(config.options.get("n_min", 1))
        self.n_max = int(config.options.get("n_max", 3))
        self.buckets = int(config.options.get("buckets", 1024))
        self._cache: dict[str, int] = {}

    def _bucket(self, gram: str) -> int:
        index = self._cache.get(gram)
        if index is None:
            digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
            index = self._cache[gram] = int.from_bytes(digest, "little") % self.buckets
        return index

    def embed(self, strings: Sequence[str]) -> Embeddings:
        out = np.zeros((len(strings), self.buckets), dtype=np.float32)
        for row, text in enumerate(strings):
            for n in range(self.n_min, self.n_max + 1):
                for start in range(len(text) - n + 1):
                    out[row, self._bucket(text[start : start + n])] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return Embeddings({"last": out})

    def describe(self) -> dict:
        return {"n_min": self.n_min, "n_max": self.n_max, "buckets": self.buckets}
