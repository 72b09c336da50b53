"""The main job in-process: real submissions, real MLflow store, reuse on re-run, failures isolated.

The Morgan fingerprint reference is deterministic: its stored metrics are compared with an independent
recomputation (``tests/execution/_amore_expected.py``: RDKit fingerprints, brute-force ranks, SPEC §4 T1).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluators.schema import Job, ModelConfig, TrackOptions
from leaderboard.execution.evaluate import Evaluator
from leaderboard.execution.locks import EvaluationLockedError, evaluation_lock
from leaderboard.execution.results import ResultError, read_result
from leaderboard.store import ResultStore
from tests.execution._amore_expected import assert_matches_reference, headline_acc_at_1

JOB = Job("x", "amore", "datamol-default", "v", TrackOptions(), ModelConfig(adapter="morgan_fingerprint"))

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    subs = tmp_path / "submissions"
    for name in ("morgan-fingerprint-reference", "char-ngram-baseline"):
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    return {"subs": subs, "state": tmp_path / "state"}


def _evaluator(ws: dict[str, Path], lines: list[str], limit: int | None = 40) -> Evaluator:
    store = ResultStore(f"sqlite:///{ws['state']}/mlflow.db", artifact_root=ws["state"] / "artifacts")
    ws["state"].mkdir(exist_ok=True)
    return Evaluator(
        ROOT,
        ws["state"],
        store,
        runner="in-process",
        options=TrackOptions(limit=limit),
        submissions_dir=ws["subs"],
        log=lines.append,
    )


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_second_run_reuses_everything_and_a_broken_submission_does_not_stop_others(workspace, benchmark_data):
    ws = workspace
    ws["state"].mkdir()
    lines: list[str] = []
    # The whole default set (500 molecules, seconds): it holds molecules that share a fingerprint (ties).
    first = _evaluator(ws, lines, limit=None).run(None, ["datamol-default"])
    assert first.computed == 2 and first.reused == 0 and not first.failed, lines
    assert any("IN-PROCESS" in line for line in lines), "the in-process runner must say so loudly"

    lines.clear()
    second = _evaluator(ws, lines, limit=None).run(None, ["datamol-default"])
    assert (second.computed, second.reused) == (0, 2)
    assert all("evaluating" not in line for line in lines), "a re-run with nothing changed did model work"

    # Break one submission's code: it fails with a one-line reason, the other is still reused.
    # The adapter class stays defined (the validator parses the file and finds it); importing it raises.
    code = ws["subs"] / "char-ngram-baseline" / "ngram.py"
    code.write_text(code.read_text() + "\nraise RuntimeError('boom in submission')\n")
    lines.clear()
    third = _evaluator(ws, lines, limit=None).run(None, ["datamol-default"])
    assert third.reused == 1 and third.computed == 0 and len(third.failed) == 1
    assert "boom in submission" in third.failed[0]

    store = ResultStore(f"sqlite:///{ws['state']}/mlflow.db")
    results, runs = store.export()
    by_sub = runs.set_index("submission")
    # The failure is recorded, but the export keeps the newest FINISHED result for the board.
    assert set(by_sub.index) == {"morgan-fingerprint-reference", "char-ngram-baseline"}
    assert (by_sub["runner"] == "in-process").all()
    head = results[
        (results.metric == "acc_at_1")
        & (results.subset == "non_trivial")
        & (results.layer == "last")
        & (results.distance == "l2")
        & (results.direction == "original_to_augmented")
    ]
    assert len(head) == 10  # 2 submissions x 5 augmentations
    # Every number of the reference (Acc@1, Acc@5, MRR, tie and pair counts; each exact distance, direction
    # and subset) is the one an independent recomputation gives: fingerprints, brute-force ranks, SPEC rules.
    expected = assert_matches_reference(results, benchmark_data("datamol-default"), limit=None)
    headline = headline_acc_at_1(expected)
    assert len(headline) == 5 and min(headline.values()) < 1.0, "the full set must exercise the tie rule"


def test_invalid_manifest_is_reported_and_skipped(workspace):
    ws = workspace
    ws["state"].mkdir()
    bad = ws["subs"] / "morgan-fingerprint-reference" / "submission.yaml"
    bad.write_text(bad.read_text() + "colour: blue\n")
    lines: list[str] = []
    summary = _evaluator(ws, lines).run(["morgan-fingerprint-reference"], ["datamol-default"])
    assert summary.invalid and summary.computed == 0
    assert any("colour" in line for line in lines)


def test_track_option_plans_only_that_track(workspace):
    """``evaluate --track``: a changed track is rerun alone; the others' jobs are not even planned."""
    from dataclasses import replace

    from leaderboard.execution.evaluate import Summary

    ws = workspace
    ws["state"].mkdir()
    evaluator = _evaluator(ws, [])
    every = evaluator.plan(None, ["freesolv", "datamol-default"], Summary())
    assert {j.track for j in every} == {"amore", "downstream"}
    sets = ["freesolv", "datamol-default"]
    only = replace(evaluator, only_tracks=("downstream",)).plan(None, sets, Summary())
    assert only and {j.track for j in only} == {"downstream"}
    assert [(j.submission.id, j.dataset) for j in only] == [
        (j.submission.id, j.dataset) for j in every if j.track == "downstream"
    ]


def test_second_evaluation_is_refused_while_one_holds_the_lock(tmp_path):
    with evaluation_lock(tmp_path):
        with pytest.raises(EvaluationLockedError, match="another evaluation is running"):
            with evaluation_lock(tmp_path):
                pass


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no result.json"),
        ("{not json", "not valid JSON"),
        ('{"rows": [], "track": "amore", "benchmark_version": "other"}', "benchmark version"),
        ('{"rows": [{"metric": "acc_at_1"}], "track": "amore", "benchmark_version": "v"}', "lacks"),
    ],
)
def test_malformed_outputs_are_rejected(tmp_path, content, message):
    if content is not None:
        (tmp_path / "result.json").write_text(content)
    with pytest.raises(ResultError, match=message):
        read_result(tmp_path, job=JOB)


def test_non_finite_metric_is_rejected(tmp_path):
    row = {"augmentation": "kekule", "layer": "last", "distance": "l2", "direction": "original_to_augmented",
           "subset": "all", "metric": "mrr", "value": float("nan")}  # fmt: skip
    doc = {"schema_version": 2, "submission_id": "x", "track": "amore", "track_version": 2, "seed": 0,
           "dataset": "datamol-default", "data_hash": "h", "benchmark_version": "v",
           "rows": [row]}  # fmt: skip
    (tmp_path / "result.json").write_text(json.dumps(doc))
    with pytest.raises(ResultError, match="mrr must be a finite number, got nan"):
        read_result(tmp_path, job=JOB)
