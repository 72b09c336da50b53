"""Write the model pages (``submissions/<id>.md``), in worker processes when the board is large.

A model page reads only its own slices of the board (:class:`leaderboard.site.sitedata.SiteData`), so the
pages are independent: with a thousand models they were the largest part of the site's generation, one
after another on one core. :func:`write_model_pages` forks workers that inherit the loaded board (nothing
is pickled but the pages' paths, the figure ids and the drawings each worker used) and merges what they
report, so the figures' stale-file sweep and the drawings' index see every page, as in one process.

Before forking, the pages of a few models are written here, enough that every track a model has results
for has run once: the memos a track builds over the whole board on first use (``SiteData.cache``, the
failure explorer's per-table failures) are then built once and inherited, instead of once per worker.

Invariants: the pages, figure files and drawings index are byte-identical whatever the number of workers
(``CHEMROBUST_SITE_WORKERS``; default: the CPUs this process may use), and a figure id used twice still
fails the build. Side effects: writes the pages and figure files; forks.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from leaderboard.cpus import usable_cpus
from leaderboard.site.blocks import Figures
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.pages.submission import submission_page
from leaderboard.site.sitedata import SiteData

__all__ = ["MIN_PARALLEL_PAGES", "site_workers", "write_model_pages"]

#: Below this many pages (after the warm-up), forking costs more than it saves.
MIN_PARALLEL_PAGES = 8
#: Chunks per worker: small enough to balance pages of very different sizes.
_CHUNKS_PER_WORKER = 4


class PageWriter(Protocol):
    """Writes one generated page and returns its path (:func:`leaderboard.site.build.write_page`)."""

    def __call__(self, path: Path, body: str, *, title: str | None = None) -> Path: ...


#: What a forked worker reads: set in the parent just before the fork, inherited, never pickled.
_SHARED: dict[str, Any] = {}


def site_workers() -> int:
    """Return the number of page workers: ``CHEMROBUST_SITE_WORKERS``, else the CPUs this process may use.

    Raises
    ------
    ValueError
        If ``CHEMROBUST_SITE_WORKERS`` is set to anything but a positive integer.
    """
    raw = os.environ.get("CHEMROBUST_SITE_WORKERS", "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ValueError(f"CHEMROBUST_SITE_WORKERS={raw!r}: set a positive integer (1 = no workers).")
        return int(raw)
    return usable_cpus()


def write_model_pages(
    data: SiteData,
    site_dir: Path,
    figures: Figures,
    explorer: Explorer,
    write: PageWriter,
    *,
    workers: int | None = None,
) -> list[Path]:
    """Write every model's page; return their paths in :attr:`SiteData.ids` order.

    Parameters
    ----------
    data : leaderboard.site.sitedata.SiteData
        The loaded board.
    site_dir : pathlib.Path
        The MkDocs ``docs_dir``; pages go to ``<site_dir>/submissions/<id>.md``.
    figures, explorer
        The generation's figure writer and failure explorer; the workers' figure ids and drawings are
        merged into them.
    write : callable
        Writes one page: ``write(path, body, title=...)`` returns the path
        (:func:`leaderboard.site.build.write_page`).
    workers : int, optional
        Processes to use (default :func:`site_workers`); 1 writes every page in this process.

    Raises
    ------
    ValueError
        If a figure id is used twice (in one worker or across workers), or a page cannot be generated.
    """
    ids = list(data.ids)
    workers = site_workers() if workers is None else max(1, int(workers))
    warm = _warm_up_ids(data, ids) if workers > 1 else ids
    paths = {sub_id: _write_one(data, sub_id, site_dir, figures, explorer, write) for sub_id in warm}
    rest = [s for s in ids if s not in paths]
    if workers < 2 or len(rest) < MIN_PARALLEL_PAGES or _working_threads():
        paths |= {sub_id: _write_one(data, sub_id, site_dir, figures, explorer, write) for sub_id in rest}
        return [paths[s] for s in ids]
    n_chunks = min(len(rest), workers * _CHUNKS_PER_WORKER)
    chunks = [rest[k::n_chunks] for k in range(n_chunks)]  # interleaved: neighbours differ in size
    _SHARED.update(data=data, site_dir=Path(site_dir), figures=figures, explorer=explorer, write=write)
    context = multiprocessing.get_context("fork")
    try:
        # An executor, not multiprocessing.Pool: a worker that dies (killed for memory) fails the build
        # instead of leaving it waiting forever for the pages it held.
        with ProcessPoolExecutor(min(workers, n_chunks), mp_context=context) as pool:
            reports = list(pool.map(_write_chunk, chunks))
    except BrokenProcessPool as exc:
        raise RuntimeError(
            "a model-page worker died before it finished (killed, e.g. for memory); set "
            "CHEMROBUST_SITE_WORKERS=1 to write the pages in one process."
        ) from exc
    finally:
        _SHARED.clear()
    for written, figure_ids, drawings in reports:
        twice = sorted(figure_ids & figures.written)
        if twice:
            raise ValueError(f"figure id {twice[0]!r} is used twice; figure ids must be unique.")
        figures.written |= figure_ids
        explorer.drawings.used.update(drawings)
        paths |= {sub_id: Path(p) for sub_id, p in written}
    return [paths[s] for s in ids]


def _working_threads() -> bool:
    """Whether a thread besides the main one and idle daemons runs: a fork could copy a lock it holds.

    Daemon threads are watchers that sleep (tqdm's monitor, which MLflow's imports start); the pages
    never use what they guard.
    """
    main = threading.main_thread()
    return any(t is not main and not t.daemon for t in threading.enumerate())


def _warm_up_ids(data: SiteData, ids: Sequence[str]) -> list[str]:
    """Return the first model of each track in ``ids`` order (a model covering several counts for each)."""
    seen: set[str] = set()
    warm = []
    for sub_id in ids:
        tracks = set(data.tracks_of(sub_id))
        if tracks - seen:
            warm.append(sub_id)
            seen |= tracks
    return warm


def _write_one(
    data: SiteData, sub_id: str, site_dir: Path, figures: Figures, explorer: Explorer, write: PageWriter
) -> Path:
    page = submission_page(data, sub_id, figures, explorer)
    return write(Path(site_dir) / "submissions" / f"{sub_id}.md", page, title=data.name(sub_id))


def _write_chunk(sub_ids: list[str]) -> tuple[list[tuple[str, str]], set[str], dict[str, str]]:
    """In a worker: write these pages; report their paths, the figure ids and the drawings they used."""
    data, site_dir = _SHARED["data"], _SHARED["site_dir"]
    figures, explorer, write = _SHARED["figures"], _SHARED["explorer"], _SHARED["write"]
    before_figures, before_drawings = set(figures.written), dict(explorer.drawings.used)
    written = [(s, str(_write_one(data, s, site_dir, figures, explorer, write))) for s in sub_ids]
    new_drawings = {k: v for k, v in explorer.drawings.used.items() if k not in before_drawings}
    return written, figures.written - before_figures, new_drawings
