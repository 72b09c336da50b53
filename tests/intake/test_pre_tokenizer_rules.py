"""Issue 32: ``tokenizer.pre_tokenizer`` is checked before anything runs, and maintainer grants are data.

A SMILES pre-tokenizer splits SMILES into atom tokens for the ``transformers`` adapter's embedding path;
the validator names the field and the fix when it is unknown, given to another adapter, or asked to
tokenize a generative track's English prompts. The committed ``leaderboard/allowances.toml`` is read and
validated like a manifest: a malformed file is an error that names it, never a silent grant.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.intake.manifest import Problem, check_submission
from leaderboard.settings import ALLOWANCES, Settings, allowances

ROOT = Path(__file__).resolve().parents[2]

MANIFEST = """\
id: acme
name: ACME
authors: [A. Author]
contact: a@example.org
license: MIT
model:
  source: huggingface
  id: acme/chem
  revision: 0123456789abcdef0123456789abcdef01234567
  architecture: {architecture}
  capabilities: {capabilities}
adapter: {adapter}
{code}tokenizer:
  max_length: 512
  pre_tokenizer: {pre_tokenizer}
"""


def _errors(root: Path, **fields: str) -> list[Problem]:
    values = {"architecture": "encoder", "capabilities": "[embed]", "adapter": "transformers", "code": "",
              "pre_tokenizer": "smiles-regex", **fields}  # fmt: skip
    folder = root / "acme"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.yaml").write_text(MANIFEST.format(**values), encoding="utf-8")
    (folder / "embed.py").write_text("class Embed:\n    pass\n", encoding="utf-8")
    return [p for p in check_submission(folder).problems if p.severity == "error"]


@pytest.mark.parametrize("name", ["smiles-regex", "rxnmapper-regex"])
def test_a_known_pre_tokenizer_on_an_embedding_model_is_valid(tmp_path, name) -> None:
    assert _errors(tmp_path, pre_tokenizer=name) == []


def test_an_unknown_pre_tokenizer_names_the_field_and_the_choices(tmp_path) -> None:
    (problem,) = _errors(tmp_path, pre_tokenizer="selfies-regex")
    assert problem.field == "tokenizer.pre_tokenizer" and problem.check == "schema"
    assert "smiles-regex" in str(problem) and "rxnmapper-regex" in str(problem)


def test_a_pre_tokenizer_cannot_tokenize_prompts(tmp_path) -> None:
    (problem,) = _errors(tmp_path, architecture="encoder-decoder", capabilities="[embed, generate]")
    assert problem.field == "tokenizer.pre_tokenizer"
    assert "generative track" in problem.message and "capabilities: [embed]" in problem.fix


def test_a_pre_tokenizer_belongs_to_the_transformers_adapter(tmp_path) -> None:
    (problem,) = _errors(tmp_path, adapter="custom", code="code: {file: embed.py, object: Embed}\n")
    assert problem.field == "tokenizer.pre_tokenizer"
    assert "'custom'" in problem.message and "adapter: transformers" in problem.fix


# --------------------------------------------------------------------------------------------------------


def _grants(root: Path, text: str) -> Path:
    path = root / ALLOWANCES
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return root


def test_the_committed_grants_are_the_published_pickle_models() -> None:
    granted = allowances(ROOT)
    assert set(granted["pickle"]) == {"rxnfp-bert-pretrained", "rxnfp-bert-ft", "rxnmapper-albert"}
    assert granted["remote_code"] == {}
    for sub_id in granted["pickle"]:  # a grant names a real submission that asks for it
        assert "allow_pickle: true" in (ROOT / "submissions" / sub_id / "submission.yaml").read_text()


def test_settings_add_the_file_grants_to_the_environment(tmp_path) -> None:
    root = _grants(tmp_path, '[pickle]\nfrom-file = "reviewed: weights are a BERT state dict"\n')
    settings = Settings.from_environment(repo_root=root, state_dir=tmp_path / "state",
                                         environ={"CHEMROBUST_ALLOW_PICKLE": "from-env"})  # fmt: skip
    assert settings.allow_pickle == {"from-file", "from-env"}
    assert settings.allow_remote_code == frozenset()
    bare = Settings.from_environment(repo_root=tmp_path / "elsewhere", state_dir=tmp_path, environ={})
    assert bare.allow_pickle == frozenset()  # no file: nothing granted


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[pickle\n", "not valid TOML"),
        ('[everything]\nacme = "yes"\n', "unknown table"),
        ('[pickle]\nacme = ""\n', "bad: ['acme']"),
        ("[pickle]\nacme = true\n", "bad: ['acme']"),
    ],
)
def test_a_malformed_grants_file_is_an_error_naming_it(tmp_path, text, says) -> None:
    root = _grants(tmp_path, text)
    with pytest.raises(ValueError) as caught:
        allowances(root)
    assert str(root / ALLOWANCES) in str(caught.value) and says in str(caught.value)
