"""Hostile: write a result.json that is not JSON and exit 0 (the host must reject it)."""

from __future__ import annotations

import os

from evaluators.adapters import EmbeddingAdapter


class Attack(EmbeddingAdapter):
    def embed(self, strings):
        with open("/out/result.json", "wb") as handle:
            handle.write(b"\x00\xff\xfe not json {{{")
        os._exit(0)
