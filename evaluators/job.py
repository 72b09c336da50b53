"""The runner of one job inside the container: ``/job/job.json`` in, ``/out/result.json`` out.

The shapes of both files are the types of :mod:`evaluators.schema`, the contract both worlds share. Running
a job: load the data set from the data directory, build the adapter, run the
track, validate and write ``result.json`` atomically. Side effects: writes only under the output folder.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

from evaluators import __version__
from evaluators.adapters import Adapter, load_adapter
from evaluators.datasets import dataset_hash, load_dataset
from evaluators.datasets.views import ViewError, read_view, view_dataset
from evaluators.progress import ProgressReporter
from evaluators.schema import Job, SchemaError, TrackResult, parse_rows
from evaluators.tracks import TRACKS, benchmark_version


class JobError(ValueError):
    """The job file is malformed or inconsistent with the data it points to."""


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version(), "chemrobust_evaluators": __version__}
    for package in ("torch", "transformers", "rdkit", "numpy", "faiss-cpu"):
        try:
            out[package] = md.version(package)
        except md.PackageNotFoundError:
            pass
    return out


def read_job(job_path: Path, *, models_dir: Path, submission_dir: Path) -> Job:
    """Parse ``job.json`` into a :class:`~evaluators.schema.Job` and import the modules it names.

    Raises
    ------
    JobError
        If the file is not JSON or does not match the schema.
    """
    try:
        job = Job.from_json(
            json.loads(job_path.read_text()), models_dir=models_dir, submission_dir=submission_dir
        )
    except (json.JSONDecodeError, SchemaError) as exc:
        raise JobError(f"{job_path}: {exc}") from None
    for module in job.plugins:
        importlib.import_module(module)
    return job


def run_job(
    job_path: Path,
    *,
    data_dir: Path,
    models_dir: Path,
    out_dir: Path,
    submission_dir: Path,
    log=print,
    adapter: Adapter | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> TrackResult:
    """Execute one job and write ``out_dir/result.json``.

    Parameters
    ----------
    job_path : pathlib.Path
        The job file written by the host.
    data_dir, models_dir, out_dir, submission_dir : pathlib.Path
        ``/data``, ``/models``, ``/out`` and ``/submission`` inside the container.
    log : callable
        Progress messages (stdout by default; the host keeps the tail). Structured progress
        (:mod:`evaluators.progress`) goes to stdout too, where the host follows it live.
    adapter : Adapter, optional
        A model already made (the host's endpoint runner passes its API client); default: the adapter the
        job's model configuration names, loaded here.
    progress : callable, optional
        ``progress(stage, done, total)``; default: structured lines on stdout.

    Returns
    -------
    TrackResult
        The result written to ``result.json`` (checked against the track's declarations first).

    Raises
    ------
    JobError
        If the job is malformed, or the data do not hash to what the host expected.
    """
    job = read_job(job_path, models_dir=models_dir, submission_dir=submission_dir)
    track_cls = TRACKS.get(job.track)
    if job.data_view is not None:
        # A label-free view: the set's files are not here, so the host's data hash stands in for them and
        # the view itself must be byte-identical to what the host wrote.
        try:
            view = read_view(data_dir, job.dataset, job.data_view.sha256, track_cls.view_columns)
        except (ViewError, UnicodeDecodeError, csv.Error) as exc:
            raise JobError(str(exc)) from None
        data_hash = job.data_view.data_hash
    elif track_cls.withholds_labels:
        # Never fall back to the set's files: for such a track they hold the answers.
        raise JobError(f"track {job.track!r} runs on the host's data view only, and the job names none")
    else:
        view = None
        data_hash = dataset_hash(job.dataset, data_dir)
    version = benchmark_version(job.track, job.options, data_hash, images=job.model.images)
    if job.benchmark_version != version:
        raise JobError(
            f"benchmark version mismatch: host expected {job.benchmark_version}, the data here give "
            f"{version} — the data set files differ from the ones the host hashed"
        )
    started = time.perf_counter()
    progress = progress or ProgressReporter()
    progress("load", 0, 2)
    if view is not None:
        dataset = view_dataset(view)  # the host applied the limit when it wrote the view
    else:
        dataset = load_dataset(job.dataset, data_dir, limit=job.options.limit)
    if view is not None and not dataset.molecules and not dataset.skipped:  # a view of requests only
        log(f"loaded the view of {job.dataset}: {len(view)} rows")
    else:
        log(f"loaded {job.dataset}: {len(dataset.molecules)} molecules, {len(dataset.skipped)} skipped")
    progress("load", 1, 2)
    t0 = time.perf_counter()
    adapter = adapter or load_adapter(job.model)
    adapter.progress = progress
    load_s = time.perf_counter() - t0
    progress("load", 2, 2)
    track = track_cls.for_model(job.options, chat=job.model.chat_template, images=job.model.images)
    if track.capability not in adapter.capabilities:
        raise JobError(
            f"track {job.track!r} needs capability {track.capability!r}; the adapter has "
            f"{sorted(adapter.capabilities)}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = track.run(adapter, dataset, out_dir=out_dir, log=log, progress=progress)
    unknown = set(payload) - {"rows", "counts", "details", "artifacts", "timing"}
    if unknown:
        raise JobError(f"track {job.track!r} returned unknown result blocks {sorted(unknown)}")
    result = TrackResult(
        submission_id=job.submission_id,
        track=job.track,
        track_version=track.version,
        dataset=job.dataset,
        data_hash=data_hash,
        benchmark_version=version,
        seed=job.options.seed,
        rows=parse_rows(payload["rows"], dimensions=track.dimensions, metrics=track.metric_specs()),
        counts=payload.get("counts", {}),
        artifacts=tuple(payload.get("artifacts", ())),
        details=payload.get("details", {}),
        model=adapter.describe(),
        environment=_versions(),
        timing={
            "model_load_s": load_s,
            **payload.get("timing", {}),
            "total_s": time.perf_counter() - started,
        },
        skipped_molecules=tuple(
            {"id": s.id, "smiles": s.smiles, "reason": s.reason} for s in dataset.skipped
        ),
    )
    tmp = out_dir / "result.json.tmp"
    tmp.write_text(json.dumps(result.to_json(), indent=1, sort_keys=True))
    os.replace(tmp, out_dir / "result.json")
    return result
