"""The ``transformers`` adapter on tiny random models the tests create (no hub, no network)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2Model,
    PreTrainedTokenizerFast,
    T5Config,
    T5Model,
)

from evaluators.adapters import ModelConfig, load_adapter

CHARS = list("CNOSPFIBrcnos()[]=#@+-123456789%/\\Hl")
SMILES = ["CCO", "c1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "N#N", "C1CC1", "ClC(Cl)Cl"]


def _tokenizer(path: Path, *, template: bool = True) -> None:
    vocab = {tok: i for i, tok in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *CHARS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    if template:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
        )
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]",
                                   cls_token="[CLS]", sep_token="[SEP]")
    fast.save_pretrained(path)


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bert")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=4 + len(CHARS), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=64)
    BertModel(cfg).save_pretrained(path)
    _tokenizer(path)
    return path


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("t5")
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=4 + len(CHARS), d_model=16, d_kv=4, d_ff=32, num_layers=2, num_decoder_layers=3,
                   num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=3)
    T5Model(cfg).save_pretrained(path)
    _tokenizer(path)
    return path


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gpt2")
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=4 + len(CHARS), n_embd=16, n_layer=2, n_head=2, n_positions=64)
    GPT2Model(cfg).save_pretrained(path)
    _tokenizer(path, template=False)
    return path


def _adapter(path: Path, **kw):
    return load_adapter(ModelConfig(adapter="transformers", path=path, **kw))


def test_encoder_returns_every_layer_and_last_is_the_final_block(bert_dir):
    emb = _adapter(bert_dir).embed(SMILES)
    assert set(emb.layers) == {"last", "encoder.0", "encoder.1", "encoder.2"}
    assert all(a.shape == (len(SMILES), 16) and a.dtype == np.float32 for a in emb.layers.values())
    np.testing.assert_array_equal(emb.layers["last"], emb.layers["encoder.2"])
    assert not np.allclose(emb.layers["encoder.0"], emb.layers["encoder.2"])


def test_mean_pooling_matches_a_direct_computation_and_ignores_batch_composition(bert_dir):
    adapter = _adapter(bert_dir, batch_size=4)
    emb = adapter.embed(SMILES).layers["last"]
    alone = _adapter(bert_dir, batch_size=1).embed(SMILES).layers["last"]
    np.testing.assert_allclose(emb, alone, atol=1e-5)  # padding never leaks into the mean
    batch = adapter.tokenizer([SMILES[2]], return_tensors="pt")
    with torch.no_grad():
        hidden = adapter.model(**batch).last_hidden_state[0]
    np.testing.assert_allclose(emb[2], hidden.mean(dim=0).numpy(), atol=1e-5)


@pytest.mark.parametrize("pooling", ["cls", "last_token", "mean_no_special"])
def test_pooling_options(bert_dir, pooling):
    adapter = _adapter(bert_dir, pooling=pooling, options={"layers": "last"})
    emb = adapter.embed(SMILES).layers["last"]
    batch = adapter.tokenizer([SMILES[1]], return_tensors="pt")
    with torch.no_grad():
        hidden = adapter.model(**batch).last_hidden_state[0]
    expected = {"cls": hidden[0], "last_token": hidden[-1], "mean_no_special": hidden[1:-1].mean(dim=0)}
    np.testing.assert_allclose(emb[1], expected[pooling].numpy(), atol=1e-5)


def test_truncation_is_flagged_per_string(bert_dir):
    emb = _adapter(bert_dir, max_length=8).embed(["CCO", "CCCCCCCCCCCCCC", "C"])
    assert emb.truncated.tolist() == [False, True, False]
    assert emb.n_truncated == 1


def test_encoder_decoder_has_both_stacks_with_shifted_decoder_inputs(t5_dir):
    adapter = _adapter(t5_dir, architecture="encoder-decoder")
    emb = adapter.embed(SMILES)
    assert {"last", "encoder.0", "encoder.2", "decoder.0", "decoder.3"} <= set(emb.layers)
    np.testing.assert_array_equal(emb.layers["last"], emb.layers["encoder.2"])
    ids = torch.tensor([[5, 6, 7, 3, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 0]])
    shifted, dec_mask = adapter._decoder_inputs(ids, mask)
    assert shifted.tolist() == [[0, 5, 6, 7, 3]]  # start token, then the input moved right by one
    assert dec_mask.tolist() == [[1, 1, 1, 1, 1]]


def test_encoder_decoder_without_decoder_stack_uses_the_encoder_only(t5_dir):
    emb = _adapter(t5_dir, architecture="encoder-decoder", options={"decoder_stack": False}).embed(SMILES)
    assert not any(k.startswith("decoder") for k in emb.layers)


def test_decoder_only_last_token_pooling(gpt2_dir):
    adapter = _adapter(gpt2_dir, architecture="decoder", pooling="last_token")
    emb = adapter.embed(SMILES)
    assert "decoder.2" in emb.layers
    batch = adapter.tokenizer([SMILES[0]], return_tensors="pt")
    with torch.no_grad():
        hidden = adapter.model(**batch).last_hidden_state[0]
    np.testing.assert_allclose(emb.layers["last"][0], hidden[-1].numpy(), atol=1e-5)


def test_unknown_pooling_is_rejected(bert_dir):
    with pytest.raises(ValueError, match="pooling"):
        _adapter(bert_dir, pooling="max")


@pytest.fixture(scope="module")
def bert_atoms_dir(tmp_path_factory, bert_dir) -> Path:
    """The BERT above with a tokenizer that reads a bracket atom or a two-letter element as one token."""
    path = tmp_path_factory.mktemp("bert-atoms")
    BertModel.from_pretrained(bert_dir).save_pretrained(path)
    vocab = {tok: i for i, tok in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *CHARS])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"\[[^\]]+\]|Cl|Br|."), behavior="isolated")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
                            sep_token="[SEP]").save_pretrained(path)
    return path


def test_embedding_batches_are_sorted_by_tokens_not_characters(bert_atoms_dir):
    """Explicit hydrogens are long in characters, short in tokens: the batches follow the tokens."""
    texts = ["CCCCCCCCCCCC", "[H]C([H])([H])[H]", "CCCCCCCCCC", "CCCCC"]  # 14, 11, 12, 7 tokens
    adapter = _adapter(bert_atoms_dir, batch_size=2)
    assert [b.tolist() for b in adapter.embedding_batches(texts)] == [[3, 1], [2, 0]]  # padded to 11 and 14
    # By characters (12, 17, 10, 5) the pairs would be [3, 2] and [0, 1], padded to 12 and 14.
    by_tokens = adapter.embed(texts).layers["last"]
    one_by_one = _adapter(bert_atoms_dir, batch_size=1).embed(texts).layers["last"]
    np.testing.assert_allclose(by_tokens, one_by_one, atol=1e-5)  # the batching moves no embedding


@pytest.mark.parametrize("model", ["bert", "bert_atoms", "gpt2", "t5"])
@pytest.mark.parametrize("max_length", [64, 6])
def test_batches_cut_from_one_tokenization_equal_the_tokenizers_own(request, model, max_length):
    """Every string is tokenized once (``encode_once``); each batch cut from it (``cut_batch``) is the
    tokenizer's own padded batch, array for array, and the embeddings are bit for bit those of
    tokenizing each batch again."""
    from evaluators.adapters import cut_batch, encode_once

    path = request.getfixturevalue(f"{model}_dir")
    texts = [*SMILES, "C", "CCCCCCCCCCCCCCCCCC", "[H]C([H])([H])[H]", "Brc1ccccc1Cl"]
    architecture = {"gpt2": "decoder", "t5": "encoder-decoder"}.get(model, "encoder")
    adapter = _adapter(path, batch_size=3, max_length=max_length, architecture=architecture)
    tok = adapter.tokenizer
    batches, encoded = encode_once(tok, texts, batch_size=3, max_length=max_length)
    assert encoded is not None and sorted(np.concatenate(batches).tolist()) == list(range(len(texts)))
    for index in batches:
        chunk = [texts[i] for i in index]
        arrays, truncated = cut_batch(tok, encoded, index)
        own = tok(chunk, padding=True, truncation=True, max_length=max_length,
                  return_special_tokens_mask=True, return_tensors="np")  # fmt: skip
        assert sorted(arrays) == sorted(own.keys())
        for key in own:
            np.testing.assert_array_equal(arrays[key], own[key].astype(np.int64), err_msg=key)
        full = tok(chunk)["input_ids"]
        assert truncated == [len(ids) > max_length for ids in full]
    once = adapter.embed(texts)
    adapter._embedding_plan = lambda t: (batches, None)  # the old way: each batch tokenized on its own
    again = adapter.embed(texts)
    assert set(once.layers) == set(again.layers) and len(once.layers) > 1
    for layer in once.layers:
        np.testing.assert_array_equal(once.layers[layer], again.layers[layer], err_msg=layer)
    np.testing.assert_array_equal(once.truncated, again.truncated)
    assert once.truncated.any() == (max_length == 6)
