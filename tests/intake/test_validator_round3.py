"""Issue 19, part 4 leftovers: schema errors at ``file:line:col``, every endpoint rule in one pass.

A pydantic error names the YAML path of its field; the validator now also names where that field is in the
manifest's text (the value of a wrong value, the key of an unknown key, the mapping that lacks a missing
field), as YAML syntax errors already did. An endpoint manifest that breaks several independent rules gets
one problem per rule, not only the first.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from leaderboard.intake.manifest import Problem, check_submission

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
  architecture: encoder
  capabilities: [embed]
adapter: transformers
batch_size: {batch_size}
tokenizer:
  max_length: {max_length}
"""


def _check(root: Path, text: str, sub_id: str = "acme") -> list[Problem]:
    folder = root / sub_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    return list(check_submission(folder).problems)


def test_the_base_manifest_is_valid(tmp_path):
    assert _check(tmp_path, MANIFEST.format(batch_size=64, max_length=512)) == []


def test_a_wrong_typed_field_reports_its_line_and_column(tmp_path):
    (problem,) = _check(tmp_path, MANIFEST.format(batch_size="lots", max_length=512))
    assert (problem.field, problem.check) == ("batch_size", "schema")
    assert problem.at is not None
    assert (problem.at.line, problem.at.column) == (13, 13)  # the value, after 'batch_size: '
    assert problem.at.pointer() == ("batch_size: lots", " " * 12 + "^")
    assert str(problem).startswith(f"{tmp_path / 'acme' / 'submission.yaml'}:13:13: 'batch_size' ")


def test_a_nested_wrong_value_points_at_the_value_inside_its_mapping(tmp_path):
    (problem,) = _check(tmp_path, MANIFEST.format(batch_size=64, max_length="[1, 2]"))
    assert problem.field == "tokenizer.max_length"
    assert problem.at is not None and (problem.at.line, problem.at.column) == (15, 15)


def test_a_model_field_is_found_through_the_source_union(tmp_path):
    # pydantic's location holds the union tag ('model', 'huggingface', 'revision'): not a node of the file.
    text = MANIFEST.format(batch_size=64, max_length=512).replace("revision: 0123", "revision: x0123")
    (problem,) = _check(tmp_path, text)
    assert problem.field == "model.revision"
    assert problem.at is not None and (problem.at.line, problem.at.column) == (9, 13)


def test_an_unknown_key_points_at_the_key_and_a_missing_one_at_its_mapping(tmp_path):
    text = MANIFEST.format(batch_size=64, max_length=512)
    text = text.replace("  revision: 0123456789abcdef0123456789abcdef01234567\n", "  revison: abc\n")
    by_field = {p.field: p for p in _check(tmp_path, text)}
    unknown, missing = by_field["model.revison"], by_field["model.revision"]
    assert unknown.at is not None and (unknown.at.line, unknown.at.column) == (9, 3)
    assert missing.at is not None and (missing.at.line, missing.at.column) == (6, 1)  # the 'model:' key


def test_a_missing_top_level_field_has_no_position(tmp_path):
    text = MANIFEST.format(batch_size=64, max_length=512).replace("license: MIT\n", "")
    (problem,) = _check(tmp_path, text)
    assert (problem.field, problem.at) == ("license", None)


def test_a_hostile_key_is_located_and_still_printable(tmp_path):
    text = MANIFEST.format(batch_size=64, max_length=512) + "'bad\\u001b[2Jkey': 1\n"
    (problem,) = _check(tmp_path, text)
    assert problem.at is not None and problem.at.line == 16
    assert "\x1b" not in str(problem) and "\x1b" not in problem.at.source


def _endpoint(**top: object) -> str:
    data = {
        "id": "acme-api", "name": "ACME API", "authors": ["Ada"], "contact": "ada@example.org",
        "license": "mit",
        "model": {"source": "endpoint", "url": "https://api.example.org/v1", "model": "acme-chem-7b",
                  "architecture": "decoder", "capabilities": ["generate"], "max_requests": 20000},
        **top,
    }  # fmt: skip
    return yaml.safe_dump(data, sort_keys=False)


def test_an_endpoint_manifest_is_valid_as_given(tmp_path):
    assert _check(tmp_path, _endpoint(), "acme-api") == []


def test_an_endpoint_manifest_reports_every_broken_rule_in_one_pass(tmp_path):
    text = _endpoint(pooling="cls", batch_size=8, trust_remote_code=True, tracks=["amore", "consistency"])
    text = text.replace("architecture: decoder", "architecture: encoder")
    text = text.replace("url: https://api.example.org/v1", "url: http://api.example.org/v1")
    text = text.replace("max_requests: 20000", "max_requests: 20000\n  api_key_env: OTHER_SECRET")
    problems = [p for p in _check(tmp_path, text, "acme-api") if p.check == "consistency"]
    assert [p.field for p in problems] == [
        "model.architecture",  # an encoder does not generate
        "pooling",  # each field that does not apply, one problem each
        "batch_size",
        "trust_remote_code",
        "tracks",  # amore needs 'embed'
        "model.api_key_env",  # not the variable tied to the id
        "model.url",  # a key over plain http
    ]
    assert "'amore'" in problems[4].message


def test_two_broken_endpoint_rules_are_both_reported(tmp_path):
    text = _endpoint(adapter="transformers").replace("architecture: decoder", "architecture: encoder")
    problems = _check(tmp_path, text, "acme-api")
    assert [(p.field, p.check) for p in problems] == [
        ("model.architecture", "consistency"),
        ("adapter", "consistency"),
    ]


def test_endpoint_rules_still_run_beside_a_schema_error_elsewhere(tmp_path):
    # 'tracks' fails the schema; the rules that do not read it are still checked.
    text = _endpoint(pooling="mean", tracks=["no such track"]).replace("decoder", "encoder")
    fields = [(p.field, p.check) for p in _check(tmp_path, text, "acme-api")]
    assert ("model.architecture", "consistency") in fields and ("pooling", "consistency") in fields
    assert any(f.startswith("tracks") and c == "schema" for f, c in fields)


def test_a_broken_rule_points_at_the_value_it_names(tmp_path):
    text = _endpoint(tracks=["amore"]).replace("architecture: decoder", "architecture: encoder")
    problems = {p.field: p for p in _check(tmp_path, text, "acme-api") if p.check == "consistency"}
    assert set(problems) == {"tracks", "model.architecture"}
    arch, tracks = problems["model.architecture"].at, problems["tracks"].at
    assert arch is not None and arch.source.strip() == "architecture: encoder"
    assert arch.source[arch.column - 1 :].startswith("encoder")
    assert tracks is not None and tracks.source.strip() == "- amore"  # the block list under 'tracks:'
    file = tmp_path / "acme-api" / "submission.yaml"
    assert str(problems["model.architecture"]).startswith(f"{file}:{arch.line}:{arch.column}: ")
