"""Training records on the model cards: the committed references' records, and hostile training.json files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard.intake.training_record import MAX_BYTES, MAX_POINTS, read_training_record

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = ROOT / "submissions"


def _good() -> dict:
    return {"training_seconds": 12.5, "epochs": 1.0, "parameters": 1000,
            "corpus": {"sha256": "a" * 64, "size": 10}, "weights": {"bytes": 5, "sha256": "b" * 64},
            "rebuild": "nox -s train-reference -- x",
            "history": {"loss": [[i, 1.0 / i] for i in range(1, 501)]}}  # fmt: skip


@pytest.mark.parametrize("sub", ["chem-t5-ce", "chem-t5-kl", "chem-t5-randomized", "smiles-mlm-canonical"])
def test_every_trained_reference_publishes_its_record(sub) -> None:
    record = read_training_record(SUBMISSIONS / sub)
    stored = json.loads((SUBMISSIONS / sub / "training.json").read_text(encoding="utf-8"))
    assert record is not None
    assert record["weights_sha256"] == stored["weights"]["sha256"]
    assert record["corpus_sha256"] == stored["corpus"]["sha256"]
    assert sub in record["rebuild"] and 0 < len(record["loss"]) <= MAX_POINTS
    assert record["loss"][-1][0] == stored["history"]["loss"][-1][0]  # the curve ends at the last step


def test_models_without_a_record_have_none() -> None:
    assert read_training_record(SUBMISSIONS / "constant-baseline") is None


def test_the_curve_is_thinned_and_keeps_its_last_point(tmp_path) -> None:
    (tmp_path / "training.json").write_text(json.dumps(_good()))
    record = read_training_record(tmp_path)
    assert len(record["loss"]) <= MAX_POINTS
    assert record["loss"][0] == [1, 1.0] and record["loss"][-1][0] == 500


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.update(rebuild="x" * 201),
        lambda d: d["weights"].update(sha256="<script>"),
        lambda d: d.update(training_seconds=-1),
        lambda d: d.pop("corpus"),
        lambda d: d.update(history={"loss": [["a", "b"]]}),
    ],
)
def test_a_malformed_record_is_no_record(tmp_path, spoil) -> None:
    doc = _good()
    spoil(doc)
    (tmp_path / "training.json").write_text(json.dumps(doc))
    assert read_training_record(tmp_path) is None


def test_links_oversized_files_and_junk_are_no_record(tmp_path) -> None:
    (tmp_path / "target.json").write_text(json.dumps(_good()))
    (tmp_path / "training.json").symlink_to(tmp_path / "target.json")
    assert read_training_record(tmp_path) is None
    (tmp_path / "training.json").unlink()
    (tmp_path / "training.json").write_text(" " * (MAX_BYTES + 1))
    assert read_training_record(tmp_path) is None
    (tmp_path / "training.json").write_bytes(b"\xff\xfe not json")
    assert read_training_record(tmp_path) is None
