"""Structured progress lines: what an evaluation job prints on stdout so the host can follow it live.

Runs inside the container (standard library only; never imports docker, mlflow or leaderboard). A job
reports ``(stage, done, total)`` through a :class:`ProgressReporter`; each report is one stdout line

    chemrobust-progress {"stage":"embed","done":1200,"total":16500}

that the host runners pick out of the output while the run goes on (:func:`parse_progress`) and show as a
progress bar or a periodic log line. Everything else on stdout stays ordinary log output.

Invariants
----------
- A progress line is exactly what :func:`format_progress` writes: :data:`PROGRESS_PREFIX` followed by
  compact JSON with the keys ``stage``, ``done`` and ``total`` in that order (no spaces, no escapes), on
  one line of at most :data:`MAX_LINE_CHARS` characters.
- ``stage`` is 1 to :data:`MAX_STAGE_CHARS` characters from ``[A-Za-z0-9 _.:/-]``; ``done`` and ``total``
  are integers (not booleans) with ``0 <= done <= total <= MAX_COUNT``.
- :func:`parse_progress` is strict: anything else (another prefix, bad or differently spelled JSON,
  extra, missing or duplicate keys, floats, out-of-range numbers, a forbidden character) gives None. It
  never clamps or repairs, and never raises for any input string.
- :func:`format_progress` and :func:`parse_progress` round-trip: ``parse_progress(format_progress(p)) == p``.
- :class:`ProgressReporter` prints at most one line per stage every ``min_interval_s`` seconds (0.5 s by
  default), but always the first line of a stage and every final line (``done == total``); each line is
  written with one ``write`` call and flushed.

Side effects
------------
- :class:`ProgressReporter` writes to ``sys.stdout`` (or the stream it is given).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = [
    "MAX_COUNT",
    "MAX_LINE_CHARS",
    "MAX_STAGE_CHARS",
    "PROGRESS_PREFIX",
    "Progress",
    "ProgressReporter",
    "format_progress",
    "parse_progress",
]

PROGRESS_PREFIX = "chemrobust-progress "
"""Start of every progress line (followed by compact JSON)."""

MAX_STAGE_CHARS = 64
"""Longest allowed stage name."""

MAX_COUNT = 10**12
"""Largest allowed ``done`` or ``total``; larger values are treated as garbage."""

MAX_LINE_CHARS = 256
"""Longest progress line :func:`parse_progress` looks at; a longer line is not a progress line."""

_STAGE = re.compile(rf"[A-Za-z0-9 _.:/-]{{1,{MAX_STAGE_CHARS}}}")
_KEYS = frozenset({"stage", "done", "total"})


@dataclass(frozen=True)
class Progress:
    """One progress report of a running job.

    Parameters
    ----------
    stage : str
        What is being done, e.g. ``"embed"`` or ``"retrieve:canonical"``; 1 to 64 characters from
        ``[A-Za-z0-9 _.:/-]``.
    done : int
        Items finished so far, ``0 <= done <= total``.
    total : int
        Items in this stage, at most :data:`MAX_COUNT`.

    Raises
    ------
    ValueError
        If a field breaks the rules above.
    """

    stage: str
    done: int
    total: int

    def __post_init__(self) -> None:
        problem = _problem(self.stage, self.done, self.total)
        if problem:
            raise ValueError(f"invalid progress {self.stage!r} {self.done!r}/{self.total!r}: {problem}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _problem(stage: Any, done: Any, total: Any) -> str | None:
    """Return what is wrong with the fields, or None when they make a valid :class:`Progress`."""
    if not isinstance(stage, str) or not _STAGE.fullmatch(stage):
        return f"stage must be 1 to {MAX_STAGE_CHARS} characters from [A-Za-z0-9 _.:/-]"
    if not (_is_int(done) and _is_int(total)):
        return "done and total must be integers"
    if not 0 <= done <= total <= MAX_COUNT:
        return f"need 0 <= done <= total <= {MAX_COUNT}"
    return None


def format_progress(progress: Progress) -> str:
    """Return the stdout line (without newline) that reports ``progress``.

    Parameters
    ----------
    progress : Progress
        The report.

    Returns
    -------
    str
        :data:`PROGRESS_PREFIX` followed by compact JSON, e.g.
        ``chemrobust-progress {"stage":"embed","done":3,"total":10}``.
    """
    body = {"stage": progress.stage, "done": progress.done, "total": progress.total}
    return PROGRESS_PREFIX + json.dumps(body, separators=(",", ":"))


def parse_progress(line: str) -> Progress | None:
    """Read a progress line; return None for anything that is not exactly one.

    Parameters
    ----------
    line : str
        One line of output; one trailing line end (LF or CR LF) is allowed, nothing else around it.

    Returns
    -------
    Progress or None
        The report, or None when the line is not a well-formed progress line (see the module's
        invariants). Never raises.
    """
    if not isinstance(line, str):
        return None
    if line.endswith("\n"):
        line = line[:-2] if line.endswith("\r\n") else line[:-1]
    if len(line) > MAX_LINE_CHARS or not line.startswith(PROGRESS_PREFIX):
        return None
    try:
        data = json.loads(line[len(PROGRESS_PREFIX) :])
    except ValueError:  # json.JSONDecodeError
        return None
    if not isinstance(data, dict) or set(data) != _KEYS:
        return None
    if _problem(data["stage"], data["done"], data["total"]):
        return None
    progress = Progress(data["stage"], data["done"], data["total"])
    return progress if format_progress(progress) == line else None  # the one canonical spelling only


class ProgressReporter:
    """Print progress lines, rate-limited per stage.

    Call it as ``report(stage, done, total)`` as often as convenient (e.g. after every batch); it prints
    the first line of a stage, then at most one line every ``min_interval_s`` seconds, and always the
    final line (``done == total``).

    Parameters
    ----------
    stream : text stream, optional
        Where the lines go; ``sys.stdout`` (looked up at each call) by default.
    min_interval_s : float, optional
        Minimum seconds between two lines of the same stage (0.5: at most about two lines a second).
    clock : callable, optional
        Monotonic clock in seconds (for tests).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> report = ProgressReporter(stream=out)
    >>> for done in range(1, 4):
    ...     _ = report("embed", done, 3)
    >>> print(out.getvalue(), end="")
    chemrobust-progress {"stage":"embed","done":1,"total":3}
    chemrobust-progress {"stage":"embed","done":3,"total":3}
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        min_interval_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.min_interval_s = min_interval_s
        self.clock = clock
        self._last: dict[str, float] = {}

    def __call__(self, stage: str, done: int, total: int) -> bool:
        """Report progress of ``stage``; print it unless a line of that stage was printed very recently.

        Parameters
        ----------
        stage : str
            Stage name (see :class:`Progress`).
        done : int
            Items finished.
        total : int
            Items in the stage.

        Returns
        -------
        bool
            Whether a line was printed.

        Raises
        ------
        ValueError
            If the values do not make a valid :class:`Progress`.
        """
        progress = Progress(stage, done, total)
        now = self.clock()
        last = self._last.get(stage)
        if last is not None and done != total and now - last < self.min_interval_s:
            return False
        self._last[stage] = now
        stream = self.stream if self.stream is not None else sys.stdout
        stream.write(format_progress(progress) + "\n")  # one write: the line is never split
        stream.flush()
        return True
