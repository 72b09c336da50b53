"""Tests for ``leaderboard.intake.manifest`` and ``python -m leaderboard validate`` (SPEC section 3).

Every reference manifest in ``submissions/`` validates; each broken manifest (derived from a valid one)
is rejected with a message that names the file, the field and a fix — in-process and on the command line.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from leaderboard.intake.manifest import (
    MAX_MANIFEST_BYTES,
    ManifestError,
    Submission,
    discover,
    load_submission,
    validate_paths,
)

REPO = Path(__file__).resolve().parents[2]
SUBMISSIONS = REPO / "submissions"
REFERENCE_IDS = {"char-ngram-baseline", "minilm-l6-text", "morgan-fingerprint-reference"}
SHA = "0123456789abcdef0123456789abcdef01234567"


def _reference(submission_id: str) -> dict:
    return yaml.safe_load((SUBMISSIONS / submission_id / "submission.yaml").read_text(encoding="utf-8"))


def _huggingface(m: dict) -> None:
    m["adapter"] = "transformers"
    m.pop("options", None)
    m["model"] = {
        "source": "huggingface",
        "id": "acme/chem-7b",
        "revision": SHA,
        "architecture": "encoder",
        "capabilities": ["embed"],
    }


@dataclass(frozen=True)
class Case:
    """A broken manifest: the reference it starts from, the edit, the folder name, and what to expect."""

    base: str
    edit: Callable[[dict], None] | None = None
    text: str | None = None  # raw file content instead of an edited reference
    folder: str | None = None  # defaults to the manifest id
    field: str = ""
    hint: str = ""


def _set(path: str, value) -> Callable[[dict], None]:
    def edit(m: dict) -> None:
        *parents, last = path.split(".")
        target = m
        for key in parents:
            target = target[key]
        target[last] = value

    return edit


def _chain(*edits: Callable[[dict], None]) -> Callable[[dict], None]:
    def edit(m: dict) -> None:
        for e in edits:
            e(m)

    return edit


def _drop(key: str) -> Callable[[dict], None]:
    return lambda m: m.pop(key)


MORGAN, NGRAM = "morgan-fingerprint-reference", "char-ngram-baseline"

CASES: dict[str, Case] = {
    "unknown_key": Case(MORGAN, _set("modle", "typo"), field="'modle'", hint="fix its spelling"),
    "unknown_nested_key": Case(
        MORGAN, _set("model.revison", SHA), field="'model.revison'", hint="fix its spelling"
    ),
    "huggingface_missing_revision": Case(
        MORGAN,
        _chain(_huggingface, lambda m: m["model"].pop("revision")),
        field="'model.revision'",
        hint='Copy the full 40-character commit SHA from the model\'s "Files and versions" page',
    ),
    "huggingface_branch_revision": Case(
        MORGAN,
        _chain(_huggingface, _set("model.revision", "main")),
        field="'model.revision'",
        hint="40-character commit SHA",
    ),
    "huggingface_short_revision": Case(
        MORGAN,
        _chain(_huggingface, _set("model.revision", SHA[:7])),
        field="'model.revision'",
        hint="40-character commit SHA",
    ),
    "id_uppercase": Case(MORGAN, _set("id", "Bad-ID"), folder="Bad-ID", field="'id'", hint="lowercase"),
    "id_path_traversal": Case(MORGAN, _set("id", "../x"), folder="x", field="'id'", hint="lowercase"),
    "id_not_folder_name": Case(
        MORGAN, _set("id", "someone-else"), folder=MORGAN, field="'id'", hint="Make them equal"
    ),
    "unsupported_architecture": Case(
        MORGAN, _set("model.architecture", "transformer"), field="'model.architecture'", hint="Use one of"
    ),
    "unsupported_capability": Case(
        MORGAN,
        _set("model.capabilities", ["embed", "classify"]),
        field="'model.capabilities",
        hint="'embed' (embedding tracks) and/or 'generate'",
    ),
    "capability_not_offered_by_adapter": Case(
        MORGAN,
        _set("model.capabilities", ["generate"]),
        field="'model.capabilities'",
        hint="Declare only those, or choose another 'adapter'",
    ),
    "unknown_adapter": Case(
        MORGAN, _set("adapter", "onnx"), field="'adapter'", hint="'custom' with a 'code'"
    ),
    "unknown_track": Case(MORGAN, _set("tracks", ["amore", "mystery"]), field="'tracks", hint="choose from"),
    "custom_adapter_without_code": Case(NGRAM, _drop("code"), field="'code'", hint="Add 'code:"),
    "code_outside_folder": Case(
        NGRAM, _set("code.file", "../evil.py"), field="'code.file'", hint="inside submissions/<id>/"
    ),
    "code_file_missing": Case(
        NGRAM, _set("code.file", "missing.py"), field="'code.file'", hint="Add the file or fix the path"
    ),
    "local_weights_outside_folder": Case(
        MORGAN,
        _set(
            "model",
            {"source": "local", "path": "../weights", "architecture": "encoder", "capabilities": ["embed"]},
        ),
        field="'model.path'",
        hint="inside submissions/<id>/",
    ),
    "trust_remote_code_not_allowed": Case(
        MORGAN,
        _set("trust_remote_code", True),
        field="'trust_remote_code'",
        hint="A maintainer must allow it explicitly",
    ),
    "unpinned_requirement": Case(
        MORGAN,
        _set("requirements", ["rdkit==2024.3.5", "numpy>=1"]),
        field="'requirements.1'",
        hint="as 'package==1.2.3'",
    ),
    "non_mapping_yaml": Case(
        MORGAN, text="- id\n- name\n", field="top level", hint="must be a mapping of keys (id, name, model"
    ),
    "invalid_yaml": Case(
        MORGAN,
        text="id: morgan-fingerprint-reference\nname: [unclosed\nlicense: MIT\n",
        field="line 2",
        hint="not valid YAML",
    ),
    "oversized_file": Case(
        MORGAN,
        text="id: morgan-fingerprint-reference\n" + "# padding\n" * (MAX_MANIFEST_BYTES // 10 + 1),
        field=f"at most {MAX_MANIFEST_BYTES} bytes",
        hint="Keep long texts in a README",
    ),
}


def _write_case(root: Path, name: str, case: Case) -> Path:
    base = SUBMISSIONS / case.base
    if case.text is not None:
        data, text = None, case.text
    else:
        data = copy.deepcopy(_reference(case.base))
        case.edit(data)
        text = yaml.safe_dump(data, sort_keys=False)
    folder = root / name / (case.folder or (data or {}).get("id", case.base))
    shutil.copytree(base, folder)  # keeps the reference's own files (e.g. ngram.py)
    path = folder / "submission.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("broken")
    return {name: _write_case(root, name, case) for name, case in CASES.items()}


def test_reference_submissions_are_present():
    found = {p.parent.name for p in discover(SUBMISSIONS)}
    assert REFERENCE_IDS <= found


@pytest.mark.parametrize("path", discover(SUBMISSIONS), ids=lambda p: p.parent.name)
def test_every_manifest_in_submissions_validates(path):
    submission = load_submission(path)
    assert isinstance(submission, Submission)
    assert submission.id == path.parent.name
    assert submission.selected_tracks()  # every submission has something to run
    if submission.model.source == "huggingface":
        assert len(submission.model.revision) == 40


def test_loading_a_folder_reads_its_manifest():
    assert load_submission(SUBMISSIONS / MORGAN).id == MORGAN


def test_unmodified_copy_validates(tmp_path):
    # The broken cases below start from these copies: a copy must be valid for the cases to mean anything.
    for submission_id in (MORGAN, NGRAM):
        folder = tmp_path / submission_id
        shutil.copytree(SUBMISSIONS / submission_id, folder)
        (folder / "submission.yaml").write_text(yaml.safe_dump(_reference(submission_id)), encoding="utf-8")
        assert load_submission(folder / "submission.yaml").id == submission_id
    hf = copy.deepcopy(_reference(MORGAN))
    _huggingface(hf)
    (tmp_path / MORGAN / "submission.yaml").write_text(yaml.safe_dump(hf), encoding="utf-8")
    assert load_submission(tmp_path / MORGAN).model.revision == SHA


@pytest.mark.parametrize("name", CASES)
def test_broken_manifest_names_file_field_and_fix(broken, name):
    path, case = broken[name], CASES[name]
    with pytest.raises(ManifestError) as info:
        load_submission(path)
    problems = info.value.problems
    assert problems and info.value.path == path
    message = "\n".join(problems)
    assert all(line.startswith(f"{path}: ") for line in problems), message
    assert case.field in message, message
    assert case.hint in message, message
    assert validate_paths([path])[path] == problems


def test_revision_message_shows_the_bad_value(broken):
    with pytest.raises(ManifestError, match=r"got 'main'"):
        load_submission(broken["huggingface_branch_revision"])


def test_trust_remote_code_allowed_by_a_maintainer(broken):
    path = broken["trust_remote_code_not_allowed"]
    assert load_submission(path, allow_remote_code=[MORGAN]).trust_remote_code is True
    with pytest.raises(ManifestError):
        load_submission(path, allow_remote_code=["another-submission"])


def test_missing_manifest_is_reported(tmp_path):
    with pytest.raises(ManifestError, match="file not found"):
        load_submission(tmp_path / "nothing-here")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", "validate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_rejects_every_broken_manifest(broken):
    result = _cli(*(str(p) for p in broken.values()))
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    for name, path in broken.items():
        assert f"FAIL {path}" in out, name
        lines = [line for line in out.splitlines() if line.strip().startswith(f"- {path}:")]
        assert any(CASES[name].field in line for line in lines), (name, lines)
    assert f"0 valid, {len(broken)} invalid" in out


def test_cli_single_broken_manifest_exits_nonzero(broken):
    path = broken["huggingface_branch_revision"]
    result = _cli(str(path))
    assert result.returncode != 0
    assert str(path) in result.stdout and "'model.revision'" in result.stdout


def test_cli_valid_manifests_exit_zero(broken):
    references = [str(SUBMISSIONS / i / "submission.yaml") for i in sorted(REFERENCE_IDS)]
    result = _cli(*references)
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(f"ok   {p}" in result.stdout for p in references)
    # The default (no paths) checks every submission in the repository.
    assert _cli().returncode == 0
    allowed = _cli(str(broken["trust_remote_code_not_allowed"]), "--allow-remote-code", f"x,{MORGAN}")
    assert allowed.returncode == 0, allowed.stdout
