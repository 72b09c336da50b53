"""Image questions through the ``transformers`` adapter: a tiny random LLaVA (CLIP vision tower, Llama text
model) and its processor, built here and saved to a temporary folder (no hub, no network).

The tokenizer is character level with ``<image>`` as one special token; 28×28 crops in 14-pixel patches give
4 image placeholder tokens per image (the CLS feature is dropped: ``vision_feature_select_strategy``
``default``), so token counts can be checked exactly.
"""

from __future__ import annotations

import base64
import io
import string
from pathlib import Path

import pytest
import torch
from PIL import Image
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import (
    CLIPImageProcessorPil,
    CLIPVisionConfig,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
    PreTrainedTokenizerFast,
)

from evaluators.adapters import GenerationRequest, ModelConfig, load_adapter, stop_index
from evaluators.adapters.transformers import TransformersAdapter
from evaluators.adapters.vision import VisionLanguageAdapter
from evaluators.notations.representations.image import ImageRepresentation

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py: tiny models, a shared machine

SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "<image>"]
CHARS = list(string.ascii_letters + string.digits + string.punctuation + " ")
VOCAB = len(SPECIALS) + len(CHARS)
IMAGE_TOKENS = 4  # (28 // 14) ** 2 patches per image
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{% for part in m['content'] %}"
    "{% if part['type'] == 'image' %}<image>{% else %}{{ part['text'] }}{% endif %}{% endfor %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
PROMPT = "What is the SMILES of the molecule in this drawing?"


def _tokenizer() -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(SPECIALS + CHARS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()  # characters back together, no spaces between tokens
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        bos_token="[BOS]",
        eos_token="[EOS]",
        extra_special_tokens={"image_token": "<image>"},
    )


def _save_llava(path: Path, *, template: str | None = None) -> Path:
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": 28}, crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=_tokenizer(),
        patch_size=14,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=template,
    )
    vision = CLIPVisionConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=28,
        patch_size=14,
        projection_dim=16,
    )
    # A wide initialisation spreads the logits, so greedy choices are far from ties.
    text = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=2,
        eos_token_id=3,
        pad_token_id=0,
        initializer_range=0.2,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=SPECIALS.index("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    torch.manual_seed(0)
    LlavaForConditionalGeneration(config).save_pretrained(path)
    processor.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def llava_dir(tmp_path_factory) -> Path:
    return _save_llava(tmp_path_factory.mktemp("llava"))


@pytest.fixture(scope="module")
def llava_chat_dir(tmp_path_factory) -> Path:
    return _save_llava(tmp_path_factory.mktemp("llava_chat"), template=TEMPLATE)


@pytest.fixture(scope="module")
def drawings() -> list[str]:
    """RDKit depictions as the tracks send them (300×300 PNG data URIs)."""
    return [ImageRepresentation().write(s) for s in ("CCO", "c1ccccc1C(=O)O", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C")]


def _adapter(path: Path, **kw):
    kw.setdefault("images", True)
    return load_adapter(ModelConfig(adapter="transformers", path=path, architecture="decoder", **kw))


def _spy_generate(adapter) -> list[dict]:
    """Record the inputs of every ``model.generate`` call the adapter makes."""
    calls, inner = [], adapter.generator.generate

    def spy(**kwargs):
        calls.append(kwargs)
        return inner(**kwargs)

    adapter.generator.generate = spy
    return calls


def _uri(image: Image.Image, fmt: str = "PNG", prefix: str = "data:image/png;base64,") -> str:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return prefix + base64.b64encode(buffer.getvalue()).decode("ascii")


def _mixed(drawings: list[str], **kw) -> list[GenerationRequest]:
    return [
        GenerationRequest("a", PROMPT, images=(drawings[0],), **kw),
        GenerationRequest("b", "Name it.", images=(drawings[1],), **kw),
        GenerationRequest("c", "CCO is ethanol; write its formula", **kw),  # text only, same model
        GenerationRequest("d", "Which of the two has a ring?", images=(drawings[0], drawings[2]), **kw),
        GenerationRequest("e", PROMPT, images=(drawings[2],), **kw),
    ]


def test_a_vision_manifest_builds_the_vision_adapter_with_generate_only(llava_dir):
    adapter = _adapter(llava_dir)
    assert isinstance(adapter, VisionLanguageAdapter) and isinstance(
        TransformersAdapter(adapter.config), VisionLanguageAdapter
    )
    # Generate only: the job runner refuses an embedding track by these capabilities.
    assert adapter.capabilities == frozenset({"generate"}) and not hasattr(adapter, "embed")
    assert type(adapter.generator).__name__ == "LlavaForConditionalGeneration"
    facts = adapter.describe()
    assert facts["inputs"] == ["text", "image"] and facts["processor_class"] == "LlavaProcessor"
    assert facts["model_class"] == "LlavaForConditionalGeneration" and facts["parameters"] > 0


def test_completions_come_back_in_order_greedy_is_deterministic_and_counts_are_exact(llava_dir, drawings):
    adapter = _adapter(llava_dir, batch_size=8)
    requests = _mixed(drawings, max_new_tokens=10)
    first = adapter.generate(requests)
    assert [c.id for c in first] == [r.id for r in requests]
    assert adapter.generate(requests) == first  # same requests, same completions
    assert len({c.text for c in first}) > 1
    # No BOS is added by this tokenizer: the prompt is its characters plus 4 placeholders per image.
    expected = [len(r.prompt) + IMAGE_TOKENS * len(r.images) for r in requests]
    assert [c.prompt_tokens for c in first] == expected
    for c in first:
        assert c.finish_reason in ("stop", "length")
        assert c.completion_tokens <= 10
        if c.finish_reason == "length":
            assert c.completion_tokens == 10


def test_batched_greedy_equals_one_at_a_time(llava_dir, drawings):
    batched = _adapter(llava_dir, batch_size=8)
    calls = _spy_generate(batched)
    requests = _mixed(drawings, max_new_tokens=12)
    together = batched.generate(requests)
    # Image and text-only requests in separate batches; the four with images in one left-padded batch.
    assert sorted(call["input_ids"].shape[0] for call in calls) == [1, 4]
    image_batch = next(call for call in calls if "pixel_values" in call)
    assert image_batch["pixel_values"].shape[0] == 5  # five images over four requests, in order
    assert (image_batch["attention_mask"][:, -1] == 1).all()  # left padding: every row ends with its prompt
    alone = _adapter(llava_dir, batch_size=1)
    single = [alone.generate([r])[0] for r in requests]
    assert together == single


def test_the_image_reaches_the_language_model(llava_dir, drawings):
    adapter = _adapter(llava_dir, batch_size=1)
    pixels, embeds = [], []
    vision = adapter.generator.model.vision_tower
    language = adapter.generator.model.language_model
    hooks = [
        vision.register_forward_pre_hook(
            lambda _m, args, kwargs: pixels.append(kwargs.get("pixel_values", *args[:1])), with_kwargs=True
        ),
        language.register_forward_pre_hook(
            lambda _m, args, kwargs: embeds.append(kwargs["inputs_embeds"]), with_kwargs=True
        ),
    ]
    try:
        requests = [
            GenerationRequest(f"r{i}", PROMPT, max_new_tokens=1, images=(d,))
            for i, d in enumerate([drawings[0], drawings[1], drawings[0]])
        ]
        adapter.generate(requests)
        assert len(pixels) == 3 and len(embeds) == 3  # one prefill per request (max_new_tokens=1)
        assert not torch.equal(pixels[0], pixels[1])
        assert torch.equal(pixels[0], pixels[2])
        # Same prompt, other drawing: the image positions of the language model's input differ, the text
        # positions do not.
        image_rows = slice(0, IMAGE_TOKENS)
        assert not torch.allclose(embeds[0][0, image_rows], embeds[1][0, image_rows])
        torch.testing.assert_close(embeds[0][0, IMAGE_TOKENS:], embeds[1][0, IMAGE_TOKENS:])
        torch.testing.assert_close(embeds[0], embeds[2])
        pixels.clear()
        adapter.generate([GenerationRequest("t", PROMPT, max_new_tokens=1)])
        assert pixels == []  # a text-only request never runs the vision tower
    finally:
        for hook in hooks:
            hook.remove()


@pytest.mark.parametrize(
    "uri",
    [
        "https://example.org/molecule.png",
        _uri(Image.new("RGB", (8, 8)), prefix="data:image/jpeg;base64,"),
        "data:image/png;base64,not base64 at all!",
        "data:image/png;base64," + base64.b64encode(b"hello, not a PNG").decode("ascii"),
        _uri(Image.new("RGB", (8, 8)), fmt="JPEG"),  # JPEG bytes behind a PNG prefix
        _uri(Image.new("RGB", (64, 64), "red"))[:60],  # a truncated PNG
    ],
    ids=["url", "jpeg-prefix", "bad-base64", "not-an-image", "jpeg-bytes", "truncated"],
)
def test_a_malformed_data_uri_is_a_value_error_naming_the_request(llava_dir, drawings, uri):
    adapter = _adapter(llava_dir)
    calls = _spy_generate(adapter)
    requests = [
        GenerationRequest("fine", PROMPT, images=(drawings[0],)),
        GenerationRequest("broken-7", PROMPT, images=(drawings[1], uri)),
    ]
    with pytest.raises(ValueError, match="request 'broken-7'"):
        adapter.generate(requests)
    assert calls == []  # every image is checked before anything is decoded


def test_an_image_request_to_a_text_only_model_is_a_type_error(tmp_path, drawings):
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=VOCAB, n_embd=16, n_layer=1, n_head=2, n_positions=128)
    GPT2LMHeadModel(config).save_pretrained(tmp_path)
    _tokenizer().save_pretrained(tmp_path)
    adapter = _adapter(tmp_path, images=False)
    assert type(adapter) is TransformersAdapter
    assert adapter.generate([GenerationRequest("t", "CCO", max_new_tokens=2)])[0].id == "t"
    with pytest.raises(TypeError, match=r"request 'i'.*does not declare model.inputs: \[text, image\]"):
        adapter.generate([GenerationRequest("t", "CCO"), GenerationRequest("i", "?", images=(drawings[0],))])


def test_stop_strings_cut_the_text_and_finish_with_stop(llava_dir, drawings):
    adapter = _adapter(llava_dir, batch_size=4)
    requests = _mixed(drawings, max_new_tokens=16)[:2]
    full = adapter.generate(requests)
    # A stop string taken from inside each completion's text, past its first character.
    stops = tuple(c.text.lstrip()[2:4] for c in full)
    assert all(len(s) == 2 for s in stops)
    stopped = adapter.generate(
        [GenerationRequest(r.id, r.prompt, max_new_tokens=16, stop=stops, images=r.images) for r in requests]
    )
    for whole, cut in zip(full, stopped, strict=True):
        assert cut.text == whole.text[: stop_index(whole.text, stops)]
        assert cut.finish_reason == "stop"
        assert cut.completion_tokens < whole.completion_tokens or whole.finish_reason == "stop"
        assert cut.prompt_tokens == whole.prompt_tokens


def test_sampling_depends_on_the_seed_only_not_on_the_batch(llava_dir, drawings):
    adapter = _adapter(llava_dir, batch_size=8)

    def sampled(seed: int, image: str = drawings[0]) -> GenerationRequest:
        return GenerationRequest(
            f"s{seed}", PROMPT, max_new_tokens=10, temperature=1.0, seed=seed, images=(image,)
        )

    together = adapter.generate([sampled(1), sampled(2, drawings[1]), sampled(3)])
    assert adapter.generate([sampled(3)])[0] == together[2]
    assert together[0].text != together[2].text  # same image and prompt, other seed


def test_chat_template_renders_image_parts_and_is_required_when_asked(llava_dir, llava_chat_dir, drawings):
    adapter = _adapter(llava_chat_dir, chat_template=True)
    request = GenerationRequest("c", PROMPT, max_new_tokens=4, images=(drawings[0], drawings[1]))
    assert adapter._render_with_images(request) == f"<|user|><image><image>{PROMPT}<|assistant|>"
    (completion,) = adapter.generate([request])
    assert completion.prompt_tokens == len(f"<|user|>{PROMPT}<|assistant|>") + 2 * IMAGE_TOKENS
    # Without the manifest's flag the template is not used: the image tokens go first, then the prompt.
    plain = _adapter(llava_chat_dir, prompt_prefix="Q: ")
    assert plain._render_with_images(request) == f"<image><image>Q: {PROMPT}"
    with pytest.raises(ValueError, match="chat_template"):
        _adapter(llava_dir, chat_template=True).generate([request])
