"""The result store: one MLflow run per (submission, image, track, data set, benchmark version, runner).

The only module that imports mlflow. A deterministic key (tag ``chemrobust.key``) makes re-runs idempotent:
a FINISHED run with the same key is reused; a failed run is marked FAILED with its one-line reason (tag
``chemrobust.failure_reason``) and never blocks a retry. Metrics are named
``<track>/<metric>/<augmentation>/<layer>/<distance>/<direction>/<subset>``; the full ``result.json`` and
per-item artifacts are logged as artifacts and are what the site export reads back (:meth:`ResultStore.export`
for the metrics, :meth:`ResultStore.export_curves` for the Recall@K curves; a FINISHED run's ``result.json``
is downloaded once per store object and cached by run id, since it never changes).

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
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

EXPERIMENT = "chemrobust"
KEY_TAG = "chemrobust.key"
REASON_TAG = "chemrobust.failure_reason"
RESULT_COLUMNS = [
    "submission",
    "track",
    "dataset",
    "augmentation",
    "layer",
    "distance",
    "direction",
    "subset",
    "metric",
    "value",
]
#: Columns of :meth:`ResultStore.export_curves` (one row per point of a Recall@K curve).
CURVE_COLUMNS = [
    "submission",
    "track",
    "dataset",
    "augmentation",
    "layer",
    "distance",
    "direction",
    "subset",
    "k",
    "recall",
]


def default_tracking_uri(state_dir: Path) -> str:
    """``MLFLOW_TRACKING_URI`` if set, else a sqlite file in the state folder."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{(state_dir / 'mlflow.db').resolve()}"


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


def run_key(fields: Mapping[str, str]) -> str:
    """Deterministic key of a result: sha256 over the identifying fields (sorted), 32 hex characters."""
    blob = json.dumps(dict(fields), sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def metric_name(track: str, row: Mapping[str, Any]) -> str:
    """MLflow metric name of one long-format result row."""
    parts = [
        track,
        row["metric"],
        row["augmentation"],
        row["layer"],
        row["distance"],
        row["direction"],
        row["subset"],
    ]
    return "/".join(str(p) for p in parts if p not in ("", "-", None))


class ResultStore:
    """MLflow-backed store of evaluation runs.

    Parameters
    ----------
    tracking_uri : str
        MLflow tracking URI.
    artifact_root : pathlib.Path, optional
        Where a new experiment keeps artifacts when the store is local.
    """

    def __init__(self, tracking_uri: str, artifact_root: Path | None = None) -> None:
        import mlflow
        from mlflow.tracking import MlflowClient

        self._mlflow = mlflow
        self.tracking_uri = tracking_uri
        with _init_lock(tracking_uri):
            self.client = MlflowClient(tracking_uri=tracking_uri)
            experiment = self.client.get_experiment_by_name(EXPERIMENT)
            if experiment is None:
                location = artifact_root.resolve().as_uri() if artifact_root is not None else None
                self.experiment_id = self.client.create_experiment(EXPERIMENT, artifact_location=location)
            else:
                self.experiment_id = experiment.experiment_id
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

    def finish(self, run_id: str, result: Mapping[str, Any], out_dir: Path) -> None:
        """Log every metric of ``result`` and the output folder's files, then mark the run FINISHED.

        Only regular files directly in ``out_dir`` are logged: a symbolic link written by a sandboxed run
        (say ``/out/x -> /proc/self/environ``) would otherwise be followed on the host.
        """
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [
            Metric(metric_name(result["track"], row), float(row["value"]), now, 0)
            for row in result["metrics"]
            if isinstance(row.get("value"), int | float) and math.isfinite(row["value"])
        ]
        for i in range(0, len(metrics), 1000):
            self.client.log_batch(run_id, metrics=metrics[i : i + 1000])
        for path in sorted(out_dir.iterdir()):
            if stat.S_ISREG(path.lstat().st_mode):
                self.client.log_artifact(run_id, str(path))
        self.client.set_terminated(run_id, "FINISHED")

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
            local = self.client.download_artifacts(run_id, "result.json", tmp)
            result = json.loads(Path(local).read_text())
        if run.info.status == "FINISHED":
            self._results[run_id] = result
        return result

    def latest_runs(self, submissions: Iterable[str] | None = None) -> list:
        """Newest run per (submission, track, data set): the newest FINISHED one, else the newest failure."""
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
            if current is None or (current.info.status != "FINISHED" and run.info.status == "FINISHED"):
                chosen[group] = run
        return [chosen[k] for k in sorted(chosen)]

    def export(self, submissions: Iterable[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Long-format results and one provenance record per run, for the site.

        Returns
        -------
        results : pandas.DataFrame
            Columns :data:`RESULT_COLUMNS`, from the FINISHED runs.
        runs : pandas.DataFrame
            One row per chosen run (FINISHED or FAILED) with provenance fields.
        """
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
                "run_id": run.info.run_id,
                "image_tag": tags.get("image_tag", ""),
                "image_id": tags.get("image_id", ""),
                "benchmark_version": tags.get("benchmark_version", ""),
                "data_hash": tags.get("data_hash", ""),
                "model_revision": tags.get("model_revision", ""),
                "runner": tags.get("runner", ""),
                "hardware": json.loads(tags.get("hardware", "{}") or "{}"),
                "git_commit": tags.get("git_commit", ""),
                "started_at": pd.Timestamp(run.info.start_time, unit="ms", tz="UTC").isoformat(),
                "duration_s": round(
                    ((run.info.end_time or run.info.start_time) - run.info.start_time) / 1000, 1
                ),
            }
            if run.info.status == "FINISHED":
                result = self.result_of(run)
                record["counts"] = result.get("counts", {})
                record["tied_pairs"] = len(result.get("tied_pairs", []))
                record["skipped_molecules"] = len(result.get("skipped_molecules", []))
                for row in result["metrics"]:
                    rows.append(
                        {
                            "submission": record["submission"],
                            "track": record["track"],
                            "dataset": record["dataset"],
                            **{k: row[k] for k in RESULT_COLUMNS[3:]},
                        }
                    )
            records.append(record)
        return pd.DataFrame(rows, columns=RESULT_COLUMNS), pd.DataFrame(records)

    def export_curves(self, submissions: Iterable[str] | None = None) -> pd.DataFrame:
        """Recall@K curves of the FINISHED runs chosen by :meth:`latest_runs`, in long format.

        Parameters
        ----------
        submissions : iterable of str, optional
            Submission ids to export (default: every submission in the store).

        Returns
        -------
        pandas.DataFrame
            Columns :data:`CURVE_COLUMNS`, one row per (curve, K): ``k`` is an int, ``recall`` a float.
            Runs whose ``result.json`` has no ``recall_at_k`` block contribute no rows.

        Notes
        -----
        Reads the same ``result.json`` as :meth:`export` through :meth:`result_of`, which caches it, so
        calling both downloads each file once.
        """
        rows: list[tuple[Any, ...]] = []
        for run in self.latest_runs(submissions):
            if run.info.status != "FINISHED":
                continue
            tags = run.data.tags
            key = (tags.get("submission", ""), tags.get("track", ""), tags.get("dataset", ""))
            rows += _curve_rows(key, self.result_of(run))
        return pd.DataFrame(rows, columns=CURVE_COLUMNS)

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

    def export_item_ranks(self, submissions: Iterable[str] | None = None) -> pd.DataFrame:
        """Per-molecule ranks of the headline retrieval setting, from each FINISHED run's ``ranks.csv.gz``.

        Parameters
        ----------
        submissions : iterable of str, optional
            Submission ids to export (default: every submission in the store).

        Returns
        -------
        pandas.DataFrame
            Columns ``submission, track, dataset, augmentation, distance, direction, id, status, rank``: the
            rows of the ``ranks.csv.gz`` artifact (last layer) of every run chosen by :meth:`latest_runs` that
            FINISHED, restricted to the headline setting (distance ``l2``, direction
            ``original_to_augmented``). ``id`` and ``status`` (``changed`` / ``identical``) are strings,
            ``rank`` a float (a tie gives a fractional rank such as 1.5). FAILED runs and runs without the
            artifact contribute no rows. These are the items :mod:`leaderboard.ranking.uncertainty` resamples.

        Raises
        ------
        ValueError
            If a run's ``ranks.csv.gz`` lacks one of its columns.
        """
        columns = [
            "submission",
            "track",
            "dataset",
            "augmentation",
            "distance",
            "direction",
            "id",
            "status",
            "rank",
        ]
        frames: list[pd.DataFrame] = []
        for run in self.latest_runs(submissions):
            run_id = run.info.run_id
            if run.info.status != "FINISHED":
                continue
            if "ranks.csv.gz" not in {a.path for a in self.client.list_artifacts(run_id)}:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                local = self.client.download_artifacts(run_id, "ranks.csv.gz", tmp)
                frame = pd.read_csv(local, dtype=str, keep_default_na=False)
            missing = [c for c in columns[3:] if c not in frame.columns]
            if missing:
                raise ValueError(
                    f"run {run_id}: ranks.csv.gz has no column(s) {missing}; got {list(frame.columns)}. "
                    "The run predates the per-molecule ranks format; re-run the evaluation."
                )
            frame = frame.loc[(frame["distance"] == "l2") & (frame["direction"] == "original_to_augmented")]
            tags = run.data.tags
            frame = frame.assign(
                submission=tags.get("submission", ""),
                track=tags.get("track", ""),
                dataset=tags.get("dataset", ""),
                rank=pd.to_numeric(frame["rank"]).astype(float),
            )
            frames.append(frame.loc[:, columns])
        if not frames:
            return pd.DataFrame({c: pd.Series(dtype=float if c == "rank" else str) for c in columns})
        return pd.concat(frames, ignore_index=True)


def _curve_rows(key: tuple[str, str, str], result: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Long rows ``(*key, augmentation, layer, distance, direction, subset, k, recall)`` of one result."""
    block = result.get("recall_at_k") or {}
    ks = [int(k) for k in block.get("k", [])]
    rows: list[tuple[Any, ...]] = []
    for curve in block.get("curves", []):
        recall = curve.get("recall", [])
        if len(recall) != len(ks):
            raise ValueError(
                f"{'/'.join(key)}: a Recall@K curve has {len(recall)} values for {len(ks)} K values "
                f"({curve.get('augmentation')}, {curve.get('distance')}, {curve.get('direction')}). "
                "The run's result.json is inconsistent; re-run the evaluation."
            )
        dims = tuple(str(curve[c]) for c in CURVE_COLUMNS[3:8])
        rows += [
            (*key, *dims, k, float(r) if r is not None else math.nan) for k, r in zip(ks, recall, strict=True)
        ]
    return rows
