"""The site's data files: writing what the store exports, and reading it back.

:func:`write_exports` turns what :class:`leaderboard.store.ResultStore` returns into the files under
``site/data/``: ``results.csv.gz`` (the columns :func:`leaderboard.tracks.result_columns`), ``runs.json``,
``submissions.json`` and one file per per-item table the tracks declare
(:class:`evaluators.schema.TableSpec`: ``site/data/<spec.file>``, gzip-compressed when it ends in
``.gz``), replacing what is there: a fresh board (tests, benchmarks). The maintainers' build merges into
the committed board instead (:mod:`leaderboard.site.publish`): :func:`read_board` reads every exported file
into a :class:`~leaderboard.site.merge.Board` and :func:`write_board` writes one back (byte for byte the
same when nothing changed). :func:`read_results` and :func:`read_table` read the files back; the pages are
generated from these files alone, so the site rebuilds from git.

Invariants
----------
- Deterministic bytes: rows sorted by their key columns, JSON keys in a fixed order, ``.gz`` files cut
  into gzip members of fixed size (:func:`leaderboard.files.gzip_writer`), mtime 0 and no file name in
  their headers.
- Every file is written atomically (:mod:`leaderboard.files`).
- A table file may lack trailing text columns its spec declares (columns appended to a table later,
  e.g. the strings added to a rank table): they read as ``''``, so a committed board stays readable until
  the next evaluation rewrites it.

Side effects: :func:`write_exports` and :func:`write_board` create ``<site_dir>/data/`` and overwrite the
files they write.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evaluators.schema import TableSpec
from leaderboard.files import atomic_open, gzip_writer, write_json
from leaderboard.site.merge import Board
from leaderboard.site.normalise import (
    empty_results,
    empty_table,
    normalise_results,
    normalise_runs,
    normalise_submissions,
    normalise_table,
    table_columns,
)
from leaderboard.site.schema import (
    LEGACY_RESULTS_FILE,
    RESULTS_FILE,
    RETIRED_FILE,
    RUNS_FILE,
    SUBMISSIONS_FILE,
)
from leaderboard.tracks import KEY_COLUMNS, result_columns, table_specs

__all__ = [
    "read_board",
    "read_results",
    "read_table",
    "read_tables",
    "write_board",
    "write_csv",
    "write_exports",
]

_HINT = "Regenerate it with leaderboard.site.exports.write_exports."


def write_exports(
    results: pd.DataFrame,
    runs: pd.DataFrame,
    submissions: list[dict[str, Any]],
    site_dir: Path,
    *,
    tables: Mapping[str, pd.DataFrame] | None = None,
) -> None:
    """Write the site's data files under ``<site_dir>/data/``, replacing what is there (no merge).

    A fresh board, for tests and benchmarks; the maintainers' build merges into the committed board with
    :func:`leaderboard.site.publish.merge_exports` instead, so it never wipes results.

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
    Rows of ``results.csv.gz`` are sorted by every key column, ``runs.json`` by submission, track,
    dataset, started_at and run_id, ``submissions.json`` by id, and every table by its key (every column
    but its last numeric one); numbers are written as shortest round-trip text (``1``, ``1.5``,
    ``0.123456``), all UTF-8 with Unix line endings.
    """
    board = Board.from_exports(results, runs, submissions, tables)
    write_board(board, site_dir)


def write_board(board: Board, site_dir: Path, *, files: Collection[str] | None = None) -> None:
    """Write a normalised board (:class:`leaderboard.site.merge.Board`) under ``<site_dir>/data/``.

    Parameters
    ----------
    board : leaderboard.site.merge.Board
        The files' contents; a per-item table absent from ``board.tables`` leaves its file as it is, and
        ``retired.json`` is written only when ``board.retired`` holds a record (or the file exists).
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).
    files : collection of str, optional
        Write only these file names (``results.csv.gz``, ``runs.json``, a table's file …); default: all.
    """
    specs = table_specs()
    data_dir = Path(site_dir) / "data"
    data_dir.mkdir(parents=True, exist_ok=True)

    def wanted(name: str) -> bool:
        return files is None or name in files

    if wanted(RESULTS_FILE):
        text = board.results.to_csv(index=False, lineterminator="\n").encode("utf-8")
        with gzip_writer(data_dir / RESULTS_FILE) as out:
            out.write(text)
        (data_dir / LEGACY_RESULTS_FILE).unlink(missing_ok=True)  # its rows are in RESULTS_FILE now
    if wanted(RUNS_FILE):
        write_json(data_dir / RUNS_FILE, board.runs)
    if wanted(SUBMISSIONS_FILE):
        write_json(data_dir / SUBMISSIONS_FILE, board.submissions)
    if wanted(RETIRED_FILE) and (board.retired or (data_dir / RETIRED_FILE).is_file()):
        write_json(data_dir / RETIRED_FILE, board.retired)
    for name, frame in board.tables.items():
        if wanted(specs[name][1].file):
            write_csv(_without_unused_added(frame, specs[name][1]), data_dir / specs[name][1].file)


def _without_unused_added(frame: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """Drop the columns a table gained later (``TableSpec.added``) that no row fills yet.

    Rows of runs made before a column existed read it as ``''`` (:func:`read_table`); writing it back
    empty would rewrite every committed file of the board on the first build after a track gains a
    column, though no value changed. The column appears in the file with the first run that fills it.
    """
    unused = [
        c
        for c in spec.added
        if c in frame.columns and c not in spec.numeric and not frame[c].astype(str).ne("").any()
    ]
    return frame.drop(columns=unused) if unused else frame


def read_board(site_dir: Path) -> Board:
    """Read every exported file of ``<site_dir>/data/`` back into a :class:`~leaderboard.site.merge.Board`.

    A missing file counts as empty; every declared table is read (:func:`read_tables`). Writing the board
    back with :func:`write_board` reproduces the files byte for byte.

    Raises
    ------
    ValueError
        If a file is malformed (what :func:`read_results`, :func:`read_table` and
        :func:`leaderboard.site.normalise.normalise_runs` raise).
    """
    data_dir = Path(site_dir) / "data"
    specs = table_specs()
    return Board(
        results=normalise_results(read_results(site_dir)),
        runs=normalise_runs(pd.DataFrame(_json_list(data_dir / RUNS_FILE))),
        submissions=normalise_submissions(_json_list(data_dir / SUBMISSIONS_FILE)),
        tables={
            name: normalise_table(frame, specs[name][1], name)
            for name, frame in read_tables(site_dir).items()
        },
        retired=_json_list(data_dir / RETIRED_FILE),
    )


def _json_list(path: Path) -> list[dict[str, Any]]:
    """Read a JSON list of objects (``[]`` when the file does not exist)."""
    if not path.is_file():
        return []
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}). {_HINT}") from exc
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise ValueError(f"{path}: must be a JSON list of objects. {_HINT}")
    return obj


def read_results(site_dir: Path) -> pd.DataFrame:
    """Read ``<site_dir>/data/results.csv.gz`` back into a DataFrame.

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
        path = path.with_name(LEGACY_RESULTS_FILE)  # a board written before the results were compressed
    if not path.is_file():
        return empty_results()
    columns = result_columns()
    frame = pd.read_csv(
        path, dtype={c: str for c in columns[:-1]}, keep_default_na=False, na_values={"value": [""]}
    )
    dims = set(columns[len(KEY_COLUMNS) : -2])
    lacking = [c for c in columns if c not in frame.columns and c not in dims]
    if lacking:
        raise ValueError(f"{path}: missing columns {lacking}. {_HINT}")
    # A track registered after this file was written adds dimensions its older rows do not have: '-'.
    frame = frame.reindex(columns=columns, fill_value="-")
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
        of ``str``, numeric columns as ``float``. Trailing text columns, and added ones
        (``TableSpec.added``), the file lacks are ``''``. Empty when the file does not exist.

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
    lacking = [c for c in absent if c not in trailing and c not in spec.added]  # added: read as empty
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
    gzip-compressed on every core (:func:`leaderboard.files.gzip_writer`: members of fixed size, mtime 0,
    no file name), so the bytes are the same on every rebuild.
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
    with gzip_writer(path) if path.suffix == ".gz" else atomic_open(path) as out:
        out.write((",".join(map(str, frame.columns)) + "\n").encode())
        pa_csv.write_csv(pa.table(arrays), out, write_options=options)
