"""Read a count answer (how many rings, how many aromatic rings …) from its span.

A count is a whole number ≥ 0, written in digits or as an English number word up to twenty (``three``,
``Three rings``, ``no rings`` = 0). The value comes from the number reader (:mod:`.numbers`: dashes, units
and alternatives handled there); a fractional or negative value is no count (``2.5`` is not an answer to
"how many"), nor is a value above :data:`MAX_COUNT`.

Invariants: pure; never raises; linear regexes.
"""

from __future__ import annotations

import re

from evaluators.answers.numbers import read_number

__all__ = ["MAX_COUNT", "read_count"]

#: Largest count read: no molecule of the evaluation sets has more rings than this.
MAX_COUNT = 100
_WORDS = {
    "no": 0, "none": 0, "zero": 0, "one": 1, "a single": 1, "single": 1, "two": 2, "three": 3, "four": 4,
    "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20,
}  # fmt: skip
# A span that is a number word, optionally followed by a noun phrase ("three rings", "no aromatic rings").
_NUMBER_WORD = "|".join(sorted(_WORDS, key=len, reverse=True))
_LEAD = r"^(?:it\s+has\s+|there\s+(?:is|are)\s+)?("
_WORD = re.compile(_LEAD + _NUMBER_WORD + r")\b(?:\s+[a-z-]+){0,3}\s*\.?$", re.IGNORECASE)
_DIGITS = re.compile(r"\d")
_ALTERNATIVES = re.compile(r"\s(?:or|and/or|to)\s", re.IGNORECASE)


def read_count(span: str) -> int | None:
    """Return the count a span answers, or ``None`` (module docstring).

    >>> read_count("3"), read_count("Three rings."), read_count("no aromatic rings"), read_count("2 rings")
    (3, 3, 0, 2)
    >>> read_count("2.5") is None, read_count("-1") is None, read_count("two or three") is None
    (True, True, True)
    """
    if not isinstance(span, str):
        return None
    span = span.strip()[:2000]
    if not _DIGITS.search(span):
        if _ALTERNATIVES.search(span):
            return None
        match = _WORD.match(span)
        return _WORDS[match.group(1).lower()] if match else None
    value = read_number(span)
    if value is None or value != value or value < 0 or value > MAX_COUNT or value != int(value):
        return None
    return int(value)
