"""The problems of a manifest: one frozen :class:`Problem` per finding, safe to print, log or quote.

Built by :mod:`leaderboard.intake.manifest` where each problem is found; read by the terminal output of
``nox -s validate`` and by the pull-request report, which never re-parse message text. Side effects: none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leaderboard.text import clip, printable

#: The stages of :func:`load_submission`, in order; each :class:`Problem` names the one that found it.
#: A stage runs only when the ones before it pass, except that ``folder`` and ``policy`` run together.
STAGES: tuple[str, ...] = ("file", "yaml", "schema", "consistency", "folder", "policy")

# The most characters each Problem field keeps (after making it printable).
_LIMITS = {"file": 500, "field": 200, "value": 80, "message": 1000, "fix": 500}


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

    Examples
    --------
    >>> message = "'pooling' Input should be 'mean' or 'cls', got 'max'."
    >>> p = Problem("s/x/submission.yaml", "pooling", "'max'", message, "Use mean or cls.", "schema")
    >>> str(p)
    "s/x/submission.yaml: 'pooling' Input should be 'mean' or 'cls', got 'max'. Use mean or cls."
    >>> Problem("f", "", "", "bad \x1b[2J\nvalue", "", "yaml").message
    'bad ?[2J?value'
    """

    file: str
    field: str
    value: str
    message: str
    fix: str
    check: str

    def __post_init__(self) -> None:
        if self.check not in STAGES:
            raise ValueError(f"check must be one of {STAGES}, got {self.check!r}")
        for name, limit in _LIMITS.items():
            object.__setattr__(self, name, safe_text(getattr(self, name), limit))

    def __str__(self) -> str:
        """Return the one line the terminal shows: ``<file>: <message> <fix>``."""
        return f"{self.file}: {self.message}" + (f" {self.fix}" if self.fix else "")


class ManifestError(ValueError):
    """A manifest with problems: ``problems`` lists every :class:`Problem` found (in ``STAGES`` order)."""

    def __init__(self, path: Path, problems: list[Problem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def safe_text(text: Any, limit: int) -> str:
    """Return ``text`` as one printable line (control characters as ``?``, spaces kept), clipped."""
    return clip(printable(str(text), collapse=False), limit)


def shown(value: Any) -> str:
    """Return the ``repr`` of an offending value, clipped for a message (at most 80 characters, printable)."""
    return safe_text(repr(value), _LIMITS["value"])
