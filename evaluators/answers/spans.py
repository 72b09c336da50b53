r"""Find the answer span of a completion, and the rule that found it (kind-agnostic).

A model may reason first and then mark its answer, so a marked answer wins over the first line, and
the *last* marked answer wins over earlier ones (a model that corrects itself ends with the correction):

=============  =================================================================================
rule id        what it reads
=============  =================================================================================
tag            the last ``<answer>…</answer>`` (ChemBench style)
boxed          the last ``\boxed{…}`` (LaTeX)
answer-line    the last line that starts with ``Answer:`` / ``Final answer:`` / ``**Answer:**``
               (Markdown emphasis, a bullet or a heading allowed; an empty one, or a heading
               ``### Answer``: the next line)
fence          the contents of the first Markdown code fence
first-line     the first non-empty line
=============  =================================================================================

Between tag, boxed and answer-line the one that ends last in the text wins. The span is then cleaned:
a leading label (``SMILES:``, ``The product is``), hedges (``I think``, ``probably``), Markdown emphasis,
quotes, backticks, LaTeX ``$…$`` and a trailing full stop are dropped.

Invariants: pure; never raises; regex work is linear (no nested quantifiers) and spans are capped at
:data:`MAX_SPAN` characters, the text at :data:`MAX_TEXT`.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_SPAN", "MAX_TEXT", "SPAN_RULES", "clean_text", "find_span", "is_refusal", "marked_span",
           "strip_span"]

#: The span rules :func:`find_span` reports.
SPAN_RULES = ("tag", "boxed", "answer-line", "fence", "first-line", "none")
#: Longer texts keep their head and their tail (the final answer is at the end, the terse one at the start).
MAX_TEXT = 100_000
#: An answer span longer than this is cut (no answer of these tasks is that long; bounds later work).
MAX_SPAN = 2_000

_TAG = re.compile(r"<answer>([^<]{0,2000})</answer>", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\s*\{")
# One line: optional bullet/heading/quote, optional emphasis, "answer" or "final answer", a colon.
_ANSWER_LINE = re.compile(
    r"^[ \t>#*\-•]{0,8}(?:\*\*|__|\*|_)?[ \t]{0,3}(?:the[ \t]+)?(?:final[ \t]+)?answer[ \t]{0,3}"
    r"(?:\*\*|__)?[ \t]{0,3}(?:is[ \t]{0,3})?[:=][ \t]{0,3}(?:\*\*|__)?(?P<rest>[^\n]{0,2000})$",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_HEAD = re.compile(
    r"^[ \t>#*]{0,8}(?:the[ \t]+)?(?:final[ \t]+)?answer[ \t]{0,3}(?:\*\*|__)?[ \t]{0,3}$",
    re.IGNORECASE | re.MULTILINE,
)
_FENCE = re.compile(r"```[A-Za-z]{0,20}[ \t]{0,10}\n?([^`]{0,5000})(?:```|$)")
_LABEL = re.compile(
    r"^(?:the[ \t]+)?(?:final[ \t]+)?(?:answer|smiles(?:[ \t]+string)?|canonical[ \t]+smiles|"
    r"iupac(?:[ \t]+name)?|name|product(?:[ \t]+smiles)?|(?:molecular[ \t]+)?formula|prediction|output|"
    r"result|value|label)[ \t]{0,3}(?:is|would[ \t]+be|will[ \t]+be)?[ \t]{0,3}[:=]?[ \t]{0,3}",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"^(?:i[ \t]+think|i[ \t]+believe|i[ \t]+guess|i[ \t]+would[ \t]+say|i'd[ \t]+say|i[ \t]+estimate|"
    r"my[ \t]+(?:best[ \t]+)?(?:guess|estimate|answer)[ \t]+(?:is|would[ \t]+be)|"
    r"it(?:'s|[ \t]+is|[ \t]+might[ \t]+be|[ \t]+may[ \t]+be|[ \t]+could[ \t]+be|[ \t]+would[ \t]+be)|"
    r"this[ \t]+is|that[ \t]+is|probably|likely|possibly|perhaps|maybe|approximately|approx\.?|about|around|"
    r"roughly|circa|ca\.|estimated|predicted|that|so|thus|therefore|hence)[ \t,:]{1,4}",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:cannot|can't|can not|unable|not able|don't know|do not know|not possible|impossible to|no answer|"
    r"unknown|undetermined|not available|insufficient|not enough information|cannot be determined|"
    r"n/a)(?![\w/])|^(?:i'm not sure|not sure|none|\?+|-+|—)\.?$",
    re.IGNORECASE,
)
_LATEX_WRAP = re.compile(r"^\\(?:text|textbf|mathrm|mathbf|rm|ce)\s{0,2}\{([^{}]{0,2000})\}$")
# A bullet before a word ("- SMILES: …"); never before a digit, where "- 1.2" is a spaced minus sign.
_BULLET = re.compile(r"^(?:[-•][ \t]{1,3}|#{1,6}[ \t]{1,3})(?=[A-Za-z*_`\"'])")
_WRAP = "\"'`*_“”‘’«» \t"
# Lone surrogates (from a bad decoder) and NUL bytes are dropped: nothing downstream may see them.
_BAD = re.compile(r"[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\ufeff\u200b-\u200d\u2060]")
_FULL_WIDTH = str.maketrans({"：": ":", "＝": "=", "（": "(", "）": ")", "，": ",", "－": "-"})
_SPACES = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def clean_text(text: object) -> str:
    r"""Return ``text`` made safe to read: a str, capped, without NUL/control bytes or lone surrogates.

    Non-breaking and other Unicode spaces become plain spaces, ``\r\n`` becomes ``\n``.

    >>> clean_text("a\u00a0b\x00\r\n")
    'a b\n'
    >>> clean_text(None)
    ''
    """
    if not isinstance(text, str):
        return ""
    if len(text) > 2 * MAX_TEXT:
        text = text[:MAX_TEXT] + "\n" + text[-MAX_TEXT:]
    text = _BAD.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    # Full-width punctuation (CJK input methods) marks answers as well: "Answer：-3.2".
    return _SPACES.sub(" ", text).translate(_FULL_WIDTH)


def _boxed(text: str) -> list[tuple[int, str]]:
    r"""Every ``\boxed{…}`` (braces balanced, capped) with the position where it ends."""
    out = []
    # Only the last few boxes can be the answer; bounds the work on a text of thousands of "\boxed{".
    for match in list(_BOXED.finditer(text))[-8:]:
        depth, start = 1, match.end()
        for i in range(start, min(len(text), start + MAX_SPAN)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                out.append((i + 1, text[start:i]))
                break
    return out


def _marked(text: str) -> tuple[str, str] | None:
    """Return the marked answer that ends last: (span, rule) or ``None``."""
    found: list[tuple[int, str, str]] = [(m.end(), m.group(1), "tag") for m in _TAG.finditer(text)]
    found += [(end, span, "boxed") for end, span in _boxed(text)]
    for m in _ANSWER_LINE.finditer(text):
        rest = m.group("rest").strip().strip("*_ \t")
        end = m.end()
        if not rest:  # "Answer:" alone on its line: the answer is the next non-empty line
            tail = text[m.end() : m.end() + MAX_SPAN + 200].lstrip("\n ")
            rest = tail.split("\n", 1)[0].strip()
            end += 1
        if rest:
            found.append((end, rest, "answer-line"))
    for m in _ANSWER_HEAD.finditer(text):  # "### Answer" / "**Final answer**" alone: the next line
        tail = text[m.end() : m.end() + MAX_SPAN + 200].lstrip("\n ")
        rest = tail.split("\n", 1)[0].strip()
        if rest:
            found.append((m.end() + 1, rest, "answer-line"))
    if not found:
        return None
    end, span, rule = max(found, key=lambda f: (f[0], f[2] != "answer-line"))
    return span, rule


def marked_span(text: object) -> tuple[str, str] | None:
    r"""Return the marked answer that ends last, *uncleaned* (no label, hedge or stop dropped), and its rule.

    For free-text answers (a caption) whose words are the answer: :func:`find_span` would drop a leading
    "It is" or the final full stop. ``None`` when the completion marks no answer (tag, boxed, answer line).

    >>> marked_span("Thinking.\nAnswer: The molecule is an alcohol.")
    ('The molecule is an alcohol.', 'answer-line')
    >>> marked_span("The molecule is an alcohol.") is None
    True
    """
    return _marked(clean_text(text))


def strip_span(span: str) -> str:
    r"""Clean an answer span: labels, hedges, emphasis, quotes, LaTeX ``$``, a trailing full stop.

    >>> strip_span("**IUPAC name:** propan-2-ol.")
    'propan-2-ol'
    >>> strip_span("I think it's probably `CCO`")
    'CCO'
    >>> strip_span("$C_2H_6O$")
    'C_2H_6O'
    """
    span = span.strip()[:MAX_SPAN]
    span = unicodedata.normalize("NFC", span).replace("：", ":")
    for _ in range(6):  # labels and hedges may stack ("Answer: I think it is probably …"); bounded
        before = span
        span = span.strip(_WRAP)
        if span.startswith("$") and span.endswith("$") and len(span) > 1:
            span = span.strip("$").strip()
        if span.startswith("\\(") and span.endswith("\\)"):
            span = span[2:-2].strip()
        span = _LATEX_WRAP.sub(r"\1", span)
        span = _BULLET.sub("", span, count=1)
        span = _LABEL.sub("", span, count=1)
        span = _HEDGE.sub("", span, count=1)
        if span == before:
            break
    span = span.strip(_WRAP)
    if span.endswith(".") and not span.endswith(".."):
        span = span[:-1].rstrip(_WRAP)
    return span


def find_span(text: object) -> tuple[str, str]:
    r"""Return the answer span of a completion and the id of the rule that found it (:data:`SPAN_RULES`).

    >>> find_span("Let me think.\nMW is 46.\nAnswer: CCO")
    ('CCO', 'answer-line')
    >>> find_span("The answer is \\boxed{CCO}.")
    ('CCO', 'boxed')
    >>> find_span("<answer>yes</answer>")
    ('yes', 'tag')
    >>> find_span("```smiles\nCC(=O)O\n```")
    ('CC(=O)O', 'fence')
    >>> find_span("\n\nCCO\nbecause …")
    ('CCO', 'first-line')
    >>> find_span("")
    ('', 'none')
    """
    text = clean_text(text)
    marked = _marked(text)
    if marked is not None:
        span, rule = marked
        boxed = _boxed(span)  # "Answer: $\boxed{CCO}$"
        if boxed:
            span = boxed[-1][1]
        return strip_span(span), rule
    fenced = _FENCE.search(text)
    if fenced and fenced.group(1).strip():
        line = next((ln for ln in fenced.group(1).split("\n") if ln.strip()), "")
        return strip_span(line), "fence"
    line = next((ln for ln in text.split("\n") if ln.strip()), "")
    span = strip_span(line)
    return (span, "first-line") if span else ("", "none")


def is_refusal(span: str) -> bool:
    """Whether the span says the model cannot answer (``N/A``, ``unknown``, ``I cannot determine …``).

    >>> is_refusal("N/A"), is_refusal("I cannot determine this"), is_refusal("CCO")
    (True, True, False)
    """
    return bool(_REFUSAL.search(span[:MAX_SPAN]))
