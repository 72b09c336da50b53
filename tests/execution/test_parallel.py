"""Jobs side by side (``evaluate --jobs``): the same results and summary, shared parts safe, threads sized.

The end-to-end test runs two real submissions through the real evaluator and MLflow store with a runner that
declares its runs isolated (the in-process runner, counted), and compares every stored number with a run one
job at a time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from evaluators.schema import TrackOptions
from leaderboard.execution.docker_runner import DockerRunner
from leaderboard.execution.evaluate import Evaluator, Summary
from leaderboard.execution.inprocess_runner import InProcessRunner
from leaderboard.execution.limits import FORK_LOCK, ScoringLimits, call_limited
from leaderboard.execution.parallel import GiB, auto_workers, run_jobs, thread_share
from leaderboard.execution.phases import Phases
from leaderboard.execution.sandbox import CONTAINER_ENV, THREAD_VARIABLES, SandboxLimits
from leaderboard.executors.local import jobs_value
from leaderboard.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = ("morgan-fingerprint-reference", "char-ngram-baseline")


class CountingRunner(InProcessRunner):
    """The in-process runner, declared isolated, counting how many of its runs overlap."""

    side_by_side = True

    def __init__(self, repo_root: Path) -> None:
        super().__init__(repo_root)
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0
        self.threads: list[int | None] = []
        self.both_started = threading.Barrier(2, timeout=60)

    def run(self, image: Any, **kwargs: Any) -> Any:
        with self.lock:
            self.active += 1
            self.most = max(self.most, self.active)
            self.threads.append(kwargs["limits"].threads)
        try:
            self.both_started.wait()  # both runs are under way at once, or the barrier breaks
            return super().run(image, **kwargs)
        finally:
            with self.lock:
                self.active -= 1


def _evaluate(tmp: Path, runner: Any, jobs: int) -> tuple[Summary, ResultStore, list[str]]:
    subs = tmp / "submissions"
    for name in SUBMISSIONS:
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    state = tmp / "state"
    state.mkdir()
    store = ResultStore(f"sqlite:///{state}/mlflow.db", artifact_root=state / "artifacts")
    lines: list[str] = []
    evaluator = Evaluator(ROOT, state, store, runner=runner, options=TrackOptions(limit=60),
                          submissions_dir=subs, log=lines.append, jobs=jobs)  # fmt: skip
    summary = evaluator.run(None, ["datamol-default"])
    assert evaluator.store is store and evaluator.log == lines.append, "the shared parts were not restored"
    assert evaluator.limits.threads is None
    return summary, store, lines


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_two_jobs_side_by_side_store_what_one_by_one_stores(tmp_path, benchmark_data):
    benchmark_data("datamol-default")
    runner = CountingRunner(ROOT)
    together, store, lines = _evaluate(tmp_path / "together", runner, jobs=2)
    assert runner.most == 2, "the two jobs did not run at once"
    assert runner.threads == [thread_share(2.0, 2)] * 2, "each run must get its share of the cores"
    assert (together.computed, together.reused, together.failed) == (2, 0, []), lines
    assert any("2 jobs, 2 at a time" in line for line in lines), lines

    alone, store_alone, _ = _evaluate(tmp_path / "alone", InProcessRunner(ROOT), jobs=1)
    assert (alone.computed, alone.failed) == (2, [])
    keys = ["submission", "track", "dataset", "augmentation", "layer", "distance", "direction", "subset",
            "metric"]  # fmt: skip
    both = store.export()[0].sort_values(keys).reset_index(drop=True)
    one = store_alone.export()[0].sort_values(keys).reset_index(drop=True)
    assert len(both) > 100 and both[[*keys, "value"]].equals(one[[*keys, "value"]])


@dataclass
class FakeEvaluator:
    """What :func:`run_jobs` uses of an evaluator: attempts that take different times and record where."""

    sandbox: Any = field(default_factory=lambda: SimpleNamespace(side_by_side=True))
    store: Any = "store"
    progress_stream: Any = None
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    use_gpu: bool = False
    seen: list[tuple[str, str, int | None]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def log(self, line: str) -> None:
        self.lines.append(line)

    def attempt(self, job: Any, label: str, summary: Summary) -> str:
        time.sleep(job.seconds)
        self.seen.append((job.name, threading.current_thread().name, self.limits.threads))
        if job.fails:
            summary.failed.append(f"{label}: boom")
            return "boom"
        summary.computed += 1
        return "computed"


def _job(name: str, seconds: float, *, fails: bool = False, endpoint: bool = False) -> Any:
    from leaderboard.intake.endpoints import EndpointModel

    model = EndpointModel.model_construct() if endpoint else SimpleNamespace()
    return SimpleNamespace(name=name, seconds=seconds, fails=fails, label=name,
                           submission=SimpleNamespace(model=model))  # fmt: skip


def test_run_jobs_counts_in_plan_order_and_keeps_endpoint_jobs_on_this_thread():
    evaluator = FakeEvaluator()
    jobs = [_job("slow-fails", 0.6, fails=True), _job("quick-fails", 0.05, fails=True), _job("ok", 0.05),
            _job("api", 0.0, endpoint=True)]  # fmt: skip
    summary = Summary()
    run_jobs(evaluator, jobs, summary, workers=2)  # type: ignore[arg-type]
    # The quick one ended first; the summary still lists the failures in plan order.
    assert summary.failed == ["[1/4] slow-fails: boom", "[2/4] quick-fails: boom"]
    assert summary.computed == 2
    where = {name: thread for name, thread, _ in evaluator.seen}
    assert where["api"] == threading.current_thread().name, "an endpoint job (one spending ledger) left"
    assert all(where[n].startswith("chemrobust-job") for n in ("slow-fails", "quick-fails", "ok"))
    assert [name for name, _, _ in evaluator.seen][:2] == ["quick-fails", "ok"], "the jobs did not overlap"
    threads = {name: t for name, _, t in evaluator.seen}
    assert threads["ok"] == thread_share(2.0, 2)
    assert evaluator.limits.threads is None and evaluator.store == "store"


def test_one_worker_or_an_unisolated_runner_runs_every_job_here_in_order():
    for evaluator, workers in ((FakeEvaluator(), 1), (FakeEvaluator(sandbox=SimpleNamespace()), 4)):
        jobs = [_job("a", 0.05), _job("b", 0.0)]
        run_jobs(evaluator, jobs, Summary(), workers=workers)  # type: ignore[arg-type]
        assert [(n, t) for n, t, _ in evaluator.seen] == [("a", "MainThread"), ("b", "MainThread")]


def test_each_thread_nests_its_own_phases():
    now = [0.0]
    clock = Phases(now=lambda: now[0])
    a_open, close_a = threading.Event(), threading.Event()

    def job_a() -> None:
        with clock.timed("job", "a"):
            a_open.set()
            close_a.wait(10)

    def job_b() -> None:
        a_open.wait(10)
        now[0] = 1.0
        with clock.timed("job", "b"):
            now[0] = 2.0
            with clock.timed("data set", "b"):
                now[0] = 5.0
            now[0] = 6.0

    first = threading.Thread(target=job_a)
    second = threading.Thread(target=job_b)
    first.start()
    second.start()
    second.join(10)
    now[0] = 10.0
    close_a.set()
    first.join(10)
    seconds = {(p.kind, p.label): p.seconds for p in clock.phases}
    # b's data set is charged to b's job only; a's job keeps all of its own ten seconds.
    assert seconds == {("data set", "b"): 3.0, ("job", "b"): 2.0, ("job", "a"): 10.0}


def _pid() -> int:
    return os.getpid()


def test_the_scoring_fork_waits_for_a_thread_that_is_writing():
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(call_limited(_pid, limits=ScoringLimits(wall_s=30))))
    with FORK_LOCK:  # a thread mid-write (LockedStream, the side-by-side log) holds it
        worker.start()
        time.sleep(1.0)
        assert not done, "call_limited forked while another thread held the stream lock"
    worker.join(30)
    assert done and done[0] != os.getpid()


def test_the_container_gets_thread_counts_that_match_its_share(tmp_path):
    runner = DockerRunner(client=None)
    folders = {name: tmp_path / name for name in ("job", "data", "models", "out")}
    for folder in folders.values():
        folder.mkdir()
    kwargs = dict(job_dir=folders["job"], data_dir=folders["data"], models_dir=folders["models"],
                  out_dir=folders["out"], gpu=False)  # fmt: skip
    default = runner.create_kwargs(limits=SandboxLimits(), **kwargs)["environment"]
    shared = runner.create_kwargs(limits=SandboxLimits(threads=1), **kwargs)["environment"]
    quota = runner.create_kwargs(limits=SandboxLimits(cpus=0.5), **kwargs)["environment"]
    assert all(default[v] == "2" and shared[v] == "1" and quota[v] == "1" for v in THREAD_VARIABLES)
    assert {k: default[k] for k in CONTAINER_ENV} == CONTAINER_ENV  # the fixed part is untouched


def test_auto_picks_one_job_per_core_while_memory_lasts():
    def ev(side_by_side: bool = True, gpu: bool = False, memory: str = "6g") -> Any:
        return SimpleNamespace(sandbox=SimpleNamespace(side_by_side=side_by_side), use_gpu=gpu,
                               limits=SandboxLimits(memory=memory))  # fmt: skip

    assert auto_workers(ev(), cpus=2, memory=24 * GiB) == 2
    assert auto_workers(ev(), cpus=16, memory=14 * GiB) == 2  # (14 - 2) GiB / 6 GiB each
    assert auto_workers(ev(memory="512m"), cpus=16, memory=14 * GiB) == 16
    assert auto_workers(ev(gpu=True), cpus=16, memory=128 * GiB) == 1
    assert auto_workers(ev(side_by_side=False), cpus=16, memory=128 * GiB) == 1
    assert auto_workers(ev(), cpus=4, memory=4 * GiB) == 1  # not even one fits: still one


def test_jobs_option_takes_auto_or_a_positive_count():
    assert (jobs_value("auto"), jobs_value("AUTO"), jobs_value("3")) == (0, 0, 3)
    for bad in ("0", "-1", "two", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="auto"):
            jobs_value(bad)
