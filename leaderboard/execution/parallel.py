"""Run an evaluation's jobs side by side: ``evaluate --jobs N`` (the local executor's default is ``auto``).

A small model's run does not use a second core: on this project's 2-core machines, chem-t5's
prompt-robustness job took 103.7 s with one torch thread and 108.7 s with two (issue 36). Two such jobs at
once, one thread each, finish in about the time of one. :func:`run_jobs` runs the Docker jobs of an
evaluation on ``workers`` threads, each container's thread pools sized to its share of the cores
(:attr:`leaderboard.execution.sandbox.SandboxLimits.threads`); the jobs of an API endpoint (one spending
ledger) and of the in-process runner (no sandbox of their own) run one after another on this thread.

What the jobs share is taken one at a time: :class:`leaderboard.execution.evaluate.Evaluator` prepares a
job (data set, weights, image, its MLflow run, the job's folder) under its preparation lock, so only the
containers and the host's scoring overlap; the store is called under a lock of its own
(:class:`SerializedStore`); lines to the terminal are written whole, under
:data:`leaderboard.execution.limits.FORK_LOCK`, which the scoring's fork also takes. The summary counts the
jobs in plan order, so its lines do not depend on which job ended first.

Invariants: the result keys and the summary's lines are those of running the jobs one by one. The
threads a model's libraries use may change the last bits of its sums: on a first run here (23 jobs), every
stored number was identical to the one-by-one run's, and 1 of 263 600 completions (a degenerate repetition,
wrong either way) differed in a late token; the key never holds the thread count, the run's ``sandbox`` tag
records it. Side effects: those of the jobs; ``workers`` threads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from leaderboard.cpus import usable_cpus
from leaderboard.execution.limits import FORK_LOCK
from leaderboard.execution.sandbox import SandboxLimits, docker_bytes
from leaderboard.intake.endpoints import EndpointModel

__all__ = [
    "LockedStream", "SerializedStore", "auto_workers", "run_jobs", "runs_side_by_side",
    "thread_share",
]  # fmt: skip



class Tally(Protocol):
    """What a job's outcome is counted in (:class:`leaderboard.execution.evaluate.Summary`)."""

    reused: int
    computed: int
    failed: list[str]


class Job(Protocol):
    """One planned job (:class:`leaderboard.execution.evaluate.PlannedJob`)."""

    submission: Any
    label: str


class Evaluator(Protocol):
    """What runs the jobs (:class:`leaderboard.execution.evaluate.Evaluator`); its shared parts swap."""

    sandbox: Any
    store: Any
    log: Callable[[str], None]
    progress_stream: TextIO | None
    limits: SandboxLimits
    use_gpu: bool

    def attempt(self, job: Any, label: str, summary: Any) -> str:
        """Run one job; count its outcome in ``summary``."""
        ...


GiB = 1024**3
#: Memory left to the host beside the jobs' limits when ``auto`` picks the number of jobs.
HOST_RESERVE_BYTES = 2 * GiB


def _host_cpus() -> int:
    return usable_cpus()


def _host_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def runs_side_by_side(evaluator: Evaluator) -> bool:
    """Whether the evaluator's runner isolates its runs enough to overlap them (its ``side_by_side``)."""
    return bool(getattr(getattr(evaluator, "sandbox", None), "side_by_side", False))


def auto_workers(evaluator: Evaluator, *, cpus: int | None = None, memory: int | None = None) -> int:
    """Return how many jobs ``--jobs auto`` runs at once on this host.

    One per core, as many as the host's memory holds at the sandbox's memory limit each (with
    :data:`HOST_RESERVE_BYTES` left over); one when the jobs use a GPU (they would share its memory) or their
    runner does not isolate them (:func:`runs_side_by_side`: Docker does, the in-process runner does not).

    Parameters
    ----------
    evaluator : leaderboard.execution.evaluate.Evaluator
        Its runner, GPU use and sandbox limits decide.
    cpus, memory : int, optional
        The host's cores and bytes of memory (default: this machine's).
    """
    if not runs_side_by_side(evaluator) or getattr(evaluator, "use_gpu", False):
        return 1
    cpus = _host_cpus() if cpus is None else cpus
    memory = _host_memory() if memory is None else memory
    fits = (memory - HOST_RESERVE_BYTES) // docker_bytes(evaluator.limits.memory) if memory else 1
    return max(1, min(cpus, int(fits)))


def thread_share(cpus: float, workers: int, *, host_cpus: int | None = None) -> int:
    """Return the threads each of ``workers`` side-by-side jobs may start: its share of the cores.

    Never more than the sandbox's CPU quota ``cpus`` (rounded down), never less than one.

    Examples
    --------
    >>> [thread_share(2.0, w, host_cpus=h) for w, h in ((2, 2), (2, 16), (1, 2))]
    [1, 2, 2]
    """
    host = _host_cpus() if host_cpus is None else host_cpus
    return max(1, min(int(cpus), host // max(1, workers)))


class LockedStream:
    """A text stream whose writes are made under :data:`FORK_LOCK` (a line is never cut by another thread)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write ``text`` whole."""
        with FORK_LOCK:
            return self._stream.write(text)

    def flush(self) -> None:
        """Flush the stream."""
        with FORK_LOCK:
            self._stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        try:
            return bool(self._stream.isatty())
        except (AttributeError, ValueError, OSError):
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class SerializedStore:
    """A result store whose methods are called one at a time, whichever thread calls them."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return value(*args, **kwargs)

        return call


@dataclass
class _Swap:
    """The evaluator's shared parts, swapped for their thread-safe forms while the jobs run."""

    store: Any
    log: Callable[[str], None]
    progress_stream: TextIO | None
    limits: SandboxLimits


def run_jobs(evaluator: Evaluator, jobs: Sequence[Job], summary: Tally, *, workers: int) -> None:
    """Run ``jobs`` (numbered in plan order), ``workers`` at once where they may; count them in ``summary``.

    Parameters
    ----------
    evaluator : leaderboard.execution.evaluate.Evaluator
        Runs each job (:meth:`~leaderboard.execution.evaluate.Evaluator.attempt`).
    jobs : sequence of PlannedJob
        The plan, in order.
    summary : leaderboard.execution.evaluate.Summary
        Receives every job's outcome, in plan order.
    workers : int
        Jobs at once; 1 runs them one after another, as before.
    """
    labels = [f"[{n}/{len(jobs)}] {job.label}" for n, job in enumerate(jobs, 1)]
    side_by_side = [
        k for k, job in enumerate(jobs) if workers > 1 and not isinstance(job.submission.model, EndpointModel)
    ]
    if not runs_side_by_side(evaluator) or len(side_by_side) < 2:
        side_by_side = []
    tallies: list[Tally] = [type(summary)() for _ in jobs]
    if side_by_side:
        _run_side_by_side(evaluator, [jobs[k] for k in side_by_side], [labels[k] for k in side_by_side],
                          [tallies[k] for k in side_by_side], workers)  # fmt: skip
    together = set(side_by_side)
    for k, job in enumerate(jobs):
        if k not in together:
            evaluator.attempt(job, labels[k], tallies[k])
    for tally in tallies:
        summary.reused += tally.reused
        summary.computed += tally.computed
        summary.failed += tally.failed


def _run_side_by_side(
    evaluator: Evaluator, jobs: list[Job], labels: list[str], tallies: list[Tally], workers: int
) -> None:
    """Run these Docker jobs on ``workers`` threads, the evaluator's shared parts made thread-safe."""
    workers = min(workers, len(jobs))
    saved = _Swap(evaluator.store, evaluator.log, evaluator.progress_stream, evaluator.limits)
    log = saved.log

    def locked_log(line: str) -> None:
        with FORK_LOCK:
            log(line)

    evaluator.store = SerializedStore(saved.store)
    evaluator.log = locked_log
    if saved.progress_stream is not None:
        evaluator.progress_stream = LockedStream(saved.progress_stream)  # type: ignore[assignment]
    threads = thread_share(saved.limits.cpus, workers)
    evaluator.limits = saved.limits.model_copy(update={"threads": threads})
    locked_log(f"running {len(jobs)} jobs {workers} at a time, {threads} thread(s) each (--jobs)")
    started = time.perf_counter()
    try:
        with ThreadPoolExecutor(workers, thread_name_prefix="chemrobust-job") as pool:
            futures = [pool.submit(evaluator.attempt, job, label, tally)
                       for job, label, tally in zip(jobs, labels, tallies, strict=True)]  # fmt: skip
            try:
                for future in futures:
                    future.result()
            except BaseException:  # interrupted: start no other job; the running ones end as they would
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        evaluator.store, evaluator.log = saved.store, saved.log
        evaluator.progress_stream, evaluator.limits = saved.progress_stream, saved.limits
    # The phase table then adds up the jobs' own times, which overlapped: say what the wall clock was.
    log(f"{len(jobs)} jobs, {workers} at a time: {time.perf_counter() - started:.1f} s of wall clock "
        "(the phases below add up each job's own time)")  # fmt: skip
