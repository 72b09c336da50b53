r"""Read a number answer from its span: the value, never a locant, temperature or condition.

Rules, in order (each one a mistake a careful grader would not make):

1. Unicode is folded: every dash (U+2010–2014) and the minus sign (U+2212) are ``-``; superscripts and
   ``<sup>…</sup>`` become ``^…``; full-width digits are ASCII (NFKC); ``- 1.2`` is ``-1.2``.
2. Scientific notation reads as one number: ``1.2e-3``, ``1.2 × 10^-3``, ``1.2x10^-3``, ``1.2·10⁻³``.
3. Not the value: locants (``2-`` in ``propan-2-ol``, ``2-(``, ``1,2-``), numbers glued to letters
   (``H12``, ``ΔG298``, ``log10``), exponents of units (``mol⁻¹``), temperatures and conditions
   (``298 K``, ``25 °C``, ``1 atm``, ``pH 7``), percentages.
4. The first number left is the value (``ΔG(298 K) = -3.2``, ``2-(2-hydroxyethoxy)ethanol: -8.2``,
   ``-5.0 (experimental: -5.01)``): what follows the answer is commentary.
5. Several different values offered as alternatives (``-3.2 or -4.5``, ``between -3 and -4``,
   ``-3 to -4``) are no answer: a grader cannot pick one.

Invariants: pure; never raises; linear regexes on a span capped by :data:`evaluators.answers.spans.MAX_SPAN`.
"""

from __future__ import annotations

import math
import re
import unicodedata

__all__ = ["fold_number_text", "read_number"]

_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
                         "\u2212": "-", "\ufe63": "-", "\uff0d": "-"})  # fmt: skip
_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPER_RUN = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]{1,8}")
_SUP_TAG = re.compile(r"<sup>\s{0,3}([-+]?\d{1,4})\s{0,3}</sup>", re.IGNORECASE)
_LATEX_EXP = re.compile(r"\^\s{0,2}\{\s{0,2}([-+]?\d{1,4})\s{0,2}\}")
_SPACED_SIGN = re.compile(r"(^|[\s:=(~≈])-\s{1,3}(?=\d|\.\d)")
_LATEX_TIMES = re.compile(r"\\(?:times|cdot)")
_NUMBER = re.compile(
    r"(?<![\w.,^/+\-])(?P<num>[-+]?(?:\d{1,3}(?:,\d{3}){1,6}\.\d{1,20}|\d{1,30}(?:\.\d{0,20})?|\.\d{1,20}))"
    r"(?P<exp>[eE][-+]?\d{1,4}|\s{0,2}[×xX*·]\s{0,2}10\s{0,2}(?:\^\s{0,2}\(?[-+]?\d{1,4}\)?|[-+]\d{1,4}))?"
)
# What follows a number that is not the answer: a locant ("2-ol", "2-(", "1,2-"), a glued word, a unit
# of temperature or pressure, a percentage.
_NOT_VALUE_AFTER = re.compile(
    r"(?:[\w]*-[A-Za-z(\[]|,\d|(?:st|nd|rd|th)\b|\s{0,2}(?:K\b|°|º|℃|degrees?\b|deg\b|atm\b|bar\b|kPa\b|Pa\b|%|"
    r"mmHg\b|torr\b))"
)
_NOT_VALUE_BEFORE = re.compile(r"(?:\bpH|\bT|\btemperature)\s{0,2}[=:]?\s{0,2}$", re.IGNORECASE)
_ALTERNATIVE = re.compile(r"^\s{0,3}(?:or|to|-|and)\s{0,3}$|^\s{0,3},?\s{0,3}or\s{0,3}$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s{0,3}$|\bfrom\s{0,3}$|\beither\s{0,3}$", re.IGNORECASE)


def fold_number_text(span: str) -> str:
    """Fold dashes, minus signs, superscripts and spaced signs to ASCII (rule 1).

    >>> fold_number_text("–1.2 × 10⁻³")
    '-1.2 × 10^-3'
    >>> fold_number_text("- 1.2")
    '-1.2'
    """
    span = _SUP_TAG.sub(r"^\1", span)
    span = _SUPER_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPER), span)
    span = _LATEX_EXP.sub(r"^\1", _LATEX_TIMES.sub("×", span))
    span = unicodedata.normalize("NFKC", span.translate(_DASHES)).translate(_DASHES)
    span = span.replace("{", "").replace("}", "").replace("$", "")
    return _SPACED_SIGN.sub(r"\1-", span)


def _value(match: re.Match[str]) -> float | None:
    number = match.group("num").replace(",", "")
    exp = match.group("exp") or ""
    try:
        value = float(number)
        if exp[:1] in "eE" and exp:
            value = float(number + exp)
        elif exp:
            power = re.search(r"[-+]?\d+", exp.split("10", 1)[1])
            value = float(f"{number}e{power.group(0)}") if power else value  # exact: 1.2e-3, not 1.2*0.001
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def _candidates(span: str) -> list[tuple[int, int, float]]:
    """(start, end, value) of every number in the span that may be the value (rules 2-3)."""
    out = []
    for match in _NUMBER.finditer(span):
        after = span[match.end() : match.end() + 12]
        if _NOT_VALUE_AFTER.match(after) and not (match.group("exp") and after[:1] == " "):
            continue
        if _NOT_VALUE_BEFORE.search(span[max(0, match.start() - 14) : match.start()]):
            continue
        if match.group("num").startswith("-") and match.start() > 0 and span[match.start() - 1].isalnum():
            continue  # "C6H5-2" and similar: a hyphen glued to a word is not a sign
        value = _value(match)
        if value is not None:
            out.append((match.start(), match.end(), value))
    return out


def read_number(span: str) -> float | None:
    """Return the value of a number answer span (rules in the module docstring), or ``None``.

    >>> read_number("ΔG(298 K) = -3.2 kcal/mol")
    -3.2
    >>> read_number("2-(2-hydroxyethoxy)ethanol: -8.2")
    -8.2
    >>> read_number("1.2 × 10^-3 mol/L")
    0.0012
    >>> read_number("–1.2"), read_number("- 1.2"), read_number("180.16 g/mol")
    (-1.2, -1.2, 180.16)
    >>> read_number("-3.2 or -4.5") is None, read_number("4,2") is None
    (True, True)
    """
    if not isinstance(span, str):
        return None
    span = fold_number_text(span[:2000])
    found = _candidates(span)
    if not found:
        return None
    # The first value: what precedes it in "ΔG(298 K) = -3.2" or "2-(2-hydroxyethoxy)ethanol: -8.2" is
    # a locant or a condition (rule 3), and what follows ("-5.0 (experimental: -5.01)") is commentary.
    chosen = 0
    start, end, value = found[chosen]
    # Alternatives: a different value right after "or", "to", a dash or "and" (or "between X and Y").
    if chosen + 1 < len(found):
        nxt = found[chosen + 1]
        gap = span[end : nxt[0]]
        if nxt[2] != value and (_ALTERNATIVE.match(gap) or (nxt[0] == end and span[end : end + 1] == "-")):
            return None
    if _BETWEEN.search(span[max(0, start - 12) : start]) and chosen + 1 < len(found):
        return None
    return value
