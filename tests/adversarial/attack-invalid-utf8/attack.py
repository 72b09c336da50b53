"""Hostile: one line of ``/out/completions.jsonl`` that is not UTF-8 (issue 30, item 3).

The adapter answers "yes" to every yes/no question (a valid answer) and registers an exit handler that,
after the evaluator has written the completions and the result, replaces the answer of one question with
the bytes 0xff 0xfe 0xfd. Only that answer may become invalid; the run must still be scored.
"""

from __future__ import annotations

import atexit
from pathlib import Path

from evaluators.adapters import Completion, GenerativeAdapter

TARGET = b'"completion": "yes"'


def corrupt(path: Path = Path("/out/completions.jsonl")) -> None:
    if not path.is_file():
        return
    data = path.read_bytes()
    head, sep, tail = data.partition(TARGET)  # the first yes/no answer only
    if sep:
        path.write_bytes(head + b'"completion": "\xff\xfe\xfd"' + tail)


class Attack(GenerativeAdapter):
    def __init__(self, config):
        super().__init__(config)
        atexit.register(corrupt)

    def generate(self, requests):
        out = [Completion(r.id, "yes" if "yes or no" in r.prompt else "0", "stop") for r in requests]
        self.report("generate", len(requests), len(requests))
        return out

    def describe(self):
        return {"answers": "yes, one of them corrupted on exit"}
