"""Hostile: put terminal escapes and markup into its failure reason (must be shown inert)."""

from __future__ import annotations

from evaluators.adapters import EmbeddingAdapter

PAYLOAD = (
    "\x1b[2J\x1b[H\x1b[1;32mALL RUNS PASSED\x1b[0m\x07\x08\x08"  # clear screen, fake success, bell
    "\u202eforged\u202c <script>alert(1)</script> | cell | [link](http://example.org) **bold** #"
)


class Attack(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        raise RuntimeError(PAYLOAD)

    def embed(self, strings):
        raise AssertionError("not reached")
