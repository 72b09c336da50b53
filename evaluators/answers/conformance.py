"""The reader's conformance corpus (``conformance.jsonl``) and how much of it the reader reads as graded.

Each entry is a completion written in a style real models use, for one task of T3, T4 or T5, with the value
a careful chemist grading by hand records (``null``: no answer). The test suite asserts every entry
(``tests/evaluators/test_answer_conformance.py``); the methodology page shows the corpus's size and the
share read (:func:`conformance`). Built by ``leaderboard/tools/answer_corpus.py``.

Side effects: :func:`conformance` runs OPSIN (Java) once for the name entries.
"""

from __future__ import annotations

import functools
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.answers import Reading, read_batch

__all__ = ["CORPUS", "Conformance", "conformance", "entries", "read_entries", "same"]

CORPUS = Path(__file__).with_name("conformance.jsonl")


def entries() -> list[dict[str, Any]]:
    """Return the corpus entries in file order (``track, task, kind, style, completion, expected, why``)."""
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def read_entries(items: list[dict[str, Any]]) -> list[Reading]:
    """Read every entry's completion as the tracks do: one batch per kind (labels per task), in order."""
    groups: dict[tuple[str, str | None], list[int]] = defaultdict(list)
    for i, e in enumerate(items):
        groups[(e["kind"], e["task"] if e["kind"] == "label" else None)].append(i)
    out: list[Reading | None] = [None] * len(items)
    for (kind, task), index in groups.items():
        for i, reading in zip(index, read_batch(kind, [items[i]["completion"] for i in index], task=task),
                              strict=True):  # fmt: skip
            out[i] = reading
    return [r for r in out if r is not None]


def same(got: Any, expected: Any) -> bool:
    """Tell whether a read value is the graded one (numbers to 1e-9, counts exactly; none matches none)."""
    if expected is None or got is None:
        return got is None and expected is None
    if isinstance(expected, bool) or isinstance(got, bool):
        return got is expected
    if isinstance(expected, int) and isinstance(got, int):  # a count
        return got == expected
    if isinstance(expected, (int, float)):
        return isinstance(got, float) and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)
    return got == expected


@dataclass(frozen=True)
class Conformance:
    """How the reader fares on the corpus: entries read as graded, of all, and the same per answer kind."""

    right: int
    total: int
    by_kind: dict[str, tuple[int, int]]
    styles: int
    tasks: int


@functools.cache
def conformance() -> Conformance:
    """Read the whole corpus once (per process) and count the entries read as graded."""
    items = entries()
    readings = read_entries(items)
    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for e, r in zip(items, readings, strict=True):
        by_kind[e["kind"]][0] += same(r.value, e["expected"])
        by_kind[e["kind"]][1] += 1
    return Conformance(
        right=sum(v[0] for v in by_kind.values()),
        total=len(items),
        by_kind={k: (v[0], v[1]) for k, v in sorted(by_kind.items())},
        styles=len({e["style"] for e in items}),
        tasks=len({(e["track"], e["task"]) for e in items}),
    )
