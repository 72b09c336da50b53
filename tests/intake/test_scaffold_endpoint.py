"""Issue 35, part 6: ``new-submission ID --kind endpoint`` writes an endpoint manifest valid but for its
placeholders, one clear error each.

Before: the scaffold had one kind; switching its ``model.source`` to ``endpoint`` gave five errors on values
it wrote itself (adapter, requirements, options, pooling, batch_size), on top of the missing endpoint fields.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from leaderboard.intake.endpoints import EndpointModel
from leaderboard.intake.report import check_manifest
from leaderboard.intake.scaffold import (
    DEFAULT_KIND,
    ENDPOINT_TEMPLATE,
    KINDS,
    PLACEHOLDERS,
    TEMPLATE,
    ScaffoldError,
    render,
    write_submission,
)

_FILLED = {
    "name: ~": "name: ACME API",
    "authors: []": "authors: [Ada Lovelace]",
    "contact: ~": "contact: ada@example.org",
    "license: ~": "license: proprietary",
    "  url: ~": "  url: https://api.acme.org/v1",
    "  model: ~": "  model: acme-chem-7b",
}


def _fill(text: str) -> str:
    for placeholder, value in _FILLED.items():
        assert text.count(placeholder + " ") == 1, placeholder  # each placeholder is written once
        text = text.replace(placeholder + " ", value + " ")
    return text


def test_the_endpoint_scaffold_fails_once_per_placeholder_and_nowhere_else(tmp_path: Path) -> None:
    written = write_submission("acme-api", root=tmp_path, kind="endpoint")
    problems = check_manifest(written.path, root=tmp_path).problems
    assert [p.field for p in problems] == list(PLACEHOLDERS["endpoint"])  # one each, in file order
    assert all(p.is_error and p.check == "schema" and p.at is not None and p.fix for p in problems)
    by_field = {p.field: p for p in problems}
    assert str(by_field["model.url"]).startswith(
        "submissions/acme-api/submission.yaml:26:8: 'model.url' has no value (~, or nothing after the key). "
        "Give the API's base address with its version path, e.g. 'https://api.example.org/v1'"
    )
    assert by_field["name"].message == "'name' has no value (~, or nothing after the key)."
    assert by_field["name"].fix == "Give the name the leaderboard shows, e.g. 'ACME Chem 7B'."
    assert by_field["authors"].message == "'authors' is empty; it needs at least 1 entry."
    assert not any("does not apply to an endpoint" in p.message for p in problems)


def test_the_filled_endpoint_scaffold_is_valid_with_its_options_uncommented(tmp_path: Path) -> None:
    written = write_submission("acme-api", root=tmp_path, kind="endpoint")
    text = _fill(written.path.read_text())
    written.path.write_text(text)
    checked = check_manifest(written.path, root=tmp_path)
    assert checked.ok and not checked.problems, checked.problems
    model = checked.submission_model.model
    assert (model.source, model.api_key_env, model.capabilities) == (
        "endpoint",
        "CHEMROBUST_KEY_ACME_API",
        ["generate"],
    )
    uncommented = re.sub(r"^(\s*)# (max_tokens_total|tracks): ", r"\1\2: ", text, flags=re.MULTILINE)
    assert uncommented.count("max_tokens_total: ") == 1 and uncommented.count("\ntracks: ") == 1
    written.path.write_text(uncommented)
    checked = check_manifest(written.path, root=tmp_path)
    assert checked.ok, checked.problems
    assert checked.submission_model.tracks == ["consistency"]  # a generative track: an endpoint may run it


def test_the_endpoint_template_mentions_every_endpoint_field() -> None:
    for name in EndpointModel.model_fields:
        assert re.search(rf"^\s+#? ?{name}:", ENDPOINT_TEMPLATE, re.MULTILINE), name
    for refused in ("adapter", "code", "requirements", "options", "pooling", "batch_size"):
        assert not re.search(rf"^#? ?{refused}:", ENDPOINT_TEMPLATE, re.MULTILINE), refused


def test_the_default_kind_is_unchanged(tmp_path: Path) -> None:
    assert DEFAULT_KIND == "huggingface" and KINDS == ("huggingface", "endpoint")
    written = write_submission("acme-chem", root=tmp_path)
    assert written.path.read_text() == render("acme-chem") == TEMPLATE.format(id="acme-chem")


def test_an_unknown_kind_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match=r"'pip\\x1b' is not a kind of submission; choose one of "):
        write_submission("acme", root=tmp_path, kind="pip\x1b")
    assert not (tmp_path / "submissions").exists()


def test_the_cli_writes_the_endpoint_manifest_and_its_next_steps(tmp_path: Path, capsys) -> None:
    from leaderboard.__main__ import main

    assert main(["new-submission", "acme-api", "--kind", "endpoint", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    path = tmp_path / "submissions/acme-api/submission.yaml"
    assert path.read_text() == render("acme-api", "endpoint")
    assert "every field marked REQUIRED (name, authors, contact, license, model.url, model.model)" in out
    assert "they put it in CHEMROBUST_KEY_ACME_API" in out
    assert (
        "python -m leaderboard.execution.endpoint_runner submissions/acme-api --dataset pubchem-names" in out
    )
    with pytest.raises(SystemExit) as done:
        main(["new-submission", "other", "--kind", "bogus", "--root", str(tmp_path)])
    assert done.value.code == 2


def test_the_cli_offers_the_scaffold_kinds(capsys) -> None:
    from leaderboard.__main__ import main

    with pytest.raises(SystemExit):
        main(["new-submission", "--help"])
    assert "{" + ",".join(KINDS) + "}" in capsys.readouterr().out


def test_the_nox_session_passes_the_kind_through() -> None:
    text = (Path(__file__).resolve().parents[2] / "noxfile.py").read_text()
    session = text.split('@nox.session(name="new-submission"', 1)[1].split("@nox.session", 1)[0]
    assert '"leaderboard", "new-submission", *session.posargs' in session
