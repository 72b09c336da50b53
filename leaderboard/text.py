"""Plain text that a submission may control, made safe to print: one line, printable, bounded.

A manifest's values and keys, a submission's folder name and a sandboxed run's output are written by
whoever opened the pull request. Before such text reaches a terminal, a log or a report it goes through
:func:`printable` (no escape sequences, bells, carriage returns, bidirectional overrides or line breaks)
and, where its length matters, :func:`clip`.

Side effects: none.
"""

from __future__ import annotations

__all__ = ["clip", "printable"]


def printable(text: str, *, collapse: bool = True) -> str:
    r"""Return ``text`` as one printable line: every character ``str.isprintable`` rejects becomes ``?``.

    Parameters
    ----------
    text : str
        Text from an untrusted source (a manifest, a folder name, a run's output).
    collapse : bool
        First collapse whitespace runs (line breaks and tabs included) to one space and strip the ends,
        as suits a log line. Without it, spaces are kept as they are and a line break or tab becomes
        ``?`` like any other control character, as suits a quoted value or key.

    Returns
    -------
    str
        One line that is safe to print in a terminal: no escape sequences, bells, carriage returns or
        bidirectional overrides.

    Examples
    --------
    >>> printable("a\x1b[2J\n  b\u202e")
    'a?[2J b?'
    >>> printable("key\nwith  tab\t", collapse=False)
    'key?with  tab?'
    """
    if collapse:
        text = " ".join(text.split())
    return "".join(ch if ch.isprintable() else "?" for ch in text)


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
