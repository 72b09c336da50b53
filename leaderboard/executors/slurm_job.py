"""One Slurm job of a cluster evaluation: its batch script, and what it runs on the node (``run-one``).

:func:`batch_script` writes the script the orchestrator submits. It runs ``python -m leaderboard run-one``
(:func:`run_one`) in the background and waits; on SIGTERM (``scancel``, the time limit, a node shutdown)
its trap stops that process first — so no container can be created after — then removes the job's
container by name (``chemrobust-slurm-<job id>``), also on a normal exit. A container belongs to dockerd,
not to the job: without the trap it would outlive the job.

:func:`run_one` performs exactly what the local executor does for one job
(:meth:`~leaderboard.execution.evaluate.Evaluator.attempt`), against the tracking server, in the
experiment whose id the orchestrator passed, checking that the node computes the result key the
orchestrator named the job by. The container gets the job's allocation explicitly: ``--cpus`` and
``--memory`` from Slurm's CPU and memory allocation, the job's GPUs (``SLURM_JOB_GPUS``, the node's own
indices, else ``CUDA_VISIBLE_DEVICES``) when GPUs are used. Each run is tagged with the job id, node and
GPUs (:data:`JOB_TAG`, ``slurm.*``; not part of the key).

Side effects: writes the script; ``run_one`` those of the evaluator (job folders under
``<state>/slurm-jobs``, apart from the local executor's ``jobs/`` that a local evaluation sweeps).
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

JOB_TAG = "chemrobust.slurm_job"
"""Run tag: the Slurm job id that wrote the run (how the orchestrator finds a job's outcome)."""

CONTAINER_PREFIX = "chemrobust-slurm-"
JOB_PREFIX = "chemrobust-"
"""Slurm job names are ``chemrobust-<result key>``: how a restarted orchestrator finds its queued jobs."""


class SlurmOptions(BaseModel):
    """What every job asks Slurm for; a site's defaults come from a TOML file (:meth:`load`).

    Parameters
    ----------
    partition, account : str, optional
        ``--partition`` and ``--account`` (default: the cluster's).
    time : str
        ``--time`` limit of each job (Slurm notation, ``HH:MM:SS`` or ``D-HH:MM:SS``).
    gpus_per_job : int
        GPUs per job (``--gres=gpu:N``); 0 for none.
    cpus_per_job : int
        ``--cpus-per-task``; also the container's ``--cpus``.
    mem_per_job : str
        ``--mem`` (``8G``); also the container's ``--memory``.
    poll_s : float
        Seconds between two looks at the queue while waiting.
    sbatch_args : tuple of str
        Further ``#SBATCH`` options, as given (``--constraint=a100``, ``--qos=high``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    partition: str | None = None
    account: str | None = None
    time: str = Field(default="02:00:00", pattern=r"^(\d+-)?\d+(:\d\d){0,2}$")
    gpus_per_job: int = Field(default=0, ge=0)
    cpus_per_job: int = Field(default=2, ge=1)
    mem_per_job: str = Field(default="8G", pattern=r"^[1-9][0-9]*[KMGT]?$")
    poll_s: float = Field(default=5.0, gt=0)
    sbatch_args: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: Path | None, overrides: Mapping[str, object]) -> SlurmOptions:
        """Read the ``[slurm]`` table of the TOML file ``path`` (when given), then apply ``overrides``.

        Raises
        ------
        ValueError
            Naming the file and the field, for an unreadable file or a value out of range.
        """
        import tomllib

        from pydantic import ValidationError

        values: dict[str, object] = {}
        if path is not None:
            try:
                values = dict(tomllib.loads(Path(path).read_text()).get("slurm", {}))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise ValueError(f"{path}: cannot read the Slurm defaults: {exc}") from exc
        values.update({k: v for k, v in overrides.items() if v is not None})
        try:
            return cls(**values)
        except ValidationError as exc:
            where = f"{path} [slurm]" if path else "the --slurm-* options"
            problems = "; ".join(f"'{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors())
            raise ValueError(f"{where}: {problems}") from None


@dataclass(frozen=True)
class JobRequest:
    """Everything ``run-one`` needs to repeat the orchestrator's job exactly (its command-line arguments)."""

    submission: str
    track: str
    dataset: str
    submissions_dir: Path
    experiment_id: str
    key: str
    runner: str
    gpu: bool
    base_image: str
    options: dict
    limits: dict

    def arguments(self) -> list[str]:
        """Return ``run-one``'s arguments."""
        return [
            "run-one", "--submission", self.submission, "--track", self.track, "--dataset", self.dataset,
            "--submissions-dir", str(self.submissions_dir), "--experiment-id", self.experiment_id,
            "--expect-key", self.key, "--runner", self.runner, "--gpu", "on" if self.gpu else "off",
            "--base-image", self.base_image, "--options-json", json.dumps(self.options, sort_keys=True),
            "--limits-json", json.dumps(self.limits, sort_keys=True),
        ]  # fmt: skip


def batch_script(
    request: JobRequest,
    options: SlurmOptions,
    *,
    repo_root: Path,
    state_dir: Path,
    tracking_uri: str,
    log_file: Path,
    python: str = sys.executable,
) -> str:
    """Return the batch script of one job (named after its result key; removes its container on cancel)."""
    q = shlex.quote
    directives = [
        f"--job-name={JOB_PREFIX}{request.key}",
        f"--output={log_file}",
        f"--cpus-per-task={options.cpus_per_job}",
        f"--mem={options.mem_per_job}",
        f"--time={options.time}",
        "--export=ALL",
        *([f"--gres=gpu:{options.gpus_per_job}"] if options.gpus_per_job else []),
        *([f"--partition={options.partition}"] if options.partition else []),
        *([f"--account={options.account}"] if options.account else []),
        *options.sbatch_args,
    ]
    command = " ".join(q(a) for a in [python, "-m", "leaderboard", "--state-dir", str(state_dir),
                                      *request.arguments()])  # fmt: skip
    header = "\n".join(f"#SBATCH {d}" for d in directives)
    return f"""#!/bin/bash
{header}
# Generated by leaderboard.executors.slurm_job: {request.submission} x {request.track} x {request.dataset},
# result key {request.key}.
set -u
container="{CONTAINER_PREFIX}${{SLURM_JOB_ID}}"
child=""
cleanup() {{
  # Stop run-one first, so that it cannot create the container after it was removed.
  if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; wait "$child" 2>/dev/null; fi
  docker rm -f "$container" >/dev/null 2>&1 || true
}}
trap 'echo "chemrobust: job signalled, removing $container"; cleanup; trap - EXIT; exit 143' TERM INT HUP
trap cleanup EXIT
cd {q(str(repo_root))}
export PYTHONPATH={q(str(repo_root))}
export MLFLOW_TRACKING_URI={q(tracking_uri)}
{command} &
child=$!
wait "$child"
status=$?
child=""
exit "$status"
"""


@dataclass(frozen=True)
class SlurmAllocation:
    """What Slurm gave this job, read from its environment."""

    job_id: str
    node: str
    cpus: int | None
    memory_mb: int | None
    gpu_ids: tuple[str, ...]
    cuda_visible_devices: str

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> SlurmAllocation:
        """Read ``SLURM_JOB_ID``, CPUs, memory and GPUs from a job's environment.

        Raises
        ------
        RuntimeError
            Outside a Slurm job (no ``SLURM_JOB_ID``).
        """
        if not env.get("SLURM_JOB_ID"):
            raise RuntimeError("run-one runs inside a Slurm job (SLURM_JOB_ID is not set)")
        cpus = env.get("SLURM_CPUS_PER_TASK") or env.get("SLURM_CPUS_ON_NODE")
        memory = env.get("SLURM_MEM_PER_NODE")
        if not memory and env.get("SLURM_MEM_PER_CPU") and cpus:
            memory = str(int(env["SLURM_MEM_PER_CPU"]) * int(cpus))
        visible = env.get("CUDA_VISIBLE_DEVICES", "")
        # SLURM_JOB_GPUS holds the node's own GPU indices: what the container engine names GPUs by, where
        # CUDA_VISIBLE_DEVICES may be renumbered from 0 (device cgroups).
        gpus = env.get("SLURM_JOB_GPUS") or visible
        return cls(
            job_id=env["SLURM_JOB_ID"],
            node=env.get("SLURMD_NODENAME", ""),
            cpus=int(cpus) if cpus else None,
            memory_mb=int(memory) if memory else None,
            gpu_ids=tuple(g for g in gpus.split(",") if g),
            cuda_visible_devices=visible,
        )

    def limits_update(self) -> dict[str, object]:
        """Return the sandbox limits the allocation sets: the container gets the job's CPUs and memory."""
        update: dict[str, object] = {}
        if self.cpus:
            update["cpus"] = float(self.cpus)
        if self.memory_mb:
            update["memory"] = f"{self.memory_mb}m"
        return update

    def tags(self) -> dict[str, str]:
        """Run tags recording the job (not part of the result key)."""
        return {
            JOB_TAG: self.job_id,
            "slurm.node": self.node,
            "slurm.gpus": ",".join(self.gpu_ids),
            "slurm.cuda_visible_devices": self.cuda_visible_devices,
        }


def run_one(args, *, repo_root: Path, environ: Mapping[str, str]) -> int:
    """``run-one``: evaluate one (submission, track, data set) inside a Slurm job; 0 unless it failed.

    Parameters
    ----------
    args : argparse.Namespace
        ``run-one``'s arguments (:meth:`JobRequest.arguments`) and ``state_dir``.
    repo_root : pathlib.Path
        The checkout.
    environ : mapping
        The job's environment (Slurm's variables, the maintainer settings).
    """
    from evaluators.schema import TrackOptions
    from leaderboard.execution.docker_runner import DockerRunner, docker_client_or_none
    from leaderboard.execution.evaluate import Evaluator, PlannedJob, Summary
    from leaderboard.execution.sandbox import SandboxLimits
    from leaderboard.intake.manifest import load_submission
    from leaderboard.settings import Settings
    from leaderboard.store import ResultStore

    # scancel and the time limit send SIGTERM: unwind (the runner's ``finally`` removes the container,
    # unmounts the job's /out and deletes its folder) instead of dying with them left behind.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    allocation = SlurmAllocation.from_environment(environ)
    state_dir = Path(args.state_dir)
    settings = Settings.from_environment(repo_root=repo_root, state_dir=state_dir, environ=environ)
    store = ResultStore(settings.mlflow_uri(), experiment_id=args.experiment_id)
    limits = SandboxLimits(**json.loads(args.limits_json)).model_copy(update=allocation.limits_update())
    runner: object = args.runner
    client = None
    if args.runner == "docker":
        client = docker_client_or_none(environ)
        if client is None:
            print(f"chemrobust: error: no Docker engine answers on node {allocation.node}", file=sys.stderr)
            return 1
        swept = sweep_orphan_containers(client, active_slurm_jobs())
        if swept:
            print(f"chemrobust: removed {len(swept)} container(s) of ended Slurm jobs: {', '.join(swept)}")
        runner = DockerRunner(
            client,
            owner=f"slurm-job-{allocation.job_id}",
            container_name=f"{CONTAINER_PREFIX}{allocation.job_id}",
            gpu_ids=allocation.gpu_ids or None,
        )
    evaluator = Evaluator(
        repo_root,
        state_dir,
        store,
        runner=runner,
        gpu="on" if args.gpu == "on" else "off",
        client=client,
        base_image=args.base_image,
        options=TrackOptions.from_json(json.loads(args.options_json)),
        submissions_dir=Path(args.submissions_dir),
        limits=limits,
        settings=settings,
        progress_stream=sys.stdout,
        extra_tags=allocation.tags(),
        work_root=state_dir / "slurm-jobs",
    )
    folder = Path(args.submissions_dir) / args.submission
    sub = load_submission(folder / "submission.yaml", allow_remote_code=sorted(settings.allow_remote_code))
    job = PlannedJob(sub, folder, args.track, args.dataset)
    label = f"{job.label} (Slurm job {allocation.job_id} on {allocation.node or '?'})"
    print(f"{label}: GPUs {','.join(allocation.gpu_ids) or 'none'}, limits {limits.model_dump_json()}")
    try:
        key = evaluator.result_key(sub, folder, args.track, args.dataset).key
    except (OSError, ValueError, RuntimeError):
        key = args.expect_key  # the attempt below meets the same error and records it
    if key != args.expect_key:
        reason = (
            f"result key mismatch: node {allocation.node} computed {key}, the orchestrator {args.expect_key} "
            "(a different checkout, image or data set on the node?)"
        )
        evaluator.record_failure(sub, args.track, args.dataset, reason, "")
        print(f"chemrobust: error: {reason}", file=sys.stderr)
        return 1
    status = evaluator.attempt(job, label, Summary())
    return 0 if status in ("computed", "reused") else 1


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def active_slurm_jobs() -> set[str] | None:
    """Return the ids of the jobs Slurm still knows as pending or running; None when ``squeue`` fails.

    ``squeue`` rather than ``sacct``: accounting is often absent, and only live jobs matter here.
    """
    try:
        done = subprocess.run(
            ["squeue", "-h", "-o", "%i %T"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    alive = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "RESIZING", "STOPPED"}
    rows = (line.split() for line in done.stdout.splitlines())
    return {row[0] for row in rows if len(row) == 2 and row[1] in alive}


def sweep_orphan_containers(client, active: set[str] | None) -> list[str]:
    """Remove this node's job containers (``chemrobust-slurm-<job id>``) whose Slurm job has ended.

    A job whose node failed never ran its clean-up trap; its container would outlive it. Every job
    sweeps its node before it starts its own container.

    Parameters
    ----------
    client : docker.DockerClient
        The node's Docker engine.
    active : set of str or None
        Ids of the jobs still pending or running (:func:`active_slurm_jobs`). None (Slurm did not answer)
        removes nothing: a container is never removed on a guess.

    Returns
    -------
    list of str
        Names of the containers removed.

    Notes
    -----
    Two jobs starting on one node sweep at the same time: a container another job is already removing
    (Docker's 409 Conflict) or has removed (404) is not an error of this job's. The containers are listed
    with the engine's one list call (``client.api.containers``): docker-py's ``containers.list`` inspects
    each listed container in a second request, and one removed in between (another job's own clean-up)
    made the whole listing fail with 404 — seen in CI.
    """
    if active is None:
        return []
    removed = []
    for entry in client.api.containers(all=True, filters={"name": CONTAINER_PREFIX}):
        # The list call names a container "/<name>" (and lists links as "/<other>/<name>").
        name = next((n.lstrip("/") for n in entry.get("Names") or [] if n.count("/") == 1), "")
        job_id = name.removeprefix(CONTAINER_PREFIX)
        if not name.startswith(CONTAINER_PREFIX) or not job_id.isdigit() or job_id in active:
            continue
        try:
            client.api.remove_container(entry["Id"], force=True)
        except Exception as exc:  # docker.errors.APIError; this module does not import docker
            if getattr(exc, "status_code", None) not in (404, 409):
                raise
            continue
        removed.append(name)
    return removed
