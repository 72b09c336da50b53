"""The validator finds everything at once (issue 19, part 4), with the message each case shows.

YAML syntax errors as ``file:line:col`` with the offending line, a caret and our own fix (never PyYAML's
text in the pull-request report's fix column); duplicate keys refused with both lines; warnings (not
failures) for options that need a maintainer; source / architecture / adapter rules read from the adapters'
declarations; ``code.object`` found by parsing ``code.file`` (never importing it); "did you mean" for a
misspelt key at its own nesting level; every independent check in one pass; Hugging Face hub failures as one
line with the fix (exceptions constructed here, shaped as the library raises them; never the network).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import httpx2
import pytest
import yaml
from huggingface_hub import errors as hub

from leaderboard.__main__ import main
from leaderboard.execution.hub_errors import explain_hub_error
from leaderboard.execution.weights import WeightsError, fetch_weights
from leaderboard.intake.consistency import adapter_facts
from leaderboard.intake.folder_checks import defined_names
from leaderboard.intake.manifest import ManifestError, Problem, check_submission, load_submission
from leaderboard.intake.pr_report import validation_markdown
from leaderboard.intake.report import CHECKS, check_manifest

REPO = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
NGRAM = "char-ngram-baseline"


def _base(sub_id: str = "acme") -> dict:
    return {
        "id": sub_id,
        "name": "ACME",
        "authors": ["A. Author"],
        "contact": "a@example.org",
        "license": "MIT",
        "model": {"source": "none", "architecture": "non-neural", "capabilities": ["embed"]},
        "adapter": "custom",
        "code": {"file": "ngram.py", "object": "CharNgramAdapter"},
    }


def _hf(**model: object) -> dict:
    data = _base()
    data["adapter"] = "transformers"
    del data["code"]
    data["model"] = {
        "source": "huggingface", "id": "acme/chem", "revision": SHA, "architecture": "encoder",
        "capabilities": ["embed"], **model,
    }  # fmt: skip
    return data


def _write(root: Path, content: dict | str, sub_id: str = "acme") -> Path:
    """Write ``root/submissions/<sub_id>/submission.yaml`` beside a copy of the n-gram adapter's code."""
    folder = root / "submissions" / sub_id
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "submissions" / NGRAM / "ngram.py", folder / "ngram.py")
    text = content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    return folder / "submission.yaml"


def _only(path: Path, **allow: list[str]) -> Problem:
    (problem,) = check_submission(path, **allow).problems
    return problem


def test_the_base_manifests_are_valid(tmp_path):
    assert load_submission(_write(tmp_path / "a", _base())).code.object == "CharNgramAdapter"
    assert load_submission(_write(tmp_path / "b", _hf())).model.revision == SHA


# --------------------------------------------------------------------------------------------
# YAML: file:line:col, the offending line and a caret, our own fix
# --------------------------------------------------------------------------------------------

SYNTAX = "id: acme\nname: [unclosed\nlicense: MIT\n"


def test_a_yaml_syntax_error_is_file_line_col_with_the_line_a_caret_and_a_fix(tmp_path):
    path = _write(tmp_path, SYNTAX)
    problem = _only(path)
    assert str(problem) == (
        f"{path}:3:8: not valid YAML: expected ',' or ']', but got ':' (while parsing a flow sequence at "
        "line 2). Close the '[' opened at line 2, column 7 with ']', or quote the value if the bracket is "
        "part of it."
    )
    assert (problem.check, problem.field, problem.at.source) == ("yaml", "", "license: MIT")
    assert problem.at.pointer() == ("license: MIT", "       ^")


@pytest.mark.parametrize(
    ("text", "where", "fix"),
    [
        ("id: acme\n\tname: x\n", ":2:1: ", "Indent with spaces"),
        ("id: acme\nname: A: B\n", ":2:8: ", "quote a value that itself contains ': '"),
        ('id: "acme\nname: x\n', ":3:1: ", "Close the quote opened at line 1, column 5."),
        ("id: acme\nname: !!python/object/apply:os.system [ls]\n", ":2:7: ", "Remove the '!!' tag"),
        ("id: acme\nname: x\x1b\n", ":2:8: ", "Remove the control character"),
    ],
)
def test_each_kind_of_syntax_error_gets_a_fix_of_its_own(tmp_path, text, where, fix):
    path = _write(tmp_path, text)
    line = str(_only(path))
    assert line.startswith(f"{path}{where}not valid YAML: "), line
    assert fix in line and "\n" not in line and "<unicode string>" not in line


def test_the_terminal_shows_the_offending_line_and_a_caret(tmp_path, capsys):
    path = _write(tmp_path, SYNTAX)
    assert main(["validate", "--root", str(tmp_path), str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(out) if line.startswith(f"  - {path}:3:8: not valid YAML"))
    assert out[at + 1 : at + 3] == ["         3 | license: MIT", "           |        ^"]


def test_the_pr_report_fix_column_holds_our_fix_never_pyyaml_text(tmp_path):
    path = _write(tmp_path, "id: acme\nname: [unclosed <b>@team</b> |\nlicense: MIT\n")
    md = validation_markdown([check_manifest(path, root=tmp_path)])
    row = next(line for line in md.splitlines() if line.startswith("| <code>submissions/acme/"))
    cells = re.split(r"(?<!\\)\|", row)[1:-1]
    assert len(cells) == 4  # no pipe from the manifest escapes its cell
    assert cells[1].strip() == "(whole file), line 3, column 8"
    assert cells[3].strip().startswith("Close the '\\[' opened at line 2, column 7 with '\\]'")
    assert "unicode string" not in md and "<b>" not in md  # neither PyYAML's text nor the manifest's HTML
    assert "not reached (runs once the file parses)" in md


def test_duplicate_keys_are_refused_with_both_lines_and_the_rest_is_still_checked(tmp_path):
    text = yaml.safe_dump(_hf(), sort_keys=False) + "pooling: max\nname: Second name\n"
    text = text.replace("  revision:", "  id: acme/other\n  revision:", 1)
    path = _write(tmp_path, text)
    problems = check_submission(path).problems
    assert [(p.check, p.field) for p in problems] == [
        ("yaml", "name"), ("yaml", "model.id"), ("schema", "pooling"),
    ]  # fmt: skip
    name, model_id = problems[0], problems[1]
    lines = text.splitlines()
    second = lines.index("name: Second name") + 1
    assert str(name) == (
        f"{path}:{second}:1: 'name' is given twice (lines 2 and {second}); YAML would keep only the last "
        "one, silently. Keep one 'name' at the top level and delete the other."
    )
    first_id, second_id = (i + 1 for i, line in enumerate(lines) if line.startswith("  id: "))
    assert f"(lines {first_id} and {second_id})" in model_id.message and "under 'model'" in model_id.fix
    with pytest.raises(ManifestError):
        load_submission(path)


# --------------------------------------------------------------------------------------------
# Warnings: options that need a maintainer
# --------------------------------------------------------------------------------------------


def test_allow_pickle_is_a_warning_that_does_not_fail_validation(tmp_path, capsys):
    path = _write(tmp_path, _hf(allow_pickle=True))
    warning = _only(path)
    assert (warning.severity, warning.check, warning.field, warning.is_error) == (
        "warning", "policy", "model.allow_pickle", False,
    )  # fmt: skip
    # Located at the field's value, as every problem that names a field is (issue 35, part 6).
    assert warning.at is not None and warning.at.source.strip() == "allow_pickle: true"
    where = f"{path}:{warning.at.line}:{warning.at.column}"
    assert str(warning).startswith(f"{where}: warning: 'model.allow_pickle' is true: pickle weights")
    assert "CHEMROBUST_ALLOW_PICKLE=<id>" in warning.message and "safetensors" in warning.fix
    assert load_submission(path).model.allow_pickle is True
    assert main(["validate", "--root", str(tmp_path), str(path)]) == 0
    out = capsys.readouterr().out
    assert f"ok   {path} (1 warning for the maintainers)" in out and "1 valid, 0 invalid" in out
    report = check_manifest(path, root=tmp_path)
    assert report.ok and report.outcome("policy") == "warn"
    md = validation_markdown([report])
    assert "✅ valid, ⚠️ 1 warning" in md and "⚠️ **warning:** 'model.allow\\_pickle' is true" in md


def test_remote_code_is_an_error_unless_allowed_and_then_a_warning(tmp_path):
    path = _write(tmp_path, {**_hf(), "trust_remote_code": True})
    refused = _only(path)
    assert (refused.severity, refused.check) == ("error", "policy")
    allowed = _only(path, allow_remote_code=["acme"])
    assert (allowed.severity, allowed.field) == ("warning", "trust_remote_code")
    assert "a maintainer allows it for this submission" in allowed.message


# --------------------------------------------------------------------------------------------
# Source / architecture / adapter, from the adapters' declarations
# --------------------------------------------------------------------------------------------


def test_every_adapter_declares_what_the_manifest_rules_read():
    from evaluators.adapters import ARCHITECTURES, WEIGHTS
    from leaderboard.intake.schema import Architecture

    assert set(ARCHITECTURES) == set(Architecture.__args__)
    for name, facts in adapter_facts().items():
        assert facts.architectures and facts.architectures <= set(ARCHITECTURES), name
        assert facts.weights in WEIGHTS, name
    assert adapter_facts()["transformers"].weights == "required"
    assert "non-neural" not in adapter_facts()["transformers"].architectures


def test_a_hugging_face_model_cannot_be_non_neural(tmp_path):
    data = _hf(architecture="non-neural")
    data.update(adapter="custom", code={"file": "ngram.py", "object": "CharNgramAdapter"})
    problem = _only(_write(tmp_path, data))
    assert (problem.check, problem.field) == ("consistency", "model.architecture")
    assert problem.message == (
        "'model.architecture' is 'non-neural', but 'model.source' is 'huggingface': a model on the Hugging "
        "Face hub is a neural network loaded from its weights."
    )


def test_the_transformers_adapter_does_not_run_a_non_neural_model(tmp_path):
    problem = _only(_write(tmp_path, _hf(architecture="non-neural")))  # one problem, not two
    assert problem.message == (
        "'model.architecture' 'non-neural' is not one adapter 'transformers' runs (it runs 'decoder', "
        "'encoder', 'encoder-decoder')."
    )
    assert problem.fix.endswith(
        "choose an adapter that runs 'non-neural' models: 'custom', 'morgan_fingerprint'."
    )


def test_an_adapter_without_weights_refuses_a_hub_model(tmp_path):
    data = _hf()
    data.update(adapter="morgan_fingerprint")
    data["model"]["architecture"] = "non-neural"
    problems = check_submission(_write(tmp_path, data)).problems
    assert [(p.field, p.check) for p in problems] == [
        ("model.source", "consistency"), ("model.architecture", "consistency"),
    ]  # fmt: skip
    assert problems[0].message == (
        "'model.source' is 'huggingface', but adapter 'morgan_fingerprint' reads no weights (they would be "
        "fetched for nothing)."
    )
    assert (
        problems[0].fix
        == "Set 'model.source: none', or choose an adapter that loads weights: 'custom', 'transformers'."
    )


# --------------------------------------------------------------------------------------------
# code.object: parsed, never imported
# --------------------------------------------------------------------------------------------


def test_a_wrong_code_object_is_found_by_parsing_with_a_close_match(tmp_path):
    data = _base()
    data["code"]["object"] = "CharNgramAdaptor"
    problem = _only(_write(tmp_path, data))
    assert (problem.check, problem.field, problem.value) == ("folder", "code.object", "'CharNgramAdaptor'")
    assert problem.message == (
        "'code.object' 'CharNgramAdaptor' is not defined at the top level of 'ngram.py' (it defines the "
        "classes CharNgramAdapter)."
    )
    assert problem.fix.startswith("Did you mean 'CharNgramAdapter'? Give the name of your adapter class")


def test_code_is_never_imported_and_its_own_problems_are_named(tmp_path):
    marker = tmp_path / "imported"
    path = _write(tmp_path, _base())
    code = f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\ndef helper(): ...\nclass Other: ...\n"
    (path.parent / "ngram.py").write_text(code)
    problem = _only(path)
    assert "(it defines the classes Other)" in problem.message and not marker.exists()
    (path.parent / "ngram.py").write_text("class CharNgramAdapter(:\n")
    problem = _only(path)
    assert (problem.field, problem.check) == ("code.file", "folder")
    assert problem.message.startswith("'code.file' 'ngram.py' is not valid Python (line 1: ")
    data = _base()
    data["code"]["object"] = "helper"
    (path.parent / "ngram.py").write_text(code)
    path.write_text(yaml.safe_dump(data))
    assert (
        _only(path).message
        == "'code.object' 'helper' is a function in 'ngram.py'; the adapter must be a class."
    )
    data["code"]["file"] = "missing.py"
    path.write_text(yaml.safe_dump(data))
    missing = _only(path)  # a missing file is its own problem; no second one about the object
    assert (missing.field, missing.message) == (
        "code.file", f"'code.file' 'missing.py' does not exist in {path.parent}.",
    )  # fmt: skip


def test_defined_names_follow_module_level_bindings():
    source = "import a.b as c\nfrom x import Y\ntry:\n    class T: ...\nexcept Exception:\n    T = None\n"
    assert defined_names(source) == {"c": "import", "Y": "import", "T": "assignment"}


# --------------------------------------------------------------------------------------------
# Did you mean
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "field", "fix"),
    [
        (lambda m: m.update(modle=m.pop("model")), "modle", "fix its spelling: did you mean 'model'?"),
        (lambda m: m["model"].update(revison=m["model"].pop("revision")), "model.revison", "'revision'?"),
        (lambda m: m.update(tokenizer={"max_len": 64}), "tokenizer.max_len", "did you mean 'max_length'?"),
        (lambda m: m.update(pooling_mode="cls"), "pooling_mode", "did you mean 'pooling'?"),
        (lambda m: m.update(zzz=1), "zzz", "Remove it or fix its spelling"),
    ],
)
def test_a_misspelt_key_gets_the_closest_name_of_its_own_mapping(tmp_path, edit, field, fix):
    data = _hf()
    edit(data)
    unknown = [
        p for p in check_submission(_write(tmp_path, data)).problems if p.message.startswith("unknown")
    ]
    assert [(p.field, p.message) for p in unknown] == [(field, f"unknown key '{field}'.")]
    assert fix in unknown[0].fix


# --------------------------------------------------------------------------------------------
# One pass
# --------------------------------------------------------------------------------------------


def test_independent_problems_are_all_reported_in_one_run(tmp_path, capsys):
    data = _hf(architecture="non-neural", allow_pickle=True)
    data.update(
        id="someone-else",  # folder
        pooling="max",  # schema
        modle="typo",  # schema, did you mean
        adapter="custom",
        code={"file": "ngram.py", "object": "NgramAdapter"},  # folder: code.object
        tracks=["consistency"],  # consistency: needs 'generate'
    )
    text = yaml.safe_dump(data, sort_keys=False) + "license: Apache-2.0\n"  # yaml: duplicate key
    path = _write(tmp_path, text)
    problems = check_submission(path).problems
    assert [(p.check, p.field, p.severity) for p in problems] == [
        ("yaml", "license", "error"),
        ("schema", "pooling", "error"),
        ("schema", "modle", "error"),
        ("consistency", "model.architecture", "error"),
        ("consistency", "tracks", "error"),
        ("folder", "id", "error"),
        ("folder", "code.object", "error"),
        ("policy", "model.allow_pickle", "warning"),
    ]
    report = check_manifest(path, root=tmp_path)
    assert {key: report.outcome(key) for key, _ in CHECKS} == {
        "file": "pass", "yaml": "fail", "schema": "fail", "consistency": "fail", "folder": "fail",
        "policy": "warn",
    }  # fmt: skip
    md = validation_markdown([report])
    assert "not reached" not in md and "❌ 7 problems, ⚠️ 1 warning" in md
    assert main(["validate", "--root", str(tmp_path), str(path)]) == 1
    assert capsys.readouterr().out.count(f"  - {path}") == 8


# --------------------------------------------------------------------------------------------
# Hugging Face hub errors: one line with the fix
# --------------------------------------------------------------------------------------------

HUB = "https://hub.example.org"


def _response(status: int) -> httpx2.Response:
    return httpx2.Response(status, request=httpx2.Request("GET", f"{HUB}/api/models/acme/chem"))


def _wrapped(cause: BaseException) -> BaseException:
    """What ``snapshot_download`` raises when the hub cannot be reached: a wrapper raised from the cause."""
    try:
        try:
            raise cause
        except BaseException as exc:
            raise hub.LocalEntryNotFoundError("Got: ...\nAn error happened while trying to locate") from exc
    except hub.LocalEntryNotFoundError as wrapper:
        return wrapper


HUB_CASES = {
    "missing repository": (
        hub.RepositoryNotFoundError("404 Client Error.\n\nRepository Not Found", response=_response(404)),
        f"RepositoryNotFoundError: there is no repository acme/chem on {HUB} (or it is private). Check "
        "'model.id'",
    ),
    "gated": (
        hub.GatedRepoError("403 Client Error.\n\nCannot access gated repo", response=_response(403)),
        f"GatedRepoError: acme/chem is gated on {HUB}: only accounts its owners approve may download it. Ask",
    ),
    "unknown commit": (
        hub.RevisionNotFoundError("404 Client Error.\n\nRevision Not Found", response=_response(404)),
        f"RevisionNotFoundError: acme/chem has no commit {SHA}. Copy the full 40-character commit SHA",
    ),
    "unreachable": (
        _wrapped(httpx2.ConnectError("[Errno 111] Connection refused")),
        f"ConnectError: cannot reach {HUB} (ConnectError). Check this machine's network or proxy, or set "
        "HF_ENDPOINT to a mirror",
    ),
    "server error": (
        _wrapped(hub.HfHubHTTPError("503 Server Error\n\nService Unavailable", response=_response(503))),
        f"HfHubHTTPError: {HUB} answered HTTP 503 (a server error). Run again later",
    ),
    "forbidden": (
        hub.HfHubHTTPError("401 Client Error", response=_response(401)),
        f"HfHubHTTPError: {HUB} refused access to acme/chem (HTTP 401): it is private or gated.",
    ),
    "rate limit": (
        hub.HfHubHTTPError("429 Client Error", response=_response(429)),
        f"HfHubHTTPError: {HUB} is rate-limiting this machine (HTTP 429). Wait a few minutes",
    ),
}


@pytest.mark.parametrize("case", HUB_CASES)
def test_a_hub_error_is_one_line_with_the_fix(case):
    exc, expected = HUB_CASES[case]
    line = explain_hub_error(exc, repo="acme/chem", revision=SHA, endpoint=HUB)
    assert line.startswith(f"cannot fetch acme/chem@{SHA}: {expected}"), line
    assert "\n" not in line and line.isprintable() and "Client Error" not in line


def test_fetch_weights_raises_the_translated_line(tmp_path, monkeypatch):
    import huggingface_hub

    def refuse(**_: object) -> str:
        raise hub.RepositoryNotFoundError(
            "404 Client Error.\n\nRepository Not Found", response=_response(404)
        )

    monkeypatch.setattr(huggingface_hub, "snapshot_download", refuse)
    path = _write(tmp_path, _hf())
    with pytest.raises(WeightsError) as caught:
        fetch_weights(load_submission(path), path.parent, tmp_path / "state", hf_endpoint=HUB)
    assert str(caught.value) == (
        f"cannot fetch acme/chem@{SHA}: RepositoryNotFoundError: there is no repository acme/chem on "
        f"{HUB} (or it is private). Check 'model.id' ('org/name', as in the model's URL); a private "
        "repository must be made public."
    )
