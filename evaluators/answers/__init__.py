r"""Deterministic answer reading for generative tracks (host side; no LLM judge).

A completion is free text. :func:`read` finds its answer span by fixed rules (:mod:`.spans`) and reads it
as one answer kind, giving a :class:`Reading`: the comparable value, or ``None`` when it does not read as
that kind of answer (SPEC §4 T3: invalid = no answer; a missing answer never equals another), the id of
the rule that read it and the span.

Finding the span (:mod:`.spans`; rule ids ``tag``, ``boxed``, ``answer-line``, ``fence``, ``first-line``):
the *last* marked answer — ``<answer>…</answer>``, ``\boxed{…}`` or a line ``Answer:`` / ``Final answer:`` /
``**Answer:**`` — else the first code fence, else the first non-empty line; then labels (``SMILES:``,
``The product is``), hedges (``I think``, ``probably``, ``about``), emphasis, quotes, ``$…$`` and a trailing
full stop are dropped. A span that refuses (``N/A``, ``unknown``, ``I cannot determine …``) is no answer.

=========  ========================================================================  ======================
kind       rule (module)                                                             value
=========  ========================================================================  ======================
smiles     the span if RDKit parses it; else the first molecule after a product      RDKit canonical SMILES
           cue (``>>``, ``->``, ``→``, ``gives``, ``yields``: rule ``after-arrow``),
           the molecule the span starts with, or the last one named (rule
           ``last-molecule``); alternatives (``CCO or CCN``) are no answer
           (:mod:`.structures`)
name       the span (cut at a clause break), then without a parenthetical aside      RDKit canonical SMILES
           (rule ``without-aside``), parsed by OPSIN (:mod:`.opsin`), at most two
           batches per call
formula    element counts, condensed and LaTeX forms included (``CH3CH2OH``,          Hill-order formula
           ``$C_2H_6O$``, ``C₂H₆O``); charges dropped (:mod:`.structures`)
label      every yes/no signal agrees (words, ``satisfies``/``does not satisfy``;     bool
           task ``lipinski``: ``N violations``, yes when N ≤ 1); else no answer
           (:mod:`.labels`)
number     the value, never a locant, temperature or condition; dashes and minus     float
           signs, ``1.2 × 10^-3``, units; alternatives are no answer (:mod:`.numbers`)
count      a whole number ≥ 0 in digits or words (``three rings``, ``no rings``);   int
           a fraction or a negative value is no answer (:mod:`.counts`)
=========  ========================================================================  ======================

:func:`extract` is the span alone; ``normalise_*`` and :func:`normalise` give the values alone.

Invariants: pure functions of their input (and the RDKit/OPSIN versions); never raise on odd text (NUL
bytes, lone surrogates, very long completions: bounded, linear regexes).
Side effects: :func:`read_batch` and :func:`normalise` with kind ``name`` run Java (OPSIN) at most twice
per batch.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.answers.counts import read_count
from evaluators.answers.labels import read_label
from evaluators.answers.numbers import read_number
from evaluators.answers.spans import SPAN_RULES, find_span, is_refusal
from evaluators.answers.structures import (
    bullet_list,
    canonical,
    formula_counts_of,
    name_candidates,
    name_list,
    read_formula,
    read_smiles,
)

__all__ = ["ANSWER_KINDS", "READING_RULES", "Reading", "extract", "formula_counts", "formula_of", "normalise",
           "normalise_formula", "normalise_label", "normalise_number", "normalise_smiles", "read",
           "read_batch"]  # fmt: skip

#: The answer kinds :func:`normalise` knows.
ANSWER_KINDS = ("smiles", "name", "names", "formula", "label", "number", "count")
#: Every rule id a :class:`Reading` may carry (module docstring; ``none``: no answer).
READING_RULES = (*SPAN_RULES, "after-arrow", "last-molecule", "without-aside", "bullet-list")
_OR = re.compile(r"\s(?:or|and/or)\s", re.IGNORECASE)
_FORMULA_TOKEN = re.compile(r"([A-Z][a-z]?)(\d*)")


@dataclass(frozen=True)
class Reading:
    """How one completion was read.

    Attributes
    ----------
    value : Any
        The normalised answer (canonical SMILES, Hill formula, bool or float), ``None`` = no answer.
    rule : str
        The id of the rule that read it (:data:`READING_RULES`); ``"none"`` when ``value`` is ``None``.
    span : str
        The answer span the value was read from (after labels, hedges and emphasis were dropped).
    """

    value: Any
    rule: str
    span: str


_NONE = Reading(None, "none", "")


def extract(text: str) -> str:
    r"""Reduce a completion to its answer span (rules in the module docstring); ``""`` when empty.

    Examples
    --------
    >>> extract("Answer: `CCO`.\nBecause ethanol ...")
    'CCO'
    >>> extract("```\nc1ccccc1\n```")
    'c1ccccc1'
    >>> extract("  **IUPAC name:** 2-methylpropan-1-ol")
    '2-methylpropan-1-ol'
    >>> extract("Reasoning ...\nFinal answer: **CCN**")
    'CCN'
    """
    return find_span(text)[0]


def _reading(value: Any, rule: str, span: str) -> Reading:
    return Reading(value, rule, span) if value is not None else Reading(None, "none", span)


def read(kind: str, text: str, *, task: str | None = None) -> Reading:
    r"""Read one completion as an answer of ``kind`` (smiles, formula, label, number; names: batches).

    Parameters
    ----------
    kind : str
        ``smiles``, ``formula``, ``label``, ``number`` or ``count``.
    text : str
        The raw completion (anything: odd text is no answer, never an error).
    task : str, optional
        The task's name: ``"lipinski"`` reads "N violations" (yes when N ≤ 1).

    Raises
    ------
    ValueError
        If ``kind`` is unknown or ``name`` (OPSIN runs in batches: :func:`read_batch`).

    Examples
    --------
    >>> read("smiles", "Step 1 ...\nAnswer: \\boxed{OCC}")
    Reading(value='CCO', rule='boxed', span='OCC')
    >>> read("label", "No violations.", task="lipinski").value
    True
    >>> read("number", "ΔG(298 K) = –3.2 kcal/mol").value
    -3.2
    >>> read("formula", "CH3CH2OH").value
    'C2H6O'
    """
    if kind not in ANSWER_KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; known: {', '.join(ANSWER_KINDS)}")
    if kind in ("name", "names"):
        raise ValueError(f"names are read in batches: use read_batch({kind!r}, ...)")
    span, rule = find_span(text)
    if not span:
        return _NONE
    if kind == "label":
        return _reading(read_label(span, task), rule, span)
    if is_refusal(span):
        return Reading(None, "none", span)
    if kind == "number":
        return _reading(read_number(span), rule, span)
    if kind == "count":
        return _reading(read_count(span), rule, span)
    if kind == "smiles":
        value, used = read_smiles(span, rule)
    else:
        value, used = read_formula(span, rule)
    return _reading(value, used, span)


def read_batch(
    kind: str,
    texts: Sequence[str],
    *,
    task: str | None = None,
    names_to_smiles: Callable[..., Any] | None = None,
    problems: dict[int, str] | None = None,
) -> list[Reading]:
    r"""Read completions of one answer kind, in order; kind ``name`` parses all names in one OPSIN batch.

    Names: each span's first candidate (:func:`evaluators.answers.structures.name_candidates`) goes to
    OPSIN in one batch; the ones that fail and have a parenthetical aside are tried once more without it,
    in a second batch (rule ``without-aside``).

    Parameters
    ----------
    kind, texts, task
        As :func:`read`; ``kind`` may also be ``name``.
    names_to_smiles : callable, optional
        Name parser (default :func:`evaluators.answers.opsin.names_to_smiles`).
    problems : dict, optional
        Filled with the position and reason of each answer a limit refused; such an answer is ``None``.

    Examples
    --------
    >>> parser = lambda names: ["CCO" if n.lower() == "ethanol" else None for n in names]
    >>> [r.value for r in read_batch("name", ["Ethanol (ethyl alcohol)", "x"], names_to_smiles=parser)]
    ['CCO', None]
    """
    if kind not in ("name", "names"):
        # Completions repeat (a model's favourite answer, a refusal): each distinct text is read once, and
        # a Reading is immutable, so the repeats share it.
        readings = {t: read(kind, t, task=task) for t in dict.fromkeys(texts)}
        return [readings[t] for t in texts]
    if names_to_smiles is None:
        from evaluators.answers.opsin import names_to_smiles
    if kind == "names":
        return _read_name_lists(texts, names_to_smiles, problems)
    spans = [find_span(t) for t in texts]
    # A refusal or alternatives ("ethanol or methanol") never reach OPSIN: no answer.
    candidates = [
        name_candidates(span) if span and not is_refusal(span) and not _OR.search(span) else ("", "")
        for span, _ in spans
    ]
    kwargs: dict[str, Any] = {} if problems is None else {"problems": problems}
    first = list(names_to_smiles([c[0] for c in candidates], **kwargs))
    # Retry without the aside when the whole failed, or when OPSIN read the aside as a second component
    # ("Ethyl acetate (ethyl ethanoate)" reads as a mixture of two esters): one molecule was answered.
    retry = [
        i
        for i, v in enumerate(first)
        if (v is None or "." in str(v)) and candidates[i][1] and candidates[i][1] != candidates[i][0]
    ]
    second: dict[int, Any] = {}
    if retry:
        more: dict[int, str] = {}
        out = names_to_smiles(
            [candidates[i][1] for i in retry], **({} if problems is None else {"problems": more})
        )
        second = dict(zip(retry, out, strict=True))
        if problems is not None:
            problems.update({retry[j]: why for j, why in more.items() if retry[j] not in problems})
    readings = []
    for i, ((span, rule), value) in enumerate(zip(spans, first, strict=True)):
        if second.get(i) is not None:
            if problems is not None:
                problems.pop(i, None)
            readings.append(Reading(second[i], "without-aside", span))
        else:
            readings.append(_reading(value, rule, span))
    return readings


def _read_name_lists(
    texts: Sequence[str], names_to_smiles: Callable[..., Any], problems: dict[int, str] | None
) -> list[Reading]:
    """Read answers that list several names (kind ``names``): every name of every answer in one OPSIN batch.

    The value is the canonical SMILES of all the molecules together (RDKit orders the components: a set);
    an answer with a name OPSIN cannot read, or offering alternatives, is no answer.

    >>> known = {"ethanol": "CCO", "acetic acid": "CC(=O)O"}
    >>> parse = lambda names: [known.get(x.lower()) for x in names]
    >>> reading = _read_name_lists(["Ethanol; acetic acid"], parse, None)
    >>> reading[0].value
    'CC(=O)O.CCO'
    """
    # A plain list of names (no answer line, tag or box) is read whole: its first line names one molecule.
    spans = [(listed, "bullet-list") if rule == "first-line" and (listed := bullet_list(t)) else (span, rule)
             for t, (span, rule) in ((t, find_span(t)) for t in texts)]  # fmt: skip
    lists = [name_list(span) if span and not is_refusal(span) and not _OR.search(span) else []
             for span, _ in spans]  # fmt: skip
    flat = [name for names in lists for name in names]
    owner = [i for i, names in enumerate(lists) for _ in names]
    found: dict[int, str] = {}
    values = list(names_to_smiles(flat, **({} if problems is None else {"problems": found}))) if flat else []
    if problems is not None:
        for position, why in found.items():
            problems.setdefault(owner[position], why)
    readings = []
    start = 0
    for (span, rule), names in zip(spans, lists, strict=True):
        got = values[start : start + len(names)]
        start += len(names)
        joined = canonical(".".join(got)) if got and None not in got else None
        readings.append(_reading(joined, rule, span))
    return readings


def normalise_smiles(text: str) -> str | None:
    """Canonical SMILES of the answer (:func:`read`); the molecule named as the product in a sentence.

    Examples
    --------
    >>> normalise_smiles("OCC")
    'CCO'
    >>> normalise_smiles("The product is C1=CC=CC=C1.")
    'c1ccccc1'
    >>> normalise_smiles("no idea") is None
    True
    """
    return read("smiles", text).value


def formula_of(counts: Counter[str]) -> str:
    """Hill-order formula of element counts: C, then H, then the rest alphabetically (no carbon: all).

    >>> formula_of(Counter({"O": 1, "C": 2, "H": 6}))
    'C2H6O'
    """
    order = sorted(counts)
    if "C" in counts:
        order = ["C", *(["H"] if "H" in counts else []), *sorted(e for e in counts if e not in ("C", "H"))]
    return "".join(f"{e}{counts[e] if counts[e] != 1 else ''}" for e in order if counts[e] > 0)


def formula_counts(formula: str) -> Counter[str]:
    """Return the element counts of a formula: ``{"C": 2, "H": 6, "O": 1}`` for ``C2H6O``.

    Repeated elements sum (``CH3CH2OH``); text that is not a formula gives the counts of its element-like
    tokens (as before), so callers comparing Hill formulas are unaffected.

    >>> dict(formula_counts("C2H6O"))
    {'C': 2, 'H': 6, 'O': 1}
    """
    counts = formula_counts_of(formula) if isinstance(formula, str) else None
    if counts is not None:
        return Counter(counts)
    tokens = _FORMULA_TOKEN.findall(formula if isinstance(formula, str) else "")
    out: Counter[str] = Counter()
    for symbol, number in tokens:
        out[symbol] += int(number) if number else 1
    return out


def normalise_formula(text: str) -> str | None:
    """Hill-order formula of the answer's element counts (:func:`read`).

    Examples
    --------
    >>> normalise_formula("Molecular formula: C₂H₆O")
    'C2H6O'
    >>> normalise_formula("H6 C2 O")
    'C2H6O'
    >>> normalise_formula("C2H6O+")  # charges are not compared
    'C2H6O'
    >>> normalise_formula("ethanol") is None
    True
    """
    return read("formula", text).value


def normalise_label(text: str, task: str | None = None) -> bool | None:
    """Yes/no answer (:func:`read`; ``task="lipinski"`` reads violation counts).

    Examples
    --------
    >>> normalise_label("Yes, it does.")
    True
    >>> normalise_label("no") , normalise_label("maybe")
    (False, None)
    """
    return read("label", text, task=task).value


def normalise_number(text: str) -> float | None:
    """Return the number answer (:func:`read`): dashes, minus signs, exponents, units; never a locant.

    Examples
    --------
    >>> normalise_number("ΔG = −3.2 kcal/mol")
    -3.2
    >>> normalise_number("about 1e-2") , normalise_number("unknown")
    (0.01, None)
    """
    return read("number", text).value


def normalise(
    kind: str,
    texts: Sequence[str],
    *,
    names_to_smiles: Callable[..., Any] | None = None,
    problems: dict[int, str] | None = None,
    task: str | None = None,
) -> list:
    """Normalise completions of one answer kind (``ANSWER_KINDS``), in order; ``None`` = no answer.

    Parameters
    ----------
    kind : str
        One of :data:`ANSWER_KINDS`.
    texts : sequence of str
        Raw completions.
    names_to_smiles : callable, optional
        Name parser for kind ``name`` (default :func:`evaluators.answers.opsin.names_to_smiles`: OPSIN in one
        batch, then RDKit canonical SMILES).
    problems : dict, optional
        Filled with the position and reason of each answer a limit refused (kind ``name``: the caps of
        :func:`evaluators.answers.opsin.names_to_smiles`); such an answer is ``None``.
    task : str, optional
        The task's name (:func:`read`).

    Raises
    ------
    ValueError
        If ``kind`` is unknown.
    """
    if kind not in ANSWER_KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; known: {', '.join(ANSWER_KINDS)}")
    readings = read_batch(kind, texts, task=task, names_to_smiles=names_to_smiles, problems=problems)
    return [r.value for r in readings]
