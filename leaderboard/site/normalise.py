"""Checking and normalising what the store hands over before it becomes the site's data files.

Each function takes one export as :meth:`leaderboard.store.ResultStore.export` /
:meth:`~leaderboard.store.ResultStore.export_tables` return it and gives back a canonical form: columns in
the declared order, rows sorted, keys unique, submission ids checked to be slugs (they become file
names, none of the site's reserved names), plain JSON types. A failure reason is exported as the public
sees it (:func:`leaderboard.scrub.public_reason`: no host paths, Docker storage, kernel command line, ids
or addresses); the full reason stays in MLflow. Every text a submission controls (per-item table cells,
run and submission fields) is exported through :func:`leaderboard.text.visible`: control characters and
bidirectional overrides escaped. A violation raises ``ValueError`` naming the export, the
column and the fix. Everything here is pure.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from evaluators.schema import TableSpec
from leaderboard.reserved import RESERVED_IDS, is_reserved
from leaderboard.scrub import public_reason
from leaderboard.site.schema import RUN_KEYS, RUN_STATUSES, SLUG, SUBMISSION_KEYS
from leaderboard.text import all_visible, visible
from leaderboard.tracks import KEY_COLUMNS, result_columns

__all__ = [
    "categorical",
    "check_slug",
    "empty_results",
    "empty_table",
    "jsonable",
    "missing",
    "normalise_results",
    "normalise_runs",
    "normalise_submissions",
    "normalise_table",
    "require_columns",
    "sort_unique",
    "table_columns",
    "table_key",
]


def check_slug(value: str, where: str) -> None:
    """Raise ``ValueError`` unless ``value`` is a submission id usable as a page's file name."""
    if not SLUG.fullmatch(value):
        raise ValueError(
            f"{where}: submission id {value!r} is not a slug (letters, digits, '.', '_', '-', "
            "starting with a letter or digit). Use the submission's folder name."
        )
    if is_reserved(value):
        raise ValueError(
            f"{where}: submission id {value!r} is reserved: the site uses it for a page or folder "
            f"(reserved: {', '.join(sorted(RESERVED_IDS))}). Rename the submission folder."
        )


def missing(value: Any) -> bool:
    """``None``, NaN or NaT (containers are never missing, even when empty)."""
    if value is None:
        return True
    if isinstance(value, (list, tuple, dict, set, np.ndarray)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str, hint: str) -> None:
    """Raise ``TypeError``/``ValueError`` naming ``what`` unless ``frame`` is a DataFrame with ``columns``."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}.")
    lacking = [c for c in columns if c not in frame.columns]
    if lacking:
        raise ValueError(f"{what}: missing columns {lacking}; got {list(map(str, frame.columns))}. {hint}")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


def empty_results() -> pd.DataFrame:
    """Return an empty results frame with the columns :func:`leaderboard.tracks.result_columns`."""
    columns = result_columns()
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in columns[:-1]})
    frame["value"] = pd.Series(dtype=float)
    return frame


def normalise_results(results: pd.DataFrame) -> pd.DataFrame:
    """Check the long results and return them with the declared columns, sorted by every key column."""
    columns = result_columns()
    keys = columns[:-1]
    require_columns(results, columns, "results", f"The long format needs {columns}.")
    frame = results.loc[:, columns].copy()
    for col in keys:
        if frame[col].isna().any():
            raise ValueError(
                f"results: column {col!r} has empty values. Every key column must be filled "
                "(use '-' where a dimension does not apply)."
            )
        frame[col] = frame[col].astype(str)
    try:
        frame["value"] = pd.to_numeric(frame["value"], errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"results: column 'value' must be numeric (NaN for missing): {exc}") from exc
    for sub in frame["submission"].unique():
        check_slug(sub, "results: column 'submission'")
    dup = frame.duplicated(subset=keys, keep=False)
    if dup.any():
        first = frame.loc[dup, keys].iloc[0].to_dict()
        raise ValueError(
            f"results: {int(dup.sum())} rows repeat a key, e.g. {first}. Each "
            f"(submission, ..., metric) key must appear once; drop stale runs first."
        )
    return frame.sort_values(keys, kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Per-item tables
# --------------------------------------------------------------------------------------------


def table_columns(spec: TableSpec) -> list[str]:
    """Columns of a table's export file: the key columns the host adds, then the track's own."""
    return [*KEY_COLUMNS, *spec.columns]


def table_key(spec: TableSpec) -> list[str]:
    """Columns that identify a row: all but the last numeric one (the table's value) and the added ones."""
    value = spec.numeric[-1] if spec.numeric else None
    return [c for c in table_columns(spec) if c != value and c not in spec.added]


def empty_table(spec: TableSpec) -> pd.DataFrame:
    """Return an empty table with its export columns (text as categories, numbers as floats)."""
    return pd.DataFrame(
        {
            c: pd.Series(dtype=float) if c in spec.numeric else pd.Series(dtype="category")
            for c in table_columns(spec)
        }
    )


def categorical(column: pd.Series) -> pd.Series:
    """Return the column as a categorical of ``str`` with sorted categories (no unused ones)."""
    # The categories are read as one list (iterating a pyarrow-backed index is one conversion per string).
    if isinstance(column.dtype, pd.CategoricalDtype) and all(
        isinstance(c, str) for c in column.cat.categories.tolist()
    ):
        column = column.cat.remove_unused_categories()
        return column.cat.reorder_categories(sorted(column.cat.categories.tolist()))
    return column.astype(str).astype("category")


def visible_categories(column: pd.Series) -> pd.Series:
    """Return a categorical text column with every category :func:`leaderboard.text.visible` (published)."""
    if all_visible(column.cat.categories.tolist()):  # honest text: nothing to escape, nothing to rebuild
        return column
    return categorical(column.astype(str).map(visible))


def normalise_table(frame: pd.DataFrame, spec: TableSpec, name: str) -> pd.DataFrame:
    """Check one per-item table and return it canonical: export columns, sorted by :func:`table_key`.

    Text columns become categoricals of ``str`` (fast to sort and write on millions of rows), numeric
    columns floats (NaN allowed only in the value column).
    """
    columns = table_columns(spec)
    if isinstance(frame, pd.DataFrame) and frame.empty and not set(columns) <= set(frame.columns):
        return empty_table(spec)
    if isinstance(frame, pd.DataFrame):  # a table recorded before a column was added reads it as empty
        frame = frame.assign(**{c: "" for c in spec.added if c not in frame.columns})
    require_columns(
        frame, columns, name, f"Pass the {name!r} table of ResultStore.export_tables() ({columns})."
    )
    key = table_key(spec)
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for col in columns:
        column = frame[col].reset_index(drop=True)
        if col in spec.numeric:
            try:
                values = pd.to_numeric(column, errors="raise").astype(float)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name}: column {col!r} must be numeric: {exc}") from exc
            if col in key and not np.isfinite(values.to_numpy()).all():
                raise ValueError(f"{name}: column {col!r} must hold finite numbers (it is part of the key).")
            out[col] = values.to_numpy()
        else:
            if col in key and column.isna().any():
                raise ValueError(f"{name}: column {col!r} has empty values. Every key column must be filled.")
            out[col] = visible_categories(categorical(column.fillna("")))
    for sub in out["submission"].cat.categories:
        check_slug(str(sub), f"{name}: column 'submission'")
    # Rows of one item sit together across models (submission sorts last): the strings a track writes are
    # the same for every model, so gzip stores them about once (item_ranks: 4.6 MB -> 1.8 MB).
    return sort_unique(out, [c for c in key if c != "submission"] + ["submission"], what=name)


def sort_unique(frame: pd.DataFrame, keys: Sequence[str], *, what: str) -> pd.DataFrame:
    """Sort ``frame`` by ``keys`` (categorical columns alphabetically) and reject a repeated key.

    Sorting the categories' integer codes is much faster than sorting strings on millions of rows, and
    gives the same order as ``sort_values`` on the strings (categories are sorted).
    """
    codes = [
        frame[c].cat.codes.to_numpy()
        if isinstance(frame[c].dtype, pd.CategoricalDtype)
        else frame[c].to_numpy()
        for c in keys
    ]
    order = np.lexsort(codes[::-1]) if codes else np.arange(len(frame))
    frame = frame.iloc[order].reset_index(drop=True)
    if len(frame) > 1 and codes:
        same = np.ones(len(frame) - 1, dtype=bool)
        for c in codes:
            sorted_c = c[order]
            same &= sorted_c[1:] == sorted_c[:-1]
        if same.any():
            first = int(np.flatnonzero(same)[0])
            example = {c: jsonable(frame[c].iloc[first]) for c in keys}
            raise ValueError(
                f"{what}: {int(same.sum())} rows repeat a key, e.g. {example}. Each "
                f"({', '.join(keys)}) key must appear once; drop stale runs first."
            )
    return frame


# --------------------------------------------------------------------------------------------
# Runs and submissions
# --------------------------------------------------------------------------------------------


def normalise_runs(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Return one JSON record per run (:data:`RUN_KEYS`), sorted by submission, track, data set, start."""
    if not isinstance(runs, pd.DataFrame):
        raise TypeError(f"runs must be a pandas DataFrame, got {type(runs).__name__}.")
    records: list[dict[str, Any]] = []
    for i, raw in enumerate(runs.to_dict(orient="records")):
        rec: dict[str, Any] = {}
        for key in RUN_KEYS:
            val = raw.get(key)
            if key == "hardware":
                rec[key] = _hardware(val)
            elif key == "started_at":
                rec[key] = _timestamp(val)
            elif key == "duration_s":
                rec[key] = None if missing(val) else float(val)
            elif key == "reason":  # published: scrubbed of host details (the full one stays in MLflow)
                rec[key] = None if missing(val) else public_reason(val) if str(val).strip() else str(val)
            else:
                rec[key] = None if missing(val) else visible(str(val))
        sub = rec["submission"]
        if sub is None:
            raise ValueError(f"runs: row {i} has no 'submission'. Every run must name its submission.")
        check_slug(sub, f"runs: row {i} 'submission'")
        status = (rec["status"] or "").upper()
        if status not in RUN_STATUSES:
            raise ValueError(
                f"runs: row {i} ({sub}) has status {rec['status']!r}; the site shows only "
                f"{list(RUN_STATUSES)}. Filter unfinished runs out before exporting."
            )
        rec["status"] = status
        records.append(rec)
    records.sort(
        key=lambda r: tuple(r[k] or "" for k in ("submission", "track", "dataset", "started_at", "run_id"))
    )
    return records


def normalise_submissions(submissions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One JSON record per submission with the keys :data:`SUBMISSION_KEYS`, sorted by id."""
    if not isinstance(submissions, list):
        raise TypeError(f"submissions must be a list of dicts, got {type(submissions).__name__}.")
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, raw in enumerate(submissions):
        if not isinstance(raw, Mapping):
            raise TypeError(f"submissions[{i}] must be a dict, got {type(raw).__name__}.")
        sub_id = raw.get("id")
        if not isinstance(sub_id, str):
            raise ValueError(f"submissions[{i}]: 'id' must be the submission folder name, got {sub_id!r}.")
        check_slug(sub_id, f"submissions[{i}] 'id'")
        if sub_id in seen:
            raise ValueError(f"submissions: id {sub_id!r} appears twice. Each submission is listed once.")
        seen.add(sub_id)
        records.append({key: jsonable(raw.get(key)) for key in SUBMISSION_KEYS})
    records.sort(key=lambda r: r["id"])
    return records


def _hardware(value: Any) -> dict[str, Any]:
    if missing(value):
        return {}
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return {"description": value}
        value = parsed if isinstance(parsed, dict) else {"description": str(parsed)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    return {"description": str(value)}


def _timestamp(value: Any) -> str | None:
    if missing(value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        # MLflow stores start_time as integer milliseconds since the epoch.
        return datetime.fromtimestamp(float(value) / 1000.0, tz=UTC).isoformat()
    if isinstance(value, (datetime, pd.Timestamp)):
        ts = pd.Timestamp(value)
        ts = ts.tz_localize(UTC) if ts.tzinfo is None else ts.tz_convert(UTC)
        return ts.isoformat()
    return str(value)


def jsonable(value: Any) -> Any:
    """Convert a value to plain JSON types (NaN/NaT -> None, numpy scalars -> Python)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):  # published: a submission's text is shown, never obeyed (leaderboard.text)
        return visible(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    if isinstance(value, (datetime, pd.Timestamp, date)):
        return _timestamp(value) if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, PurePath):
        return value.as_posix()
    if isinstance(value, Mapping):
        return {visible(str(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((jsonable(v) for v in value), key=str)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return jsonable(dump(mode="json"))
    if missing(value):
        return None
    return visible(str(value))
