"""Answer-reader conformance: every completion of ``evaluators/answers/conformance.jsonl`` reads as graded.

The corpus holds completions for every task of T3, T4 and T5 in the styles real models write (terse,
sentence, Markdown, LaTeX, code fence, chain of thought then ``Answer:``, hedged, refusal, several
candidates, unit and Unicode variants …), each with the value a careful chemist grading by hand records.
It is built by ``leaderboard/tools/answer_corpus.py`` (molecules × styles) plus hand-written cases: every
measured defect of the old reader is one entry.

Measured on the 856 entries (old reader: ``git show main:evaluators/answers/__init__.py``, first line
only): **old reader 499/856 (58 %), new reader 856/856**.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from evaluators.answers import READING_RULES, Reading
from evaluators.answers.conformance import conformance, entries, read_entries, same

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "evaluators" / "answers" / "conformance.jsonl"
T4_PROMPTS = ROOT / "evaluators" / "tracks" / "prompt_robustness" / "prompt_templates.json"
T5_PROMPTS = ROOT / "evaluators" / "tracks" / "identity_blinded" / "blinded_prompts.json"
FIELDS = {"track", "task", "kind", "style", "completion", "expected", "why"}


ENTRIES = entries()


@pytest.fixture(scope="module")
def readings() -> list[Reading]:
    """The reader's reading of every entry, in corpus order: one batch per kind (labels: per task)."""
    if shutil.which("java") is None:
        message = "no `java` on PATH (OPSIN reads the name entries; Debian: openjdk-17-jre-headless)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    out = read_entries(ENTRIES)
    assert len(out) == len(ENTRIES)
    return out


_same = same


def test_the_page_figure_is_the_share_this_test_asserts(readings: list[Reading]) -> None:
    report = conformance()
    right = sum(_same(r.value, e["expected"]) for e, r in zip(ENTRIES, readings, strict=True))
    assert (report.right, report.total) == (right, len(ENTRIES))
    assert sum(n for n, _ in report.by_kind.values()) == right
    assert report.tasks == len({(e["track"], e["task"]) for e in ENTRIES})


def test_every_entry_reads_as_a_careful_grader_would(readings: list[Reading]) -> None:
    wrong = [
        f"line {i + 1} [{e['track']} {e['task']} {e['kind']} {e['style']}] {e['completion'][:80]!r}: "
        f"expected {e['expected']!r}, read {r.value!r} by {r.rule}"
        for i, (e, r) in enumerate(zip(ENTRIES, readings, strict=True))
        if not _same(r.value, e["expected"])
    ]
    assert not wrong, f"{len(wrong)}/{len(ENTRIES)} entries misread:\n" + "\n".join(wrong)


def test_every_reading_names_a_documented_rule(readings: list[Reading]) -> None:
    for e, r in zip(ENTRIES, readings, strict=True):
        assert r.rule and r.rule in READING_RULES, (e, r)
        assert (r.rule == "none") == (r.value is None), (e, r)


def _task_kinds() -> set[tuple[str, str, str]]:
    """(track, task, kind) of every question the generative tracks ask (read from their definitions)."""
    from evaluators.asking.tasks import TASKS

    out = {("T3", t.name, kind) for t in TASKS for kind in t.answer.values()}
    for spec in json.loads(T4_PROMPTS.read_text(encoding="utf-8"))["tasks"]:
        answer = spec["answer"]
        out |= {
            ("T4", spec["task"], kind) for kind in (answer.values() if isinstance(answer, dict) else [answer])
        }
    blinded = json.loads(T5_PROMPTS.read_text(encoding="utf-8"))
    for spec in blinded["tasks"]:
        out.add(("T5", spec["task"], spec["answer"]))
    out.add(("T5", "reconstruction", "smiles"))  # blinded_prompts.json "reconstruction": a SMILES
    return out


def test_the_corpus_covers_every_task_of_every_generative_track() -> None:
    covered = {(e["track"], e["task"], e["kind"]) for e in ENTRIES}
    wanted = _task_kinds()
    missing = sorted(wanted - covered)
    assert not missing, (
        f"tasks without corpus entries (add them to leaderboard/tools/answer_corpus.py): {missing}"
    )


def test_the_corpus_is_large_and_varied() -> None:
    assert len(ENTRIES) >= 300
    assert all(set(e) == FIELDS for e in ENTRIES)
    styles: dict[str, set[str]] = defaultdict(set)
    for e in ENTRIES:
        styles[e["kind"]].add(e["style"])
    from evaluators.answers import ANSWER_KINDS

    assert set(styles) == set(ANSWER_KINDS)  # every kind the reader knows meets the corpus
    assert all(len(s) >= 10 for s in styles.values()), {k: len(s) for k, s in styles.items()}
    # Each kind has answers and non-answers.
    for kind in styles:
        expected = [e["expected"] for e in ENTRIES if e["kind"] == kind]
        assert None in expected and any(x is not None for x in expected), kind


def test_the_generator_reproduces_the_corpus() -> None:
    from leaderboard.tools.answer_corpus import build

    assert build() == ENTRIES, "run `PYTHONPATH=. python -m leaderboard.tools.answer_corpus`"
