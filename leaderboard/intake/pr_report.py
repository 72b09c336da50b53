"""Markdown for pull requests: the validation report and the post-evaluation summary.

- :func:`validation_markdown` renders the checks of :mod:`leaderboard.intake.report` as the comment a
  pull request shows (``nox -s validate -- --changed-since REF --format markdown``): each manifest's
  checks, each problem with file, field and fix, and what maintainers will run.
- :func:`pr_summary` renders what maintainers post after ``nox -s evaluate -- --changed-since REF``: the
  headline scores of the changed submissions, the Copeland rank they take (with a rank interval when one
  is given) and the rank changes they cause.

Invariants
----------
- Text from a manifest or a run is untrusted: it goes through :mod:`leaderboard.markdown` (escaped for
  Markdown, tables and HTML) and :func:`leaderboard.markdown.no_mentions` (no @-mentions).
- The summary is posted publicly: failure lines go through :func:`leaderboard.scrub.public_reason` (no
  host paths, Docker storage, kernel command line, ids or addresses); the full reasons stay in MLflow.
- Deterministic: the same inputs give the same text.

Side effects: none (returns strings).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from leaderboard.intake.endpoints import EndpointModel
from leaderboard.intake.manifest import HuggingFaceModel, LocalModel, PipModel, Problem, Submission
from leaderboard.intake.report import CHECKS, ManifestCheck
from leaderboard.intake.schema import DatasetModel
from leaderboard.markdown import NO_VALUE, cell, code, no_mentions
from leaderboard.markdown import table as markdown_table
from leaderboard.scrub import public_reason

if TYPE_CHECKING:  # pandas is not installed in the light `nox -s validate` environment
    import pandas as pd

__all__ = ["MAX_PROBLEMS_SHOWN", "pr_summary", "track_datasets", "validation_markdown"]

MAX_PROBLEMS_SHOWN = 50
_MARK = {"pass": "✅", "warn": "⚠️", "fail": "❌", "skip": "⏭️"}


def _text(text: Any) -> str:
    """Escape untrusted text for a table cell or a list item of a pull-request comment."""
    return no_mentions(cell(text))


def _rows(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """Return a Markdown table (cells already escaped) as lines."""
    return markdown_table(headers, rows).splitlines()


def _section(field: str) -> str:
    return f", section {code(field)}" if field else ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------------------------
# Validation report
# --------------------------------------------------------------------------------------------


def track_datasets(
    tracks: Sequence[str], defaults: Sequence[str] | None = None
) -> dict[str, tuple[list[str], list[str]]]:
    """Return, per track, the default data sets it runs on and the other registered sets that serve it.

    A track runs on a data set when the track accepts it (``Track.accepts``, by default: the set lists the
    track), exactly as :meth:`leaderboard.execution.evaluate.Evaluator.plan` chooses jobs; a fixed list here
    once told generative submitters their tracks ran on ``datamol-default``, a set only T1 reads.

    Parameters
    ----------
    tracks : sequence of str
        Registered track names.
    defaults : sequence of str, optional
        The sets run without ``--dataset``; :data:`evaluators.datasets.DEFAULT_DATASETS` when omitted.

    Returns
    -------
    dict of str to (list of str, list of str)
        Track → (the defaults it runs on, the other sets of :data:`evaluators.datasets.DATASETS` that serve
        it, which maintainers run with ``--dataset``), each in the registry's order.

    Notes
    -----
    Imports the registries on first call (numpy and RDKit, not torch), as the manifest checks do.
    """
    from evaluators.datasets import DATASETS, DEFAULT_DATASETS
    from evaluators.tracks import TRACKS

    chosen = list(DEFAULT_DATASETS if defaults is None else defaults)
    out = {}
    for track in tracks:
        serves = [d for d in DATASETS.names() if TRACKS.get(track).accepts(DATASETS.get(d))]
        out[track] = ([d for d in chosen if d in serves], [d for d in serves if d not in chosen])
    return out


def _dataset_lines(tracks: Sequence[str], datasets: Sequence[str] | None) -> list[str]:
    """Return the report's lines naming the data sets each track runs on, defaults first."""
    lines = [
        "- Data sets, by track (*default*: run by `nox -s evaluate`; the others when maintainers add them "
        "with `--dataset`, as for the public board):"
    ]
    for track, (default, others) in track_datasets(tracks, datasets).items():
        names = [f"{code(d)} (*default*)" for d in default] + [code(d) for d in others]
        lines.append(f"  - {code(track)}: {', '.join(names) or 'no registered data set'}")
    return lines


def _maintainer_plan(sub: Submission, datasets: Sequence[str] | None) -> list[str]:
    model = sub.model
    mounted = "; mounted read-only in the container."
    if isinstance(model, HuggingFaceModel):
        kinds = (
            "(pickle files only with a maintainer's approval)" if model.allow_pickle else "(safetensors only)"
        )
        weights = (
            f"{code(model.id)} at commit {code(model.revision)}, downloaded on the host {kinds}{mounted}"
        )
    elif isinstance(model, PipModel):
        weights = (
            f"the package {code(f'{model.package}=={model.version}')}, downloaded and unpacked on the "
            "host (never installed or imported there)" + mounted
        )
    elif isinstance(model, LocalModel):
        weights = f"the folder {code(model.path)} of the submission" + mounted
    elif isinstance(model, DatasetModel):
        weights = (
            f"no weights: the training split {code(model.split)} of data set {code(model.dataset)} (only its "
            "files, sha256-checked on the host)" + mounted
        )
    elif isinstance(model, EndpointModel):
        tracks = ", ".join(code(t) for t in sub.selected_tracks())
        key = f"the key from {code(model.api_key_env)}" if model.api_key_env else "no key"
        return [
            f"- API: {code(model.model)} at {code(model.url)} ({model.api}), {key}; at most "
            f"{model.max_requests} requests per run, {model.max_concurrency} at once.",
            "- No image and no submission code: the host asks the questions of track(s) "
            + tracks
            + ", caching every answer (a rerun sends nothing).",
            *_dataset_lines(sub.selected_tracks(), datasets),
        ]
    else:
        weights = "none."
    if sub.adapter == "custom" and sub.code is not None:
        runs = f"your class {code(sub.code.object)} from {code(sub.code.file)}"
    else:
        runs = f"the built-in {code(sub.adapter)} adapter"
    extras = ", ".join(code(r) for r in sub.requirements) or "none"
    tracks = ", ".join(code(t) for t in sub.selected_tracks())
    lines = [
        f"- Weights: {weights}",
        f"- Image: `containers/Dockerfile` plus this folder; extra requirements: {extras} "
        "(installed from a host-side wheelhouse, no network in the build).",
        f"- Run: {runs}, on track(s) {tracks}, in the sandbox: no network, read-only root, non-root user, "
        "all capabilities dropped, memory/CPU/time limits.",
        *_dataset_lines(sub.selected_tracks(), datasets),
    ]
    if sub.trust_remote_code:
        lines.append(
            "- `trust_remote_code: true`: runs code from the model repository; a maintainer must allow it."
        )
    return lines


def validation_markdown(
    checks: Sequence[ManifestCheck],
    *,
    ref: str | None = None,
    base: str | None = None,
    deleted: Sequence[str] = (),
    other: Sequence[str] = (),
    datasets: Sequence[str] | None = None,
) -> str:
    """Render the validation report a pull-request comment shows.

    Parameters
    ----------
    checks : sequence of ManifestCheck
        The checked manifests (see :func:`leaderboard.intake.report.check_manifests`), in display order.
    ref, base : str, optional
        The ref the changes are measured against and its merge-base commit (for the header and the
        maintainers' command); ``None`` when all manifests were checked.
    deleted : sequence of str
        Ids whose folder the branch removes.
    other : sequence of str
        Changed paths under ``submissions/`` outside any submission folder.
    datasets : sequence of str, optional
        The data sets maintainers evaluate on by default (:data:`evaluators.datasets.DEFAULT_DATASETS`
        when omitted); the report lists, per track, those that serve it and the other registered sets.

    Returns
    -------
    str
        GitHub-flavoured Markdown ending in a newline.
    """
    out = ["## ChemRobust submission check", ""]
    bad = [c for c in checks if not c.ok]
    if ref is not None:
        where = f"since {code(ref)}" + (f" (merge base {code(base[:12])})" if base else "")
        counts = []
        for status in ("new", "modified"):
            n = sum(1 for c in checks if c.status == status)
            if n:
                counts.append(f"{n} {status}")
        if deleted:
            counts.append(f"{len(deleted)} removed")
        described = f" ({', '.join(counts)})" if counts else ""
        out.append(f"Submissions changed {where}: {len(checks) + len(deleted)}{described}.")
    else:
        out.append(f"Manifests checked: {len(checks)}.")
    out.append("")
    if not checks and not deleted:
        out += ["No submission changed: there is nothing to check.", ""]
    elif bad:
        out += [
            f"**❌ {len(bad)} of {_plural(len(checks), 'manifest')} "
            f"{'has' if len(bad) == 1 else 'have'} problems.** Each problem below names the file, the field "
            "and the fix; "
            + ("push a fix and this report updates." if ref is not None else "fix them and check again."),
            "",
        ]
    elif checks:
        out += [
            f"**✅ {'The manifest is' if len(checks) == 1 else f'All {len(checks)} manifests are'} valid.**",
            "",
        ]
    if checks:
        with_status = any(c.status for c in checks)
        rows = []
        for c in checks:
            result = "✅ valid" if c.ok else f"❌ {_plural(len(c.errors), 'problem')}"
            if c.warnings:
                result += f", ⚠️ {_plural(len(c.warnings), 'warning')}"
            rows.append([code(c.submission), *([c.status] if with_status else []), code(c.file), result])
        headers = ["submission", *(["status"] if with_status else []), "manifest", "result"]
        out += _rows(headers, rows) + [""]
    for c in checks:
        out += _manifest_section(c, datasets)
    if deleted:
        out += ["### Removed submissions", ""]
        out += [
            f"- {code(i)}: its folder is removed. Its results leave the board at the next site build; "
            "a maintainer confirms the removal."
            for i in deleted
        ]
        out.append("")
    if other:
        out += ["### Other changed files under `submissions/`", ""]
        out += [f"- {code(p)} (not part of a submission; not checked)" for p in other]
        out.append("")
    if any(c.ok for c in checks):
        command = "nox -s evaluate -- --changed-since " + (ref if ref is not None else "main")
        out += [
            "### What maintainers will run",
            "",
            f"After review, a maintainer runs {code(command)} on their machine: each valid submission above "
            "is built into its own image and evaluated in the sandbox, and the scores, the rank it takes "
            "and the rank changes it causes are posted here.",
            "",
        ]
    out += [
        "---",
        "<sub>Nothing from this pull request was executed to make this report: the manifests were read as "
        "data (safe YAML loader) by the base branch's validator. Field reference: `submissions/README.md`; "
        "the whole path: `CONTRIBUTING.md`.</sub>",
    ]
    return "\n".join(out).rstrip() + "\n"


def _where(p: Problem) -> str:
    """Return the field column: the YAML path, and the line and column where the parser stopped."""
    field = code(p.field) if p.field else "(whole file)"
    return field + (f", line {p.at.line}, column {p.at.column}" if p.at is not None else "")


def _problem_rows(problems: Sequence[Problem]) -> list[list[str]]:
    rows = []
    for p in problems:
        # The offending line is quoted as code: manifest text is never interpreted, and the fix column holds
        # only the validator's own sentence (never the parser's text).
        quoted = f" Line {p.at.line}: {code(p.at.source)}" if p.at is not None and p.at.source.strip() else ""
        kind = "" if p.is_error else f"{_MARK['warn']} **warning:** "
        rows.append([
            code(p.file),
            _where(p),
            kind + _text(p.message) + quoted,
            _text(p.fix) if p.fix else f"See {code('submissions/README.md')}{_section(p.field)}.",
        ])  # fmt: skip
    return rows


def _manifest_section(check: ManifestCheck, datasets: Sequence[str] | None) -> list[str]:
    mark = _MARK["pass"] if check.ok else _MARK["fail"]
    status = f" ({check.status})" if check.status else ""
    out = [f"### {mark} {code(check.submission)}{status}", ""]
    headers = ["file", "field", "problem", "how to fix"]
    if check.ok:
        names = ", ".join(label.split(":", 1)[0] for _, label in CHECKS)
        out += [f"All {len(CHECKS)} checks passed ({names}).", ""]
        if check.warnings:
            out += ["**Warnings** (the manifest is valid; a maintainer decides on these)", ""]
            out += _rows(headers, _problem_rows(check.warnings[:MAX_PROBLEMS_SHOWN])) + [""]
        if check.submission_model is not None:
            out += ["**What maintainers will run**", ""]
            out += _maintainer_plan(check.submission_model, datasets) + [""]
        return out
    rows = []
    for key, label in CHECKS:
        n = sum(1 for p in check.errors if p.check == key)
        warned = sum(1 for p in check.warnings if p.check == key)
        text = {
            "pass": f"{_MARK['pass']} passed",
            "warn": f"{_MARK['warn']} passed, {_plural(warned, 'warning')}",
            "fail": f"{_MARK['fail']} {_plural(n, 'problem')}",
            "skip": f"{_MARK['skip']} not reached (runs once the file parses)",
        }[check.outcome(key)]
        rows.append([label, text])
    out += _rows(["check", "result"], rows) + [""]
    shown = check.problems[:MAX_PROBLEMS_SHOWN]
    out += ["**Problems**", ""] + _rows(headers, _problem_rows(shown)) + [""]
    if len(check.problems) > len(shown):
        out += [f"… and {len(check.problems) - len(shown)} more (run `nox -s validate` locally).", ""]
    return out


# --------------------------------------------------------------------------------------------
# Post-evaluation summary
# --------------------------------------------------------------------------------------------


def _headline(results: pd.DataFrame) -> pd.DataFrame:
    """Return the headline values per criterion of every submission (every track's criteria)."""
    from leaderboard.ranking.headline import rank_headline

    return rank_headline(results).headline


def _board_ranks(results: pd.DataFrame, references: Collection[str]) -> dict[str, pd.DataFrame]:
    """Return each board's Copeland ranking (:func:`leaderboard.ranking.boards.rank_boards`), no reference."""
    from leaderboard.ranking.boards import rank_boards

    return {name: board.ranking.copeland for name, board in rank_boards(results, references).items()}


def _criteria_text() -> str:
    """One sentence per track naming its headline criteria, from the tracks' declarations."""
    from leaderboard.tracks import track, track_names

    parts = [f"{name}: {crit.label}" for name in track_names() for crit in track(name).headline]
    return "; ".join(parts)


def _fmt(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return NO_VALUE
    return NO_VALUE if not math.isfinite(number) else f"{number:.3f}"


def pr_summary(
    results: pd.DataFrame,
    changed: Sequence[str],
    *,
    deleted: Sequence[str] = (),
    failures: Sequence[str] = (),
    intervals: Mapping[str | tuple[str, str], tuple[int, int]] | None = None,
    ref: str | None = None,
    references: Collection[str] = (),
) -> str:
    """Render the post-evaluation summary of a pull request in Markdown.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format results of every submission on the board (site columns: ``submission, track,
        dataset, augmentation, layer, distance, direction, subset, metric, value``), including the
        changed ones.
    changed : sequence of str
        The ids the pull request adds or changes.
    deleted : sequence of str
        The ids it removes (ranked before, not after).
    failures : sequence of str
        One line per failed run or invalid manifest, shown scrubbed of host details
        (:func:`leaderboard.scrub.public_reason`) and escaped.
    intervals : mapping of str or (str, str) to (int, int), optional
        Rank interval (best, worst) per ``(board, submission)``, or per submission on every board it is
        ranked on, e.g. from a bootstrap over items; the hook for the bootstrap module. Without it the
        interval column says "not computed".
    ref : str, optional
        The ref the changes were measured against, for the heading.
    references : collection of str
        The submissions that are references (``leaderboard/references.toml`` and the manifests declaring
        ``reference: true``): never ranked, so they take no rank and move none.

    Returns
    -------
    str
        Markdown: headline scores of the changed submissions next to the best other submission, the
        Copeland rank each takes on each board it is on (embedding, generative: each over its own tracks'
        headline criteria, :func:`leaderboard.ranking.boards.rank_boards`), "reference (not ranked)" for
        a reference, and every rank change relative to the boards without the changed submissions.

    Notes
    -----
    "Before" ranks the boards without the changed submissions (and with the removed ones); "after" ranks
    them with the changed submissions and without the removed ones.
    """
    changed = list(dict.fromkeys(changed))
    refs = set(references)
    headline = _headline(results.loc[~results["submission"].isin(list(deleted))])
    after = _board_ranks(results.loc[~results["submission"].isin(list(deleted))], refs)
    before = _board_ranks(results.loc[~results["submission"].isin(changed)], refs)
    out = ["## ChemRobust evaluation of this pull request", ""]
    since = f" (changed since {code(ref)})" if ref else ""
    out += [f"Evaluated: {', '.join(code(i) for i in changed) or 'nothing'}{since}.", ""]
    if not changed and not deleted:
        out += ["No submission changed; nothing was evaluated.", ""]
    if changed:
        out += [
            "### Scores",
            "",
            f"Headline criteria ({_criteria_text()}); one row per criterion, named "
            "track/data set/setting/metric.",
            "",
        ]
        with_scores = [i for i in changed if i in headline.index]
        if with_scores:
            others = headline.drop(index=[i for i in headline.index if i in changed])
            rows = []
            for criterion in headline.columns:
                best = others[criterion].dropna() if not others.empty else others
                best_text = "—"
                if len(best):
                    top = best.max()
                    leaders = sorted(best.index[best == top])
                    best_text = f"{_fmt(top)} ({', '.join(code(s) for s in leaders)})"
                rows.append(
                    [code(criterion)] + [_fmt(headline.at[i, criterion]) for i in with_scores] + [best_text]
                )
            out += _rows(["criterion", *(code(i) for i in with_scores), "best other submission"], rows)
            out.append("")
        missing = [i for i in changed if i not in headline.index]
        if missing:
            out += [
                f"No headline results for {', '.join(code(i) for i in missing)} (see the failures below).",
                "",
            ]
    out += _rank_rows(changed, after, refs & set(headline.index), intervals)
    if changed or deleted:
        out += ["### Rank changes it causes", ""]
        moves = []
        for board, after_rank in after.items():
            before_rank = before.get(board)
            before_ids = set() if before_rank is None else set(before_rank.index)
            for sub_id in sorted(before_ids | set(after_rank.index)):
                if sub_id in changed:
                    continue
                was = int(before_rank.at[sub_id, "rank"]) if sub_id in before_ids else None
                now = int(after_rank.at[sub_id, "rank"]) if sub_id in after_rank.index else None
                if was == now:
                    continue
                if now is None:
                    moves.append([code(sub_id), board, str(was), "—", "removed"])
                elif was is None:
                    moves.append([code(sub_id), board, "—", str(now), "new"])
                else:
                    delta = was - now
                    moves.append(
                        [code(sub_id), board, str(was), str(now), f"{'▲' if delta > 0 else '▼'} {abs(delta)}"]
                    )
        if moves:
            out += _rows(["submission", "board", "rank before", "rank after", "change"], moves) + [""]
        else:
            out += ["No other submission changes rank.", ""]
    if failures:
        out += ["### Failures", ""] + [f"- {_text(public_reason(line))}" for line in failures] + [""]
    out += [
        "---",
        "<sub>Ranks: one board per kind of model (embedding, generative); on each, Copeland score = "
        "pairwise-majority wins − losses over its tracks' headline criteria (ties share a rank). References "
        "are never ranked. Before = the boards without the changed submissions.</sub>",
    ]
    return "\n".join(out).rstrip() + "\n"


def _rank_rows(
    changed: Sequence[str],
    after: Mapping[str, pd.DataFrame],
    references: Collection[str],
    intervals: Mapping[str | tuple[str, str], tuple[int, int]] | None,
) -> list[str]:
    """Return the rank section: each changed submission's rank on each of its boards, or *reference*."""
    rows = []
    for i in changed:
        for board, rank in after.items():
            if i not in rank.index:
                continue
            row, n = rank.loc[i], len(rank)
            span = None if intervals is None else intervals.get((board, i), intervals.get(i))
            interval = "not computed (bootstrap pending)" if span is None else f"[{span[0]}, {span[1]}]"
            rows.append([
                code(i),
                board,
                f"{int(row['score']):+d} ({int(row['wins'])} wins, {int(row['losses'])} losses, "
                f"{int(row['ties'])} ties)",
                f"{int(row['rank'])} of {n}",
                interval,
            ])  # fmt: skip
        if i in references:
            rows.append([code(i), "—", "—", "reference (not ranked)", "—"])
    if not rows:
        return []
    heading = "### Rank (Vote'n'Rank Copeland over each board's headline criteria)"
    return [heading, "", *_rows(["submission", "board", "Copeland score", "rank", "rank interval"], rows), ""]
