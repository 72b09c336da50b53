"""The problems of a manifest: one frozen :class:`Problem` per finding, safe to print, log or quote.

Built by :mod:`leaderboard.intake.manifest` (and the check modules it runs) where each problem is found;
read by the terminal output of ``nox -s validate`` and by the pull-request report, which never re-parse
message text. A problem is an ``error`` (the manifest is invalid) or a ``warning`` (valid, but something a
maintainer must look at, such as pickle weights). Side effects: none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leaderboard.text import clip, printable

#: The checks of :func:`load_submission`, in order; each :class:`Problem` names the one that found it.
#: Every check runs in one pass; a check reads only the fields that passed the schema (so a typo in one
#: field never hides a problem of another), and nothing after ``yaml`` runs without a parsed document.
STAGES: tuple[str, ...] = ("file", "yaml", "schema", "consistency", "folder", "policy")
#: ``error``: the manifest is invalid. ``warning``: valid, but a maintainer must look at it.
SEVERITIES: tuple[str, ...] = ("error", "warning")

# The most characters each Problem field keeps (after making it printable).
_LIMITS = {"file": 500, "field": 200, "value": 80, "message": 1000, "fix": 500}
_SOURCE_LIMIT = 120  # characters of the offending line a Location keeps


@dataclass(frozen=True)
class Location:
    r"""Where in the manifest's text a problem is: line, column and the offending line itself.

    Attributes
    ----------
    line, column : int
        1-based, as editors count them.
    source : str
        The offending line (or a window of it around ``column`` when it is long), printable: a tab shows
        as ``\t`` (what an author recognises; YAML refuses tabs in most places) and any other control
        character as its visible escape (``\x1b``), so nothing of the line acts on a terminal.
    caret : int
        0-based index into ``source`` of the character ``column`` points at (escapes before it counted
        at their shown width, so the caret stays under it).

    Examples
    --------
    >>> at = Location.in_text("id: x\nname: [open\n", line=2, column=7)
    >>> at.source, at.caret
    ('name: [open', 6)
    >>> at.pointer()
    ('name: [open', '      ^')
    >>> print("\n".join(Location.in_text("a\tb: [open", line=1, column=6).pointer()))
    a\tb: [open
          ^
    """

    line: int
    column: int
    source: str = ""
    caret: int = 0

    @classmethod
    def in_text(cls, text: str, *, line: int, column: int) -> Location:
        """Return the location of ``line``/``column`` (1-based) in ``text``, quoting that line."""
        lines = text.splitlines()
        raw = lines[line - 1] if 0 < line <= len(lines) else ""
        start = max(0, min(column - 1 - _SOURCE_LIMIT // 2, len(raw) - _SOURCE_LIMIT))
        window = excerpt(raw[start : start + _SOURCE_LIMIT])
        caret = len(excerpt(raw[start : max(start, column - 1)]))
        return cls(line, column, window, max(0, min(caret, len(window))))

    def pointer(self) -> tuple[str, str]:
        """Return the two lines a terminal shows: the offending line and a caret under the column."""
        return self.source, " " * self.caret + "^"


@dataclass(frozen=True)
class Problem:
    r"""One problem of one manifest, built where it is detected.

    Every text field is made printable and clipped on construction (submission-controlled text is
    hostile), so a problem is always safe to print, log or quote.

    Attributes
    ----------
    file : str
        The manifest's path as given to the validator (in the pull-request report: relative to the
        repository root).
    field : str
        YAML path of the field (``model.revision``, ``requirements.1``); empty for problems of the
        document as a whole (not found, too big, not YAML, not a mapping).
    value : str
        A short, clipped ``repr`` of the offending value; empty when there is none (a missing field).
    message : str
        What is wrong, as one or more sentences that quote the field and the value, without the fix.
    fix : str
        How to fix it; empty when the message says it all.
    check : str
        The stage of :data:`STAGES` that found it.
    severity : str
        ``error`` (the default) or ``warning`` (:data:`SEVERITIES`); only errors make a manifest invalid.
    at : Location or None
        Line and column in the manifest's text, when the problem has one (YAML syntax, duplicate keys).

    Examples
    --------
    >>> message = "'pooling' Input should be 'mean' or 'cls', got 'max'."
    >>> p = Problem("s/x/submission.yaml", "pooling", "'max'", message, "Use mean or cls.", "schema")
    >>> str(p)
    "s/x/submission.yaml: 'pooling' Input should be 'mean' or 'cls', got 'max'. Use mean or cls."
    >>> print(Problem("f", "", "", "bad \x1b[2J\nvalue", "", "yaml").message)
    bad \x1b[2J\x0avalue
    >>> str(Problem("f", "", "", "not valid YAML: oops.", "Fix it.", "yaml", at=Location(3, 7)))
    'f:3:7: not valid YAML: oops. Fix it.'
    """

    file: str
    field: str
    value: str
    message: str
    fix: str
    check: str
    severity: str = "error"
    at: Location | None = None

    def __post_init__(self) -> None:
        if self.check not in STAGES:
            raise ValueError(f"check must be one of {STAGES}, got {self.check!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")
        for name, limit in _LIMITS.items():
            object.__setattr__(self, name, safe_text(getattr(self, name), limit))

    @property
    def is_error(self) -> bool:
        """Whether this problem makes the manifest invalid (a warning does not)."""
        return self.severity == "error"

    def __str__(self) -> str:
        """Return the one line the terminal shows: ``<file>[:<line>:<col>]: [warning: ]<message> <fix>``."""
        where = f":{self.at.line}:{self.at.column}" if self.at is not None else ""
        kind = "" if self.is_error else "warning: "
        return f"{self.file}{where}: {kind}{self.message}" + (f" {self.fix}" if self.fix else "")


def errors(problems: list[Problem] | tuple[Problem, ...]) -> list[Problem]:
    """Return the problems that make a manifest invalid (severity ``error``), in order."""
    return [p for p in problems if p.is_error]


class ManifestError(ValueError):
    """An invalid manifest: ``problems`` lists every :class:`Problem` found, warnings included.

    ``reached`` names the checks of :data:`STAGES` that ran (all of them unless the file could not be
    read or parsed into a mapping).
    """

    def __init__(self, path: Path, problems: list[Problem], reached: tuple[str, ...] = STAGES) -> None:
        self.path = path
        self.problems = problems
        self.reached = reached
        super().__init__("\n".join(str(p) for p in problems))


def excerpt(line: str) -> str:
    r"""Return one line of a manifest as the validator quotes it: a tab as ``\t``, nothing raw.

    ``printable`` alone shows a tab as ``\x09``, which few authors read as a tab; the line is hostile
    text all the same, so every other control character keeps its visible escape.

    Examples
    --------
    >>> print(excerpt("\tid: x\x1b[2J"))
    \tid: x\x1b[2J
    """
    return "\\t".join(printable(part, collapse=False) for part in line.split("\t"))


def safe_text(text: Any, limit: int) -> str:
    """Return ``text`` as one printable line (control characters as visible escapes, spaces kept), clipped."""
    return clip(printable(str(text), collapse=False), limit)


def shown(value: Any) -> str:
    """Return the ``repr`` of an offending value, clipped for a message (at most 80 characters, printable)."""
    return safe_text(repr(value), _LIMITS["value"])
