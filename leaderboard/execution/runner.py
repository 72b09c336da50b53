"""Run one evaluation job: the only host module that runs submission code, and the only one importing docker.

Two runners share one signature, ``run(image, *, job_dir, data_dir, models_dir, out_dir, limits, gpu)``, and
return a :class:`RunOutcome` instead of raising, so one failing submission never stops the others:

- :class:`DockerRunner` (the default): ``python -m evaluators run --job /job/job.json --data /data --models
  /models --out /out`` in the submission's image, with no network, a read-only root filesystem plus a tmpfs
  ``/tmp``, uid/gid 10001, all capabilities dropped, ``no-new-privileges``, memory/pids/CPU limits, an
  explicit environment (never the host's) and a wall-clock timeout after which the container is killed.
  ``/job``, ``/data`` and ``/models`` are mounted read-only, ``/out`` read-write.
- :class:`InProcessRunner` (fallback for machines without a Docker engine): the same command with the host's
  Python and the repository's ``evaluators``, **without any sandbox**; every run warns loudly and its
  outcome says ``runner="in-process"``.

Invariants
----------
- A container is always removed (``remove(force=True)`` in ``finally``), whatever happened.
- ``RunOutcome.reason`` is one line: the last non-empty stderr line on failure, ``out of memory (limit …)``
  when the kernel killed it for memory, ``wall-clock timeout after N s`` on timeout.
- Captured logs are capped (:attr:`SandboxLimits.output_cap_bytes`); host memory use does not grow with
  a submission's output.
- What a run writes to ``/out`` is capped (:attr:`SandboxLimits.out_cap_bytes`,
  :attr:`SandboxLimits.out_max_files`): the folder is measured every :data:`POLL_S` seconds while the
  container runs and once after it ends; a run over the cap is killed and fails with ``output limit
  exceeded: …``, so a submission cannot fill the disk that holds the result store.
- Reasons are sanitised: control characters (terminal escapes, bells, bidi overrides) become ``?``.
- Containers carry the label ``org.chemrobust.owner`` (the evaluation's state folder); containers left
  running by an orchestrator that was killed are removed by :meth:`DockerRunner.remove_orphans`.

Side effects
------------
- Creates, starts, kills and removes containers through the injected ``docker.DockerClient``.
- Creates ``out_dir`` (and ``models_dir`` if missing) and makes ``out_dir`` writable by uid 10001 (``chown``
  when running as root, else mode 0777).
- ``InProcessRunner`` runs a subprocess of the host Python and emits :class:`NoSandboxWarning`.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import docker
import docker.errors
import docker.types
import requests.exceptions
from docker.errors import DockerException, ImageNotFound
from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CONTAINER_COMMAND",
    "CONTAINER_ENV",
    "SANDBOX_UID",
    "DockerException",
    "DockerRunner",
    "ImageNotFound",
    "InProcessRunner",
    "NoSandboxWarning",
    "RunOutcome",
    "SandboxLimits",
    "docker_client_or_none",
    "gpu_available",
    "hardware_info",
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
"""The complete environment given to a container on top of the image's own ``ENV``; never the host's."""

REPO_ROOT = Path(__file__).resolve().parents[2]

POLL_S = 0.5
"""While a container runs, its ``/out`` folder is measured this often (seconds)."""

OWNER_LABEL = "org.chemrobust.owner"
"""Container label naming the evaluation (state folder) that started the container."""

_STOP_GRACE_S = 10


class NoSandboxWarning(UserWarning):
    """Submission code is about to run in-process, without the container sandbox."""


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
        At most this many bytes (apparent size, sparse files count in full) may be written under ``/out``;
        the run is killed beyond it.
    out_max_files : int
        At most this many files and folders may be created under ``/out``; the run is killed beyond it.
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
        The end of stdout+stderr, at most ``output_cap_bytes``.
    wall_s : float
        Wall-clock seconds from start to end.
    runner : {"docker", "in-process"}
        Which runner ran it; ``in-process`` means no sandbox.
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
    runner: Literal["docker", "in-process"]
    gpu: bool
    hardware: dict[str, str]


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


def docker_client_or_none() -> docker.DockerClient | None:
    """Connect to the local Docker engine.

    Returns
    -------
    docker.DockerClient or None
        A client whose ``ping`` answered, or None when no engine is reachable.
    """
    try:
        client = docker.from_env()
        client.ping()
    except (DockerException, requests.exceptions.RequestException):
        return None
    return client


def gpu_available(client: docker.DockerClient) -> bool:
    """Tell whether the engine can give containers a GPU.

    Parameters
    ----------
    client : docker.DockerClient
        Injected Docker client.

    Returns
    -------
    bool
        True when the engine has an ``nvidia`` runtime (NVIDIA Container Toolkit).
    """
    try:
        runtimes = client.info().get("Runtimes") or {}
    except (DockerException, requests.exceptions.RequestException):
        return False
    return "nvidia" in runtimes


# --------------------------------------------------------------------------------------------------------
# Shared helpers


def printable(text: str) -> str:
    """Return ``text`` with whitespace runs collapsed to one space and other control characters as ``?``.

    Parameters
    ----------
    text : str
        Text that came out of a sandboxed run (stderr, a build log).

    Returns
    -------
    str
        One line that is safe to print in a terminal: no escape sequences, bells, carriage returns or
        bidirectional overrides (every character that ``str.isprintable`` rejects becomes ``?``).
    """
    return "".join(ch if ch.isprintable() else "?" for ch in " ".join(text.split()))


def _last_line(text: str) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            return printable(line)[:500]
    return ""


def _mib(n: int) -> str:
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


def _out_over_limit(out_dir: Path, limits: SandboxLimits) -> str | None:
    """Return the one-line reason when ``out_dir`` is over the output cap, else None."""
    size, entries = out_usage(out_dir, limits.out_max_files)
    if size > limits.out_cap_bytes or entries > limits.out_max_files:
        return (
            f"output limit exceeded: more than {_mib(limits.out_cap_bytes)} or {limits.out_max_files} "
            "files written to /out"
        )
    return None


def _keep_tail(chunks: Iterable[bytes], cap: int) -> bytes:
    """Concatenate ``chunks`` keeping only the last ``cap`` bytes."""
    buf = bytearray()
    for chunk in chunks:
        buf += chunk
        if len(buf) > 2 * cap:
            del buf[:-cap]
    return bytes(buf[-cap:])


def _decode_tail(data: bytes, cap: int) -> str:
    text = data.decode("utf-8", errors="replace")
    return text if len(data) < cap else "[… earlier output cut …]\n" + text


def _make_writable_by_sandbox(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(out_dir, SANDBOX_UID, SANDBOX_UID)
        os.chmod(out_dir, 0o755)
    else:
        os.chmod(out_dir, 0o777)


def _check_inputs(job_dir: Path, data_dir: Path, models_dir: Path) -> None:
    if not (job_dir / "job.json").is_file():
        raise FileNotFoundError(f"{job_dir / 'job.json'}: job file missing; write the job description first")
    if not data_dir.is_dir():
        raise FileNotFoundError(f"{data_dir}: data folder missing")
    models_dir.mkdir(parents=True, exist_ok=True)


# --------------------------------------------------------------------------------------------------------
# Docker


class DockerRunner:
    """Run jobs in the submission's image, sandboxed.

    Parameters
    ----------
    client : docker.DockerClient
        Injected Docker client (see :func:`docker_client_or_none`).
    owner : str, optional
        Value of the :data:`OWNER_LABEL` label on every container this runner creates (the evaluation's
        state folder), so that :meth:`remove_orphans` can find containers a killed orchestrator left behind.
    """

    def __init__(self, client: docker.DockerClient, owner: str = "") -> None:
        self.client = client
        self.owner = owner

    def _owner_label(self) -> dict[str, str]:
        return {OWNER_LABEL: self.owner} if self.owner else {}

    def remove_orphans(self) -> int:
        """Remove every container labelled with this runner's ``owner`` (none when ``owner`` is empty).

        Call it only while holding the evaluation lock of that state folder: then no live orchestrator
        owns such a container, and any that exists was left running by one that was killed.

        Returns
        -------
        int
            Number of containers removed.
        """
        if not self.owner:
            return 0
        removed = 0
        try:
            orphans = self.client.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={self.owner}"})
        except (DockerException, requests.exceptions.RequestException):
            return 0
        for container in orphans:
            try:
                container.remove(force=True)
                removed += 1
            except DockerException:
                continue
        return removed

    def create_kwargs(
        self,
        *,
        job_dir: Path,
        data_dir: Path,
        models_dir: Path,
        out_dir: Path,
        limits: SandboxLimits,
        gpu: bool,
    ) -> dict[str, object]:
        """Return the keyword arguments given to ``client.containers.create`` (the sandbox, in one place).

        Parameters
        ----------
        job_dir, data_dir, models_dir, out_dir : pathlib.Path
            Host folders mounted at ``/job``, ``/data``, ``/models`` (read-only) and ``/out`` (read-write).
        limits : SandboxLimits
            Resource limits.
        gpu : bool
            Request all GPUs (``--gpus all``).

        Returns
        -------
        dict
            Keyword arguments for ``containers.create`` (without the image).
        """

        def bind(target: str, source: Path, read_only: bool) -> docker.types.Mount:
            return docker.types.Mount(target, str(source.resolve()), type="bind", read_only=read_only)

        kwargs: dict[str, object] = {
            "command": list(CONTAINER_COMMAND),
            "network_disabled": True,
            "network_mode": "none",
            "read_only": limits.read_only_root,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={limits.tmpfs_size},mode=1777"},
            "user": f"{SANDBOX_UID}:{SANDBOX_UID}",
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "mem_limit": limits.memory,
            "memswap_limit": limits.memory,
            "pids_limit": limits.pids,
            "nano_cpus": int(limits.cpus * 1e9),
            "mounts": [
                bind("/job", job_dir, True),
                bind("/data", data_dir, True),
                bind("/models", models_dir, True),
                bind("/out", out_dir, False),
            ],
            "environment": dict(CONTAINER_ENV),
            "working_dir": "/tmp",
            "log_config": docker.types.LogConfig(
                type="json-file", config={"max-size": "20m", "max-file": "1"}
            ),
            "labels": {"org.chemrobust.runner": "docker", **self._owner_label()},
        }
        if gpu:
            kwargs["device_requests"] = [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
        return kwargs

    def run(
        self,
        image: str,
        *,
        job_dir: Path,
        data_dir: Path,
        models_dir: Path,
        out_dir: Path,
        limits: SandboxLimits | None = None,
        gpu: bool = False,
        submission_dir: Path | None = None,
    ) -> RunOutcome:
        """Run ``python -m evaluators run …`` in ``image`` and wait for it, at most ``limits.timeout_s``.

        Parameters
        ----------
        image : str
            Image tag or id (from :func:`leaderboard.execution.images.ensure_image`); it must exist
            locally (nothing
            is pulled).
        job_dir : pathlib.Path
            Folder holding ``job.json``; mounted read-only at ``/job``.
        data_dir : pathlib.Path
            Dataset files; mounted read-only at ``/data``.
        models_dir : pathlib.Path
            Prefetched weights (may be empty; created if missing); mounted read-only at ``/models``.
        out_dir : pathlib.Path
            Results folder (created; should be empty); mounted read-write at ``/out``.
        limits : SandboxLimits, optional
            Resource limits; defaults to ``SandboxLimits()``.
        gpu : bool, optional
            Give the container all GPUs.
        submission_dir : pathlib.Path, optional
            Ignored: the submission is baked into the image at ``/submission``. Accepted so that both
            runners share one signature.

        Returns
        -------
        RunOutcome
            Status, exit code, one-line reason, log tail, wall time. Engine errors become a ``failed``
            outcome with the error as reason.

        Raises
        ------
        FileNotFoundError
            If ``job_dir/job.json`` or ``data_dir`` is missing.
        """
        del submission_dir
        limits = limits or SandboxLimits()
        job_dir, data_dir, models_dir, out_dir = (Path(p) for p in (job_dir, data_dir, models_dir, out_dir))
        _check_inputs(job_dir, data_dir, models_dir)
        _make_writable_by_sandbox(out_dir)
        kwargs = self.create_kwargs(
            job_dir=job_dir, data_dir=data_dir, models_dir=models_dir, out_dir=out_dir, limits=limits, gpu=gpu
        )
        hardware = hardware_info()
        start = time.monotonic()
        container = None
        timed_out = False
        exit_code: int | None = None
        oom = False
        over_limit: str | None = None
        logs = stderr = b""
        try:
            container = self.client.containers.create(image, **kwargs)
            container.start()
            deadline = start + limits.timeout_s
            while True:
                slice_s = min(POLL_S, deadline - time.monotonic())
                if slice_s <= 0:
                    timed_out = True
                    break
                asked = time.monotonic()
                try:
                    exit_code = int(container.wait(timeout=slice_s)["StatusCode"])
                    break
                except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                    # docker-py reports the read timeout of `wait` as either; an early ConnectionError is
                    # an engine problem, not the end of a slice.
                    if time.monotonic() - asked < 0.9 * slice_s:
                        raise
                over_limit = _out_over_limit(out_dir, limits)
                if over_limit:
                    break
            if timed_out or over_limit:
                try:
                    container.kill()
                except docker.errors.APIError:  # it ended on its own in the meantime
                    pass
                container.wait(timeout=_STOP_GRACE_S)
            wall_s = time.monotonic() - start
            over_limit = over_limit or _out_over_limit(out_dir, limits)
            container.reload()
            oom = bool(container.attrs.get("State", {}).get("OOMKilled", False))
            logs = self._logs(container, limits, stdout=True, stderr=True)
            stderr = self._logs(container, limits, stdout=False, stderr=True)
        except (DockerException, requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as exc:
            wall_s = time.monotonic() - start
            reason = "docker error: " + (_last_line(str(exc)) or type(exc).__name__)
            return RunOutcome(
                status="failed",
                exit_code=exit_code,
                reason=reason,
                log_tail=_decode_tail(logs, limits.output_cap_bytes),
                wall_s=wall_s,
                runner="docker",
                gpu=gpu,
                hardware=hardware,
            )
        finally:
            if container is not None:
                try:
                    container.remove(force=True)
                except DockerException as exc:
                    warnings.warn(
                        f"could not remove container {container.id}: {exc}", RuntimeWarning, stacklevel=2
                    )

        if timed_out:
            status, exit_code, reason = "timeout", None, f"wall-clock timeout after {limits.timeout_s:g} s"
        elif over_limit:
            status, reason = "failed", over_limit
        elif exit_code == 0:
            status, reason = "succeeded", "exit code 0"
        elif oom:
            status, reason = "failed", f"out of memory (limit {limits.memory})"
        else:
            status = "failed"
            last = _last_line(stderr.decode("utf-8", errors="replace"))
            if exit_code == 137 and not last:
                reason = f"killed (exit 137): probably out of memory (limit {limits.memory})"
            else:
                reason = last or f"exit code {exit_code} (no output on stderr)"
        return RunOutcome(
            status=status,
            exit_code=exit_code,
            reason=reason,
            log_tail=_decode_tail(logs, limits.output_cap_bytes),
            wall_s=wall_s,
            runner="docker",
            gpu=gpu,
            hardware=hardware,
        )

    @staticmethod
    def _logs(
        container: docker.models.containers.Container, limits: SandboxLimits, *, stdout: bool, stderr: bool
    ) -> bytes:
        stream = container.logs(stdout=stdout, stderr=stderr, stream=True, follow=False, tail=5000)
        return _keep_tail(stream, limits.output_cap_bytes)


# --------------------------------------------------------------------------------------------------------
# In-process fallback


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
    """

    def __init__(self, repo_root: Path = REPO_ROOT, python: str | None = None) -> None:
        self.repo_root = Path(repo_root)
        self.python = python or sys.executable

    def run(
        self,
        image: str | None,
        *,
        job_dir: Path,
        data_dir: Path,
        models_dir: Path,
        out_dir: Path,
        limits: SandboxLimits | None = None,
        gpu: bool = False,
        submission_dir: Path | None = None,
    ) -> RunOutcome:
        """Run ``python -m evaluators run …`` as a subprocess of the host Python.

        Parameters
        ----------
        image : str or None
            Ignored (kept for the shared signature).
        job_dir, data_dir, models_dir, out_dir : pathlib.Path
            As for :meth:`DockerRunner.run`, passed as host paths.
        limits : SandboxLimits, optional
            Only ``timeout_s`` and ``output_cap_bytes`` apply; nothing else is enforced.
        gpu : bool, optional
            Recorded in the outcome; the subprocess sees the host's GPUs either way.
        submission_dir : pathlib.Path, optional
            The submission folder, passed as ``--submission`` (inside an image it is ``/submission``).

        Returns
        -------
        RunOutcome
            As for :meth:`DockerRunner.run`, with ``runner="in-process"``.

        Raises
        ------
        FileNotFoundError
            If ``job_dir/job.json`` or ``data_dir`` is missing.
        """
        del image
        limits = limits or SandboxLimits()
        job_dir, data_dir, models_dir, out_dir = (Path(p) for p in (job_dir, data_dir, models_dir, out_dir))
        _check_inputs(job_dir, data_dir, models_dir)
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
        with tempfile.TemporaryDirectory(prefix="chemrobust-inproc-") as home:
            env = {
                "PATH": os.environ.get("PATH", os.defpath),
                "HOME": home,
                "TMPDIR": home,
                "PYTHONPATH": str(self.repo_root.resolve()),
                **{k: v for k, v in CONTAINER_ENV.items() if k != "HOME"},
                "LANG": "C.UTF-8",
            }
            out_path, err_path = Path(home) / "stdout.log", Path(home) / "stderr.log"
            start = time.monotonic()
            timed_out = False
            with out_path.open("wb") as out_f, err_path.open("wb") as err_f:
                proc = subprocess.Popen(  # noqa: S603 - the fixed evaluators command, no shell
                    cmd, cwd=self.repo_root, env=env, stdout=out_f, stderr=err_f, start_new_session=True
                )
                try:
                    exit_code: int | None = proc.wait(timeout=limits.timeout_s)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    exit_code = None
            wall_s = time.monotonic() - start
            cap = limits.output_cap_bytes
            stdout_b = _read_tail(out_path, cap)
            stderr_b = _read_tail(err_path, cap)
        log_tail = _decode_tail(stdout_b, cap)
        err_text = stderr_b.decode("utf-8", errors="replace")
        if err_text.strip():
            log_tail = f"{log_tail}\n--- stderr ---\n{_decode_tail(stderr_b, cap)}"
        if timed_out:
            status, reason = "timeout", f"wall-clock timeout after {limits.timeout_s:g} s"
        elif exit_code == 0:
            status, reason = "succeeded", "exit code 0"
        else:
            status = "failed"
            reason = _last_line(err_text) or f"exit code {exit_code} (no output on stderr)"
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


def _read_tail(path: Path, cap: int) -> bytes:
    with path.open("rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - cap))
        return f.read()
