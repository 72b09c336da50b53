"""The main job: evaluate submissions, one sandboxed run per (submission, track, data set).

For every submission: validate its manifest (an invalid one is reported and skipped, never fatal), then for
each of its tracks and each requested data set compute the result key from content hashes — image inputs,
data, benchmark version, runner — and reuse a FINISHED MLflow run with that key. Otherwise fetch weights,
build the image, write the job, run it in the sandbox (or in-process without Docker), check the output and
store it. One failing submission never stops the others; every failure gets a one-line reason in the
terminal and in MLflow. Everything a run writes is checked (:func:`read_result`) before it is stored.
Side effects: docker images, ``<state>/`` (caches, MLflow, a fresh ``jobs/<key>-*`` folder per attempt),
a lock file; under the lock, containers that a killed evaluation of the same state folder left running are
removed, and runs it left RUNNING are marked FAILED when their key is evaluated again.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import math
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evaluators.datasets import dataset_hash
from evaluators.tracks import TrackOptions, benchmark_version
from leaderboard.execution.data import DataError, prepare_dataset
from leaderboard.execution.images import DEFAULT_BASE_IMAGE, ImageBuildError, ImageSpec, image_tag
from leaderboard.execution.runner import SandboxLimits, printable
from leaderboard.execution.weights import WeightsError, fetch_weights, model_revision
from leaderboard.intake.manifest import ManifestError, Submission, discover, load_submission
from leaderboard.store import ResultStore, run_key

MAX_RESULT_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_FILES = 100
MAX_DECOMPRESSED_BYTES = 1024**3
_OUTPUT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_LABEL = re.compile(r"^(-|[A-Za-z0-9][A-Za-z0-9_.:+-]{0,99})$")
_ROW_KEYS = ("augmentation", "layer", "distance", "direction", "subset", "metric", "value")
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


def _label_ok(value: Any) -> bool:
    return isinstance(value, str) and _LABEL.match(value) is not None


def _metric_bounds(metric: str) -> tuple[float, float, bool]:
    """``(low, high, integral)`` of a metric's possible values, by name (unknown names: any finite number)."""
    if metric.startswith(("acc_at_", "recall")) or metric in ("mrr", "chance_acc_at_1"):
        return 0.0, 1.0, False
    if metric.startswith("n_"):
        return 0.0, math.inf, True
    return -math.inf, math.inf, False


def _check_output_files(out_dir: Path) -> None:
    entries = sorted(out_dir.iterdir())
    if len(entries) > MAX_OUTPUT_FILES:
        raise ResultError(f"the run wrote {len(entries)} files, more than the {MAX_OUTPUT_FILES} allowed")
    for entry in entries:
        mode = entry.lstat().st_mode
        if not _OUTPUT_NAME.match(entry.name):
            raise ResultError(
                f"the output holds a file named {entry.name!r}; names may use letters, digits, '.', '_', '-'"
            )
        if stat.S_ISLNK(mode):
            raise ResultError(f"{entry.name!r} in the output is a symbolic link; a run may write only files")
        if not stat.S_ISREG(mode):
            raise ResultError(
                f"{entry.name!r} in the output is not a regular file; a run may write only files"
            )
        if entry.name.endswith(".gz"):
            _check_gzip(entry)


def _check_gzip(path: Path) -> None:
    """Decompress ``path`` as a stream, at most :data:`MAX_DECOMPRESSED_BYTES` (no gzip bombs on the host)."""
    total = 0
    try:
        with gzip.open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                total += len(chunk)
                if total > MAX_DECOMPRESSED_BYTES:
                    raise ResultError(
                        f"{path.name!r} decompresses to more than {MAX_DECOMPRESSED_BYTES} bytes"
                    )
    except (OSError, EOFError, zlib.error) as exc:
        raise ResultError(f"{path.name!r} is not a valid gzip file: {exc}") from None


def _check_rows(rows: list[Any], track: str) -> None:
    from leaderboard.store import metric_name

    seen: set[tuple[str, ...]] = set()
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or set(row) != set(_ROW_KEYS):
            raise ResultError(f"malformed metric row {number}: {str(row)[:200]}")
        labels = tuple(row[k] for k in _ROW_KEYS[:-1])
        bad = next((k for k in _ROW_KEYS[:-1] if not _label_ok(row[k])), None)
        if bad is not None:
            raise ResultError(
                f"metric row {number}: {bad!r} must be '-' or a name of letters, digits and '_.:+-' "
                f"(at most 100 characters), got {str(row[bad])[:100]!r}"
            )
        if labels in seen:
            raise ResultError(f"metric row {number} repeats {'/'.join(labels)}")
        seen.add(labels)
        if len(metric_name(track, row)) > 250:
            raise ResultError(f"metric row {number}: its MLflow name is longer than 250 characters")
        value, metric = row["value"], row["metric"]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ResultError(f"metric {metric} has non-finite value {value!r}")
        low, high, integral = _metric_bounds(metric)
        if not low <= value <= high or (integral and value != int(value)):
            kind = "a count" if integral else "a value"
            raise ResultError(
                f"metric row {number}: {metric} must be {kind} in [{low:g}, {high:g}], got {value!r}"
            )


def _check_curves(block: Any) -> None:
    if block is None:
        return
    if not isinstance(block, dict):
        raise ResultError("result.json: 'recall_at_k' must be an object with 'k' and 'curves'")
    ks, curves = block.get("k", []), block.get("curves", [])
    if not isinstance(ks, list) or not all(
        isinstance(k, int) and not isinstance(k, bool) and k > 0 for k in ks
    ):
        raise ResultError("result.json: 'recall_at_k.k' must be a list of positive integers")
    if not isinstance(curves, list):
        raise ResultError("result.json: 'recall_at_k.curves' must be a list")
    dims = ("augmentation", "layer", "distance", "direction", "subset")
    for number, curve in enumerate(curves, 1):
        if not isinstance(curve, dict) or not all(_label_ok(curve.get(d)) for d in dims):
            raise ResultError(f"recall_at_k curve {number} is malformed: {str(curve)[:200]}")
        recall = curve.get("recall")
        if not isinstance(recall, list) or len(recall) != len(ks):
            raise ResultError(f"recall_at_k curve {number} does not have one value per K")
        for value in recall:
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1
            ):
                raise ResultError(f"recall_at_k curve {number} has a value {value!r} outside [0, 1]")


def read_result(out_dir: Path, *, expected_version: str, expected_track: str | None = None) -> dict[str, Any]:
    """Read and check ``result.json`` written by a (possibly hostile) submission run.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder that was mounted at ``/out``.
    expected_version : str
        The benchmark version the host computed for the job.
    expected_track : str, optional
        The track the job ran; ``result.json`` must name it.

    Returns
    -------
    dict
        The parsed result, safe to store and to publish.

    Raises
    ------
    ResultError
        If the output folder holds anything but at most :data:`MAX_OUTPUT_FILES` regular files with plain
        names (a symbolic link would be followed by the host), a ``.gz`` file that is invalid or
        decompresses past :data:`MAX_DECOMPRESSED_BYTES`, or if ``result.json`` is missing, larger than
        64 MiB, not JSON (or nested too deeply), lacks fields, is for another benchmark version or track,
        has a metric row with odd labels, a repeated key, a non-finite value or a value its metric cannot
        take (accuracies and MRR in [0, 1], counts non-negative integers), or a malformed Recall@K block.
    """
    _check_output_files(out_dir)
    path = out_dir / "result.json"
    if not path.is_file():
        raise ResultError("the run wrote no result.json")
    if path.stat().st_size > MAX_RESULT_BYTES:
        raise ResultError(f"result.json is {path.stat().st_size} bytes, over the {MAX_RESULT_BYTES} limit")
    try:
        result = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultError(f"result.json is not valid JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:  # deep nesting; an integer with thousands of digits
        raise ResultError(f"result.json cannot be read safely: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(result, dict) or not isinstance(result.get("metrics"), list):
        raise ResultError("result.json has no 'metrics' list")
    if result.get("benchmark_version") != expected_version:
        raise ResultError(
            f"result.json is for benchmark version {str(result.get('benchmark_version'))[:100]!r}, "
            f"expected {expected_version}"
        )
    track = result.get("track")
    if (track is not None and not _label_ok(track)) or (
        expected_track is not None and track != expected_track
    ):
        raise ResultError(f"result.json is for track {str(track)[:100]!r}, expected {expected_track!r}")
    _check_rows(result["metrics"], track or "")
    _check_curves(result.get("recall_at_k"))
    for name, kind in (("counts", dict), ("tied_pairs", list), ("skipped_molecules", list)):
        if name in result and not isinstance(result[name], kind):
            raise ResultError(f"result.json: {name!r} must be a {'mapping' if kind is dict else 'list'}")
    return result


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
    limits : leaderboard.execution.runner.SandboxLimits
        Resource limits and sandbox switches of every run (recorded with each run as the tag ``sandbox``);
        ``read_only_root=False`` for GPU hosts whose container hooks must write.
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
    limits: SandboxLimits = field(default_factory=SandboxLimits)

    def __post_init__(self) -> None:
        from leaderboard.execution import runner as runner_mod

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
            self.sandbox = runner_mod.DockerRunner(client, owner=str(Path(self.state_dir).resolve()))
            self.runner_name = "docker"
            has_gpu = runner_mod.gpu_available(client)
            self.use_gpu = self.gpu == "on" or (self.gpu == "auto" and has_gpu)
            if self.use_gpu:
                self.log(
                    "GPU: requesting all GPUs for each container"
                    + ("" if has_gpu else " (WARNING: the engine reports no 'nvidia' runtime)")
                )
            else:
                self.log(
                    "GPU: none requested — runs use the CPU (recorded as gpu=False)"
                    + (" although the engine has an 'nvidia' runtime (--gpu off)" if has_gpu else "")
                )
        self.hardware = runner_mod.hardware_info()
        self.commit = git_commit(self.repo_root)
        self._base: str | None = None

    def _base_image(self) -> str:
        if self._base is None:
            if self.client is None:
                self._base = self.base_image
            else:
                from leaderboard.execution.images import ensure_base_image

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
            orphans = self.sandbox.remove_orphans() if self.client is not None else 0
            if orphans:
                self.log(f"removed {orphans} container(s) left running by an evaluation that was killed")
            for number, (sub, folder, track, dataset) in enumerate(jobs, 1):
                label = f"[{number}/{len(jobs)}] {sub.id} × {track} × {dataset}"
                try:
                    status = self._one(sub, folder, track, dataset, label)
                except (DataError, WeightsError, ImageBuildError, OSError, ValueError, RuntimeError) as exc:
                    # Failures before a run exists (data, weights, image) get a FAILED run with the reason.
                    if isinstance(exc, ImageBuildError):
                        reason = printable(f"image build failed: {_build_cause(exc)}")[:1000]
                    else:
                        reason = printable(str(exc))[:1000]
                    log_tail = getattr(exc, "log_tail", "")
                    self._record_failure(sub, track, dataset, reason, log_tail)
                    summary.failed.append(f"{label}: {reason}")
                    self.log(f"{label}: FAILED — {reason}")
                    if log_tail:
                        tail = [printable(line) for line in log_tail.splitlines()[-30:]]
                        self.log("  --- last lines of the log ---\n" + "\n".join(f"  | {t}" for t in tail))
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
            "gpu": str(self.use_gpu),
            "sandbox": self.limits.model_dump_json(),
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
            from leaderboard.execution.images import ensure_image

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
            "sandbox": self.limits.model_dump_json(),
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
        interrupted = self.store.fail_interrupted(
            key, "interrupted: the evaluation stopped before this run ended; it was run again"
        )
        if interrupted:
            self.log(f"{label}: {interrupted} interrupted run(s) of an earlier evaluation marked FAILED")
        run_id = self.store.start(key, name=f"{sub.id}/{track}/{dataset}", tags=tags, params=params)
        # A fresh folder per attempt: a process left over from a killed evaluation cannot write into it.
        jobs_dir = self.state_dir / "jobs"
        jobs_dir.mkdir(parents=True, exist_ok=True)
        for stale in jobs_dir.glob(f"{key}*"):
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f"{key}-", dir=jobs_dir))
        os.chmod(work, 0o755)
        (work / "job").mkdir()
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
        outcome = self.sandbox.run(
            tag,
            job_dir=work / "job",
            data_dir=data_root,
            models_dir=weights or empty_models,
            out_dir=work / "out",
            submission_dir=folder.resolve(),
            limits=self.limits,
            gpu=self.use_gpu,
        )
        self.store.set_tags(run_id, {"runner": outcome.runner, "wall_s": f"{outcome.wall_s:.1f}"})
        if outcome.status != "succeeded":
            self.store.fail(run_id, outcome.reason, outcome.log_tail)
            self.log(f"{label}: FAILED ({outcome.status}) — {outcome.reason}")
            return f"{outcome.status}: {outcome.reason}"
        try:
            result = read_result(work / "out", expected_version=version, expected_track=track)
        except ResultError as exc:
            self.store.fail(run_id, f"invalid output: {exc}", outcome.log_tail)
            self.log(f"{label}: FAILED — invalid output: {exc}")
            return f"invalid output: {exc}"
        self.store.finish(run_id, result, work / "out")
        shutil.rmtree(work, ignore_errors=True)
        self.log(f"{label}: done in {outcome.wall_s:.1f} s (run {run_id})")
        return "computed"
