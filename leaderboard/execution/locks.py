"""The state folder's locks: one evaluation per state folder, one writer per result key or shared build.

``flock`` locks belong to an open file, not to a process: two threads that each open the file exclude each
other as two processes do (the local executor's jobs side by side, Slurm's jobs on one state folder).
Side effects: creates the lock files; ``evaluate.lock`` holds the holder's pid.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["EvaluationLockedError", "evaluation_lock", "file_lock"]


class EvaluationLockedError(RuntimeError):
    """Another evaluation holds the state folder's lock."""


@contextmanager
def evaluation_lock(state_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the state folder so two evaluations never write the store at once."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / "evaluate.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EvaluationLockedError(
                f"another evaluation is running on {state_dir} (lock {state_dir / 'evaluate.lock'}); "
                "wait for it to finish, then run again"
            ) from None
        handle.write(str(os.getpid()))
        handle.flush()
        yield


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created), waiting for it: one writer at a time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
