"""Deterministic answer extraction and normalisation for generative tracks (host side; no LLM judge).

A completion is free text. :func:`extract` reduces it to the answer span by fixed rules, and one
normaliser per answer kind turns that span into a comparable value, or ``None`` when it does not read as
that kind of answer (SPEC §4 T3: invalid = no answer; a missing answer never equals another):

=========  ==================================================================  ===========================
kind       rule                                                                value
=========  ==================================================================  ===========================
smiles     the span if RDKit parses it, else its longest token that parses     RDKit canonical SMILES
name       the span, parsed by OPSIN (:mod:`.opsin`, in batches)                   RDKit canonical SMILES
formula    each element once with its count (``C6H12O6``, ``C₆H₁₂O₆``)      Hill-order formula string
label      the first word: yes/true/1/y → ``True``, no/false/0/n → ``False``    bool
number     the first number (``−1.5``, ``-3e-2``; ``4,2`` and locants such as   float
           ``2-`` in ``propan-2-ol`` are not numbers)
=========  ==================================================================  ===========================

:func:`extract` keeps the first non-empty line (after dropping a Markdown code fence), strips a leading
label such as ``Answer:``, ``SMILES:`` or ``IUPAC name:``, surrounding quotes, backticks and Markdown
emphasis, and a trailing full stop. Charges are not part of a normalised formula (element counts only).

Invariants: pure functions of their input (and the RDKit/OPSIN versions); never raise on odd text.
Side effects: :func:`normalise` with kind ``name`` runs Java (OPSIN) once per batch.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["ANSWER_KINDS", "extract", "formula_counts", "formula_of", "normalise", "normalise_formula",
           "normalise_label", "normalise_number", "normalise_smiles"]  # fmt: skip

#: The answer kinds :func:`normalise` knows.
ANSWER_KINDS = ("smiles", "name", "formula", "label", "number")

_LABEL = re.compile(
    r"^(?:the\s+)?(?:final\s+)?(?:answer|smiles(?:\s+string)?|iupac(?:\s+name)?|name|product|formula|"
    r"molecular\s+formula|prediction|output|result|value)\s*(?:is)?\s*[:=]?\s*",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```[a-zA-Z]*\n?(.*?)(?:```|$)", re.DOTALL)
_WRAP = "\"'`*_“”‘’ \t"
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_FORMULA_TOKEN = re.compile(r"([A-Z][a-z]?)(\d*)")
# A number followed by a hyphen and a letter is a locant ("2-acetyloxy…", "propan-2-ol", "1H-indole"), not
# the answer: a completion that restates the name before its value must give the value.
_NUMBER = re.compile(
    r"(?<![\w.,])[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+−]?\d+)?(?![\w.,]?\d|[A-Za-z]*-[A-Za-z])"
)
_YES = {"yes", "true", "1", "y"}
_NO = {"no", "false", "0", "n"}


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
    """
    if not isinstance(text, str):
        return ""
    fenced = _FENCE.search(text)
    if fenced and fenced.group(1).strip():
        text = fenced.group(1)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = line.strip(_WRAP)
    line = _LABEL.sub("", line, count=1).strip(_WRAP)
    if line.endswith(".") and not line.endswith(".."):
        line = line[:-1].rstrip(_WRAP)
    return line


def _canonical(smiles: str) -> str | None:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    # RDKit reads whatever follows whitespace as the molecule's name: "I think …" would parse as iodine.
    if not smiles or len(smiles) > 2000 or any(c.isspace() for c in smiles):
        return None
    mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToSmiles(mol) if mol is not None and mol.GetNumAtoms() > 0 else None


def normalise_smiles(text: str) -> str | None:
    """Canonical SMILES of the answer: the whole span if it parses, else its longest parsable token.

    The longest token wins so that a sentence ("I think it is CCO") gives the molecule, not a one-letter
    word that happens to be an element ("I").

    Examples
    --------
    >>> normalise_smiles("OCC")
    'CCO'
    >>> normalise_smiles("The product is C1=CC=CC=C1.")
    'c1ccccc1'
    >>> normalise_smiles("no idea") is None
    True
    """
    span = extract(text)
    whole = _canonical(span)
    if whole is not None:
        return whole
    best: tuple[int, str] | None = None
    for token in span.split():
        token = token.strip(_WRAP + ",;:()").rstrip(".")
        if len(token) < 2 and token not in {"C", "N", "O", "S"}:
            continue
        canonical = _canonical(token)
        if canonical is not None and (best is None or len(token) > best[0]):
            best = (len(token), canonical)
    return best[1] if best else None


def formula_of(counts: Counter[str]) -> str:
    """Hill-order formula of element counts: C, then H, then the rest alphabetically (no carbon: all)."""
    order = sorted(counts)
    if "C" in counts:
        order = ["C", *(["H"] if "H" in counts else []), *sorted(e for e in counts if e not in ("C", "H"))]
    return "".join(f"{e}{counts[e] if counts[e] != 1 else ''}" for e in order if counts[e] > 0)


def formula_counts(formula: str) -> Counter[str]:
    """Return the element counts of a Hill formula: ``{"C": 2, "H": 6, "O": 1}`` for ``C2H6O``."""
    tokens = _FORMULA_TOKEN.findall(formula)
    return Counter({symbol: int(number) if number else 1 for symbol, number in tokens})


def normalise_formula(text: str) -> str | None:
    """Hill-order formula of the answer's element counts; ``None`` unless the whole span is a formula.

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
    from rdkit import Chem

    span = extract(text).translate(_SUBSCRIPTS).replace(" ", "")
    span = re.sub(r"[+\-⁺⁻]\d+$", "", re.sub(r"[+\-⁺⁻]+$", "", span))  # a trailing charge: +, 2-, -2
    if not span or _FORMULA_TOKEN.sub("", span):
        return None
    table = Chem.GetPeriodicTable()
    counts: Counter[str] = Counter()
    tokens = _FORMULA_TOKEN.findall(span)
    if len({symbol for symbol, _ in tokens}) != len(tokens):
        return None  # a molecular formula names each element once ("CCO" is a SMILES, not a formula)
    for symbol, number in tokens:
        try:
            if table.GetAtomicNumber(symbol) <= 0:
                return None
        except RuntimeError:  # RDKit raises for an unknown element symbol
            return None
        counts[symbol] += int(number) if number else 1
    return formula_of(counts) if counts else None


def normalise_label(text: str) -> bool | None:
    """Yes/no answer: the first word of the span (``"Yes."``, ``"true"``, ``"1"`` → ``True``).

    Examples
    --------
    >>> normalise_label("Yes, it does.")
    True
    >>> normalise_label("no") , normalise_label("maybe")
    (False, None)
    """
    words = re.findall(r"[A-Za-z0-9]+", extract(text))
    if not words:
        return None
    first = words[0].lower()
    return True if first in _YES else False if first in _NO else None


def normalise_number(text: str) -> float | None:
    """Return the first number in the span (unicode minus, exponents); ``None`` when there is none.

    Examples
    --------
    >>> normalise_number("ΔG = −3.2 kcal/mol")
    -3.2
    >>> normalise_number("about 1e-2") , normalise_number("unknown")
    (0.01, None)
    """
    match = _NUMBER.search(extract(text))
    if match is None:
        return None
    try:
        value = float(match.group(0).replace("−", "-"))
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def normalise(
    kind: str,
    texts: Sequence[str],
    *,
    names_to_smiles: Callable[..., Any] | None = None,
    problems: dict[int, str] | None = None,
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

    Raises
    ------
    ValueError
        If ``kind`` is unknown.
    """
    if kind == "smiles":
        return [normalise_smiles(t) for t in texts]
    if kind == "formula":
        return [normalise_formula(t) for t in texts]
    if kind == "label":
        return [normalise_label(t) for t in texts]
    if kind == "number":
        return [normalise_number(t) for t in texts]
    if kind == "name":
        if names_to_smiles is None:
            from evaluators.answers.opsin import names_to_smiles
        spans = [extract(t) for t in texts]
        return list(names_to_smiles(spans, **({} if problems is None else {"problems": problems})))
    raise ValueError(f"unknown answer kind {kind!r}; known: {', '.join(ANSWER_KINDS)}")
