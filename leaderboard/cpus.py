"""How many CPUs this process may use: the one answer every pool sizes itself by.

Side effects: none.
"""

from __future__ import annotations

import os

__all__ = ["usable_cpus"]


def usable_cpus() -> int:
    """Return the CPUs this process may run on (its affinity mask on Linux, else the machine's count).

    A container's CPU quota does not shrink the mask; the jobs' runner sizes their threads itself
    (:mod:`leaderboard.execution.parallel`).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)
