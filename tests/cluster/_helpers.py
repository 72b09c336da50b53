"""What the cluster tests share: an evaluator over private submissions, a Slurm executor sized for here.

Not a test module. Also run as a script by the restart test, as the orchestrator it kills.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from evaluators.tracks import TrackOptions
from leaderboard.execution.evaluate import Evaluator
from leaderboard.executors.slurm import SlurmExecutor
from leaderboard.executors.slurm_job import SlurmOptions
from leaderboard.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 20
"""Molecules per job: enough for every metric, small enough for a quick test."""


def submissions(folder: Path, *names: str) -> Path:
    """Copy the named submissions (reference ones, or hostile ones from tests/adversarial) into ``folder``."""
    for name in names:
        source = ROOT / "submissions" / name
        if not source.is_dir():
            source = ROOT / "tests" / "adversarial" / name
        shutil.copytree(source, folder / name)
    return folder


def evaluator(state: Path, store: ResultStore, subs: Path, log: Callable[[str], None]) -> Evaluator:
    """The evaluator every test uses: Docker sandbox, CPU images, the first :data:`LIMIT` molecules."""
    return Evaluator(
        ROOT, state, store, runner="docker", gpu="off", options=TrackOptions(limit=LIMIT),
        submissions_dir=subs, log=log,
    )  # fmt: skip


def slurm(*sbatch_args: str) -> SlurmExecutor:
    """One CPU, 2 GB and one (fake) GPU per job: two jobs run at once on the two-CPU test node."""
    return SlurmExecutor(
        SlurmOptions(gpus_per_job=1, cpus_per_job=1, mem_per_job="2G", poll_s=0.5, sbatch_args=sbatch_args)
    )


def orchestrate(state: str, subs: str, uri: str, experiment: str, *sbatch_args: str) -> None:
    """Run a Slurm evaluation of ``subs`` on datamol-default, printing its log (the restart test kills it)."""
    store = ResultStore(uri, experiment=experiment)
    ev = evaluator(Path(state), store, Path(subs), lambda line: print(line, flush=True))
    summary = slurm(*sbatch_args).run(ev, None, ["datamol-default"])
    print(summary.line(), flush=True)


if __name__ == "__main__":
    orchestrate(*sys.argv[1:])
