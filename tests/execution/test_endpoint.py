"""The endpoint adapter against a local OpenAI-compatible server with a real tiny model and injected faults.

Every test talks only to the loopback server it starts (``tests/execution/_openai_server.py``). What is
checked: the API fields a request carries, answers equal to the model's own, recovery from 429 (with its
``Retry-After``), 500, a hanging server and broken bodies, the failure policy, real overlap of concurrent
requests, the cache (a rerun sends nothing, a stopped run resumes with the missing answers only), the hard
budget, the dry run, and that the key never leaves the ``Authorization`` header.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.adapters import GenerationRequest
from leaderboard.execution.endpoint import (
    BudgetExhausted,
    EndpointAdapter,
    EndpointError,
    ResponseCache,
)
from leaderboard.intake.endpoints import EndpointModel
from tests.execution._openai_server import SERVED_MODEL, OpenAIServer, tiny_model

KEY = "sk-test-CANARY-3f9a1c77e2"
STOP = ("\n\n",)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("tiny_gpt2"))


@pytest.fixture
def server(model_dir):
    with OpenAIServer(model_dir) as srv:
        yield srv


def _model(url: str, **kw) -> EndpointModel:
    fields = {"source": "endpoint", "architecture": "decoder", "capabilities": ["generate"], "url": url,
              "model": SERVED_MODEL, "max_requests": 1000, "timeout_s": 1.0, **kw}  # fmt: skip
    return EndpointModel(**fields)


def _adapter(server, cache: Path | None = None, *, key: str | None = KEY, **kw) -> EndpointAdapter:
    options = {k: kw.pop(k) for k in ("retries", "backoff_s") if k in kw}
    return EndpointAdapter(
        _model(server.url, **kw), key=key, cache=ResponseCache(cache) if cache else None,
        backoff_s=options.get("backoff_s", 0.01), retries=options.get("retries", 5),
    )  # fmt: skip


def _requests(n: int, *, tokens: int = 8) -> list[GenerationRequest]:
    prompts = ["CCO", "c1ccccc1", "CC(=O)O", "What is N#N?", "C1CC1", "OCC(O)CO", "CCN", "Cl"]
    return [
        GenerationRequest(id=f"q{i}", prompt=f"{prompts[i % len(prompts)]} #{i}", max_new_tokens=tokens,
                          temperature=0.0, seed=7, stop=STOP)
        for i in range(n)
    ]  # fmt: skip


def _reference(server, requests) -> list[tuple[str, str]]:
    """What the model itself answers (text, finish reason), without HTTP."""
    out = []
    for r in requests:
        body = {
            "max_tokens": r.max_new_tokens,
            "stop": list(r.stop),
            "temperature": r.temperature,
            "seed": r.seed,
        }
        text, reason, _, _ = server.generate(r.prompt, body)
        out.append((text, reason))
    return out


def _texts(completions) -> list[tuple[str, str]]:
    return [(c.text, c.finish_reason) for c in completions]


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("api", ["chat", "completions"])
def test_requests_carry_the_decoding_fields_and_answers_are_the_models(server, api) -> None:
    requests = _requests(5)
    out = _adapter(server, api=api, max_concurrency=2).generate(requests)
    assert [c.id for c in out] == [r.id for r in requests]
    assert _texts(out) == _reference(server, requests)
    assert all(
        c.prompt_tokens == len(r.prompt) and c.completion_tokens for c, r in zip(out, requests, strict=True)
    )
    assert len({c.text for c in out}) > 1  # the prompt matters
    first = next(r for r in server.requests if "#0" in json.dumps(r["body"]))
    assert first["path"] == ("/v1/chat/completions" if api == "chat" else "/v1/completions")
    expected = {"model": SERVED_MODEL, "max_tokens": 8, "temperature": 0.0, "seed": 7, "stop": ["\n\n"]}
    expected |= (
        {"messages": [{"role": "user", "content": "CCO #0"}]} if api == "chat" else {"prompt": "CCO #0"}
    )
    assert first["body"] == expected
    assert {r["headers"]["Authorization"] for r in server.requests} == {f"Bearer {KEY}"}


def test_no_key_means_no_authorization_header(server) -> None:
    _adapter(server, key=None).generate(_requests(2))
    assert all("Authorization" not in r["headers"] for r in server.requests)


def test_retries_recover_from_429_500_a_hang_and_broken_bodies(server) -> None:
    requests = _requests(3)
    # One request at a time: the first meets four faults, the second a malformed body.
    server.fail_next("429", "500", "hang", "truncated", "", "malformed")
    adapter = _adapter(server, max_concurrency=1, timeout_s=0.5)
    out = adapter.generate(requests)
    assert _texts(out) == _reference(server, requests)
    assert [r["fault"] for r in server.requests] == [
        "429",
        "500",
        "hang",
        "truncated",
        "",
        "malformed",
        "",
        "",
    ]
    assert adapter.stats.retries == 5 and not adapter.stats.failures and adapter.budget.sent == 8
    # Retry-After: 1 was honoured although the backoff alone would have waited 10 ms.
    assert server.requests[1]["time"] - server.requests[0]["time"] >= 1.0
    # The hang cost the client its 0.5 s timeout, not the server's 5 s.
    assert server.requests[3]["time"] - server.requests[2]["time"] < 3.0


def test_a_request_that_stays_broken_becomes_an_error_completion_and_is_not_cached(server, tmp_path) -> None:
    requests = _requests(3)
    server.fail_next("malformed", "truncated")  # a broken body is retried once, then recorded
    adapter = _adapter(server, tmp_path / "cache", max_concurrency=1)
    out = adapter.generate(requests)
    assert (out[0].text, out[0].finish_reason) == ("", "error")
    assert _texts(out[1:]) == _reference(server, requests[1:])
    assert [rid for rid, _ in adapter.stats.failures] == ["q0"]
    assert "truncated" in adapter.stats.failures[0][1]
    assert len(_files(tmp_path / "cache")) == 2
    again = _adapter(server, tmp_path / "cache")
    assert _texts(again.generate(requests)) == _reference(server, requests)
    assert again.budget.sent == 1 and again.stats.cached == 2  # only the failed one is asked again


def test_retries_give_up_after_the_limit(server) -> None:
    server.fail_next(*["500"] * 3)
    adapter = _adapter(server, max_concurrency=1, retries=2)
    out = adapter.generate(_requests(1))
    assert out[0].finish_reason == "error" and adapter.budget.sent == 3
    assert adapter.stats.failures == [("q0", 'HTTP 500: {"error": {"message": "injected 500"}}')]


def test_a_refused_key_stops_the_run_and_names_the_variable_not_the_key(server) -> None:
    server.fail_next("401")
    adapter = _adapter(server, max_concurrency=1, api_key_env="CHEMROBUST_KEY_ACME")
    with pytest.raises(EndpointError, match=r"HTTP 401 .*refuses the key \(\$CHEMROBUST_KEY_ACME\)") as info:
        adapter.generate(_requests(4))
    assert KEY not in str(info.value) and len(server.requests) == 1


def test_a_wrong_model_name_stops_the_run(server) -> None:
    adapter = _adapter(server, model="no-such-model")
    with pytest.raises(EndpointError, match=r"HTTP 404 .*model 'no-such-model'"):
        adapter.generate(_requests(2))


def test_a_dead_endpoint_opens_the_circuit(tmp_path) -> None:
    import socket

    with socket.socket() as s:  # a free loopback port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    adapter = EndpointAdapter(
        _model(f"http://127.0.0.1:{port}/v1", max_concurrency=1), retries=1, backoff_s=0.001
    )
    with pytest.raises(EndpointError, match=r"failed 8 requests in a row; last: connection error"):
        adapter.generate(_requests(20))
    assert adapter.budget.sent == 16  # 8 requests × (1 try + 1 retry), then nothing more


def test_concurrent_requests_really_overlap(server) -> None:
    # A request that outlives its timeout is sent again while the server still works on the first copy:
    # 9 in flight under a limit of 8 (seen once in CI, 1 s timeout on a loaded machine). Here the
    # timeout is far above the latency, and no retry is asserted, so the count is the pool's alone.
    server.latency_s = 0.5
    serial = _adapter(server, max_concurrency=1, timeout_s=60.0)
    serial.generate(_requests(3))
    assert server.max_in_flight == 1 and serial.stats.retries == 0
    server.max_in_flight = 0
    pooled = _adapter(server, max_concurrency=8, timeout_s=60.0)
    out = pooled.generate(_requests(16))
    assert pooled.stats.retries == 0, "a request was sent twice: the in-flight count includes the retry"
    assert server.max_in_flight == 8
    assert [c.id for c in out] == [f"q{i}" for i in range(16)]


def test_the_cache_makes_a_rerun_send_nothing_and_holds_no_key(server, tmp_path) -> None:
    requests = _requests(6)
    server.fail_next("echo_auth")  # a hostile server puts the key into an answer: scrubbed before caching
    first = _adapter(server, tmp_path / "cache").generate(requests)
    assert sum(c.text == "I saw Bearer [redacted]" for c in first) == 1
    assert not any(KEY in c.text for c in first)
    sent = len(server.requests)
    rerun = _adapter(server, tmp_path / "cache")
    assert rerun.generate(requests) == first
    assert len(server.requests) == sent and rerun.budget.sent == 0 and rerun.stats.cached == 6
    files = _files(tmp_path / "cache")
    assert len(files) == 6 and all(p.parent.name == p.stem[:2] for p in files)
    for path in files:
        text = path.read_text()
        assert KEY not in text and "Authorization" not in text  # ("Bearer" is in the echoed answer)
    # Another URL, model or decoding setting is another answer.
    other = _adapter(server, tmp_path / "cache", api="completions")
    other.generate(requests[:1])
    assert other.budget.sent == 1


def test_a_stopped_run_resumes_with_only_the_missing_requests(server, tmp_path) -> None:
    requests = _requests(10)
    stopped = _adapter(server, tmp_path / "cache", max_concurrency=2, max_requests=4)
    with pytest.raises(
        BudgetExhausted, match=r"^budget exhausted after 4 requests \(model.max_requests 4\)$"
    ):
        stopped.generate(requests)
    assert len(server.requests) == 4 and len(_files(tmp_path / "cache")) == 4  # what arrived is kept
    # A crash midway (the API refuses the key after two more answers) keeps those as well.
    server.fail_next("", "", "401")
    with pytest.raises(EndpointError, match="HTTP 401"):
        _adapter(server, tmp_path / "cache", max_concurrency=1).generate(requests)
    assert len(_files(tmp_path / "cache")) == 6
    before = len(server.requests)
    resumed = _adapter(server, tmp_path / "cache", max_concurrency=3)
    out = resumed.generate(requests)
    assert len(server.requests) - before == 4 and resumed.stats.cached == 6
    asked = {json.dumps(r["body"]) for r in server.requests[before:]}
    assert len(asked) == 4  # each missing request once, none of the cached ones
    assert _texts(out) == _reference(server, requests)


def test_the_token_budget_is_hard(server, tmp_path) -> None:
    # Each request reserves its worst case before it is sent (estimated prompt + chat overhead + its
    # 8 completion tokens, about 20 here), and spends what the API's usage says (about 17).
    adapter = _adapter(server, tmp_path / "cache", max_concurrency=2, max_tokens_total=60)
    with pytest.raises(BudgetExhausted, match=r"^token budget exhausted after \d requests: \d+ tokens spent"):
        adapter.generate(_requests(5))
    cached = [json.loads(p.read_text())["completion"] for p in _files(tmp_path / "cache")]
    spent = sum(c["prompt_tokens"] + c["completion_tokens"] for c in cached)
    assert 2 <= adapter.budget.sent == len(cached) < 5
    assert adapter.budget.tokens == spent <= 60 and adapter.budget.reserved == 0


def test_a_dry_run_sends_nothing_and_shows_payloads_without_the_key(server, tmp_path) -> None:
    requests = _requests(5)
    _adapter(server, tmp_path / "cache").generate(requests[:2])
    sent = len(server.requests)
    adapter = _adapter(server, tmp_path / "cache", api_key_env="CHEMROBUST_KEY_ACME", max_requests=3)
    plan = adapter.plan(requests)
    assert len(server.requests) == sent and adapter.budget.sent == 0
    assert (plan.requests, plan.cached, plan.to_send) == (5, 2, 3)
    assert plan.completion_tokens == 3 * 8 and plan.prompt_tokens > 0 and plan.fits()
    assert plan.examples[0]["json"]["messages"] == [{"role": "user", "content": requests[2].prompt}]
    assert plan.examples[0]["headers"]["Authorization"] == "Bearer $CHEMROBUST_KEY_ACME"
    text = plan.text()
    assert KEY not in text and KEY not in repr(adapter) and "3 to send" in text and "fits" in text
    assert not _adapter(server, tmp_path / "cache", max_requests=2).plan(requests).fits()


def test_the_endpoint_bench_runs_against_its_stand_in_and_a_cached_rerun_sends_nothing() -> None:
    from leaderboard.tools.bench_endpoint import bench

    lines: list[str] = []
    result = bench(n=8, latency_s=0.01, log=lines.append)
    assert result["rerun_requests"] == 0 and result["rps_8"] > 0 and result["rps_1"] > 0
    assert "0 requests sent" in lines[-1]
