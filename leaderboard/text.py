r"""Plain text that a submission may control, made safe to print: one line, printable, bounded.

A manifest's values and keys, a submission's folder name, a sandboxed run's output and a model's
completions are written by whoever opened the pull request. Before such text is published (the site's data
files, hence its pages) it goes through :func:`visible`: every control character (C0 but tab and line
feed, DEL, C1), bidirectional control and lone surrogate is written as its escape (``\x1b``, ``\u202e``),
so that a maintainer who prints or greps the record sees it instead of obeying it. Before it reaches a
terminal line, a log or a report it goes through :func:`printable` (one line: line breaks and tabs are
escaped too, and so is anything else ``str.isprintable`` rejects) and, where its length matters,
:func:`clip`.

Side effects: none.
"""

from __future__ import annotations

import re

__all__ = ["all_visible", "clip", "printable", "visible"]

# What acts on a terminal or reorders text: C0 controls but tab and line feed, DEL, C1 controls, the
# bidirectional marks, embeddings, overrides and isolates, line and paragraph separators, lone surrogates.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escape(match: re.Match[str]) -> str:
    return _escape_char(match.group())


def visible(text: str) -> str:
    r"""Return ``text`` with every character that could act on a terminal written as its escape.

    The one sanitiser of published text a submission controls (completions, answers, names, reasons): it
    keeps tabs and line breaks (a CSV cell may hold them) and everything printable, so honest text passes
    unchanged.

    Parameters
    ----------
    text : str
        Text from an untrusted source.

    Returns
    -------
    str
        ``text`` with C0 controls (but ``\t`` and ``\n``), DEL, C1 controls, bidirectional controls
        (U+061C, U+200E/F, U+202A-202E, U+2066-2069), U+2028/9 and lone surrogates as ``\xNN`` / ``\uNNNN``.

    Examples
    --------
    >>> visible("ok\x1b[2J\u202eevil\ttab")
    'ok\\x1b[2J\\u202eevil\ttab'
    >>> visible("CCO") == "CCO"
    True
    """
    return _UNSAFE.sub(_escape, text)


def all_visible(texts: list[str]) -> bool:
    r"""Return whether :func:`visible` leaves every one of ``texts`` unchanged (one scan for all of them).

    >>> all_visible(["CCO", "tab\there"]), all_visible(["CCO", "ok\x1b[2J"])
    (True, False)
    """
    # The unsafe characters are single code points and a line feed is not one: joined, the texts hold
    # one exactly when one of them does.
    return _UNSAFE.search("\n".join(texts)) is None


def printable(text: str, *, collapse: bool = True) -> str:
    r"""Return ``text`` as one printable line: every character ``str.isprintable`` rejects is escaped.

    The escapes are those of :func:`visible` (``\x1b``, ``\u202e``), so that a maintainer reading a
    terminal line sees what a submission tried to send rather than a ``?`` that hides which byte it was.

    Parameters
    ----------
    text : str
        Text from an untrusted source (a manifest, a folder name, a run's output).
    collapse : bool
        First collapse whitespace runs (line breaks and tabs included) to one space and strip the ends,
        as suits a log line. Without it, spaces are kept as they are and a line break or tab becomes
        escaped like any other control character, as suits a quoted value or key.

    Returns
    -------
    str
        One line that is safe to print in a terminal: no escape sequences, bells, carriage returns or
        bidirectional overrides; each such character is written as its escape.

    Examples
    --------
    >>> print(printable("a\x1b[2J\n  b\u202e"))
    a\x1b[2J b\u202e
    >>> print(printable("key\nwith  tab\t", collapse=False))
    key\x0awith  tab\x09
    """
    if collapse:
        text = " ".join(text.split())
    return "".join(ch if ch.isprintable() else _escape_char(ch) for ch in text)


def clip(text: str, limit: int) -> str:
    """Return ``text`` cut to at most ``limit`` characters, ``...`` marking a cut.

    Parameters
    ----------
    text : str
        Text, usually already :func:`printable`.
    limit : int
        The most characters returned; at least 4.

    Returns
    -------
    str
        ``text`` unchanged when it fits, else its first ``limit - 3`` characters and ``...``.

    Examples
    --------
    >>> clip("x" * 10, 8)
    'xxxxx...'
    >>> clip("short", 8)
    'short'
    """
    return text if len(text) <= limit else text[: limit - 3] + "..."
