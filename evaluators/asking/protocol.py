r"""The answer protocol: the same last instruction, budgets and stop strings for every generative model.

Every question of T3, T4 and T5 ends with one line that asks for the final answer on a marked last line
(:func:`with_protocol`), so that a model may reason first and still be read the same way as a terse one:
the reader (:mod:`evaluators.answers`) takes the last ``Answer:`` line and falls back to its older rules
only when there is none. ChemBench asks for tags and lm-evaluation-harness for a marked line; a marked
line is what chat models write unprompted most often.

Two kinds of model are asked alike but decoded with different room (:func:`decoding`):

=========  =========================================================  ==================================
kind       who                                                        budget, stop strings
=========  =========================================================  ==================================
direct     a model that continues the prompt (no chat template)       the task's own budget; a blank line
                                                                      after the first text ends the answer
chat       a model with a chat template, or an API (endpoints speak   ``max(task budget, CHAT_BUDGET)``;
           chat)                                                      no stop string: reasoning may span
                                                                      paragraphs, the end of turn ends it
=========  =========================================================  ==================================

A stop string never cuts a leading blank line (:func:`evaluators.adapters.stop_index`): a completion that
opens with ``"\\n\\n"`` keeps its answer. All of it is part of each track's definition, hence of the
benchmark version.
"""

from __future__ import annotations

__all__ = ["ANSWER_LINE", "CHAT_BUDGET", "DIRECT_STOP", "MODEL_KINDS", "WHAT", "decoding", "definition",
           "with_protocol"]  # fmt: skip

#: The last line of every question; ``{what}`` names the answer kind (:data:`WHAT`).
ANSWER_LINE = 'End your reply with a final line of the form "Answer: <answer>", where <answer> is {what}.'
#: What ``<answer>`` is, per answer kind (:data:`evaluators.answers.ANSWER_KINDS`).
WHAT = {
    "smiles": "the SMILES string",
    "name": "the IUPAC name",
    "formula": "the molecular formula",
    "label": "yes or no",
    "number": "a number",
}
#: Tokens a chat model may spend on one answer (reasoning included), at least.
CHAT_BUDGET = 512
#: Stop strings of a direct model: a blank line after the first text (never a leading one).
DIRECT_STOP = ("\n\n",)
MODEL_KINDS = ("direct", "chat")


def with_protocol(prompt: str, kind: str, *, what: str = "") -> str:
    """Return ``prompt`` with the protocol's last line for an answer of ``kind`` (or ``what``, when given).

    ``what`` names the answer where its kind depends on the input (T3's translation asks for "the IUPAC
    name or SMILES asked for", so that its SMILES and name questions stay word for word the same).

    Examples
    --------
    >>> print(with_protocol("What is the molecular formula of ethanol?", "formula"))
    What is the molecular formula of ethanol?
    End your reply with a final line of the form "Answer: <answer>", where <answer> is the molecular formula.

    Raises
    ------
    KeyError
        If ``kind`` is not an answer kind.
    """
    return f"{prompt}\n{ANSWER_LINE.format(what=what or WHAT[kind])}"


def decoding(direct_budget: int, *, chat: bool) -> tuple[int, tuple[str, ...]]:
    r"""Return ``(max_new_tokens, stop)`` of one question whose task allows ``direct_budget`` tokens.

    Examples
    --------
    >>> decoding(32, chat=False), decoding(32, chat=True), decoding(1024, chat=True)
    ((32, ('\n\n',)), (512, ()), (1024, ()))
    """
    if chat:
        return max(direct_budget, CHAT_BUDGET), ()
    return direct_budget, DIRECT_STOP


def definition() -> dict[str, object]:
    """Return the protocol as data, for each track's :meth:`~evaluators.tracks.Track.definition`."""
    return {
        "answer_line": ANSWER_LINE,
        "what": dict(WHAT),
        "chat_budget": CHAT_BUDGET,
        "direct_stop": list(DIRECT_STOP),
        "chat_stop": [],
        "stop_after_text_only": True,
    }
