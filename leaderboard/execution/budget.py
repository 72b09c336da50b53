"""What one hostile run can cost the host at most: disk, memory and time, from the limits in force.

:func:`host_budget` adds up, for one Docker run under :class:`~leaderboard.execution.sandbox.SandboxLimits`
and one track, every place where a run's behaviour turns into host resources, each with the limit that
bounds it. ``tests/execution/test_host_budget.py`` prints the table and measures a hostile run against it.

Invariants
----------
- Pure: reads the limits and the module constants of the runner and the result checks; nothing is run.
- Every item is bounded by a limit in the code, except where ``bounded`` is False (then the item says which
  setting removes the bound).

Side effects
------------
None.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluators.progress import MAX_LINE_CHARS
from evaluators.tracks import TRACKS
from leaderboard.execution.docker_runner import DRAIN_S, STOP_GRACE_S
from leaderboard.execution.outfs import TOOL_TIMEOUT_S, image_inodes
from leaderboard.execution.results import MAX_DECOMPRESSED_BYTES, MAX_RESULT_BYTES
from leaderboard.execution.sandbox import SandboxLimits, docker_bytes, human_size

__all__ = ["Budget", "Cost", "host_budget"]

ENGINE_LOG_BYTES = 20 * 1024**2
"""The engine's log file of a container (``json-file``, ``max-size=20m``, ``max-file=1``)."""

HARDWARE_PROBE_S = 20.0
"""``nvidia-smi`` is given this long when a run starts (:func:`.sandbox.hardware_info`)."""

TAG_BYTES = 5000
"""A tag value (the failure reason) is cut to this many characters by the store."""

GZIP_RATE = 200 * 1024**2
"""Bytes per second the gzip check decompresses, at least (measured: about 390 MiB/s)."""

TABLE_RATE = 10 * 1024**2
"""Bytes per second of CSV the table check reads, at least (measured: about 12 MiB/s)."""


@dataclass(frozen=True)
class Cost:
    """One way a run turns into host resources.

    Parameters
    ----------
    kind : {"disk", "memory", "time"}
        The resource.
    item : str
        Where it goes.
    amount : float
        Bytes (disk, memory) or seconds (time), at most.
    bound : str
        The limit that bounds it.
    lasting : bool
        True when it stays after the run (stored in MLflow); False when it is released with the run.
    outcome : {"", "FAILED", "FINISHED"}
        Only a run that ends so costs it (the sums take the costlier outcome).
    """

    kind: str
    item: str
    amount: float
    bound: str
    lasting: bool = False
    outcome: str = ""


@dataclass(frozen=True)
class Budget:
    """The worst case of one run: its items and their sums.

    Parameters
    ----------
    costs : tuple of Cost
        Every item.
    bounded : bool
        False when a setting leaves an item unbounded: ``read_only_root=False`` (the container's root
        filesystem is written to the engine's disk without a limit) or no filesystem of its own for ``/out``.
    """

    costs: tuple[Cost, ...]
    bounded: bool

    def total(self, kind: str, *, lasting: bool | None = None) -> float:
        """Return the most the items of ``kind`` add up to (only those with ``lasting``, when given).

        Items of one outcome exclude those of the other: the costlier outcome counts.
        """
        chosen = [c for c in self.costs if c.kind == kind and lasting in (None, c.lasting)]
        common = sum(c.amount for c in chosen if not c.outcome)
        by_outcome = [sum(c.amount for c in chosen if c.outcome == o) for o in ("FAILED", "FINISHED")]
        return common + max(by_outcome)

    def lines(self) -> list[str]:
        """Return the table as text: one line per item, then the sums."""

        def amount(kind: str, value: float) -> str:
            if value == float("inf"):
                return "UNBOUNDED"
            return f"{value:,.0f} s" if kind == "time" else human_size(int(value))

        out = [f"{'resource':<8} {'at most':>11}  {'item':<72} bound"]
        for c in self.costs:
            item = f"{c.outcome}: {c.item}" if c.outcome else c.item
            item += " (stays in MLflow)" if c.lasting else ""
            out.append(f"{c.kind:<8} {amount(c.kind, c.amount):>11}  {item:<72} {c.bound}")
        out += [
            f"{'disk':<8} {amount('disk', self.total('disk', lasting=False)):>11}  TOTAL while the run lasts",
            f"{'disk':<8} {amount('disk', self.total('disk', lasting=True)):>11}  TOTAL kept in MLflow",
            f"{'memory':<8} {amount('memory', self.total('memory')):>11}  TOTAL",
            f"{'time':<8} {amount('time', self.total('time')):>11}  TOTAL",
        ]
        if not self.bounded:
            out.append("NOT BOUNDED: see the items marked UNBOUNDED")
        return out


def host_budget(limits: SandboxLimits, track: str = "amore", *, kernel: bool = True) -> Budget:
    """Return the worst case of one Docker run of ``track`` under ``limits``.

    Parameters
    ----------
    limits : SandboxLimits
        The run's limits.
    track : str
        The track whose declared artifacts a succeeding run may store.
    kernel : bool
        Whether ``/out`` has its own filesystem (:mod:`leaderboard.execution.outfs`). Without it one call
        can write past the cap before a poll sees it, so the disk item is unbounded (``inf``).

    Returns
    -------
    Budget
        Disk (while the run lasts, and what stays in MLflow), host memory (the container's limit and the
        orchestrator's buffers) and wall-clock time (the timeout, the grace periods and the host's checks).
    """
    cls = TRACKS.get(track)
    artifacts = sorted({s.artifact for s in cls.tables} | set(cls.artifacts))
    gz = [a for a in artifacts if a.endswith(".gz")]
    memory = docker_bytes(limits.memory)
    tail = limits.output_cap_bytes
    costs = [
        Cost("disk", "/out filesystem image (sparse, deleted after the run)",
             limits.out_cap_bytes if kernel else float("inf"),
             f"out_cap_bytes={human_size(limits.out_cap_bytes)}, {image_inodes(limits)} inodes"
             if kernel else "none: polling only, one call can fill the disk"),
        Cost("disk", "job folder besides /out (job.json, empty folders)", 64 * 1024 + 3 * 4096,
             "manifest at most 64 KiB"),
        Cost("disk", "engine log file (deleted with the container)", ENGINE_LOG_BYTES,
             "json-file max-size=20m"),
        Cost("disk", "container root filesystem", 0 if limits.read_only_root else float("inf"),
             "read_only_root=True" if limits.read_only_root else "read_only_root=False: no limit"),
        Cost("disk", "reason tag and log_tail.txt", tail + TAG_BYTES, "output_cap_bytes", True, "FAILED"),
        Cost("disk", "result.json as stored (compact)", MAX_RESULT_BYTES, "MAX_RESULT_BYTES", True,
             "FINISHED"),
        Cost("disk", f"declared artifacts ({', '.join(artifacts)})", len(artifacts) * cls.artifact_max_bytes,
             f"{track}.artifact_max_bytes each", True, "FINISHED"),
        Cost("memory", "container (with /tmp tmpfs and /dev/shm, no swap)", memory,
             f"mem_limit=memswap_limit={limits.memory}"),
        Cost("memory", "orchestrator: kept log tails (all, then stderr; 2x cap each while read)",
             4 * tail, "keep_tail(2 * output_cap_bytes)"),
        Cost("memory", "orchestrator: progress follower's unfinished line", MAX_LINE_CHARS + 2,
             "MAX_LINE_BYTES"),
        Cost("memory", "orchestrator: result.json parsed (up to 28 bytes of objects per byte)",
             28 * MAX_RESULT_BYTES, "MAX_RESULT_BYTES; measured 26x on '[{},{},…]'"),
        Cost("time", "hardware probe before the start", HARDWARE_PROBE_S, "nvidia-smi timeout"),
        Cost("time", "mkfs.ext4, mount, umount, umount -l (20 ms in all, typically)", 4 * TOOL_TIMEOUT_S,
             "TOOL_TIMEOUT_S each"),
        Cost("time", "the run itself", limits.timeout_s, "timeout_s"),
        Cost("time", "kill, then wait for the container", STOP_GRACE_S, "STOP_GRACE_S"),
        Cost("time", "drain the live output", DRAIN_S + 1, "DRAIN_S + 1 s join"),
        Cost("time", f"gzip checks ({', '.join(gz)})", len(gz) * MAX_DECOMPRESSED_BYTES / GZIP_RATE,
             f"MAX_DECOMPRESSED_BYTES at {human_size(GZIP_RATE)}/s"),
        Cost("time", f"table checks ({', '.join(s.artifact for s in cls.tables)})",
             sum(_table_bytes(s.artifact, cls.artifact_max_bytes) for s in cls.tables) / TABLE_RATE,
             f"decompressed size at {human_size(TABLE_RATE)}/s"),
    ]  # fmt: skip
    return Budget(tuple(costs), bounded=limits.read_only_root and kernel)


def _table_bytes(artifact: str, max_bytes: int) -> int:
    """Most bytes the table check reads from an artifact: its decompressed cap, or its size cap."""
    return MAX_DECOMPRESSED_BYTES if artifact.endswith(".gz") else max_bytes
