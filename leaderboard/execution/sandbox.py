"""What every runner shares: the job's limits and outcome, the ``Runner`` protocol and output-size helpers.

A *runner* executes one evaluation job (``python -m evaluators run --job … --data … --models … --out …``)
and returns a :class:`RunOutcome` instead of raising, so one failing submission never stops the others.
Two implement :class:`Runner`: :class:`leaderboard.execution.docker_runner.DockerRunner` (the sandbox) and
:class:`leaderboard.execution.inprocess_runner.InProcessRunner` (no sandbox; for machines without Docker).
This module imports neither ``docker`` nor any runner.

Invariants
----------
- ``RunOutcome.reason`` is one printable line (:func:`printable`), at most 500 characters when it is
  taken from a run's stderr (:func:`last_line`).
- Kept output is capped: :func:`keep_tail` never holds more than ``2 * cap`` bytes, whatever it reads.
- :func:`out_usage` never follows links and stops counting after ``max_entries``.
- :func:`out_over_limit` gives the reason only; what stops a write is the kernel, when ``/out`` has a
  filesystem of its own (:mod:`leaderboard.execution.outfs`), whose fullness it reads too.
- Nothing here reads environment variables or talks to a Docker engine.

Side effects
------------
- :func:`hardware_info` reads ``/proc/cpuinfo`` and runs ``nvidia-smi`` when present.
- :func:`check_inputs` creates the models folder when it is missing.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from evaluators.progress import Progress
from leaderboard.text import printable as text_printable

__all__ = [
    "CONTAINER_COMMAND",
    "CONTAINER_ENV",
    "FULL_MARGIN_BYTES",
    "POLL_S",
    "REPO_ROOT",
    "SANDBOX_UID",
    "NoKernelLimitWarning",
    "NoSandboxWarning",
    "OutVolume",
    "ProgressCallback",
    "RunOutcome",
    "Runner",
    "SandboxLimits",
    "THREAD_VARIABLES",
    "check_inputs",
    "decode_tail",
    "docker_bytes",
    "hardware_info",
    "human_size",
    "keep_tail",
    "last_line",
    "mib",
    "out_over_limit",
    "out_usage",
    "printable",
    "thread_env",
]

SANDBOX_UID = 10001
"""uid and gid of the ``chemrobust`` user inside the image."""

CONTAINER_COMMAND = [
    "run", "--job", "/job/job.json", "--data", "/data", "--models", "/models", "--out", "/out",
]  # fmt: skip
"""Arguments given to the image's entrypoint (``python -m evaluators``)."""

CONTAINER_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HOME": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}
"""The fixed environment given to a container on top of the image's own ``ENV``; never the host's."""

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository root holding ``evaluators/``."""

POLL_S = 0.5
"""While a run goes on, its ``/out`` folder is measured and its output followed this often (seconds)."""

FULL_MARGIN_BYTES = 1024**2
"""``/out``'s own filesystem counts as full (the run hit the cap) with less than this much space left."""

ProgressCallback = Callable[[Progress], None]
"""Receives each progress report of a run, in order, while the run goes on."""


class NoSandboxWarning(UserWarning):
    """Submission code is about to run in-process, without the container sandbox."""


class NoKernelLimitWarning(UserWarning):
    """A run's ``/out`` gets no filesystem of its own: only polling limits what it writes there."""


@dataclass(frozen=True)
class OutVolume:
    """The output folder a runner gives a run, and how what the run writes there is limited.

    Parameters
    ----------
    path : pathlib.Path
        The host folder mounted at ``/out``.
    kernel : bool
        True when the folder is a filesystem of its own of ``out_cap_bytes`` (the kernel refuses writes
        past it); False when only polling measures it, or nothing does (in-process runner).
    note : str
        One line saying which, recorded with the run (tag ``out_limit``).
    image : pathlib.Path or None
        The filesystem image file behind ``path`` while it is mounted.
    """

    path: Path
    kernel: bool
    note: str
    image: Path | None = None


class SandboxLimits(BaseModel):
    """Resource and isolation limits of one run.

    Parameters
    ----------
    memory : str
        Memory limit in Docker notation (``"6g"``, ``"512m"``); swap is not allowed on top.
    pids : int
        Maximum number of processes and threads.
    cpus : float
        CPU quota in cores.
    timeout_s : float
        Wall-clock limit in seconds; the container is killed after it.
    tmpfs_size : str
        Size of the tmpfs mounted at ``/tmp`` (also ``HOME``).
    read_only_root : bool
        Mount the root filesystem read-only. Switch off only on GPU hosts whose container hooks must write.
    output_cap_bytes : int
        At most this many bytes of the container's stdout+stderr are kept (the end of it).
    out_cap_bytes : int
        Size of ``/out``'s own filesystem (the kernel refuses writes past it) and at most this many bytes
        (apparent size, sparse files count in full) measured under ``/out``; the run is killed beyond it.
    out_max_files : int
        At most this many files and folders may be created under ``/out`` (its filesystem has about as many
        inodes); the run is killed beyond it.
    threads : int, optional
        Threads the model's libraries start (``OMP_NUM_THREADS`` and its kin, :func:`thread_env`); ``None``:
        the CPU quota rounded down. A container sees every core of the host, and torch would start one
        thread per core however small its quota; the local executor lowers it when it runs jobs side by side.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    memory: str = Field(default="6g", pattern=r"^[1-9][0-9]*[bkmg]?$")
    pids: int = Field(default=512, ge=16)
    cpus: float = Field(default=2.0, gt=0)
    timeout_s: float = Field(default=3600, gt=0)
    tmpfs_size: str = Field(default="2g", pattern=r"^[1-9][0-9]*[bkmg]?$")
    read_only_root: bool = True
    output_cap_bytes: int = Field(default=256 * 1024, ge=1024)
    out_cap_bytes: int = Field(default=4 * 1024**3, ge=1024**2)
    out_max_files: int = Field(default=1000, ge=1)
    threads: int | None = Field(default=None, ge=1)

    def thread_count(self) -> int:
        """Return the threads a run may start: :attr:`threads`, else the CPU quota rounded down (>= 1)."""
        return self.threads if self.threads is not None else max(1, int(self.cpus))


def docker_bytes(docker_size: str) -> int:
    """Return the bytes of a Docker size (``"6g"``, ``"512m"``, ``"1024"``; :class:`SandboxLimits`'s).

    Examples
    --------
    >>> docker_bytes("6g"), docker_bytes("512m"), docker_bytes("2048")
    (6442450944, 536870912, 2048)
    """
    units = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
    unit = docker_size[-1].lower()
    return int(docker_size[:-1]) * units[unit] if unit in units else int(docker_size)


#: The variables that size the thread pools of torch (OpenMP), MKL and OpenBLAS.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def thread_env(limits: SandboxLimits) -> dict[str, str]:
    """Return the thread-count variables of a run under ``limits`` (added to :data:`CONTAINER_ENV`).

    Examples
    --------
    >>> thread_env(SandboxLimits(cpus=2.0))["OMP_NUM_THREADS"]
    '2'
    >>> thread_env(SandboxLimits(cpus=2.0, threads=1))["MKL_NUM_THREADS"]
    '1'
    """
    count = str(limits.thread_count())
    return {name: count for name in THREAD_VARIABLES}


class RunOutcome(BaseModel):
    """What came out of one run.

    Parameters
    ----------
    status : {"succeeded", "failed", "timeout"}
        ``succeeded`` means exit code 0; the results are then in ``out_dir``.
    exit_code : int or None
        The process exit code; None when it never started or was killed on timeout.
    reason : str
        One line explaining the status.
    log_tail : str
        The end of stdout+stderr, at most ``output_cap_bytes``, progress lines left out (a summary line
        says how many).
    wall_s : float
        Wall-clock seconds from start to end.
    runner : {"docker", "in-process", "endpoint"}
        Which runner ran it; ``in-process`` means no sandbox; ``endpoint`` means no submission code at all
        (the host called an API, :mod:`leaderboard.execution.endpoint_runner`).
    gpu : bool
        Whether a GPU was requested.
    hardware : dict of str to str
        Host hardware (:func:`hardware_info`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["succeeded", "failed", "timeout"]
    exit_code: int | None
    reason: str
    log_tail: str
    wall_s: float
    runner: Literal["docker", "in-process", "endpoint"]
    gpu: bool
    hardware: dict[str, str]


@runtime_checkable
class Runner(Protocol):
    """How the orchestrator runs one job; implemented by ``DockerRunner`` and ``InProcessRunner``.

    ``EndpointRunner`` (:mod:`leaderboard.execution.endpoint_runner`) implements it too, for API
    submissions: it runs the track on the host and calls the API, no submission code.

    Attributes
    ----------
    name : str
        ``"docker"``, ``"in-process"`` or ``"endpoint"`` (also ``RunOutcome.runner``).
    side_by_side : bool, optional
        Present and true when runs are isolated enough to overlap (``DockerRunner``): the local executor's
        ``--jobs`` then runs several at once (:mod:`leaderboard.execution.parallel`).
    """

    name: str

    def run(
        self,
        image: str,
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
        """Run ``python -m evaluators run …`` once and wait for it, at most ``limits.timeout_s``.

        Parameters
        ----------
        image : str
            The submission's image (ignored by the in-process runner).
        job_dir, data_dir, models_dir, out_dir : pathlib.Path
            Host folders: ``job.json``, the data set, prefetched weights, the results folder.
        submission_dir : pathlib.Path, optional
            The submission folder (the Docker runner uses the copy baked into the image instead).
        limits : SandboxLimits, optional
            Resource limits; ``SandboxLimits()`` by default.
        gpu : bool, optional
            Request GPUs.
        on_progress : callable, optional
            Called with each :class:`evaluators.progress.Progress` the job prints, in order, while the job
            runs (possibly from another thread).

        Returns
        -------
        RunOutcome
            The outcome; engine and process failures are outcomes, not exceptions.
        """
        ...

    def remove_orphans(self) -> int:
        """Remove what killed earlier orchestrators left running; return how many were removed."""
        ...

    def output_volume(self, out_dir: Path, limits: SandboxLimits) -> AbstractContextManager[OutVolume]:
        """Prepare ``out_dir`` for :meth:`run`'s ``/out``; leaving the context releases it.

        Parameters
        ----------
        out_dir : pathlib.Path
            The (empty) host folder that will be mounted at ``/out``.
        limits : SandboxLimits
            Holds ``out_cap_bytes`` and ``out_max_files``.

        Returns
        -------
        contextlib.AbstractContextManager of OutVolume
            Entered before the run; the outputs must be read (and stored) inside it, since leaving it
            removes what the run wrote when ``/out`` had a filesystem of its own.
        """
        ...


# --------------------------------------------------------------------------------------------------------
# Host facts


def hardware_info() -> dict[str, str]:
    """Describe the host's hardware for provenance.

    Returns
    -------
    dict of str to str
        ``cpu_model`` (from ``/proc/cpuinfo``), ``cpu_count``, ``gpu_model`` and ``gpu_driver`` (from
        ``nvidia-smi``; ``"none"`` without a GPU), ``platform``.
    """
    cpu_model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info = {
        "cpu_model": cpu_model,
        "cpu_count": str(os.cpu_count() or 0),
        "gpu_model": "none",
        "gpu_driver": "none",
        "platform": sys.platform,
    }
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run(
                [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            ).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        rows = [[c.strip() for c in line.split(",")] for line in out.splitlines() if line.strip()]
        if rows and len(rows[0]) >= 2:
            info["gpu_model"] = "; ".join(r[0] for r in rows)
            info["gpu_driver"] = rows[0][1]
    return info


# --------------------------------------------------------------------------------------------------------
# Output of untrusted runs


def printable(text: str) -> str:
    """Return ``text`` with whitespace runs collapsed to one space and other control characters escaped.

    Parameters
    ----------
    text : str
        Text that came out of a sandboxed run (stderr, a build log).

    Returns
    -------
    str
        One line that is safe to print in a terminal: no escape sequences, bells, carriage returns or
        bidirectional overrides (every character that ``str.isprintable`` rejects becomes its escape).
    """
    return text_printable(text)  # the one helper (leaderboard.text), under the name this module exports


def last_line(text: str) -> str:
    """Return the last non-empty line of ``text``, made :func:`printable` and cut to 500 characters.

    Parameters
    ----------
    text : str
        A run's stderr (or an error message).

    Returns
    -------
    str
        The line, or ``""`` when there is none.
    """
    for line in reversed(text.splitlines()):
        if line.strip():
            return printable(line)[:500]
    return ""


def human_size(n: int) -> str:
    """Format a byte count in the largest binary unit it reaches, e.g. ``human_size(4 * 1024**3) == "4 GiB"``.

    Parameters
    ----------
    n : int
        Bytes.

    Returns
    -------
    str
        ``"<n> bytes"`` below 1 KiB, else ``"<value> KiB"``, ``MiB`` or ``GiB`` (shortest ``g`` notation).
    """
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


def mib(n: int) -> str:
    """Format a byte count in MiB, e.g. ``mib(4 * 1024**3) == "4096 MiB"``.

    Parameters
    ----------
    n : int
        Bytes.

    Returns
    -------
    str
        ``"<n / 2**20> MiB"`` in the shortest ``g`` notation.
    """
    return f"{n / 1024**2:g} MiB"


def out_usage(out_dir: Path, max_entries: int) -> tuple[int, int]:
    """Measure a run's output folder without following links.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder mounted at ``/out``.
    max_entries : int
        Stop counting after this many entries (a folder with millions of files is not walked to its end).

    Returns
    -------
    tuple of int
        ``(bytes, entries)``: the sum over files of ``max(st_size, st_blocks * 512)`` (a sparse file counts
        at its apparent size) and the number of files, folders and links seen (at most ``max_entries + 1``).
    """
    total = entries = 0
    stack = [Path(out_dir)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        return total, entries
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(Path(entry.path))
                    else:
                        total += max(st.st_size, st.st_blocks * 512)
        except OSError:
            continue
    return total, entries


def out_over_limit(out_dir: Path, limits: SandboxLimits) -> str | None:
    """Tell whether a run's output folder is over the output cap, or its own filesystem is full.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder mounted at ``/out``.
    limits : SandboxLimits
        Holds ``out_cap_bytes`` and ``out_max_files``.

    Returns
    -------
    str or None
        The one-line reason (``output limit exceeded: … (its limit: 4 GiB in 1000 files)``) when more than
        ``out_cap_bytes`` (apparent size) or ``out_max_files`` entries are under ``out_dir``, or when
        ``out_dir`` is a mount point whose filesystem has less than :data:`FULL_MARGIN_BYTES` (at most a
        sixteenth of the cap) or no inode left; else None.
    """
    size, entries = out_usage(out_dir, limits.out_max_files)
    cap = human_size(limits.out_cap_bytes)
    what = None
    if size > limits.out_cap_bytes:
        what = f"more than {cap} written to /out"
    elif entries > limits.out_max_files:
        what = f"more than {limits.out_max_files} files written to /out"
    elif os.path.ismount(out_dir):
        try:
            fs = os.statvfs(out_dir)
        except OSError:
            fs = None
        margin = min(FULL_MARGIN_BYTES, limits.out_cap_bytes // 16)
        if fs is not None and fs.f_favail == 0:
            what = "/out has no room for another file"
        elif fs is not None and fs.f_bavail * fs.f_frsize < margin:
            what = "/out is full"
    if what is None:
        return None
    return f"output limit exceeded: {what} (its limit: {cap} in {limits.out_max_files} files)"


def keep_tail(chunks: Iterable[bytes], cap: int) -> bytes:
    """Concatenate ``chunks`` keeping only the last ``cap`` bytes (never holding more than ``2 * cap``).

    Parameters
    ----------
    chunks : iterable of bytes
        Output as it comes (e.g. a log stream).
    cap : int
        Bytes to keep.

    Returns
    -------
    bytes
        The last ``cap`` bytes.
    """
    buf = bytearray()
    for chunk in chunks:
        buf += chunk
        if len(buf) > 2 * cap:
            del buf[:-cap]
    return bytes(buf[-cap:])


def decode_tail(data: bytes, cap: int) -> str:
    """Decode a kept tail, marking that earlier output was cut when ``data`` filled the cap.

    Parameters
    ----------
    data : bytes
        The tail (:func:`keep_tail`).
    cap : int
        The cap it was kept with.

    Returns
    -------
    str
        UTF-8 text (invalid bytes replaced), preceded by ``[… earlier output cut …]`` when cut.
    """
    text = data.decode("utf-8", errors="replace")
    return text if len(data) < cap else "[… earlier output cut …]\n" + text


def check_inputs(job_dir: Path, data_dir: Path, models_dir: Path) -> None:
    """Check a job's input folders before a run; create ``models_dir`` when missing.

    Parameters
    ----------
    job_dir, data_dir, models_dir : pathlib.Path
        The folders mounted at ``/job``, ``/data`` and ``/models``.

    Raises
    ------
    FileNotFoundError
        If ``job_dir/job.json`` or ``data_dir`` is missing.
    """
    if not (job_dir / "job.json").is_file():
        raise FileNotFoundError(f"{job_dir / 'job.json'}: job file missing; write the job description first")
    if not data_dir.is_dir():
        raise FileNotFoundError(f"{data_dir}: data folder missing")
    models_dir.mkdir(parents=True, exist_ok=True)
