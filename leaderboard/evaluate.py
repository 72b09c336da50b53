"""The main job: evaluate submissions, one sandboxed run per (submission, track, data set).

For every submission: validate its manifest (an invalid one is reported and skipped, never fatal), then for
each of its tracks and each requested data set compute the result key from content hashes — image inputs,
data, benchmark version, runner — and reuse a FINISHED MLflow run with that key. Otherwise fetch weights,
build the image, write the job, run it in the sandbox (or in-process without Docker), check the output and
store it. One failing submission never stops the others; every failure gets a one-line reason in the
terminal and in MLflow. Side effects: docker images, ``<state>/`` (jobs, caches, MLflow), and a lock file.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evaluators.datasets import dataset_hash
from evaluators.tracks import TrackOptions, benchmark_version
from leaderboard.data import DataError, prepare_dataset
from leaderboard.images import DEFAULT_BASE_IMAGE, ImageBuildError, ImageSpec, image_tag
from leaderboard.manifest import ManifestError, Submission, discover, load_submission
from leaderboard.store import ResultStore, run_key
from leaderboard.weights import WeightsError, fetch_weights, model_revision

MAX_RESULT_BYTES = 64 * 1024 * 1024
Log = Callable[[str], None]


class EvaluationLockedError(RuntimeError):
    """Another evaluation holds the state folder's lock."""


@dataclass
class Summary:
    """What an evaluation did: counts and one line per failure."""

    reused: int = 0
    computed: int = 0
    failed: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    runner: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        """One-line summary for the terminal."""
        return (
            f"{self.computed} result(s) computed, {self.reused} reused from MLflow (no model work), "
            f"{len(self.failed)} failed, {len(self.invalid)} invalid manifest(s) — runner {self.runner}, "
            f"{self.seconds:.1f} s"
        )


@contextmanager
def evaluation_lock(state_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the state folder so two evaluations never write the store at once."""
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / "evaluate.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EvaluationLockedError(
                f"another evaluation is running on {state_dir} (lock {state_dir / 'evaluate.lock'}); "
                "wait for it to finish, then run again"
            ) from None
        handle.write(str(os.getpid()))
        handle.flush()
        yield


def git_commit(repo_root: Path) -> str:
    """Return the commit, with ``-dirty`` when tracked files changed; ``unknown`` outside git."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo_root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo_root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def job_document(
    sub: Submission, *, track: str, dataset: str, options: TrackOptions, version: str, has_weights: bool
) -> dict[str, Any]:
    """Return the ``job.json`` the evaluators read (see ``evaluators/job.py``)."""
    return {
        "schema_version": 1,
        "submission_id": sub.id,
        "track": track,
        "dataset": dataset,
        "benchmark_version": version,
        "track_options": {"seed": options.seed, "limit": options.limit, "distances": list(options.distances)},
        "model": {
            "adapter": sub.adapter,
            "path": "." if has_weights else None,
            "architecture": sub.model.architecture,
            "pooling": sub.pooling,
            "max_length": sub.tokenizer.max_length,
            "prompt_prefix": sub.tokenizer.prompt_prefix,
            "trust_remote_code": sub.trust_remote_code,
            "batch_size": sub.batch_size,
            "options": dict(sub.options),
            "code": sub.code.model_dump() if sub.code else None,
        },
    }


class ResultError(ValueError):
    """The container's output is missing, oversized or malformed."""


def read_result(out_dir: Path, *, expected_version: str) -> dict[str, Any]:
    """Read and check ``result.json`` written by a (possibly hostile) submission run.

    Raises
    ------
    ResultError
        If the file is missing, larger than 64 MiB, not JSON, lacks fields, has non-finite metric values, or
        was computed for another benchmark version.
    """
    path = out_dir / "result.json"
    if not path.is_file():
        raise ResultError("the run wrote no result.json")
    if path.stat().st_size > MAX_RESULT_BYTES:
        raise ResultError(f"result.json is {path.stat().st_size} bytes, over the {MAX_RESULT_BYTES} limit")
    try:
        result = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultError(f"result.json is not valid JSON: {exc}") from None
    if not isinstance(result, dict) or not isinstance(result.get("metrics"), list):
        raise ResultError("result.json has no 'metrics' list")
    if result.get("benchmark_version") != expected_version:
        raise ResultError(
            f"result.json is for benchmark version {result.get('benchmark_version')!r}, "
            f"expected {expected_version}"
        )
    keys = {"augmentation", "layer", "distance", "direction", "subset", "metric", "value"}
    for row in result["metrics"]:
        if not isinstance(row, dict) or set(row) != keys:
            raise ResultError(f"malformed metric row {str(row)[:200]}")
        value = row["value"]
        if not isinstance(value, int | float) or not math.isfinite(value):
            raise ResultError(f"metric {row['metric']} has non-finite value {value!r}")
    return result


@dataclass
class Evaluator:
    """Runs the evaluation of a set of submissions against the store.

    Parameters
    ----------
    repo_root, state_dir : pathlib.Path
        Repository root (``submissions/``, ``containers/``, ``evaluators/``) and state folder.
    store : ResultStore
        Where results go.
    runner : {"auto", "docker", "in-process"}
        ``auto`` uses Docker when an engine answers, else the in-process runner (loudly).
    gpu : {"auto", "on", "off"}
        Request GPUs from Docker (``auto``: when the engine has an NVIDIA runtime).
    base_image : str
        Base image of the submission images.
    options : evaluators.tracks.TrackOptions
        Seed, molecule limit and distances (part of the benchmark version).
    submissions_dir : pathlib.Path, optional
        Where the submissions live (default ``repo_root/submissions``).
    log : callable
        Receives progress lines.
    """

    repo_root: Path
    state_dir: Path
    store: ResultStore
    runner: Literal["auto", "docker", "in-process"] = "auto"
    gpu: Literal["auto", "on", "off"] = "auto"
    base_image: str = DEFAULT_BASE_IMAGE
    options: TrackOptions = field(default_factory=TrackOptions)
    submissions_dir: Path | None = None
    log: Log = print

    def __post_init__(self) -> None:
        from leaderboard import runner as runner_mod

        self._runner_mod = runner_mod
        client = None if self.runner == "in-process" else runner_mod.docker_client_or_none()
        if client is None and self.runner == "docker":
            raise RuntimeError(
                "--runner docker was requested but no Docker engine answers; start dockerd "
                "(see README: 'Without Docker')"
            )
        self.client = client
        if client is None:
            self.log(
                "WARNING: no Docker engine — running submissions IN-PROCESS, WITHOUT A SANDBOX. Results "
                "are recorded with runner=in-process. Only run code you trust this way."
            )
            self.sandbox = runner_mod.InProcessRunner()
            self.runner_name = "in-process"
            self.use_gpu = False
        else:
            self.sandbox = runner_mod.DockerRunner(client)
            self.runner_name = "docker"
            self.use_gpu = self.gpu == "on" or (self.gpu == "auto" and runner_mod.gpu_available(client))
        self.hardware = runner_mod.hardware_info()
        self.commit = git_commit(self.repo_root)
        self._base: str | None = None

    def _base_image(self) -> str:
        if self._base is None:
            if self.client is None:
                self._base = self.base_image
            else:
                from leaderboard.images import ensure_base_image

                self._base = ensure_base_image(self.client, self.base_image, self.repo_root, log=self.log)
        return self._base

    def run(self, submission_ids: list[str] | None, datasets: list[str]) -> Summary:
        """Evaluate the chosen submissions (all when ``None``) on ``datasets``; return the summary."""
        started = time.perf_counter()
        summary = Summary(runner=self.runner_name)
        manifests = discover(self.submissions_dir or self.repo_root / "submissions")
        if submission_ids:
            known = {p.parent.name: p for p in manifests}
            missing = [s for s in submission_ids if s not in known]
            if missing:
                raise ValueError(f"unknown submission(s) {missing}; known: {sorted(known)}")
            manifests = [known[s] for s in submission_ids]
        allow = [s for s in os.environ.get("CHEMROBUST_ALLOW_REMOTE_CODE", "").split(",") if s]
        jobs: list[tuple[Submission, Path, str, str]] = []
        for path in manifests:
            try:
                sub = load_submission(path, allow_remote_code=allow)
            except ManifestError as exc:
                summary.invalid.append(f"{path}: {len(exc.problems)} problem(s)")
                self.log(f"INVALID {path} (skipped):\n  " + "\n  ".join(exc.problems))
                continue
            jobs += [(sub, path.parent, track, ds) for track in sub.selected_tracks() for ds in datasets]
        with evaluation_lock(self.state_dir):
            for number, (sub, folder, track, dataset) in enumerate(jobs, 1):
                label = f"[{number}/{len(jobs)}] {sub.id} × {track} × {dataset}"
                try:
                    status = self._one(sub, folder, track, dataset, label)
                except (DataError, WeightsError, ImageBuildError, OSError, ValueError, RuntimeError) as exc:
                    # Failures before a run exists (data, weights, image) get a FAILED run with the reason.
                    reason = " ".join(str(exc).split())[:1000]
                    self._record_failure(sub, track, dataset, reason, getattr(exc, "log_tail", ""))
                    summary.failed.append(f"{label}: {reason}")
                    self.log(f"{label}: FAILED — {reason}")
                    continue
                if status == "reused":
                    summary.reused += 1
                elif status == "computed":
                    summary.computed += 1
                else:
                    summary.failed.append(f"{label}: {status}")
        summary.seconds = time.perf_counter() - started
        return summary

    def _build_log(self, line: str) -> None:
        # Docker's step-by-step chatter stays in the build log (kept for failures); the terminal gets steps.
        if line.startswith(("Step ", "built ", "wheelhouse", "base image", "WARNING", "ERROR")):
            self.log(f"  {line}")

    def _record_failure(self, sub: Submission, track: str, dataset: str, reason: str, log_tail: str) -> None:
        tags = {
            "submission": sub.id,
            "track": track,
            "dataset": dataset,
            "runner": self.runner_name,
            "git_commit": self.commit,
            "hardware": json.dumps(self.hardware),
        }
        run_id = self.store.start(
            f"failed-{time.time_ns()}", name=f"{sub.id}/{track}/{dataset}", tags=tags, params={}
        )
        self.store.fail(run_id, reason, log_tail)

    def _one(self, sub: Submission, folder: Path, track: str, dataset: str, label: str) -> str:
        data_root = prepare_dataset(dataset, self.state_dir, log=self.log)
        data_hash = dataset_hash(dataset, data_root)
        version = benchmark_version(track, self.options, data_hash)
        spec = ImageSpec(
            submission_id=sub.id,
            submission_dir=folder.resolve(),
            extra_requirements=tuple(sub.requirements),
            base_image=self._base_image(),
            torch_variant="cuda" if self.use_gpu else "cpu",
        )
        tag = image_tag(spec, self.repo_root)
        key_fields = {
            "submission": sub.id,
            "image_tag": tag,
            "track": track,
            "dataset": dataset,
            "benchmark_version": version,
            "runner": self.runner_name,
        }
        key = run_key(key_fields)
        if self.store.find_finished(key) is not None:
            self.log(f"{label}: up to date (MLflow run reused, no model work)")
            return "reused"
        self.log(f"{label}: evaluating")
        weights = fetch_weights(
            sub,
            folder,
            self.state_dir,
            allow_pickle=sub.id in os.environ.get("CHEMROBUST_ALLOW_PICKLE", "").split(","),
        )
        image_id = ""
        if self.client is not None:
            from leaderboard.images import ensure_image

            built = ensure_image(
                self.client,
                spec,
                repo_root=self.repo_root,
                state_dir=self.state_dir,
                log=self._build_log,
            )
            image_id = built.image_id
        tags = {
            **key_fields,
            "data_hash": data_hash,
            "model_revision": model_revision(sub),
            "git_commit": self.commit,
            "hardware": json.dumps(self.hardware),
            "gpu": str(self.use_gpu),
            "image_id": image_id,
        }
        params = {
            "adapter": sub.adapter,
            "architecture": sub.model.architecture,
            "pooling": sub.pooling,
            "max_length": sub.tokenizer.max_length,
            "batch_size": sub.batch_size,
            "seed": self.options.seed,
            "limit": self.options.limit,
            **{f"option.{k}": v for k, v in sub.options.items()},
        }
        run_id = self.store.start(key, name=f"{sub.id}/{track}/{dataset}", tags=tags, params=params)
        work = self.state_dir / "jobs" / key
        shutil.rmtree(work, ignore_errors=True)
        (work / "job").mkdir(parents=True)
        (work / "out").mkdir()
        empty_models = work / "models"
        empty_models.mkdir()
        job = job_document(
            sub,
            track=track,
            dataset=dataset,
            options=self.options,
            version=version,
            has_weights=weights is not None,
        )
        (work / "job" / "job.json").write_text(json.dumps(job, indent=1))
        from leaderboard.runner import SandboxLimits

        outcome = self.sandbox.run(
            tag,
            job_dir=work / "job",
            data_dir=data_root,
            models_dir=weights or empty_models,
            out_dir=work / "out",
            submission_dir=folder.resolve(),
            limits=SandboxLimits(),
            gpu=self.use_gpu,
        )
        self.store.set_tags(run_id, {"runner": outcome.runner, "wall_s": f"{outcome.wall_s:.1f}"})
        if outcome.status != "succeeded":
            self.store.fail(run_id, outcome.reason, outcome.log_tail)
            self.log(f"{label}: FAILED ({outcome.status}) — {outcome.reason}")
            return f"{outcome.status}: {outcome.reason}"
        try:
            result = read_result(work / "out", expected_version=version)
        except ResultError as exc:
            self.store.fail(run_id, f"invalid output: {exc}", outcome.log_tail)
            self.log(f"{label}: FAILED — invalid output: {exc}")
            return f"invalid output: {exc}"
        self.store.finish(run_id, result, work / "out")
        shutil.rmtree(work, ignore_errors=True)
        self.log(f"{label}: done in {outcome.wall_s:.1f} s (run {run_id})")
        return "computed"
