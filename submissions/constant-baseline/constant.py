"""The floor of the generative tracks: answers that ignore the molecule.

"yes" to a yes/no question, "0" to a numeric one, and the molecule repeated as written otherwise (a SELFIES
or an InChI copied as a formula answer is no formula: unusable). A model that agrees with itself this way is
perfectly consistent and exactly at chance: its adjusted consistency is 0.
"""

from __future__ import annotations

import re

from evaluators.adapters import Completion, GenerativeAdapter

_MOLECULE = re.compile(
    # T3 introduces a molecule "with the SMILES", "with the SELFIES", "with the InChI" or "named" it.
    r"(?:with the SMILES|with the SELFIES|with the InChI|named|reactants and reagents,) (?P<text>.+?)"
    r"(?:,? into the other notation|,? predict| satisfy|\? Answer|\?)",
    re.S,
)


class ConstantAnswerer(GenerativeAdapter):
    """Constant answers; never looks at the molecule beyond copying it."""

    def generate(self, requests):  # noqa: D102
        out = []
        for request in requests:
            prompt = request.prompt
            if "Answer yes or no" in prompt:
                text = "yes"
            elif "number only" in prompt or "Answer with a number" in prompt:
                text = "0"
            else:
                match = _MOLECULE.search(prompt)
                text = match["text"].strip() if match else ""
            out.append(Completion(request.id, text, "stop"))
        self.report("generate", len(requests), len(requests))
        return out
