"""The main job: evaluate submissions, one sandboxed run per (submission, track, data set).

For every submission: validate its manifest (an invalid one is reported and skipped, never fatal), then for
each of its tracks and each requested data set compute the result key from content hashes — image inputs,
data, benchmark version, runner — and reuse a FINISHED MLflow run with that key. Otherwise fetch weights,
build the image, write the job, run it in the sandbox (or in-process without Docker) with ``/out`` on a
filesystem of its own (the runner's ``output_volume``; tag ``out_limit`` says how ``/out`` was limited),
check the output and store it. One failing submission never stops the others; every failure gets a
one-line reason in the terminal and in MLflow. Everything a run writes is checked (:func:`read_result`)
before it is stored, and only ``result.json`` and the artifacts its track declares are stored.
Side effects: docker images, ``<state>/`` (caches, MLflow, a fresh ``jobs/<key>-*`` folder per attempt,
removed once the attempt's outcome is stored, succeeded or failed), a lock file; under the lock, containers
and ``/out`` filesystems that a killed evaluation of the same state folder left behind are removed, and
runs it left RUNNING are marked FAILED when their key is evaluated again.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from evaluators.asking.reuse import questions_reused
from evaluators.datasets import DATASETS, dataset_hash
from evaluators.schema import Job, TrackOptions
from evaluators.tracks import TRACKS, benchmark_version
from leaderboard.data.prepare import DataError, prepare_dataset
from leaderboard.execution.endpoint_runner import CACHE_DIR, EndpointRunner, endpoint_tag
from leaderboard.execution.engine import GpuChoice, RunnerKind, select_engine
from leaderboard.execution.images import DEFAULT_BASE_IMAGE, ImageBuildError, ImageSpec, image_tag
from leaderboard.execution.job_inputs import (
    data_view,
    decoding_params,
    git_commit,
    job_document,
    job_inputs,
)
from leaderboard.execution.limits import ScoringLimitError, ScoringLimits, call_limited
from leaderboard.execution.locks import evaluation_lock, file_lock
from leaderboard.execution.outfs import unmount_below
from leaderboard.execution.parallel import run_jobs
from leaderboard.execution.phases import Phases
from leaderboard.execution.progress import ProgressDisplay
from leaderboard.execution.results import ResultError, ignored_outputs, read_result
from leaderboard.execution.sandbox import Runner, SandboxLimits, hardware_info, printable
from leaderboard.execution.weights import WeightsError, fetch_weights, model_revision
from leaderboard.intake.endpoints import EndpointModel
from leaderboard.intake.manifest import ManifestError, Submission, discover, load_submission
from leaderboard.settings import Settings
from leaderboard.store import ResultStore, run_key

Log = Callable[[str], None]


@dataclass
class Summary:
    """What an evaluation did: counts and one line per failure.

    Attributes
    ----------
    reused, computed : int
        Results found in MLflow / computed now.
    failed, invalid : list of str
        One line per failed job / invalid manifest.
    runner : str
        Where the jobs ran.
    seconds : float
        Wall time.
    preview : str
        The options that make these runs previews (:meth:`evaluators.schema.TrackOptions.preview`, e.g.
        ``--limit 3``); empty when they are board runs.
    phases : Phases
        Where the time went (base image, wheelhouse, image builds, data sets, weights, jobs).
    """

    reused: int = 0
    computed: int = 0
    failed: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    runner: str = ""
    seconds: float = 0.0
    preview: str = ""
    phases: Phases = field(default_factory=Phases)

    def line(self) -> str:
        """One-line summary for the terminal; says when the runs are previews the board will not take.

        Examples
        --------
        >>> Summary(computed=1, runner="docker", preview="--limit 3").line()  # doctest: +ELLIPSIS
        '1 result(s) computed, ... docker, 0.0 s; a preview (--limit 3): shown locally, the board will not...'
        """
        line = (
            f"{self.computed} result(s) computed, {self.reused} reused from MLflow (no model work), "
            f"{len(self.failed)} failed, {len(self.invalid)} invalid manifest(s) — runner {self.runner}, "
            f"{self.seconds:.1f} s"
        )
        if self.preview:  # said here, at the run, not only when a site build refuses it later
            line += (
                f"; a preview ({self.preview}): shown locally, the board will not take it "
                f"(re-run without {self.preview} to publish)"
            )
        return line


def _build_cause(exc: ImageBuildError) -> str:
    """Return the most telling line of a failed build: pip's error rather than Docker's "The command …"."""
    if exc.reason.startswith("The command"):
        errors = [
            line.strip()
            for line in exc.log_tail.splitlines()
            if line.strip().startswith("ERROR:") and not line.strip().startswith("ERROR: The command")
        ]
        if errors:
            return errors[-1].removeprefix("ERROR:").strip()
    return exc.reason


@dataclass(frozen=True)
class PlannedJob:
    """One (submission, track, data set) to evaluate: the unit every executor runs."""

    submission: Submission
    folder: Path
    track: str
    dataset: str

    @property
    def label(self) -> str:
        """``submission × track × data set``, as the terminal shows it."""
        return f"{self.submission.id} × {self.track} × {self.dataset}"


@dataclass(frozen=True)
class ResultKey:
    """A job's result key and what it was computed from (:meth:`Evaluator.result_key`)."""

    key: str
    fields: dict[str, str]
    data_root: Path
    data_hash: str
    version: str
    spec: ImageSpec | None


@dataclass
class Evaluator:
    """Runs the evaluation of a set of submissions against the store.

    Parameters
    ----------
    repo_root, state_dir : pathlib.Path
        Repository root (``submissions/``, ``containers/``, ``evaluators/``) and state folder.
    store : ResultStore
        Where results go.
    runner : {"auto", "docker", "in-process"} or Runner
        ``auto`` uses Docker when an engine answers, else the in-process runner (loudly); a
        :class:`~leaderboard.execution.sandbox.Runner` object is used as given
        (:func:`leaderboard.execution.engine.select_engine`).
    gpu : {"auto", "on", "off"}
        Request GPUs from Docker (``auto``: when the engine has an NVIDIA runtime).
    client : docker.DockerClient, optional
        The Docker engine to build images and run containers with (default: connect from the
        environment when the runner needs one).
    base_image : str
        Base image of the submission images.
    options : evaluators.tracks.TrackOptions
        Seed, molecule limit and distances (part of the benchmark version).
    submissions_dir : pathlib.Path, optional
        Where the submissions live (default ``repo_root/submissions``).
    log : callable
        Receives progress lines.
    limits : leaderboard.execution.sandbox.SandboxLimits
        Resource limits and sandbox switches of every run (recorded with each run as the tag ``sandbox``);
        ``read_only_root=False`` for GPU hosts whose container hooks must write.
    scoring_limits : leaderboard.execution.limits.ScoringLimits
        Wall clock and memory of the host's reading and scoring of each run's output (a child process).
    settings : leaderboard.settings.Settings, optional
        Data mirror, hub address and the maintainer's allow lists (default: none of them).
    progress_stream : text stream, optional
        Where each job's live progress is shown (a bar on a terminal, a line every
        ``progress_interval_s`` otherwise); ``None`` shows none.
    progress_interval_s : float
        Seconds between plain progress lines.
    endpoint_options : dict
        Passed to :class:`~leaderboard.execution.endpoint_runner.EndpointRunner` for API submissions
        (``environ``: where keys are read; ``adapter_options``: retries and backoff; ``spend``: the
        evaluation's cap and usage ledger, ``evaluate --max-requests/--max-tokens``).
    extra_tags : dict
        Added to every run this evaluator stores (a Slurm job adds its job id and GPUs); not part of the key.
    work_root : pathlib.Path, optional
        Where the per-attempt job folders go (default ``state_dir/jobs``, which a local evaluation sweeps
        for leftovers when it starts: jobs run elsewhere keep out of it).
    only_tracks : tuple of str
        Run only these tracks (``evaluate --track``: a track whose definition changed is rerun without
        touching the others, whose results stay as stored); empty: every track a submission selects.
    jobs : int
        Docker jobs run at once (:mod:`leaderboard.execution.parallel`); 1: one after another.
    """

    repo_root: Path
    state_dir: Path
    store: ResultStore
    runner: RunnerKind | Runner = "auto"
    gpu: GpuChoice = "auto"
    base_image: str = DEFAULT_BASE_IMAGE
    options: TrackOptions = field(default_factory=TrackOptions)
    submissions_dir: Path | None = None
    log: Log = print
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    scoring_limits: ScoringLimits = field(default_factory=ScoringLimits)
    settings: Settings | None = None
    client: Any = None
    progress_stream: TextIO | None = None
    progress_interval_s: float = 30.0
    endpoint_options: dict[str, Any] = field(default_factory=dict)
    extra_tags: dict[str, str] = field(default_factory=dict)
    work_root: Path | None = None
    only_tracks: tuple[str, ...] = ()
    jobs: int = 1

    def __post_init__(self) -> None:
        if self.settings is None:
            self.settings = Settings(repo_root=self.repo_root, state_dir=self.state_dir)
        engine = select_engine(
            self.runner,
            self.gpu,
            owner=self.state_dir,
            repo_root=self.repo_root,
            log=self.log,
            client=self.client,
        )
        self.sandbox: Runner = engine.runner
        self.client = engine.client
        self.runner_name = engine.name
        self.use_gpu = engine.use_gpu
        self.hardware = hardware_info()
        self.commit = git_commit(self.repo_root)
        self._base: str | None = None
        self.phases = Phases()
        # Jobs side by side share data sets, weights, images, the store and the job folders: each prepares
        # under this lock, so only the runs and their scoring overlap.
        self._prep = threading.RLock()

    def resolved_base_image(self) -> str:
        """Return the base image actually used (the configured one, or the registry-free fallback)."""
        if self._base is None:
            if self.client is None:
                self._base = self.base_image
            else:
                from leaderboard.execution.images import ensure_base_image

                with self.phases.timed("base image", self.base_image):
                    self._base = ensure_base_image(self.client, self.base_image, self.repo_root, log=self.log)
        return self._base

    def plan(
        self, submission_ids: list[str] | None, datasets: list[str], summary: Summary
    ) -> list[PlannedJob]:
        """Return the jobs to run: every valid submission × its tracks × the requested sets that serve them.

        An invalid manifest is reported (``summary.invalid`` and the log) and skipped, never fatal. Every
        executor starts from this list, so the jobs and their result keys never depend on which one runs them.

        Raises
        ------
        ValueError
            If a requested submission id does not exist.
        """
        manifests = discover(self.submissions_dir or self.repo_root / "submissions")
        if submission_ids:
            known = {p.parent.name: p for p in manifests}
            missing = [s for s in submission_ids if s not in known]
            if missing:
                raise ValueError(f"unknown submission(s) {missing}; known: {sorted(known)}")
            manifests = [known[s] for s in submission_ids]
        allow = sorted(self.settings.allow_remote_code)
        jobs: list[PlannedJob] = []
        skipped = 0
        for path in manifests:
            try:
                sub = load_submission(path, allow_remote_code=allow)
            except ManifestError as exc:
                summary.invalid.append(f"{path}: {len(exc.problems)} problem(s)")
                self.log(f"INVALID {path} (skipped):\n  " + "\n  ".join(map(str, exc.problems)))
                continue
            for track in sub.selected_tracks():
                if self.only_tracks and track not in self.only_tracks:
                    continue
                applies = [ds for ds in datasets if TRACKS.get(track).accepts(DATASETS.get(ds))]
                jobs += [PlannedJob(sub, path.parent, track, ds) for ds in applies]
                skipped += len(datasets) - len(applies)
        if skipped:
            self.log(
                f"{skipped} submission × track × data set combination(s) skipped: the data set does not "
                "serve the track (see the data sets on the methodology page)"
            )
        return jobs

    def run(self, submission_ids: list[str] | None, datasets: list[str]) -> Summary:
        """Evaluate the chosen submissions (all when ``None``) on ``datasets`` here, ``jobs`` at a time."""
        started = time.perf_counter()
        summary = Summary(runner=self.runner_name, preview=self.options.preview(), phases=self.phases)
        jobs = self.plan(submission_ids, datasets, summary)
        with evaluation_lock(self.state_dir):
            orphans = self.sandbox.remove_orphans() if self.client is not None else 0
            if orphans:
                self.log(f"removed {orphans} container(s) left running by an evaluation that was killed")
            mounts = unmount_below(self.state_dir / "jobs")
            if mounts:
                self.log(f"unmounted {mounts} output filesystem(s) left by an evaluation that was killed")
            with questions_reused():  # every model is asked the same questions: built once, not per job
                run_jobs(self, jobs, summary, workers=self.jobs)
        summary.seconds = time.perf_counter() - started
        return summary

    def attempt(self, job: PlannedJob, label: str, summary: Summary) -> str:
        """Run one job here, count its outcome in ``summary``; return ``reused``, ``computed`` or the failure.

        Never raises for a failure of the job itself: failures before a run exists (data, weights, image)
        get a FAILED run with the reason, like failures of the run.
        """
        sub, folder, track, dataset = job.submission, job.folder, job.track, job.dataset
        try:  # the view and the scoring build the same questions: once (and once per evaluation, in run)
            with self.phases.timed("job", job.label), questions_reused():
                status = self._one(sub, folder, track, dataset, label)
        except (DataError, WeightsError, ImageBuildError, OSError, ValueError, RuntimeError) as exc:
            if isinstance(exc, ImageBuildError):
                reason = printable(f"image build failed: {_build_cause(exc)}")[:1000]
            else:
                reason = printable(str(exc))[:1000]
            log_tail = getattr(exc, "log_tail", "")
            self.record_failure(sub, track, dataset, reason, log_tail)
            summary.failed.append(f"{label}: {reason}")
            self.log(f"{label}: FAILED — {reason}")
            if log_tail:
                tail = [printable(line) for line in log_tail.splitlines()[-30:]]
                self.log("  --- last lines of the log ---\n" + "\n".join(f"  | {t}" for t in tail))
            return reason
        if status == "reused":
            summary.reused += 1
        elif status == "computed":
            summary.computed += 1
        else:
            summary.failed.append(f"{label}: {status}")
        return status

    def _build_log(self, line: str) -> None:
        # Docker's step-by-step chatter stays in the build log (kept for failures); the terminal gets steps.
        if line.startswith(("Step ", "built ", "wheelhouse", "base image", "WARNING", "ERROR")):
            self.log(f"  {line}")

    def record_failure(self, sub: Submission, track: str, dataset: str, reason: str, log_tail: str) -> None:
        """Store a FAILED run with ``reason`` for a job that failed before its run existed."""
        tags = {
            "submission": sub.id,
            "track": track,
            "dataset": dataset,
            "runner": "endpoint" if isinstance(sub.model, EndpointModel) else self.runner_name,
            "git_commit": self.commit,
            "hardware": json.dumps(self.hardware),
            "gpu": str(self.use_gpu),
            "sandbox": self.limits.model_dump_json(),
            **self.extra_tags,
        }
        run_id = self.store.start(
            f"failed-{time.time_ns()}", name=f"{sub.id}/{track}/{dataset}", tags=tags, params={}
        )
        self.store.fail(run_id, reason, log_tail)

    def result_key(self, sub: Submission, folder: Path, track: str, dataset: str) -> ResultKey:
        """Compute a job's result key from content hashes (prepares the data set; builds no image).

        The key is what makes a result reusable and what every executor names its work by: two writers with
        the same key compute the same result.
        """
        with self.phases.timed("data set", dataset):
            data_root = prepare_dataset(dataset, self.state_dir, mirror=self.settings.data_mirror,
                                        log=self.log)  # fmt: skip
        data_hash = dataset_hash(dataset, data_root)
        # What the model is asked decides the version: a text-only model is never asked image questions.
        version = benchmark_version(track, self.options, data_hash, images="image" in sub.model.inputs)
        # An API submission has no image, weights or code: the host runs the track and calls the API.
        endpoint = isinstance(sub.model, EndpointModel)
        spec = None
        if endpoint:
            tag = endpoint_tag(sub, folder, self.repo_root)
        else:
            spec = ImageSpec(
                submission_id=sub.id,
                submission_dir=folder.resolve(),
                extra_requirements=tuple(sub.requirements),
                base_image=self.resolved_base_image(),
                torch_variant="cuda" if self.use_gpu else "cpu",
            )
            tag = image_tag(spec, self.repo_root)
        key_fields = {
            "submission": sub.id,
            "image_tag": tag,
            "track": track,
            "dataset": dataset,
            "benchmark_version": version,
            "runner": "endpoint" if endpoint else self.runner_name,
        }
        return ResultKey(run_key(key_fields), key_fields, data_root, data_hash, version, spec)

    @contextmanager
    def _exclusive(self, label: str) -> Iterator[None]:
        """Hold the preparation lock; time a wait for it (another job preparing) as its own phase."""
        if not self._prep.acquire(blocking=False):
            with self.phases.timed("waiting", label):
                self._prep.acquire()
        try:
            yield
        finally:
            self._prep.release()

    def _one(self, sub: Submission, folder: Path, track: str, dataset: str, label: str) -> str:
        with self._exclusive(label):
            computed = self.result_key(sub, folder, track, dataset)
        # One writer per key at a time, whichever executor or process: the check for a FINISHED run, the
        # clean-up of interrupted ones and the new run happen under it, so no key gets two FINISHED runs.
        with file_lock(self.state_dir / "locks" / f"{computed.key}.lock"):
            return self._one_locked(sub, folder, track, dataset, label, computed)

    def _one_locked(
        self, sub: Submission, folder: Path, track: str, dataset: str, label: str, computed: ResultKey
    ) -> str:
        with self._exclusive(label):
            prepared = self._prepare(sub, folder, track, dataset, label, computed)
        if isinstance(prepared, str):
            return prepared
        run_id, tag, job, work, runner, weights = prepared
        try:
            with self._exclusive(label):
                job, container_data = data_view(job, work, computed.data_root, computed.data_hash,
                                                endpoint=computed.spec is None)  # fmt: skip
                models = job_inputs(work, job, weights)
            return self._attempt(
                run_id, label, tag, job, work, models, computed.data_root, container_data, folder, runner
            )
        finally:
            # Succeeded or failed: once the outcome is stored, the job folder and the run's output go.
            shutil.rmtree(work, ignore_errors=True)

    def _prepare(
        self, sub: Submission, folder: Path, track: str, dataset: str, label: str, computed: ResultKey
    ) -> str | tuple[str, str, Job, Path, Runner, Path | None]:
        """Start a job's run: its weights, image, MLflow run and folder; ``reused`` when the store has it."""
        key, key_fields, spec = computed.key, computed.fields, computed.spec
        data_hash, version, tag = computed.data_hash, computed.version, computed.fields["image_tag"]
        endpoint = spec is None
        if self.store.find_finished(key) is not None:
            self.log(f"{label}: up to date (MLflow run reused, no model work)")
            return "reused"
        self.log(f"{label}: evaluating")
        with self.phases.timed("weights", sub.id):
            pickle = sub.id in self.settings.allow_pickle
            weights = fetch_weights(sub, folder, self.state_dir, allow_pickle=pickle,
                                    hf_endpoint=self.settings.hf_endpoint,
                                    data_mirror=self.settings.data_mirror)  # fmt: skip
        image_id = ""
        if self.client is not None and not endpoint:
            from leaderboard.execution.images import ensure_image

            # Jobs of one state folder running at once (Slurm) share its wheelhouse: one build at a time.
            lock = file_lock(self.state_dir / "locks" / "image-build.lock")
            with lock, self.phases.timed("image build", sub.id):
                built = ensure_image(self.client, spec, repo_root=self.repo_root, state_dir=self.state_dir,
                                     log=self._build_log, timed=self.phases.timed)  # fmt: skip
            image_id = built.image_id
        tags = {
            **key_fields,
            "data_hash": data_hash,
            "model_revision": model_revision(sub),
            "git_commit": self.commit,
            "hardware": json.dumps(self.hardware),
            "gpu": str(self.use_gpu and not endpoint),
            "sandbox": self.limits.model_dump_json(),
            "image_id": image_id,
            **self.extra_tags,
        }
        params = {
            "adapter": "endpoint" if endpoint else sub.adapter,
            "architecture": sub.model.architecture,
            "pooling": sub.pooling,
            "max_length": sub.tokenizer.max_length,
            "batch_size": sub.batch_size,
            "seed": self.options.seed,
            "limit": self.options.limit,
            # With seed and limit, what tells a preview from a board run (leaderboard.store.run_preview).
            "distances": ",".join(self.options.distances),
            **decoding_params(track, self.options),
            **{f"option.{k}": v for k, v in sub.options.items()},
            # The manifest's endpoint fields: the key variable's name, never its value.
            **({f"endpoint.{k}": v for k, v in sub.model.model_dump().items()} if endpoint else {}),
        }
        interrupted = self.store.fail_interrupted(
            key, "interrupted: the evaluation stopped before this run ended; it was run again"
        )
        if interrupted:
            self.log(f"{label}: {interrupted} interrupted run(s) of an earlier evaluation marked FAILED")
        run_id = self.store.start(key, name=f"{sub.id}/{track}/{dataset}", tags=tags, params=params)
        job = job_document(
            sub,
            track=track,
            dataset=dataset,
            options=self.options,
            version=version,
            has_weights=weights is not None,
        )
        # A fresh folder per attempt: a process left over from a killed evaluation cannot write into it.
        jobs_dir = self.work_root or self.state_dir / "jobs"
        jobs_dir.mkdir(parents=True, exist_ok=True)
        for stale in jobs_dir.glob(f"{key}*"):
            unmount_below(stale)
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=jobs_dir))
        runner = (
            EndpointRunner(sub, cache_dir=self.state_dir / CACHE_DIR, **self.endpoint_options)
            if endpoint
            else self.sandbox
        )
        return run_id, tag, job, work, runner, weights

    def _attempt(
        self,
        run_id: str,
        label: str,
        tag: str,
        job: Job,
        work: Path,
        models: Path,
        data_root: Path,
        container_data: Path,
        folder: Path,
        runner: Runner,
    ) -> str:
        """Run ``job`` with ``runner``, its ``/out`` limited, then store its checked result or its failure.

        ``container_data`` is mounted at ``/data`` (the data root, or the job's label-free view); the
        host's scoring reads ``data_root``.
        """
        display = (
            ProgressDisplay(label, stream=self.progress_stream, interval_s=self.progress_interval_s)
            if self.progress_stream is not None
            else None
        )
        # The outputs are read and stored inside the volume: leaving it removes them.
        with runner.output_volume(work / "out", self.limits) as volume:
            self.store.set_tags(run_id, {"out_limit": volume.note})
            if not volume.kernel and runner.name != "endpoint":  # no submission code writes there
                self.log(f"{label}: WARNING — output limit: {volume.note}")
            try:
                outcome = runner.run(
                    tag,
                    job_dir=work / "job",
                    data_dir=container_data,
                    models_dir=models,
                    out_dir=work / "out",
                    submission_dir=folder.resolve(),
                    limits=self.limits,
                    gpu=self.use_gpu,
                    on_progress=display.update if display is not None else None,
                )
            finally:
                if display is not None:
                    display.close()
            self.store.set_tags(run_id, {"runner": outcome.runner, "wall_s": f"{outcome.wall_s:.1f}"})
            usage = getattr(runner, "usage", None)  # an endpoint run: what it spent (endpoint_spend.JobUsage)
            if usage is not None:
                self.store.set_tags(run_id, usage.tags())
                self.log(f"{label}: {usage.line()}")
            if outcome.status != "succeeded":
                self.store.fail(run_id, outcome.reason, outcome.log_tail)
                self.log(f"{label}: FAILED ({outcome.status}) — {outcome.reason}")
                return f"{outcome.status}: {outcome.reason}"
            try:  # in a child under limits: the host parses and scores what the submission wrote
                result = call_limited(read_result, work / "out", job=job, data_dir=data_root,
                                      limits=self.scoring_limits, passthrough=(ResultError,))  # fmt: skip
            except (ResultError, ScoringLimitError) as exc:
                self.store.fail(run_id, f"invalid output: {exc}", outcome.log_tail)
                self.log(f"{label}: FAILED — invalid output: {exc}")
                return f"invalid output: {exc}"
            note = ignored_outputs(work / "out", result)
            if note:
                self.log(f"{label}: {note}")
            self.store.finish(
                run_id, result, work / "out", log_tail=f"{outcome.log_tail}\n{note}" if note else ""
            )
        self.log(f"{label}: done in {outcome.wall_s:.1f} s (run {run_id})")
        return "computed"
