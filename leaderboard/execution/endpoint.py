"""An OpenAI-compatible API as a generative adapter, called from the host with a cache and a budget.

:class:`EndpointAdapter` is a :class:`~evaluators.adapters.GenerativeAdapter` for ``model.source:
endpoint`` submissions (:mod:`leaderboard.intake.endpoints`): each
:class:`~evaluators.adapters.GenerationRequest` becomes one ``POST <url>/chat/completions`` (``api: chat``,
the prompt as one user message) or ``POST <url>/completions`` (``api: completions``) with ``max_tokens``,
``temperature``, ``seed`` and ``stop`` mapped to the API's fields. A request with images (a model whose
manifest lists ``image`` in ``model.inputs``; ``api: chat`` only) sends the user message as OpenAI's content
parts: the prompt as a ``text`` part, then each image as an ``image_url`` part (its data URI), in order; a
request without images sends the plain string as before, byte for byte. It uses the standard library's
``http.client`` only: no proxy from the environment, no redirects (a redirect could carry the key elsewhere).

Policies
--------
- **Concurrency**: at most ``max_concurrency`` requests in flight (a thread pool); results keep request order.
- **Deadlines**: one HTTP request — connect, the request, the response headers and the whole body — has
  ``timeout_s`` in all (the manifest's ``model.timeout_s``), never more: a watchdog thread shuts the
  socket down at the deadline (:mod:`leaderboard.execution.endpoint_http`), so a server that drips bytes,
  drips its headers, accepts and never answers, or streams a body without end is cut there. The run has a
  deadline too (``deadline``: the runner's wall-clock limit, ``limits.timeout_s``): no request starts
  after it, a request in flight is cut at it, and a backoff wait ends at it; the run then stops with
  :class:`EndpointTimeout`. Name resolution has the request's deadline too
  (:func:`~leaderboard.execution.endpoint_http.resolve`: a resolver that never answers is left behind),
  and the first address found is pinned for the run: the name cannot point elsewhere mid-run.
- **Retries**: 408, 429, 5xx, connection errors and timeouts are retried up to ``retries`` times with
  exponential backoff and a deterministic jitter (a hash of the request and the attempt, so reruns wait
  alike); a ``Retry-After`` header is a floor for the wait. A malformed or truncated body is retried once.
  Retries also have a time budget: one request's attempts and waits together take at most
  ``retry_budget_s`` (default three times ``timeout_s``, at least 30 s); no retry starts unless its wait
  and a whole ``timeout_s`` still fit in what is left of it.
- **Failures**: a request that still fails, or that the API refuses as bad (400, 413, 422 …), becomes an
  empty completion with ``finish_reason "error"`` (an unusable answer, scored as missing) and is listed in
  :attr:`EndpointStats.failures`; it is not cached, so a rerun asks again. 401/403 (the key), 404 (URL or
  model) and redirects stop the run at once (:class:`EndpointError`), and so do
  :data:`CIRCUIT_BREAK` failed requests in a row (a dead endpoint). The runner fails a run with more than
  :data:`MAX_FAILED_SHARE` failed requests.
- **Budget**: every HTTP request sent counts against ``max_requests``, retries included; tokens are the
  API's ``usage`` (an estimate when it gives none). Before each request its worst case (estimated prompt
  tokens, an image a fixed :data:`~.endpoint_cache.IMAGE_TOKENS`, + ``max_tokens``) is reserved, so the
  token budget is never passed by more than the prompt estimate's error. Exhausted, no new request is
  sent, the ones in flight finish (and are cached), and :class:`BudgetExhausted` stops the run. Answers
  from the cache never count. An evaluation's cap across its runs (``evaluate --max-requests/--max-tokens``,
  :class:`~.endpoint_spend.SpendCap`, passed as ``cap``) is asked in the same step, so it stops a run the
  same way.
- **Cache**: :class:`ResponseCache`, one JSON file per answer under ``<state>/endpoint-cache/`` written
  atomically as it arrives, keyed by the sha256 of (URL, model, API kind, prompt, decoding settings, and
  the sha256 of each image when there are any: a text request's key is what it was before images): a
  rerun sends nothing, a killed run resumes with the missing answers only.
- **Dry run**: :meth:`EndpointAdapter.plan` says what a run would send (request count, cache hits,
  estimated tokens, example payloads, their images' data URIs shortened) and sends nothing.
- **Images**: a request with images for a model that does not list ``image`` in ``model.inputs``, or for
  ``api: completions`` (a text prompt only), raises :class:`TypeError` before anything is sent: an image is
  never dropped in silence.

Invariants
----------
- The key travels only in the ``Authorization`` header. It is never in the cache, a payload shown by a dry
  run, an exception, a log line or a completion: :func:`scrub_secret` removes it from every text that leaves
  this module (a server that echoes it back included).

Side effects: network requests to ``url``; files under the cache folder.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from evaluators.adapters import Completion, GenerationRequest, GenerativeAdapter, ModelConfig
from leaderboard.execution.endpoint_cache import (
    IMAGE_TOKENS,
    Budget,
    BudgetExhausted,
    DryRun,
    EndpointError,
    EndpointTimeout,
    ResponseCache,
    estimate_tokens,
    image_digests,
    scrub_secret,
    shorten_data_uri,
    shown_payload,
)
from leaderboard.execution.endpoint_http import Watchdog, open_connection, resolve, time_left
from leaderboard.execution.endpoint_spend import SpendCap
from leaderboard.intake.endpoints import API_PATHS, EndpointModel

__all__ = [
    "BudgetExhausted", "Budget", "DryRun", "EndpointAdapter", "EndpointError", "EndpointStats",
    "EndpointTimeout", "ResponseCache", "scrub_secret",
]  # fmt: skip

#: A response body larger than this is refused (no completion is that long).
MAX_RESPONSE_BYTES = 8 * 1024**2
#: Retries of a malformed or truncated body: it was sent in full, so a second failure is the server's.
MALFORMED_RETRIES = 1
#: Failed requests in a row (after their retries) that stop the run: the endpoint is down.
CIRCUIT_BREAK = 8
#: Share of a run's requests that may fail before the run fails.
MAX_FAILED_SHARE = 0.05
#: One request's retry time budget by default, in multiples of ``model.timeout_s`` (attempts and waits).
RETRY_BUDGET_TIMEOUTS = 3.0
#: ... and at least this many seconds (a short ``timeout_s`` still leaves room for a ``Retry-After``).
RETRY_BUDGET_MIN_S = 30.0
#: Tokens a chat API adds around one user message (role markers).
CHAT_OVERHEAD_TOKENS = 8
_RETRY_STATUS = frozenset({408, 425, 429})
_FATAL_STATUS = frozenset({401, 403, 404})


class _Malformed(ValueError):
    """A response body that is not the API's JSON (or was cut short)."""


class _Stopped(EndpointError):
    """A request not sent because another one stopped the run (never the reason reported)."""


@dataclass
class EndpointStats:
    """What a run did: answers from the cache and received, retries, failed requests, tokens of the answers.

    ``prompt_tokens`` and ``completion_tokens`` add up the API's ``usage`` of every answer received (an
    estimate for an answer without it, counted in ``unmetered``).
    """

    cached: int = 0
    received: int = 0
    retries: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unmetered: int = 0

    def line(self, budget: Budget) -> str:
        """Return one line for the log."""
        return (
            f"endpoint: {budget.sent} HTTP request(s) sent, {self.received} answer(s) received, "
            f"{self.cached} from the cache, {self.retries} retried, {len(self.failures)} failed; "
            f"{budget.tokens} tokens spent"
        )


class EndpointAdapter(GenerativeAdapter):
    """Generation by an OpenAI-compatible API (module docstring: retries, failures, budget, cache).

    Parameters
    ----------
    model : leaderboard.intake.endpoints.EndpointModel
        The manifest's ``model`` (URL, model name, API kind, concurrency, timeout, budget).
    key : str, optional
        The API key (read by the caller from the variable ``model.api_key_env`` names); ``None``: no
        ``Authorization`` header.
    cache : ResponseCache, optional
        Where answers are kept; ``None``: no cache.
    prompt_prefix : str
        Text put before every prompt (the manifest's ``tokenizer.prompt_prefix``).
    retries : int
        Retries of a transient failure.
    backoff_s, max_backoff_s : float
        First wait between attempts (doubled each time) and its ceiling.
    max_retry_after_s : float
        Longest ``Retry-After`` honoured.
    deadline : float, optional
        A ``time.monotonic()`` after which no request is sent and at which requests in flight are cut (the
        run's wall-clock limit).
    retry_budget_s : float, optional
        The most seconds one request may take over all its attempts and the waits between them;
        ``None``: :data:`RETRY_BUDGET_TIMEOUTS` times ``model.timeout_s``, at least
        :data:`RETRY_BUDGET_MIN_S`.
    cap : leaderboard.execution.endpoint_spend.SpendCap, optional
        The evaluation's cap across its runs (``evaluate --max-requests/--max-tokens``), asked before each
        request with this run's budget.
    """

    def __init__(
        self,
        model: EndpointModel,
        *,
        key: str | None = None,
        cache: ResponseCache | None = None,
        prompt_prefix: str = "",
        retries: int = 5,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        deadline: float | None = None,
        retry_budget_s: float | None = None,
        cap: SpendCap | None = None,
    ) -> None:
        images = "image" in model.inputs
        super().__init__(ModelConfig(adapter="endpoint", architecture=model.architecture, images=images))
        self.model, self.cache, self.prompt_prefix = model, cache, prompt_prefix
        self.retries, self.backoff_s, self.max_backoff_s = retries, backoff_s, max_backoff_s
        self.max_retry_after_s, self.deadline = max_retry_after_s, deadline
        if retry_budget_s is None:
            retry_budget_s = max(RETRY_BUDGET_TIMEOUTS * model.timeout_s, RETRY_BUDGET_MIN_S)
        self.retry_budget_s = float(retry_budget_s)
        self._key = key or None
        self.budget = Budget(model.max_requests, model.max_tokens_total, shared=cap)
        self.stats = EndpointStats()
        self.url = model.url.rstrip("/")
        parts = urlsplit(self.url)
        self._https, self._host, self._port = parts.scheme == "https", parts.hostname or "", parts.port
        self._address: str | None = None  # resolved once, within the first request's deadline
        self._path = parts.path + API_PATHS[model.api]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._in_a_row = 0

    def __repr__(self) -> str:  # never the key
        return f"EndpointAdapter({self.model.api} {self.url}, model={self.model.model!r})"

    def describe(self) -> dict[str, Any]:  # noqa: D102
        return {"endpoint": self.url, "endpoint_model": self.model.model, "api": self.model.api}

    def scrub(self, text: str) -> str:
        """Return ``text`` without the key."""
        return scrub_secret(text, self._key)

    # ------------------------------------------------------------------ requests

    def check_request(self, request: GenerationRequest) -> None:
        """Refuse a request this endpoint cannot be sent as it is (called for all before any is sent).

        Raises
        ------
        TypeError
            If it has images and the model does not list ``image`` in ``model.inputs``, or its API is
            ``completions`` (text only): the prompt without its image would be another question.
        ValueError
            If an image is not a ``data:image/…;base64,`` URI (with a URL the API would fetch elsewhere).
        """
        if not request.images:
            return
        n = len(request.images)
        if "image" not in self.model.inputs:
            raise TypeError(
                f"request {request.id!r} has {n} image(s), but the endpoint model {self.model.model!r} does "
                f"not read images (model.inputs: {list(self.model.inputs)}); list 'image' in model.inputs "
                "for a model that does, or ask it text questions only"
            )
        if self.model.api != "chat":
            raise TypeError(
                f"request {request.id!r} has {n} image(s), but model.api is {self.model.api!r}: only the "
                "chat API carries images (image_url parts of the user message); use 'model.api: chat'"
            )
        for uri in request.images:
            if not (isinstance(uri, str) and uri.startswith("data:image/") and ";base64," in uri):
                shown = shorten_data_uri(uri) if isinstance(uri, str) else type(uri).__name__
                raise ValueError(f"request {request.id!r}: not a data:image/…;base64, URI: {shown!r}")

    def request_fields(self, request: GenerationRequest) -> dict[str, Any]:
        """Return what identifies a request's answer (the cache key's fields; no key, no header).

        ``images`` (the sha256 of each data URI, in order) is there only when the request has images, so
        that a text request keeps the fields, hence the cache key, it had before images existed.
        """
        fields: dict[str, Any] = {
            "url": self.url,
            "model": self.model.model,
            "api": self.model.api,
            "prompt": self.prompt_prefix + request.prompt,
            "max_tokens": int(request.max_new_tokens),
            "temperature": float(request.temperature),
            "seed": int(request.seed),
            "stop": list(request.stop),
        }
        if request.images:
            fields["images"] = image_digests(request.images)
        return fields

    def payload(self, fields: dict[str, Any], images: Sequence[str] = ()) -> dict[str, Any]:
        """Return the JSON body of a request (``images``: its data URIs, those ``fields["images"]`` hash).

        Without images the user message's content is the prompt string (the body of a text request is
        what it was before images existed); with images it is a list of parts, the text first.

        Raises
        ------
        ValueError
            If ``images`` are not those ``fields`` hash (the answer would be cached under another key).
        TypeError
            If there are images and the API is ``completions``.
        """
        if image_digests(images) != fields.get("images", []):
            raise ValueError("the images are not those of the request fields")
        body: dict[str, Any] = {"model": fields["model"]}
        if fields["api"] == "chat":
            content: str | list[dict[str, Any]] = fields["prompt"]
            if images:
                content = [{"type": "text", "text": fields["prompt"]}]
                content += [{"type": "image_url", "image_url": {"url": uri}} for uri in images]
            body["messages"] = [{"role": "user", "content": content}]
        elif images:
            raise TypeError("the completions API takes a text prompt only: images need 'model.api: chat'")
        else:
            body["prompt"] = fields["prompt"]
        body.update(max_tokens=fields["max_tokens"], temperature=fields["temperature"], seed=fields["seed"])
        if fields["stop"]:
            body["stop"] = fields["stop"]
        return body

    def _worst_case(self, fields: dict[str, Any]) -> int:
        """Return a request's token reservation: estimated prompt (text and images) + ``max_tokens``."""
        overhead = CHAT_OVERHEAD_TOKENS if fields["api"] == "chat" else 0
        images = IMAGE_TOKENS * len(fields.get("images", ()))  # by pixels, not base64 bytes: see IMAGE_TOKENS
        return estimate_tokens(fields["prompt"]) + images + overhead + fields["max_tokens"]

    def plan(self, requests: Sequence[GenerationRequest], *, examples: int = 2) -> DryRun:
        """Say what :meth:`generate` would send for ``requests``, sending nothing (a dry run)."""
        cached = prompt = completion = 0
        pending: set[str] = set()
        shown: list[dict[str, Any]] = []
        headers = {"Content-Type": "application/json"}
        if self.model.api_key_env:  # the variable's name only: a dry run never reads the key
            headers["Authorization"] = f"Bearer ${self.model.api_key_env}"
        for request in requests:
            self.check_request(request)
        for request in requests:
            fields = self.request_fields(request)
            key = ResponseCache.key(fields)
            if self.cache is not None and self.cache.get(key, fields) is not None:
                cached += 1
                continue
            if key in pending:  # asked once for all its copies (generate)
                continue
            pending.add(key)
            worst = self._worst_case(fields)
            prompt += worst - fields["max_tokens"]
            completion += fields["max_tokens"]
            if len(shown) < examples:
                shown.append({"POST": self.url + API_PATHS[self.model.api], "headers": headers,
                              "json": shown_payload(self.payload(fields, request.images))})  # fmt: skip
        m = self.model
        return DryRun(self.url, m.model, m.api, len(requests), cached, len(pending), prompt, completion,
                      m.max_requests, m.max_tokens_total, tuple(shown))  # fmt: skip

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Answer each request from the cache or the API, in request order (module docstring).

        Raises
        ------
        BudgetExhausted
            When the budget is spent (answers received so far are cached).
        EndpointError
            When the API refuses the key, does not know the URL or model, redirects, is down, or the run's
            wall-clock limit passed.
        TypeError, ValueError
            When a request has images this endpoint cannot be sent (:meth:`check_request`); nothing is sent.
        """
        for request in requests:  # all before the first is sent: a run is not cut midway by a bad one
            self.check_request(request)
        out: list[Completion | None] = [None] * len(requests)
        # Identical requests (a randomized SMILES that came out canonical) are asked once, answered alike.
        todo: dict[str, tuple[GenerationRequest, dict[str, Any], list[int]]] = {}
        for i, request in enumerate(requests):
            fields = self.request_fields(request)
            key = ResponseCache.key(fields)
            hit = self.cache.get(key, fields) if self.cache is not None else None
            if hit is None:
                todo.setdefault(key, (request, fields, []))[2].append(i)
            else:
                out[i] = replace(hit, id=request.id)
                self.stats.cached += 1
        if todo:
            workers = min(self.model.max_concurrency, len(todo))
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="endpoint") as pool:
                futures = {pool.submit(self._ask, r, f, k): where for k, (r, f, where) in todo.items()}
                try:
                    done, _ = wait(futures, return_when=FIRST_EXCEPTION)
                    errors = [f.exception() for f in done if f.exception() is not None]
                    errors.sort(key=lambda e: isinstance(e, _Stopped))  # the cause first
                    if errors:
                        raise errors[0]
                except BaseException:  # a stopped run, or Ctrl-C in this thread
                    # Stop the others: queued ones never start, waiting ones wake up; the ones in flight
                    # finish and cache their answers before the pool closes.
                    self._stop.set()
                    for future in futures:
                        future.cancel()
                    raise
                for future, where in futures.items():
                    for i in where:
                        out[i] = replace(future.result(), id=requests[i].id)
        return out  # type: ignore[return-value]

    def _ask(self, request: GenerationRequest, fields: dict[str, Any], key: str) -> Completion:
        """Get one answer from the API: retries, budget, cache (module docstring)."""
        try:
            return self._attempts(request, fields, key)
        except EndpointError:
            self._stop.set()  # before this worker takes the next request: nothing more is sent
            raise

    def _attempts(self, request: GenerationRequest, fields: dict[str, Any], key: str) -> Completion:
        body = json.dumps(self.payload(fields, request.images), ensure_ascii=False).encode("utf-8")
        worst = self._worst_case(fields)
        attempt = malformed = 0
        budget_end = time.monotonic() + self.retry_budget_s
        while True:
            if self._stop.is_set():
                raise _Stopped("stopped: another request stopped the run")
            if self.deadline is not None and time.monotonic() >= self.deadline:
                raise EndpointTimeout("the run's time limit passed; the answers received are cached")
            self.budget.acquire(worst)
            retry_after = 0.0
            try:
                status, headers, raw = self._post(body)
            except http.client.IncompleteRead:
                self.budget.settle(worst, worst)  # the server may have done the work: count it
                malformed += 1
                problem = "truncated response body"
            except (OSError, http.client.HTTPException) as exc:  # timeouts and connection errors
                self.budget.settle(worst, worst)
                kind = "timeout" if isinstance(exc, TimeoutError) else "connection error"
                problem = f"{kind}: {type(exc).__name__}: {exc}"
            else:
                if status == 200:
                    try:
                        completion = self._completion(request, raw)
                    except _Malformed as exc:
                        self.budget.settle(worst, worst)
                        malformed += 1
                        problem = f"malformed response: {exc}"
                    else:
                        spent = (completion.prompt_tokens or 0) + (completion.completion_tokens or 0)
                        self.budget.settle(worst, spent or worst)
                        if self.cache is not None:
                            self.cache.put(key, fields, completion)
                        self._count(completion, worst - fields["max_tokens"])
                        return completion
                else:
                    self.budget.settle(worst, 0)
                    problem = f"HTTP {status}: {self._excerpt(raw)}"
                    if status in _FATAL_STATUS or 300 <= status < 400:
                        raise EndpointError(self._fatal(status, headers, raw))
                    if not (status in _RETRY_STATUS or status >= 500):
                        return self._failed(request, problem)  # the API refuses this request as it is
                    retry_after = _retry_after(headers.get("Retry-After"))
            if malformed > MALFORMED_RETRIES or attempt >= self.retries:
                return self._failed(request, problem)
            delay = min(self.max_backoff_s, self.backoff_s * 2**attempt) * (1 + 0.5 * _jitter(key, attempt))
            delay = max(delay, min(retry_after, self.max_retry_after_s))
            if time.monotonic() + delay + self.model.timeout_s > budget_end:
                return self._failed(
                    request, f"{problem} (retry budget of {self.retry_budget_s:g} s spent: "
                    f"{attempt + 1} attempt(s), no time for another)"
                )  # fmt: skip
            with self._lock:
                self.stats.retries += 1
            if self.deadline is not None:  # a wait past the run's deadline ends at it (then the run stops)
                delay = min(delay, max(0.0, self.deadline - time.monotonic()))
            self._stop.wait(delay)
            attempt += 1

    def _count(self, completion: Completion, prompt_estimate: int) -> None:
        """Count an answer received and its tokens (the API's ``usage``, else an estimate)."""
        prompt, done = completion.prompt_tokens, completion.completion_tokens
        with self._lock:
            self.stats.received += 1
            self._in_a_row = 0
            self.stats.prompt_tokens += prompt_estimate if prompt is None else prompt
            self.stats.completion_tokens += estimate_tokens(completion.text) if done is None else done
            self.stats.unmetered += prompt is None or done is None

    def _failed(self, request: GenerationRequest, problem: str) -> Completion:
        """Record a failed request (an empty completion) and open the circuit after too many in a row."""
        problem = self.scrub(problem)
        with self._lock:
            self.stats.failures.append((request.id, problem))
            self._in_a_row += 1
            in_a_row = self._in_a_row
        if in_a_row >= max(CIRCUIT_BREAK, 2 * self.model.max_concurrency):
            raise EndpointError(f"the endpoint failed {in_a_row} requests in a row; last: {problem}")
        return Completion(request.id, "", "error")

    def _fatal(self, status: int, headers: Any, raw: bytes) -> str:
        if status in (401, 403):
            where = f"${self.model.api_key_env}" if self.model.api_key_env else "no key (model.api_key_env)"
            return f"HTTP {status} from the endpoint: it refuses the key ({where}): {self._excerpt(raw)}"
        if status == 404:
            return (
                f"HTTP 404 from the endpoint: no {self._path} for model {self.model.model!r} — check "
                f"model.url and model.model: {self._excerpt(raw)}"
            )
        target = self.scrub(str(headers.get("Location", "")))[:200]
        return f"HTTP {status}: the endpoint redirects (to {target!r}); give the final address as model.url"

    def _excerpt(self, raw: bytes) -> str:
        text = " ".join(raw[:2000].decode("utf-8", errors="replace").split())
        return self.scrub(text)[:200] or "(empty body)"

    def _post(self, body: bytes) -> tuple[int, Any, bytes]:
        """Send one request; return status, headers and body (the whole exchange within ``timeout_s``).

        The deadline is the sooner of ``timeout_s`` from now and the run's: a
        :class:`~leaderboard.execution.endpoint_http.Watchdog` shuts the socket down there, whatever the
        exchange is doing (the socket's timeout is also the time left before each step). A request cut
        so raises :class:`TimeoutError`, whatever the cut made ``http.client`` see.
        """
        now = time.monotonic()
        deadline = now + self.model.timeout_s
        if self.deadline is not None:
            deadline = min(deadline, self.deadline)
        timeout = max(deadline - now, 0.001)
        if self._address is None:
            try:
                self._address = resolve(self._host, self._port or (443 if self._https else 80), deadline)
            except TimeoutError:
                raise TimeoutError(f"the endpoint's name did not resolve within {timeout:g} s") from None
        watchdog = Watchdog(deadline)
        conn = open_connection(self._https, self._host, self._port, timeout, watchdog, self._address)
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "User-Agent": "chemrobust-endpoint/1"}  # fmt: skip
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        try:
            conn.request("POST", self._path, body=body, headers=headers)
            time_left(conn, deadline, timeout)
            response = conn.getresponse()
            chunks, size = [], 0
            while True:
                time_left(conn, deadline, timeout)
                chunk = response.read(64 * 1024)
                if not chunk:
                    # read(amt) returns short instead of raising when the peer hangs up early.
                    if response.length:
                        raise http.client.IncompleteRead(b"", response.length)
                    break
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise http.client.IncompleteRead(b"", None)  # treated as a broken body
                chunks.append(chunk)
            if watchdog.fired:  # cut at the deadline: what was read is not the whole answer
                raise OSError("cut")
            return response.status, response.headers, b"".join(chunks)
        except (OSError, http.client.HTTPException):
            if watchdog.fired or time.monotonic() >= deadline:
                raise TimeoutError(
                    f"no complete response within {timeout:g} s (connect, headers and body)"
                ) from None
            raise
        finally:
            watchdog.stop()
            conn.close()

    def _completion(self, request: GenerationRequest, raw: bytes) -> Completion:
        """Parse a 200 response into a completion (text cut at the first stop string, key scrubbed)."""
        try:
            document = json.loads(raw)
            choice = document["choices"][0]
            text = choice["message"]["content"] if self.model.api == "chat" else choice["text"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Malformed(f"{type(exc).__name__}: {self._excerpt(raw)}") from None
        if text is None:  # a chat answer with no content (a refusal, a tool call)
            text = ""
        if not isinstance(text, str):
            raise _Malformed(f"the completion is a {type(text).__name__}, not text")
        # Servers that ignore ``stop`` still give the text the track expects.
        cuts = [text.find(s) for s in request.stop if s and s in text]
        if cuts:
            text = text[: min(cuts)]
        reason = choice.get("finish_reason")
        usage = document.get("usage") if isinstance(document.get("usage"), dict) else {}
        counts = [usage.get(k) for k in ("prompt_tokens", "completion_tokens")]
        return Completion(
            request.id,
            self.scrub(text),
            reason if reason in ("length", "content_filter") and not cuts else "stop",
            *(c if isinstance(c, int) and not isinstance(c, bool) and c >= 0 else None for c in counts),
        )


def _jitter(key: str, attempt: int) -> float:
    """Return a fraction in [0, 1) fixed by the request and the attempt (deterministic jitter)."""
    return int(hashlib.sha256(f"{key}:{attempt}".encode()).hexdigest()[:8], 16) / 2**32


def _retry_after(value: str | None) -> float:
    """Return the seconds a ``Retry-After`` header asks to wait (0 when absent or unreadable)."""
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0.0
