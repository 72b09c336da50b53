"""Reading what a (possibly hostile) run wrote to ``/out``, and the track's host-side scoring step.

:func:`read_result` checks the output folder (plain files, sizes, names, gzip bombs), parses
``result.json`` into a :class:`~evaluators.schema.TrackResult` against the track's declarations (dimensions,
metrics with their bounds), checks that it answers the job that was asked, checks the per-item tables the
track declares, and then runs the track's :meth:`~evaluators.tracks.Track.score` on the host, with the
host's data. Nothing a run wrote reaches the store without passing here.
Side effects: none (reads ``out_dir``; a track's scoring step may read ``data_dir``).
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import stat
import zlib
from dataclasses import replace
from pathlib import Path

from evaluators.schema import Job, SchemaError, TableSpec, TrackResult, parse_rows
from evaluators.tracks import TRACKS

MAX_RESULT_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_FILES = 100
MAX_DECOMPRESSED_BYTES = 1024**3
_OUTPUT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class ResultError(ValueError):
    """The container's output is missing, oversized or malformed."""


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


def check_output_files(out_dir: Path) -> None:
    """Check that ``out_dir`` holds at most :data:`MAX_OUTPUT_FILES` regular files with plain names.

    Raises
    ------
    ResultError
        On too many entries, an odd name, a symbolic link (the host would follow it), anything that is not
        a regular file, or a ``.gz`` file that is invalid or decompresses past :data:`MAX_DECOMPRESSED_BYTES`.
    """
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


def read_table(out_dir: Path, spec: TableSpec) -> list[dict[str, str]]:
    """Read a declared per-item table from the run's artifact, keeping the rows ``spec.where`` selects.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run's output folder (already checked by :func:`check_output_files`).
    spec : TableSpec
        The track's declaration of the table.

    Returns
    -------
    list of dict
        Rows as strings keyed by ``spec.columns`` (an artifact that is absent gives no rows).

    Raises
    ------
    ResultError
        If the artifact's header is not exactly ``spec.columns``, a row has another length, or a
        numeric column holds something that is not a finite number.
    """
    path = out_dir / spec.artifact
    if not path.is_file():
        return []
    opener = gzip.open if spec.artifact.endswith(".gz") else open
    try:
        with opener(path, "rt", newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None or tuple(header) != spec.columns:
                raise ResultError(
                    f"{spec.artifact!r} must start with the header {','.join(spec.columns)}; got "
                    f"{','.join(header or [])[:200]!r}"
                )
            where = dict(spec.where)
            index = {c: i for i, c in enumerate(spec.columns)}
            rows: list[dict[str, str]] = []
            for number, row in enumerate(reader, 2):
                if len(row) != len(spec.columns):
                    raise ResultError(
                        f"{spec.artifact!r} line {number} has {len(row)} fields, not {len(index)}"
                    )
                if any(row[index[c]] != v for c, v in where.items()):
                    continue
                for column in spec.numeric:
                    try:
                        value = float(row[index[column]])
                    except ValueError:
                        value = float("nan")
                    if value != value or value in (float("inf"), float("-inf")):
                        raise ResultError(
                            f"{spec.artifact!r} line {number}: {column!r} is not a finite number "
                            f"({row[index[column]][:50]!r})"
                        )
                rows.append(dict(zip(spec.columns, row, strict=True)))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ResultError(f"{spec.artifact!r} is not a readable CSV file: {exc}") from None
    return rows


def read_result(out_dir: Path, *, job: Job, data_dir: Path | None = None) -> TrackResult:
    """Read, check and score the result of ``job`` from ``out_dir``.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder that was mounted at ``/out``.
    job : Job
        The job the run was given; the result must answer it (track, data set, benchmark version).
    data_dir : pathlib.Path, optional
        The host's copy of the data set, for the track's host-side scoring step.

    Returns
    -------
    TrackResult
        The checked (and host-scored) result, safe to store and to publish.

    Raises
    ------
    ResultError
        If the output folder fails :func:`check_output_files`, ``result.json`` is missing, larger than
        64 MiB, not JSON (or nested too deeply), does not match the schema or the track's declarations,
        answers another job, or a declared per-item table is malformed.
    """
    check_output_files(out_dir)
    path = out_dir / "result.json"
    if not path.is_file():
        raise ResultError("the run wrote no result.json")
    if path.stat().st_size > MAX_RESULT_BYTES:
        raise ResultError(f"result.json is {path.stat().st_size} bytes, over the {MAX_RESULT_BYTES} limit")
    try:
        document = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultError(f"result.json is not valid JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:  # deep nesting; an integer with thousands of digits
        raise ResultError(f"result.json cannot be read safely: {' '.join(str(exc).split())[:200]}") from None
    track_cls = TRACKS.get(job.track)
    if isinstance(document, dict):
        for key, expected in (("benchmark_version", job.benchmark_version), ("track", job.track)):
            if document.get(key) != expected:
                raise ResultError(
                    f"result.json is for {key.replace('_', ' ')} {str(document.get(key))[:100]!r}, "
                    f"expected {expected!r}"
                )
    try:
        result = track_cls.parse_result(document)
    except SchemaError as exc:
        raise ResultError(str(exc)) from None
    if result.dataset != job.dataset or result.submission_id != job.submission_id:
        raise ResultError(
            f"result.json is for {result.submission_id!r} on {result.dataset!r}, expected "
            f"{job.submission_id!r} on {job.dataset!r}"
        )
    for spec in track_cls.tables:
        read_table(out_dir, spec)
    scored = track_cls(job.options).score(result, out_dir=out_dir, data_dir=data_dir or out_dir)
    if scored is not result:
        try:
            rows = parse_rows(
                [r.to_json() for r in scored.rows],
                dimensions=track_cls.dimensions,
                metrics=track_cls.metric_specs(),
            )
        except SchemaError as exc:
            raise ResultError(f"host scoring of track {job.track!r}: {exc}") from None
        scored = replace(scored, rows=rows)
    return scored
