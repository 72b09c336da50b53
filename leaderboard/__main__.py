"""Maintainers' command line: ``python -m leaderboard {validate,evaluate,site,retire,import-results,…}``.

The nox sessions call it. ``validate --changed-since REF [--format markdown]`` checks what a branch
changes and renders the pull-request report; ``evaluate --changed-since REF`` evaluates only that and
writes ``<state-dir>/pr-summary.md``; ``new-submission ID [--kind endpoint]`` scaffolds
``submissions/ID/submission.yaml`` (an API model's with ``--kind endpoint``).
``site`` (and the end of ``evaluate``) merges MLflow's results into the committed ``site/data/`` and prints
the merge report; it refuses to shrink the board unless ``--allow-shrink``; ``retire --submission ID
[--track T] [--dataset D]`` is the one way results leave it (:mod:`leaderboard.site.publish`);
``import-results`` fills a fresh tracking store from that record (:mod:`leaderboard.restore`).

Exit status: 0 on success; 1 when a manifest is invalid (validate), a run failed (evaluate), a site build
would shrink the board or nothing matches a retirement; 2 on a usage or environment error (a path outside
``submissions/``, another evaluation holds the lock, Docker requested but absent).

Everything printed that a pull request can influence (paths, ids, problems, failure reasons) goes
through :func:`leaderboard.text.printable` first: one line, no terminal escapes.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.evaluate_cli import add_evaluate_parser, print_phases

if TYPE_CHECKING:
    from leaderboard.intake.problems import Problem

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


def _say(text: object, *, error: bool = False) -> None:
    """Print one line a pull request may have shaped, made printable (``error``: to stderr)."""
    from leaderboard.text import printable

    print(printable(str(text), collapse=False), file=sys.stderr if error else sys.stdout)


def _say_problems(problems: Iterable[Problem]) -> None:
    """Print each problem as ``  - <line>`` and, where the parser stopped, the offending line with a caret."""
    for problem in problems:
        _say(f"  - {problem}")
        if problem.at is not None and problem.at.source.strip():
            source, caret = problem.at.pointer()
            _say(f"      {problem.at.line:>4} | {source}")
            _say(f"           | {caret}")


def _verdict(file: object, problems: Sequence[Problem]) -> str:
    """``ok``/``FAIL`` and the path, with the number of warnings of a valid manifest."""
    if any(p.is_error for p in problems):
        return f"FAIL {file}"
    warned = len(problems)
    note = f" ({warned} warning{'s' * (warned != 1)} for the maintainers)" if warned else ""
    return f"ok   {file}{note}"


def _manifests(args: argparse.Namespace) -> list[Path]:
    """Return the manifests ``validate`` reads: its arguments, each checked to lie in ``submissions/``.

    Without arguments, every submission folder (each checked too: a link out of ``submissions/`` is
    refused).

    Raises ``ArgumentError`` (one printable line) for an argument outside ``<root>/submissions/``.
    """
    from leaderboard.intake.arguments import manifest_argument
    from leaderboard.intake.manifest import discover

    submissions_dir = _root(args) / "submissions"
    args_or_all = args.paths or [str(p.parent) for p in discover(submissions_dir)]
    return [manifest_argument(a, submissions_dir=submissions_dir) for a in args_or_all]


def _validate_report(args: argparse.Namespace, allow: list[str], paths: list[Path]) -> int:
    """``validate --changed-since REF`` and/or ``--format markdown`` (see leaderboard/intake/pr_report.py)."""
    from leaderboard.intake.changes import ChangeError, changed_submissions
    from leaderboard.intake.pr_report import validation_markdown
    from leaderboard.intake.report import check_manifest, check_manifests

    try:
        root = _root(args)
        changes = changed_submissions(args.changed_since, repo_root=root) if args.changed_since else None
    except ChangeError as exc:
        _say(f"error: {exc}", error=True)
        return 2
    if changes is not None:
        statuses = {i: changes.status(i) for i in changes.changed}
        checks = check_manifests(changes.changed, root=root, statuses=statuses, allow_remote_code=allow)
    else:
        checks = [check_manifest(p, root=root, allow_remote_code=allow) for p in paths]
    bad = sum(1 for c in checks if not c.ok)
    if args.format == "markdown":
        report = validation_markdown(
            checks,
            ref=changes.ref if changes else None,
            base=changes.base if changes else None,
            deleted=changes.deleted if changes else (),
            other=changes.other if changes else (),
        )
        for line in report.splitlines():
            _say(line)
        return 1 if bad else 0
    if changes is not None:
        _say(
            f"changed since {changes.ref} (merge base {changes.base[:12]}): "
            f"{len(changes.changed)} submission(s) ({len(changes.added)} new), {len(changes.deleted)} removed"
        )
    for c in checks:
        _say(_verdict(c.file, c.problems))  # a folder name from the pull request
        _say_problems(c.problems)
    for sub_id in changes.deleted if changes else ():
        _say(f"removed submissions/{sub_id} (not checked)")
    _say(f"{len(checks) - bad} valid, {bad} invalid manifest(s)")
    return 1 if bad else 0


def _new_submission(args: argparse.Namespace) -> int:
    from leaderboard.intake.scaffold import ScaffoldError, next_steps, write_submission

    try:
        written = write_submission(args.id, root=_root(args), kind=args.kind)
    except ScaffoldError as exc:  # one printable line that quotes the id and says what to do
        _say(f"error: {exc}", error=True)
        return 2
    _say(f"wrote {written.path}")
    for line in next_steps(written.submission_id, args.kind).splitlines():
        _say(line)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from leaderboard.intake.arguments import ArgumentError
    from leaderboard.intake.manifest import validate_paths

    allow = [s for s in (args.allow_remote_code or "").split(",") if s]
    if args.changed_since and args.paths:
        _say("error: give manifest paths or --changed-since REF, not both", error=True)
        return 2
    try:
        paths = [] if args.changed_since else _manifests(args)
    except ArgumentError as exc:  # a path outside submissions/: one line, never a traceback
        _say(f"error: {exc}", error=True)
        return 2
    if args.changed_since or args.format == "markdown":
        return _validate_report(args, allow, paths)
    report = validate_paths(paths, allow_remote_code=allow)
    for path, problems in report.items():
        _say(_verdict(path, problems))  # folder names come from pull requests
        _say_problems(problems)
    bad = sum(1 for problems in report.values() if any(p.is_error for p in problems))
    _say(f"{len(report) - bad} valid, {bad} invalid manifest(s)")
    return 1 if bad else 0


def _settings(state_dir: Path):
    """Read the maintainer settings: the one place the environment is read (leaderboard/settings.py)."""
    from leaderboard.settings import Settings

    return Settings.from_environment(repo_root=REPO_ROOT, state_dir=Path(state_dir))


def _store(state_dir: Path):
    from leaderboard.store import ResultStore

    state_dir.mkdir(parents=True, exist_ok=True)
    settings = _settings(state_dir)
    return ResultStore(
        settings.mlflow_uri(), artifact_root=settings.artifact_root(), experiment=settings.experiment
    )


def _cards() -> list[dict]:
    """Model cards of every submission with a valid manifest (an invalid one is skipped)."""
    from leaderboard.intake.manifest import ManifestError, discover, load_submission
    from leaderboard.intake.training_record import read_training_record
    from leaderboard.settings import ALLOWANCE_KINDS, allowances, references

    granted = allowances(REPO_ROOT)
    listed = references(REPO_ROOT)
    cards = []
    for path in discover(REPO_ROOT / "submissions"):
        try:
            sub = load_submission(path, allow_remote_code=[path.parent.name])
        except ManifestError:
            continue
        allowed = [kind for kind in ALLOWANCE_KINDS if sub.id in granted[kind]]
        card = {**sub.card(), "training": read_training_record(path.parent), "allowances": allowed}
        if sub.id in listed:  # the maintainers' references (leaderboard/references.toml says why there)
            card.update(reference=True, reference_note=sub.reference_note or listed[sub.id])
        cards.append(card)
    return cards


def _site(state_dir: Path, *, build: bool = True, allow_shrink: bool = False) -> Path:
    """Merge the store's export into the committed ``site/data/``, print the merge report, build the site.

    Raises :class:`leaderboard.site.publish.ShrinkError` (nothing written) when the merge would shrink the
    board and ``allow_shrink`` is false.
    """
    from leaderboard.site.publish import publish

    site_dir = REPO_ROOT / "site"
    done = publish(
        _store(state_dir),
        _cards(),
        site_dir,
        repo_root=REPO_ROOT,
        cache_dir=state_dir / "cache",
        allow_shrink=allow_shrink,
        build=build,
    )
    return done.public or site_dir


def _seen_in_training(args: argparse.Namespace) -> int:
    """``seen-in-training``: match every declared, rebuildable corpus against every registered data set."""
    import evaluators.datasets  # noqa: F401  (fills the registry)
    from evaluators.datasets.specs import DATASETS
    from leaderboard.seen_in_training import overlap_rows, write_seen
    from leaderboard.site.schema import SEEN_FILE

    state_dir = Path(args.state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    cards = {c["id"]: c for c in _cards()}
    rows = overlap_rows(cards, DATASETS.names(), state_dir, mirror=_settings(state_dir).data_mirror)
    target = REPO_ROOT / "site" / "data" / SEEN_FILE
    write_seen(target, rows)
    for row in rows:
        print(f"  {row['submission']} × {row['dataset']}: {row['n_seen']} of {row['n_molecules']} molecules "
              f"in {row['source']}")  # fmt: skip
    print(f"seen-in-training: {len(rows)} flagged cell(s) written to {target}; run 'site' to show them")
    return 0


def _site_command(args: argparse.Namespace) -> int:
    """``site [--allow-shrink]``: 1 (with the reason) when the merge would shrink the board.

    A preview run refused by the merge (``evaluate --limit``) is named in the report and exits 0: the
    committed board is intact, and a smoke test followed by ``nox -s site`` must not break the build.
    """
    from leaderboard.site.publish import ShrinkError

    try:
        _site(Path(args.state_dir), allow_shrink=args.allow_shrink)
    except ShrinkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _retire(args: argparse.Namespace) -> int:
    """``retire --submission ID [--track T] [--dataset D]``: remove those keys from ``site/data/``."""
    from leaderboard.intake.manifest import discover
    from leaderboard.site.publish import retire

    folder = REPO_ROOT / "submissions"
    try:
        report = retire(
            REPO_ROOT / "site",
            submission=args.submission,
            track=args.track,
            dataset=args.dataset,
            present=[p.parent.name for p in discover(folder)] if folder.is_dir() else [],
            repo_root=REPO_ROOT,
            cache_dir=Path(args.state_dir) / "cache",
        )
    except LookupError as exc:
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return 1
    for line in report.lines():
        print(line)
    print("site: pages regenerated; commit site/ (`nox -s site` rebuilds public/)")
    return 0


def _import_results(args: argparse.Namespace) -> int:
    """``import-results``: fill the tracking store from the committed record (:mod:`leaderboard.restore`)."""
    from leaderboard.execution.job_inputs import git_commit
    from leaderboard.restore import import_results

    try:
        report = import_results(
            _store(Path(args.state_dir)), REPO_ROOT / "site", source=f"site/data@{git_commit(REPO_ROOT)}"
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report.line())
    return 0


def _write_pr_summary(state_dir: Path, changes, failures: list[str]) -> Path:
    """Write ``<state>/pr-summary.md`` (scores, rank, rank changes of the changed submissions).

    The rankings are the boards' (references never ranked), of this machine's results merged (in memory)
    into the committed ``site/data/`` exactly as a site build would merge them, so a model evaluated on a
    fresh clone is ranked among every committed model of its board, not alone.
    """
    from leaderboard.intake.manifest import discover
    from leaderboard.intake.pr_report import pr_summary
    from leaderboard.site.exports import read_board
    from leaderboard.site.merge import Board, merge_boards

    ids = sorted({p.parent.name for p in discover(REPO_ROOT / "submissions")} | set(changes.deleted))
    local, runs = _store(state_dir).export(ids)
    board, _ = merge_boards(read_board(REPO_ROOT / "site"), Board.from_exports(local, runs, []))
    results = board.results
    failures = [line.replace(f"{REPO_ROOT}/", "") for line in failures]  # the comment is public
    refs = {card["id"] for card in _cards() if card.get("reference")}  # listed or declared: never ranked
    text = pr_summary(
        results, changes.changed, deleted=changes.deleted, failures=failures, ref=changes.ref, references=refs
    )
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "pr-summary.md"
    path.write_text(text, encoding="utf-8")
    return path


def _dry_run(args: argparse.Namespace, ids: list[str] | None, options, settings) -> int:
    """``evaluate --dry-run``: what the endpoint submissions would send, against the caps; sends nothing."""
    from evaluators.datasets import DEFAULT_DATASETS
    from leaderboard.data.prepare import DataError
    from leaderboard.execution.endpoint_runner import dry_run_evaluation
    from leaderboard.intake.manifest import discover

    folders = [p.parent for p in discover(REPO_ROOT / "submissions") if not ids or p.parent.name in ids]
    try:
        return dry_run_evaluation(
            folders, args.dataset or list(DEFAULT_DATASETS), state_dir=Path(args.state_dir), options=options,
            mirror=settings.data_mirror, max_requests=args.max_requests, max_tokens=args.max_tokens,
            allow_remote_code=sorted(settings.allow_remote_code),
            log=lambda text: [_say(line) for line in str(text).splitlines()],
        )  # fmt: skip
    except (DataError, OSError) as exc:
        _say(f"error: {exc}", error=True)
        return 2


def _evaluate(args: argparse.Namespace) -> int:
    from evaluators.datasets import DEFAULT_DATASETS
    from evaluators.tracks import TrackOptions
    from leaderboard.execution.endpoint_spend import Spend
    from leaderboard.execution.evaluate import Evaluator
    from leaderboard.execution.images import DEFAULT_BASE_IMAGE
    from leaderboard.execution.locks import EvaluationLockedError
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
            _say(f"error: {exc}", error=True)
            return 2
        ids = list(changes.changed)
        _say(
            f"changed since {changes.ref}: {', '.join(ids) or 'none'}"
            + (f"; removed: {', '.join(changes.deleted)}" if changes.deleted else "")
        )
        if not ids:
            _say(f"pull-request summary: {_write_pr_summary(state_dir, changes, [])}")
            return 0
    # An id typed with --submission is a folder name in submissions/: '../x', 'a/b' or a typo is one line,
    # not a traceback (ids from --changed-since come from git and were checked there).
    if args.submission and ids:
        from leaderboard.intake.manifest import discover
        from leaderboard.text import clip

        known = sorted(p.parent.name for p in discover(REPO_ROOT / "submissions"))
        unknown = [s for s in ids if s not in known]
        if unknown:
            names = ", ".join(repr(s) for s in unknown)  # _say makes the line printable
            _say(f"error: no submission {names} in submissions/ (an id is a folder name there; known: "
                 f"{clip(', '.join(known), 300)})", error=True)  # fmt: skip
            return 2
    if args.dry_run:
        return _dry_run(args, ids, options, settings)
    spend = Spend(args.max_requests, args.max_tokens)
    if spend.cap.describe() and args.executor != "local":
        _say(f"error: {spend.cap.describe()} caps the endpoint jobs of an evaluation run here; --executor "
             f"{args.executor} runs each job in a process of its own, where only the manifest's per-run "
             "budget (model.max_requests, model.max_tokens_total) applies", error=True)  # fmt: skip
        return 2
    from leaderboard.executors import EXECUTORS, ExecutorError

    try:
        executor = EXECUTORS.get(args.executor).from_arguments(args, settings)
    except ValueError as exc:  # a bad site defaults file or option: file, field and value named
        _say(f"error: {exc}", error=True)
        return 2
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
            endpoint_options={"spend": spend},
            only_tracks=tuple(args.track or ()),
        )
        summary = executor.run(evaluator, ids, args.dataset or list(DEFAULT_DATASETS))
    except (EvaluationLockedError, ExecutorError) as exc:
        _say(f"error: {exc}", error=True)
        return 2
    _say(summary.line())
    for line in summary.failed + summary.invalid:
        _say(f"  FAILED {line}")
    if spend.jobs:  # requests, tokens and cost of the endpoint (API) jobs, all together
        _say(spend.totals_line())
    if changes is not None:
        path = _write_pr_summary(state_dir, changes, summary.failed + summary.invalid)
        _say(f"pull-request summary: {path}")
    status = 1 if (summary.failed or summary.invalid) else 0
    if not args.no_site:
        t0 = time.perf_counter()
        from leaderboard.site.publish import ShrinkError

        try:
            with summary.phases.timed("site", "merge into site/data/, pages, public/"):
                _site(state_dir, allow_shrink=args.allow_shrink)
        except ShrinkError as exc:  # the runs are in MLflow; the committed board is untouched
            print(f"error: {exc}", file=sys.stderr)
            status = 1
        else:
            print(f"site: {time.perf_counter() - t0:.1f} s")
    print_phases(summary.phases, say=_say)
    return status


#: A Sphinx role (``:mod:`x```, ``:func:`~a.b```) and an inline literal (````x````) of reStructuredText.
_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)


def plain(doc: str) -> str:
    """Return a docstring as the plain text ``--help`` prints: roles and literal markup removed.

    ``--help`` showed this module's docstring as written, double backticks and ``:mod:`` roles included.

    Parameters
    ----------
    doc : str
        reStructuredText as docstrings write it.

    Returns
    -------
    str
        The same text: a role's target alone (its last dotted part with ``~``), a literal's content alone.

    Examples
    --------
    >>> plain("``site`` merges (:mod:`leaderboard.site.publish`, :func:`~leaderboard.text.printable`).")
    'site merges (leaderboard.site.publish, printable).'
    """
    text = _ROLE.sub(lambda m: m[2].rsplit(".", 1)[-1] if m[1] else m[2], doc)
    return _LITERAL.sub(r"\1", text)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard", description=plain(__doc__ or ""))
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
    ev = add_evaluate_parser(sub)
    new = sub.add_parser("new-submission", help="write submissions/ID/submission.yaml from the template")
    new.add_argument("id", help="the new submission's id (lowercase letters, digits, '-'; the folder name)")
    new.add_argument("--root", help="repository root (default: this checkout)")
    new.add_argument(
        "--kind",
        choices=["huggingface", "endpoint"],  # leaderboard.intake.scaffold.KINDS (not imported for --help)
        default="huggingface",
        help="huggingface (default): weights run in the sandbox, any source (see submissions/README.md); "
        "endpoint: a model behind an OpenAI-compatible API that the maintainers' machine calls",
    )
    shrink_help = (
        "accept a merge that leaves site/data/ with fewer result rows, table rows or (submission, track, "
        "dataset) keys than committed (default: refuse, naming what would be lost)"
    )
    ev.add_argument("--allow-shrink", action="store_true", help=shrink_help)
    site = sub.add_parser(
        "site", help="merge MLflow's results into the committed site/data/, regenerate pages, build public/"
    )
    site.add_argument("--allow-shrink", action="store_true", help=shrink_help)
    ret = sub.add_parser("retire", help="remove a submission's results from the committed site/data/")
    ret.add_argument("--submission", required=True, help="submission id")
    ret.add_argument("--track", help="only this track (default: every track)")
    ret.add_argument("--dataset", help="only this data set (default: every data set)")
    sub.add_parser(
        "import-results",
        help="import the committed site/data/ into the tracking store (MLFLOW_TRACKING_URI or .state/): "
        "a fresh machine's MLflow then holds the whole board and reuses its results",
    )
    sub.add_parser(
        "seen-in-training",
        help="flag the (model, data set) cells whose molecules are in a corpus a manifest declares "
        "(rebuilds the corpora, matches by InChIKey, writes site/data/seen_in_training.csv)",
    )
    one = sub.add_parser("run-one", help="inside a Slurm job: evaluate one (submission, track, data set)")
    for option in ("--submission", "--track", "--dataset", "--submissions-dir", "--experiment-id",
                   "--expect-key", "--base-image", "--options-json", "--limits-json"):  # fmt: skip
        one.add_argument(option, required=True)
    one.add_argument("--runner", choices=["docker", "in-process"], required=True)
    one.add_argument("--gpu", choices=["on", "off"], required=True)
    args = parser.parse_args(argv)
    if args.command == "run-one":
        import os

        from leaderboard.executors.slurm_job import run_one

        return run_one(args, repo_root=REPO_ROOT, environ=os.environ)
    if args.command == "validate":
        return _validate(args)
    if args.command == "evaluate":
        return _evaluate(args)
    if args.command == "new-submission":
        return _new_submission(args)
    if args.command == "retire":
        return _retire(args)
    if args.command == "import-results":
        return _import_results(args)
    if args.command == "seen-in-training":
        return _seen_in_training(args)
    return _site_command(args)


if __name__ == "__main__":
    sys.exit(main())
