"""The endpoint client's deadlines against slow loopback servers (issue 30, part 2).

A server that drips its body or its headers a byte at a time, accepts and never answers, or streams a body
without end holds one request no longer than its ``timeout_s`` (connect, headers and body in all), a run no
longer than its deadline, and a request's retries no longer than their time budget; an honest server's
answers are unchanged. Every server is the loopback one of ``tests/execution/_openai_server.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from leaderboard.execution.endpoint import EndpointAdapter, EndpointTimeout
from tests.execution._openai_server import OpenAIServer, tiny_model
from tests.execution.test_endpoint import KEY, _model, _reference, _requests, _texts

#: What a loaded machine may add to a deadline (thread wake-ups, the tiny model's generation).
SLACK_S = 1.0
SLOW_FAULTS = ["drip_body", "drip_headers", "hang", "stream"]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("tiny_gpt2"))


@pytest.fixture
def server(model_dir):
    # Each slow fault alone would hold a connection for a minute or more (a drip's ~150 bytes at 0.5 s).
    with OpenAIServer(model_dir, hang_s=60.0, drip_s=0.5, stream_s=60.0) as srv:
        yield srv


def _adapter(server, **kw) -> EndpointAdapter:
    options = {k: kw.pop(k) for k in ("retries", "backoff_s", "deadline", "retry_budget_s") if k in kw}
    return EndpointAdapter(_model(server.url, **kw), key=KEY, **{"backoff_s": 0.01, **options})


@pytest.mark.parametrize("fault", SLOW_FAULTS)
def test_a_slow_server_holds_a_request_no_longer_than_its_timeout(server, fault) -> None:
    server.fail_next(fault)
    adapter = _adapter(server, max_concurrency=1, timeout_s=1.0, retries=0)
    start = time.monotonic()
    out = adapter.generate(_requests(1))
    elapsed = time.monotonic() - start
    assert out[0].finish_reason == "error" and len(server.requests) == 1
    assert elapsed < 1.0 + SLACK_S, f"{fault} held the request {elapsed:.1f} s"
    [(rid, reason)] = adapter.stats.failures
    assert rid == "q0"
    assert reason == "timeout: TimeoutError: no complete response within 1 s (connect, headers and body)"


def test_the_run_stops_at_its_deadline_even_with_requests_in_flight(server) -> None:
    server.fail_next(*["drip_body"] * 8)
    adapter = _adapter(server, max_concurrency=2, timeout_s=30.0, deadline=time.monotonic() + 1.5)
    start = time.monotonic()
    with pytest.raises(EndpointTimeout, match="the run's time limit passed"):
        adapter.generate(_requests(4))
    elapsed = time.monotonic() - start
    assert elapsed < 1.5 + SLACK_S, f"the run took {elapsed:.1f} s"
    assert len(server.requests) == 2  # the two in flight; nothing starts after the deadline


def test_retries_stop_at_their_time_budget(server) -> None:
    server.fail_next(*["stream"] * 20)
    adapter = _adapter(server, max_concurrency=1, timeout_s=0.5, retries=10, retry_budget_s=1.8)
    start = time.monotonic()
    out = adapter.generate(_requests(1))
    elapsed = time.monotonic() - start
    # Attempts at about 0, 0.5 and 1.0 s; a fourth (1.5 s + its 0.5 s) would not fit in 1.8 s.
    assert len(server.requests) == 3 and adapter.budget.sent == 3, len(server.requests)
    assert out[0].finish_reason == "error" and elapsed < 1.8 + SLACK_S
    [(_, reason)] = adapter.stats.failures
    assert reason.startswith("timeout: TimeoutError: no complete response within 0.5 s")
    assert reason.endswith("(retry budget of 1.8 s spent: 3 attempt(s), no time for another)")


def test_the_default_retry_budget_is_three_timeouts_and_at_least_30_s(server) -> None:
    assert _adapter(server, timeout_s=60.0).retry_budget_s == 180.0
    assert _adapter(server, timeout_s=1.0).retry_budget_s == 30.0


def test_an_honest_server_answers_alike_under_the_deadlines(server) -> None:
    requests = _requests(6)
    server.latency_s = 0.3  # slow but within every deadline
    server.fail_next("429", "stream")  # a retry after a 429 and after a cut stream still recovers
    adapter = _adapter(server, max_concurrency=2, timeout_s=1.0, deadline=time.monotonic() + 60)
    out = adapter.generate(requests)
    assert _texts(out) == _reference(server, requests)
    assert adapter.stats.failures == [] and adapter.stats.retries == 2


# Name resolution: the one step before any socket exists. The resolver is stood in for (monkeypatched
# ``socket.getaddrinfo``) so that nothing leaves the machine: a slow one never answers within the test, a
# pinned one maps a made-up name to the loopback server.


def _resolver(monkeypatch, answer):
    import socket

    calls: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host.endswith(".test"):
            calls.append(host)
            return answer(host, port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return calls


def test_a_silent_resolver_holds_a_request_no_longer_than_its_timeout(server, monkeypatch) -> None:
    import socket

    def never(host, port):
        time.sleep(5.0)  # far past the request's 1 s: without the deadline the request waits for this
        raise socket.gaierror(socket.EAI_AGAIN, "temporary failure in name resolution")

    _resolver(monkeypatch, never)
    port = server.url.split(":")[2].split("/")[0]
    adapter = EndpointAdapter(_model(f"http://slow-dns.test:{port}/v1", max_concurrency=1, timeout_s=1.0),
                              key=KEY, backoff_s=0.01, retries=0)  # fmt: skip
    start = time.monotonic()
    out = adapter.generate(_requests(1))
    elapsed = time.monotonic() - start
    assert out[0].finish_reason == "error" and len(server.requests) == 0
    assert elapsed < 1.0 + SLACK_S, f"the resolver held the request {elapsed:.1f} s"
    [(_, reason)] = adapter.stats.failures
    assert reason == "timeout: TimeoutError: the endpoint's name did not resolve within 1 s"


def test_the_first_address_is_pinned_for_the_run(server, monkeypatch) -> None:
    import socket

    def loopback(host, port):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port)))]

    calls = _resolver(monkeypatch, loopback)
    port = server.url.split(":")[2].split("/")[0]
    requests = _requests(3)
    adapter = EndpointAdapter(_model(f"http://pinned.test:{port}/v1", max_concurrency=1, timeout_s=5.0),
                              key=KEY, backoff_s=0.01)  # fmt: skip
    out = adapter.generate(requests)
    assert _texts(out) == _reference(server, requests) and len(server.requests) == 3
    assert calls == ["pinned.test"]  # resolved once: a name cannot move to another address mid-run
