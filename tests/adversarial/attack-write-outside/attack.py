"""Hostile: write outside /out (must fail: read-only root, read-only /data, /models, /job)."""

from __future__ import annotations

import glob
import hashlib

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

TARGETS = [
    "/chemrobust-pwned",
    "/etc/chemrobust-pwned",
    "/usr/lib/chemrobust-pwned",
    "/var/tmp/chemrobust-pwned",
    "/opt/venv/lib/chemrobust-pwned",
    "/app/evaluators/__init__.py",  # the evaluator itself: appending would change every later run
    "/submission/attack.py",  # its own code
    "/job/job.json",
    "/data/chemrobust-pwned",
    "/models/chemrobust-pwned",
]


def honest(strings):
    rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
    return Embeddings({"last": np.stack(rows).astype(np.float32)})


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        targets = TARGETS + sorted(glob.glob("/data/*/*"))[:1]  # a benchmark data file
        self.loot, errors = [], set()
        for path in targets:
            try:
                with open(path, "a") as handle:
                    handle.write("\n# written by a hostile submission\n")
                self.loot.append(path)
            except OSError as exc:
                errors.add(exc.strerror)
        if not self.loot:
            raise RuntimeError(
                f"nothing written outside /out: {len(targets)} of {len(targets)} targets refused "
                f"({', '.join(sorted(errors))})"
            )

    def embed(self, strings):
        return honest(strings)

    def describe(self):
        return {"loot": self.loot}
