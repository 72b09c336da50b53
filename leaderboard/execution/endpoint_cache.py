"""What an endpoint run spends and keeps: its budget, its response cache, its dry-run report, its errors.

Also the few facts about images that the budget, the cache key and the dry run share: a fixed token estimate
per image (:data:`IMAGE_TOKENS`), an image's digest (:func:`image_digests`) and its shortened form for
display (:func:`shorten_data_uri`).

Used by :mod:`leaderboard.execution.endpoint` (the adapter that calls the API; its docstring gives the
policies) and :mod:`leaderboard.execution.endpoint_runner`. Nothing here touches the network or holds a key:
:func:`scrub_secret` is how the key is kept out of every text that leaves those modules.

Side effects: :class:`ResponseCache` reads and writes files under its folder.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evaluators.adapters import Completion

__all__ = [
    "BYTES_PER_TOKEN", "IMAGE_TOKENS", "REDACTED", "Budget", "BudgetExhausted", "DryRun", "EndpointError",
    "EndpointTimeout", "ResponseCache", "estimate_tokens", "image_digests", "scrub_secret",
    "shorten_data_uri", "shown_payload",
]  # fmt: skip

#: Prompt tokens are estimated as bytes / this (pessimistic: SMILES and names tokenise densely).
BYTES_PER_TOKEN = 3
#: What replaces the key in any text.
REDACTED = "[redacted]"
#: Prompt tokens reserved for one image. An API counts an image by its pixels, not its bytes (the base64
#: of a 6-15 kB drawing would read as thousands of text tokens), and each model family counts its own
#: way; for the 300×300 depictions the tracks show, roughly 100-600 (GPT-4o high detail: 85 + 170 per
#: 512-pixel tile = 255; Claude: pixels / 750 ≈ 120; Gemini: 258; LLaVA-1.5: 576 patches). 1 000 covers
#: those with room, so the reservation before a request stays a worst case; the budget then settles on
#: the API's own ``usage``. An API that bills images far higher (GPT-4o mini counts thousands a tile)
#: can pass ``max_tokens_total`` by at most the shortfall of the requests in flight.
IMAGE_TOKENS = 1_000
#: Characters of a data URI a dry run shows before it says how long the rest is.
SHOWN_URI_CHARS = 40


class EndpointError(RuntimeError):
    """The run cannot go on: the API refused the key, the URL or model is wrong, or it is down."""


class BudgetExhausted(EndpointError):
    """The run's request or token budget is spent; nothing more is sent."""


class EndpointTimeout(EndpointError):
    """The run's wall-clock limit passed; nothing more is sent."""


def scrub_secret(text: str, secret: str | None) -> str:
    """Return ``text`` without ``secret`` (replaced by ``[redacted]``); unchanged when there is none."""
    return text.replace(secret, REDACTED) if secret else text


def estimate_tokens(text: str) -> int:
    """Return a pessimistic token count of ``text`` (:data:`BYTES_PER_TOKEN` bytes a token)."""
    return math.ceil(len(text.encode("utf-8")) / BYTES_PER_TOKEN) + 1


def image_digests(images: Sequence[str]) -> list[str]:
    """Return ``sha256:<hex>`` of each image's data URI, in order (what a cache key holds of an image).

    A digest, not the URI: keys and cache entries stay small, and two requests that differ only by an
    image still differ.
    """
    return ["sha256:" + hashlib.sha256(uri.encode("utf-8")).hexdigest() for uri in images]


def shorten_data_uri(uri: str) -> str:
    """Return ``uri`` for display: its first :data:`SHOWN_URI_CHARS` characters and its length.

    For what a dry run prints (``data:image/png;base64,iVBORw0KGgoAAAANSU…(9120 bytes)``), never for
    what is sent; a URI that short is returned whole.
    """
    if len(uri) <= SHOWN_URI_CHARS:
        return uri
    return f"{uri[:SHOWN_URI_CHARS]}…({len(uri.encode('utf-8'))} bytes)"


def shown_payload(body: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a request body for a dry run: each image's data URI shortened (never what is sent)."""
    messages = []
    for message in body.get("messages", ()):
        content = message["content"]
        if isinstance(content, list):
            content = [
                {**part, "image_url": {"url": shorten_data_uri(part["image_url"]["url"])}}
                if part.get("type") == "image_url" else part
                for part in content
            ]  # fmt: skip
        messages.append({**message, "content": content})
    return {**body, "messages": messages} if "messages" in body else dict(body)


class SharedCap(Protocol):
    """What :class:`Budget` asks of a cap shared by several runs (``endpoint_spend.SpendCap`` is one).

    A protocol, not an import: the spend module builds on this one, so this one may not import it.
    """

    def acquire(self, worst_case: int) -> None:
        """Count one request and reserve its worst-case tokens, or raise ``BudgetExhausted``."""

    def settle(self, worst_case: int, spent: int) -> None:
        """Replace a reservation by the tokens spent."""


class Budget:
    """The run's hard budget: HTTP requests sent and tokens spent (thread-safe).

    Parameters
    ----------
    max_requests : int
        Requests one run may send, retries included.
    max_tokens : int or None
        Tokens (prompt + completion) one run may spend; ``None``: no token budget.
    shared : SharedCap, optional
        The evaluation's cap across its runs (:class:`~leaderboard.execution.endpoint_spend.SpendCap`,
        ``evaluate --max-requests/--max-tokens``): asked in the same step, after this run's budget, so a
        request either counts against both or is not sent.
    """

    def __init__(
        self, max_requests: int, max_tokens: int | None = None, *, shared: SharedCap | None = None
    ) -> None:
        self.max_requests, self.max_tokens, self.shared = max_requests, max_tokens, shared
        self.sent = self.tokens = self.reserved = 0
        self._lock = threading.Lock()

    def acquire(self, worst_case: int) -> None:
        """Count one request about to be sent and reserve its worst-case tokens.

        Raises
        ------
        BudgetExhausted
            If the request or the token budget (or the shared cap: ``CapReached``) does not allow it;
            nothing is counted then.
        """
        with self._lock:
            if self.sent >= self.max_requests:
                raise BudgetExhausted(
                    f"budget exhausted after {self.sent} requests (model.max_requests {self.max_requests})"
                )
            if self.max_tokens is not None and self.tokens + self.reserved + worst_case > self.max_tokens:
                raise BudgetExhausted(
                    f"token budget exhausted after {self.sent} requests: {self.tokens} tokens spent, "
                    f"{self.reserved} reserved in flight, the next needs up to {worst_case} "
                    f"(model.max_tokens_total {self.max_tokens})"
                )
            if self.shared is not None:  # raises before anything is counted here
                self.shared.acquire(worst_case)
            self.sent += 1
            self.reserved += worst_case

    def settle(self, worst_case: int, spent: int) -> None:
        """Replace a request's reservation by the tokens it spent (here and in the shared cap)."""
        with self._lock:
            self.reserved -= worst_case
            self.tokens += spent
        if self.shared is not None:
            self.shared.settle(worst_case, spent)


class ResponseCache:
    """Answers of an API on disk, one JSON file each: ``<root>/<key[:2]>/<key>.json``.

    One file per answer (not an append-only log) so that concurrent writers need no lock and a killed
    run can leave at worst a stray temporary file, never a half-written entry: each file is written under
    a temporary name, synced and renamed. An entry holds the request fields (no key, no header) and the
    completion.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @staticmethod
    def key(fields: dict[str, Any]) -> str:
        """Return the sha256 of the request fields (canonical JSON) that names an entry."""
        canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, fields: dict[str, Any]) -> Completion | None:
        """Return the cached completion of ``fields`` (named ``key``), or ``None`` (absent or unreadable)."""
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
            answer = entry["completion"]
            if entry["request"] != fields or not isinstance(answer["text"], str):
                return None
            counts = [answer.get(k) for k in ("prompt_tokens", "completion_tokens")]
            return Completion(
                "", answer["text"], str(answer["finish_reason"]),
                *(c if isinstance(c, int) and not isinstance(c, bool) else None for c in counts),
            )  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, fields: dict[str, Any], completion: Completion) -> None:
        """Write an entry atomically (temporary file, fsync, rename)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "request": fields,
            "completion": {
                "text": completion.text,
                "finish_reason": completion.finish_reason,
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
            },
        }
        tmp = path.with_name(f".{key}.{uuid.uuid4().hex}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(entry, handle, ensure_ascii=False, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)


@dataclass(frozen=True)
class DryRun:
    """What a run would send (:meth:`EndpointAdapter.plan`); nothing was sent.

    ``requests`` are the track's, ``cached`` of them are answered from the cache, ``to_send`` is the number
    of distinct requests left (identical ones are asked once): each is sent at least once, retries aside.
    """

    url: str
    model: str
    api: str
    requests: int
    cached: int
    to_send: int
    prompt_tokens: int
    completion_tokens: int
    max_requests: int
    max_tokens_total: int | None
    examples: tuple[dict[str, Any], ...]

    def fits(self) -> bool:
        """Tell whether the budget allows every request once (retries need more)."""
        tokens_ok = self.max_tokens_total is None or self.prompt_tokens + self.completion_tokens <= (
            self.max_tokens_total
        )
        return self.to_send <= self.max_requests and tokens_ok

    def text(self) -> str:
        """Return the report printed for a maintainer."""
        lines = [
            f"dry run — nothing sent. {self.api} API at {self.url}, model {self.model!r}",
            f"  {self.requests} request(s): {self.cached} answered from the cache, {self.to_send} to send, "
            f"{self.requests - self.cached - self.to_send} identical to another",
            f"  estimated tokens to spend: {self.prompt_tokens} prompt + at most {self.completion_tokens} "
            f"completion = {self.prompt_tokens + self.completion_tokens}",
            f"  budget: max_requests {self.max_requests}, max_tokens_total {self.max_tokens_total} — "
            + ("fits (retries not counted)" if self.fits() else "DOES NOT FIT: the run would stop early"),
        ]
        for example in self.examples:
            lines.append("  example: " + json.dumps(example, ensure_ascii=False))
        return "\n".join(lines)
