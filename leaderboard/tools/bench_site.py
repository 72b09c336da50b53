"""Scale benchmark of the whole site over all five tracks (``python -m leaderboard.tools.bench_site``).

:mod:`leaderboard.tools.bench_ranking` times the site on synthetic AMORE results only. This bench clones the
committed board instead (``site/data/``: every track, every per-item table kind, at its real sizes): clone
``k`` of the board's model ``m`` (``k`` runs over ``--systems`` submissions, the models in turn) gets ``m``'s
results, runs, manifest and per-item rows under the id ``syn<k>``, its values in [0, 1] shifted by seeded
noise (counts and other numbers kept), so that the ranking has no ties to shortcut. For each size, in a
fresh process (so that its peak memory is its own), it times:

- ``write``: :func:`leaderboard.site.exports.write_exports` of the cloned board;
- ``pages``: :func:`leaderboard.site.build.generate_pages` with an empty bootstrap cache (cold, as the
  first build after new results);
- ``mkdocs``: :func:`leaderboard.site.build.build_site` (``--strict``, the search index included);

and prints one row per size — seconds per phase, the pages written, the peak resident memory of the build
process and of its largest child (a page worker or MkDocs) — then how each phase grew per added submission.
The issue's goal is 1 000 submissions in ≤ 120 s and ≤ 4 GiB; the sizes to measure are the caller's
(``--systems 10,100``).

Side effects: none beyond CPU time (everything lives in a temporary folder removed at exit).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from leaderboard.site.model_pages import site_workers
from leaderboard.tools.bench_ranking import REPO_ROOT, _timed

PHASES = ("write", "pages", "mkdocs")


def clone_board(source: Path, n: int, *, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, list, dict]:
    """Return the exports of ``n`` synthetic submissions cloned from the board under ``source/data``.

    Parameters
    ----------
    source : pathlib.Path
        A site folder (``site/``) whose ``data/`` holds an exported board.
    n : int
        Submissions to make; clone ``k`` copies the board's ``k mod M``-th model (``M`` models, by id).
    seed : int
        Seed of the noise added to the values in [0, 1].

    Returns
    -------
    results, runs, submissions, tables
        What :func:`leaderboard.site.exports.write_exports` takes.
    """
    from leaderboard.site.exports import read_board

    board = read_board(source)
    models = sorted(str(s["id"]) for s in board.submissions)
    if not models:
        raise ValueError(f"{source / 'data'}: no submissions to clone")
    rng = np.random.default_rng(seed)
    plan = [(f"syn{k:04d}", models[k % len(models)]) for k in range(n)]

    def cloned(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.assign(submission=frame["submission"].astype(str))
        by_model = {m: g for m, g in frame.groupby("submission", sort=False)}
        parts = [by_model[m].assign(submission=new) for new, m in plan if m in by_model]
        return pd.concat(parts, ignore_index=True) if parts else frame.iloc[:0]

    results = cloned(board.results)
    value = results["value"].to_numpy(dtype=float)
    counts = results["metric"].astype(str).str.startswith("n_").to_numpy()
    unit = np.isfinite(value) & (value >= 0) & (value <= 1) & ~counts
    noise = rng.normal(0.0, 0.02, size=len(value))
    results["value"] = np.where(unit, np.clip(value + noise, 0.0, 1.0), value)
    runs = pd.DataFrame(
        [{**r, "submission": new, "run_id": f"{r['run_id']}-{new}"}
         for new, m in plan for r in board.runs if r["submission"] == m]  # fmt: skip
    )
    cards = {str(s["id"]): s for s in board.submissions}
    submissions = [{**cards[m], "id": new, "name": f"{cards[m].get('name') or m} · clone {new}"}
                   for new, m in plan]  # fmt: skip
    tables = {name: cloned(frame) for name, frame in board.tables.items()}
    return results, runs, submissions, tables


def _prepare(workdir: Path, source: Path) -> Path:
    """Return a site folder to build in: mkdocs.yml, the assets and the data files no export writes."""
    shutil.copy2(REPO_ROOT / "mkdocs.yml", workdir / "mkdocs.yml")
    # mkdocs.yml names its hook by a path relative to itself (leaderboard/site/mkdocs_hooks.py).
    (workdir / "leaderboard").symlink_to(REPO_ROOT / "leaderboard", target_is_directory=True)
    site = workdir / "site"
    shutil.copytree(REPO_ROOT / "site", site, ignore=shutil.ignore_patterns("data", "submissions", "*.md"))
    (site / "data").mkdir(exist_ok=True)
    for extra in ("security.json", "seen_in_training.csv", "molecules.json"):  # kept as they are
        if (source / "data" / extra).is_file():
            shutil.copy2(source / "data" / extra, site / "data" / extra)
    return site


def measure(n: int, source: Path, *, mkdocs: bool = True) -> dict[str, Any]:
    """Clone ``n`` submissions from ``source`` and time the three phases in this process (see module doc)."""
    from leaderboard.site.build import build_site, generate_pages
    from leaderboard.site.exports import write_exports

    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="chemrobust-bench-site-") as tmp:
        workdir = Path(tmp)
        site = _prepare(workdir, source)
        board = clone_board(source, n)
        rows = {"results": len(board[0]), "items": int(sum(len(t) for t in board[3].values()))}
        _timed("write", functools.partial(write_exports, *board[:3], site, tables=board[3]), times)
        del board  # the pages read the files back, as a real build does
        pages = _timed("pages", lambda: generate_pages(site, cache_dir=workdir / "cache"), times)
        if mkdocs:
            _timed("mkdocs", lambda: build_site(workdir, strict=True), times)
    # This process, then its largest child (a page worker or MkDocs; a forked child shares the parent's
    # pages until it writes them, so the two are not a sum).
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux → GiB
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    return {"systems": n, **times, "pages_written": len(pages), **rows, "peak_gib": peak,
            "child_peak_gib": child}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Measure each size in its own process and print the table (returns 0; 1 if a size failed)."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_site", description=__doc__)
    parser.add_argument("--systems", default="10,100", help="comma-separated sizes (default 10,100)")
    parser.add_argument("--source", type=Path, default=REPO_ROOT / "site", help="site folder to clone")
    parser.add_argument("--no-mkdocs", action="store_true", help="skip the MkDocs build")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a single size, in this process
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(measure(args.one, args.source, mkdocs=not args.no_mkdocs)))
        return 0
    sizes = [int(s) for s in str(args.systems).split(",") if s.strip()]
    rows, failed = [], []
    for n in sizes:
        cmd = [sys.executable, "-m", "leaderboard.tools.bench_site", "--one", str(n),
               "--source", str(args.source)]  # fmt: skip
        cmd += ["--no-mkdocs"] if args.no_mkdocs else []
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO_ROOT, env=dict(os.environ))
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode or not lines:
            failed.append(n)
            print(f"{n} submissions: failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
            continue
        rows.append(json.loads(lines[-1]))
    if rows:
        table = pd.DataFrame(rows).set_index("systems")
        phases = [p for p in PHASES if p in table]
        table["total"] = table[phases].sum(axis=1)
        shown = table[[*phases, "total", "pages_written", "results", "items", "peak_gib", "child_peak_gib"]]
        print(f"site build from clones of {args.source / 'data'} (seconds; peak resident memory in GiB of "
              f"the build and of its largest child; {site_workers()} page workers)")
        print(shown.to_string(float_format=lambda v: f"{v:,.2f}"))
        if len(table) > 1:
            first, last = table.index[0], table.index[-1]
            print(f"growth from {first} to {last} submissions, seconds per added submission:")
            for p in [*phases, "total"]:
                slope = (table.at[last, p] - table.at[first, p]) / (last - first)
                at_1000 = table.at[last, p] + slope * (1000 - last)
                print(f"  {p:<8} {slope:7.3f} s  (linear → {at_1000:,.0f} s at 1 000)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
