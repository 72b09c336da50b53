"""Hostile: answer with names that make the host's OPSIN parse explode (issue 30, item 1).

``tris(tris(…))silane`` ten levels deep is 125 characters and 3**10 silicon atoms: it once held the host's
JVM at 3.4 GB for 175 s. Brackets 40 deep and a name of more than 2000 characters are the other caps.
"""

from __future__ import annotations

from evaluators.adapters import Completion, GenerativeAdapter


def tris(depth: int) -> str:
    """``tris(tris(…(trimethylsilyl)silyl…)silyl)silane``: 3**depth Si atoms, ~11 characters a level."""
    name = "trimethylsilyl"
    for _ in range(depth - 1):
        name = f"tris({name})silyl"
    return f"tris({name})silane"


BOMBS = [
    tris(10),
    "(" * 40 + "methyl" + ")" * 40 + "methane",
    "1-" + "methylidene" * 5500 + "propane",  # 60 000 characters (the host keeps the first 4000)
]


class Attack(GenerativeAdapter):
    def generate(self, requests):
        # Not a yes/no question: a lenient label reader might take a bomb for "yes".
        asked = [r for r in requests if "yes or no" not in r.prompt]
        bombs = {r.id: BOMBS[k % len(BOMBS)] for k, r in enumerate(asked)}
        out = [Completion(r.id, bombs.get(r.id, "maybe"), "stop") for r in requests]
        self.report("generate", len(requests), len(requests))
        return out

    def describe(self):
        return {"answers": "OPSIN bombs"}
