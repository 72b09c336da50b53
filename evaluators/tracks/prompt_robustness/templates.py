"""Instruction templates of the prompt-robustness track (T4), loaded from ``prompt_templates.json``.

The templates are data, reviewed like code (lm-evaluation-harness style): per task at least six wordings of
one question, each with an id, a ``{molecule}`` slot and — for tasks asked in several representations — a
``{notation}`` slot (``SMILES``, ``IUPAC name`` …, or the task's own ``notation`` words). The task's
answer-format instruction (one per representation where the answer kind depends on it, as for reactions
given as formulas) is appended to every template identically, so templates differ only in how they ask,
never in what answer they request (ChemDIRT,
``../shared/papers/chemdirt-instruction-representation-benchmark.txt``, §III-C).

Each task names the record field its molecule is written from, per representation (``inputs``), and any
other fields it needs (``needs``, e.g. the measured ``value``); ``formula`` inputs are computed from that
field's SMILES (one formula per ``.``-separated component).

:func:`load_template_sets` checks the file on load: unique ids, the slots each task needs exactly once,
the task's keywords in every template, no template carrying its own answer instruction.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.answers import ANSWER_KINDS

__all__ = [
    "IMAGES", "IMAGE_SLOT", "MIN_TEMPLATES", "NOTATION", "TEMPLATES_FILE", "Template", "TemplateSet",
    "load_template_sets",
]  # fmt: skip

TEMPLATES_FILE = Path(__file__).with_name("prompt_templates.json")
#: Fewest templates a task may have (the issue's minimum).
MIN_TEMPLATES = 6
#: How each representation is named in a prompt (a task may name them otherwise, e.g. in the plural).
NOTATION = {"smiles": "SMILES", "iupac": "IUPAC name", "selfies": "SELFIES", "inchi": "InChI",
            "formula": "molecular formula", "image": "structure drawing"}
#: Representations shown as an image part, not as text: the prompt's ``{molecule}`` slot says
#: :data:`IMAGE_SLOT` and the drawing travels in :attr:`evaluators.adapters.GenerationRequest.images`.
IMAGES = frozenset({"image"})
#: What ``{molecule}`` becomes for an image representation: a marker where the drawing belongs.
IMAGE_SLOT = "[image]"
#: What the answer protocol's last line calls an answer of a kind T3 never asks (the protocol's own words,
#: :data:`evaluators.asking.protocol.WHAT`, are part of every track's definition and stay as they are).
WHAT = {"count": "a whole number"}
_ID = re.compile(r"^[a-z0-9_]{1,32}$")
#: Phrases of an answer-format instruction: they belong to the task's ``instruction``, not to a template.
_FORMAT = re.compile(r"\banswer (with|yes|only)\b|\bonly\.?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Template:
    """One wording of a task's question."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class TemplateSet:
    """A task of the prompt-robustness track and all its templates.

    Attributes
    ----------
    task, label : str
        Result label and display label.
    answer : dict of str to str
        Answer kind (:data:`evaluators.answers.ANSWER_KINDS`) per representation.
    representations : tuple of str
        Representations the task is asked in (some of :data:`NOTATION`).
    inputs : dict of str to str
        Record field the molecule is written from, per representation.
    needs : tuple of str
        Further record fields the task needs: its ground truth, or fields that restrict it to the sets
        holding them (``smiles_to_iupac`` needs ``iupac``: it is posed on named molecules only).
    keywords : tuple of str
        Words every template contains (the question's subject).
    instruction : dict of str to str
        The answer-format sentence appended to every template, per representation.
    templates : tuple of Template
        The wordings, in file order.
    notation : dict of str to str
        The words ``{notation}`` becomes, per representation.
    balance : str
        A binary record field (a measured label) the data set's sample is balanced on
        (:func:`evaluators.tracks.prompt_robustness.sample`); ``""``: none.
    slots : tuple of str
        Further template slots, filled per item by the task's composer (``{group}``: the functional group
        asked about, :mod:`evaluators.tracks.prompt_robustness.groups`).
    what : str
        What the answer protocol's last line calls the answer, where the answer kind's own words do not fit
        (several molecules, not "the SMILES string"); ``""``: the kind's words.
    tautomer_sensitive : bool
        Another tautomer of the molecule can have another truth (a functional group, an aromatic ring, an
        H-bond donor, a fingerprint): a name shown that OPSIN verifies only as a tautomer of the record's
        SMILES then has no truth, and the item is left out of the name's scores.
    """

    task: str
    label: str
    answer: dict[str, str]
    representations: tuple[str, ...]
    inputs: dict[str, str]
    needs: tuple[str, ...]
    keywords: tuple[str, ...]
    instruction: dict[str, str]
    templates: tuple[Template, ...]
    notation: dict[str, str]
    balance: str = ""
    slots: tuple[str, ...] = ()
    tautomer_sensitive: bool = False
    what: str = ""

    @property
    def numeric(self) -> bool:
        """Whether the answers are numbers (error metrics) rather than categories or structures."""
        return all(kind == "number" for kind in self.answer.values())

    @property
    def fields(self) -> tuple[str, ...]:
        """Every record field the task reads."""
        return tuple(dict.fromkeys((*self.inputs.values(), *self.needs)))

    def prompt(self, template: Template, representation: str, molecule: str,
               fill: tuple[tuple[str, str], ...] = ()) -> str:  # fmt: skip
        """Return ``template`` about ``molecule`` written in ``representation``, with the instruction.

        ``fill``: the values of the task's further :attr:`slots` for this item. The answer protocol's last
        line follows (:func:`evaluators.asking.protocol.with_protocol`).
        """
        from evaluators.asking.protocol import with_protocol

        notation = self.notation[representation]
        if representation in IMAGES:
            molecule = IMAGE_SLOT  # the drawing is an image part of the request, never text
        text = template.text.replace("{notation}", notation)
        values = dict(fill)
        missing = [slot for slot in self.slots if slot not in values]
        if missing:
            raise ValueError(f"task {self.task!r}, template {template.id}: no value for the slots {missing}")
        for slot in self.slots:  # before the molecule: a name shown may itself contain braces
            text = text.replace("{" + slot + "}", values[slot])
        text = text.replace("{molecule}", molecule)
        kind = self.answer[representation]
        what = self.what or WHAT.get(kind, "")
        return with_protocol(f"{text} {self.instruction[representation]}", kind, what=what)

    def without_images(self) -> TemplateSet | None:
        """Return the task as a text-only model is asked it: its image representations left out.

        ``None`` when the task is asked only in images. Its :meth:`definition` is then exactly that of the
        same task written without images, so a text-only model's benchmark version does not move when a
        task gains an image setting (nothing it is asked changed).
        """
        kept = tuple(r for r in self.representations if r not in IMAGES)
        if not kept:
            return None
        if kept == self.representations:
            return self

        def only(mapping: dict[str, str]) -> dict[str, str]:
            return {r: v for r, v in mapping.items() if r in kept}

        return TemplateSet(
            task=self.task, label=self.label, answer=only(self.answer), representations=kept,
            inputs=only(self.inputs), needs=self.needs, keywords=self.keywords,
            instruction=only(self.instruction), templates=self.templates, notation=only(self.notation),
            balance=self.balance, slots=self.slots, tautomer_sensitive=self.tautomer_sensitive,
            what=self.what,
        )  # fmt: skip

    def definition(self) -> dict[str, Any]:
        """Everything about the task that determines results (part of the benchmark version)."""
        return {
            "task": self.task,
            "answer": dict(self.answer),
            "representations": list(self.representations),
            "inputs": dict(self.inputs),
            "needs": list(self.needs),
            "instruction": dict(self.instruction),
            "notation": dict(self.notation),
            "templates": {t.id: t.text for t in self.templates},
            **({"balance": self.balance} if self.balance else {}),
            **({"slots": list(self.slots)} if self.slots else {}),
            **({"tautomer_sensitive": True} if self.tautomer_sensitive else {}),
            **({"what": self.what} if self.what else {}),
        }


def _per_representation(value: Any, reps: tuple[str, ...], what: str, problems: list[str]) -> dict[str, str]:
    """One value for every representation: a string serves them all, a mapping names each."""
    if isinstance(value, str):
        return dict.fromkeys(reps, value)
    if isinstance(value, dict) and set(value) == set(reps):
        if all(isinstance(v, str) for v in value.values()):
            return {r: value[r] for r in reps}
    problems.append(f"{what} must be a string or a mapping with exactly the keys {list(reps)}")
    return dict.fromkeys(reps, "")


def _check(entry: dict[str, Any], where: str) -> TemplateSet:
    templates = tuple(Template(str(t["id"]), str(t["text"])) for t in entry["templates"])
    reps = tuple(entry["representations"])
    problems: list[str] = []
    answer = _per_representation(entry["answer"], reps, "answer", problems)
    instruction = _per_representation(entry["instruction"], reps, "instruction", problems)
    inputs = _per_representation(entry.get("inputs", {}), reps, "inputs", problems)
    notation = {**{r: NOTATION[r] for r in reps if r in NOTATION}, **entry.get("notation", {})}
    bad_kinds = sorted({k for k in answer.values() if k not in ANSWER_KINDS})
    if bad_kinds:
        problems.append(f"answer kinds {bad_kinds} are not some of {ANSWER_KINDS}")
    if not reps or any(r not in NOTATION for r in reps):
        problems.append(f"representations {list(reps)} must be some of {list(NOTATION)}")
    if len(templates) < MIN_TEMPLATES:
        problems.append(f"{len(templates)} templates, at least {MIN_TEMPLATES} needed")
    ids = [t.id for t in templates]
    if len(set(ids)) != len(ids) or not all(_ID.match(i) for i in ids):
        problems.append(f"template ids {ids} must be unique lowercase slugs")
    if len({t.text for t in templates}) != len(templates):
        problems.append("two templates have the same text")
    for t in templates:
        slots = re.findall(r"\{(\w+)\}", t.text)
        wanted = ["molecule", "notation"] if len(reps) > 1 else ["molecule"]
        wanted += list(entry.get("slots", ()))
        if sorted(slots) != sorted(wanted):
            problems.append(f"template {t.id}: slots {slots}, expected each of {wanted} once")
        missing = [k for k in entry["keywords"] if k.lower() not in t.text.lower()]
        if missing:
            problems.append(f"template {t.id} does not mention {missing}")
        if _FORMAT.search(t.text):
            problems.append(f"template {t.id} states an answer format; that is the task's 'instruction'")
    balance = entry.get("balance", "")
    if balance and (balance not in entry.get("needs", ()) or set(answer.values()) != {"label"}):
        problems.append(f"balance {balance!r} must be one of the task's 'needs' and the answers yes/no")
    if not isinstance(entry.get("tautomer_sensitive", False), bool):
        problems.append("tautomer_sensitive must be true or false")
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))
    return TemplateSet(
        task=str(entry["task"]),
        label=str(entry["label"]),
        answer=answer,
        representations=reps,
        inputs=inputs,
        needs=tuple(entry.get("needs", ())),
        keywords=tuple(entry["keywords"]),
        instruction=instruction,
        templates=templates,
        notation={r: notation[r] for r in reps if r in notation},
        balance=str(entry.get("balance", "")),
        slots=tuple(entry.get("slots", ())),
        tautomer_sensitive=bool(entry.get("tautomer_sensitive", False)),
        what=str(entry.get("what", "")),
    )


def load_template_sets(path: Path = TEMPLATES_FILE) -> tuple[TemplateSet, ...]:
    """Load and check the template file (module docstring).

    Raises
    ------
    ValueError
        Naming the file, the task and every problem, when a task breaks a rule.
    """
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    sets = tuple(_check(entry, f"{path}: task {entry.get('task')!r}") for entry in doc["tasks"])
    names = [s.task for s in sets]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: task names {names} repeat")
    return sets
