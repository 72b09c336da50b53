"""Hostile: never finish (must be killed by the wall-clock timeout)."""

from __future__ import annotations

import hashlib
import signal
import time

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(3600)
        self.loot = ["slept for an hour"]

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
