"""Markdown reports for pull requests: the validation report and the post-evaluation summary.

- :func:`check_manifest` / :func:`check_manifests` run the manifest checks of
:mod:`leaderboard.intake.manifest`
  and sort every problem into one of :data:`CHECKS` with its file, field, message and fix.
  :func:`validation_markdown` renders them as the comment a pull request shows (``nox -s validate --
  --changed-since REF --format markdown``): each manifest's checks, each problem with file, field and fix,
  and what maintainers will run.
- :func:`pr_summary` renders what maintainers post after ``nox -s evaluate -- --changed-since REF``: the
  headline scores of the changed submissions, the Copeland rank they take (with a rank interval when one
  is given) and the rank changes they cause.

Invariants
----------
- Checking a manifest never runs submission code: the verdict is
:func:`leaderboard.intake.manifest.load_submission`
  (safe YAML, pydantic), and a manifest that is a symbolic link or lies outside its submission folder is
  refused before it is read, so a pull request cannot make the report quote files from elsewhere.
- Text from a manifest is untrusted: it is escaped for Markdown tables, HTML and @-mentions.
- Deterministic: the same inputs give the same text.

Side effects: none (reads manifests; returns strings).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from leaderboard.intake import manifest
from leaderboard.intake.manifest import (
    MAX_MANIFEST_BYTES,
    HuggingFaceModel,
    LocalModel,
    ManifestError,
    PipModel,
    Submission,
    _loc,
    load_submission,
)

if TYPE_CHECKING:  # pandas is not installed in the light `nox -s validate` environment
    import pandas as pd

__all__ = [
    "CHECKS",
    "ManifestCheck",
    "Problem",
    "check_manifest",
    "check_manifests",
    "pr_summary",
    "validation_markdown",
]

#: The checks every manifest goes through, in order; a check runs only when the ones before it pass.
CHECKS: tuple[tuple[str, str], ...] = (
    ("file", "file: present, a plain file inside its submission folder, at most 64 KiB"),
    ("yaml", "YAML: parses with the safe loader into a mapping of keys"),
    ("schema", "schema: no unknown keys; every field present, of the right type, pinned"),
    ("consistency", "consistency: adapter, capabilities, code entry and tracks agree"),
    ("folder", "folder: id equals the folder name; code and local weights inside the folder"),
    ("policy", "policy: `trust_remote_code` only with a maintainer's approval"),
)
_CHECK_KEYS = tuple(key for key, _ in CHECKS)
#: Checks that run together: pydantic reports field errors before cross-field rules can run; the folder
#: and policy rules run on the same validated manifest.
_SAME_STAGE = {"folder": "policy", "policy": "folder"}

MAX_PROBLEMS_SHOWN = 50
DEFAULT_DATASETS: tuple[str, ...] = ("datamol-default",)
_MARK = {"pass": "✅", "fail": "❌", "skip": "⏭️"}


@dataclass(frozen=True)
class Problem:
    """One problem of one manifest.

    Attributes
    ----------
    check : str
        Key of the :data:`CHECKS` entry it belongs to.
    file : str
        The manifest, relative to the repository root.
    field : str
        YAML path of the field (``model.revision``); empty for whole-file problems.
    message : str
        The validator's message without the file prefix (it includes the fix).
    fix : str
        The part of ``message`` that says how to fix it (empty when the message has no separate fix).
    """

    check: str
    file: str
    field: str
    message: str
    fix: str


@dataclass(frozen=True)
class ManifestCheck:
    """The outcome of checking one manifest.

    Attributes
    ----------
    submission : str
        The submission id (its folder name).
    file : str
        The manifest, relative to the repository root.
    status : str
        ``new``, ``modified`` or ``unchanged`` relative to the ref compared with; empty without one.
    problems : tuple of Problem
        Every problem; empty when the manifest is valid.
    submission_model : Submission or None
        The validated manifest when valid.
    """

    submission: str
    file: str
    status: str
    problems: tuple[Problem, ...] = ()
    submission_model: Submission | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        """Whether the manifest passed every check."""
        return not self.problems

    def outcome(self, check: str) -> str:
        """Return ``pass``, ``fail`` or ``skip`` (not reached) for one of :data:`CHECKS`."""
        failed = {p.check for p in self.problems}
        if check in failed:
            return "fail"
        if not failed:
            return "pass"
        first = min(_CHECK_KEYS.index(c) for c in failed)
        here = _CHECK_KEYS.index(check)
        if here < first or _SAME_STAGE.get(check) in failed:
            return "pass"
        return "skip"


# --------------------------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------------------------


def _relative(path: Path, root: Path) -> str:
    try:
        return path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        return path.as_posix()


_QUOTED_FIELD = re.compile(r"'([A-Za-z_][\w.]*)'")


def _first_field(message: str) -> str:
    """Return the first quoted field name of a message (``'code.file' ...`` → ``code.file``)."""
    match = _QUOTED_FIELD.search(message)
    return match.group(1) if match else ""


def _split_fix(message: str) -> str:
    """Return the fix sentence(s) of a validator message (the text after the value it quotes)."""
    got = message.rfind(", got ")
    start = got if got >= 0 else 0
    cut = message.find(". ", start)
    return message[cut + 2 :].strip() if cut >= 0 else ""


def _containment_problem(path: Path, root: Path) -> str | None:
    """Refuse a manifest reached through a symbolic link (it could make the report quote any file)."""
    if path.is_symlink() or path.parent.is_symlink():
        return (
            "is a symbolic link, or in a folder that is one; a manifest must be a plain file in a plain "
            "submission folder. "
            "Replace the link with the file itself."
        )
    outside = "lies outside its submission folder. Put it at submissions/<id>/submission.yaml."
    try:
        folder = path.parent.resolve()
        leaves_repository = path.absolute().is_relative_to(root.absolute()) and not folder.is_relative_to(
            root.resolve()
        )
    except (OSError, RuntimeError):
        return outside
    return outside if leaves_repository else None


def check_manifest(
    path: Path, *, root: Path, status: str = "", allow_remote_code: Iterable[str] = ()
) -> ManifestCheck:
    """Check one manifest and sort its problems into :data:`CHECKS`.

    Parameters
    ----------
    path : pathlib.Path
        The ``submission.yaml`` (it need not exist: a missing file is a problem).
    root : pathlib.Path
        Repository root; paths in the result are relative to it.
    status : str
        ``new``, ``modified`` or ``unchanged`` relative to a ref, shown in the report; empty when all
        manifests are checked.
    allow_remote_code : iterable of str
        Ids a maintainer allows to use ``trust_remote_code``.

    Returns
    -------
    ManifestCheck
        The problems (none when valid) and, when valid, the parsed manifest.
    """
    path = Path(path)
    root = Path(root)
    allow = list(allow_remote_code)
    submission_id = path.parent.name
    shown = _relative(path, root)
    refused = _containment_problem(path, root)
    if refused is not None:
        problem = Problem("file", shown, "", refused, refused.split(". ", 1)[-1])
        return ManifestCheck(submission_id, shown, status, (problem,))
    try:
        sub = load_submission(path, allow_remote_code=allow)
    except ManifestError as exc:
        lines = exc.problems
    else:
        return ManifestCheck(submission_id, shown, status, (), sub)
    prefix = f"{path}: "
    # Folder paths in messages are shown relative to the root, as the file is (no runner paths in comments).
    folder, folder_shown = str(path.parent), _relative(path.parent, root)
    messages = [line.removeprefix(prefix).replace(folder, folder_shown) for line in lines]
    placed = _classify(path, messages, allow)
    problems = tuple(
        Problem(check, shown, fld, message, _split_fix(message))
        for (check, fld), message in zip(placed, messages, strict=True)
    )
    return ManifestCheck(submission_id, shown, status, problems)


def _parse_like_the_validator(path: Path) -> Any:
    """Parse a manifest exactly as :func:`leaderboard.intake.manifest.load_submission` does.

    The report must never parse more leniently than the validator (a YAML alias bomb that the validator
    refuses must not be expanded here), so the validator's own parser is used where it has one.
    """
    text = path.read_text(encoding="utf-8")
    parse = getattr(manifest, "_parse_yaml", None)
    return parse(path, text) if parse is not None else yaml.safe_load(text)


def _classify(path: Path, messages: list[str], allow: list[str]) -> list[tuple[str, str]]:
    """Assign (check, field) to each problem message, by re-running the stages of ``load_submission``."""
    if not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
        return [("file", "")] * len(messages)
    try:
        data = _parse_like_the_validator(path)
    except (ManifestError, yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):
        return [("yaml", "")] * len(messages)
    if not isinstance(data, dict):
        return [("yaml", "")] * len(messages)
    try:
        Submission.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        if len(errors) == len(messages):
            return [
                ("schema", _loc(e["loc"])) if e["loc"] else ("consistency", _first_field(m))
                for e, m in zip(errors, messages, strict=True)
            ]
        return [("schema", _first_field(m)) for m in messages]
    placed = []
    for message in messages:
        fld = _first_field(message)
        placed.append(("policy" if fld == "trust_remote_code" else "folder", fld))
    return placed


def check_manifests(
    ids: Sequence[str],
    *,
    root: Path,
    statuses: Mapping[str, str] | None = None,
    allow_remote_code: Iterable[str] = (),
) -> list[ManifestCheck]:
    """Check ``<root>/submissions/<id>/submission.yaml`` for every id, in the given order."""
    allow = list(allow_remote_code)
    statuses = statuses or {}
    return [
        check_manifest(
            Path(root) / "submissions" / i / "submission.yaml",
            root=Path(root),
            status=statuses.get(i, ""),
            allow_remote_code=allow,
        )
        for i in ids
    ]


# --------------------------------------------------------------------------------------------
# Markdown helpers
# --------------------------------------------------------------------------------------------


def _cell(text: Any) -> str:
    """Escape untrusted text for one Markdown table cell (pipes, HTML, mentions, line breaks)."""
    out = " ".join(str(text).split())
    out = out.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace("@", "@\u200b")


def _code(text: Any) -> str:
    value = " ".join(str(text).split()).replace("|", "\\|")
    ticks = "``" if "`" in value else "`"
    pad = " " if ticks == "``" else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _section(field: str) -> str:
    return f", section {_code(field)}" if field else ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# --------------------------------------------------------------------------------------------
# Validation report
# --------------------------------------------------------------------------------------------


def _maintainer_plan(sub: Submission, datasets: Sequence[str]) -> list[str]:
    model = sub.model
    mounted = "; mounted read-only in the container."
    if isinstance(model, HuggingFaceModel):
        kinds = (
            "(pickle files only with a maintainer's approval)" if model.allow_pickle else "(safetensors only)"
        )
        weights = (
            f"{_code(model.id)} at commit {_code(model.revision)}, downloaded on the host {kinds}{mounted}"
        )
    elif isinstance(model, PipModel):
        weights = (
            f"the package {_code(f'{model.package}=={model.version}')}, downloaded and unpacked on the "
            "host (never installed or imported there)" + mounted
        )
    elif isinstance(model, LocalModel):
        weights = f"the folder {_code(model.path)} of the submission" + mounted
    else:
        weights = "none."
    if sub.adapter == "custom" and sub.code is not None:
        runs = f"your class {_code(sub.code.object)} from {_code(sub.code.file)}"
    else:
        runs = f"the built-in {_code(sub.adapter)} adapter"
    extras = ", ".join(_code(r) for r in sub.requirements) or "none"
    tracks = ", ".join(_code(t) for t in sub.selected_tracks())
    lines = [
        f"- Weights: {weights}",
        f"- Image: `containers/Dockerfile` plus this folder; extra requirements: {extras} "
        "(installed from a host-side wheelhouse, no network in the build).",
        f"- Run: {runs}, on track(s) {tracks} × data set(s) "
        + ", ".join(_code(d) for d in datasets)
        + ", in the sandbox: no network, read-only root, non-root user, all capabilities dropped, "
        "memory/CPU/time limits.",
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
    datasets: Sequence[str] = DEFAULT_DATASETS,
) -> str:
    """Render the validation report a pull-request comment shows.

    Parameters
    ----------
    checks : sequence of ManifestCheck
        The checked manifests (see :func:`check_manifests`), in display order.
    ref, base : str, optional
        The ref the changes are measured against and its merge-base commit (for the header and the
        maintainers' command); ``None`` when all manifests were checked.
    deleted : sequence of str
        Ids whose folder the branch removes.
    other : sequence of str
        Changed paths under ``submissions/`` outside any submission folder.
    datasets : sequence of str
        The data sets maintainers evaluate on by default.

    Returns
    -------
    str
        GitHub-flavoured Markdown ending in a newline.
    """
    out = ["## ChemRobust submission check", ""]
    bad = [c for c in checks if not c.ok]
    if ref is not None:
        where = f"since {_code(ref)}" + (f" (merge base {_code(base[:12])})" if base else "")
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
            result = "✅ valid" if c.ok else f"❌ {_plural(len(c.problems), 'problem')}"
            rows.append([_code(c.submission), *([c.status] if with_status else []), _code(c.file), result])
        headers = ["submission", *(["status"] if with_status else []), "manifest", "result"]
        out += _table(headers, rows) + [""]
    for c in checks:
        out += _manifest_section(c, datasets)
    if deleted:
        out += ["### Removed submissions", ""]
        out += [
            f"- {_code(i)}: its folder is removed. Its results leave the board at the next site build; "
            "a maintainer confirms the removal."
            for i in deleted
        ]
        out.append("")
    if other:
        out += ["### Other changed files under `submissions/`", ""]
        out += [f"- {_code(p)} (not part of a submission; not checked)" for p in other]
        out.append("")
    if any(c.ok for c in checks):
        command = "nox -s evaluate -- --changed-since " + (ref if ref is not None else "main")
        out += [
            "### What maintainers will run",
            "",
            f"After review, a maintainer runs `{command}` on their machine: each valid submission above "
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


def _manifest_section(check: ManifestCheck, datasets: Sequence[str]) -> list[str]:
    mark = _MARK["pass"] if check.ok else _MARK["fail"]
    status = f" ({check.status})" if check.status else ""
    out = [f"### {mark} {_code(check.submission)}{status}", ""]
    if check.ok:
        names = ", ".join(label.split(":", 1)[0] for _, label in CHECKS)
        out += [f"All {len(CHECKS)} checks passed ({names}).", ""]
        if check.submission_model is not None:
            out += ["**What maintainers will run**", ""]
            out += _maintainer_plan(check.submission_model, datasets) + [""]
        return out
    rows = []
    for key, label in CHECKS:
        n = sum(1 for p in check.problems if p.check == key)
        text = {
            "pass": f"{_MARK['pass']} passed",
            "fail": f"{_MARK['fail']} {_plural(n, 'problem')}",
            "skip": f"{_MARK['skip']} not reached (runs once the checks before it pass)",
        }[check.outcome(key)]
        rows.append([label, text])
    out += _table(["check", "result"], rows) + [""]
    shown = check.problems[:MAX_PROBLEMS_SHOWN]
    rows = [
        [
            _code(p.file),
            _code(p.field) if p.field else "(whole file)",
            _cell(p.message[: len(p.message) - len(p.fix)].strip() if p.fix else p.message),
            _cell(p.fix) if p.fix else f"See {_code('submissions/README.md')}{_section(p.field)}.",
        ]
        for p in shown
    ]
    out += ["**Problems**", ""] + _table(["file", "field", "problem", "how to fix"], rows) + [""]
    if len(check.problems) > len(shown):
        out += [f"… and {len(check.problems) - len(shown)} more (run `nox -s validate` locally).", ""]
    return out


# --------------------------------------------------------------------------------------------
# Post-evaluation summary
# --------------------------------------------------------------------------------------------


def _copeland(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Copeland ranking over the site's headline criteria, and the headline values per criterion."""
    import pandas as pd

    from leaderboard.ranking.copeland import copeland_ranking
    from leaderboard.ranking.criteria import criteria_table
    from leaderboard.site.build import _HEADLINE_HIGHER_IS_BETTER, _headline_rows

    rows = _headline_rows(results)
    rows = rows.loc[rows["value"].notna()]
    if rows.empty:
        return pd.DataFrame(columns=["score", "wins", "losses", "ties", "rank"]), pd.DataFrame()
    table, weights = criteria_table(
        rows.loc[:, ["submission", "track", "criterion", "metric", "value"]],
        higher_is_better=_HEADLINE_HIGHER_IS_BETTER,
    )
    headline = rows.pivot(index="submission", columns="criterion", values="value").sort_index(axis=1)
    return copeland_ranking(table, weights), headline


def _fmt(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    return "—" if not math.isfinite(number) else f"{number:.3f}"


def pr_summary(
    results: pd.DataFrame,
    changed: Sequence[str],
    *,
    deleted: Sequence[str] = (),
    failures: Sequence[str] = (),
    intervals: Mapping[str, tuple[int, int]] | None = None,
    ref: str | None = None,
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
        One line per failed run or invalid manifest, shown verbatim (escaped).
    intervals : mapping of str to (int, int), optional
        Rank interval (best, worst) per submission, e.g. from a bootstrap over items; the hook for the
        bootstrap module. Without it the interval column says "not computed".
    ref : str, optional
        The ref the changes were measured against, for the heading.

    Returns
    -------
    str
        Markdown: headline scores of the changed submissions next to the best other submission, the
        Copeland rank each takes (over the site's headline criteria, :data:`leaderboard.site.build.HEADLINE`),
        and every rank change relative to the board without the changed submissions.

    Notes
    -----
    "Before" ranks the board without the changed submissions (and with the removed ones); "after" ranks
    it with the changed submissions and without the removed ones.
    """
    changed = list(dict.fromkeys(changed))
    after_rank, headline = _copeland(results.loc[~results["submission"].isin(list(deleted))])
    before_rank, _ = _copeland(results.loc[~results["submission"].isin(changed)])
    out = ["## ChemRobust evaluation of this pull request", ""]
    since = f" (changed since {_code(ref)})" if ref else ""
    out += [f"Evaluated: {', '.join(_code(i) for i in changed) or 'nothing'}{since}.", ""]
    if not changed and not deleted:
        out += ["No submission changed; nothing was evaluated.", ""]
    ranked = [i for i in changed if i in after_rank.index]
    if changed:
        out += [
            "### Scores",
            "",
            "Headline criterion: AMORE Acc@1 on non-trivial pairs (augmented string ≠ original), last layer, "
            "L2 distance, original → augmented; one row per data set / augmentation.",
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
                    best_text = f"{_fmt(top)} ({', '.join(_code(s) for s in leaders)})"
                rows.append(
                    [_code(criterion)] + [_fmt(headline.at[i, criterion]) for i in with_scores] + [best_text]
                )
            out += _table(["criterion", *(_code(i) for i in with_scores), "best other submission"], rows)
            out.append("")
        missing = [i for i in changed if i not in headline.index]
        if missing:
            out += [
                f"No headline results for {', '.join(_code(i) for i in missing)} (see the failures below).",
                "",
            ]
    if ranked:
        n = len(after_rank)
        out += [f"### Rank (Vote'n'Rank Copeland over the headline criteria, {n} submissions)", ""]
        rows = []
        for i in ranked:
            row = after_rank.loc[i]
            if intervals is not None and i in intervals:
                lo, hi = intervals[i]
                interval = f"[{lo}, {hi}]"
            else:
                interval = "not computed (bootstrap pending)"
            rows.append(
                [
                    _code(i),
                    f"{int(row['score']):+d} ({int(row['wins'])} wins, {int(row['losses'])} losses, "
                    f"{int(row['ties'])} ties)",
                    f"{int(row['rank'])} of {n}",
                    interval,
                ]
            )
        out += _table(["submission", "Copeland score", "rank", "rank interval"], rows) + [""]
    if changed or deleted:
        out += ["### Rank changes it causes", ""]
        moves = []
        for sub_id in sorted(set(before_rank.index) | set(after_rank.index)):
            if sub_id in changed:
                continue
            before = int(before_rank.at[sub_id, "rank"]) if sub_id in before_rank.index else None
            after = int(after_rank.at[sub_id, "rank"]) if sub_id in after_rank.index else None
            if before == after:
                continue
            if after is None:
                moves.append([_code(sub_id), str(before), "—", "removed"])
            elif before is None:
                moves.append([_code(sub_id), "—", str(after), "new"])
            else:
                delta = before - after
                moves.append(
                    [_code(sub_id), str(before), str(after), f"{'▲' if delta > 0 else '▼'} {abs(delta)}"]
                )
        if moves:
            out += _table(["submission", "rank before", "rank after", "change"], moves) + [""]
        else:
            out += ["No other submission changes rank.", ""]
    if failures:
        out += ["### Failures", ""] + [f"- {_cell(line)}" for line in failures] + [""]
    out += [
        "---",
        "<sub>Ranks: Copeland score = pairwise-majority wins − losses over the headline criteria (ties share "
        "a rank). Before = the board without the changed submissions.</sub>",
    ]
    return "\n".join(out).rstrip() + "\n"
