"""Reading what a (possibly hostile) run wrote to ``/out``, and the track's host-side scoring step.

:func:`read_result` checks the output folder (plain files, names), parses ``result.json`` into a
:class:`~evaluators.schema.TrackResult` against the track's declarations (dimensions, metrics with their
bounds), checks that it answers the job that was asked, checks the artifacts the host will store (only
those the track declares, :func:`leaderboard.tracks.stored_artifacts`: sizes, gzip bombs) and the per-item
tables, and then runs the track's :meth:`~evaluators.tracks.Track.score` on the host, with the host's
data. Nothing a run wrote reaches the store without passing here; a file the track does not declare is
never read, checked or stored (:func:`ignored_outputs` says which were left).
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
from leaderboard.execution.sandbox import human_size
from leaderboard.tracks import stored_artifacts

MAX_RESULT_BYTES = 64 * 1024 * 1024
MAX_RESULT_DEPTH = 32
MAX_OUTPUT_FILES = 100
MAX_DECOMPRESSED_BYTES = 1024**3
_OUTPUT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


class ResultError(ValueError):
    """The container's output is missing, oversized or malformed."""


def _nested_deeper(document: object, limit: int) -> bool:
    """Tell whether a parsed JSON document nests lists and objects more than ``limit`` levels deep.

    Walks with one iterator per open level, so memory grows with the depth, not with the document.
    """
    if not isinstance(document, dict | list):
        return False
    stack = [iter(document.values() if isinstance(document, dict) else document)]
    while stack:
        value = next(stack[-1], _END)
        if value is _END:
            stack.pop()
        elif isinstance(value, dict | list):
            if len(stack) >= limit:
                return True
            stack.append(iter(value.values() if isinstance(value, dict) else value))
    return False


_END = object()


def stored_form(result: TrackResult) -> str:
    """Return ``result.json`` as the store keeps it: compact, keys sorted (never larger for being nested).

    Parameters
    ----------
    result : TrackResult
        A checked result.

    Returns
    -------
    str
        ASCII JSON without indentation (an indented copy of a deeply nested document could be hundreds of
        times larger than the file the run wrote).
    """
    return json.dumps(result.to_json(), sort_keys=True, separators=(",", ":"))


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
        On too many entries, an odd name, a symbolic link (the host would follow it), or anything that is
        not a regular file.
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


def check_artifacts(out_dir: Path, result: TrackResult) -> list[Path]:
    """Check the artifacts the host will store: at most ``artifact_max_bytes`` each, ``.gz`` ones sound.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run's output folder (already checked by :func:`check_output_files`).
    result : TrackResult
        The parsed result: its track and the ``artifacts`` it lists.

    Returns
    -------
    list of pathlib.Path
        The artifacts present, in the order of :func:`leaderboard.tracks.stored_artifacts`.

    Raises
    ------
    ResultError
        If one is larger than its track's ``artifact_max_bytes``, or a ``.gz`` one is invalid or
        decompresses past :data:`MAX_DECOMPRESSED_BYTES`.
    """
    limit = TRACKS.get(result.track).artifact_max_bytes
    present = []
    for name in stored_artifacts(result.track, result.artifacts):
        path = out_dir / name
        if not path.is_file():
            continue
        size = path.stat().st_size
        if size > limit:
            raise ResultError(
                f"{name!r} is {size} bytes, over the {human_size(limit)} limit of an artifact of track "
                f"{result.track!r}"
            )
        if name.endswith(".gz"):
            _check_gzip(path)
        present.append(path)
    return present


def ignored_outputs(out_dir: Path, result: TrackResult) -> str:
    """Say which files in ``out_dir`` are left unstored because the result's track does not declare them.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run's output folder (already checked by :func:`read_result`).
    result : TrackResult
        The checked result.

    Returns
    -------
    str
        ``[chemrobust] not stored: N file(s) in /out that track T does not declare: name (size), …`` (at most
        ten names), or ``""`` when every file is ``result.json`` or a stored artifact.
    """
    kept = {"result.json", *stored_artifacts(result.track, result.artifacts)}
    left = [(p.name, p.lstat().st_size) for p in sorted(out_dir.iterdir()) if p.name not in kept]
    if not left:
        return ""
    names = ", ".join(f"{name} ({human_size(size)})" for name, size in left[:10])
    more = f", and {len(left) - 10} more" if len(left) > 10 else ""
    return (
        f"[chemrobust] not stored: {len(left)} file(s) in /out that track {result.track!r} does not declare: "
        f"{names}{more}"
    )


def read_table(out_dir: Path, spec: TableSpec, *, keep: bool = True) -> list[dict[str, str]]:
    """Read a declared per-item table from the run's artifact, keeping the rows ``spec.where`` selects.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run's output folder (already checked by :func:`check_output_files`).
    spec : TableSpec
        The track's declaration of the table.
    keep : bool, optional
        False only checks the table, row by row, keeping none (memory does not grow with the artifact).

    Returns
    -------
    list of dict
        Rows as strings keyed by ``spec.columns`` (an artifact that is absent gives no rows; none when
        ``keep`` is False).

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
                if keep:
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
        64 MiB (as written, or as stored: :func:`stored_form`), not JSON, nested more than
        :data:`MAX_RESULT_DEPTH` levels, does not match the schema or the track's declarations,
        answers another job, an artifact to be stored fails :func:`check_artifacts`, or a declared per-item
        table is malformed.
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
    if _nested_deeper(document, MAX_RESULT_DEPTH):
        raise ResultError(f"result.json nests more than {MAX_RESULT_DEPTH} levels deep")
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
    check_artifacts(out_dir, result)
    for spec in track_cls.tables:
        read_table(out_dir, spec, keep=False)
    try:
        # The questions the model was asked: a text-only model is not scored on image questions.
        track = track_cls.for_model(job.options, images=job.model.images)
        scored = track.score(result, out_dir=out_dir, data_dir=data_dir or out_dir)
    except ValueError as exc:  # the run's raw outputs could not be scored (malformed, or unscoreable data)
        reason = " ".join(str(exc).split())[:500]
        raise ResultError(f"host scoring of track {job.track!r}: {reason}") from None
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
    size = len(stored_form(scored))
    if size > MAX_RESULT_BYTES:
        raise ResultError(f"the checked result.json is {size} bytes, over the {MAX_RESULT_BYTES} limit")
    return scored
