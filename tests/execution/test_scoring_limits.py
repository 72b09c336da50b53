"""Host-side scoring under limits (issue 30, item 1): a child with a clock and a memory cap; OPSIN's caps.

A hostile run controls what the host parses: these tests give the host's scoring the hostile inputs
(a name that expands 3**10-fold, a name OPSIN is stuck on, one that exhausts its heap, a structure with too
many atoms, a call that never returns or allocates without end) and check that each ends as an invalid
answer with its reason, or as a failed run with its reason, in bounded time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from evaluators.answers import opsin
from leaderboard.execution.limits import ScoringLimitError, ScoringLimits, call_limited
from leaderboard.execution.results import ResultError

GiB = 1024**3


def tris(depth: int) -> str:
    """``tris(tris(…(trimethylsilyl)silyl…)silyl)silane``: 3**depth Si atoms, ~11 characters a level."""
    name = "trimethylsilyl"
    for _ in range(depth - 1):
        name = f"tris({name})silyl"
    return f"tris({name})silane"


@pytest.fixture(scope="module")
def java() -> None:
    if shutil.which("java") is None:
        if os.environ.get("CI"):
            pytest.fail("no `java` on PATH, but CI is set", pytrace=False)
        pytest.skip("no `java` on PATH (OPSIN needs it)")


# ----------------------------------------------------------------------------- the child process


def _sleep_with_a_grandchild(pid_file: str) -> None:
    child = subprocess.Popen(["sleep", "300"])
    Path(pid_file).write_text(str(child.pid))
    time.sleep(300)


def _allocate(gib: int) -> int:
    return len(bytearray(gib * GiB))


def _raise_result_error() -> None:
    raise ResultError("result.json is for track 'x', expected 'y'")


def _raise_other() -> None:
    raise KeyError("\x1b[2Jboom")


def test_the_wall_clock_kills_the_call_and_everything_it_started(tmp_path):
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(ScoringLimitError, match=r"took more than its 3 s wall-clock limit and was stopped"):
        call_limited(_sleep_with_a_grandchild, str(pid_file), limits=ScoringLimits(wall_s=3))
    assert time.monotonic() - started < 20
    pid = int(pid_file.read_text())
    time.sleep(0.5)
    state = Path(f"/proc/{pid}/stat")
    assert not state.exists() or state.read_text().split()[2] == "Z", "the grandchild outlived the limit"


def test_memory_is_capped_by_the_kernel():
    with pytest.raises(ScoringLimitError, match=r"ran out of its 1 GiB memory limit"):
        call_limited(_allocate, 2, limits=ScoringLimits(memory_bytes=1 * GiB))
    assert call_limited(_allocate, 0, limits=ScoringLimits(memory_bytes=1 * GiB)) == 0


def test_result_errors_pass_through_and_other_errors_are_one_printable_line():
    with pytest.raises(ResultError, match=r"expected 'y'"):
        call_limited(_raise_result_error, limits=ScoringLimits(), passthrough=(ResultError,))
    with pytest.raises(ScoringLimitError, match=r"^host scoring failed: KeyError: .*boom") as caught:
        call_limited(_raise_other, limits=ScoringLimits())
    assert str(caught.value).isprintable() and "\x1b" not in str(caught.value)


# ----------------------------------------------------------------------------- OPSIN's caps


def test_the_caps_before_parsing_refuse_a_short_name_that_expands_exponentially():
    assert opsin.name_expansion(tris(10)) == 3**10 and len(tris(10)) == 125
    assert opsin.name_problem(tris(10)) == "multiplied brackets ask for more than 1000 copies"
    assert opsin.name_problem("(" * 30 + "methane" + ")" * 30) == "nests brackets more than 24 deep"
    # Honest names with many multiplied leaves pass: the largest product in the data is 13.
    assert opsin.name_problem("1,1,2,2,3,3,4,4,5,5,6,6,6-tridecakis(fluoranyl)hexane") is None
    assert opsin.name_problem("tris(tris(trimethylsilyl)silyl)silane") is None


def test_a_hostile_name_is_one_invalid_answer_with_its_reason(java):
    problems: dict[int, str] = {}
    started = time.monotonic()
    out = opsin.names_to_smiles(["ethanol", tris(10), "", "benzene"], problems=problems)
    assert out == ["CCO", None, None, "c1ccccc1"]
    assert problems == {1: "multiplied brackets ask for more than 1000 copies"}
    assert time.monotonic() - started < 30  # was 175 s and 3.4 GB for the depth-10 name alone


def test_a_name_opsin_is_stuck_on_is_stopped_and_the_rest_stays_aligned(java, monkeypatch):
    monkeypatch.setattr(opsin, "MAX_NAME_EXPANSION", 10**9)  # past the cap: OPSIN's own clock must hold
    monkeypatch.setattr(opsin, "NAME_TIMEOUT_S", 2.0)
    problems: dict[int, str] = {}
    started = time.monotonic()
    out = opsin.names_to_smiles(["methane", tris(10), "ethanol", "propane"], problems=problems)
    assert out == ["C", None, "CCO", "CCC"] and problems == {1: "OPSIN took more than 2 s"}
    assert time.monotonic() - started < 60


def test_a_name_that_exhausts_the_heap_is_invalid_and_the_rest_stays_aligned(java, monkeypatch):
    monkeypatch.setattr(opsin, "MAX_NAME_EXPANSION", 10**9)
    monkeypatch.setattr(opsin, "OPSIN_HEAP", "96m")
    # The heap must give out first, however loaded the machine: the name clock would otherwise win the race.
    monkeypatch.setattr(opsin, "NAME_TIMEOUT_S", 600.0)
    problems: dict[int, str] = {}
    out = opsin.names_to_smiles(["methane", tris(9), "ethanol"], problems=problems)
    assert out == ["C", None, "CCO"] and problems == {1: "OPSIN ran out of its 96m heap"}


def test_a_structure_with_too_many_atoms_is_not_read(java, monkeypatch):
    monkeypatch.setattr(opsin, "MAX_ANSWER_ATOMS", 8)
    problems: dict[int, str] = {}
    assert opsin.names_to_smiles(["octane", "nonane"], problems=problems) == ["CCCCCCCC", None]
    assert problems == {1: "more than 8 atoms"}


def test_a_batch_past_its_time_fails_as_a_whole(java, monkeypatch):
    # A name OPSIN needs seconds for (past the expansion cap, under the name clock) makes the batch outlast
    # its limit however fast the JVM starts: two plain names can finish within 0.5 s on a quick machine.
    monkeypatch.setattr(opsin, "MAX_NAME_EXPANSION", 10**9)
    monkeypatch.setattr(opsin, "BATCH_TIMEOUT_S", 0.5)
    with pytest.raises(opsin.OpsinError, match=r"OPSIN took more than 0.5 s for a batch of 2 names"):
        opsin.names_to_smiles(["methane", tris(8)])


# ----------------------------------------------------------------------------- counted, with the reason


def _questions(n: int, kind: str = "name") -> list:
    from evaluators.adapters import GenerationRequest
    from evaluators.asking import Question

    return [Question(GenerationRequest(id=f"q{i}", prompt=f"p{i}"), None, "iupac", str(i), "", kind)
            for i in range(n)]


def test_refused_answers_are_counted_with_their_reason(java):
    from evaluators.asking import normalise_answers, refused_counts

    refused: dict[str, str] = {}
    texts = {"q0": "Answer: ethanol", "q1": tris(10), "q2": tris(11), "q3": ""}
    answers = normalise_answers(_questions(4), texts, refused=refused)
    assert answers == {"q0": "CCO", "q1": None, "q2": None, "q3": None}
    reason = "multiplied brackets ask for more than 1000 copies"
    assert refused_counts(refused) == {"answers_refused": {reason: 2}}
    assert refused_counts({}) == {}  # an honest run's counts are as they were


def test_an_answer_utf8_cannot_write_invalidates_that_answer_only(tmp_path):
    """A completion with a lone surrogate (an API's JSON ``"\\udc80"``) once failed the whole run."""
    import json

    from evaluators.adapters import Completion, GenerativeAdapter, ModelConfig
    from evaluators.asking import ask

    class Echo(GenerativeAdapter):
        def generate(self, requests):
            return [Completion(r.id, "bad \udc80 text" if r.id == "q1" else "CCO", "stop") for r in requests]

    out = tmp_path / "completions.jsonl"
    asked = ask(Echo(ModelConfig(adapter="echo")), _questions(3, "smiles"), out, log=lambda _: None)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(x["id"], x["completion"], x["finish_reason"]) for x in lines] == [
        ("q0", "CCO", "stop"), ("q1", "", "invalid_text"), ("q2", "CCO", "stop")]  # fmt: skip
    assert asked["counts"]["finish_reasons"] == {"stop": 2, "invalid_text": 1}
