"""Hostile: allocate 10 GiB of /out in one call, before any poll can look (the kernel must refuse it)."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

SIZE = 10 << 30


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        fd = os.open("/out/blob.bin", os.O_CREAT | os.O_WRONLY, 0o644)
        try:
            os.posix_fallocate(fd, 0, SIZE)
            self.loot = [f"allocated {SIZE >> 30} GiB of the host's disk in one call"]
        except OSError as exc:
            self.loot = []
            print(f"fallocate of {SIZE >> 30} GiB refused: {exc.strerror}", flush=True)
        finally:
            os.close(fd)

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
