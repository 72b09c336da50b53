"""Image questions through the endpoint adapter, against the local OpenAI-compatible server (loopback only).

What is checked: a request with images sends the user message as content parts (the text, then each image
as an ``image_url`` part, in order) and the data URIs arrive intact; a text request's body and cache key
are what they were before images existed (pinned); images are part of the cache key (by digest); each
image reserves a fixed token estimate; a dry run shows shortened data URIs; and a request whose images this
endpoint cannot take is refused before anything is sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from evaluators.adapters import GenerationRequest
from leaderboard.execution.endpoint import BudgetExhausted, EndpointAdapter, ResponseCache
from leaderboard.execution.endpoint_cache import IMAGE_TOKENS, image_digests, shorten_data_uri
from leaderboard.intake.endpoints import EndpointModel
from tests.execution._openai_server import SERVED_MODEL, OpenAIServer, message_content, tiny_model

STOP = ("\n\n",)
PREFIX = "data:image/png;base64,"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("tiny_gpt2"))


@pytest.fixture
def server(model_dir):
    with OpenAIServer(model_dir) as srv:
        yield srv


def _model(url: str, **kw) -> EndpointModel:
    fields = {"source": "endpoint", "architecture": "decoder", "capabilities": ["generate"], "url": url,
              "model": SERVED_MODEL, "max_requests": 1000, "timeout_s": 5.0, "inputs": ["text", "image"],
              **kw}  # fmt: skip
    return EndpointModel(**fields)


def _adapter(url: str, cache: Path | None = None, **kw) -> EndpointAdapter:
    cache_ = ResponseCache(cache) if cache else None
    return EndpointAdapter(_model(url, **kw), key=None, cache=cache_, backoff_s=0.01, retries=2)


def _image(label: str, size: int = 9000) -> str:
    """A data URI of ``size`` deterministic pseudo-PNG bytes (the adapter never decodes an image)."""
    data = b"\x89PNG\r\n\x1a\n"
    while len(data) < size:
        data += hashlib.sha256(data[-32:] + label.encode()).digest()
    return PREFIX + base64.b64encode(data[:size]).decode("ascii")


def _request(
    rid: str = "q0", prompt: str = "What is CCO?", images: tuple[str, ...] = ()
) -> GenerationRequest:
    return GenerationRequest(id=rid, prompt=prompt, max_new_tokens=8, temperature=0.0, seed=7, stop=STOP,
                             images=images)  # fmt: skip


def test_images_arrive_as_image_url_parts_after_the_text_in_order(server) -> None:
    first, second = _image("a"), _image("b", 12000)
    requests = [_request("img", images=(first, second)), _request("txt", prompt="What is N#N?")]
    out = _adapter(server.url, max_concurrency=1).generate(requests)
    assert [c.id for c in out] == ["img", "txt"] and all(c.finish_reason != "error" for c in out)
    by_prompt = {message_content(r["body"]["messages"][0]["content"])[0]: r for r in server.requests}
    asked = by_prompt["What is CCO?"]
    assert asked["body"]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is CCO?"},
        {"type": "image_url", "image_url": {"url": first}},
        {"type": "image_url", "image_url": {"url": second}},
    ]}]  # fmt: skip
    assert asked["images"] == [first, second]  # intact, in order
    # A text request in the same run keeps the plain string content.
    assert by_prompt["What is N#N?"]["body"]["messages"] == [{"role": "user", "content": "What is N#N?"}]
    assert by_prompt["What is N#N?"]["images"] == []


def test_a_text_request_keeps_its_body_and_cache_key_byte_for_byte() -> None:
    # Pinned from the adapter before images existed: caches written then must still answer.
    request = _request()
    for inputs in (["text"], ["text", "image"]):
        adapter = _adapter("http://127.0.0.1:9/v1", inputs=inputs)
        fields = adapter.request_fields(request)
        assert "images" not in fields
        assert ResponseCache.key(fields) == "08a007ecd6e6bba4f190810a72d7b8dbd73a71cc43b5496cb0b8d0b53df21f16"
        body = json.dumps(adapter.payload(fields), ensure_ascii=False)
        assert body == (
            '{"model": "tiny-gpt2", "messages": [{"role": "user", "content": "What is CCO?"}], '
            '"max_tokens": 8, "temperature": 0.0, "seed": 7, "stop": ["\\n\\n"]}'
        )
    # With an image, the key is that of the same fields plus the image's digest.
    adapter = _adapter("http://127.0.0.1:9/v1")
    image = _image("a")
    fields = adapter.request_fields(_request(images=(image,)))
    assert fields["images"] == ["sha256:" + hashlib.sha256(image.encode()).hexdigest()]
    assert {k: v for k, v in fields.items() if k != "images"} == adapter.request_fields(request)


def test_images_are_part_of_the_cache_key(server, tmp_path) -> None:
    a, b = _image("a"), _image("b")
    requests = [
        _request("none"),
        _request("a", images=(a,)),
        _request("b", images=(b,)),
        _request("ab", images=(a, b)),
        _request("ba", images=(b, a)),
        _request("a2", images=(a,)),
    ]
    adapter = _adapter(server.url, tmp_path / "cache")
    keys = [ResponseCache.key(adapter.request_fields(r)) for r in requests]
    assert len(set(keys)) == 5 and keys[1] == keys[5]  # same prompt, other images (or order): other answer
    out = adapter.generate(requests)
    assert len(server.requests) == 5 and adapter.budget.sent == 5  # the identical pair is asked once
    assert out[5].text == out[1].text and out[5].id == "a2"
    # A rerun answers every one from the cache; entries hold the digests, not the images.
    rerun = _adapter(server.url, tmp_path / "cache")
    assert rerun.generate(requests) == out
    assert rerun.budget.sent == 0 and rerun.stats.cached == 6 and len(server.requests) == 5
    entries = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    assert sorted(len(e["request"].get("images", [])) for e in entries) == [0, 1, 1, 2, 2]
    assert all(PREFIX not in json.dumps(e) for e in entries)
    assert any(e["request"].get("images") == image_digests((b, a)) for e in entries)


def test_each_image_reserves_a_fixed_token_estimate(server) -> None:
    images = (_image("a"), _image("b"))
    adapter = _adapter(server.url)
    text_only, with_images = adapter.plan([_request()]), adapter.plan([_request(images=images)])
    assert with_images.prompt_tokens - text_only.prompt_tokens == 2 * IMAGE_TOKENS
    # The reservation is made before sending: a budget that fits the text but not the image sends nothing.
    small = _adapter(server.url, max_tokens_total=IMAGE_TOKENS)
    assert small.generate([_request()])[0].finish_reason != "error"
    with pytest.raises(BudgetExhausted, match="token budget exhausted"):
        small.generate([_request("img", prompt="What is C?", images=images)])
    assert len(server.requests) == 1


def test_a_dry_run_shows_shortened_data_uris_and_sends_nothing(server) -> None:
    image = _image("a", 9000)
    plan = _adapter(server.url).plan([_request(images=(image,))])
    content = plan.examples[0]["json"]["messages"][0]["content"]
    shown = content[1]["image_url"]["url"]
    assert shown == shorten_data_uri(image) == f"{image[:40]}…({len(image)} bytes)"
    assert content[0] == {"type": "text", "text": "What is CCO?"}
    assert image not in plan.text() and shown in plan.text() and not server.requests
    assert shorten_data_uri(PREFIX) == PREFIX  # a short URI is shown whole


def test_images_the_endpoint_cannot_take_are_refused_before_anything_is_sent(server) -> None:
    image = _image("a")
    requests = [_request("txt"), _request("img", images=(image,))]
    text_model = _adapter(server.url, inputs=["text"])
    with pytest.raises(TypeError, match=r"request 'img' has 1 image\(s\).*does not read images"):
        text_model.generate(requests)
    with pytest.raises(TypeError, match="does not read images"):
        text_model.plan(requests)
    # The intake refuses images with api: completions; the adapter guards it all the same.
    completions = _adapter(server.url, api="completions")
    with pytest.raises(TypeError, match=r"model.api is 'completions': only the chat API carries images"):
        completions.generate(requests)
    with pytest.raises(ValueError, match="not a data:image"):
        _adapter(server.url).generate([_request(images=("https://example.org/cco.png",))])
    assert not server.requests  # the text request before the bad one was not sent either
    # The body must carry the images the key was made of (else an answer is cached under another key).
    adapter = _adapter(server.url)
    fields = adapter.request_fields(_request(images=(image,)))
    with pytest.raises(ValueError, match="not those of the request fields"):
        adapter.payload(fields, (_image("b"),))
    with pytest.raises(TypeError, match="text prompt only"):
        _adapter(server.url, api="completions").payload(fields | {"api": "completions"}, (image,))


def test_the_server_reads_content_parts_and_refuses_unknown_ones(server) -> None:
    assert message_content("plain") == ("plain", [])
    parts = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "data:x"}},
             {"type": "text", "text": "b"}]  # fmt: skip
    assert message_content(parts) == ("a\nb", ["data:x"])
    with pytest.raises(ValueError, match="unsupported content part"):
        message_content([{"type": "input_audio"}])
