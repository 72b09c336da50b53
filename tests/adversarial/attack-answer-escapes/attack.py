"""Hostile: answers that act on a maintainer's terminal when the exports are printed (issue 30, item 3).

Every answer is a valid SMILES wrapped in a screen clear, colours, a window title with a bell, a carriage
return and the bidi override U+202E; the published answers must carry them as visible escapes.
"""

from __future__ import annotations

from evaluators.adapters import Completion, GenerativeAdapter

PAYLOAD = "\x1b[2J\x1b[H\x1b[1;31mCCO\x1b[0m\x1b]0;pwned\x07\r\u202eevil"


class Attack(GenerativeAdapter):
    def generate(self, requests):
        out = [Completion(r.id, PAYLOAD, "stop") for r in requests]
        self.report("generate", len(requests), len(requests))
        return out

    def describe(self):
        return {"answers": "terminal escapes"}
