"""Hostile: flood stdout and stderr (the host must keep only a capped tail and not hang)."""

from __future__ import annotations

import sys

from evaluators.adapters import EmbeddingAdapter

MIB = 1 << 20


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        chunk = ("A" * 1023 + "\n") * 1024  # 1 MiB of lines
        for _ in range(32):
            sys.stdout.write(chunk)
            sys.stderr.write(chunk.replace("A", "E"))
        sys.stderr.write("L" * (4 * MIB))  # one 4 MiB line without a newline
        sys.stdout.flush()
        sys.stderr.write("\n")
        sys.stderr.flush()
        raise RuntimeError("flooded stdout and stderr with 68 MiB")

    def embed(self, strings):
        raise AssertionError("not reached")
