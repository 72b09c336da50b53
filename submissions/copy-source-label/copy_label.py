"""A floor for the identity-blinded track (T5): copy the source label the prompt states, know nothing else.

Under C2 and C3 the prompt states a label of the source molecule ("Known property of the source molecule:
…"); this model answers the target's question with exactly that label (the number, or yes/no as the
sentence says). It abstains (empty answer) everywhere else: C0, C1, the reconstruction, and every other
track's questions. Its collapse ratio under C2 is the data's own: perfect on label-consistent pairs, as far
off as the edit moved the label on the others; under C3 it always moves toward the false label.
"""

from __future__ import annotations

import re

from evaluators.adapters import Completion, GenerativeAdapter

_STATED = re.compile(r"^Known property of the source molecule: (?P<statement>.+)$", re.M)
_NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?")
_NEGATIONS = (" not ", " at most ", " does not ")


def answer(prompt: str) -> str:
    """Return the stated source label as an answer, or ``""`` when the prompt states none.

    Examples
    --------
    >>> answer("Known property of the source molecule: its hydration free energy in water is -5.94 kcal/mol.")
    '-5.94'
    >>> answer("Known property of the source molecule: its Wildman-Crippen logP is not greater than 3.\\n"
    ...        "Answer yes or no.")
    'no'
    >>> answer("Target molecule (SMILES): CCO")
    ''
    """
    match = _STATED.search(prompt)
    if match is None:
        return ""
    statement = f" {match['statement']} "
    if "Answer yes or no." in prompt:
        return "no" if any(n in statement for n in _NEGATIONS) else "yes"
    number = _NUMBER.search(statement)
    return number.group(0).replace("−", "-") if number else ""


class SourceLabelCopier(GenerativeAdapter):
    """Answers with the stated source label; abstains where none is stated."""

    def generate(self, requests):  # noqa: D102
        out = [Completion(request.id, answer(request.prompt), "stop") for request in requests]
        self.report("generate", len(requests), len(requests))
        return out

    def describe(self):  # noqa: D102
        return {
            "answers": "the source label stated in the prompt (T5 C2/C3)",
            "abstains_on": ["everything else"],
        }
