"""The trained captioning reference (issue 34 point 3): corpus, prompt, reproducible training, weights.

Real data: ChEBI-20's validation and test splits (``CHEMROBUST_DATA_DIR``). Training runs are a few steps of
a tiny T5 — the point is that the model learns from the question the track asks, from no molecule the
board scores, bit for bit reproducibly, and that the saved folder captions and embeds as a submission
(``nox -s train-reference -- chem-t5-caption`` trains the real one).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from evaluators.schema import TrackOptions  # noqa: E402
from evaluators.tracks.captioning import CaptioningTrack  # noqa: E402
from leaderboard.tools.caption_training import (  # noqa: E402
    CAPTION_MODELS,
    CaptionConfig,
    build_caption_tokenizer,
    caption_flags,
    caption_prompt,
    epoch_batches,
    filter_pairs,
    read_split,
    train_captioner,
)
from leaderboard.tools.name_corpus import EvaluationIndex, _evaluation_index  # noqa: E402
from leaderboard.tools.seq2seq_training import MAX_WEIGHT_BYTES, save_model  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SUBMISSION = REPO / "submissions" / "chem-t5-caption"


@pytest.fixture(scope="module")
def splits(benchmark_data, tmp_path_factory) -> tuple[Path, list[tuple[str, str, str]]]:
    """ChEBI-20's test root and the validation split's triples, as the trainer reads them."""
    from leaderboard.data.prepare import prepare_training_split
    from leaderboard.settings import Settings

    root = benchmark_data("chebi20")
    state = tmp_path_factory.mktemp("state")
    mirror = Settings.from_environment(repo_root=REPO, state_dir=state).data_mirror
    folder = prepare_training_split("chebi20", "validation", state, mirror=mirror, log=lambda _l: None)
    return root, read_split(folder / "validation.tsv")


@pytest.fixture(scope="module")
def chebi_only(splits):
    """The keys of ChEBI-20's test split alone (the full index builds every set: minutes): structure
    index and InChIKeys."""
    from evaluators.datasets import load_dataset
    from leaderboard.inchikeys import inchikeys

    keys = {"chebi20": inchikeys(m.smiles for m in load_dataset("chebi20", splits[0]).molecules)}
    return _evaluation_index({"chebi20": splits[0]}), keys


def _tiny(**update) -> CaptionConfig:
    base = dict(d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1, num_heads=2, vocab_size=300,
                max_target_length=24, steps=3, batch_size=4, log_every=1)  # fmt: skip
    return CaptionConfig(**{**base, **update})


def _sha(run, folder: Path) -> str:
    return hashlib.sha256(save_model(run, folder).read_bytes()).hexdigest()


def test_the_model_is_asked_word_for_word_what_the_track_asks(splits) -> None:
    root, pairs = splits
    track = CaptioningTrack(TrackOptions())
    record = {"id": "1", "smiles": pairs[0][1], "description": pairs[0][2]}
    asked = [q.request.prompt for q in track.keyed_questions([record]) if q.representation == "original"]
    assert asked == [caption_prompt(pairs[0][1])]
    tokenizer = build_caption_tokenizer(pairs[:200], _tiny())
    ids = tokenizer(caption_prompt("CCO"))["input_ids"]
    flags = [tokenizer.convert_tokens_to_ids(f) for f in caption_flags()]
    assert len(flags) == 2 and ids[0] == flags[0] and flags[1] in ids  # each fixed part is one token


def test_no_molecule_of_the_test_split_is_learned_from(splits, chebi_only) -> None:
    from evaluators.datasets import load_records
    from evaluators.notations.smiles import canonical_smiles
    from leaderboard.inchikeys import inchikeys

    root, pairs = splits
    index, keys = chebi_only
    kept = filter_pairs(pairs, index, keys)
    test = [r["smiles"] for r in load_records("chebi20", root)]
    assert not {canonical_smiles(s) for _, s, _ in kept.pairs} & {canonical_smiles(s) for s in test}
    # The board's seen-in-training check compares InChIKeys: it must find none either.
    assert not inchikeys(s for _, s, _ in kept.pairs) & keys["chebi20"]
    # The split is disjoint from the test split by exact SMILES; 119 molecules are shared without stereo,
    # and 5 more by InChIKey (tautomers).
    assert kept.removed["in chebi20"] == 124 and len(kept.pairs) == len(pairs) - 124
    assert filter_pairs(pairs, index).removed["in chebi20"] == 119
    # The safeguard matters: with an empty index those molecules would be trained on.
    empty = filter_pairs(pairs, EvaluationIndex(exact={"x": set()}, flat={"x": set()}, names={"x": set()}))
    assert len(empty.pairs) == len(pairs) and empty.sha256 != kept.sha256


def test_batches_cover_every_pair_once_per_epoch_and_group_similar_lengths() -> None:
    import random

    lengths = [random.Random(k).randint(5, 200) for k in range(1000)]
    batches = epoch_batches(lengths, 16, seed=1, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert epoch_batches(lengths, 16, seed=1, epoch=0) == batches
    assert epoch_batches(lengths, 16, seed=1, epoch=1) != batches
    waste = sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in batches)
    shuffled = list(range(1000))
    random.Random(0).shuffle(shuffled)
    plain = [shuffled[k : k + 16] for k in range(0, 1000, 16)]
    plain_waste = sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in plain)
    assert waste < plain_waste / 5  # padding the bucketing saves


def test_retraining_gives_bitwise_identical_weights(splits, tmp_path) -> None:
    pairs = splits[1][:64]
    first = _sha(train_captioner(_tiny(), pairs, log=lambda _: None), tmp_path / "a")
    assert first == _sha(train_captioner(_tiny(), pairs, log=lambda _: None), tmp_path / "b")
    assert first != _sha(train_captioner(_tiny(seed=7), pairs, log=lambda _: None), tmp_path / "c")


def test_the_saved_model_captions_and_embeds_through_the_project_adapter(splits, tmp_path) -> None:
    from evaluators.adapters import GenerationRequest, ModelConfig, load_adapter

    pairs = splits[1][:64]
    save_model(train_captioner(_tiny(steps=6), pairs, log=lambda _: None), tmp_path / "model")
    config = ModelConfig(adapter="transformers", path=tmp_path / "model", architecture="encoder-decoder",
                         batch_size=4, max_length=128)  # fmt: skip
    adapter = load_adapter(config)
    prompt = caption_prompt(pairs[0][1])
    out = adapter.generate([GenerationRequest("a", prompt, max_new_tokens=12)])
    assert out[0].id == "a" and isinstance(out[0].text, str)
    vectors = adapter.embed([pairs[0][1], pairs[1][1]]).layers["last"]
    assert vectors.shape[0] == 2 and float(abs(vectors[0] - vectors[1]).sum()) > 0


def test_the_reference_configuration_fits_the_weight_limit(splits) -> None:
    from transformers import T5ForConditionalGeneration

    from leaderboard.tools.seq2seq_training import t5_config

    config = CAPTION_MODELS["chem-t5-caption"]
    tokenizer = build_caption_tokenizer(splits[1], config)
    n = sum(p.numel() for p in T5ForConditionalGeneration(t5_config(config, tokenizer)).parameters())
    assert 4 * n < MAX_WEIGHT_BYTES


def test_committed_weights_match_their_training_record(splits, chebi_only) -> None:
    rec = json.loads((SUBMISSION / "training.json").read_text(encoding="utf-8"))
    weights = SUBMISSION / rec["weights"]["file"]
    assert weights.stat().st_size == rec["weights"]["bytes"] <= MAX_WEIGHT_BYTES
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == rec["weights"]["sha256"]
    assert rec["config"] == CAPTION_MODELS["chem-t5-caption"].model_dump()
    assert rec["training_seconds"] <= 15 * 60  # the budget on this 2-core machine
    # The recorded corpus left out the test split's molecules (the full index removes more sets' too).
    expected = filter_pairs(splits[1], *chebi_only).removed["in chebi20"]
    assert rec["corpus"]["removed"]["in chebi20"] == expected
    assert rec["corpus"]["size"] + sum(rec["corpus"]["removed"].values()) >= len(splits[1])
