"""The result store: one MLflow run per (submission, image, track, data set, benchmark version, runner).

The only module that imports mlflow. A deterministic key (tag ``chemrobust.key``) makes re-runs idempotent:
a FINISHED run with the same key is reused; a failed run is marked FAILED with its one-line reason (tag
``chemrobust.failure_reason``) and never blocks a retry. Metrics are named by their
:class:`~evaluators.schema.MetricKey` (``<track>/<metric>/<dimension values>``); the checked
``result.json`` and the artifacts its track declares (nothing else from ``/out``) are logged as artifacts
and are what the site export reads back (:meth:`ResultStore.export` for the metrics,
:meth:`ResultStore.export_tables` for the per-item tables each track declares; a FINISHED run's
``result.json`` is downloaded once per store object and cached by run id, since it never changes).
Nothing here names a track: columns and tables come from the track registry.

Default store: ``sqlite:///<repo>/.state/mlflow.db`` with artifacts in ``<repo>/.state/mlartifacts``
(MLflow >= 3.13 refuses a plain ``./mlruns`` file store); ``MLFLOW_TRACKING_URI`` overrides.
Side effects: writes to the tracking store and its artifact location; opening a sqlite store holds the lock
file ``<db>.init-lock`` beside it while the schema and the experiment are created.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import stat
import tempfile
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from evaluators.schema import SCHEMA_VERSION, SchemaError, TableSpec, TrackOptions, TrackResult
from leaderboard.tracks import KEY_COLUMNS, result_columns, stored_artifacts, table_specs
from leaderboard.tracks import track as track_class

EXPERIMENT = "chemrobust"
KEY_TAG = "chemrobust.key"
REASON_TAG = "chemrobust.failure_reason"
#: On a run imported from the committed record (:mod:`leaderboard.restore`): where it came from, and the
#: id of the run that computed it (what the export reports as its ``run_id``).
IMPORTED_TAG = "chemrobust.imported_from"
SOURCE_RUN_TAG = "chemrobust.source_run_id"


@contextmanager
def _init_lock(tracking_uri: str) -> Iterator[None]:
    """Serialise opening a local sqlite store across processes (``<db>.init-lock``, blocking).

    Two processes that open a new ``mlflow.db`` at once both run its schema migration, and the loser leaves
    the file half-migrated for good; two that find no experiment both create it, and one fails.
    """
    if not tracking_uri.startswith("sqlite:///"):
        yield
        return
    db = Path(tracking_uri.removeprefix("sqlite:///"))
    db.parent.mkdir(parents=True, exist_ok=True)
    with open(db.with_name(db.name + ".init-lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def run_preview(params: Mapping[str, str]) -> str:
    """Name the options that make a stored run a preview, from the parameters the evaluator logged.

    A run whose options differ from the defaults that define the board (``--limit``, a seed, a set of
    distances; :meth:`evaluators.schema.TrackOptions.preview`) measured something else than the board: it
    is exported marked, and the merge into ``site/data/`` refuses it. Read from the parameters, not from a
    tag, so that runs stored before the mark existed are recognised too (a run without the parameters,
    imported from the committed record, is a board run).

    Parameters
    ----------
    params : mapping of str to str
        The run's MLflow parameters (``limit``, ``seed``, ``distances``).

    Returns
    -------
    str
        E.g. ``--limit 3``; empty for a board run.

    Examples
    --------
    >>> run_preview({"limit": "3", "seed": "0"}), run_preview({"limit": "None", "seed": "0"})
    ('--limit 3', '')
    """
    limit, seed, distances = params.get("limit", "None"), params.get("seed", "0"), params.get("distances")
    try:
        options = TrackOptions(
            seed=int(seed),
            limit=None if limit in ("None", "") else int(limit),
            distances=TrackOptions().distances
            if distances is None
            else tuple(d for d in distances.split(",") if d),
        )
    except ValueError:  # unreadable options are never taken for the board's
        return f"options limit={limit}, seed={seed}"
    return options.preview()


def run_key(fields: Mapping[str, str]) -> str:
    """Deterministic key of a result: sha256 over the identifying fields (sorted), 32 hex characters."""
    blob = json.dumps(dict(fields), sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def _rank(run) -> tuple[bool, bool]:
    """Order of the runs :meth:`ResultStore.latest_runs` chooses from: board runs, then FINISHED ones."""
    return not run_preview(run.data.params), run.info.status == "FINISHED"


class ResultStore:
    """MLflow-backed store of evaluation runs.

    Parameters
    ----------
    tracking_uri : str
        MLflow tracking URI.
    artifact_root : pathlib.Path, optional
        Where a new experiment keeps artifacts when the store is local (``None`` with a tracking server:
        the server's artifact root, proxied).
    experiment : str
        Name of the experiment, created when missing (``MLFLOW_EXPERIMENT_NAME``; default ``chemrobust``).
    experiment_id : str, optional
        Use this existing experiment, without looking it up by name or creating it (what every job of a
        cluster evaluation is given).
    """

    def __init__(
        self,
        tracking_uri: str,
        artifact_root: Path | None = None,
        *,
        experiment: str = EXPERIMENT,
        experiment_id: str | None = None,
    ) -> None:
        import mlflow
        from mlflow.tracking import MlflowClient

        self._mlflow = mlflow
        self.tracking_uri = tracking_uri
        with _init_lock(tracking_uri):
            self.client = MlflowClient(tracking_uri=tracking_uri)
            if experiment_id is not None:
                # Given by the orchestrator that created it: writers running at once never look it up by
                # name, which on a new experiment can silently file one writer's runs elsewhere.
                self.experiment_id = self.client.get_experiment(experiment_id).experiment_id
            else:
                found = self.client.get_experiment_by_name(experiment)
                if found is None:
                    location = artifact_root.resolve().as_uri() if artifact_root is not None else None
                    self.experiment_id = self.client.create_experiment(experiment, artifact_location=location)
                else:
                    self.experiment_id = found.experiment_id
        # result.json of FINISHED runs, by run id: immutable once the run finished, so export() and
        # export_curves() share one download.
        self._results: dict[str, dict[str, Any]] = {}

    def find_finished(self, key: str):
        """Return the newest FINISHED run with ``key``, or ``None``."""
        runs = self.client.search_runs(
            [self.experiment_id],
            filter_string=f"tags.`{KEY_TAG}` = '{key}' and attributes.status = 'FINISHED'",
            order_by=["attributes.start_time DESC"],
            max_results=1,
        )
        return runs[0] if runs else None

    def runs_tagged(self, tag: str, value: str) -> list:
        """Return the runs whose tag ``tag`` is ``value`` (the Slurm job that wrote them), newest first."""
        return self.client.search_runs(
            [self.experiment_id],
            filter_string=f"tags.`{tag}` = '{value}'",
            order_by=["attributes.start_time DESC"],
            max_results=1000,
        )

    def start(self, key: str, *, name: str, tags: Mapping[str, str], params: Mapping[str, Any]) -> str:
        """Create a RUNNING run with its identifying tags and parameters; return its id."""
        run = self.client.create_run(
            self.experiment_id, run_name=name, tags={KEY_TAG: key, **{k: str(v) for k, v in tags.items()}}
        )
        from mlflow.entities import Param

        items = [Param(k, str(v)[:6000]) for k, v in sorted(params.items())]
        for i in range(0, len(items), 100):
            self.client.log_batch(run.info.run_id, params=items[i : i + 100])
        return run.info.run_id

    def set_tags(self, run_id: str, tags: Mapping[str, Any]) -> None:
        """Add tags to a run (hardware, image id … known only after the run)."""
        for k, v in tags.items():
            self.client.set_tag(run_id, k, str(v)[:5000])

    def finish(self, run_id: str, result: TrackResult, out_dir: Path, log_tail: str = "") -> None:
        """Log the metrics, the checked ``result.json`` and the declared artifacts; mark the run FINISHED.

        Only the files :func:`leaderboard.tracks.stored_artifacts` names for the result's track (its tables'
        artifacts, and the names the result lists that the track declares) are logged, each only when it is
        a regular file directly in ``out_dir`` no larger than the track's ``artifact_max_bytes``: whatever
        else a sandboxed run wrote (a 2 GiB junk file, a link to ``/proc/self/environ``) is never copied
        into the store. :func:`leaderboard.execution.results.read_result` checked them before.

        Parameters
        ----------
        run_id : str
            The RUNNING run.
        result : TrackResult
            The checked (and host-scored) result.
        out_dir : pathlib.Path
            The run's output folder.
        log_tail : str, optional
            Logged as ``log_tail.txt`` when given (a note on files left unstored, say).
        """
        self._log_result(run_id, result, int(time.time() * 1000))
        limit = track_class(result.track).artifact_max_bytes
        for name in stored_artifacts(result.track, result.artifacts):
            path = out_dir / name
            try:
                info = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                self.client.log_artifact(run_id, str(path))
        if log_tail:
            self.client.log_text(run_id, log_tail, "log_tail.txt")
        self.client.set_terminated(run_id, "FINISHED")

    def import_run(
        self,
        key: str,
        *,
        name: str,
        tags: Mapping[str, str],
        result: TrackResult,
        files: Iterable[Path],
        started_ms: int,
        ended_ms: int,
    ) -> str:
        """Store a result computed elsewhere as a FINISHED run (``python -m leaderboard import-results``).

        The run gets the key, tags, start and end of the run that computed it (``tags`` should name it
        with :data:`SOURCE_RUN_TAG`, and the source with :data:`IMPORTED_TAG`), the checked ``result``
        and the per-item ``files``, so :meth:`find_finished` reuses it and :meth:`export` returns what the
        source exported.

        Returns
        -------
        str
            The new run's id.
        """
        run = self.client.create_run(
            self.experiment_id,
            run_name=name,
            start_time=started_ms,
            tags={KEY_TAG: key, **{k: str(v)[:5000] for k, v in tags.items()}},
        )
        run_id = run.info.run_id
        self._log_result(run_id, result, started_ms)
        for path in files:
            self.client.log_artifact(run_id, str(path))
        self.client.set_terminated(run_id, "FINISHED", end_time=ended_ms)
        return run_id

    def _log_result(self, run_id: str, result: TrackResult, timestamp_ms: int) -> None:
        """Log a checked result's metrics (finite values) and its compact ``result.json`` to ``run_id``."""
        from mlflow.entities import Metric

        metrics = [
            Metric(key.mlflow_name(), row.value, timestamp_ms, 0)
            for key, row in zip(result.keys(), result.rows, strict=True)
            if math.isfinite(row.value)
        ]
        for i in range(0, len(metrics), 1000):
            self.client.log_batch(run_id, metrics=metrics[i : i + 1000])
        with tempfile.TemporaryDirectory() as tmp:
            # The checked (and host-scored) result, not the file the run wrote. Compact: indenting a deeply
            # nested document multiplies its size (``stored_form`` in leaderboard.execution.results).
            checked = Path(tmp) / "result.json"
            checked.write_text(json.dumps(result.to_json(), sort_keys=True, separators=(",", ":")))
            self.client.log_artifact(run_id, str(checked))

    def fail_interrupted(self, key: str, reason: str) -> int:
        """Mark the RUNNING runs with ``key`` FAILED with ``reason``; return how many there were.

        Call it, holding the evaluation lock, before starting a new run with that key: a run still RUNNING
        then belongs to an orchestrator that was killed mid-run, and would otherwise stay RUNNING forever.
        """
        runs = self.client.search_runs(
            [self.experiment_id],
            filter_string=f"tags.`{KEY_TAG}` = '{key}' and attributes.status = 'RUNNING'",
            max_results=1000,
        )
        for run in runs:
            self.fail(run.info.run_id, reason)
        return len(runs)

    def fail(self, run_id: str, reason: str, log_tail: str = "") -> None:
        """Mark a run FAILED with its one-line reason and the tail of its log."""
        self.client.set_tag(run_id, REASON_TAG, reason[:5000])
        if log_tail:
            self.client.log_text(run_id, log_tail, "log_tail.txt")
        self.client.set_terminated(run_id, "FAILED")

    def result_of(self, run) -> dict[str, Any]:
        """Download and parse a run's ``result.json`` (cached per run id once the run is FINISHED)."""
        run_id = run.info.run_id
        cached = self._results.get(run_id)
        if cached is not None:
            return cached
        with tempfile.TemporaryDirectory() as tmp:
            local = self._artifacts(run).download_artifacts("result.json", tmp)
            result = json.loads(Path(local).read_text())
        if run.info.status == "FINISHED":
            self._results[run_id] = result
        return result

    def _artifacts(self, run):
        """Return the artifact repository of a run the caller holds, from its own ``artifact_uri``.

        ``MlflowClient.download_artifacts(run_id, …)`` fetches the whole run again (every metric: thousands
        per run) and looks for logged models, on every call; an export reads a few files of each of hundreds
        of runs, so that lookup was most of its time (issue 36: 1 347 ``get_run`` calls, 54 s of a 113 s
        export of the committed board). The repository is the one MLflow itself resolves for the run.
        """
        from mlflow.store.artifact.artifact_repository_registry import get_artifact_repository

        return get_artifact_repository(run.info.artifact_uri, tracking_uri=self.tracking_uri)

    def latest_runs(self, submissions: Iterable[str] | None = None) -> list:
        """Newest run per (submission, track, data set): the newest FINISHED one, else the newest failure.

        Runs with the board's options come first: a preview (:func:`run_preview`, a smoke test with
        ``--limit``) is chosen only where the key has no other run, so it never hides a full result or
        failure from the board, and re-running without the option gives the run the board takes.
        """
        runs = self.client.search_runs(
            [self.experiment_id], order_by=["attributes.start_time DESC"], max_results=50000
        )
        wanted = set(submissions) if submissions is not None else None
        chosen: dict[tuple[str, str, str], Any] = {}
        for run in runs:
            tags = run.data.tags
            group = (tags.get("submission", ""), tags.get("track", ""), tags.get("dataset", ""))
            if not group[0] or (wanted is not None and group[0] not in wanted):
                continue
            if run.info.status not in ("FINISHED", "FAILED"):
                continue
            current = chosen.get(group)
            # Newest first: a run replaces the chosen one only when it ranks strictly higher.
            if current is None or _rank(run) > _rank(current):
                chosen[group] = run
        return [chosen[k] for k in sorted(chosen)]

    def current_result(self, run) -> dict[str, Any] | None:
        """Return a FINISHED run's ``result.json`` if it is current and reads back, else ``None``."""
        result, _ = self.checked_result(run)
        return result

    def checked_result(self, run) -> tuple[dict[str, Any] | None, str]:
        """Read a FINISHED run's ``result.json`` back and check it again against its track's declarations.

        A run stored by this code always passes; one written to the tracking store by other means (an older
        version, a hand edit, a damaged file) must never break an export or the site build for everyone.

        Returns
        -------
        result : dict or None
            The document, or ``None`` when the run is not FINISHED, has an older schema, or fails the check.
        problem : str
            Why a FINISHED run's result cannot be used (empty when it can, or when its schema is older).
        """
        from mlflow.exceptions import MlflowException

        if run.info.status != "FINISHED":
            return None, ""
        tags = run.data.tags
        try:
            result = self.result_of(run)
            if not isinstance(result, dict):
                raise SchemaError(f"result.json must be an object, got {type(result).__name__}")
            if result.get("schema_version") != SCHEMA_VERSION:
                return None, ""  # an older schema: skipped until the run is repeated
            checked = track_class(tags.get("track", "")).parse_result(result)
            if (checked.submission_id, checked.track, checked.dataset) != (
                tags.get("submission"),
                tags.get("track"),
                tags.get("dataset"),
            ):
                raise SchemaError("result.json names another submission, track or data set than its run")
        except (OSError, MlflowException, SchemaError, KeyError, ValueError, RecursionError) as exc:
            return None, " ".join(f"stored result cannot be read: {type(exc).__name__}: {exc}".split())[:300]
        return result, ""

    def export(self, submissions: Iterable[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Long-format results and one provenance record per run, for the site.

        Returns
        -------
        results : pandas.DataFrame
            Columns :func:`result_columns`, from the FINISHED runs with the current result schema
            (dimensions a row's track does not have are ``-``).
        runs : pandas.DataFrame
            One row per chosen run (FINISHED or FAILED) with provenance fields; ``preview`` names the options
            that make it a preview the board never takes (:func:`run_preview`; empty for a board run).
        """
        columns = result_columns()
        dims = columns[len(KEY_COLUMNS) : -2]
        rows: list[dict[str, Any]] = []
        records: list[dict[str, Any]] = []
        for run in self.latest_runs(submissions):
            tags = run.data.tags
            record = {
                "submission": tags.get("submission", ""),
                "track": tags.get("track", ""),
                "dataset": tags.get("dataset", ""),
                "status": run.info.status,
                "reason": tags.get(REASON_TAG, ""),
                "run_id": tags.get(SOURCE_RUN_TAG) or run.info.run_id,
                "image_tag": tags.get("image_tag", ""),
                "image_id": tags.get("image_id", ""),
                "benchmark_version": tags.get("benchmark_version", ""),
                "data_hash": tags.get("data_hash", ""),
                "model_revision": tags.get("model_revision", ""),
                "runner": tags.get("runner", ""),
                "hardware": json.loads(tags.get("hardware", "{}") or "{}"),
                "git_commit": tags.get("git_commit", ""),
                "preview": run_preview(run.data.params),
                "started_at": pd.Timestamp(run.info.start_time, unit="ms", tz="UTC").isoformat(),
                "duration_s": round(
                    ((run.info.end_time or run.info.start_time) - run.info.start_time) / 1000, 1
                ),
            }
            result, problem = self.checked_result(run)
            if problem:  # listed as failed, never allowed to break the export or the site
                record["status"], record["reason"] = "FAILED", problem
            elif run.info.status == "FINISHED" and result is None:
                continue  # written by an older version of the result schema: re-run to refresh it
            if result is not None:
                details = result.get("details", {})
                record["counts"] = result.get("counts", {})
                record["tied_pairs"] = len(details.get("tied_pairs", []))
                record["skipped_molecules"] = len(result.get("skipped_molecules", []))
                key = {k: record[k] for k in KEY_COLUMNS}
                for row in result["rows"]:
                    rows.append({**key, **{d: row.get(d, "-") for d in dims}, "metric": row["metric"],
                                 "value": row["value"]})  # fmt: skip
            records.append(record)
        return pd.DataFrame(rows, columns=columns), pd.DataFrame(records)

    def export_tables(self, submissions: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
        """Every per-item table the tracks declare, from the artifacts of the runs :meth:`latest_runs` chose.

        Parameters
        ----------
        submissions : iterable of str, optional
            Submission ids to export (default: every submission in the store).

        Returns
        -------
        dict of str to pandas.DataFrame
            By table name (:class:`~evaluators.schema.TableSpec`): columns ``submission, track, dataset``
            and the table's own columns, with the rows its ``where`` keeps; numeric columns as floats, the
            rest as strings. FAILED runs and runs without the artifact contribute no rows.
        """
        specs = table_specs()
        frames: dict[str, list[pd.DataFrame]] = {name: [] for name in specs}
        runs = [r for r in self.latest_runs(submissions) if self.current_result(r) is not None]
        for name, (track, spec) in specs.items():
            for run in runs:
                tags = run.data.tags
                if tags.get("track") != track:
                    continue
                try:
                    frame = self._artifact_table(run, spec)
                except (OSError, ValueError, UnicodeDecodeError) as exc:
                    # A damaged artifact of one run leaves out that run's rows of this table, nothing more.
                    warnings.warn(f"run {run.info.run_id}: {spec.artifact} not exported: {exc}", stacklevel=2)
                    continue
                if frame is not None:
                    frames[name].append(frame.assign(**{k: tags.get(k, "") for k in KEY_COLUMNS}))
        out: dict[str, pd.DataFrame] = {}
        for name, (_, spec) in specs.items():
            columns = [*KEY_COLUMNS, *spec.columns]
            if frames[name]:
                out[name] = pd.concat(frames[name], ignore_index=True).loc[:, columns]
            else:
                out[name] = pd.DataFrame(
                    {c: pd.Series(dtype=float if c in spec.numeric else str) for c in columns}
                )
        return out

    def _artifact_table(self, run, spec: TableSpec) -> pd.DataFrame | None:
        run_id = run.info.run_id
        if spec.artifact not in {a.path for a in self._artifacts(run).list_artifacts()}:
            return None
        with tempfile.TemporaryDirectory() as tmp:
            local = self._artifacts(run).download_artifacts(spec.artifact, tmp)
            frame = pd.read_csv(local, dtype=str, keep_default_na=False)
        if tuple(frame.columns) != spec.columns:
            raise ValueError(
                f"run {run_id}: {spec.artifact} has columns {list(frame.columns)}, expected "
                f"{list(spec.columns)}. The run predates this table's format; re-run the evaluation."
            )
        for column, value in spec.where:
            frame = frame.loc[frame[column] == value]
        for column in spec.numeric:
            frame[column] = pd.to_numeric(frame[column]).astype(float)
        return frame

    def log_training(
        self,
        name: str,
        params: Mapping[str, Any],
        tags: Mapping[str, Any],
        metric_history: Mapping[str, Iterable[tuple[int, float]]],
        artifacts: Iterable[Path],
    ) -> str:
        """Log one finished training run (``leaderboard.tools.training``) to ``chemrobust-training``.

        Kept apart from the evaluation experiment, so :meth:`latest_runs` and the site never see it; its
        artifacts live in ``<evaluation artifact location>/training``.

        Parameters
        ----------
        name : str
            Run name (the submission id).
        params, tags : mapping
            Configuration and identifying tags (corpus hash, environment); values are stringified.
        metric_history : mapping of str to iterable of (int, float)
            Curves as ``(step, value)`` points, e.g. ``{"loss": [(10, 3.2), (20, 2.9)]}``.
        artifacts : iterable of pathlib.Path
            Files to attach (reports, config, weights, tokenizer).

        Returns
        -------
        str
            The MLflow run id.
        """
        from mlflow.entities import Metric, Param

        experiment = self.client.get_experiment_by_name(f"{EXPERIMENT}-training")
        if experiment is None:
            base = self.client.get_experiment(self.experiment_id).artifact_location
            location = f"{base.rstrip('/')}/training" if base else None
            experiment_id = self.client.create_experiment(
                f"{EXPERIMENT}-training", artifact_location=location
            )
        else:
            experiment_id = experiment.experiment_id
        run = self.client.create_run(
            experiment_id, run_name=name, tags={k: str(v)[:5000] for k, v in tags.items()}
        )
        run_id = run.info.run_id
        items = [Param(k, str(v)[:6000]) for k, v in sorted(params.items())]
        for i in range(0, len(items), 100):
            self.client.log_batch(run_id, params=items[i : i + 100])
        now = int(time.time() * 1000)
        points = [
            Metric(key, float(value), now, int(step))
            for key, curve in metric_history.items()
            for step, value in curve
            if math.isfinite(value)
        ]
        for i in range(0, len(points), 1000):
            self.client.log_batch(run_id, metrics=points[i : i + 1000])
        for path in artifacts:
            self.client.log_artifact(run_id, str(path))
        self.client.set_terminated(run_id, "FINISHED")
        return run_id
