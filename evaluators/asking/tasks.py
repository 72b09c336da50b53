"""The questions of the consistency track (T3) as data: one :class:`Task` per question and representation.

Like lm-evaluation-harness task configs, a task is declared, not coded: a prompt template with one
``{molecule}`` slot, the phrase that introduces the molecule in each representation (the only words that
differ between the SMILES and the IUPAC version of a question), what kind of answer it expects
(:data:`evaluators.answers.ANSWER_KINDS`), its decoding budget, and the record fields it needs. The ground
truth of every task is computed on the host from the record (:func:`truth`), never shown to the model.

Representations (SPEC §4 T3): ``smiles`` (RDKit canonical SMILES), ``iupac`` (the systematic name),
``randomized`` (a random-atom-order SMILES, seeded per item:
:mod:`evaluators.notations.augmentations.random_order`), ``selfies`` and ``inchi`` (standard InChI), both
written by the notation registry (:mod:`evaluators.notations.representations`). Pairs compared:
``smiles-iupac`` (the paper's), ``smiles-randomized``, ``smiles-selfies`` and ``smiles-inchi`` (issue 33).

A task is asked in the representations its :attr:`Task.answer` names (:attr:`Task.representations`).
SELFIES and InChI are asked only where the question means the same with that input and expects the same
kind of answer: the formula, Lipinski and hydration free energy questions. Not ``translation``: its wording
asks for "the other notation" (name ↔ SMILES), which a SELFIES or an InChI does not have; not ``reaction``:
its reactants are introduced as "SMILES strings" or "IUPAC names", and a reaction's components would each
have to read back (its answers are SMILES either way, or, in ``reaction_own_notation``, the consistency
study's own setting, a SMILES from SMILES and a name from names; nor ``retrosynthesis``, asked from the
product in every writing, whose answer is a set of molecules, and ``retrosynthesis_own_notation``, that set in
the product's notation: SMILES from SMILES, IUPAC names from a name). The InChI's main layer
states the molecular formula: the formula question from an InChI measures reading the notation, not
computing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evaluators.notations.representations import get_representation

__all__ = ["PAIRS", "REPRESENTATIONS", "RETROSYNTHESIS", "TASKS", "Task", "applicable", "input_structures",
           "truth"]  # fmt: skip

#: Every representation a task may be asked in (a task's own: :attr:`Task.representations`).
REPRESENTATIONS = ("smiles", "iupac", "randomized", "selfies", "inchi")
#: Pairs of representations whose answers are compared, as ``a-b`` (a task has those of its representations).
PAIRS = ("smiles-iupac", "smiles-randomized", "smiles-selfies", "smiles-inchi")

#: How a molecule is introduced in each representation (the rest of a question is word for word the same):
#: the notation's own phrase (:mod:`evaluators.notations.representations`).
_MOLECULE = {name: get_representation(name).phrase for name in REPRESENTATIONS}
#: How reactants are introduced (forward reaction prediction, the paper's wording).
_REACTANTS = {
    "smiles": "the SMILES strings of the reactants and reagents, {text},",
    "iupac": "the IUPAC names of the reactants and reagents, {text},",
    "randomized": "the SMILES strings of the reactants and reagents, {text},",
}


def _everywhere(kind: str) -> dict[str, str]:
    """Return the answer kinds of a task asked in every representation: the same ``kind`` in each."""
    return dict.fromkeys(REPRESENTATIONS, kind)


@dataclass(frozen=True, slots=True)
class Task:
    """One question of the track.

    Attributes
    ----------
    name : str
        Result label (the ``task`` dimension).
    label : str
        Display label.
    template : str
        The question with a ``{molecule}`` slot.
    answer : dict of str to str
        Answer kind per representation (``name`` where the model is asked for a name); the task is asked in
        exactly these representations.
    needs : tuple of str
        Record fields the task needs (non-empty); a data set without them does not pose it.
    max_new_tokens : int
        Generation budget of one answer from a direct model (room for ``Answer: `` and the answer); a
        chat model gets the answer protocol's larger one (:mod:`evaluators.asking.protocol`).
    reactions : bool
        The molecule slot holds reactants (``.``-separated components), not one molecule.
    inputs : tuple of str
        The record fields the question's molecule is written from: its SMILES and its name (default: the
        record's molecule; reactions: the reactants; retrosynthesis: the product).
    numeric : bool
        Answers are numbers (MSE metrics) rather than categories (agreement metrics).
    what : str
        What the answer protocol's last line calls the answer
        (:func:`evaluators.asking.protocol.with_protocol`), where the answer kind differs between
        representations; ``""``: named by the answer kind.
    echo_is_no_answer : bool
        An answer that repeats an input molecule (the whole input or one of its components) is not a
        prediction and counts as unusable: otherwise copying the question would be perfectly consistent.
    """

    name: str
    label: str
    template: str
    answer: dict[str, str]
    needs: tuple[str, ...]
    max_new_tokens: int
    reactions: bool = False
    inputs: tuple[str, str] = ("smiles", "iupac")
    numeric: bool = False
    echo_is_no_answer: bool = False
    what: str = ""

    @property
    def representations(self) -> tuple[str, ...]:
        """The representations the task is asked in (:attr:`answer`'s), in :data:`REPRESENTATIONS` order."""
        return tuple(r for r in REPRESENTATIONS if r in self.answer)

    @property
    def pairs(self) -> tuple[str, ...]:
        """The pairs of :data:`PAIRS` whose two representations the task is asked in."""
        return tuple(p for p in PAIRS if set(p.split("-")) <= set(self.answer))

    def prompt(self, representation: str, text: str) -> str:
        """Return the question about ``text``, which is written in ``representation``.

        The answer protocol's last line follows (:func:`evaluators.asking.protocol.with_protocol`).
        """
        from evaluators.asking.protocol import with_protocol

        intro = (_REACTANTS if self.reactions else _MOLECULE)[representation].format(text=text)
        question = self.template.format(molecule=intro)
        return with_protocol(question, self.answer[representation], what=self.what)

    def definition(self) -> dict[str, Any]:
        """Everything about the task that determines results (part of the benchmark version)."""
        return {
            "name": self.name,
            "template": self.template,
            # Only the task's own representations: a task not asked in SELFIES or InChI keeps its phrases.
            "phrases": {r: (_REACTANTS if self.reactions else _MOLECULE)[r] for r in self.representations},
            "answer": dict(self.answer),
            "needs": list(self.needs),
            "max_new_tokens": self.max_new_tokens,
            "echo_is_no_answer": self.echo_is_no_answer,
            "what": self.what,
            **({"inputs": list(self.inputs)} if self.inputs != ("smiles", "iupac") else {}),
        }


TASKS: tuple[Task, ...] = (
    Task(
        name="translation",
        label="Name ↔ structure translation",
        # Asked for a name from a SMILES and for a SMILES from a name: both answers normalise to a structure.
        template="Translate {molecule} into the other notation: give its IUPAC name if you were given a "
        "SMILES, or its SMILES if you were given a name. Answer with the name or SMILES only.",
        # Not in SELFIES or InChI: "the other notation" is the name ↔ SMILES one (module docstring).
        answer={"smiles": "name", "iupac": "smiles", "randomized": "name"},
        needs=("smiles", "iupac"),
        max_new_tokens=128,
        what="the IUPAC name or the SMILES you were asked for",
    ),
    Task(
        name="formula",
        label="Molecular formula",
        template="What is the molecular formula of {molecule}? Answer with the formula only.",
        answer=_everywhere("formula"),
        needs=("smiles", "iupac"),
        max_new_tokens=32,
    ),
    Task(
        name="lipinski",
        label="Lipinski's rule of five (yes/no)",
        template="Does {molecule} satisfy Lipinski's rule of five (at most one violation of: molecular "
        "weight ≤ 500, logP ≤ 5, ≤ 5 hydrogen-bond donors, ≤ 10 hydrogen-bond acceptors)? Answer yes or no.",
        answer=_everywhere("label"),
        needs=("smiles", "iupac"),
        max_new_tokens=32,
    ),
    Task(
        name="hydration_free_energy",
        label="Hydration free energy (kcal/mol)",
        template="What is the hydration free energy of {molecule} in water, in kcal/mol? Answer with a "
        "number only.",
        answer=_everywhere("number"),
        needs=("smiles", "iupac", "value"),
        max_new_tokens=32,
        numeric=True,
    ),
    Task(
        name="reaction",
        label="Forward reaction prediction (product as SMILES)",
        template="Based on {molecule} predict the SMILES string of the product. Please output the product "
        "directly.",
        # Not in SELFIES or InChI: the reactants are introduced as SMILES strings or names (module docstring).
        answer={"smiles": "smiles", "iupac": "smiles", "randomized": "smiles"},
        needs=("reactants_smiles", "reactants_iupac", "product_smiles"),
        max_new_tokens=128,
        reactions=True,
        inputs=("reactants_smiles", "reactants_iupac"),
        echo_is_no_answer=True,
    ),
    Task(
        name="reaction_own_notation",
        label="Forward reaction prediction (product in the reactants' notation)",
        # The consistency study's setting (its eq. 4): SMILES in → SMILES out, IUPAC names in → a name out;
        # both answers are read back to a structure (RDKit, OPSIN) before they are compared.
        template="Based on {molecule} predict the product, written the way the reactants are written: its "
        "SMILES string if they are given as SMILES strings, its IUPAC name if they are given as IUPAC names. "
        "Please output the product directly.",
        answer={"smiles": "smiles", "iupac": "name", "randomized": "smiles"},
        needs=("reactants_smiles", "reactants_iupac", "product_smiles"),
        max_new_tokens=128,
        reactions=True,
        inputs=("reactants_smiles", "reactants_iupac"),
        echo_is_no_answer=True,
        what="the product's SMILES or IUPAC name, as asked",
    ),
    Task(
        name="retrosynthesis",
        label="Retrosynthesis (reactants and reagents as SMILES)",
        # The consistency study's second reaction task: its consistency needs no ground truth (the answers
        # from the product's SMILES and from its name are compared with each other). Accuracy is exact
        # match with what the data record went into the reaction — reactants *and* reagents, as the forward
        # question shows them (the records do not say which is which): reported, never ranked.
        template="Consider {molecule}, the product of a reaction. Predict the SMILES strings of the "
        "reactants and reagents that make it, joined by '.'. Please output them directly.",
        # One molecule shown: every writing, SELFIES and InChI included (where they read back as it).
        answer=_everywhere("smiles"),
        needs=("product_smiles", "product_iupac", "reactants_smiles"),
        max_new_tokens=192,
        inputs=("product_smiles", "product_iupac"),
        echo_is_no_answer=True,
        what="the SMILES strings of the reactants and reagents, joined by '.'",
    ),
    Task(
        name="retrosynthesis_own_notation",
        label="Retrosynthesis (reactants and reagents in the product's notation)",
        # The consistency study's setting for both reaction tasks: SMILES in → SMILES out, an IUPAC name in →
        # IUPAC names out; every name of the answer is read back (OPSIN) and the molecules compared as a set.
        template="Consider {molecule}, the product of a reaction. Predict the reactants and reagents that "
        "make it, written the way the product is written: their SMILES strings if it is given as a SMILES "
        "string, their IUPAC names if it is given as an IUPAC name, joined by '.'. Please output them "
        "directly.",
        answer={"smiles": "smiles", "iupac": "names", "randomized": "smiles"},
        needs=("product_smiles", "product_iupac", "reactants_smiles"),
        max_new_tokens=192,
        inputs=("product_smiles", "product_iupac"),
        echo_is_no_answer=True,
        what="the reactants' and reagents' SMILES strings or IUPAC names, as asked, joined by '.'",
    ),
)
#: Tasks whose answer is the recorded reactants and reagents (a set of molecules), asked from the product.
RETROSYNTHESIS = ("retrosynthesis", "retrosynthesis_own_notation")


def applicable(records: list[dict[str, str]]) -> list[Task]:
    """Tasks every record of a data set can pose (all their fields present and non-empty)."""
    if not records:
        return []
    return [t for t in TASKS if all(all(str(r.get(f) or "").strip() for f in t.needs) for r in records)]


def truth(task: Task, record: dict[str, str]) -> Any:
    """Return the normalised true answer of ``task`` on ``record`` (host side; RDKit), or ``None``.

    translation: the canonical SMILES of the molecule; formula: its Hill formula (element counts, charges
    left out, as the answers are normalised); lipinski: at most one of MW > 500, Crippen logP > 5,
    > 5 H-bond donors, > 10 acceptors (RDKit's Lipinski definitions); hydration_free_energy: the record's
    value; reaction, reaction_own_notation: the canonical SMILES of the recorded product (a name answer is
    read back to a structure before it is compared); retrosynthesis, retrosynthesis_own_notation: the
    canonical SMILES of the recorded reactants and reagents together (RDKit orders the components, so this
    is a set comparison; names are read back first).
    """
    from evaluators.answers import normalise_formula
    from evaluators.notations.smiles import canonical_smiles

    if task.name in RETROSYNTHESIS:  # the recorded reactants and reagents, as one set
        return canonical_smiles(record["reactants_smiles"])
    if task.reactions:
        return canonical_smiles(record["product_smiles"])
    if task.name == "hydration_free_energy":
        return float(record["value"])
    from rdkit import Chem
    from rdkit.Chem import Crippen, Descriptors, Lipinski, rdMolDescriptors

    mol = Chem.MolFromSmiles(record["smiles"])
    if mol is None:
        return None
    if task.name == "translation":
        return Chem.MolToSmiles(mol)
    if task.name == "formula":
        return normalise_formula(rdMolDescriptors.CalcMolFormula(mol))
    if task.name == "lipinski":
        violations = (
            Descriptors.MolWt(mol) > 500,
            Crippen.MolLogP(mol) > 5,
            Lipinski.NumHDonors(mol) > 5,
            Lipinski.NumHAcceptors(mol) > 10,
        )
        return sum(violations) <= 1
    raise KeyError(f"no ground truth for task {task.name!r}")


def input_structures(task: Task, record: dict[str, str]) -> set[str]:
    """Canonical SMILES of the input molecules of ``record``: all of them together and each component."""
    from evaluators.notations.smiles import canonical_smiles

    source = record[task.inputs[0]]
    found = {canonical_smiles(source), *(canonical_smiles(part) for part in source.split("."))}
    return {s for s in found if s}
