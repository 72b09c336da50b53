"""The site's data files: writing what the store exports, and reading it back.

:func:`write_exports` turns what :class:`leaderboard.store.ResultStore` returns into the files under
``site/data/``: ``results.csv`` (the columns :func:`leaderboard.tracks.result_columns`), ``runs.json``,
``submissions.json`` and one file per per-item table the tracks declare
(:class:`evaluators.schema.TableSpec`: ``site/data/<spec.file>``, gzip-compressed when it ends in
``.gz``). :func:`read_results` and :func:`read_table` read them back; the pages are generated from these
files alone, so the site rebuilds from git.

Invariants
----------
- Deterministic bytes: rows sorted by their key columns, JSON keys in a fixed order, ``.gz`` files with
  mtime 0 and no file name in the gzip header.
- Every file is written atomically (:mod:`leaderboard.files`).
- A table file may lack trailing text columns its spec declares (columns appended to a table later,
  e.g. the strings added to a rank table): they read as ``''``, so a committed board stays readable until
  the next evaluation rewrites it.

Side effects: :func:`write_exports` creates ``<site_dir>/data/`` and overwrites the files it writes.
"""

from __future__ import annotations

import gzip
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from leaderboard.files import atomic_open, write_json
from leaderboard.site.normalise import (
    empty_results,
    empty_table,
    normalise_results,
    normalise_runs,
    normalise_submissions,
    normalise_table,
    table_columns,
)
from leaderboard.site.schema import RESULTS_FILE, RUNS_FILE, SUBMISSIONS_FILE
from leaderboard.tracks import result_columns, table_specs

__all__ = ["read_results", "read_table", "read_tables", "write_csv", "write_exports"]

_HINT = "Regenerate it with leaderboard.site.exports.write_exports."


def write_exports(
    results: pd.DataFrame,
    runs: pd.DataFrame,
    submissions: list[dict[str, Any]],
    site_dir: Path,
    *,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> None:
    """Write the site's data files under ``<site_dir>/data/``.

    Parameters
    ----------
    results : pandas.DataFrame
        Long results with the columns :func:`leaderboard.tracks.result_columns` (extra columns are
        dropped). ``value`` must be numeric; NaN is written as an empty cell.
    runs : pandas.DataFrame
        One row per MLflow run with (a subset of) the columns
        :data:`leaderboard.site.schema.RUN_KEYS`; missing columns are written as ``null``. ``status``
        must be ``"FINISHED"`` or ``"FAILED"``. ``hardware`` may be a dict or a JSON string;
        ``started_at`` an ISO string, a datetime, or MLflow's integer milliseconds since the epoch.
    submissions : list of dict
        Manifest metadata per submission, with the keys :data:`leaderboard.site.schema.SUBMISSION_KEYS`
        (``id`` required, the others default to ``null``; other keys are dropped).
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).
    tables : mapping of str to pandas.DataFrame, optional
        Per-item tables by name, as :meth:`leaderboard.store.ResultStore.export_tables` returns them
        (columns ``submission, track, dataset`` and the table's own). A declared table that is not given
        leaves its file as it is.

    Raises
    ------
    ValueError
        If a required column is missing, a value is not numeric, a key repeats, a submission id is not a
        slug or repeats, a run status is not FINISHED/FAILED, or a table is not declared by any track.

    Notes
    -----
    Rows of ``results.csv`` are sorted by every key column, ``runs.json`` by submission, track,
    dataset, started_at and run_id, ``submissions.json`` by id, and every table by its key (every column
    but its last numeric one); numbers are written as shortest round-trip text (``1``, ``1.5``,
    ``0.123456``), all UTF-8 with Unix line endings.
    """
    specs = table_specs()
    unknown = sorted(set(tables or {}) - set(specs))
    if unknown:
        raise ValueError(
            f"tables: {unknown} are not declared by any registered track; known: {sorted(specs)}."
        )
    res = normalise_results(results)
    run_records = normalise_runs(runs)
    sub_records = normalise_submissions(submissions)
    normalised = {
        name: normalise_table(frame, specs[name][1], name) for name, frame in (tables or {}).items()
    }

    data_dir = Path(site_dir) / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    with atomic_open(data_dir / RESULTS_FILE) as handle:
        handle.write(res.to_csv(index=False, lineterminator="\n").encode("utf-8"))
    write_json(data_dir / RUNS_FILE, run_records)
    write_json(data_dir / SUBMISSIONS_FILE, sub_records)
    for name, frame in normalised.items():
        write_csv(frame, data_dir / specs[name][1].file)


def read_results(site_dir: Path) -> pd.DataFrame:
    """Read ``<site_dir>/data/results.csv`` back into a DataFrame.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).

    Returns
    -------
    pandas.DataFrame
        Columns :func:`leaderboard.tracks.result_columns`; key columns as ``str``, ``value`` as ``float``
        (exact round trip of what :func:`write_exports` wrote). Empty when the file does not exist.

    Raises
    ------
    ValueError
        If a column is missing or a value is not a number.
    """
    path = Path(site_dir) / "data" / RESULTS_FILE
    if not path.is_file():
        return empty_results()
    columns = result_columns()
    frame = pd.read_csv(
        path, dtype={c: str for c in columns[:-1]}, keep_default_na=False, na_values={"value": [""]}
    )
    lacking = [c for c in columns if c not in frame.columns]
    if lacking:
        raise ValueError(f"{path}: missing columns {lacking}. {_HINT}")
    frame = frame.loc[:, columns]
    frame["value"] = pd.to_numeric(frame["value"], errors="raise").astype(float)
    return frame


def read_table(site_dir: Path, name: str) -> pd.DataFrame:
    """Read one declared per-item table back from ``<site_dir>/data/<spec.file>``.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).
    name : str
        The table's name (:func:`leaderboard.tracks.table_specs`).

    Returns
    -------
    pandas.DataFrame
        The export columns (``submission, track, dataset`` and the spec's); text columns as ``category``
        of ``str``, numeric columns as ``float``. Trailing text columns the file lacks are ``''``. Empty
        when the file does not exist.

    Raises
    ------
    KeyError
        If no registered track declares ``name``.
    ValueError
        If another column is missing or a number does not parse.
    """
    spec = table_specs()[name][1]
    path = Path(site_dir) / "data" / spec.file
    if not path.is_file():
        return empty_table(spec)
    columns = table_columns(spec)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        header = [h.strip('"') for h in handle.readline().rstrip("\r\n").split(",")]
    absent = [c for c in columns if c not in header]
    trailing = _trailing_text(columns, spec.numeric)
    lacking = [c for c in absent if c not in trailing]
    if lacking:
        raise ValueError(f"{path}: missing columns {lacking}. {_HINT}")
    present = [c for c in columns if c in header]
    text = [c for c in present if c not in spec.numeric]
    frame = _read_csv(path, present, categories=text, floats=[c for c in present if c in spec.numeric])
    for col in absent:
        frame[col] = pd.Categorical([""] * len(frame))
    return frame.loc[:, columns]


def read_tables(site_dir: Path) -> dict[str, pd.DataFrame]:
    """Every declared per-item table (:func:`read_table`), by name."""
    return {name: read_table(site_dir, name) for name in table_specs()}


def _trailing_text(columns: Sequence[str], numeric: Sequence[str]) -> list[str]:
    """Return the text columns after the last numeric column (columns a table gained later)."""
    last = max((columns.index(c) for c in numeric if c in columns), default=len(columns) - 1)
    return [c for c in columns[last + 1 :] if c not in numeric]


def _read_csv(
    path: Path, columns: Sequence[str], *, categories: Sequence[str] = (), floats: Sequence[str] = ()
) -> pd.DataFrame:
    """Read a long data file with pyarrow (fast on millions of rows); empty float cells are NaN."""
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    types = {c: pa.dictionary(pa.int32(), pa.string()) for c in categories}
    types |= {c: pa.float64() for c in floats}
    try:
        table = pa_csv.read_csv(
            path,
            convert_options=pa_csv.ConvertOptions(
                column_types=types, include_columns=list(columns), strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: not a valid data file ({exc}). {_HINT}") from exc
    frame = table.to_pandas()
    for col in floats:
        frame[col] = frame[col].astype(float)
    for col in categories:
        if not isinstance(frame[col].dtype, pd.CategoricalDtype):
            frame[col] = frame[col].astype(str).astype("category")
    return frame.loc[:, list(columns)]


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write a long table as CSV with pyarrow (fast on millions of rows), Unix line ends, atomically.

    Categorical columns go in as dictionary arrays, numbers as shortest round-trip text (``1``, ``1.5``,
    ``0.123456``). Text values are unquoted (as pandas writes them); when a value holds a comma, quote or
    line break, every text cell is quoted (still a valid CSV, read back the same). A ``.gz`` path is
    gzip-compressed with mtime 0 and no file name in the header, so the bytes are the same on every
    rebuild.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    arrays = {}
    plain = True
    for col in frame.columns:
        column = frame[col]
        if isinstance(column.dtype, pd.CategoricalDtype):
            values = [str(v) for v in column.cat.categories]
            arrays[col] = pa.DictionaryArray.from_arrays(
                column.cat.codes.to_numpy().astype(np.int32), pa.array(values, type=pa.string())
            )
        elif column.dtype.kind in "iu":
            arrays[col] = pa.array(column.to_numpy(dtype=np.int64), type=pa.int64())
        elif column.dtype.kind == "f":
            arrays[col] = pa.array(column.to_numpy(dtype=float), type=pa.float64(), from_pandas=True)
        else:
            values = [str(v) for v in column.unique()]
            arrays[col] = pa.array(column.astype(str).to_numpy(dtype=object), type=pa.string())
        if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype.kind not in "iuf":
            plain = plain and not any(ch in v for v in values for ch in (",", '"', "\r", "\n"))
    options = pa_csv.WriteOptions(include_header=False, quoting_style="none" if plain else "needed")
    with atomic_open(path) as raw:
        with (
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="")
            if path.suffix == ".gz"
            else raw as out
        ):
            out.write((",".join(map(str, frame.columns)) + "\n").encode())
            pa_csv.write_csv(pa.table(arrays), out, write_options=options)
