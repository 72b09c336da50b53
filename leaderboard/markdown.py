"""Markdown for pages and reports: one escape per context, for text a submission may control.

Everything that reaches a page or a pull-request report from a manifest, a run's output or a failure
reason goes through one of these functions: :func:`esc` (inline text), :func:`cell` (a table cell),
:func:`code` (inline code), :func:`url` (a link target) and :func:`table`. Each output renders as the
literal text it was given under Python-Markdown with the extensions of ``mkdocs.yml`` (no HTML, no
emphasis, no attribute lists, no links) and on GitHub. Text for a pull-request comment also goes through
:func:`no_mentions`, so that it notifies nobody.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

#: What an empty or missing value renders as.
NO_VALUE = "—"

# Characters Python-Markdown (and GitHub) give a meaning inline; '{' '}' start attribute lists.
_ESCAPE = str.maketrans(
    {
        "\\": "\\\\",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "{": "\\{",
        "}": "\\}",
        "#": "\\#",
        "!": "\\!",
        "|": "\\|",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
    }
)
_URL = re.compile(r"https?://[^\s<>()\[\]{}\"'`|\\]+")


def is_missing(value: Any) -> bool:
    """``None``, NaN or an empty string."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value == ""


def esc(text: Any) -> str:
    r"""Escape ``text`` to render literally as inline Markdown, on one line.

    Examples
    --------
    >>> esc("a*b* <i>{: onclick=x}")
    'a\\*b\\* &lt;i&gt;\\{: onclick=x\\}'
    """
    return " ".join(str(text).split()).translate(_ESCAPE)


def cell(text: Any) -> str:
    """Escape ``text`` for one table cell: :func:`esc` plus a visible :data:`NO_VALUE` for empty cells."""
    out = esc(text)
    return out if out.strip() else NO_VALUE


def code(value: Any) -> str:
    r"""Render ``value`` as inline code that no backtick, pipe or HTML inside it can leave.

    Uses an HTML ``<code>`` element with the text HTML-escaped and Markdown-escaped, so the content
    is never interpreted, whatever it holds.

    Examples
    --------
    >>> code("a`b|<c>")
    '<code>a\\`b\\|&lt;c&gt;</code>'
    """
    if is_missing(value):
        return NO_VALUE
    text = " ".join(str(value).split())
    return f"<code>{esc(text)}</code>"


def no_mentions(text: str) -> str:
    r"""Put a zero-width space after every ``@`` so that GitHub makes no @-mention of ``text``.

    For text already escaped for its context (:func:`esc`, :func:`cell`) that goes into a pull-request
    comment, where ``@name`` would notify a user or a team.

    Examples
    --------
    >>> no_mentions(cell("ping @maintainers"))
    'ping @\u200bmaintainers'
    """
    return text.replace("@", "@\u200b")


def url(value: Any) -> str:
    """Render an ``http(s)`` URL as an autolink, anything else as escaped text."""
    if is_missing(value):
        return NO_VALUE
    text = str(value).strip()
    if _URL.fullmatch(text):
        return f"<{text}>"
    return esc(text)


def link(text: Any, target: str) -> str:
    """Render a Markdown link with escaped text; ``target`` must be a path or URL the caller built."""
    return f"[{esc(text)}]({target})"


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str] | None = None
) -> str:
    """Render a Markdown table from cells already escaped for their context.

    Line breaks inside a cell are flattened; ``align`` holds ``l``, ``r`` or ``c`` per column.
    """
    def flat(text: str) -> str:
        return str(text).replace("\r", " ").replace("\n", " ").strip() or " "

    align = list(align) if align is not None else ["l"] * len(headers)
    marks = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = [
        "| " + " | ".join(flat(h) for h in headers) + " |",
        "| " + " | ".join(marks.get(a, "---") for a in align) + " |",
    ]
    lines += ["| " + " | ".join(flat(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
