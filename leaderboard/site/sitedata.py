"""Everything the pages are generated from: ``site/data/`` loaded once into a :class:`SiteData`.

:func:`load_site_data` reads the exports (:mod:`leaderboard.site.exports`), checks every submission id
(ids become file names), and ranks the board with :func:`leaderboard.ranking.headline.rank_headline` —
the same headline ranking the pull-request report uses. :class:`SiteData` splits every frame per
submission once, so a board of 100 models generates in seconds, and answers the questions every page
asks (a model's display name, whether it can run a track, which runs failed).

Side effects: none (reading only).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from leaderboard.ranking.boards import Board, rank_boards
from leaderboard.ranking.headline import Ranking, rank_headline
from leaderboard.settings import references as listed_references
from leaderboard.site.exports import read_results, read_tables
from leaderboard.site.normalise import check_slug
from leaderboard.site.schema import (
    RESULTS_FILE,
    RUN_KEYS,
    RUNS_FILE,
    SEEN_FILE,
    SUBMISSION_KEYS,
    SUBMISSIONS_FILE,
)
from leaderboard.tracks import table_specs, track, track_names

#: The repository holding ``leaderboard/references.toml`` (the maintainers' references).
_REPO_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["SiteData", "latest_runs", "load_site_data", "split_by_submission"]


@dataclass
class SiteData:
    """The board: results, runs, manifests and per-item tables, with the headline ranking.

    Attributes
    ----------
    results : pandas.DataFrame
        Long results (:func:`leaderboard.tracks.result_columns`).
    runs : list of dict
        One record per run (:data:`leaderboard.site.schema.RUN_KEYS`).
    submissions : dict of str to dict
        Manifest metadata per submission id (:data:`leaderboard.site.schema.SUBMISSION_KEYS`).
    tables : dict of str to pandas.DataFrame
        Every declared per-item table by name (empty when not exported).
    files : tuple of str
        Data files present, for the download links (set once the derived files are written).
    intervals : pandas.DataFrame or None
        Bootstrap rank intervals (``None``: not computable; :attr:`interval_note` says why).
    ranking : leaderboard.ranking.headline.Ranking
        The headline ranking of :attr:`results` over every track, references included: the ranking of the
        derived data files (``rules.csv``, ``pairwise.csv``, ``rank_intervals.json``), kept as published.
    listed_references : mapping of str to str, optional
        The maintainers' references (id → why); ``None`` reads ``leaderboard/references.toml``.
    references : dict of str to str
        Every reference (id → note, possibly empty): the cards that declare ``reference: true`` and
        :attr:`listed_references`.
    boards : mapping of str to leaderboard.ranking.boards.Board
        One ranking per kind of model (:data:`leaderboard.ranking.boards.BOARDS`), references placed but
        not ranked: what the overview shows.
    board_intervals : dict of str to (pandas.DataFrame or None, str)
        Bootstrap rank intervals of each board's ranking and, when there are none, why (set by the build).
    board_robustness : dict of str to pandas.DataFrame
        Robust skill and its interval per model of each board (set by the build;
        :func:`leaderboard.site.robustness.board_robustness`).
    ids : list of str
        Every submission with a manifest, a result or a run, sorted.
    seen : list of dict
        The overlap record (:data:`leaderboard.site.schema.SEEN_FILE`); the declared flags are added from
        the cards (:meth:`seen_note`).
    cache : dict
        Per-generation memo for page and extension code (keyed by a name of the caller's choosing).
    """

    results: pd.DataFrame
    runs: list[dict[str, Any]]
    submissions: dict[str, dict[str, Any]]
    tables: dict[str, pd.DataFrame]
    files: tuple[str, ...] = ()
    intervals: pd.DataFrame | None = None
    interval_note: str = ""
    seen: list[dict[str, Any]] = field(default_factory=list)
    listed_references: Mapping[str, str] | None = None
    board_intervals: dict[str, tuple[pd.DataFrame | None, str]] = field(default_factory=dict)
    board_robustness: dict[str, pd.DataFrame] = field(default_factory=dict)
    ranking: Ranking = field(init=False)
    references: dict[str, str] = field(init=False)
    boards: Mapping[str, Board] = field(init=False)
    ids: list[str] = field(init=False)
    by_submission: dict[str, pd.DataFrame] = field(init=False)
    runs_by_submission: dict[str, list[dict[str, Any]]] = field(init=False)
    cache: dict[str, Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.ranking = rank_headline(self.results)
        listed = listed_references(_REPO_ROOT) if self.listed_references is None else self.listed_references
        self.references = {
            sub_id: str(meta.get("reference_note") or "")
            for sub_id, meta in sorted(self.submissions.items())
            if (meta or {}).get("reference") is True
        }
        for sub_id, note in listed.items():
            if not self.references.get(sub_id):
                self.references[sub_id] = note
        self.boards = rank_boards(self.results, self.references)
        # Every per-submission view reads its own slice: split each frame once, not once per page.
        self.by_submission = split_by_submission(self.results)
        self.runs_by_submission = {}
        for run in self.runs:
            self.runs_by_submission.setdefault(run["submission"], []).append(run)
        self.ids = sorted(set(self.submissions) | set(self.by_submission) | set(self.runs_by_submission))

    def table_rows(self, name: str, sub_id: str, track_name: str, dataset: str) -> pd.DataFrame:
        """Rows of the per-item table ``name`` for one (submission, track, data set), in file order.

        The table is grouped once per generation (:attr:`cache`): a model page asking for its rows costs a
        lookup, not a pass over every model's rows (which made the pages quadratic in the models).
        """
        frame = self.tables.get(name)
        if frame is None or frame.empty:
            return pd.DataFrame() if frame is None else frame
        key = ("table_rows", name)
        if key not in self.cache:
            self.cache[key] = {
                tuple(map(str, k)): grp
                for k, grp in frame.groupby(["submission", "track", "dataset"], sort=False, observed=True)
            }
        return self.cache[key].get((sub_id, track_name, dataset), frame.iloc[:0])

    def name(self, sub_id: str) -> str:
        """Display name of a submission (its id when the manifest has none); unescaped."""
        meta = self.submissions.get(sub_id) or {}
        return str(meta.get("name") or sub_id)

    def order(self, ids: Iterable[str]) -> list[str]:
        """``ids`` in overall ranking order (unranked ones last, by id)."""
        rank = {str(s): i for i, s in enumerate(self.ranking.copeland.index)}
        return sorted(ids, key=lambda s: (rank.get(s, len(rank)), s))

    def board_places(self, sub_id: str) -> list[tuple[Board, bool]]:
        """Return the boards showing the submission, in display order, each with whether it is a reference.

        A model is ranked on the board of each capability it has results for; a reference is placed (never
        ranked) on the boards it has values on. Empty: on no board (no headline results yet).
        """
        out = []
        for board in self.boards.values():
            if sub_id in board.ranking.copeland.index:
                out.append((board, False))
            elif sub_id in board.references.index:
                out.append((board, True))
        return out

    def submission_results(self, sub_id: str, track_name: str, dataset: str | None = None) -> pd.DataFrame:
        """One model's result rows of one track (and data set), in file order.

        Read from the model's own slice (:attr:`by_submission`): a model page that filtered the whole track
        instead cost a pass over every model's rows, which made the pages quadratic in the models.
        """
        rows = self.by_submission.get(sub_id)
        if rows is None:
            return self.results.iloc[:0]
        mask = rows["track"] == track_name
        if dataset is not None:
            mask &= rows["dataset"] == dataset
        return rows.loc[mask]

    def track_results(self, name: str) -> pd.DataFrame:
        """Return the result rows of one track (memoised)."""
        key = f"track-results/{name}"
        if key not in self.cache:
            self.cache[key] = self.results.loc[self.results["track"] == name]
        return self.cache[key]

    def lacks(self, sub_id: str, track_name: str) -> str | None:
        """Return the capability ``track_name`` needs if the manifest says the model lacks it, else ``None``.

        A model without a manifest, or whose manifest lists no capabilities, is never said to lack one.
        """
        needed = getattr(track(track_name), "capability", None)
        caps = (self.submissions.get(sub_id) or {}).get("capabilities")
        if not needed or not isinstance(caps, list) or not caps:
            return None
        return None if needed in {str(c) for c in caps} else str(needed)

    def tracks_of(self, sub_id: str) -> list[str]:
        """Return the registered tracks this submission has results for, in registry order."""
        rows = self.by_submission.get(sub_id)
        present = set() if rows is None else {str(t) for t in rows["track"].unique()}
        return [t for t in track_names() if t in present]

    def headline_of(self, sub_id: str, track_name: str, dataset: str) -> pd.Series:
        """One model's headline values on one track and data set, by ranking column (display order)."""
        crit = self.ranking.criteria
        if crit.empty or sub_id not in self.ranking.headline.index:
            return pd.Series(dtype=float)
        columns = crit.index[(crit["track"] == track_name) & (crit["dataset"] == dataset)]
        return self.ranking.headline.loc[sub_id, columns]

    def seen_note(self, sub_id: str, dataset: str) -> str | None:
        """Say why the model has seen ``dataset`` in training (unescaped), or ``None`` if it has not."""
        if "seen" not in self.cache:
            from leaderboard.corpora import corpus_labels
            from leaderboard.seen_in_training import declared_rows

            datasets = set(self.results["dataset"].astype(str).unique()) if not self.results.empty else set()
            labels = corpus_labels()
            notes: dict[tuple[str, str], list[str]] = {}
            for row in [*declared_rows(self.submissions, datasets), *self.seen]:
                kind, _, name = str(row["source"]).partition(":")
                what = labels.get(name, name) if kind == "corpus" else f"data set {name}"
                if row["how"] == "overlap":
                    text = f"{row['n_seen']} of its {row['n_molecules']} molecules are in {what}"
                elif row["how"] == "derived":
                    text = f"drawn from {what}, which the manifest declares"
                else:
                    text = "the manifest declares it as training data"
                notes.setdefault((str(row["submission"]), str(row["dataset"])), []).append(text)
            self.cache["seen"] = {k: "seen in training: " + "; ".join(v) for k, v in notes.items()}
        return self.cache["seen"].get((sub_id, dataset))

    def failures(self) -> list[dict[str, Any]]:
        """Return the runs whose latest attempt for (submission, track, dataset) failed."""
        return [r for r in latest_runs(self.runs) if r["status"] == "FAILED"]

    def missing_reason(self, sub_id: str, track_name: str, dataset: str) -> str:
        """Say why a model has no value on a criterion of ``track_name`` on ``dataset`` (unescaped).

        ``lacks capability …`` (the manifest says it cannot run the track), ``run failed`` (its latest
        attempt on that data set failed), ``not evaluated`` (no run on that data set), else ``no value``
        (the run finished without this number).
        """
        lacking = self.lacks(sub_id, track_name)
        if lacking is not None:
            return f"lacks capability {lacking}"
        if "failed-keys" not in self.cache:
            self.cache["failed-keys"] = {(r["submission"], r["track"], r["dataset"]) for r in self.failures()}
        if (sub_id, track_name, dataset) in self.cache["failed-keys"]:
            return "run failed"
        rows = self.by_submission.get(sub_id)
        if rows is None or not ((rows["track"] == track_name) & (rows["dataset"] == dataset)).any():
            return "not evaluated"
        return "no value"

    def coverage(
        self, track_name: str, dataset: str | None = None, *, ranking: Ranking | None = None
    ) -> tuple[list[str], list[str]]:
        """Split the ranked models by whether they have a headline value on a track (and data set).

        Models whose manifest says they lack the track's capability (:meth:`lacks`) are left out: they
        cannot run it, and the overview says so in its own note. ``ranking``: a board's ranking (default:
        :attr:`ranking`).

        Returns
        -------
        tuple of (list of str, list of str)
            The ranked models with at least one value on those criteria, and those with none, each in
            ranking order. Both empty when the track (data set) has no criterion.
        """
        rk = self.ranking if ranking is None else ranking
        crit = rk.criteria
        ranked = [str(s) for s in rk.copeland.index if self.lacks(str(s), track_name) is None]
        if crit.empty:
            return [], []
        mask = crit["track"] == track_name
        if dataset is not None:
            mask &= crit["dataset"] == dataset
        columns = list(crit.index[mask])
        if not columns:
            return [], []
        values = rk.headline.reindex(ranked).loc[:, columns]
        has = values.notna().any(axis=1)
        return [s for s in ranked if has[s]], [s for s in ranked if not has[s]]


def split_by_submission(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Rows of ``frame`` per submission (one ``groupby``; categorical keys become ``str``)."""
    if frame.empty:
        return {}
    return {str(s): grp for s, grp in frame.groupby("submission", sort=True, observed=True)}


def latest_runs(runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the latest attempt of every (submission, track, dataset), by start time then run id."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for run in runs:
        key = (run["submission"], str(run.get("track") or ""), str(run.get("dataset") or ""))
        order = (str(run.get("started_at") or ""), str(run.get("run_id") or ""))
        prev = latest.get(key)
        if prev is None or order >= (str(prev.get("started_at") or ""), str(prev.get("run_id") or "")):
            latest[key] = run
    return [latest[k] for k in sorted(latest)]


def load_site_data(site_dir: Path) -> SiteData:
    """Read ``<site_dir>/data/`` (a missing file counts as empty) and rank the board.

    Raises
    ------
    ValueError
        If a file is malformed or names a submission id that is not a slug.
    """
    data_dir = Path(site_dir) / "data"
    results = read_results(site_dir)
    runs: list[dict[str, Any]] = []
    for i, rec in enumerate(_read_json_list(data_dir / RUNS_FILE)):
        run = {key: rec.get(key) for key in RUN_KEYS}
        if not isinstance(run["submission"], str):
            raise ValueError(f"{data_dir / RUNS_FILE}: record {i} has no 'submission' string.")
        check_slug(run["submission"], f"{data_dir / RUNS_FILE}: record {i}")
        run["status"] = str(run["status"] or "").upper()
        if not isinstance(run["hardware"], dict):
            run["hardware"] = {}
        runs.append(run)
    subs: dict[str, dict[str, Any]] = {}
    for i, rec in enumerate(_read_json_list(data_dir / SUBMISSIONS_FILE)):
        sub_id = rec.get("id")
        if not isinstance(sub_id, str):
            raise ValueError(f"{data_dir / SUBMISSIONS_FILE}: record {i} has no 'id' string.")
        check_slug(sub_id, f"{data_dir / SUBMISSIONS_FILE}: record {i}")
        subs[sub_id] = {key: rec.get(key) for key in SUBMISSION_KEYS}
    for sub_id in results["submission"].unique():
        check_slug(sub_id, f"{data_dir / RESULTS_FILE}: column 'submission'")
    tables = read_tables(site_dir)
    specs = table_specs()
    for name, frame in tables.items():
        for sub_id in frame["submission"].cat.categories:
            check_slug(str(sub_id), f"{data_dir / specs[name][1].file}: column 'submission'")
    from leaderboard.seen_in_training import read_seen

    seen = read_seen(data_dir / SEEN_FILE)
    for row in seen:
        check_slug(row["submission"], f"{data_dir / SEEN_FILE}: column 'submission'")
    return SiteData(results=results, runs=runs, submissions=subs, tables=tables, seen=seen)


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
