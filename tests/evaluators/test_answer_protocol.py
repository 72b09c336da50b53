"""The answer protocol (issue 31 part 1): one last line for every question, budgets and stops per model kind.

Every T3, T4 and T5 question ends with the protocol's line; a chat model or an API gets at least
``CHAT_BUDGET`` tokens and no stop string, a direct model the task's own budget and a blank line after its
first text; a stop string never cuts a leading blank line; the host asks an endpoint or a chat-template
model as a chat model through the very view it mounts.
"""

from __future__ import annotations

import csv
import json

import pytest

from evaluators.adapters import stop_index
from evaluators.asking import protocol
from evaluators.asking.protocol import ANSWER_LINE, CHAT_BUDGET, DIRECT_STOP, WHAT
from evaluators.datasets import dataset_hash
from evaluators.schema import Job, ModelConfig, TrackOptions
from evaluators.tracks import TRACKS, benchmark_version
from evaluators.tracks.consistency import ConsistencyTrack
from evaluators.tracks.identity_blinded import IdentityBlindedTrack
from evaluators.tracks.prompt_robustness import PromptRobustnessTrack
from leaderboard.execution.job_inputs import data_view

RECORDS = [
    {"id": "1", "smiles": "CCO", "iupac": "ethanol", "value": "-5.0"},
    {"id": "2", "smiles": "CC(=O)O", "iupac": "acetic acid", "value": "-6.7"},
]
GENERATIVE = (("consistency", "pubchem-names"), ("prompt_robustness", "freesolv"),
              ("identity_blinded", "edit-pairs"))  # fmt: skip


def _questions(cls, records, *, chat: bool):
    return cls.for_model(TrackOptions(), chat=chat).questions(records)


def test_every_t3_question_ends_with_the_protocol_line_and_translation_names_both_answers() -> None:
    for q in _questions(ConsistencyTrack, RECORDS, chat=False):
        what = q.task.what or WHAT[q.kind]
        assert q.request.prompt.endswith("\n" + ANSWER_LINE.format(what=what))
        assert q.request.prompt.count("Answer: <answer>") == 1
    # The SMILES and the name question of a translation ask for their answer in the same words.
    lines = {q.request.prompt.rsplit("\n", 1)[1] for q in _questions(ConsistencyTrack, RECORDS, chat=False)
             if q.task.name == "translation"}  # fmt: skip
    assert len(lines) == 1


@pytest.mark.parametrize("chat", [False, True], ids=["direct", "chat"])
def test_budgets_and_stops_follow_the_model_kind(chat: bool) -> None:
    direct = {q.key: q.request for q in _questions(ConsistencyTrack, RECORDS, chat=False)}
    for q in _questions(ConsistencyTrack, RECORDS, chat=chat):
        assert q.request.prompt == direct[q.key].prompt  # the same question for every model
        if chat:
            assert q.request.stop == ()
            assert q.request.max_new_tokens == max(CHAT_BUDGET, q.task.max_new_tokens)
        else:
            assert q.request.stop == DIRECT_STOP and q.request.max_new_tokens == q.task.max_new_tokens
            assert q.request.max_new_tokens >= 32  # room for "Answer: " and a short answer


def test_the_protocol_is_part_of_every_generative_definition() -> None:
    for cls in (ConsistencyTrack, PromptRobustnessTrack, IdentityBlindedTrack):
        assert cls(TrackOptions()).definition()["protocol"] == protocol.definition()
    versions = (ConsistencyTrack.version, PromptRobustnessTrack.version, IdentityBlindedTrack.version)
    assert versions == (9, 10, 6)  # T3 9: retrosynthesis in the product's notation; T4 10: retrosynthesis


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("CCO\n\nBecause", 3),
        ("\n\nCCO\n\nBecause", 5),  # a leading blank line is not the end of the answer
        ("\n\n", None),
        (" \n \n\nAnswer: CCO", None),
        ("CCO", None),
        ("", None),
    ],
)
def test_a_stop_string_counts_only_after_the_text_began(text: str, cut: int | None) -> None:
    assert stop_index(text, DIRECT_STOP) == cut
    assert stop_index(text, ()) is None  # a chat model has no stop string


@pytest.mark.parametrize(("track", "dataset"), GENERATIVE)
@pytest.mark.parametrize("how", ["endpoint", "chat_template", "direct"])
def test_the_mounted_view_asks_an_api_or_a_chat_model_with_the_chat_budget(
    tmp_path, benchmark_data, track, dataset, how
) -> None:
    root = benchmark_data(dataset)
    options = TrackOptions(limit=4)
    data_hash = dataset_hash(dataset, root)
    job = Job("x", track, dataset, benchmark_version(track, options, data_hash), options,
              ModelConfig(adapter="custom", chat_template=how == "chat_template"))  # fmt: skip
    (tmp_path / "work").mkdir()
    _, data = data_view(job, tmp_path / "work", root, data_hash, endpoint=how == "endpoint")
    with (data / dataset / "view.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and TRACKS.get(track).withholds_labels
    budgets = {int(r["max_new_tokens"]) for r in rows}
    stops = {tuple(json.loads(r["stop"])) for r in rows}
    if how == "direct":
        assert max(budgets) < CHAT_BUDGET and stops == {DIRECT_STOP}
    else:
        assert min(budgets) >= CHAT_BUDGET and stops == {()}
    assert all(r["prompt"].rsplit("\n", 1)[1].startswith(ANSWER_LINE.split("{")[0]) for r in rows)


def test_a_table_recorded_before_the_rule_column_reads_it_as_empty_and_keeps_its_key() -> None:
    import pandas as pd

    from leaderboard.site.normalise import normalise_table, table_key

    spec = ConsistencyTrack.tables[0]
    row = {"submission": "a", "track": "consistency", "dataset": "d", "task": "formula",
           "representation": "smiles", "id": "1", "input": "CCO", "completion": "C2H6O", "answer": "C2H6O",
           "correct": "1"}  # fmt: skip
    out = normalise_table(pd.DataFrame([row]), spec, "answers")
    assert list(out["rule"].astype(str)) == [""] and "rule" not in table_key(spec)
    assert {c: str(out[c].iloc[0]) for c in row} == row  # nothing recorded is lost
