"""Tests for ``evaluators.progress``: the line format, its strict parser and the rate-limited reporter."""

from __future__ import annotations

import ast
import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.progress import (
    MAX_COUNT,
    MAX_STAGE_CHARS,
    PROGRESS_PREFIX,
    Progress,
    ProgressReporter,
    format_progress,
    parse_progress,
)

STAGE_ALPHABET = "ABCXYZabcxyz0189 _.:/-"


def line(stage="embed", done=3, total=10) -> str:
    return PROGRESS_PREFIX + json.dumps({"stage": stage, "done": done, "total": total}, separators=(",", ":"))


# --------------------------------------------------------------------------------------------------------
# Format and parse


def test_format_is_the_prefix_and_compact_json():
    assert PROGRESS_PREFIX == "chemrobust-progress "
    assert format_progress(Progress("embed", 1200, 16500)) == (
        'chemrobust-progress {"stage":"embed","done":1200,"total":16500}'
    )


def test_round_trip_and_line_ends():
    p = Progress("retrieve:canonical/k-10", 0, 0)
    assert parse_progress(format_progress(p)) == p
    assert parse_progress(format_progress(p) + "\n") == p
    assert parse_progress(format_progress(p) + "\r\n") == p


@pytest.mark.parametrize(
    "text",
    [
        "",
        "chemrobust-progress",
        "chemrobust-progress ",
        "chemrobust-progress {}",
        'chemrobust-progress{"stage":"embed","done":3,"total":10}',  # no space after the prefix
        " " + line(),  # leading space
        line() + " ",  # trailing space
        line() + "\n\n",  # two line ends
        line() + "\r",  # a lone carriage return
        line().replace("chemrobust", "ChemRobust"),
        'chemrobust-progress {"stage": "embed", "done": 3, "total": 10}',  # not the compact spelling
        'chemrobust-progress {"done":3,"stage":"embed","total":10}',  # key order
        'chemrobust-progress {"stage":"embed","done":3,"total":10,"extra":1}',
        'chemrobust-progress {"stage":"embed","done":3}',
        'chemrobust-progress {"stage":"embed","stage":"embed","done":3,"total":10}',
        'chemrobust-progress {"stage":"embed","done":3.0,"total":10}',
        'chemrobust-progress {"stage":"embed","done":true,"total":10}',
        'chemrobust-progress {"stage":"embed","done":"3","total":10}',
        'chemrobust-progress {"stage":"embed","done":1e1,"total":10}',
        'chemrobust-progress {"stage":"\\u0065mbed","done":3,"total":10}',  # an escape, even of a letter
        'chemrobust-progress ["embed",3,10]',
        'chemrobust-progress {"stage":"embed","done":NaN,"total":10}',
        'chemrobust-progress {"stage":"embed","done":3,"total":10',  # cut off
        line(done=-1),
        line(done=11, total=10),
        line(total=MAX_COUNT + 1, done=0),
        line(stage=""),
        line(stage="x" * (MAX_STAGE_CHARS + 1)),
        line(stage="embed\x1b[2J"),
        line(stage="embed\nnext"),
        line(stage="émbed"),
        line(stage="a\u202eb"),  # bidi override
        line(stage="[bold]x[/bold]"),
        line(stage="x" * 60) + " " * 300,
        "chemrobust-progress " + "[" * 10_000,  # deep nesting, long line
        "x" * 100_000,
    ],
)
def test_malformed_lines_are_not_progress(text):
    assert parse_progress(text) is None


def test_limits_are_inclusive():
    assert parse_progress(line(stage="s" * MAX_STAGE_CHARS, done=MAX_COUNT, total=MAX_COUNT)) == Progress(
        "s" * MAX_STAGE_CHARS, MAX_COUNT, MAX_COUNT
    )


@pytest.mark.parametrize("value", [None, b"chemrobust-progress {}", 3, ["x"]])
def test_non_strings_are_not_progress(value):
    assert parse_progress(value) is None


@pytest.mark.parametrize(
    ("stage", "done", "total"),
    [("", 0, 1), ("a\tb", 0, 1), ("x" * 65, 0, 1), ("ok", -1, 1), ("ok", 2, 1), ("ok", True, 1),
     ("ok", 0, MAX_COUNT + 1), ("ok", 1.0, 2), (3, 0, 1)],
)  # fmt: skip
def test_invalid_progress_cannot_be_built(stage, done, total):
    with pytest.raises(ValueError, match="invalid progress"):
        Progress(stage, done, total)


def test_progress_is_frozen():
    p = Progress("embed", 1, 2)
    with pytest.raises(AttributeError, match="cannot assign to field 'done'"):
        p.done = 2


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300))
def test_parse_never_raises(text):
    result = parse_progress(text)
    assert result is None or isinstance(result, Progress)
    if result is not None:
        assert format_progress(result) == text.removesuffix("\n").removesuffix("\r")


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=STAGE_ALPHABET, min_size=1, max_size=MAX_STAGE_CHARS),
    st.integers(0, MAX_COUNT),
    st.integers(0, MAX_COUNT),
)
def test_every_valid_progress_round_trips(stage, a, b):
    p = Progress(stage, min(a, b), max(a, b))
    assert parse_progress(format_progress(p)) == p


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=80), st.integers(-5, 5), st.integers(-5, 5))
def test_parse_and_the_constructor_agree(stage, done, total):
    text = PROGRESS_PREFIX + json.dumps({"stage": stage, "done": done, "total": total}, separators=(",", ":"))
    try:
        built = Progress(stage, done, total)
    except ValueError:
        built = None
    assert parse_progress(text) == built


# --------------------------------------------------------------------------------------------------------
# Reporter


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class _Recorder(io.StringIO):
    def __init__(self):
        super().__init__()
        self.writes: list[str] = []
        self.flushes = 0

    def write(self, text):
        self.writes.append(text)
        return super().write(text)

    def flush(self):
        self.flushes += 1


def test_reporter_rate_limits_per_stage_but_keeps_first_and_final_lines():
    clock, out = _Clock(), _Recorder()
    report = ProgressReporter(out, clock=clock)
    printed = []
    for done in range(0, 10):
        printed.append(report("embed", done, 10))
        clock.now += 0.125
    assert printed == [True, False, False, False, True, False, False, False, True, False]
    assert report("embed", 10, 10) is True, "the final line is always printed"
    assert report("embed", 10, 10) is True
    assert report("retrieve", 0, 5) is True, "a new stage starts at once"
    assert report("retrieve", 1, 5) is False
    lines = out.getvalue().splitlines()
    assert [parse_progress(x) for x in lines] == [
        Progress("embed", 0, 10), Progress("embed", 4, 10), Progress("embed", 8, 10),
        Progress("embed", 10, 10), Progress("embed", 10, 10), Progress("retrieve", 0, 5),
    ]  # fmt: skip


def test_reporter_writes_each_line_in_one_call_and_flushes():
    out = _Recorder()
    ProgressReporter(out)("embed", 1, 2)
    assert out.writes == ['chemrobust-progress {"stage":"embed","done":1,"total":2}\n']
    assert out.flushes == 1


def test_reporter_defaults_to_stdout(capsys):
    ProgressReporter()("embed", 2, 2)
    assert parse_progress(capsys.readouterr().out) == Progress("embed", 2, 2)


def test_reporter_refuses_invalid_values():
    with pytest.raises(ValueError, match="stage must be 1 to 64 characters"):
        ProgressReporter(io.StringIO())("bad\x1bstage", 0, 1)


def test_module_uses_only_the_standard_library():
    tree = ast.parse(Path(sys.modules[ProgressReporter.__module__].__file__).read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            roots.add(node.module.split(".")[0])
    assert roots <= set(sys.stdlib_module_names), roots - set(sys.stdlib_module_names)
