"""Follow a running job's progress on the host: pick progress lines out of its output and show them.

A job prints :mod:`evaluators.progress` lines on stdout (``chemrobust-progress {"stage":…,"done":…,
"total":…}``). Both runners feed the job's stdout, as it arrives, to a :class:`ProgressFollower`, which
passes each well-formed progress line to the run's ``on_progress`` callback. A :class:`ProgressDisplay` is
such a callback: a ``rich`` progress bar with ETA on a terminal, a plain line at most every ``interval_s``
seconds otherwise (CI logs, files)::

    display = ProgressDisplay("[3/18] sub × amore × chebi20", stream=sys.stdout)
    try:
        outcome = runner.run(image, ..., on_progress=display.update)
    finally:
        display.close()

which prints, without a terminal, lines like
``[3/18] sub × amore × chebi20: embed 1200/16500 (7%), ETA 4m10s``.

Invariants
----------
- The output is untrusted. The follower holds at most :data:`MAX_LINE_BYTES` of an unfinished line;
  longer lines are skipped to their end (they cannot be progress lines), so memory does not grow with
  the output, whatever it is. Malformed lines are counted, never raised.
- Only complete lines (ended by a newline) count, and progress is delivered in output order.
- An exception raised by the callback is reported once as a ``RuntimeWarning`` and stops further
  callbacks of that follower; it never ends the run.
- Everything shown passes through :func:`leaderboard.execution.sandbox.printable` and is cut to
  :data:`evaluators.progress.MAX_STAGE_CHARS` characters (stages) or :data:`MAX_LABEL_CHARS` (labels).
- In the kept log tail, progress lines are left out and replaced by one summary line at the end
  (:func:`compact_progress_lines`), so a run's real output is what the tail shows.

Side effects
------------
- :class:`ProgressDisplay` writes to its stream; on a terminal it runs ``rich``'s refresh thread from the
  first update until :meth:`ProgressDisplay.close`.
"""

from __future__ import annotations

import re
import sys
import threading
import time
import warnings
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from evaluators.progress import MAX_LINE_CHARS, MAX_STAGE_CHARS, PROGRESS_PREFIX, Progress, parse_progress
from leaderboard.execution.sandbox import ProgressCallback, printable

__all__ = [
    "MAX_LABEL_CHARS",
    "MAX_LINE_BYTES",
    "ProgressDisplay",
    "ProgressFollower",
    "compact_progress_lines",
    "format_duration",
]

MAX_LINE_BYTES = MAX_LINE_CHARS + 2
"""Longest line (with a carriage return) the follower looks at; longer ones cannot be progress lines."""

MAX_LABEL_CHARS = 200
"""A display's label is cut to this many characters."""

_LIVE_LOCK = threading.Lock()
_LIVE_BARS: set[int] = set()  # ids of the displays whose bar is on screen (at most one)
_PREFIX = PROGRESS_PREFIX.encode()
_PROGRESS_LINE = re.compile(rb"^" + re.escape(_PREFIX) + rb"[^\n]*$", re.MULTILINE)


class ProgressFollower:
    """Split a job's stdout, fed in arbitrary chunks, into lines and report its progress lines.

    Parameters
    ----------
    on_progress : callable or None
        Receives each well-formed :class:`evaluators.progress.Progress`, in order; None only counts.

    Attributes
    ----------
    progress_lines : int
        Well-formed progress lines seen.
    malformed_lines : int
        Lines that start with the progress prefix but are not well-formed (or are too long).
    last : Progress or None
        The latest well-formed report.
    """

    def __init__(self, on_progress: ProgressCallback | None) -> None:
        self.on_progress = on_progress
        self.progress_lines = 0
        self.malformed_lines = 0
        self.last: Progress | None = None
        self._pending = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> None:
        """Take the next piece of output.

        Parameters
        ----------
        chunk : bytes
            Any number of bytes; lines may be split across chunks anywhere.
        """
        if not chunk:
            return
        if self._pending or self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                self._hold(chunk)
                return
            if not self._skipping:
                if len(self._pending) + end > MAX_LINE_BYTES:
                    self._count_if_progress(bytes(self._pending) + chunk[: len(_PREFIX)])
                else:
                    self._line(bytes(self._pending) + chunk[:end])
            self._pending.clear()
            self._skipping = False
            chunk = chunk[end + 1 :]
        last_newline = chunk.rfind(b"\n")
        if last_newline >= 0:
            for match in _PROGRESS_LINE.finditer(chunk, 0, last_newline + 1):
                self._line(match.group())
        self._hold(chunk[last_newline + 1 :])

    def resync(self) -> None:
        """Forget the unfinished line: the next bytes fed do not follow the previous ones."""
        self._pending.clear()
        self._skipping = True

    def _hold(self, rest: bytes) -> None:
        """Keep the start of an unfinished line, or skip it when it is too long to matter."""
        if self._skipping or not rest:
            return
        if len(self._pending) + len(rest) > MAX_LINE_BYTES:
            self._count_if_progress(bytes(self._pending) + rest[: len(_PREFIX)])
            self._pending.clear()
            self._skipping = True
        else:
            self._pending += rest

    def _count_if_progress(self, start: bytes) -> None:
        """Count a line too long to look at as malformed when it starts like a progress line."""
        if start.startswith(_PREFIX):
            self.malformed_lines += 1

    def _line(self, raw: bytes) -> None:
        if not raw.startswith(_PREFIX):
            return
        progress = None
        if len(raw) <= MAX_LINE_BYTES:
            progress = parse_progress(raw.decode("utf-8", errors="replace").removesuffix("\r"))
        if progress is None:
            self.malformed_lines += 1
            return
        self.progress_lines += 1
        self.last = progress
        if self.on_progress is None:
            return
        try:
            self.on_progress(progress)
        except Exception as exc:  # noqa: BLE001 - a display bug must not end the run it displays
            self.on_progress = None
            warnings.warn(
                f"progress callback failed ({type(exc).__name__}: {exc}); no more progress for this run",
                RuntimeWarning,
                stacklevel=2,
            )


def _describe(progress: Progress) -> str:
    return f"{printable(progress.stage)[:MAX_STAGE_CHARS]} {progress.done}/{progress.total}"


def compact_progress_lines(text: str) -> str:
    """Leave progress lines out of a log tail, adding one summary line at the end.

    Parameters
    ----------
    text : str
        A run's kept output.

    Returns
    -------
    str
        ``text`` without its well-formed progress lines (malformed ones stay, they may help debugging),
        followed by ``[N progress lines left out; last: STAGE DONE/TOTAL]`` when there were any;
        ``text`` itself when there were none.
    """
    kept: list[str] = []
    count = 0
    last: Progress | None = None
    for line in text.split("\n"):
        progress = parse_progress(line.removesuffix("\r")) if line.startswith(PROGRESS_PREFIX) else None
        if progress is None:
            kept.append(line)
        else:
            count += 1
            last = progress
    if last is None:
        return text
    body = "\n".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{body}[{count} progress line{'s' if count != 1 else ''} left out; last: {_describe(last)}]"


def format_duration(seconds: float) -> str:
    """Format a duration for humans: ``42s``, ``4m10s``, ``1h02m``.

    Parameters
    ----------
    seconds : float
        A non-negative duration.

    Returns
    -------
    str
        Seconds below a minute, minutes and seconds below an hour, else hours and minutes.

    Examples
    --------
    >>> format_duration(250), format_duration(3720), format_duration(9.6)
    ('4m10s', '1h02m', '10s')
    """
    total = max(0, round(seconds))
    if total < 60:
        return f"{total}s"
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    return f"{total // 3600}h{total % 3600 // 60:02d}m"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class ProgressDisplay:
    """Show one job's progress: a live bar with ETA on a terminal, else a plain line now and then.

    Pass :meth:`update` as a runner's ``on_progress`` and call :meth:`close` when the run is over (or use
    the display as a context manager). :meth:`update` may be called from another thread.

    Parameters
    ----------
    label : str
        Names the job, e.g. ``"[3/18] sub × amore × chebi20"``; made printable and cut to
        :data:`MAX_LABEL_CHARS` characters.
    stream : text stream, optional
        Where to show it; ``sys.stdout`` by default.
    interval_s : float, optional
        Without a terminal, at most one line per this many seconds (30). The first report is shown at
        once, and :meth:`close` shows the latest one if it was not shown yet.
    live : bool, optional
        Force the ``rich`` bar (True) or plain lines (False); by default, the bar when ``stream`` is a
        terminal. While another display's bar is on screen (until its :meth:`close`), plain lines instead.
    clock : callable, optional
        Monotonic clock in seconds (for tests).
    """

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        interval_s: float = 30.0,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = printable(label)[:MAX_LABEL_CHARS]
        self.stream = stream if stream is not None else sys.stdout
        self.interval_s = interval_s
        self.live = _is_terminal(self.stream) if live is None else live
        self.clock = clock
        self._lock = threading.Lock()
        self._closed = False
        self._stage: str | None = None
        self._origin = (0.0, 0)  # (time, done) when the current stage was first seen
        self._latest: tuple[str, int, int, float] | None = None
        self._shown = True
        self._last_shown: float | None = None
        self._bar = None
        self._task = None

    def update(self, progress: Progress) -> None:
        """Take a progress report (the ``on_progress`` callback of a run).

        Parameters
        ----------
        progress : evaluators.progress.Progress
            The report; its stage is untrusted text from the job.
        """
        stage = printable(str(progress.stage))[:MAX_STAGE_CHARS] or "?"
        done, total = max(0, int(progress.done)), max(0, int(progress.total))
        with self._lock:
            if self._closed:
                return
            now = self.clock()
            new_stage = stage != self._stage
            if new_stage:
                self._stage = stage
                self._origin = (now, done)
            self._latest = (stage, done, total, now)
            if self.live and self._update_bar(stage, done, total, new_stage=new_stage):
                return
            if self._last_shown is None or now - self._last_shown >= self.interval_s:
                self._show()
            else:
                self._shown = False

    def line(self) -> str:
        """Return the plain line for the latest report (``""`` before the first).

        Returns
        -------
        str
            ``LABEL: STAGE DONE/TOTAL (P%), ETA 4m10s``; ``ETA ?`` before any rate is known; no ETA once
            ``done == total``.
        """
        if self._latest is None:
            return ""
        stage, done, total, now = self._latest
        percent = 100 * done // total if total else 100
        text = f"{self.label}: {stage} {done}/{total} ({percent}%)"
        if done >= total:
            return text
        t0, done0 = self._origin
        if now > t0 and done > done0:
            eta = format_duration((total - done) * (now - t0) / (done - done0))
        else:
            eta = "?"
        return f"{text}, ETA {eta}"

    def close(self) -> None:
        """End the display: stop the bar, or show the latest report if it was not shown yet."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._bar is not None:
                self._bar.stop()
                with _LIVE_LOCK:
                    _LIVE_BARS.discard(id(self))
            elif not self._shown:
                self._show()

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _show(self) -> None:
        self.stream.write(self.line() + "\n")
        self.stream.flush()
        self._shown = True
        self._last_shown = self.clock()

    def _update_bar(self, stage: str, done: int, total: int, *, new_stage: bool) -> bool:
        """Draw the report on the bar; return False (now plain lines) if no bar can be shown."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress

        description = f"{self.label}: {stage}"
        if self._bar is None:
            with _LIVE_LOCK:  # one bar on screen at a time: two would overwrite each other's lines
                if _LIVE_BARS:
                    self.live = False
                    return False
                _LIVE_BARS.add(id(self))
            bar = RichProgress(
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.percentage:>3.0f}%"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self.stream, force_terminal=True),
                get_time=self.clock,
            )
            self._task = bar.add_task(description, total=total, completed=done)
            bar.start()
            self._bar = bar
        elif new_stage:
            self._bar.reset(self._task, total=total, completed=done, description=description)
        else:
            self._bar.update(self._task, total=total, completed=done)
        return True
