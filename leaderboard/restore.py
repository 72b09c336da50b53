"""Restore a tracking server from the board's record: ``python -m leaderboard import-results``.

The committed ``site/data/`` is the board's record and a local MLflow store is a cache of it (issue 18).
MLflow keeps absolute artifact paths, so a store does not move between machines; instead, this module
imports the record into any tracking server (a fresh ``.state/mlflow.db``, or the shared server of
SPEC §8): one FINISHED run per committed result, carrying

- the result key of the run that computed it (submission, image tag, track, data set, benchmark version,
  runner), so an evaluation on the new machine reuses it exactly as it would reuse its own run;
- that run's tags (data hash, model revision, image id, hardware, commit), start and end, and its id
  (:data:`leaderboard.store.SOURCE_RUN_TAG`, which the export reports as the run id);
- a ``result.json`` rebuilt from the committed rows and counts, checked against the track's declarations
  like any stored result, and the per-item tables as the artifacts the track declares.

A store restored this way exports exactly the committed board (a site build after it changes nothing).
What the record does not hold is not invented: the rebuilt ``result.json`` has no per-pair details
(tied pairs, skipped molecules) and no timing; the run's ``chemrobust.imported_from`` tag says so.
Committed failures are not imported (the record keeps them); results already in the store are skipped.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from evaluators.schema import MetricRow, TrackOptions, TrackResult
from leaderboard.site.exports import read_board
from leaderboard.site.merge import Board, Key, key_label
from leaderboard.store import IMPORTED_TAG, SOURCE_RUN_TAG, run_key
from leaderboard.tracks import KEY_COLUMNS, table_specs
from leaderboard.tracks import track as track_class

__all__ = ["ImportReport", "Importer", "import_results", "key_fields"]

#: The run fields the evaluation keys a result by (:mod:`leaderboard.execution.evaluate`).
KEY_FIELDS = ("submission", "image_tag", "track", "dataset", "benchmark_version", "runner")
#: Run fields copied to the imported run's tags besides the key fields.
TAG_FIELDS = ("data_hash", "model_revision", "image_id", "git_commit")


class Importer(Protocol):
    """What :func:`import_results` needs of a store (:class:`leaderboard.store.ResultStore`)."""

    def find_finished(self, key: str) -> Any:
        """Return the newest FINISHED run with ``key``, or ``None``."""
        ...

    def import_run(self, key: str, **kwargs: Any) -> str:
        """Store one result computed elsewhere as a FINISHED run."""
        ...


@dataclass
class ImportReport:
    """What :func:`import_results` did, by result key.

    Attributes
    ----------
    imported : list of Key
        Results stored as new runs.
    present : list of Key
        Results the store already held (same result key, FINISHED): left alone.
    without_result : list of Key
        Keys whose committed record holds no finished result (only failures): nothing to import.
    """

    imported: list[Key] = field(default_factory=list)
    present: list[Key] = field(default_factory=list)
    without_result: list[Key] = field(default_factory=list)

    def line(self) -> str:
        """One line: ``import-results: 18 imported, 0 already present, 0 without a result``."""
        return (
            f"import-results: {len(self.imported)} imported, {len(self.present)} already present, "
            f"{len(self.without_result)} without a finished result"
        )


def key_fields(run: dict[str, Any]) -> dict[str, str]:
    """Return the fields of a committed run record that the evaluation keys its result by."""
    return {name: str(run.get(name) or "") for name in KEY_FIELDS}


def import_results(
    store: Importer, site_dir: Path, *, source: str = "site/data", log: Callable[[str], None] = print
) -> ImportReport:
    """Import every committed finished result of ``<site_dir>/data/`` that ``store`` lacks.

    Parameters
    ----------
    store : Importer
        The tracking store to fill (:class:`leaderboard.store.ResultStore`).
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` whose ``data/`` holds the record.
    source : str, default "site/data"
        Recorded on each imported run (tag ``chemrobust.imported_from``), with the commit when known.
    log : callable, default print
        Receives one line per imported result.

    Returns
    -------
    ImportReport
        What was imported, skipped, or had nothing to import.

    Raises
    ------
    ValueError
        If a committed file is malformed, or a committed result fails its track's declarations.
    """
    board = read_board(site_dir)
    report = ImportReport()
    finished: dict[Key, dict[str, Any]] = {}
    for run in board.runs:
        key = (str(run["submission"]), str(run["track"]), str(run["dataset"]))
        if run.get("status") == "FINISHED":
            current = finished.get(key)
            if current is None or str(run.get("started_at")) > str(current.get("started_at")):
                finished[key] = run
    keys = sorted({(str(r["submission"]), str(r["track"]), str(r["dataset"])) for r in board.runs})
    results = board.results.groupby(list(KEY_COLUMNS), sort=True)
    groups = {tuple(str(v) for v in k): frame for k, frame in results}
    rows = _table_rows(board)
    for key in keys:
        run = finished.get(key)
        if run is None or key not in groups:
            report.without_result.append(key)
            continue
        stored_key = run_key(key_fields(run))
        if store.find_finished(stored_key) is not None:
            report.present.append(key)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            files = _tables(board, rows, key, Path(tmp))
            started = pd.Timestamp(run["started_at"])
            started_ms = int(started.timestamp() * 1000)
            store.import_run(
                stored_key,
                name=f"{key[0]}/{key[1]}/{key[2]}",
                tags={
                    **key_fields(run),
                    **{name: str(run.get(name) or "") for name in TAG_FIELDS},
                    "hardware": json.dumps(run.get("hardware") or {}),
                    IMPORTED_TAG: source,
                    SOURCE_RUN_TAG: str(run["run_id"]),
                },
                result=_result(run, groups[key], [p.name for p in files]),
                files=files,
                started_ms=started_ms,
                ended_ms=started_ms + int(round(float(run.get("duration_s") or 0) * 1000)),
            )
        report.imported.append(key)
        log(f"import-results: {key_label(key)} imported (run {run['run_id']})")
    return report


def _result(run: dict[str, Any], rows: pd.DataFrame, artifacts: list[str]) -> TrackResult:
    """Rebuild the ``result.json`` of a committed result, checked against its track's declarations."""
    cls = track_class(str(run["track"]))
    names = [d.name for d in cls.dimensions]
    metric_rows = [
        MetricRow(tuple((n, str(r[n])) for n in names), str(r["metric"]), float(r["value"]))
        for r in rows.to_dict("records")
    ]
    result = TrackResult(
        submission_id=str(run["submission"]),
        track=str(run["track"]),
        track_version=cls.version,
        dataset=str(run["dataset"]),
        data_hash=str(run.get("data_hash") or ""),
        benchmark_version=str(run["benchmark_version"]),
        seed=TrackOptions().seed,  # the board's runs use the default seed; the record does not repeat it
        rows=tuple(metric_rows),
        counts=dict(run.get("counts") or {}),
        artifacts=tuple(artifacts),
        details={"imported": "rebuilt from the committed record; per-pair details are not part of it"},
        model={"revision": str(run.get("model_revision") or "")},
    )
    return cls.parse_result(result.to_json())  # the same check every stored result passes


def _table_rows(board: Board) -> dict[str, dict[Key, Any]]:
    """Row positions of every key in every per-item table, found in one pass over each table.

    (Comparing every table's key columns as text once per imported key took most of an import.)
    """
    out: dict[str, dict[Key, Any]] = {}
    for name, frame in board.tables.items():
        if frame.empty:
            continue
        groups = frame.groupby(list(KEY_COLUMNS), observed=True, sort=False).indices
        out[name] = {(str(k[0]), str(k[1]), str(k[2])): positions for k, positions in groups.items()}
    return out


def _tables(board: Board, rows: dict[str, dict[Key, Any]], key: Key, folder: Path) -> list[Path]:
    """Write the committed rows of ``key`` of every table its track declares, as the run's artifacts.

    ``rows`` holds each table's row positions by key (:func:`_table_rows`); the rows keep the table's order.
    """
    out = []
    for name, (track, spec) in table_specs().items():
        frame = board.tables.get(name)
        if track != key[1] or frame is None or frame.empty:
            continue
        positions = rows.get(name, {}).get(key)
        if positions is None or len(positions) == 0:
            continue
        mine = frame.iloc[positions]
        path = folder / spec.artifact
        # As the tracks compress their artifacts: gzip level 5 (pandas' default, 9, took 3 times longer).
        gz = {"method": "gzip", "compresslevel": 5} if path.suffix == ".gz" else None
        mine.loc[:, list(spec.columns)].to_csv(path, index=False, compression=gz)
        out.append(path)
    return out
