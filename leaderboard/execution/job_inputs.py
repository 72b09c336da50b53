"""What one evaluation job is given: its job document, its fresh job folder, its MLflow parameters.

Shared by every executor (:mod:`leaderboard.execution.evaluate` runs jobs here; a Slurm job runs the same
code on a node), so the container gets the same inputs whichever ran it. Side effects: :func:`job_inputs`
writes the job folder; :func:`git_commit` runs ``git``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

from evaluators.datasets import load_records
from evaluators.datasets.views import write_view
from evaluators.schema import DataView, Job, ModelConfig, TrackOptions
from evaluators.tracks import TRACKS
from leaderboard.intake.manifest import Submission


def decoding_params(track: str, options: TrackOptions) -> dict[str, str]:
    """MLflow parameters of a generative track's decoding settings (empty for other tracks).

    The settings are already part of the result key (the benchmark version hashes the track's definition);
    as parameters they can be read and filtered on in MLflow: ``decoding`` (temperature, stop strings,
    seed) and ``max_new_tokens.<task>`` per question.
    """
    definition = TRACKS.get(track)(options).definition()
    if "decoding" not in definition:
        return {}
    out = {"decoding": json.dumps(definition["decoding"], sort_keys=True)}
    for task in definition.get("tasks", []):
        if isinstance(task, dict) and "max_new_tokens" in task:
            out[f"max_new_tokens.{task['name']}"] = str(task["max_new_tokens"])
    return out


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
) -> Job:
    """Return the :class:`~evaluators.schema.Job` the container runs (written as ``job.json``)."""
    module = TRACKS.get(track).__module__
    return Job(
        submission_id=sub.id,
        track=track,
        dataset=dataset,
        benchmark_version=version,
        options=options,
        model=ModelConfig(
            adapter=sub.adapter,
            path=Path(".") if has_weights else None,
            architecture=sub.model.architecture,
            pooling=sub.pooling,
            max_length=sub.tokenizer.max_length,
            prompt_prefix=sub.tokenizer.prompt_prefix,
            trust_remote_code=sub.trust_remote_code,
            batch_size=sub.batch_size,
            options=dict(sub.options),
            code=sub.code.model_dump() if sub.code else None,
            chat_template=sub.tokenizer.chat_template,
            pre_tokenizer=sub.tokenizer.pre_tokenizer or "",
            images="image" in sub.model.inputs,
        ),
        # A track registered outside evaluators.tracks (a plug-in, or test code) is imported by name.
        plugins=() if module.startswith("evaluators.") else (module,),
    )


def job_inputs(work: Path, job: Job, weights: Path | None) -> Path:
    """Fill a fresh job folder: ``job/job.json``, an empty ``out`` and an empty ``models`` folder.

    Parameters
    ----------
    work : pathlib.Path
        The attempt's job folder.
    job : Job
        The job the run is given.
    weights : pathlib.Path or None
        Prefetched weights, when the submission has any.

    Returns
    -------
    pathlib.Path
        The folder to mount at ``/models``: ``weights``, or the empty ``work/models``.
    """
    os.chmod(work, 0o755)
    for name in ("job", "out", "models"):
        (work / name).mkdir()
    (work / "job" / "job.json").write_text(json.dumps(job.to_json(), indent=1))
    return weights or work / "models"


def data_view(
    job: Job, work: Path, data_root: Path, data_hash: str, *, endpoint: bool = False
) -> tuple[Job, Path]:
    """Return the job and the folder to mount at ``/data``: the job's own data set, or a label-free view.

    A track that withholds its labels (:meth:`evaluators.tracks.Track.container_view`) gets its view
    written to ``work/data/<set>/view.csv``; the returned job carries the view's sha256 and the host's data
    hash (:class:`evaluators.schema.DataView`). Any other track gets ``work/data/<set>/``, the set's own
    files (:func:`own_set`), and the job unchanged: never the data root, whose other sets hold the
    answers of other tracks' questions (T3's names and formulas, T5's targets).

    A generative track asks a chat model (the manifest's ``tokenizer.chat_template``) or an API
    (``endpoint``) with the answer protocol's larger budget (:mod:`evaluators.asking.protocol`).
    """
    cls = TRACKS.get(job.track)
    if not cls.withholds_labels:
        return job, own_set(data_root, job.dataset, work / "data")
    records = load_records(job.dataset, data_root, limit=job.options.limit)
    rows = cls.container_view(job.dataset, records, job.options, chat=endpoint or job.model.chat_template,
                              images=job.model.images)  # fmt: skip
    if rows is None:
        return job, own_set(data_root, job.dataset, work / "data")
    sha256 = write_view(rows, cls.view_columns, work / "data", job.dataset)
    return replace(job, data_view=DataView(sha256=sha256, data_hash=data_hash)), work / "data"


def own_set(data_root: Path, dataset: str, into: Path) -> Path:
    """Return ``into``, holding ``<dataset>/`` only: the set's files linked from ``data_root`` (or copied).

    Hard links cost no space or time and leave the data unchanged (the mount is read-only); a copy is
    the fallback where the job folder lies on another filesystem. Symbolic links in the set are not
    followed (a prepared set holds none).
    """
    source = data_root / dataset
    for path in sorted(source.rglob("*")):
        target = into / dataset / path.relative_to(source)
        if path.is_symlink():
            continue
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)
    (into / dataset).mkdir(parents=True, exist_ok=True)
    return into
