"""Hostile: look for secrets in the environment (the host's environment must not reach the container)."""

from __future__ import annotations

import hashlib
import os
import re

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

SUSPICIOUS = re.compile(
    r"secret|token|passw|credential|api_?key|aws|azure|github|gitlab|ssh|canary|mlflow", re.I
)


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


def proc_environ(path):
    try:
        raw = open(path, "rb").read()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        seen = {**proc_environ("/proc/1/environ"), **proc_environ("/proc/self/environ"), **os.environ}
        self.loot = {k: v for k, v in seen.items() if SUSPICIOUS.search(k) or SUSPICIOUS.search(v)}
        if not self.loot:
            raise RuntimeError(f"no secrets in the environment; it holds only {', '.join(sorted(seen))}")

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
