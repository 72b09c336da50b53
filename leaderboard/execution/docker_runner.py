"""Run one evaluation job in the submission's image, sandboxed: the host module that runs containers.

:class:`DockerRunner` (a :class:`leaderboard.execution.sandbox.Runner`) runs ``python -m evaluators run
--job /job/job.json --data /data --models /models --out /out`` in the submission's image, with no network,
a read-only root filesystem plus a tmpfs ``/tmp``, uid/gid 10001, all capabilities dropped,
``no-new-privileges``, memory/pids/CPU limits, an explicit environment (never the host's) and a wall-clock
timeout after which the container is killed. ``/job``, ``/data`` and ``/models`` are mounted read-only,
``/out`` read-write. With ``docker`` (and :mod:`leaderboard.execution.images`, which builds the images)
it is the only host module importing ``docker``.

Invariants
----------
- A container is always removed (``remove(force=True)`` in ``finally``), whatever happened.
- ``RunOutcome.reason`` is one line: the last non-empty stderr line on failure, ``out of memory (limit …)``
  when the kernel killed it for memory, ``wall-clock timeout after N s`` on timeout.
- Captured logs are capped (:attr:`SandboxLimits.output_cap_bytes`); host memory use does not grow with
  a submission's output. Progress lines are left out of the kept tail (one summary line instead).
- With ``on_progress``, the container's stdout is followed live in a daemon thread (one
  :class:`leaderboard.execution.progress.ProgressFollower`, bounded memory); the thread ends with the
  container, at the latest :data:`DRAIN_S` seconds after the run, and never changes the outcome. Output
  beyond the engine's log file (20 MB, then rotated) may be missed by it, as it is by the kept tail.
- What a run writes to ``/out`` is capped (:attr:`SandboxLimits.out_cap_bytes`,
  :attr:`SandboxLimits.out_max_files`) by the kernel: :meth:`DockerRunner.output_volume` gives ``/out`` a
  loop-mounted filesystem of that size (:mod:`leaderboard.execution.outfs`), so a submission cannot fill
  the disk that holds the result store, not even with one ``fallocate``. The folder is also measured every
  :data:`POLL_S` seconds while the container runs and once after it ends; a run over the cap, or whose
  ``/out`` is full, is killed and fails with ``output limit exceeded: …``. Without the mount (a host that
  cannot make it; a caller that did not ask) that polling is the only limit.
- Reasons are sanitised: control characters (terminal escapes, bells, bidi overrides) become visible
  escapes (:func:`leaderboard.text.printable`).
- Containers carry the label ``org.chemrobust.owner`` (the evaluation's state folder); containers left
  running by an orchestrator that was killed are removed by :meth:`DockerRunner.remove_orphans`.
- Nothing connects to an engine at import time: the client is injected (:func:`docker_client_or_none`).

Side effects
------------
- Creates, starts, kills and removes containers through the injected ``docker.DockerClient``.
- Creates ``out_dir`` (and ``models_dir`` if missing) and makes ``out_dir`` writable by uid 10001 (``chown``
  when running as root, else mode 0777).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import warnings
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path

import docker
import docker.errors
import docker.types
import requests.exceptions
from docker.errors import DockerException, ImageNotFound

from leaderboard.execution.outfs import capped_output
from leaderboard.execution.progress import ProgressFollower, compact_progress_lines
from leaderboard.execution.sandbox import (
    CONTAINER_COMMAND,
    CONTAINER_ENV,
    POLL_S,
    SANDBOX_UID,
    OutVolume,
    ProgressCallback,
    RunOutcome,
    SandboxLimits,
    check_inputs,
    decode_tail,
    hardware_info,
    keep_tail,
    last_line,
    out_over_limit,
    thread_env,
)

__all__ = [
    "DRAIN_S",
    "OWNER_LABEL",
    "POLL_S",
    "STOP_GRACE_S",
    "DockerException",
    "DockerRunner",
    "ImageNotFound",
    "docker_client_or_none",
    "gpu_available",
]

OWNER_LABEL = "org.chemrobust.owner"
"""Container label naming the evaluation (state folder) that started the container."""

DRAIN_S = 5.0
"""After a container ends, its live output is read for at most this many more seconds."""

STOP_GRACE_S = 10
"""After a kill (timeout, output over the cap), the container is waited for at most this many seconds."""


def docker_client_or_none(environment: Mapping[str, str] | None = None) -> docker.DockerClient | None:
    """Connect to the local Docker engine.

    Parameters
    ----------
    environment : mapping, optional
        Where ``DOCKER_HOST``, ``DOCKER_TLS_VERIFY`` and ``DOCKER_CERT_PATH`` are read; the process
        environment by default.

    Returns
    -------
    docker.DockerClient or None
        A client whose ``ping`` answered, or None when no engine is reachable.
    """
    try:
        client = docker.from_env(environment=dict(environment) if environment is not None else None)
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


def _make_writable_by_sandbox(out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(out_dir, SANDBOX_UID, SANDBOX_UID)
        os.chmod(out_dir, 0o755)
    else:
        os.chmod(out_dir, 0o777)


class _LiveOutput:
    """Follow a running container's stdout in a daemon thread and report its progress lines."""

    def __init__(self, container: docker.models.containers.Container, on_progress: ProgressCallback) -> None:
        self.container = container
        self.follower = ProgressFollower(on_progress)
        self.fed = 0  # bytes of stdout fed to the follower
        self._fed_digest = hashlib.sha256()  # of those bytes: the stored log must start with them
        self.ended = False  # the engine ended the followed stream (the container exited)
        self._stream = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._follow, name=f"progress {container.id}", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        try:
            self._stream = self.container.logs(stdout=True, stderr=False, stream=True, follow=True)
            for chunk in self._stream:
                if self._stopping.is_set():
                    return
                self.follower.feed(chunk)
                self.fed += len(chunk)
                self._fed_digest.update(chunk)
            self.ended = True
        except Exception:  # noqa: BLE001 - progress is best effort; an engine error or the stream
            pass  # closed by stop() ends it, and the run's own wait reports what matters

    def stop(self, drain_s: float) -> None:
        """Let the thread read what is left for up to ``drain_s`` seconds, then end it.

        When the engine ended the followed stream, the output it may have left out is read once more
        (:meth:`catch_up`).
        """
        self._thread.join(drain_s)
        self._stopping.set()
        stream = self._stream
        if self._thread.is_alive() and stream is not None:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a stream another thread reads may fail
                pass
        self._thread.join(1.0)
        if self.ended and not self._thread.is_alive():
            self.catch_up()

    def catch_up(self) -> None:
        """Report the progress lines of the stored stdout beyond what the followed stream delivered.

        Docker's engine (seen with 20.10 and the json-file driver, under load) can end a followed log stream
        of a container that just exited before its last lines: a 100-step flood was reported up to step 52.
        The stored log holds every line in the same bytes, so its part after the first :attr:`fed` bytes is
        what the stream left out — unless the engine rotated the log (past its 20 MB cap): then the stored
        log no longer starts with what was fed (its digest differs) and nothing more is reported.
        """
        head = hashlib.sha256()
        need = self.fed
        try:
            for chunk in self.container.logs(stdout=True, stderr=False, stream=True, follow=False):
                if need > 0:
                    taken = chunk[:need]
                    head.update(taken)
                    need -= len(taken)
                    chunk = chunk[len(taken) :]
                    if need > 0:
                        continue
                    if head.digest() != self._fed_digest.digest():
                        return  # rotated: not the output the stream delivered the start of
                if chunk:
                    self.follower.feed(chunk)
                    self.fed += len(chunk)
        except Exception:  # noqa: BLE001 - best effort, as the live stream
            pass


class DockerRunner:
    """Run jobs in the submission's image, sandboxed.

    Parameters
    ----------
    client : docker.DockerClient
        Injected Docker client (see :func:`docker_client_or_none`).
    owner : str, optional
        Value of the :data:`OWNER_LABEL` label on every container this runner creates (the evaluation's
        state folder), so that :meth:`remove_orphans` can find containers a killed orchestrator left behind.
    container_name : str, optional
        Name of the container (one run at a time then): a Slurm job names it after its job id, so that the
        job script can remove it when Slurm cancels the job.
    gpu_ids : tuple of str, optional
        With ``gpu``, give the container exactly these GPUs (a Slurm job's allocation) instead of all.
    """

    name = "docker"
    #: Runs are isolated containers with limits of their own: the local executor may run several at once.
    side_by_side = True

    def __init__(
        self,
        client: docker.DockerClient,
        owner: str = "",
        *,
        container_name: str | None = None,
        gpu_ids: tuple[str, ...] | None = None,
    ) -> None:
        self.client = client
        self.owner = owner
        self.container_name = container_name
        self.gpu_ids = gpu_ids

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

    def output_volume(self, out_dir: Path, limits: SandboxLimits) -> AbstractContextManager[OutVolume]:
        """Give ``out_dir`` a filesystem of ``limits.out_cap_bytes`` (:func:`~.outfs.capped_output`).

        Parameters
        ----------
        out_dir : pathlib.Path
            The (empty) folder that :meth:`run` will mount at ``/out``.
        limits : SandboxLimits
            Holds ``out_cap_bytes`` and ``out_max_files``.

        Returns
        -------
        contextlib.AbstractContextManager of OutVolume
            Read and store the outputs inside it; leaving it unmounts the filesystem and deletes its image.
            Where the host cannot mount it, the volume says so (``kernel=False``) and only polling limits
            ``/out``.
        """
        return capped_output(out_dir, limits)

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
            Request GPUs: ``gpu_ids`` when the runner has them (``--gpus '"device=0,1"'``), else all.

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
            "environment": {**CONTAINER_ENV, **thread_env(limits)},
            "working_dir": "/tmp",
            "log_config": docker.types.LogConfig(
                type="json-file", config={"max-size": "20m", "max-file": "1"}
            ),
            "labels": {"org.chemrobust.runner": "docker", **self._owner_label()},
        }
        if self.container_name:
            kwargs["name"] = self.container_name
        if gpu and self.gpu_ids:
            kwargs["device_requests"] = [
                docker.types.DeviceRequest(device_ids=list(self.gpu_ids), capabilities=[["gpu"]])
            ]
        elif gpu:
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
        submission_dir: Path | None = None,
        limits: SandboxLimits | None = None,
        gpu: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> RunOutcome:
        """Run ``python -m evaluators run …`` in ``image`` and wait for it, at most ``limits.timeout_s``.

        Parameters
        ----------
        image : str
            Image tag or id (from :func:`leaderboard.execution.images.ensure_image`); it must exist
            locally (nothing is pulled).
        job_dir : pathlib.Path
            Folder holding ``job.json``; mounted read-only at ``/job``.
        data_dir : pathlib.Path
            Dataset files; mounted read-only at ``/data``.
        models_dir : pathlib.Path
            Prefetched weights (may be empty; created if missing); mounted read-only at ``/models``.
        out_dir : pathlib.Path
            Results folder (created; should be empty); mounted read-write at ``/out``.
        submission_dir : pathlib.Path, optional
            Ignored: the submission is baked into the image at ``/submission``. Accepted so that both
            runners share one signature.
        limits : SandboxLimits, optional
            Resource limits; defaults to ``SandboxLimits()``.
        gpu : bool, optional
            Give the container all GPUs.
        on_progress : callable, optional
            Receives each progress line of the container's stdout (:mod:`evaluators.progress`), in order,
            from a helper thread, while the container runs.

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
        check_inputs(job_dir, data_dir, models_dir)
        _make_writable_by_sandbox(out_dir)
        kwargs = self.create_kwargs(
            job_dir=job_dir, data_dir=data_dir, models_dir=models_dir, out_dir=out_dir, limits=limits, gpu=gpu
        )
        hardware = hardware_info()
        start = time.monotonic()
        container = None
        live: _LiveOutput | None = None
        timed_out = False
        exit_code: int | None = None
        oom = False
        over_limit: str | None = None
        logs = stderr = b""
        try:
            container = self.client.containers.create(image, **kwargs)
            container.start()
            if on_progress is not None:
                live = _LiveOutput(container, on_progress)
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
                over_limit = out_over_limit(out_dir, limits)
                if over_limit:
                    break
            if timed_out or over_limit:
                try:
                    container.kill()
                except docker.errors.APIError:  # it ended on its own in the meantime
                    pass
                container.wait(timeout=STOP_GRACE_S)
            wall_s = time.monotonic() - start
            if live is not None:
                live.stop(DRAIN_S)
            over_limit = over_limit or out_over_limit(out_dir, limits)
            container.reload()
            oom = bool(container.attrs.get("State", {}).get("OOMKilled", False))
            logs = self._logs(container, limits, stdout=True, stderr=True)
            stderr = self._logs(container, limits, stdout=False, stderr=True)
        except (DockerException, requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as exc:
            wall_s = time.monotonic() - start
            reason = "docker error: " + (last_line(str(exc)) or type(exc).__name__)
            return RunOutcome(
                status="failed",
                exit_code=exit_code,
                reason=reason,
                log_tail=compact_progress_lines(decode_tail(logs, limits.output_cap_bytes)),
                wall_s=wall_s,
                runner="docker",
                gpu=gpu,
                hardware=hardware,
            )
        finally:
            if live is not None:
                live.stop(0)
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
            last = last_line(stderr.decode("utf-8", errors="replace"))
            if exit_code == 137 and not last:
                reason = f"killed (exit 137): probably out of memory (limit {limits.memory})"
            else:
                reason = last or f"exit code {exit_code} (no output on stderr)"
        return RunOutcome(
            status=status,
            exit_code=exit_code,
            reason=reason,
            log_tail=compact_progress_lines(decode_tail(logs, limits.output_cap_bytes)),
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
        return keep_tail(stream, limits.output_cap_bytes)
