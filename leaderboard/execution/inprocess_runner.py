"""Run one evaluation job with the host's Python, WITHOUT a sandbox: the fallback for hosts without Docker.

:class:`InProcessRunner` (a :class:`leaderboard.execution.sandbox.Runner`) runs the same command as the
Docker runner, ``python -m evaluators run --job … --data … --models … --out …``, as a subprocess of the
host Python with the repository's ``evaluators`` package. Nothing is isolated: every run warns loudly
(:class:`leaderboard.execution.sandbox.NoSandboxWarning`) and its outcome says ``runner="in-process"``.

Invariants
----------
- The subprocess gets an explicit environment (``PATH``, a temporary ``HOME``, ``PYTHONPATH`` and
  :data:`leaderboard.execution.sandbox.CONTAINER_ENV`), never the rest of the host's.
- It runs in its own session; on timeout the whole process group is killed.
- Kept output is capped (``limits.output_cap_bytes`` of stdout and of stderr, read from the end of the
  files they go to); progress lines are left out of the tail (one summary line instead).
- ``/out`` has no limit at all: no filesystem of its own, no polling (:meth:`InProcessRunner.output_volume`
  says so, and the run records it). Like everything else here, it is not sandboxed.
- With ``on_progress``, stdout is read as it grows, every :data:`POLL_S` seconds, at most
  :data:`FOLLOW_BACKLOG_BYTES` per look (a flood is skipped over, not read): following costs bounded time
  and memory whatever the job prints.

Side effects
------------
- Runs a subprocess of the host Python in ``repo_root``; creates ``out_dir`` and ``models_dir`` if missing.
- Writes the run's stdout and stderr to files in a temporary folder (its ``HOME``), removed afterwards.
- Emits :class:`NoSandboxWarning` on every run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import BinaryIO

from leaderboard.execution.progress import ProgressFollower, compact_progress_lines
from leaderboard.execution.sandbox import (
    CONTAINER_ENV,
    POLL_S,
    REPO_ROOT,
    NoSandboxWarning,
    OutVolume,
    ProgressCallback,
    RunOutcome,
    SandboxLimits,
    check_inputs,
    decode_tail,
    hardware_info,
    last_line,
)

__all__ = ["FOLLOW_BACKLOG_BYTES", "InProcessRunner", "read_tail"]

FOLLOW_BACKLOG_BYTES = 1024**2
"""When following stdout, at most this many unread bytes are looked at; anything before them is skipped."""

_CHUNK = 64 * 1024


def read_tail(path: Path, cap: int) -> bytes:
    """Return the last ``cap`` bytes of a file (without reading the rest).

    Parameters
    ----------
    path : pathlib.Path
        The file.
    cap : int
        Bytes wanted.

    Returns
    -------
    bytes
        At most ``cap`` bytes from the end of the file.
    """
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - cap))
        return f.read()


def _follow(reader: BinaryIO, follower: ProgressFollower) -> None:
    """Feed what was appended to the file since the last look (at most the newest backlog) to ``follower``."""
    end = os.fstat(reader.fileno()).st_size
    if end - reader.tell() > FOLLOW_BACKLOG_BYTES:
        reader.seek(end - FOLLOW_BACKLOG_BYTES)
        follower.resync()
    remaining = end - reader.tell()
    while remaining > 0:
        chunk = reader.read(min(_CHUNK, remaining))
        if not chunk:
            break
        remaining -= len(chunk)
        follower.feed(chunk)


class InProcessRunner:
    """Run jobs with the host's Python and the repository's ``evaluators``: **no sandbox**.

    For machines without a Docker engine only. Each run emits :class:`NoSandboxWarning`, and the outcome
    says ``runner="in-process"`` so results can be reported as such.

    Parameters
    ----------
    repo_root : pathlib.Path, optional
        The folder holding ``evaluators/``; it becomes the working directory and ``PYTHONPATH``.
    python : str, optional
        Interpreter to use; defaults to ``sys.executable``.
    search_path : str, optional
        ``PATH`` given to the subprocess; by default the host's ``PATH`` when the runner is created.
    """

    name = "in-process"

    def __init__(
        self, repo_root: Path = REPO_ROOT, python: str | None = None, search_path: str | None = None
    ) -> None:
        self.repo_root = Path(repo_root)
        self.python = python or sys.executable
        self.search_path = search_path if search_path is not None else os.environ.get("PATH", os.defpath)

    def remove_orphans(self) -> int:
        """Return 0: a run's processes are killed before :meth:`run` returns, nothing outlives it.

        Returns
        -------
        int
            Always 0.
        """
        return 0

    def output_volume(self, out_dir: Path, limits: SandboxLimits) -> AbstractContextManager[OutVolume]:
        """Create ``out_dir`` and return it as is: no filesystem of its own, no limit (there is no sandbox).

        Parameters
        ----------
        out_dir : pathlib.Path
            The run's output folder.
        limits : SandboxLimits
            Unused: nothing limits what an in-process run writes.

        Returns
        -------
        contextlib.AbstractContextManager of OutVolume
            A volume with ``kernel=False`` whose note says that ``/out`` is not limited.
        """
        del limits
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        note = "NONE: the in-process runner has no sandbox, so nothing limits what a run writes to its output"
        return nullcontext(OutVolume(Path(out_dir), False, note))

    def run(
        self,
        image: str | None,
        *,
        job_dir: Path,
        data_dir: Path,
        models_dir: Path,
        out_dir: Path,
        submission_dir: Path | None = None,
        limits: SandboxLimits | None = None,
        gpu: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> RunOutcome:
        """Run ``python -m evaluators run …`` as a subprocess of the host Python.

        Parameters
        ----------
        image : str or None
            Ignored (kept for the shared signature).
        job_dir, data_dir, models_dir, out_dir : pathlib.Path
            As for ``DockerRunner.run``, passed as host paths.
        submission_dir : pathlib.Path, optional
            The submission folder, passed as ``--submission`` (inside an image it is ``/submission``).
        limits : SandboxLimits, optional
            Only ``timeout_s`` and ``output_cap_bytes`` apply; nothing else is enforced.
        gpu : bool, optional
            Recorded in the outcome; the subprocess sees the host's GPUs either way.
        on_progress : callable, optional
            Receives each progress line of the job's stdout (:mod:`evaluators.progress`), in order, while
            the job runs (from this thread, every :data:`POLL_S` seconds).

        Returns
        -------
        RunOutcome
            As for ``DockerRunner.run``, with ``runner="in-process"``.

        Raises
        ------
        FileNotFoundError
            If ``job_dir/job.json`` or ``data_dir`` is missing.
        """
        del image
        limits = limits or SandboxLimits()
        job_dir, data_dir, models_dir, out_dir = (Path(p) for p in (job_dir, data_dir, models_dir, out_dir))
        check_inputs(job_dir, data_dir, models_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        warnings.warn(
            "running submission code IN-PROCESS with the host's Python: NO sandbox (no network isolation, "
            "no read-only filesystem, no memory limit). Use a Docker engine for untrusted submissions.",
            NoSandboxWarning,
            stacklevel=2,
        )
        cmd = [
            self.python, "-m", "evaluators", "run",
            "--job", str(job_dir.resolve() / "job.json"),
            "--data", str(data_dir.resolve()),
            "--models", str(models_dir.resolve()),
            "--out", str(out_dir.resolve()),
        ]  # fmt: skip
        if submission_dir is not None:
            cmd += ["--submission", str(Path(submission_dir).resolve())]
        hardware = hardware_info()
        follower = ProgressFollower(on_progress) if on_progress is not None else None
        with tempfile.TemporaryDirectory(prefix="chemrobust-inproc-") as home:
            env = {
                "PATH": self.search_path,
                "HOME": home,
                "TMPDIR": home,
                "PYTHONPATH": str(self.repo_root.resolve()),
                **{k: v for k, v in CONTAINER_ENV.items() if k != "HOME"},
                "LANG": "C.UTF-8",
            }
            out_path, err_path = Path(home) / "stdout.log", Path(home) / "stderr.log"
            start = time.monotonic()
            timed_out = False
            exit_code: int | None = None
            with out_path.open("wb") as out_f, err_path.open("wb") as err_f, out_path.open("rb") as reader:
                proc = subprocess.Popen(  # noqa: S603 - the fixed evaluators command, no shell
                    cmd, cwd=self.repo_root, env=env, stdout=out_f, stderr=err_f, start_new_session=True
                )
                deadline = start + limits.timeout_s
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        timed_out = True
                        try:
                            os.killpg(proc.pid, signal.SIGKILL)
                        except ProcessLookupError:  # the group ended in the meantime
                            pass
                        proc.wait()
                        exit_code = None
                        break
                    try:
                        exit_code = proc.wait(timeout=min(POLL_S, remaining))
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if follower is not None:
                        _follow(reader, follower)
                if follower is not None:
                    _follow(reader, follower)
            wall_s = time.monotonic() - start
            cap = limits.output_cap_bytes
            stdout_b = read_tail(out_path, cap)
            stderr_b = read_tail(err_path, cap)
        log_tail = compact_progress_lines(decode_tail(stdout_b, cap))
        err_text = stderr_b.decode("utf-8", errors="replace")
        if err_text.strip():
            log_tail = f"{log_tail}\n--- stderr ---\n{decode_tail(stderr_b, cap)}"
        if timed_out:
            status, reason = "timeout", f"wall-clock timeout after {limits.timeout_s:g} s"
        elif exit_code == 0:
            status, reason = "succeeded", "exit code 0"
        else:
            status = "failed"
            reason = last_line(err_text) or f"exit code {exit_code} (no output on stderr)"
        return RunOutcome(
            status=status,
            exit_code=exit_code,
            reason=reason,
            log_tail=log_tail,
            wall_s=wall_s,
            runner="in-process",
            gpu=gpu,
            hardware=hardware,
        )
