"""The ``slurm`` executor: one Slurm job per (submission, track, data set) (registers ``slurm``).

The orchestrator plans the jobs and computes their result keys exactly as the local executor does, reuses
what the store already holds, and submits one batch script per remaining job with ``sbatch``
(:func:`leaderboard.executors.slurm_job.batch_script`), named ``chemrobust-<result key>``. A restarted
orchestrator finds its jobs still queued or running by that name (``squeue``) and waits for them instead
of submitting twice. It waits by polling ``squeue`` and, once a job has left the queue, reads its end from
``scontrol show job`` (clusters often have no accounting database, hence no ``sacct``), and its outcome from
the store: the runs tagged with the job's id. A job that died without storing one (cancelled, out of time,
node failure) is reported with Slurm's state and reason, and its RUNNING run marked FAILED. One job per
array element was not used: each job needs its own name (its result key) for the restart lookup.

Jobs write to a shared MLflow tracking server (``MLFLOW_TRACKING_URI=http://…``): a local sqlite file is
refused. The experiment is created (or found) once here and passed to every job by id.

Side effects: ``<state>/slurm/<key>.sbatch`` and ``<key>-<job id>.log``; jobs submitted to Slurm; FAILED
runs for jobs that ended without one; the state folder's lock while it runs.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.executors import EXECUTORS, ExecutorError
from leaderboard.executors.slurm_job import JOB_PREFIX, JOB_TAG, JobRequest, SlurmOptions, batch_script
from leaderboard.text import printable

if TYPE_CHECKING:
    from leaderboard.execution.evaluate import Evaluator, PlannedJob, Summary
    from leaderboard.settings import Settings

#: Slurm job states in which the job has not ended yet (it stays in ``squeue``).
ACTIVE = {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING"}


class SlurmError(ExecutorError):
    """A Slurm command failed (the command and its error are in the message)."""


def _slurm(cmd: list[str]) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmError(f"{cmd[0]} failed: {exc} (is Slurm installed and its controller up?)") from exc
    if done.returncode != 0:
        raise SlurmError(f"{' '.join(cmd[:2])} … failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def queued_jobs() -> dict[str, tuple[str, str]]:
    """Return this user's jobs still in the queue, by job name: ``{name: (job id, state)}``."""
    out = _slurm(["squeue", "--me", "-h", "-o", "%i|%j|%T"])
    jobs = {}
    for line in out.splitlines():
        job_id, name, state = (line.split("|") + ["", ""])[:3]
        if name.startswith(JOB_PREFIX):
            jobs[name] = (job_id.strip(), state.strip())
    return jobs


def job_end(job_id: str) -> dict[str, str]:
    """Return a job's ``JobState``, ``Reason``, ``ExitCode`` … (``scontrol show job``; empty: forgotten)."""
    try:
        out = _slurm(["scontrol", "show", "job", "-o", job_id])
    except SlurmError:
        return {}  # past MinJobAge the controller no longer knows the job
    return dict(re.findall(r"(\w+)=(\S*)", out))


@dataclass
class _Submitted:
    job: PlannedJob
    label: str
    key: str
    log: Path


@EXECUTORS.register("slurm")
class SlurmExecutor:
    """Submit each job to Slurm, wait for them all, read their outcomes from the store.

    Parameters
    ----------
    options : SlurmOptions
        What every job asks for.
    """

    name = "slurm"

    def __init__(self, options: SlurmOptions) -> None:
        self.options = options

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add ``--slurm-config``, ``--partition``, ``--account``, ``--time``, ``--gpus-per-job`` …."""
        group = parser.add_argument_group("--executor slurm")
        group.add_argument("--slurm-config", help="TOML file with a [slurm] table of site defaults "
                           "(default: CHEMROBUST_SLURM_CONFIG); the options below override it")  # fmt: skip
        group.add_argument("--partition")
        group.add_argument("--account")
        group.add_argument("--time", help="time limit per job (default 02:00:00)")
        group.add_argument("--gpus-per-job", type=int, help="GPUs per job, --gres=gpu:N (default 0)")
        group.add_argument("--cpus-per-job", type=int, help="CPUs per job (default 2)")
        group.add_argument("--mem-per-job", help="memory per job, e.g. 8G (default 8G)")

    @classmethod
    def from_arguments(cls, args: argparse.Namespace, settings: Settings) -> SlurmExecutor:
        """Build it from the site's defaults file and the options given.

        Raises
        ------
        ValueError
            For a bad defaults file or option (file, field and value named).
        """
        path = Path(args.slurm_config) if args.slurm_config else settings.slurm_config
        names = ("partition", "account", "time", "gpus_per_job", "cpus_per_job", "mem_per_job")
        return cls(SlurmOptions.load(path, {n: getattr(args, n) for n in names}))

    def run(self, evaluator: Evaluator, submission_ids: list[str] | None, datasets: list[str]) -> Summary:
        """Plan, submit what is neither stored nor queued, wait for every job; return the summary.

        Raises
        ------
        ExecutorError
            If the store is not a tracking server.
        SlurmError
            If ``sbatch`` or ``squeue`` fails.
        """
        from leaderboard.data.prepare import DataError
        from leaderboard.execution.evaluate import Summary
        from leaderboard.execution.images import ImageBuildError
        from leaderboard.execution.locks import evaluation_lock
        from leaderboard.execution.weights import WeightsError

        uri = evaluator.store.tracking_uri
        if not uri.startswith(("http://", "https://")):
            raise ExecutorError(
                f"--executor slurm needs a shared tracking server (MLFLOW_TRACKING_URI=http://…), not {uri}; "
                "start one with `nox -s tracking-server` (README: 'Running on a cluster')"
            )
        started = time.perf_counter()
        summary = Summary(runner=f"{evaluator.runner_name} on slurm", preview=evaluator.options.preview())
        jobs = evaluator.plan(submission_ids, datasets, summary)
        folder = evaluator.state_dir / "slurm"
        folder.mkdir(parents=True, exist_ok=True)
        waiting: dict[str, _Submitted] = {}
        with evaluation_lock(evaluator.state_dir):
            queued = queued_jobs()
            for number, job in enumerate(jobs, 1):
                label = f"[{number}/{len(jobs)}] {job.label}"
                try:
                    key = evaluator.result_key(job.submission, job.folder, job.track, job.dataset).key
                except (DataError, WeightsError, ImageBuildError, OSError, ValueError, RuntimeError) as exc:
                    reason = printable(str(exc))[:1000]
                    evaluator.record_failure(job.submission, job.track, job.dataset, reason, "")
                    summary.failed.append(f"{label}: {reason}")
                    evaluator.log(f"{label}: FAILED — {reason}")
                    continue
                if evaluator.store.find_finished(key) is not None:
                    evaluator.log(f"{label}: up to date (MLflow run reused, no model work)")
                    summary.reused += 1
                    continue
                name = f"{JOB_PREFIX}{key}"
                if name in queued:
                    job_id, state = queued[name]
                    evaluator.log(f"{label}: already {state.lower()} as Slurm job {job_id}; waiting for it")
                    logs = sorted(folder.glob(f"{key}-{job_id}.log"))
                    log = logs[0] if logs else folder / f"{key}-{job_id}.log"
                else:
                    job_id, log = self._submit(evaluator, job, key, folder)
                    evaluator.log(f"{label}: submitted as Slurm job {job_id}")
                waiting[job_id] = _Submitted(job, label, key, log)
            self._wait(evaluator, waiting, summary)
        summary.seconds = time.perf_counter() - started
        return summary

    def _submit(self, evaluator: Evaluator, job: PlannedJob, key: str, folder: Path) -> tuple[str, Path]:
        request = JobRequest(
            submission=job.submission.id,
            track=job.track,
            dataset=job.dataset,
            submissions_dir=job.folder.parent.resolve(),
            experiment_id=evaluator.store.experiment_id,
            key=key,
            runner=evaluator.runner_name,
            gpu=evaluator.use_gpu,
            base_image=evaluator.resolved_base_image(),
            options=evaluator.options.to_json(),
            limits=evaluator.limits.model_dump(),
        )
        script = folder / f"{key}.sbatch"
        script.write_text(
            batch_script(
                request,
                self.options,
                repo_root=evaluator.repo_root.resolve(),
                state_dir=evaluator.state_dir.resolve(),
                tracking_uri=evaluator.store.tracking_uri,
                log_file=folder.resolve() / f"{key}-%j.log",
                python=sys.executable,
            )
        )
        job_id = _slurm(["sbatch", "--parsable", str(script)]).strip().split(";")[0]
        return job_id, folder / f"{key}-{job_id}.log"

    def _wait(self, evaluator: Evaluator, waiting: dict[str, _Submitted], summary: Summary) -> None:
        """Poll the queue until every job has left it; count each one's outcome as it ends."""
        seen: dict[str, str] = {}
        while waiting:
            queued = {job_id: state for job_id, state in queued_jobs().values()}
            for job_id in list(waiting):
                state = queued.get(job_id)
                if state in ACTIVE:
                    if seen.get(job_id) != state:
                        evaluator.log(f"{waiting[job_id].label}: Slurm job {job_id} {state.lower()}")
                        seen[job_id] = state
                    continue
                self._outcome(evaluator, job_id, waiting.pop(job_id), summary)
            if waiting:
                time.sleep(self.options.poll_s)

    def _outcome(self, evaluator: Evaluator, job_id: str, sub: _Submitted, summary: Summary) -> None:
        """Count a job that left the queue: computed or reused per the store, else failed with the reason."""
        from leaderboard.store import REASON_TAG

        store = evaluator.store
        mine = store.runs_tagged(JOB_TAG, job_id)
        if store.find_finished(sub.key) is not None:
            if any(r.info.status == "FINISHED" for r in mine):
                summary.computed += 1
                evaluator.log(f"{sub.label}: done (Slurm job {job_id})")
            else:
                summary.reused += 1
                evaluator.log(f"{sub.label}: up to date (stored by another writer; Slurm job {job_id})")
            return
        end = job_end(job_id)
        ended = (
            f"Slurm job {job_id} ended {end.get('JobState', '(forgotten by the controller)')}"
            + (f", reason {end['Reason']}" if end.get("Reason") not in (None, "", "None") else "")
            + (f", exit {end['ExitCode']}" if end.get("ExitCode") else "")
        )
        failed = [r for r in mine if r.info.status == "FAILED" and REASON_TAG in r.data.tags]
        reasons = [r.data.tags[REASON_TAG] for r in failed]
        for run in mine:
            if run.info.status == "RUNNING":  # the job died mid-run: cancelled, out of time, node lost
                store.fail(run.info.run_id, f"{ended} before its run ended")
                reasons.append(f"{ended} before its run ended")
        if not reasons:
            reasons.append(f"{ended} without storing a run; log {sub.log}: {_last_line(sub.log)}")
        reason = printable(reasons[0])[:1000]
        summary.failed.append(f"{sub.label}: {reason}")
        evaluator.log(f"{sub.label}: FAILED — {reason}")


def _last_line(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(empty log)"
