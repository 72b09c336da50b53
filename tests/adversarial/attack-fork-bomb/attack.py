"""Hostile: a fork bomb (must be stopped by the pids limit)."""

from __future__ import annotations

import hashlib
import os
import time

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

MAX_FORKS = 20000


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


def bomb():
    """Run in every child: fork forever, never return into the evaluator."""
    try:
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.05)
    finally:
        os._exit(0)


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        self.loot = []
        for forks in range(MAX_FORKS):
            try:
                pid = os.fork()
            except OSError as exc:
                print(f"fork bomb: stopped after {forks} forks of the first process", flush=True)
                raise RuntimeError(f"fork bomb stopped by the pids limit: {exc}") from None
            if pid == 0:
                bomb()
        self.loot.append(f"forked {MAX_FORKS} processes without meeting a limit")

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
