"""Hostile: write a 64 MiB + 1 KiB result.json and exit 0 (the host must reject it unread)."""

from __future__ import annotations

import os

from evaluators.adapters import EmbeddingAdapter

SIZE = 64 * 1024 * 1024 + 1024


class Attack(EmbeddingAdapter):
    def embed(self, strings):
        head, tail = b'{"metrics": [], "pad": "', b'"}'
        with open("/out/result.json", "wb") as handle:
            handle.write(head)
            handle.write(b"x" * (SIZE - len(head) - len(tail)))
            handle.write(tail)
        os._exit(0)
