"""The captioning track's reference captioners (issue 34 point 3), on real ChEBI-20 data.

The registry declares ChEBI-20's validation split a *training split* (a model may be given it): it must
share no molecule with the test split it would otherwise leak. The two retrieval adapters
(``submissions/caption-retrieval-*``) run here as they run in the box, on the split as the host mounts it,
and the track scores them in-process: the Morgan one answers every rewrite of a molecule with the same
caption (its drops are exactly 0), and a constant caption does not beat it on the original writing's
ROUGE-1 or METEOR over the track's real sample (the degenerate check of SPEC §4; measured: constant 0.222 /
0.093, Morgan retrieval 0.522 / 0.487).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from evaluators.adapters import GenerationRequest, ModelConfig
from evaluators.datasets import DATASETS, load_records
from evaluators.datasets.specs import DataFile, DatasetSpec, TrainingSplit, register_dataset
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.captioning import COMPLETIONS, ORIGINAL, REWRITES, WRITINGS, CaptioningTrack

REPO = Path(__file__).resolve().parents[2]
CONSTANT = "The molecule is a member of the class of organic compounds."


def _load(folder: str, cls: str):
    """Return the submission's adapter class, imported from its file as the box imports it."""
    path = REPO / "submissions" / folder / "retrieval.py"
    spec = importlib.util.spec_from_file_location(f"{folder.replace('-', '_')}_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, cls)


@pytest.fixture(scope="module")
def chebi(benchmark_data) -> tuple[Path, list[dict[str, str]]]:
    root = benchmark_data("chebi20")
    return root, load_records("chebi20", root)


@pytest.fixture(scope="module")
def gallery(tmp_path_factory, chebi) -> Path:
    """The validation split as the host mounts it: a folder holding only its file."""
    from leaderboard.data.prepare import prepare_training_split
    from leaderboard.settings import Settings

    state = tmp_path_factory.mktemp("state")
    mirror = Settings.from_environment(repo_root=REPO, state_dir=state).data_mirror
    try:
        return prepare_training_split("chebi20", "validation", state, mirror=mirror, log=lambda _l: None)
    except Exception as exc:  # noqa: BLE001 - offline without a mirror: as benchmark_data does
        pytest.skip(f"ChEBI-20 validation split unavailable: {exc}")


@pytest.fixture(scope="module")
def morgan(gallery):
    return _load("caption-retrieval-morgan", "MorganRetrievalCaptioner")(
        ModelConfig(adapter="custom", path=gallery, architecture="non-neural",
                    options={"radius": 2, "n_bits": 2048}))  # fmt: skip


@pytest.fixture(scope="module")
def ngram(gallery):
    return _load("caption-retrieval-ngram", "NgramRetrievalCaptioner")(
        ModelConfig(adapter="custom", path=gallery, architecture="non-neural", options={"n": 3}))


def test_the_validation_split_is_a_training_split_disjoint_from_every_set_it_serves(chebi, gallery) -> None:
    spec = DATASETS.get("chebi20")
    split = spec.training_split("validation")
    assert split is not None and split.tracks == ("captioning",)
    # Not one of the set's files: the set's hash, every chebi20 result's benchmark version, is unchanged.
    assert [f.path for f in spec.files] == ["test_original.tsv"]
    molecules = split.reader(gallery)
    assert len(molecules) == 3301
    given = {canonical_smiles(smiles) for _, smiles in molecules}
    assert None not in given
    for name in DATASETS.names():  # every set scored on a track the split serves: today chebi20 alone
        if set(DATASETS.get(name).tracks) & set(split.tracks):
            scored = {canonical_smiles(r["smiles"]) for r in load_records(name, chebi[0])}
            assert not given & scored, f"{name}: {len(given & scored)} molecules also in the training split"


def test_a_training_split_naming_an_evaluation_file_is_refused_at_registration() -> None:
    leak = DataFile("test.tsv", sha256="0" * 64)
    with pytest.raises(ValueError, match="training split 'test'"):
        register_dataset(DatasetSpec("leaky-set", files=(leak,), reader=lambda _f: [], training_splits=(
            TrainingSplit("test", (leak,), reader=lambda _f: [], tracks=("captioning",)),)))  # fmt: skip
    assert "leaky-set" not in DATASETS


def _questions(records: list[dict[str, str]], n: int):
    track = CaptioningTrack(TrackOptions())
    chosen = {r["id"] for r in records[:n]}
    return [q for q in track.questions(records[:n]) if q.item in chosen]


def test_the_morgan_captioner_answers_every_rewrite_of_a_molecule_alike(chebi, morgan) -> None:
    questions = _questions(chebi[1], 12)
    answers = morgan.generate([q.request for q in questions])
    by_item: dict[str, set[str]] = {}
    for q, a in zip(questions, answers, strict=True):
        assert a.id == q.request.id and a.text.startswith("Answer: The molecule is")
        by_item.setdefault(q.item, set()).add(a.text)
    assert len(by_item) == 12 and all(len(texts) == 1 for texts in by_item.values())
    asked = {q.representation for q in questions}
    assert ORIGINAL in asked and len(asked & set(REWRITES)) >= 3  # rewrites were really asked
    # Another track's question, and an unreadable molecule, get no answer (abstain).
    other = GenerationRequest("x", "What is the molecular formula of CCO? Answer: <formula>")
    unreadable = GenerationRequest("y", CaptioningTrack(TrackOptions()).prompt("C1CC"))
    assert [c.text for c in morgan.generate([other, unreadable])] == ["", ""]


def test_the_ngram_captioner_reads_the_string_and_may_change_with_the_writing(chebi, ngram) -> None:
    questions = _questions(chebi[1], 12)
    answers = ngram.generate([q.request for q in questions])
    assert all(a.text.startswith("Answer: ") for a in answers)
    by_item: dict[str, set[str]] = {}
    for q, a in zip(questions, answers, strict=True):
        by_item.setdefault(q.item, set()).add(a.text)
    assert any(len(texts) > 1 for texts in by_item.values())  # not invariant: it compares strings
    other = GenerationRequest("x", "Is CCO soluble in water? Answer yes or no.")
    assert ngram.generate([other])[0].text == ""


def _scores(track: CaptioningTrack, root: Path, out: Path, answers: dict[str, str]) -> dict:
    out.mkdir()
    lines = [json.dumps({"id": i, "completion": text, "finish_reason": "stop"})
             for i, text in answers.items()]  # fmt: skip
    (out / COMPLETIONS).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    result = TrackResult("model", "captioning", 1, "chebi20", "0" * 8, "0" * 8, 0, rows=(), counts={})
    scored = track.score(result, out_dir=out, data_dir=root)
    return {(dict(r.dims)["augmentation"], r.metric): r.value for r in scored.rows}


def test_a_constant_caption_does_not_beat_the_morgan_retrieval_on_the_real_sample(
    chebi, morgan, ngram, tmp_path
) -> None:
    root, records = chebi
    track = CaptioningTrack(TrackOptions())  # the board's sample: 200 molecules, six writings
    questions = track.questions(records)
    requests = [q.request for q in questions]
    found = {}
    for name, adapter in (("morgan", morgan), ("ngram", ngram)):
        found[name] = _scores(track, root, tmp_path / name,
                              {c.id: c.text for c in adapter.generate(requests)})  # fmt: skip
    found["constant"] = _scores(track, root, tmp_path / "constant",
                                {r.id: f"Answer: {CONSTANT}" for r in requests})  # fmt: skip
    shown = {name: {m: round(s[(ORIGINAL, m)], 3) for m in ("rouge1", "meteor", "rouge_l", "bleu2")}
             for name, s in found.items()}  # fmt: skip
    print(json.dumps(shown))
    for metric in ("rouge1", "meteor"):
        assert found["constant"][(ORIGINAL, metric)] < found["morgan"][(ORIGINAL, metric)], shown
    assert found["morgan"][(ORIGINAL, "rouge1")] > 0.45 and found["morgan"][(ORIGINAL, "meteor")] > 0.4
    # Invariant by construction: the same caption in every writing, so every drop is exactly 0.
    for writing in WRITINGS[1:]:
        assert found["morgan"][(writing, "rouge1_drop")] == 0.0
        assert found["morgan"][(writing, "meteor_drop")] == 0.0
