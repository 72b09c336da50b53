"""Hostile: create up to 100,000 empty files in /out (must stop at the file limit)."""

from __future__ import annotations

import hashlib

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

FILES = 100_000


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        created = 0
        try:
            while created < FILES:
                open(f"/out/f{created:06d}", "w").close()
                created += 1
        except OSError as exc:
            print(f"file flood stopped after {created} files: {exc.strerror}", flush=True)
        self.loot = [f"created {created} files in /out"] if created == FILES else []

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
