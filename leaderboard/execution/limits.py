"""Host-side work on what a run wrote, under kernel limits: a child process with a memory cap and a clock.

The container is limited by Docker; what the host does with the container's output (parsing
``result.json``, RDKit on every answer, OPSIN on every name, a track's :meth:`~evaluators.tracks.Track.score`)
runs on the host and is just as much the submission's to steer. :func:`call_limited` runs such a call in a
forked child (``fork``: it inherits the registries as the evaluation holds them — a track, metric or data
set registered at run time, as plug-ins and the toy track of the tests are — and reads its inputs without
pickling them) that first sets ``RLIMIT_AS`` (address
space: Python, RDKit and the OPSIN JVM it starts, which inherits it) and ``RLIMIT_CPU``, and leads its own
process group, so that the wall-clock limit kills the Java processes it started too.

Invariants: the call either returns its value, raises :class:`ScoringLimitError` (wall clock, memory, or
the child died) with a one-line reason, or re-raises the child's exception of a type in ``passthrough``
with its message; the child never outlives :func:`call_limited`.
Side effects: one child process (and its process group) per call.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from leaderboard.text import clip, printable

__all__ = ["FORK_LOCK", "ScoringLimitError", "ScoringLimits", "call_limited"]

GiB = 1024**3

#: Held while :func:`call_limited` forks. A fork copies every lock as it is at that moment, and a stream's
#: lock held by another thread mid-write would stay held in the child for ever: threads that write to a
#: shared stream while jobs run side by side (the local executor's ``--jobs``) write under this lock.
FORK_LOCK = threading.Lock()


class ScoringLimitError(RuntimeError):
    """Host-side scoring passed its wall-clock or memory limit, or its process died."""


@dataclass(frozen=True, slots=True)
class ScoringLimits:
    """The limits of one run's host-side scoring (:func:`call_limited`).

    Attributes
    ----------
    wall_s : float
        Wall-clock seconds, then the process group is killed and the run fails with the reason.
    memory_bytes : int
        Address space of the scoring process (``RLIMIT_AS``), inherited by the OPSIN JVM it starts (whose
        heap is capped lower, :data:`evaluators.answers.opsin.OPSIN_HEAP`).
    cpu_s : int
        CPU seconds of the scoring process (``RLIMIT_CPU``): a backstop to the wall clock.
    """

    wall_s: float = 1800.0
    memory_bytes: int = 8 * GiB
    cpu_s: int = 3600


def _child(conn: Any, limits: ScoringLimits, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    """Run ``fn`` under ``limits``; send ``("ok", value)`` or ``("error", type, module, message, where)``."""
    os.setsid()  # its own group: a kill on the wall clock reaches the JVMs it starts
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s))
    try:
        conn.send(("ok", fn(*args, **kwargs)))
    except MemoryError:
        conn.send(("memory", "", "", "", ""))
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent as a reason
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
        conn.send(("error", type(exc).__name__, type(exc).__module__, str(exc), where))
    finally:
        conn.close()


def _kill_group(process: Any) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.join(10)


def call_limited(
    fn: Callable[..., Any],
    /,
    *args: Any,
    limits: ScoringLimits,
    passthrough: tuple[type[BaseException], ...] = (),
    **kwargs: Any,
) -> Any:
    """Call ``fn(*args, **kwargs)`` in a child process under ``limits`` and return its value.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled by name); its arguments and value must pickle.
    *args, **kwargs
        Its arguments.
    limits : ScoringLimits
        Wall clock, address space and CPU time of the child.
    passthrough : tuple of exception types
        Exceptions of these types raised by ``fn`` are raised again here, with their message (types that
        take one message argument).

    Returns
    -------
    Any
        What ``fn`` returned.

    Raises
    ------
    ScoringLimitError
        When the child passes the wall clock (killed with its process group), runs out of memory, dies
        (a signal: the CPU limit, a crash in native code), or raises an exception not in ``passthrough``.
    """
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(child, limits, fn, args, kwargs), daemon=True)
    started = time.monotonic()
    with FORK_LOCK:
        process.start()
    child.close()
    try:
        ready = parent.poll(limits.wall_s)
        message = None
        if ready:
            try:
                message = parent.recv()
            except (EOFError, OSError):
                message = None
        if not ready:
            raise ScoringLimitError(
                f"host scoring took more than its {limits.wall_s:g} s wall-clock limit and was stopped"
            )
    finally:
        _kill_group(process)
        parent.close()
    if message is None:
        code = process.exitcode
        what = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        raise ScoringLimitError(
            f"host scoring died after {time.monotonic() - started:.0f} s ({what}; its limits: "
            f"{limits.memory_bytes / GiB:g} GiB of memory, {limits.cpu_s} CPU seconds)"
        )
    kind, *rest = message
    if kind == "ok":
        return rest[0]
    if kind == "memory":
        raise ScoringLimitError(f"host scoring ran out of its {limits.memory_bytes / GiB:g} GiB memory limit")
    name, module, text, where = rest[0], rest[1], clip(printable(rest[2]), 1000), rest[3]
    for cls in passthrough:
        # An expected error is the run's reason as it would be in-process: its own words, no location.
        if cls.__name__ == name and cls.__module__ == module:
            raise cls(text)
    raise ScoringLimitError(f"host scoring failed: {name}: {text}{where}")
