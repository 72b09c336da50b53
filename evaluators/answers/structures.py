r"""Read a molecule answer (SMILES, molecular formula, name) from its span.

SMILES and formulas
    The whole span if it reads; else, when the span names a product (``>>``, ``->``, ``→``, ``gives``,
    ``yields``, ``forms``, ``product is`` …), the first molecule after the last such cue (rule
    ``after-arrow``); else the molecule the span starts with; else the last molecule named (rule
    ``last-molecule``: "CC=O is reduced to CCO" names the reactant first). Distinct molecules offered as
    alternatives (``CCO or CCN``) are no answer.
Formulas
    LaTeX (``$C_2H_6O$``, ``C_{2}H_{6}O``, ``\ce{…}``), Unicode subscripts and condensed formulas
    (``CH3CH2OH``, ``(CH3)2CHOH``) are read by element counts: repeated elements sum. A span that
    repeats an element but has no hydrogen (``CCO``) is a SMILES, not a formula. Charges are dropped.
Names
    :func:`name_candidates`: the span cut at the first clause break (``, `` ``; `` `` - `` — IUPAC names
    never contain a space after a comma), then the same without a parenthetical aside preceded by a space
    (``Ethanol (ethyl alcohol)``; IUPAC parentheses never follow a space, so ``2-(2-hydroxyethoxy)ethanol``
    keeps its own). OPSIN reads them in :func:`evaluators.answers.read_batch`.

Invariants: pure; never raise; RDKit only on tokens of bounded length.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["MAX_LISTED_NAMES", "bullet_list", "canonical", "formula_counts_of", "name_candidates",
           "name_list", "read_formula", "read_smiles"]  # fmt: skip

MAX_TOKEN = 500
_ARROW = re.compile(
    r">>|->|→|⟶|=>|⇒|\b(?:gives?|giving|yields?|yielding|forms?|forming|affords?|produces?|producing|"
    r"results\s+in|leads?\s+to|to\s+give|to\s+form|to\s+yield|obtain(?:s|ed)?|into|get|product\s+(?:is|would\s+be|will\s+be)|"
    r"products?\s*:|answer\s+is)\b",
    re.IGNORECASE,
)
_OR = re.compile(r"\s(?:or|and/or)\s|\s/\s", re.IGNORECASE)
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉⁰¹²³⁴⁵⁶⁷⁸⁹", "01234567890123456789")
_LATEX = re.compile(r"\\(?:ce|mathrm|text|rm|mathbf)\s*\{([^{}]{0,300})\}")
_LATEX_SUB = re.compile(r"_\{?(\d{1,4})\}?")
# A trailing charge ("+", "2-" after a sign only, "^{2-}", "²⁻"): never the digits of the last element.
_CHARGE = re.compile(r"(?:\^\{?[0-9]{0,2}[+\-−]{1,3}\}?|[⁰¹²³⁴⁵⁶⁷⁸⁹]{0,2}[⁺⁻]{1,3}|[+\-−]{1,3}\d{0,2})$")
_ELEMENT = re.compile(r"([A-Z][a-z]?)(\d{0,4})")
_FORMULA_CHARS = re.compile(r"^[A-Za-z0-9()\[\]]{1,200}$")
_TOKEN_STRIP = "\"'`*_“”‘’,;:!?()[]{}<>"


def canonical(smiles: str) -> str | None:
    """RDKit canonical SMILES of one token, or ``None`` (whitespace inside: not a SMILES).

    >>> canonical("OCC"), canonical("C1CC"), canonical("I think")
    ('CCO', None, None)
    """
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    # RDKit reads whatever follows whitespace as the molecule's name: "I think …" would parse as iodine.
    if not smiles or len(smiles) > MAX_TOKEN or any(c.isspace() for c in smiles):
        return None
    mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToSmiles(mol) if mol is not None and mol.GetNumAtoms() > 0 else None


def _tokens(text: str) -> list[str]:
    out = []
    for raw in text.split()[:200]:
        token = raw.strip(_TOKEN_STRIP)
        if token.endswith(".") and not token.endswith(".."):
            token = token[:-1]
        token = token.strip(_TOKEN_STRIP)
        # A SMILES may end in ")" or "]" and start with "(" only rarely; keep balanced ones as written.
        inner = raw.strip("\"'`*_“”‘’,;:!?.")
        if inner.count("(") == inner.count(")") and inner.count("[") == inner.count("]") and inner:
            token = inner if len(inner) >= len(token) else token
        out.append(token)
    return out


def _pick(text: str, read, rule: str) -> tuple[object | None, str]:
    """Pick the molecule of a span after the whole-span attempt (module docstring)."""
    cues = list(_ARROW.finditer(text))
    if cues:
        after = text[cues[-1].end() :]
        found = [(t, v) for t in _tokens(after) if (v := read(t)) is not None]
        if found:
            values = {v for _, v in found}
            if len(values) > 1 and _OR.search(after):
                return None, "none"
            return found[0][1], "after-arrow"
    tokens = _tokens(text)
    found = [(i, v) for i, t in enumerate(tokens) if (v := read(t)) is not None]
    if not found:
        return None, "none"
    values = {v for _, v in found}
    if len(values) == 1:
        return found[0][1], rule
    if _OR.search(text):
        return None, "none"
    if found[0][0] == 0:  # "CCO, because the aldehyde CC=O is reduced": the answer comes first
        return found[0][1], rule
    return found[-1][1], "last-molecule"


def _smiles_token(token: str) -> str | None:
    # One-letter English words that parse ("I", "a" is not SMILES) are not answers; C, N, O, S can be.
    if len(token) < 2 and token not in {"C", "N", "O", "S"}:
        return None
    if token.isalpha() and token[:1].isupper() and token[1:].islower() and len(token) > 2:
        return None  # a capitalised word ("Ethanol" never parses anyway); keeps "Co", "Cl" … out
    return canonical(token)


def read_smiles(span: str, rule: str = "first-line") -> tuple[str | None, str]:
    """Canonical SMILES of a span and the rule that read it.

    >>> read_smiles("CC=O is reduced by NaBH4 to give CCO")
    ('CCO', 'after-arrow')
    >>> read_smiles("CC(=O)O.OCC>>CC(=O)OCC")
    ('CCOC(C)=O', 'after-arrow')
    >>> read_smiles("CCO or CCN")
    (None, 'none')
    >>> read_smiles("I think it is CCO")
    ('CCO', 'first-line')
    """
    if not isinstance(span, str) or not span:
        return None, "none"
    span = span[:2000]
    whole = canonical(span.strip())
    if whole is not None and ">" not in span:
        return whole, rule
    return _pick(span, _smiles_token, rule)


def formula_counts_of(token: str) -> Counter[str] | None:
    """Element counts of a formula token (condensed and grouped allowed), or ``None``.

    >>> dict(formula_counts_of("(CH3)2CHOH"))
    {'C': 3, 'H': 8, 'O': 1}
    >>> formula_counts_of("CCO") is None
    True
    """
    from rdkit import Chem

    token = _CHARGE.sub("", token.strip()).translate(_SUBSCRIPTS)
    token = _LATEX.sub(r"\1", token)
    token = _LATEX_SUB.sub(r"\1", token).replace("{", "").replace("}", "").replace("$", "")
    token = _CHARGE.sub("", token.replace(" ", ""))
    if not token or not _FORMULA_CHARS.match(token):
        return None
    table = Chem.GetPeriodicTable()
    stack: list[Counter[str]] = [Counter()]
    seen: list[str] = []
    i = 0
    while i < len(token):  # linear scan: groups "(CH3)2" multiply, elements add
        ch = token[i]
        if ch in "([":
            stack.append(Counter())
            i += 1
            continue
        if ch in ")]":
            if len(stack) == 1:
                return None
            group = stack.pop()
            m = re.match(r"\d{0,4}", token[i + 1 :])
            mult = int(m.group(0)) if m and m.group(0) else 1
            for e, n in group.items():
                stack[-1][e] += n * mult
            i += 1 + (len(m.group(0)) if m else 0)
            continue
        m = _ELEMENT.match(token, i)
        if not m:
            return None
        symbol, number = m.groups()
        try:
            if table.GetAtomicNumber(symbol) <= 0:
                return None
        except RuntimeError:  # RDKit raises for an unknown element symbol
            return None
        stack[-1][symbol] += int(number) if number else 1
        seen.append(symbol)
        i = m.end()
    if len(stack) != 1 or not stack[0]:
        return None
    # A formula that names an element twice is condensed (CH3CH2OH) only if it writes hydrogens: "CCO",
    # "ClCCl" are SMILES, not formulas.
    if len(set(seen)) != len(seen) and "H" not in seen:
        return None
    return stack[0]


def _formula_token(token: str) -> str | None:
    from evaluators.answers import formula_of

    counts = formula_counts_of(token)
    if counts is None:
        return None
    # In a sentence, a lone element ("I", "No", "As") is an English word, not the formula.
    if sum(counts.values()) < 2 and not re.search(r"\d", token):
        return None
    return formula_of(counts)


def read_formula(span: str, rule: str = "first-line") -> tuple[str | None, str]:
    """Hill formula of a span and the rule that read it.

    >>> read_formula("C₂H₆O")
    ('C2H6O', 'first-line')
    >>> read_formula("$C_{2}H_{6}O$"), read_formula("CH3COOH")
    (('C2H6O', 'first-line'), ('C2H4O2', 'first-line'))
    >>> read_formula("C2H4O2 + C2H6O → C4H8O2 + H2O")
    ('C4H8O2', 'after-arrow')
    """
    from evaluators.answers import formula_of

    if not isinstance(span, str) or not span:
        return None, "none"
    span = span[:2000].strip()
    counts = formula_counts_of(span)
    if counts is not None:
        return formula_of(counts), rule
    return _pick(_LATEX.sub(r"\1", span).replace("$", " "), _formula_token, rule)


_ASIDE = re.compile(r"\s+[(\[][^()\[\]]{0,200}[)\]]")
_CLAUSE = re.compile(r",\s|;\s|\s[-–—]\s|\.\s|:\s|\s(?:which|because|since|as|is|also)\s", re.IGNORECASE)
_NAME_CUE = re.compile(
    r"\b(?:iupac\s+name\s+(?:is|would\s+be)|is\s+called|is\s+named|named|called)\s+", re.IGNORECASE
)


def name_candidates(span: str) -> tuple[str, str]:
    """Return the name to give OPSIN first, and the one to try if that fails (may be the same).

    >>> name_candidates("Ethanol (ethyl alcohol)")
    ('Ethanol (ethyl alcohol)', 'Ethanol')
    >>> name_candidates("2-(2-hydroxyethoxy)ethanol")
    ('2-(2-hydroxyethoxy)ethanol', '2-(2-hydroxyethoxy)ethanol')
    >>> name_candidates("The compound is called propan-2-ol, a secondary alcohol")
    ('propan-2-ol', 'propan-2-ol')
    """
    if not isinstance(span, str):
        return "", ""
    span = span[:2000]
    cues = list(_NAME_CUE.finditer(span))
    if cues:
        cue = cues[-1]
        span = span[cue.end() :]
    clause = _CLAUSE.search(span)
    first = (span[: clause.start()] if clause else span).strip().rstrip(".").strip("\"'`*“”‘’ ")
    second = _ASIDE.sub("", first).strip()
    return first, second or first


#: Most names one answer may list (reactants and reagents): a longer list is no answer, never an OPSIN run.
MAX_LISTED_NAMES = 16
#: Where a list of names is cut into names: a semicolon or a line break, a comma or "and" between names, or a
#: '.' that joins two names as the data sets write reactants ("oxolane.2-hydroxyisoindole-1,3-dione") —
#: never the dots of a locant set ("bicyclo[2.2.1]"), which sit between two digits.
_NAME_LIST = re.compile(r"\s*(?:;|\n|,\s+(?:and\s+)?|\s+and\s+|\s+\+\s+|(?<!\d)\.|\.(?!\d))\s*")
#: A lead-in that names what the list is ("The reactants are", "Reagents:").
_LIST_CUE = re.compile(
    r"^\s*(?:the\s+)?(?:reactants|reagents|starting\s+materials)(?:\s+and\s+(?:reagents|reactants))?"
    r"\s*(?:are|would\s+be|:)\s*", re.IGNORECASE)  # fmt: skip


def name_list(span: str) -> list[str]:
    """Return the names a span lists (several molecules, e.g. reactants and reagents); ``[]``: none.

    A list of more than :data:`MAX_LISTED_NAMES` names is no answer. Each name is cut as a single name is
    (:func:`name_candidates`, first candidate).

    >>> name_list("acetic acid.ethanol")
    ['acetic acid', 'ethanol']
    >>> name_list("The reactants are ethanol and acetyl chloride.")
    ['ethanol', 'acetyl chloride']
    >>> name_list("bicyclo[2.2.1]heptan-2-one.2-methylpropan-2-olate")
    ['bicyclo[2.2.1]heptan-2-one', '2-methylpropan-2-olate']
    """
    if not isinstance(span, str):
        return []
    span = _LIST_CUE.sub("", span[:4000]).strip().rstrip(".")
    parts = [p for p in _NAME_LIST.split(span) if p.strip()]
    if len(parts) > MAX_LISTED_NAMES:
        return []
    names = [name_candidates(p)[0] for p in parts]
    return names if all(names) else []


_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+(?P<item>\S[^\n]*)$")


def bullet_list(text: str) -> str | None:
    r"""Return the items of a completion that is a bulleted or numbered list, joined by ``"; "``, or ``None``.

    A line that introduces the list (ending in a colon) may precede it; nothing may follow it.

    >>> bullet_list("Reactants:\n- ethanol\n- acetic acid")
    'ethanol; acetic acid'
    >>> bullet_list("1. **ethanol**\n2. acetyl chloride") and bullet_list("ethanol") is None
    True
    """
    lines = [line for line in str(text)[:4000].strip().splitlines() if line.strip()]
    if lines and lines[0].rstrip().endswith(":") and not _BULLET.match(lines[0]):
        lines = lines[1:]
    items = [_BULLET.match(line) for line in lines]
    if len(items) < 2 or not all(items):
        return None
    return "; ".join(m["item"].strip().strip("*`_ ") for m in items if m)
