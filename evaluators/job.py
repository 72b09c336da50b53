"""The job description the host writes to ``/job/job.json`` and the runner that executes it.

This is the whole interface between the two worlds: a job (JSON in) and ``result.json`` plus per-item
artifacts (out). Running a job: load the data set from the data directory, build the adapter, run the
track, validate and write ``result.json`` atomically. Side effects: writes only under the output folder.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

from evaluators import __version__
from evaluators.adapters import ModelConfig, load_adapter
from evaluators.datasets import dataset_hash, load_dataset
from evaluators.tracks import TRACKS, TrackOptions, benchmark_version

JOB_SCHEMA_VERSION = 1
RESULT_SCHEMA_VERSION = 1


class JobError(ValueError):
    """The job file is malformed or inconsistent with the data it points to."""


def model_config(job: dict[str, Any], *, models_dir: Path, submission_dir: Path) -> ModelConfig:
    """Build the :class:`ModelConfig` of a job; ``model.path`` is relative to ``models_dir``."""
    model = dict(job["model"])
    allowed = {f.name for f in fields(ModelConfig)}
    unknown = set(model) - allowed
    if unknown:
        raise JobError(f"job.model has unknown keys {sorted(unknown)}")
    path = model.pop("path", None)
    model.pop("submission_dir", None)
    return ModelConfig(
        **model,
        path=(models_dir / path) if path else None,
        submission_dir=submission_dir,
    )


def track_options(job: dict[str, Any]) -> TrackOptions:
    """Return the :class:`TrackOptions` of a job."""
    opts = dict(job.get("track_options", {}))
    if "distances" in opts:
        opts["distances"] = tuple(opts["distances"])
    return TrackOptions(**opts)


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version(), "chemrobust_evaluators": __version__}
    for package in ("torch", "transformers", "rdkit", "numpy", "faiss-cpu"):
        try:
            out[package] = md.version(package)
        except md.PackageNotFoundError:
            pass
    return out


def run_job(
    job_path: Path, *, data_dir: Path, models_dir: Path, out_dir: Path, submission_dir: Path, log=print
) -> dict[str, Any]:
    """Execute one job and write ``out_dir/result.json``.

    Parameters
    ----------
    job_path : pathlib.Path
        The job file written by the host.
    data_dir, models_dir, out_dir, submission_dir : pathlib.Path
        ``/data``, ``/models``, ``/out`` and ``/submission`` inside the container.
    log : callable
        Progress messages (stdout by default; the host keeps the tail).

    Returns
    -------
    dict
        The result written to ``result.json``.

    Raises
    ------
    JobError
        If the job is malformed, or the data do not hash to what the host expected.
    """
    job = json.loads(job_path.read_text())
    if job.get("schema_version") != JOB_SCHEMA_VERSION:
        raise JobError(f"job schema_version {job.get('schema_version')!r}, expected {JOB_SCHEMA_VERSION}")
    track_name, dataset_name = job["track"], job["dataset"]
    options = track_options(job)
    data_hash = dataset_hash(dataset_name, data_dir)
    version = benchmark_version(track_name, options, data_hash)
    if job.get("benchmark_version") not in (None, version):
        raise JobError(
            f"benchmark version mismatch: host expected {job['benchmark_version']}, the data here give "
            f"{version} — the data set files differ from the ones the host hashed"
        )
    started = time.perf_counter()
    dataset = load_dataset(dataset_name, data_dir, limit=options.limit)
    log(f"loaded {dataset_name}: {len(dataset.molecules)} molecules, {len(dataset.skipped)} skipped")
    config = model_config(job, models_dir=models_dir, submission_dir=submission_dir)
    t0 = time.perf_counter()
    adapter = load_adapter(config)
    load_s = time.perf_counter() - t0
    track = TRACKS.get(track_name)(options)
    if track.capability not in adapter.capabilities:
        raise JobError(
            f"track {track_name!r} needs capability {track.capability!r}; the adapter has "
            f"{sorted(adapter.capabilities)}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = track.run(adapter, dataset, out_dir=out_dir, log=log)
    payload["timing"] = {
        "model_load_s": load_s,
        **payload.get("timing", {}),
        "total_s": time.perf_counter() - started,
    }
    result = {
        "schema_version": RESULT_SCHEMA_VERSION,
        "submission_id": job.get("submission_id", ""),
        "track": track_name,
        "track_version": track.version,
        "dataset": dataset_name,
        "data_hash": data_hash,
        "benchmark_version": version,
        "seed": options.seed,
        "model": adapter.describe(),
        "environment": _versions(),
        "skipped_molecules": [{"id": s.id, "smiles": s.smiles, "reason": s.reason} for s in dataset.skipped],
        **payload,
    }
    tmp = out_dir / "result.json.tmp"
    tmp.write_text(json.dumps(result, indent=1, sort_keys=True))
    os.replace(tmp, out_dir / "result.json")
    return result
