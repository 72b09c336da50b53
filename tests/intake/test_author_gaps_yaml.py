"""Issue 35, part 6: a tab and a dedented line, reported where the author made them, in words they read.

Before: a tab showed as ``\\x09`` (earlier ``?``) under PyYAML's "found character '\\t' that cannot start
any token", with "Indent with spaces" even for a tab inside a value; a key moved left out of its mapping
was reported at the next line ("mapping values are not allowed here" at ``  architecture:``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from leaderboard.intake.manifest import Problem, check_submission
from leaderboard.intake.problems import Location, excerpt

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
tokenizer:
  max_length: 512
"""
#: Anything that could act on a terminal: C0 (tab included), DEL, C1, bidirectional controls.
_RAW = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _only(root: Path, text: str) -> Problem:
    folder = root / "acme"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "submission.yaml").write_text(text, encoding="utf-8")
    (problem,) = check_submission(folder).problems
    assert (problem.check, problem.severity) == ("yaml", "error")
    assert not _RAW.search(str(problem)) and problem.at is not None and not _RAW.search(problem.at.source)
    assert str(problem).startswith(f"{folder / 'submission.yaml'}:{problem.at.line}:{problem.at.column}: ")
    return problem


# --- tabs ------------------------------------------------------------------------------------------------


def test_a_tab_indent_is_shown_as_backslash_t_and_named_with_its_field_and_the_fix(tmp_path):
    problem = _only(tmp_path, MANIFEST.replace("  id: acme/chem", "\tid: acme/chem"))
    assert (problem.field, problem.at.line, problem.at.column) == ("model.id", 8, 1)
    assert problem.message == (
        "not valid YAML: line 8 ('model.id') is indented with a tab (shown as \\t); YAML allows only spaces "
        "for indentation."
    )
    assert problem.fix == (
        "Indent with spaces only: start line 8 with 2 spaces and no tab, like the lines around it, and every "
        "line indented with a tab likewise; set your editor to insert spaces for the Tab key."
    )
    assert problem.at.pointer() == ("\\tid: acme/chem", "^")
    assert "\\x09" not in problem.at.source and "?" not in problem.at.source


def test_every_line_indented_with_a_tab_is_listed(tmp_path):
    text = MANIFEST.replace("  id: acme/chem", "\tid: acme/chem").replace("  revision", "\t  revision")
    text = text.replace("  max_length", "\tmax_length")
    problem = _only(tmp_path, text)
    assert problem.at.line == 8
    assert "Lines 9, 14 are indented with tabs too (YAML stops at the first)." in problem.message


def test_a_tab_after_spaces_points_at_the_tab(tmp_path):
    problem = _only(tmp_path, MANIFEST.replace("  max_length", "  \tmax_length"))
    assert (problem.field, problem.at.line, problem.at.column) == ("tokenizer.max_length", 14, 3)
    assert problem.at.pointer() == ("  \\tmax_length: 512", "  ^")


def test_a_tab_at_the_top_level_is_removed_not_replaced(tmp_path):
    problem = _only(tmp_path, MANIFEST.replace("name: ACME", "\tname: ACME"))
    assert (problem.field, problem.at.line) == ("name", 2)
    assert "remove the tab from the start of line 2 (a top-level key starts at column 1)" in problem.fix


def test_a_tab_inside_a_line_is_not_called_indentation(tmp_path):
    problem = _only(tmp_path, MANIFEST.replace("name: ACME", "name: AC\tME"))
    assert (problem.field, problem.at.line, problem.at.column) == ("name", 2, 9)
    assert problem.message == (
        "not valid YAML: line 2 ('name') holds a tab (shown as \\t) at column 9; YAML does not accept a tab "
        "there."
    )
    assert (
        problem.fix
        == 'Replace the tab with a space, or put the value in quotes ("...") if the tab belongs to it.'
    )
    assert problem.at.pointer() == ("name: AC\\tME", "        ^")


def test_a_blank_line_holding_a_tab_says_so(tmp_path):
    problem = _only(tmp_path, MANIFEST.replace("name: ACME\n", "name: ACME\n\t\n"))
    assert (problem.field, problem.at.line) == ("", 3)
    assert "line 3 is blank but for a tab" in problem.message and "Delete the tab" in problem.fix


def test_the_excerpt_shows_a_tab_as_backslash_t_and_every_other_control_escaped():
    assert excerpt("\tid: x\x1b[2J\u202e\x07") == "\\tid: x\\x1b[2J\\u202e\\x07"
    at = Location.in_text("a\t\tb: [\x1b", line=1, column=4)
    assert at.pointer() == ("a\\t\\tb: [\\x1b", "     ^")  # the caret stays under 'b'


def test_the_terminal_shows_the_tab_line_with_backslash_t(tmp_path, capsys):
    from leaderboard.__main__ import main

    folder = tmp_path / "submissions" / "acme"
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text(MANIFEST.replace("  id: acme/chem", "\tid: acme/chem"))
    assert main(["validate", "--root", str(tmp_path), str(folder)]) == 1
    out = capsys.readouterr().out
    assert "\t" not in out and "\\x09" not in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if ":8:1: not valid YAML: line 8 ('model.id')" in line)
    assert lines[at + 1 : at + 3] == ["         8 | \\tid: acme/chem", "           | ^"]


# --- dedents ---------------------------------------------------------------------------------------------


def test_a_dedented_key_is_reported_on_its_own_line_not_the_next(tmp_path):
    # Before: ':10:15: not valid YAML: mapping values are not allowed here.' at '  architecture: encoder'.
    problem = _only(tmp_path, MANIFEST.replace("  revision:", "revision:"))
    assert (problem.field, problem.at.line, problem.at.column) == ("model.revision", 9, 1)
    assert problem.message == (
        "not valid YAML: line 9 ('model.revision') is indented by 0 spaces but line 10 after it by 2, in the "
        "same mapping ('model'): YAML only stopped at line 10, which no longer fits there."
    )
    assert problem.fix == (
        "Indent line 9 by 2 spaces, like line 8 and line 10: the keys of one mapping line up."
    )
    assert problem.at.source == f"revision: {SHA}"


def test_a_first_key_indented_less_than_the_next_ones_is_the_one_blamed(tmp_path):
    # 'model:' then ' source:' (1 space) is valid YAML alone; '  id:' (2) after it is where PyYAML stops.
    text = MANIFEST.replace("  source:", " source:")
    problem = _only(tmp_path, text)
    assert (problem.field, problem.at.line, problem.at.column) == ("model.source", 7, 2)
    assert "is indented by 1 space but line 8 after it by 2" in problem.message
    # Only the next line deeper than the first key: that line is the odd one, where PyYAML stopped.
    problem = _only(tmp_path, text.replace("  revision:", " revision:").replace("  arch", " arch"))
    assert (problem.field, problem.at.line) == ("", 8)


def test_a_dedented_first_key_is_put_back_under_its_mapping(tmp_path):
    problem = _only(tmp_path, MANIFEST.replace("  source:", "source:"))
    assert (problem.field, problem.at.line) == ("model.source", 7)
    assert problem.fix == (
        "Indent line 7 by 2 spaces, as the first key under line 6, like line 8: the keys of one mapping "
        "line up."
    )


@pytest.mark.parametrize(
    "dedented",
    [
        f'revision: "{SHA}"',  # a quoted value: PyYAML says "expected <block end>" at the next line
        f"revision: {SHA}\n  # a comment\n\n",  # comments and blank lines between are skipped
    ],
)
def test_a_dedent_is_found_whatever_the_parser_said_at_the_next_line(tmp_path, dedented):
    problem = _only(tmp_path, MANIFEST.replace(f"  revision: {SHA}\n", dedented + "\n"))
    assert (problem.field, problem.at.line, problem.at.column) == ("model.revision", 9, 1)


def test_a_dedent_inside_a_nested_mapping_names_the_whole_path(tmp_path):
    text = MANIFEST.replace("model:\n", "model:\n  nested:\n    a: 1\n  b: 2\n    c: 3\n")
    problem = _only(tmp_path, text)
    assert (problem.field, problem.at.line, problem.at.column) == ("model.nested.b", 9, 3)
    assert "Indent line 9 by 4 spaces, like line 8 and line 10" in problem.fix


def test_an_over_indented_line_is_still_blamed_itself(tmp_path):
    # The line after a sibling at the same depth is the one that is wrong: PyYAML's place stands.
    problem = _only(tmp_path, MANIFEST.replace("  architecture:", "    architecture:"))
    assert (problem.field, problem.at.line) == ("", 10)
    assert problem.message == "not valid YAML: mapping values are not allowed here."


def test_a_flow_list_over_two_lines_is_no_dedent(tmp_path):
    text = MANIFEST.replace("authors: [A. Author]", "authors: [A. Author,\n  B. Author]")
    folder = tmp_path / "acme"
    folder.mkdir()
    (folder / "submission.yaml").write_text(text)
    assert check_submission(folder).problems == ()


def test_long_lines_without_a_colon_are_read_in_linear_time(tmp_path):
    """Hostile text: the key pattern once backtracked quadratically, 8 s for one 64 KiB line; now linear."""
    import time

    from leaderboard.intake import yaml_layout

    long = "a" + " " * 60_000 + "x"
    started = time.perf_counter()
    assert yaml_layout._key(long) is None
    keys = {"  revision  : x": "revision", "- id: x": "id", "url: http://a": "url", "a:b": None, "k:": "k"}
    assert {line: yaml_layout._key(line) for line in keys} == keys  # the same keys as before
    text = MANIFEST.replace("  id: acme/chem", "\tid: acme/chem") + long + "\n"
    _only(tmp_path, text)  # the diagnosis of a tab in a manifest that also holds the long line
    assert time.perf_counter() - started < 2.0  # quadratic: 8 s and more; linear: milliseconds
