"""Where an evaluation's time goes: a clock of named phases and the table printed after every ``evaluate``.

A newcomer's first ``nox -s evaluate`` builds an environment, a base image, a wheelhouse, one image per
submission and the data sets before any model runs (issue 36); the summary says which of these cost what, so
the largest is the one cut next. Phases nest (a job prepares its data set and may build its image): each
phase is charged its own time only, without the phases inside it, so the rows add up to the wall time
they cover and nothing is counted twice. Jobs may run side by side on threads (the local executor's
``--jobs``): each thread nests its own phases, and then the rows add up to more than the wall time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["KINDS", "Phase", "Phases"]

#: The kinds of phase, in the order a first run meets them.
KINDS = (
    "environment", "base image", "wheelhouse", "runtime image", "image build",
    "data set", "weights", "job", "waiting", "site",
)  # fmt: skip


@dataclass
class Phase:
    """One timed piece of work: its kind, what it worked on, and its own seconds (nested phases excluded)."""

    kind: str
    label: str
    seconds: float = 0.0


@dataclass
class Phases:
    """A clock of phases; ``timed`` is a context manager, ``table`` the printed summary.

    Examples
    --------
    >>> ticks = iter([0.0, 1.0, 3.0, 10.0])
    >>> clock = Phases(now=lambda: next(ticks))
    >>> with clock.timed("job", "a × amore × d"):
    ...     with clock.timed("data set", "d"):
    ...         pass
    >>> [(p.kind, p.seconds) for p in clock.phases]
    [('data set', 2.0), ('job', 8.0)]
    """

    now: Callable[[], float] = time.perf_counter
    phases: list[Phase] = field(default_factory=list)
    # Per thread: the seconds of the phases inside each of its open phases.
    _open: threading.local = field(default_factory=threading.local, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @contextmanager
    def timed(self, kind: str, label: str = "") -> Iterator[None]:
        """Time the block as one phase of ``kind`` (one of :data:`KINDS`) about ``label``."""
        if kind not in KINDS:
            raise ValueError(f"unknown phase kind {kind!r}; one of {', '.join(KINDS)}")
        stack = self._open.__dict__.setdefault("stack", [])
        started = self.now()
        stack.append(0.0)
        try:
            yield
        finally:
            spent = self.now() - started
            inner = stack.pop()
            if stack:
                stack[-1] += spent
            self.add(kind, label, spent - inner)

    def add(self, kind: str, label: str, seconds: float) -> None:
        """Record a phase timed elsewhere (the environment, installed by ``nox`` before Python starts)."""
        with self._lock:
            for phase in self.phases:  # the same data set prepared for several jobs: one row, summed
                if (phase.kind, phase.label) == (kind, label):
                    phase.seconds += seconds
                    return
            self.phases.append(Phase(kind, label, seconds))

    def total(self) -> float:
        """Seconds of all phases together."""
        return sum(p.seconds for p in self.phases)

    def table(self, *, rows: int = 12, quiet_below_s: float = 0.05) -> list[str]:
        """Return the summary's lines: totals per kind, then the longest single phases.

        Phases shorter than ``quiet_below_s`` (a reused image, a cached data set) are counted in their
        kind's total but not listed one by one; at most ``rows`` phases are listed, longest first.
        """
        total = self.total()
        if not self.phases or total <= 0:
            return []
        out = [f"where the time went ({total:.1f} s in {len(self.phases)} phase(s)):"]
        out.append(f"  {'kind':<12} {'count':>5} {'seconds':>9} {'share':>7}")
        for kind in KINDS:
            mine = [p for p in self.phases if p.kind == kind]
            if mine:
                seconds = sum(p.seconds for p in mine)
                out.append(f"  {kind:<12} {len(mine):>5} {seconds:>9.1f} {100 * seconds / total:>6.1f}%")
        longest = sorted((p for p in self.phases if p.seconds >= quiet_below_s), key=lambda p: -p.seconds)
        if longest:
            out.append("  longest:")
            for p in longest[:rows]:
                out.append(f"  {p.seconds:>9.1f} s  {100 * p.seconds / total:>5.1f}%  {p.kind}: {p.label}")
        return out
