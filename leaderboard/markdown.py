"""Markdown for pages and reports: one escape per context, for text a submission may control.

Everything that reaches a page or a pull-request report from a manifest, a run's output or a failure
reason goes through one of these functions: :func:`esc` (inline text), :func:`cell` (a table cell),
:func:`code` (inline code), :func:`url` (a link target), :func:`fenced` (a code block), :func:`table`,
:func:`json_script` for JSON that a page embeds for its scripts, and :func:`front_matter` for a page's
title. Each output renders as the literal text it was given under Python-Markdown with the extensions of
``mkdocs.yml`` (no HTML, no emphasis, no attribute lists, no links, no lists, details or fences) and on
GitHub. Text for a pull-request comment also
goes through :func:`no_mentions`, so that it notifies nobody. ``tests/site/test_site_xss.py`` pushes
hostile strings through every field of a built site and audits the HTML.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from leaderboard.text import printable

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
# Block syntax that escaped text would still open at the start of a line: lists ("- ", "+ ", "1. ",
# GitHub's "1) "), pymdownx.details ("??? note"), "~~~" fences, setext underlines and definitions. The
# first character becomes a numeric character reference, which no block pattern matches.
_BLOCK_START = re.compile(r"[-+?~=:]|\d+[.)]")
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

    Whitespace runs (line breaks included) become one space; Markdown's inline characters are
    backslash-escaped, ``&``, ``<`` and ``>`` become HTML entities, and a line start that would open a
    block (a list, ``???`` details, a ``~~~`` fence) is neutralised, so the output may start a line.

    Examples
    --------
    >>> esc("a*b* <i>{: onclick=x}")
    'a\\*b\\* &lt;i&gt;\\{: onclick=x\\}'
    >>> esc("- ??? not a list")
    '&#45; ??? not a list'
    """
    out = _inline(text)
    if _BLOCK_START.match(out):
        out = f"&#{ord(out[0])};{out[1:]}"
    return out


def _inline(text: Any) -> str:
    """``text`` on one line with Markdown's inline characters escaped (no line start: see :func:`esc`)."""
    return " ".join(str(text).split()).translate(_ESCAPE)


def cell(text: Any) -> str:
    """Escape ``text`` for one table cell: :func:`esc` plus a visible :data:`NO_VALUE` for empty cells.

    A cell never starts a line (``| `` comes first), so block syntax needs no neutralising there.
    """
    out = _inline(text)
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
    return f"<code>{_inline(value)}</code>"


def fenced(text: Any, lang: str = "") -> str:
    r"""Render ``text`` as a fenced code block that no line inside it can close.

    The fence is one backtick longer than the longest run of backticks in ``text`` (at least three), so
    a line of backticks in the text stays text; the code block shows ``text`` verbatim, HTML-escaped.

    Examples
    --------
    >>> fenced("a\n````\nb", "yaml")
    '`````yaml\na\n````\nb\n`````'
    """
    body = str(text)
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"


def json_script(value: Any) -> str:
    r"""Serialise ``value`` as JSON for a ``<script type="application/json">`` element of a page.

    ``<``, ``>`` and ``&`` (and U+2028/U+2029) are written as ``\uXXXX`` escapes, so no string in it can
    end the script element, open a comment or be read as Markdown or HTML; ``JSON.parse`` restores them.

    Examples
    --------
    >>> json_script({"a": "</script><b>&"})
    '{"a":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'
    """
    payload = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char in "<>&\u2028\u2029":
        payload = payload.replace(char, f"\\u{ord(char):04x}")
    return payload


def front_matter(value: Any) -> str:
    r"""Return ``value`` as a YAML scalar for a page's front matter (``title: <this>``).

    MkDocs' themes write ``page.meta.title`` into the HTML without escaping it, so the text is HTML-escaped
    first, brackets included (as character references: nothing that reads the title as Markdown can make a
    link of it); it is made one printable line (no line break can end the front matter) and written as a
    JSON string, which YAML reads as a double-quoted scalar.

    Examples
    --------
    >>> front_matter('A "B" <script>\n---')
    '"A &quot;B&quot; &lt;script&gt; ---"'
    >>> front_matter("[x](javascript:alert(1))")
    '"&#91;x&#93;(javascript:alert(1))"'
    """
    escaped = html.escape(printable(str(value))).replace("[", "&#91;").replace("]", "&#93;")
    return json.dumps(escaped, ensure_ascii=False)


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
