"""Generate the ChemRobust MkDocs site from exported results, and build it.

The site is built in two steps so that it can always be rebuilt from git alone:

1. :func:`leaderboard.site.publish.merge_exports` merges what the store returns into the committed files
   under ``site/data/`` (:mod:`leaderboard.site.merge`: merge, never wipe; refuse to shrink):
   ``results.csv.gz``, ``runs.json``, ``submissions.json`` and one file per per-item table the tracks declare.
   :func:`leaderboard.site.exports.write_exports` (re-exported here) writes a fresh set of those files.
2. :func:`generate_pages` reads **only** those files (plus the committed ``submissions/`` for the
   "How to submit" page) and writes the derived data files (:mod:`leaderboard.site.intervals`) and the
   Markdown pages of :mod:`leaderboard.site.pages`: the overview, one page per registered track and its
   index, the model pages, methodology, how to submit, security model and downloads, with their figures
   (JSON under ``site/data/plots/``, committed) and the index of the molecule drawings
   (``site/data/molecules.json``; the SVGs and plotly.js are added at build time by the MkDocs hook
   :mod:`leaderboard.site.mkdocs_hooks`, so ``mkdocs build --strict`` on a bare clone is complete).
   :func:`build_site` then runs ``mkdocs build --strict``.

Nothing here names a track: pages iterate over :func:`leaderboard.tracks.track_names` and read the
declarations; what a track shows beyond them comes from its extension (:mod:`leaderboard.site.extensions`).
The overall ranking is :func:`leaderboard.ranking.headline.rank_headline`'s (Vote'n'Rank's Copeland rule over
every track's headline criteria), the same one the pull-request report shows. Figures are drawn in the
browser by the hand-written ``site/javascripts/plots.js`` with the plotly.js of the pinned plotly package
(served by the hook, no CDN); tables are made sortable by ``site/javascripts/tables.js``.

Invariants
----------
- Every generated page starts with :data:`leaderboard.site.schema.GENERATED_HEADER` (a page with a title
  of its own: right after its YAML front matter, which MkDocs needs on the first line); pages are never
  edited by hand.
- Output is deterministic: the same ``site/data/`` gives byte-identical pages and derived files.
- No network, no mlflow, no docker, and nothing recomputed from data set files: the per-item tables carry
  what the pages show.
- Scale: every per-submission view reads a pre-split slice of the data, the model pages are written by
  forked workers (:mod:`leaderboard.site.model_pages`; ``CHEMROBUST_SITE_WORKERS``), and the large "every
  number" tables are embedded as JSON excluded from the search index
  (``python -m leaderboard.tools.bench_site`` times the whole board at growing sizes).

Side effects
------------
- :func:`generate_pages` overwrites the generated pages under ``<site_dir>`` and deletes stale generated
  pages in ``<site_dir>/submissions/`` and ``<site_dir>/tracks/`` (only files that start with the
  generated header; hand-written files are left alone). It writes or deletes the derived files in
  ``<site_dir>/data/``, rewrites the figure files in ``<site_dir>/data/plots/`` (deleting those it did
  not write) and the drawings index ``<site_dir>/data/molecules.json``. With a ``cache_dir`` it reads and
  writes the bootstrap cache there.
- :func:`build_site` runs ``python -m mkdocs build`` in a subprocess, which replaces the ``public/``
  folder next to ``mkdocs.yml``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from leaderboard.files import write_text
from leaderboard.markdown import front_matter
from leaderboard.site.blocks import Figures
from leaderboard.site.exports import write_exports
from leaderboard.site.intervals import board_intervals, headline_intervals, write_derived
from leaderboard.site.model_pages import write_model_pages
from leaderboard.site.molecules import Drawings
from leaderboard.site.pages.downloads import downloads_page
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.pages.howto import how_to_submit_page
from leaderboard.site.pages.methodology import methodology_page
from leaderboard.site.pages.overview import index_page
from leaderboard.site.pages.security import security_page
from leaderboard.site.pages.submission import submissions_index_page
from leaderboard.site.pages.track import track_page, tracks_index_page
from leaderboard.site.robustness import board_robustness
from leaderboard.site.schema import GENERATED_HEADER, data_files
from leaderboard.site.sitedata import load_site_data
from leaderboard.tracks import track_names

__all__ = ["SiteBuildError", "build_site", "generate_pages", "is_generated", "write_exports", "write_page"]

#: The most lines of front matter :func:`is_generated` reads past (ours has one).
_FRONT_MATTER_LINES = 8


class SiteBuildError(RuntimeError):
    """Raised when ``mkdocs build`` fails; the message holds the tail of its output."""


def generate_pages(
    site_dir: Path, *, repo_root: Path | None = None, cache_dir: Path | None = None
) -> list[Path]:
    """Write the site's Markdown pages from the files in ``<site_dir>/data/``.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``). Only ``site/data/`` is read (results, runs, submissions,
        the tracks' per-item tables, ``security.json``); a missing file counts as empty.
    repo_root : pathlib.Path, optional
        The repository (default: the folder above ``site_dir``); the "How to submit" page shows a
        manifest from its ``submissions/``.
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
    Pages: ``index.md`` (overview), ``tracks/index.md`` and ``tracks/<track>.md`` for every registered
    track, ``methodology.md``, ``how-to-submit.md``
    (:func:`leaderboard.site.pages.howto.how_to_submit_page`, or a short fallback without a valid
    manifest), ``security.md``, ``downloads.md``, ``submissions/index.md`` and ``submissions/<id>.md``.
    With no results every page still renders (saying so) and builds under ``--strict``.
    """
    site_dir = Path(site_dir)
    repo_root = Path(repo_root) if repo_root is not None else site_dir.resolve().parent
    data = load_site_data(site_dir)
    data.intervals, data.interval_note = headline_intervals(data, cache_dir)
    data.board_intervals = board_intervals(data, cache_dir)
    data.board_robustness = board_robustness(data)
    write_derived(data, site_dir)
    data.files = tuple(name for name in data_files() if (site_dir / "data" / name).is_file())
    figures = Figures(site_dir)
    explorer = Explorer(Drawings(site_dir))
    pages = [
        write_page(site_dir / "index.md", index_page(data, figures)),
        write_page(site_dir / "tracks" / "index.md", tracks_index_page(data)),
    ]
    pages += [
        write_page(site_dir / "tracks" / f"{t}.md", track_page(data, t, figures)) for t in track_names()
    ]
    pages += [
        write_page(site_dir / "methodology.md", methodology_page(data)),
        write_page(site_dir / "how-to-submit.md", _how_to_submit(repo_root)),
        write_page(site_dir / "security.md", security_page(site_dir / "data")),
        write_page(site_dir / "downloads.md", downloads_page(data)),
        write_page(site_dir / "submissions" / "index.md", submissions_index_page(data)),
    ]
    pages += write_model_pages(data, site_dir, figures, explorer, write_page)
    keep = set(pages)
    for folder in ("submissions", "tracks"):
        for stale in sorted((site_dir / folder).glob("*.md")):
            if stale not in keep and is_generated(stale):
                stale.unlink()
    figures.remove_stale()
    explorer.drawings.write_index()
    return pages


def write_page(path: Path, body: str, *, title: str | None = None) -> Path:
    """Write one generated page (header, blank line, body) atomically; return its path.

    With ``title`` the page starts with YAML front matter naming it: MkDocs takes a page's title (browser
    tab, search results) from a first-line ``# heading`` only, and the generated header comes first, so
    without it the title would be made from the file name ("Minilm l6 text").
    """
    front = f"---\ntitle: {front_matter(title)}\n---\n" if title is not None else ""
    write_text(path, f"{front}{GENERATED_HEADER}\n\n{body.strip()}\n")
    return path


def is_generated(path: Path) -> bool:
    """Whether ``path`` is a page this module generated (the generated header, after any front matter)."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = fh.readline().rstrip("\n")
            if first == "---":  # front matter: a few lines, then the header right after it closes
                for _ in range(_FRONT_MATTER_LINES):
                    if fh.readline().rstrip("\n") == "---":
                        first = fh.readline().rstrip("\n")
                        break
            return first == GENERATED_HEADER
    except (OSError, UnicodeDecodeError):
        return False


def _how_to_submit(repo_root: Path) -> str:
    """Return the "How to submit" page; a short fallback when ``submissions/`` holds no valid manifest."""
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
