"""Tests for ``leaderboard.intake.manifest`` and ``python -m leaderboard validate`` (SPEC section 3).

Every reference manifest in ``submissions/`` validates; each broken manifest (derived from a valid one)
is rejected with a :class:`~leaderboard.intake.manifest.Problem` that names the file, the field, the value
and a fix — in-process and on the command line. Capabilities come from the evaluators' registries.
"""

from __future__ import annotations

import copy
import re
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
    STAGES,
    ManifestError,
    Problem,
    Submission,
    adapter_capabilities,
    discover,
    load_submission,
    track_capabilities,
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
    # Each case is its own repository root (they share an id): <root>/<name>/submissions/<id>/.
    folder = root / name / "submissions" / (case.folder or (data or {}).get("id", case.base))
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
    message = "\n".join(str(p) for p in problems)
    assert str(info.value) == message
    assert all(isinstance(p, Problem) and p.file == str(path) for p in problems), problems
    # A problem the YAML parser located reads 'file:line:col: ...'; every other one 'file: ...'.
    assert all(re.match(re.escape(str(path)) + r"(:\d+:\d+)?: ", str(p)) for p in problems), message
    assert case.field in message, message
    assert case.hint in message, message
    if case.field.startswith("'"):  # a named field: some problem carries it (or an element of it)
        assert any(p.field.startswith(case.field.strip("'")) for p in problems), problems
    else:  # a problem of the whole document
        assert [(p.field, p.value) for p in problems] == [("", "")], problems
    assert validate_paths([path])[path] == problems


def test_revision_message_shows_the_bad_value(broken):
    with pytest.raises(ManifestError, match=r"got 'main'"):
        load_submission(broken["huggingface_branch_revision"])


def test_trust_remote_code_allowed_by_a_maintainer(broken):
    path = broken["trust_remote_code_not_allowed"]
    assert load_submission(path, allow_remote_code=[MORGAN]).trust_remote_code is True
    with pytest.raises(ManifestError, match="trust_remote_code"):
        load_submission(path, allow_remote_code=["another-submission"])


def test_missing_manifest_is_reported(tmp_path):
    with pytest.raises(ManifestError, match="file not found"):
        load_submission(tmp_path / "nothing-here")


def _root_of(manifest: Path) -> Path:
    """The repository root of a broken case (``validate`` reads only inside its ``submissions/``)."""
    return manifest.parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", "validate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_rejects_every_broken_manifest(broken, capsys):
    from leaderboard.__main__ import main

    for name, path in broken.items():
        assert main(["validate", "--root", str(_root_of(path)), str(path)]) == 1, name
        out = capsys.readouterr().out
        assert f"FAIL {path}" in out, name
        lines = [line for line in out.splitlines() if line.strip().startswith(f"- {path}:")]
        assert any(CASES[name].field in line for line in lines), (name, lines)
        assert "0 valid, 1 invalid" in out


def test_cli_single_broken_manifest_exits_nonzero(broken):
    path = broken["huggingface_branch_revision"]
    result = _cli("--root", str(_root_of(path)), str(path))
    assert result.returncode != 0
    assert str(path) in result.stdout and "'model.revision'" in result.stdout


def test_cli_valid_manifests_exit_zero(broken):
    references = [str(SUBMISSIONS / i / "submission.yaml") for i in sorted(REFERENCE_IDS)]
    result = _cli(*references)
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(f"ok   {p}" in result.stdout for p in references)
    # The default (no paths) checks every submission in the repository.
    assert _cli().returncode == 0
    path = broken["trust_remote_code_not_allowed"]
    allowed = _cli("--root", str(_root_of(path)), str(path), "--allow-remote-code", f"x,{MORGAN}")
    assert allowed.returncode == 0, allowed.stdout


# --------------------------------------------------------------------------------------------
# Problems are structured where they are found
# --------------------------------------------------------------------------------------------


def _write(folder: Path, data: dict | str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    return folder / "submission.yaml"


def _problems(path: Path) -> list[Problem]:
    with pytest.raises(ManifestError) as info:
        load_submission(path)
    return info.value.problems


def test_a_pydantic_type_error_carries_file_field_value_and_fix(tmp_path):
    data = copy.deepcopy(_reference(MORGAN))
    _huggingface(data)
    data["model"]["revision"] = 1234567  # an integer where the commit SHA string belongs
    path = _write(tmp_path / MORGAN, data)
    (problem,) = _problems(path)
    assert (problem.file, problem.field, problem.value, problem.check) == (
        str(path),
        "model.revision",
        "'1234567'",  # as written: YAML resolved it to a number (issue 35, part 6)
        "schema",
    )
    assert problem.message == (
        "'model.revision' must be text, but YAML reads the unquoted 1234567 as the number 1234567."
    )
    assert problem.fix.startswith("Put the value in quotes ('1234567') so YAML keeps it as written. Copy the")
    # The line and column of the offending value (issue 19, part 4), as YAML syntax errors have them.
    assert problem.at is not None and problem.at.source.strip().startswith("revision:")
    assert str(problem) == f"{path}:{problem.at.line}:{problem.at.column}: {problem.message} {problem.fix}"


def test_every_error_of_a_manifest_is_its_own_problem(tmp_path):
    data = copy.deepcopy(_reference(MORGAN))
    data.update(pooling="max", requirements=["numpy>=1", "rdkit==2024.3.5", "torch"], modle="typo")
    path = _write(tmp_path / MORGAN, data)
    problems = _problems(path)
    assert [(p.field, p.value, p.check) for p in problems] == [
        ("pooling", "'max'", "schema"),
        ("requirements.0", "'numpy>=1'", "schema"),
        ("requirements.2", "'torch'", "schema"),
        ("modle", "'typo'", "schema"),
    ]
    assert all(p.fix for p in problems)
    assert str(ManifestError(path, problems)).splitlines() == [str(p) for p in problems]
    # The folder and policy checks report together, each problem on its own.
    data = copy.deepcopy(_reference(MORGAN))
    data.update(trust_remote_code=True)
    path = _write(tmp_path / "another-folder", data)
    assert [(p.field, p.value, p.check) for p in _problems(path)] == [
        ("id", repr(MORGAN), "folder"),
        ("trust_remote_code", "True", "policy"),
    ]


def test_a_consistency_problem_names_its_field_value_and_fix(tmp_path):
    data = copy.deepcopy(_reference(MORGAN))
    data["model"]["capabilities"] = ["embed", "generate"]
    (problem,) = _problems(_write(tmp_path / MORGAN, data))
    assert (problem.field, problem.value, problem.check) == (
        "model.capabilities",
        "['embed', 'generate']",
        "consistency",
    )
    assert problem.message == (
        "'model.capabilities' ['embed', 'generate'] are not all offered by adapter 'morgan_fingerprint' "
        "(it offers ['embed'])."
    )
    assert problem.fix == "Declare only those, or choose another 'adapter'."


def _one_printable_line(text: str, limit: int) -> None:
    assert text.isprintable() and "\x1b" not in text and "\n" not in text, repr(text)
    assert len(text) <= limit, len(text)


def test_hostile_values_keys_and_folder_names_are_clipped_and_printable(tmp_path):
    hostile = "\x1b[31m\x1b]0;pwned\x07\n\r\u202e" + "A" * 10_000
    data = copy.deepcopy(_reference(MORGAN))
    data["name"] = hostile
    data["pooling"] = hostile
    data[hostile] = 1  # an unknown key
    folder = tmp_path / ("evil\x1b[2J\u202e" + "x" * 100)
    data["id"] = folder.name
    problems = _problems(_write(folder, data))
    assert {p.field.split("\\x1b")[0] for p in problems} >= {"id", "name", "pooling", ""}
    for problem in problems:
        _one_printable_line(problem.file, 500)
        _one_printable_line(problem.field, 200)
        _one_printable_line(problem.value, 80)
        _one_printable_line(problem.message, 1000)
        _one_printable_line(str(problem), 2500)
    name = next(p for p in problems if p.field == "name")
    assert name.value.startswith("'\\x1b[31m") and name.value.endswith("...")
    key = next(p for p in problems if p.message.startswith("unknown key"))
    assert key.field.startswith("\\x1b[31m\\x1b]0;pwned\\x07\\x0a\\x0d\\u202eAAA")
    assert key.field.endswith("...")
    assert len(key.field) == 60


def test_a_problem_is_always_one_bounded_printable_line():
    problem = Problem("f\x1b.yaml", "k\ney", "v" * 500, "m\r" * 2000, "fix\x07", "schema")
    assert (problem.file, problem.field, problem.fix) == ("f\\x1b.yaml", "k\\x0aey", "fix\\x07")
    assert len(problem.value) == 80 and len(problem.message) == 1000
    assert str(problem).isprintable()
    with pytest.raises(ValueError, match="check must be one of"):
        Problem("f", "", "", "m", "", "parsing")
    assert STAGES == ("file", "yaml", "schema", "consistency", "folder", "policy")


# --------------------------------------------------------------------------------------------
# Capabilities come from the registries
# --------------------------------------------------------------------------------------------


def test_capabilities_are_read_from_the_track_and_adapter_registries():
    from evaluators.adapters import ADAPTERS
    from evaluators.tracks import TRACKS

    assert track_capabilities() == {name: TRACKS.get(name).capability for name in TRACKS.names()}
    assert track_capabilities()["amore"] == "embed"
    assert set(adapter_capabilities()) == set(ADAPTERS.names())
    assert adapter_capabilities()["transformers"] == {"embed", "generate"}  # decoders generate
    assert adapter_capabilities()["morgan_fingerprint"] == {"embed"}
    assert adapter_capabilities()["custom"] == {"embed", "generate"}  # whatever the submission's class offers


def test_validation_imports_no_heavy_library():
    # The manifest check runs on the maintainers' host and in CI: it must not pull torch or transformers
    # (the adapters import them only when a model is loaded), and importing the module pulls no evaluator.
    code = (
        "import sys\n"
        "from leaderboard.intake.manifest import load_submission\n"
        "assert not any(m.split('.')[0] in {'evaluators', 'numpy'} for m in sys.modules), 'eager import'\n"
        f"load_submission({str(SUBMISSIONS / 'minilm-l6-text')!r})\n"
        "heavy = {'torch', 'transformers', 'pandas', 'mlflow', 'docker', 'scipy', 'sklearn', 'faiss'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout
