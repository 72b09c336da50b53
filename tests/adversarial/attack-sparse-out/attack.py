"""Hostile: a 100 GiB sparse file in /out, then real data written into its hole (must stop at the cap)."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

APPARENT = 100 << 30
MIB = 1 << 20
FILL_MIB = 4096


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        written = 0
        with open("/out/sparse.bin", "wb") as handle:
            handle.truncate(APPARENT)
            handle.seek(APPARENT - 1)
            handle.write(b"x")
            handle.flush()
            block = os.urandom(MIB)
            try:
                for number in range(FILL_MIB):
                    os.pwrite(handle.fileno(), block, number * MIB)
                    written += 1
            except OSError as exc:
                print(f"filling the hole stopped after {written} MiB: {exc.strerror}", flush=True)
        self.loot = [f"wrote {written} MiB into a 100 GiB sparse file"] if written == FILL_MIB else []

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
