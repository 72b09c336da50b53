"""Throughput of the endpoint adapter: concurrency 8 against 1, and a cached rerun that sends nothing.

Run it as ``python -m leaderboard.tools.bench_endpoint`` (no nox session yet: ``nox -s bench`` is the
AMORE one; a ``bench-endpoint`` session would run this module). It starts a stand-in OpenAI-compatible API on
``127.0.0.1`` that answers every request after a fixed latency (no model: this measures the client — its
pool, its HTTP exchanges, its cache — not generation), then prints requests per second at
``max_concurrency`` 1 and 8, the speed-up, and how many requests a rerun with the cache sent (0).

Side effects: a loopback server for the duration; a temporary cache folder, removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from evaluators.adapters import GenerationRequest
from leaderboard.execution.endpoint import EndpointAdapter, ResponseCache
from leaderboard.intake.endpoints import EndpointModel


class _StandIn(BaseHTTPRequestHandler):
    """Answers every POST after ``server.latency_s`` with a fixed chat completion; counts the requests."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's signature
        pass

    def do_POST(self) -> None:  # noqa: N802 - the base's naming
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:  # type: ignore[attr-defined]
            self.server.count += 1  # type: ignore[attr-defined]
        time.sleep(self.server.latency_s)  # type: ignore[attr-defined]
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "CCO"}}
        usage = {"prompt_tokens": 20, "completion_tokens": 2}
        raw = json.dumps({"choices": [choice], "usage": usage}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def bench(n: int = 64, latency_s: float = 0.05, log=print) -> dict[str, float]:
    """Measure the adapter against the stand-in API; print and return the numbers.

    Parameters
    ----------
    n : int
        Requests per measurement (distinct prompts).
    latency_s : float
        The stand-in's latency per request.
    log : callable
        Receives the report lines.

    Returns
    -------
    dict of str to float
        ``rps_1``, ``rps_8``, ``speedup`` and ``rerun_requests`` (requests the cached rerun sent).
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    server.daemon_threads = True
    server.latency_s, server.count, server.lock = latency_s, 0, threading.Lock()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    requests = [GenerationRequest(id=f"q{i}", prompt=f"Name the molecule CCO #{i}", max_new_tokens=16)
                for i in range(n)]  # fmt: skip

    def model(concurrency: int) -> EndpointModel:
        return EndpointModel(source="endpoint", architecture="decoder", capabilities=["generate"], url=url,
                             model="stand-in", max_requests=10 * n, max_concurrency=concurrency)  # fmt: skip

    out: dict[str, float] = {}
    try:
        for concurrency in (1, 8):
            started = time.perf_counter()
            EndpointAdapter(model(concurrency)).generate(requests)
            out[f"rps_{concurrency}"] = n / (time.perf_counter() - started)
        out["speedup"] = out["rps_8"] / out["rps_1"]
        with tempfile.TemporaryDirectory() as tmp:
            EndpointAdapter(model(8), cache=ResponseCache(Path(tmp))).generate(requests)
            before = server.count  # type: ignore[attr-defined]
            started = time.perf_counter()
            EndpointAdapter(model(8), cache=ResponseCache(Path(tmp))).generate(requests)
            out["rerun_s"] = time.perf_counter() - started
            out["rerun_requests"] = server.count - before  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
    log(f"endpoint bench: {n} requests, stand-in API latency {latency_s * 1000:.0f} ms")
    log(f"  max_concurrency 1   {out['rps_1']:8.1f} requests/s")
    log(f"  max_concurrency 8   {out['rps_8']:8.1f} requests/s   ({out['speedup']:.1f}× faster)")
    log(f"  cached rerun        {out['rerun_requests']:.0f} requests sent, {out['rerun_s'] * 1000:.0f} ms")
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--requests N --latency-ms MS``."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_endpoint", description=__doc__)
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args(argv)
    result = bench(args.requests, args.latency_ms / 1000)
    return 0 if result["rerun_requests"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
