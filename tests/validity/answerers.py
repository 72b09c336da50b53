"""Synthetic answerers for the degenerate-answerer harness (issue 28): ``answer(question, case) -> text``.

An answerer sees one :class:`~evaluators.asking.Question` and the host-side :class:`Case` of its track
(the truth of every question, the valid answers of the set, the names of its molecules, the source labels
of T5): it is test code on the host, so the oracle may read the truths the container never sees. Every
random choice is seeded by (answerer, question id): drawn independently per representation and template.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evaluators.asking import Question

#: Share of questions the noisy oracle answers right.
NOISY_RIGHT = 0.7


@dataclass
class Case:
    """What the host knows about a track's questions (built by the harness from the track's own truths).

    Attributes
    ----------
    truths : dict
        Request id → the normalised truth (``bool`` label, ``float`` number, canonical SMILES or formula).
    pools : dict
        ``(task, kind)`` → the distinct truths of that task over the sample (what random-valid draws from).
    names : dict
        Canonical SMILES → a name of that molecule (for answers of kind ``name``).
    sources : dict
        T5: request id → the source label the source-label copier answers (stated or remembered).
    """

    truths: dict[str, Any]
    pools: dict[tuple[str, str], list[Any]]
    names: dict[str, str] = field(default_factory=dict)
    sources: dict[str, Any] = field(default_factory=dict)


Answerer = Callable[[Question, Case], str]


def task_of(q: Question) -> str:
    """The task name of a question, whatever the track's task object is (a name, for captioning)."""
    if isinstance(q.task, str):
        return q.task
    return str(getattr(q.task, "name", None) or q.task.task)


def _rng(name: str, q: Question) -> random.Random:
    # Seeded by the readable key, not the opaque id (salted by the track version): the same draws as before.
    return random.Random(int(hashlib.sha256(f"{name}|{q.key}".encode()).hexdigest()[:16], 16))


def write(kind: str, value: Any, case: Case) -> str:
    """Write a normalised value the way a model would answer it (kind of the question)."""
    if value is None:
        return ""
    if kind == "label":
        return "yes" if value else "no"
    if kind == "number":
        return repr(float(value))
    if kind == "count":
        return str(int(value))
    if kind == "name":
        return case.names.get(value, "")
    if kind == "names":  # a set of molecules: each component's name, joined by '.' as asked
        names = [case.names.get(part, "") for part in str(value).split(".")]
        return ".".join(names) if all(names) else ""
    return str(value)


def random_valid(name: str, q: Question, case: Case) -> str:
    """A random valid answer: a molecule or formula of the set, a label, a number in the truths' range."""
    rng = _rng(name, q)
    if q.kind == "label":
        return write("label", rng.random() < 0.5, case)
    pool = case.pools[(task_of(q), q.kind)]
    if q.kind == "number":
        return write("number", rng.uniform(min(pool), max(pool)), case)
    return write(q.kind, rng.choice(pool), case)


def oracle(q: Question, case: Case) -> str:
    """The truth, written as an answer."""
    return write(q.kind, case.truths[q.request.id], case)


def noisy_oracle(q: Question, case: Case) -> str:
    """Right on :data:`NOISY_RIGHT` of the questions, random-valid on the others (seeded per question)."""
    if _rng("noisy-coin", q).random() < NOISY_RIGHT:
        return oracle(q, case)
    return random_valid("noisy", q, case)


def biased_oracle(q: Question, case: Case) -> str:
    """Right when the molecule is written as SMILES (canonical or randomized), random-valid otherwise."""
    if q.representation in ("smiles", "randomized"):
        return oracle(q, case)
    return random_valid("biased", q, case)


_PER_KIND = {"label": "yes", "number": "0", "smiles": "CCO", "name": "ethanol", "names": "ethanol.water",
             "formula": "C2H6O",
             "count": "1", "caption": "The molecule is a member of the class of organic compounds."}


def constant(text: str) -> Answerer:
    """The same text to every question."""
    return lambda q, case: text


#: Honest answerers (name → answerer): oracle ≥ noisy oracle on every criterion; the biased one is reported.
HONEST: dict[str, Answerer] = {
    "oracle": oracle,
    "noisy_oracle": noisy_oracle,
    "biased_oracle": biased_oracle,
}

#: Answerers that do not read the molecule: the noisy oracle must beat each on every headline criterion.
DEGENERATE: dict[str, Answerer] = {
    "constant_yes": constant("yes"),
    "constant_no": constant("no"),
    "constant_zero": constant("0"),
    "constant_molecule": constant("CCO"),
    "constant_per_kind": lambda q, case: _PER_KIND[q.kind],
    "echo_input": lambda q, case: q.shown,
    "abstain_empty": constant(""),
    "abstain_idk": constant("I don't know"),
    "unparseable": constant("%%%"),
    "absurd_high": constant("1e14"),
    "absurd_low": constant("-1e9"),
    "random_valid": lambda q, case: random_valid("random", q, case),
}

#: T5 only: copies the source's label (the stated one under C2/C3), the source SMILES when asked for one.
SOURCE_COPIER: dict[str, Answerer] = {
    "source_label_copier": lambda q, case: write(q.kind, case.sources.get(q.request.id), case),
}
