"""Training examples and tokenizer of the generative reference models (``chem-t5-*``, issue 12).

The models answer the consistency track's (T3) questions whose answers RDKit computes exactly for every
corpus molecule (:data:`TRAINED_TASKS`): name ↔ structure translation, molecular formula and Lipinski's rule
of five. An *item* is one (molecule, task); it has two *views*, the question about the molecule's SMILES and
the same question about its IUPAC name, worded exactly as T3 asks (:meth:`evaluators.tracks.
consistency_tasks.Task.prompt`), so the model is evaluated on the wording it learned and the fixed words act
as the task flag. Answers: translation from SMILES → the name, from the name → canonical SMILES; formula →
the Hill formula; Lipinski → ``yes``/``no`` — exactly what T3's scoring compares against
(:func:`evaluators.asking.tasks.truth`).

Tokenizer (:func:`build_tokenizer`): each fixed part of a T3 question (the words before and after the
molecule, per task and notation) is one added token — the task flag — and the molecule and the answers are
split by a byte-pair encoding learned from the corpus's SMILES, names and formulas. ``$A </s>`` like T5;
``<pad>`` (0) starts decoding.

Pure functions of their inputs (no I/O besides :func:`save_tokenizer`); deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from evaluators.asking.tasks import TASKS, Task

__all__ = [
    "PAD",
    "EOS",
    "UNK",
    "TRAINED_TASKS",
    "Item",
    "Molecule",
    "answer",
    "bpe_tokenizer",
    "build_tokenizer",
    "epoch_items",
    "make_molecules",
    "question_flags",
    "views",
]

PAD, EOS, UNK = "<pad>", "</s>", "<unk>"
#: T3 tasks the references are trained on (labels RDKit computes for every molecule).
TRAINED_TASKS: tuple[str, ...] = ("translation", "formula", "lipinski")
#: Tasks whose two views share one answer: the KL consistency term applies to these only (translation
#: answers a name for a SMILES and a SMILES for a name, two different output spaces).
SHARED_ANSWER_TASKS: tuple[str, ...] = ("formula", "lipinski")
_BY_NAME: dict[str, Task] = {t.name: t for t in TASKS}


@dataclass(frozen=True, slots=True)
class Molecule:
    """One corpus molecule with every trained answer.

    Attributes
    ----------
    smiles, name : str
        Canonical isomeric SMILES and the (OPSIN-verified) IUPAC name.
    formula : str
        Hill formula (RDKit ``CalcMolFormula``).
    lipinski : str
        ``yes`` when at most one rule of five is violated, else ``no`` (T3's definition).
    """

    smiles: str
    name: str
    formula: str
    lipinski: str


@dataclass(frozen=True, slots=True)
class Item:
    """One (molecule, task) of an epoch: the molecule's index and the task name."""

    molecule: int
    task: str


def make_molecules(pairs: Sequence[tuple[str, str]]) -> list[Molecule]:
    """Compute the trained answers of every ``(smiles, name)`` pair with T3's own ground-truth code.

    Raises
    ------
    ValueError
        If RDKit cannot read a SMILES (the corpus holds only parsed molecules; say which).
    """
    out = []
    for smiles, name in pairs:
        record = {"smiles": smiles}
        formula = _truth("formula", record)
        lipinski = _truth("lipinski", record)
        if formula is None or lipinski is None:
            raise ValueError(f"corpus molecule {smiles!r} ({name!r}): RDKit cannot compute its labels")
        out.append(Molecule(smiles, name, _formula_text(smiles), "yes" if lipinski else "no"))
    return out


def _truth(task: str, record: dict[str, str]):
    from evaluators.asking.tasks import truth

    return truth(_BY_NAME[task], record)


def _formula_text(smiles: str) -> str:
    from rdkit import Chem
    from rdkit.Chem import rdMolDescriptors

    return rdMolDescriptors.CalcMolFormula(Chem.MolFromSmiles(smiles))


def answer(molecule: Molecule, task: str, notation: str) -> str:
    """Return the target text of ``task`` about ``molecule`` asked in ``notation`` (smiles or iupac)."""
    if task == "translation":
        return molecule.name if notation == "smiles" else molecule.smiles
    return molecule.formula if task == "formula" else molecule.lipinski


def views(
    molecule: Molecule, task: str, smiles: str | None = None
) -> tuple[tuple[str, str], tuple[str, str]]:
    """Return the item's two ``(question, answer)`` views: about the SMILES, then about the name.

    Parameters
    ----------
    smiles : str, optional
        The SMILES to ask about (a randomized one); default the canonical SMILES. The answer to a
        translation from SMILES is the name either way.
    """
    t = _BY_NAME[task]
    shown = smiles or molecule.smiles
    return (
        (t.prompt("smiles", shown), answer(molecule, task, "smiles")),
        (t.prompt("iupac", molecule.name), answer(molecule, task, "iupac")),
    )


def question_flags() -> list[str]:
    """Return the fixed words of every trained question, before and after the molecule (task flags).

    T3 writes randomized SMILES with the SMILES wording, so two notations cover the three representations.
    """
    marker = "\x00"
    flags: list[str] = []
    for name in TRAINED_TASKS:
        for notation in ("smiles", "iupac"):
            before, after = _BY_NAME[name].prompt(notation, marker).split(marker)
            flags += [f for f in (before, after) if f and f not in flags]
    return flags


def epoch_items(n_molecules: int, *, seed: int, epoch: int) -> list[Item]:
    """Every (molecule, task) once, shuffled by ``random.Random(f"{seed}:{epoch}")``."""
    items = [Item(m, t) for m in range(n_molecules) for t in TRAINED_TASKS]
    random.Random(f"{seed}:{epoch}").shuffle(items)
    return items


def _bpe_corpus(molecules: Sequence[Molecule]) -> Iterator[str]:
    for m in molecules:
        yield m.smiles
        yield m.name
        yield m.formula
    for _ in range(2):  # BPE keeps merges seen at least twice: make each answer word one token
        yield "yes"
        yield "no"


def build_tokenizer(molecules: Sequence[Molecule], *, vocab_size: int = 1024, max_length: int = 192):
    """Learn the BPE on the corpus and wrap it with the question flags as ``PreTrainedTokenizerFast``.

    Parameters
    ----------
    molecules : sequence of Molecule
        The training molecules (SMILES, names and formulas feed the merges).
    vocab_size : int
        BPE vocabulary size (flags and special tokens come on top).
    max_length : int
        ``model_max_length``.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        ``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2; every input ends with ``</s>``.
    """
    flags = question_flags()
    return bpe_tokenizer(_bpe_corpus(molecules), flags, vocab_size=vocab_size, max_length=max_length)


def bpe_tokenizer(texts: Iterable[str], flags: Sequence[str], *, vocab_size: int, max_length: int):
    """Learn a BPE on ``texts`` and add each of ``flags`` as one token; T5's special tokens and layout.

    Parameters
    ----------
    texts : iterable of str
        The text the merges are learned from (a merge must be seen at least twice).
    flags : sequence of str
        Fixed prompt parts, each one added token (not normalised, matched anywhere).
    vocab_size : int
        BPE vocabulary size (flags and special tokens come on top).
    max_length : int
        ``model_max_length``.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        ``<pad>`` 0, ``</s>`` 1, ``<unk>`` 2; every input ends with ``</s>``.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE(unk_token=UNK))
    # Metaspace keeps spaces inside names ("acetic acid") recoverable when decoding.
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=[PAD, EOS, UNK], show_progress=False, min_frequency=2
    )
    backend.train_from_iterator(texts, trainer=trainer)
    backend.add_tokens([AddedToken(f, normalized=False, single_word=False) for f in flags])
    backend.post_processor = processors.TemplateProcessing(
        single=f"$A {EOS}", pair=f"$A {EOS} $B {EOS}", special_tokens=[(EOS, backend.token_to_id(EOS))]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD,
        eos_token=EOS,
        unk_token=UNK,
        model_max_length=max_length,
        padding_side="right",
        model_input_names=["input_ids", "attention_mask"],
    )
