"""Merging a new export into the committed board: the board's record survives any machine.

The files under ``site/data/`` are the board's record; what a local MLflow store exports is only what this
machine has evaluated. :func:`merge_boards` folds a new export into the committed board by **result key**
``(submission, track, dataset)`` — the key of one MLflow run, identified in ``runs.json`` by its
``run_id``, ``image_tag`` and ``benchmark_version``:

- a key the new export holds a result for replaces the committed rows of that key (results, every
  per-item table, its ``runs.json`` records) — unless the committed result comes from a run that started
  later (then the committed one is kept: a stale local store never rolls the board back); the committed
  run itself (same ``run_id``) is re-exported with its records kept;
- a key the new export does not hold is kept as committed (an empty store keeps the whole board);
- a new key is added;
- a FAILED new run never drops a committed result: the committed rows and FINISHED record stay, the
  failure is added as the key's latest attempt (the overview lists it under "Failed runs", the model page
  shows both runs); a failure older than the committed result is ignored;
- a run :func:`retire_keys` retired (``retired.json``) is never added back;
- a preview — a run whose options differ from the board's (``--limit``, a seed; the store's ``preview``
  field) — is never merged: :func:`split_previews` takes its results, per-item rows and records out of the
  export before the merge, and the report names the key and the option (:attr:`MergeReport.previews`).

:func:`retire_keys` is the only way results leave the board. :class:`MergeReport` says what happened, row
counts before and after, and what a merge would lose (:attr:`MergeReport.losses`); the caller refuses a
shrinking merge unless told otherwise (:mod:`leaderboard.site.publish`). Everything here is pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from leaderboard.site.normalise import (
    empty_results,
    empty_table,
    missing,
    normalise_results,
    normalise_runs,
    normalise_submissions,
    normalise_table,
)
from leaderboard.site.schema import RESULTS_FILE, RUNS_FILE, SUBMISSIONS_FILE
from leaderboard.tracks import KEY_COLUMNS, table_specs

__all__ = [
    "Board",
    "Key",
    "MergeReport",
    "RetireReport",
    "key_label",
    "merge_boards",
    "retire_keys",
    "split_previews",
]

#: A result key: ``(submission, track, dataset)``.
Key = tuple[str, str, str]


def key_label(key: Key) -> str:
    """Return ``submission/track/dataset``, the way reports name a key.

    Examples
    --------
    >>> key_label(("minilm-l6-text", "amore", "qm9-isomers"))
    'minilm-l6-text/amore/qm9-isomers'
    """
    return "/".join(key)


@dataclass
class Board:
    """The contents of ``site/data/``'s exported files, normalised (:mod:`leaderboard.site.normalise`).

    Attributes
    ----------
    results : pandas.DataFrame
        Long results, sorted by every key column.
    runs : list of dict
        ``runs.json`` records (several per key when a failure follows a kept result).
    submissions : list of dict
        ``submissions.json`` records (the model cards), sorted by id.
    tables : dict of str to pandas.DataFrame
        Per-item tables by name; a table absent here is left alone when the board is written.
    retired : list of dict
        ``retired.json`` records: ``submission, track, dataset, run_id`` of every retired run.
    """

    results: pd.DataFrame
    runs: list[dict[str, Any]]
    submissions: list[dict[str, Any]]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    retired: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_exports(
        cls,
        results: pd.DataFrame,
        runs: pd.DataFrame,
        submissions: list[dict[str, Any]],
        tables: Mapping[str, pd.DataFrame] | None = None,
    ) -> Board:
        """Check and normalise exports as :meth:`leaderboard.store.ResultStore.export` returns them.

        Raises
        ------
        ValueError
            What :func:`leaderboard.site.exports.write_exports` raises for the same input.
        """
        specs = table_specs()
        unknown = sorted(set(tables or {}) - set(specs))
        if unknown:
            raise ValueError(
                f"tables: {unknown} are not declared by any registered track; known: {sorted(specs)}."
            )
        return cls(
            results=normalise_results(results),
            runs=normalise_runs(runs),
            submissions=normalise_submissions(submissions),
            tables={
                name: normalise_table(frame, specs[name][1], name) for name, frame in (tables or {}).items()
            },
        )

    def result_keys(self) -> set[Key]:
        """Return the keys that hold at least one result row."""
        return _keys(self.results)


@dataclass(frozen=True)
class MergeReport:
    """What :func:`merge_boards` did, key by key, and the row counts of every file before and after.

    Attributes
    ----------
    added, replaced, same, kept : tuple of Key
        Result keys new to the board; replaced by a newer run; re-exported from the run already committed;
        kept as committed (absent from the new export, or in ``stale`` or ``failed``).
    stale : tuple of Key
        Keys where the new export is older than the committed run: the committed one is kept.
    failed : tuple of Key
        Keys whose new run failed while a committed result exists: the result is kept, the failure added.
    failures : tuple of Key
        Keys with a new failure and no result (the failure is recorded).
    ignored : tuple of Key
        Keys whose new run was retired (``retired.json``): not added back.
    orphans : tuple of str
        Submissions with results on the merged board but no manifest in this build (folder removed or
        manifest invalid); only :func:`retire_keys` removes them.
    rows : dict of str to (int, int)
        Rows of every merged file (``results.csv.gz``, table files) and ``result keys``: before, after.
    losses : tuple of str
        What the merge would lose (fewer rows or keys than committed), one phrase each; empty if none.
    changed : tuple of str
        Files whose content the merge changes (the ones to write).
    previews : dict of Key to str
        Keys whose new run is a preview, never merged, with the options that make it one (``--limit 3``);
        the committed rows of those keys are kept as they are.
    """

    added: tuple[Key, ...] = ()
    replaced: tuple[Key, ...] = ()
    same: tuple[Key, ...] = ()
    kept: tuple[Key, ...] = ()
    stale: tuple[Key, ...] = ()
    failed: tuple[Key, ...] = ()
    failures: tuple[Key, ...] = ()
    ignored: tuple[Key, ...] = ()
    orphans: tuple[str, ...] = ()
    rows: dict[str, tuple[int, int]] = field(default_factory=dict)
    losses: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    previews: dict[Key, str] = field(default_factory=dict)

    @property
    def shrinks(self) -> bool:
        """Whether the merged board would hold less than the committed one."""
        return bool(self.losses)

    def lines(self) -> list[str]:
        """Return the report as printed by every site build: a summary line, then one line per exception.

        Examples
        --------
        >>> MergeReport(kept=(("a", "amore", "chebi20"),), rows={"results.csv.gz": (10, 10)}).lines()
        ['site/data: kept 1 result (chebi20: 1), replaced 0, added 0; results.csv.gz 10 → 10 rows']
        """
        kept = f"kept {len(self.kept)} result{'' if len(self.kept) == 1 else 's'}"
        if self.kept:
            kept += (
                " ("
                + ", ".join(f"{d}: {n}" for d, n in sorted(Counter(k[2] for k in self.kept).items()))
                + ")"
            )
        parts = [kept, f"replaced {len(self.replaced)}", f"added {len(self.added)}"]
        if self.same:
            parts.append(f"{len(self.same)} re-exported from the committed run")
        if self.previews:
            parts.append(f"refused {len(self.previews)} preview run{'' if len(self.previews) == 1 else 's'}")
        sizes = ", ".join(
            f"{name} {a} → {b} rows" for name, (a, b) in self.rows.items() if name != "result keys"
        )
        out = [f"site/data: {', '.join(parts)}; {sizes}"]
        for what, keys in (
            ("added", self.added),
            ("replaced", self.replaced),
            ("kept the committed result, the new run failed (listed as the latest attempt)", self.failed),
            ("failed, no result to keep", self.failures),
            ("kept as committed, the new export holds an older run", self.stale),
            ("not added back, the run was retired (site/data/retired.json)", self.ignored),
        ):
            if keys:
                out.append(f"  {what}: {', '.join(key_label(k) for k in keys)}")
        for key, option in sorted(self.previews.items()):
            out.append(
                f"  refused, a preview run ({option}) the board never takes: {key_label(key)}; "
                f"re-run without {option} to publish it"
            )
        if self.orphans:
            out.append(
                f"  kept results of submissions without a valid manifest: {', '.join(self.orphans)} "
                "(remove them on purpose with `python -m leaderboard retire --submission ID`)"
            )
        return out

    def refusal(self) -> str:
        """Return the message that refuses a shrinking merge, naming what would be lost."""
        return (
            "site/data: refusing to shrink the committed board; the merge would lose "
            + "; ".join(self.losses)
            + ". Nothing was written. Re-run with --allow-shrink to accept the loss, or remove results on "
            "purpose with `python -m leaderboard retire --submission ID [--track T] [--dataset D]`."
        )


@dataclass(frozen=True)
class RetireReport:
    """What :func:`retire_keys` removed.

    Attributes
    ----------
    removed : dict of Key to int
        Every removed key with the number of its result rows.
    runs : int
        ``runs.json`` records removed (their run ids are recorded in ``retired.json``).
    rows : dict of str to (int, int)
        Rows of every file before and after.
    cards : tuple of str
        Model cards removed (submissions left with nothing and no folder).
    """

    removed: dict[Key, int]
    runs: int
    rows: dict[str, tuple[int, int]]
    cards: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """Return the report the ``retire`` command prints."""
        out = [f"site/data: retired {len(self.removed)} result key(s), {self.runs} run record(s)"]
        out += [f"  {key_label(k)}: {n} result rows" for k, n in self.removed.items()]
        sizes = ", ".join(f"{name} {a} → {b} rows" for name, (a, b) in self.rows.items())
        out.append(f"  {sizes}")
        if self.cards:
            out.append(f"  model cards removed (no folder left): {', '.join(self.cards)}")
        return out


# --------------------------------------------------------------------------------------------
# Merging
# --------------------------------------------------------------------------------------------


def merge_boards(committed: Board, new: Board) -> tuple[Board, MergeReport]:
    """Merge a new export into the committed board by result key (rules in the module docstring).

    Parameters
    ----------
    committed : Board
        What ``site/data/`` holds (:func:`leaderboard.site.exports.read_board`).
    new : Board
        What the store exported (:meth:`Board.from_exports`); its ``submissions`` are the cards of every
        submission that has a valid manifest now.

    Returns
    -------
    tuple of (Board, MergeReport)
        The merged board (tables: every table either board holds) and what happened.
    """
    retired_ids = {str(r.get("run_id")) for r in committed.retired if r.get("run_id")}
    new_runs = _by_key(new.runs)
    old_runs = _by_key(committed.runs)
    old_keys, new_keys = committed.result_keys(), new.result_keys()
    take: set[Key] = set()  # keys whose new rows replace the committed ones
    runs_out = dict(old_runs)
    sorts: dict[str, list[Key]] = {
        n: [] for n in ("added", "replaced", "same", "stale", "failed", "failures")
    }
    ignored: list[Key] = []
    for key in sorted(new_keys | set(new_runs)):
        records = new_runs.get(key, [])
        if records and all(str(r.get("run_id")) in retired_ids for r in records):
            ignored.append(key)
            continue
        old = old_runs.get(key, [])
        finished = [r for r in records if r["status"] == "FINISHED"]
        old_finished = [r for r in old if r["status"] == "FINISHED"]
        if key in new_keys or finished:
            if {r["run_id"] for r in finished} & {r["run_id"] for r in old_finished}:
                sorts["same"].append(key)  # the committed run itself: its rows again, its records kept
                take.add(key)
                continue
            if _newer(old_finished, finished):
                sorts["stale"].append(key)
                continue
            sorts["added" if key not in old_keys and not old_finished else "replaced"].append(key)
            take.add(key)
            # A committed failure later than the new result stays its latest attempt.
            later = [r for r in old if r["status"] == "FAILED" and _newer([r], finished)]
            runs_out[key] = [*records, *later]
            continue
        failure = max(records, key=_order)
        if _newer(old, [failure]):
            sorts["stale"].append(key)  # the committed result or failure is newer
        elif key in old_keys:
            sorts["failed"].append(key)
            runs_out[key] = [*[r for r in old if r["status"] != "FAILED"], failure]
        else:
            sorts["failures"].append(key)
            runs_out[key] = [failure]
    results = _splice(committed.results, new.results, take)
    results = normalise_results(results) if take else committed.results
    tables = dict(committed.tables)
    specs = table_specs()
    spliced: list[str] = []  # tables holding rows of a taken key (the others stay as committed)
    for name, frame in new.tables.items():
        spec = specs[name][1]
        old = committed.tables.get(name, empty_table(spec))
        # A table with no row of a taken key (in either board) stays as committed: splicing would rewrite the
        # same bytes. An empty one is still spliced, so its file is written as before (it may not exist yet).
        if take and (old.empty or _mask(old, take).any() or _mask(frame, take).any()):
            tables[name] = normalise_table(_splice(old, frame, take), spec, name)
            spliced.append(name)
        else:
            tables[name] = old
    runs = normalise_runs(pd.DataFrame([r for key in sorted(runs_out) for r in runs_out[key]]))
    merged_keys = _keys(results)
    present = merged_keys | {k for k in runs_out if runs_out[k]}
    cards = {c["id"]: c for c in committed.submissions if c["id"] in {k[0] for k in present}}
    cards.update({c["id"]: c for c in new.submissions})
    board = Board(
        results=results,
        runs=runs,
        submissions=normalise_submissions(list(cards.values())),
        tables=tables,
        retired=committed.retired,
    )
    new_ids = {c["id"] for c in new.submissions}
    report = MergeReport(
        **{n: tuple(keys) for n, keys in sorts.items()},
        kept=tuple(sorted(old_keys - take)),
        ignored=tuple(ignored),
        orphans=tuple(sorted({k[0] for k in merged_keys} - new_ids)),
        rows=_rows(committed, board),
        losses=tuple(_losses(committed, board, take)),
        changed=tuple(_changed(committed, board, spliced, take)),
    )
    return board, report


def split_previews(
    results: pd.DataFrame, runs: pd.DataFrame, tables: Mapping[str, pd.DataFrame]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame], dict[Key, str]]:
    """Take the preview runs out of a store's export, before it is merged into the record.

    A preview (the export's ``preview`` field, :func:`leaderboard.store.run_preview`) measured something
    else than the board (a few molecules, another seed): merged, it would be ranked as if it were a result.
    Its records go, and so do the result and per-item rows of its key, unless the export also holds a
    board run of that key (then those rows are that run's).

    Parameters
    ----------
    results, runs : pandas.DataFrame
        What :meth:`leaderboard.store.ResultStore.export` returns (``runs`` without a ``preview`` column:
        no previews).
    tables : mapping of str to pandas.DataFrame
        What :meth:`leaderboard.store.ResultStore.export_tables` returns.

    Returns
    -------
    tuple
        ``results``, ``runs`` and ``tables`` without the previews, and the refused keys with the options
        that make each a preview.

    Examples
    --------
    >>> runs = pd.DataFrame([{"submission": "a", "track": "amore", "dataset": "d", "preview": "--limit 3"}])
    >>> split_previews(pd.DataFrame(columns=["submission", "track", "dataset"]), runs, {})[3]
    {('a', 'amore', 'd'): '--limit 3'}
    """
    if runs.empty or "preview" not in runs.columns:
        return results, runs, dict(tables), {}
    marked = runs["preview"].map(lambda v: "" if missing(v) else str(v).strip())
    keys = [
        (str(r["submission"]), str(r.get("track") or ""), str(r.get("dataset") or ""))
        for r in runs.to_dict(orient="records")
    ]
    board = {k for k, m in zip(keys, marked, strict=True) if not m}
    refused = {k: m for k, m in zip(keys, marked, strict=True) if m and k not in board}
    kept_runs = runs.loc[(marked == "").to_numpy()].reset_index(drop=True)
    out_results = results.loc[~_mask(results, refused)].reset_index(drop=True)
    out_tables = {n: f.loc[~_mask(f, refused)].reset_index(drop=True) for n, f in tables.items()}
    return out_results, kept_runs, out_tables, dict(sorted(refused.items()))


def _by_key(records: Iterable[dict[str, Any]]) -> dict[Key, list[dict[str, Any]]]:
    out: dict[Key, list[dict[str, Any]]] = {}
    for rec in records:
        key = (str(rec["submission"]), str(rec.get("track") or ""), str(rec.get("dataset") or ""))
        out.setdefault(key, []).append(rec)
    return out


def _order(run: Mapping[str, Any]) -> tuple[pd.Timestamp, str]:
    """Sort key of a run: its start (unknown: earliest), then its id."""
    started = run.get("started_at")
    stamp = pd.Timestamp.min.tz_localize("UTC")
    if not missing(started):
        try:
            parsed = pd.Timestamp(started)
            stamp = parsed.tz_localize("UTC") if parsed.tzinfo is None else parsed.tz_convert("UTC")
        except (TypeError, ValueError):
            pass
    return stamp, str(run.get("run_id") or "")


def _newer(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> bool:
    """Whether the newest of ``old`` started strictly after the newest of ``new`` (both known)."""
    if not old or not new:
        return False
    a, b = max(_order(r)[0] for r in old), max(_order(r)[0] for r in new)
    floor = pd.Timestamp.min.tz_localize("UTC")
    return a != floor and b != floor and a > b


def _keys(frame: pd.DataFrame) -> set[Key]:
    if frame.empty:
        return set()
    uniq = frame.loc[:, list(KEY_COLUMNS)].astype(str).drop_duplicates()
    return {(str(a), str(b), str(c)) for a, b, c in uniq.itertuples(index=False)}


def _mask(frame: pd.DataFrame, keys: Collection[Key]) -> pd.Series:
    """Rows of ``frame`` whose key is in ``keys``."""
    if frame.empty or not keys:
        return pd.Series(False, index=frame.index)
    index = pd.MultiIndex.from_arrays([frame[c].astype(str) for c in KEY_COLUMNS])
    return pd.Series(index.isin(list(keys)), index=frame.index)


def _splice(old: pd.DataFrame, new: pd.DataFrame, take: Collection[Key]) -> pd.DataFrame:
    """Return the rows of ``old`` outside ``take``, then those of ``new`` inside it (text as ``str``)."""
    parts = [old.loc[~_mask(old, take)], new.loc[_mask(new, take)]]
    parts = [
        p.astype({c: str for c in p.columns if isinstance(p[c].dtype, pd.CategoricalDtype)}) for p in parts
    ]
    return pd.concat(parts, ignore_index=True) if len(old.columns) else parts[1].reset_index(drop=True)


def _counts(frame: pd.DataFrame) -> Counter:
    if frame.empty:
        return Counter()
    sizes = frame.groupby(list(KEY_COLUMNS), observed=True).size()
    return Counter({tuple(map(str, k)): int(n) for k, n in sizes.items()})


def _files(board: Board) -> dict[str, pd.DataFrame]:
    specs = table_specs()
    return {RESULTS_FILE: board.results} | {
        specs[n][1].file: f for n, f in sorted(board.tables.items()) if n in specs
    }


def _rows(before: Board, after: Board) -> dict[str, tuple[int, int]]:
    old = _files(before)
    rows = {name: (len(old[name]) if name in old else 0, len(frame)) for name, frame in _files(after).items()}
    rows["result keys"] = (len(before.result_keys()), len(after.result_keys()))
    return rows


def _losses(before: Board, after: Board, take: Collection[Key]) -> list[str]:
    """Return what ``after`` holds less of than ``before``: files, keys, replaced keys with fewer rows."""
    out: list[str] = []
    lost = sorted(before.result_keys() - after.result_keys())
    if lost:
        out.append(f"{len(lost)} result key(s) ({', '.join(key_label(k) for k in lost)})")
    old_files = _files(before)
    for name, frame in _files(after).items():
        old = old_files.get(name)
        if old is None:
            continue
        if len(frame) < len(old):
            out.append(f"{len(old) - len(frame)} rows of {name} ({len(old)} → {len(frame)})")
        a, b = _counts(old), _counts(frame)
        fewer = [k for k in sorted(take) if b.get(k, 0) < a.get(k, 0) and k not in lost]
        if fewer:
            shown = ", ".join(f"{key_label(k)} {a[k]} → {b.get(k, 0)}" for k in fewer)
            out.append(f"rows of {name} for {shown}")
    return out


def _changed(before: Board, after: Board, spliced: Collection[str], take: Collection[Key]) -> list[str]:
    """Return the files the merge changes: the spliced ones when a key was taken, the JSON that differ."""
    specs = table_specs()
    out = [RESULTS_FILE, *(specs[n][1].file for n in sorted(spliced))] if take else []
    if after.runs != before.runs:
        out.append(RUNS_FILE)
    if after.submissions != before.submissions:
        out.append(SUBMISSIONS_FILE)
    return out


# --------------------------------------------------------------------------------------------
# Retiring
# --------------------------------------------------------------------------------------------


def retire_keys(
    board: Board,
    *,
    submission: str,
    track: str | None = None,
    dataset: str | None = None,
    present: Collection[str] = (),
) -> tuple[Board, RetireReport]:
    """Remove every key of ``submission`` (narrowed to ``track`` / ``dataset``) from the board.

    Parameters
    ----------
    board : Board
        The committed board.
    submission, track, dataset : str
        Which keys to remove; ``None`` matches any track / data set.
    present : collection of str
        Submissions whose folder exists: their model cards stay even with nothing left on the board.

    Returns
    -------
    tuple of (Board, RetireReport)
        The board without those keys (their runs' ids added to ``retired``, so a site build never adds
        them back) and what was removed.

    Raises
    ------
    LookupError
        If no result or run matches, naming the keys the submission has.
    """

    def matches(key: Key) -> bool:
        return key[0] == submission and track in (None, key[1]) and dataset in (None, key[2])

    runs = _by_key(board.runs)
    keys = sorted(k for k in board.result_keys() | set(runs) if matches(k))
    if not keys:
        has = sorted(k for k in board.result_keys() | set(runs) if k[0] == submission)
        raise LookupError(
            f"nothing to retire: no result or run of {submission!r}"
            + (f" on track {track!r}" if track else "")
            + (f" and data set {dataset!r}" if dataset else "")
            + (f"; it has {', '.join(key_label(k) for k in has)}." if has else "; it has none on the board.")
        )
    counts = _counts(board.results)
    gone = [r for k in keys for r in runs.get(k, [])]
    results = board.results.loc[~_mask(board.results, keys)].reset_index(drop=True)
    tables = {n: f.loc[~_mask(f, keys)].reset_index(drop=True) for n, f in board.tables.items()}
    kept_runs = [r for r in board.runs if not any(r is g for g in gone)]
    left = {k[0] for k in _keys(results)} | {r["submission"] for r in kept_runs}
    cards = [c for c in board.submissions if c["id"] in left or c["id"] in present]
    new_retired = [{k: r.get(k) for k in (*KEY_COLUMNS, "run_id")} for r in gone if r.get("run_id")]
    retired = sorted(
        {tuple(sorted(r.items(), key=str)): r for r in [*board.retired, *new_retired]}.values(),
        key=lambda r: tuple(str(r.get(k) or "") for k in (*KEY_COLUMNS, "run_id")),
    )
    after = replace(
        board,
        results=results if not results.empty else empty_results(),
        runs=kept_runs,
        submissions=cards,
        tables=tables,
        retired=retired,
    )
    report = RetireReport(
        removed={k: counts.get(k, 0) for k in keys},
        runs=len(gone),
        rows={n: (a, b) for n, (a, b) in _rows(board, after).items()},
        cards=tuple(sorted({c["id"] for c in board.submissions} - {c["id"] for c in cards})),
    )
    return after, report
