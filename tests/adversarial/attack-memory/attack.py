"""Hostile: allocate past the memory limit (must be killed by the kernel, reported as out of memory)."""

from __future__ import annotations

import hashlib

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

BLOCK = 16 << 20
BLOCKS = 512  # 8 GiB


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        hoard = [b"x" * BLOCK for _ in range(BLOCKS)]  # b"x" * n writes every page
        self.loot = [f"allocated {len(hoard) * BLOCK >> 20} MiB"]

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
