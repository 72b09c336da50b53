"""Hostile: 64 MiB of junk in /out below the cap, then an honest run (the junk must not reach MLflow).

The run is meant to succeed: the host stores only ``result.json`` and the artifacts the track declares,
so the junk is left out (with a note in the run's log tail) and nothing of it is copied into the store.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

MIB = 1 << 20


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        block = os.urandom(MIB)  # incompressible
        for name, mib in (("junk.bin", 48), ("embeddings.npy", 16)):
            with open(f"/out/{name}", "wb") as handle:
                for _ in range(mib):
                    handle.write(block)

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"junk": ["junk.bin (48 MiB)", "embeddings.npy (16 MiB)"]}
