"""Read a yes/no answer from its span.

Every signal in the span is collected; the answer is the signal when they all agree, and no answer when
they disagree (``yes or no``, ``Yes … no``) or when there is none:

* the words ``yes``/``true`` → yes, ``no``/``false`` → no (``y``, ``n``, ``1``, ``0`` only as the whole
  span: ``N/A`` is not "no");
* ``satisfies``/``meets``/``passes``/``obeys``/``complies`` → yes; the same negated (``does not satisfy``,
  ``fails``, ``violates`` without a count) → no;
* task ``lipinski`` only: a count of violations — the rule of five is satisfied with at most one, so
  ``No violations``, ``0 violations``, ``one violation`` → yes and ``2 violations`` → no (the word "no"
  in "no violations" is then part of the count, not a label);
* a refusal (``unknown``, ``N/A``, ``cannot determine``) is no answer.

Invariants: pure; never raises; linear regexes.
"""

from __future__ import annotations

import re

from evaluators.answers.spans import is_refusal

__all__ = ["read_label"]

_COUNT_WORDS = {"no": 0, "zero": 0, "none": 0, "0": 0, "one": 1, "a single": 1, "single": 1, "only one": 1,
                "1": 1, "two": 2, "2": 2, "three": 3, "3": 3, "four": 4, "4": 4, "multiple": 2,
                "several": 2}  # fmt: skip
_COUNT = r"(no|zero|none|only\s+one|a\s+single|single|one|two|three|four|multiple|several|[0-4])"
_VIOLATIONS = re.compile(
    _COUNT
    + r"(?:\s+(?:of\s+the\s+)?(?:[\w'’-]+\s+){0,3}?)?\s*(?:violations?|rules?\s+(?:are\s+|is\s+)?violated|"
    r"criteria\s+(?:are\s+)?violated)\b|\bviolat(?:es|ing|ed)?\s+(?:only\s+)?" + _COUNT + r"\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:does\s*n[o']t|do\s*n[o']t|doesn’t|not|never|fails?\s+to|cannot)\s+(?:\w+\s+){0,2}?"
    r"(?:satisf\w*|meets?|pass\w*|obey\w*|compl\w*|fulfil\w*|follow\w*|conform\w*)\b|\bfails\b|\bviolates\b(?!\s+(?:only\s+)?(?:no|zero|one|a\s+single|0|1)\b)",
    re.IGNORECASE,
)
_AFFIRMED = re.compile(
    r"\b(?:satisf(?:ies|y)|meets|passes|obeys|complies|fulfil+s|conforms|follows)\b", re.IGNORECASE
)
# "no more than one", "not more than" are thresholds, not answers.
_THRESHOLD = re.compile(
    r"\b(?:no|not)\s+more\s+than\b|\bat\s+most\b|\bno\s+(?:greater|larger)\s+than\b", re.IGNORECASE
)
_WORD = re.compile(r"\b(yes|true|no|false)\b", re.IGNORECASE)
_WHOLE = {"y": True, "1": True, "n": False, "0": False, "✓": True, "✔": True, "✗": False, "✘": False}


def read_label(span: str, task: str | None = None) -> bool | None:
    """Return the yes/no answer of a label span (rules in the module docstring), or ``None``.

    >>> read_label("Yes, it does.") , read_label("no"), read_label("maybe")
    (True, False, None)
    >>> read_label("No violations, so it satisfies the rule.", task="lipinski")
    True
    >>> read_label("2 violations", task="lipinski"), read_label("It does not satisfy the rule")
    (False, False)
    >>> read_label("yes or no") is None, read_label("N/A") is None
    (True, True)
    """
    if not isinstance(span, str):
        return None
    span = span[:2000].strip()
    whole = span.strip(" .!*").lower()
    if whole in _WHOLE:
        return _WHOLE[whole]
    signals: list[bool] = []
    if task == "lipinski":
        for match in _VIOLATIONS.finditer(span):
            word = re.sub(r"\s+", " ", (match.group(1) or match.group(2) or "").lower())
            signals.append(_COUNT_WORDS.get(word, 2) <= 1)
        span = _VIOLATIONS.sub(" ", span)
    span = _THRESHOLD.sub(" ", span)
    negated = list(_NEGATED.finditer(span))
    signals += [False] * len(negated)
    span = _NEGATED.sub(" ", span)
    signals += [True] * len(_AFFIRMED.findall(span))
    signals += [w.lower() in ("yes", "true") for w in _WORD.findall(span)]
    if not signals:
        return None
    if is_refusal(span) and not _WORD.search(span):
        return None
    return signals[0] if all(s == signals[0] for s in signals) else None
