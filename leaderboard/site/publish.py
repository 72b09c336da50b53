"""Publishing the board: merge what the store exports into the committed ``site/data/``, then the pages.

What ``python -m leaderboard site`` (and the end of ``evaluate``) runs, as functions of the store and the
paths so tests run the same code: :func:`publish` exports the store's runs of the given submissions,
merges them into the committed exports (:func:`leaderboard.site.merge.merge_boards`: merge, never wipe),
refuses a merge that would shrink the board unless ``allow_shrink`` (:class:`ShrinkError`), writes only
the files the merge changed, prints the merge report, regenerates the pages and, optionally, builds the
site. :func:`retire` is the one way results leave the board (``python -m leaderboard retire``).

The store is any object with ``export`` and ``export_tables`` (:class:`Exporter`;
:class:`leaderboard.store.ResultStore` is one): the site never imports the store.

Side effects: both functions rewrite files under ``<site_dir>/data/`` and the generated pages
(:func:`leaderboard.site.build.generate_pages`); :func:`publish` with ``build`` replaces ``public/``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from leaderboard.site import build_stamp
from leaderboard.site.build import build_site, generate_pages
from leaderboard.site.exports import read_board, write_board
from leaderboard.site.merge import (
    Board,
    Key,
    MergeReport,
    RetireReport,
    merge_boards,
    retire_keys,
    split_previews,
)
from leaderboard.site.schema import RESULTS_FILE, RETIRED_FILE, RUNS_FILE, SUBMISSIONS_FILE
from leaderboard.tracks import table_specs

__all__ = ["Exporter", "Published", "ShrinkError", "merge_exports", "publish", "retire"]


class Exporter(Protocol):
    """What :func:`publish` needs of a result store (:class:`leaderboard.store.ResultStore`)."""

    def export(self, submissions: Iterable[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Return the long results and one provenance record per run."""
        ...

    def export_tables(self, submissions: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
        """Return every declared per-item table, by name."""
        ...


class ShrinkError(RuntimeError):
    """Raised when a merge would leave the board with less than is committed; nothing was written.

    Attributes
    ----------
    report : leaderboard.site.merge.MergeReport
        The refused merge (:attr:`~leaderboard.site.merge.MergeReport.losses` names what would be lost).
    """

    def __init__(self, report: MergeReport) -> None:
        super().__init__(report.refusal())
        self.report = report


@dataclass(frozen=True)
class Published:
    """What :func:`publish` did.

    Attributes
    ----------
    report : leaderboard.site.merge.MergeReport
        The merge.
    pages : list of pathlib.Path
        The generated pages.
    public : pathlib.Path or None
        The built site (``None`` without ``build``).
    """

    report: MergeReport
    pages: list[Path]
    public: Path | None


def merge_exports(
    store: Exporter,
    submissions: list[dict[str, Any]],
    site_dir: Path,
    *,
    allow_shrink: bool = False,
    allow_previews: bool = False,
) -> MergeReport:
    """Merge the store's export of ``submissions`` into ``<site_dir>/data/`` and write what changed.

    Preview runs (a smoke test with ``--limit``, another seed) never reach the record: they are taken out
    of the export (:func:`leaderboard.site.merge.split_previews`) and named in the report
    (:attr:`~leaderboard.site.merge.MergeReport.previews`), without failing the build — a smoke test
    followed by ``nox -s site`` leaves the committed board as it was and says why. A site written straight
    from an export (:func:`leaderboard.site.exports.write_exports`) shows them, and so does a throw-away
    site merged with ``allow_previews``.

    Parameters
    ----------
    store : Exporter
        The result store.
    submissions : list of dict
        Model cards of every submission with a valid manifest (their ids are exported).
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` whose ``data/`` holds the committed board.
    allow_shrink : bool, default False
        Write a merge that leaves fewer result rows, table rows or keys than committed.
    allow_previews : bool, default False
        Merge preview runs like board runs: only for a throw-away site built from smoke-test runs (a test),
        never for the committed record (the command line never sets it).

    Returns
    -------
    leaderboard.site.merge.MergeReport
        What the merge did.

    Raises
    ------
    ShrinkError
        If the merge would shrink the board and ``allow_shrink`` is false (nothing is written).
    ValueError
        If an export or a committed file is malformed.
    """
    ids = [str(s["id"]) for s in submissions]
    results, runs = store.export(ids)
    tables = store.export_tables(ids)
    previews: dict[Key, str] = {}
    if not allow_previews:
        results, runs, tables, previews = split_previews(results, runs, tables)
    new = Board.from_exports(results, runs, submissions, tables)
    merged, report = merge_boards(read_board(site_dir), new)
    report = replace(report, previews=previews)
    if report.shrinks and not allow_shrink:
        raise ShrinkError(report)
    write_board(merged, site_dir, files=report.changed)
    return report


def publish(
    store: Exporter,
    submissions: list[dict[str, Any]],
    site_dir: Path,
    *,
    repo_root: Path,
    cache_dir: Path | None = None,
    allow_shrink: bool = False,
    allow_previews: bool = False,
    build: bool = True,
    echo: Callable[[str], None] = print,
) -> Published:
    """Merge the store's export into ``site/data/`` (:func:`merge_exports`), print the report, make the site.

    Parameters
    ----------
    store, submissions, site_dir, allow_shrink, allow_previews
        As for :func:`merge_exports`.
    repo_root : pathlib.Path
        The repository (``mkdocs.yml``, ``submissions/``).
    cache_dir : pathlib.Path, optional
        Bootstrap cache folder (:func:`leaderboard.site.build.generate_pages`); with ``build``, it also
        holds the digest of the last build's inputs (:mod:`leaderboard.site.build_stamp`): when nothing
        the pages are made of changed since (the merge included), the pages and ``public/`` are kept.
    build : bool, default True
        Run ``mkdocs build --strict`` into ``<repo_root>/public``.
    echo : callable, default print
        Receives every line of the report.

    Returns
    -------
    Published
        The merge report, the pages and the built site.

    Raises
    ------
    ShrinkError
        As :func:`merge_exports`; nothing is written and no page generated.
    """
    report = merge_exports(
        store, submissions, site_dir, allow_shrink=allow_shrink, allow_previews=allow_previews
    )
    for line in report.lines():
        echo(line)
    if report.shrinks:
        echo(f"site/data: shrank on purpose (--allow-shrink): lost {'; '.join(report.losses)}")
    runs = report.rows.get("result keys", (0, 0))[1]
    if build and cache_dir is not None:
        current = build_stamp.is_current(repo_root, cache_dir)
        if current is not None:  # the merge changed nothing, nor did any code, manifest or page
            echo(f"site: {runs} result keys; nothing the pages are made of changed since the last build "
                 f"(inputs sha256 {current[:12]}): pages and {repo_root / 'public'} kept")  # fmt: skip
            return Published(report, [], repo_root / "public")
    pages = generate_pages(site_dir, repo_root=repo_root, cache_dir=cache_dir)
    echo(f"site: {runs} result keys, {len(pages)} pages in {site_dir}")
    if not build:
        return Published(report, pages, None)
    public = build_site(repo_root, strict=True)
    if cache_dir is not None:
        build_stamp.record(repo_root, cache_dir)
    echo(f"site: built {public / 'index.html'}")
    return Published(report, pages, public)


def retire(
    site_dir: Path,
    *,
    submission: str,
    track: str | None = None,
    dataset: str | None = None,
    present: Collection[str] = (),
    repo_root: Path | None = None,
    cache_dir: Path | None = None,
) -> RetireReport:
    """Remove a submission's results (narrowed to a track / data set) from ``site/data/``, regenerate pages.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir``.
    submission, track, dataset : str
        The keys to remove (:func:`leaderboard.site.merge.retire_keys`).
    present : collection of str
        Submissions whose folder exists (their model cards stay).
    repo_root, cache_dir : pathlib.Path, optional
        As for :func:`leaderboard.site.build.generate_pages`.

    Returns
    -------
    leaderboard.site.merge.RetireReport
        What was removed; the removed runs are recorded in ``retired.json`` so no build adds them back.

    Raises
    ------
    LookupError
        If nothing matches (nothing is written).
    """
    before = read_board(site_dir)
    board, report = retire_keys(before, submission=submission, track=track, dataset=dataset, present=present)
    files = [RESULTS_FILE, RUNS_FILE, SUBMISSIONS_FILE, RETIRED_FILE]
    # Only the tables that lost rows change (a table file not there yet is written, empty, as before).
    data_dir = Path(site_dir) / "data"
    tables = [
        spec.file
        for name, (_, spec) in table_specs().items()
        if not (data_dir / spec.file).is_file() or len(board.tables[name]) != len(before.tables[name])
    ]
    write_board(board, site_dir, files=[*files, *tables])
    generate_pages(site_dir, repo_root=repo_root, cache_dir=cache_dir)
    return report
