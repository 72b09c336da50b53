"""Hostile: fill the host's disk through /out (must be killed at the output cap)."""

from __future__ import annotations

import hashlib

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

MIB = 1 << 20
FILES = 2048  # 2 GiB


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        block = b"\xff" * MIB
        for number in range(FILES):
            with open(f"/out/fill-{number:05d}.bin", "wb") as handle:
                handle.write(block)
        self.loot = [f"wrote {FILES} MiB to /out"]

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
