"""A local OpenAI-compatible API for the endpoint tests: a real tiny model, and faults on demand.

:class:`OpenAIServer` serves ``POST /v1/chat/completions`` and ``POST /v1/completions`` on
``127.0.0.1:<free port>`` (loopback only) with a random GPT-2 built by :func:`tiny_model` (character-level
tokenizer, ``save_pretrained``; no hub download), generating through the project's own ``transformers``
adapter. Tests queue faults for the next requests (:meth:`OpenAIServer.fail_next`), add latency, and read
what arrived: every request's path, headers and body, the image URLs of its chat message, the most requests
in flight at once.

A chat message's ``content`` is a string or, as OpenAI's API takes images, a list of parts: ``text`` parts
(joined into the prompt) and ``image_url`` parts (their URLs are recorded, in order, as the request's
``"images"``; the tiny model reads text only, so its answer depends on the text). A part of another kind is
refused with a 400, as a strict API would.

Faults: ``"429"`` (with ``Retry-After``), ``"500"``, ``"401"``, ``"hang"`` (no answer until the client gives
up), ``"truncated"`` (half the body, then the connection closes), ``"malformed"`` (a 200 that is not JSON),
``"echo_auth"`` (a normal answer whose text is the ``Authorization`` header: a hostile server). Slow
servers, each a bounded loop that ends by itself (or when the client hangs up or the server closes):
``"drip_body"`` (the headers at once, then the body one byte every ``drip_s``), ``"drip_headers"`` (the
status line, then the headers one byte every ``drip_s``), ``"hang"`` with a long ``hang_s`` (accepts, never
answers) and ``"stream"`` (a 200 whose body never ends: 64 bytes every 10 ms for up to ``stream_s``).

Not a test module: tests import it as ``tests.execution._openai_server``.
"""

from __future__ import annotations

import json
import string
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
CHARS = list(string.ascii_letters + string.digits + string.punctuation + " \n")
SERVED_MODEL = "tiny-gpt2"
#: Most new tokens the server generates for one request (it ends its turn there, as a real model may).
MAX_SERVED_TOKENS = 32


def tiny_model(path: Path) -> Path:
    """Save a seeded random GPT-2 (2 layers, width 32) with a character-level tokenizer to ``path``."""
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(SPECIALS + CHARS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    ).save_pretrained(path)
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(SPECIALS) + len(CHARS), n_embd=32, n_layer=2, n_head=2, n_positions=1024,
                     bos_token_id=2, eos_token_id=3, pad_token_id=0, initializer_range=0.2)  # fmt: skip
    GPT2LMHeadModel(cfg).save_pretrained(path)
    return path


def message_content(content: Any) -> tuple[str, list[str]]:
    """Return the prompt and the image URLs of a chat message's ``content`` (a string or a list of parts).

    Raises ``ValueError`` for a part that is neither ``text`` nor ``image_url`` (or is malformed).
    """
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[str] = []
    for part in content if isinstance(content, list) else [content]:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url" and isinstance(part.get("image_url"), dict):
            images.append(str(part["image_url"].get("url", "")))
        else:
            raise ValueError(f"unsupported content part: {str(part)[:80]}")
    return "\n".join(texts), images


class OpenAIServer:
    """The local API (module docstring); a context manager that starts and stops it.

    Parameters
    ----------
    model_dir : pathlib.Path
        A folder written by :func:`tiny_model`.
    retry_after : str
        The ``Retry-After`` header of a ``"429"`` fault.
    hang_s : float
        How long a ``"hang"`` fault holds the connection before closing it unanswered.
    drip_s : float
        The pause between two bytes of a ``"drip_body"`` or ``"drip_headers"`` fault.
    stream_s : float
        How long a ``"stream"`` fault sends before it stops.
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        retry_after: str = "1",
        hang_s: float = 5.0,
        drip_s: float = 0.5,
        stream_s: float = 60.0,
    ) -> None:
        from evaluators.adapters import ModelConfig, load_adapter

        self.generator = load_adapter(
            ModelConfig(adapter="transformers", path=Path(model_dir), architecture="decoder", max_length=512)
        )
        self.retry_after, self.hang_s = retry_after, hang_s
        self.drip_s, self.stream_s = drip_s, stream_s
        self.latency_s = 0.0
        self.requests: list[dict[str, Any]] = []
        self.in_flight = self.max_in_flight = 0
        self._faults: deque[str] = deque()
        self._lock, self._model_lock = threading.Lock(), threading.Lock()
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL a manifest gives (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail_next(self, *faults: str) -> None:
        """Answer the next requests with these faults, one each, in order."""
        with self._lock:
            self._faults.extend(faults)

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # wakes hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()

    def generate(self, prompt: str, body: dict[str, Any]) -> tuple[str, str, int, int]:
        """Complete ``prompt`` with the tiny model as the API asks (text, finish reason, token counts)."""
        from evaluators.adapters import GenerationRequest

        stop = body.get("stop") or ()
        request = GenerationRequest(
            # Like a real model that ends its turn, the server may stop before max_tokens: the answer
            # protocol asks an API for 512 tokens, which a tiny GPT-2 on two cores would spend seconds on.
            id="r", prompt=prompt, max_new_tokens=min(int(body.get("max_tokens", 16)), MAX_SERVED_TOKENS),
            temperature=float(body.get("temperature", 0.0)), seed=int(body.get("seed", 0)),
            stop=tuple([stop] if isinstance(stop, str) else stop),
        )  # fmt: skip
        with self._model_lock:  # one generation at a time; latency is added outside, so requests overlap
            c = self.generator.generate([request])[0]
        return c.text, c.finish_reason, c.prompt_tokens or 0, c.completion_tokens or 0


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's signature
            pass

        def _leave(self) -> None:
            """Stop counting this request as in flight: before the client can see any of the reply (once).

            Counted until the handler returned, a request overlapped the client's next one, which it may
            send the moment it reads this reply: 9 "in flight" under a limit of 8 on a loaded machine.
            """
            if getattr(self, "_counted", False):
                self._counted = False
                with server._lock:
                    server.in_flight -= 1

        def _send(self, status: int, document: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(document).encode()
            self._leave()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:  # noqa: N802 - the base's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            try:
                images = message_content(body["messages"][-1]["content"])[1] if "messages" in body else []
            except ValueError:
                images = []  # refused with a 400 by _answer
            with server._lock:
                fault = server._faults.popleft() if server._faults else ""
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body,
                                        "images": images, "time": time.monotonic(),
                                        "fault": fault})  # fmt: skip
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._counted = True
            try:
                self._answer(body, fault)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up first
                pass
            finally:
                self._leave()

        def _answer(self, body: dict[str, Any], fault: str) -> None:
            if server.latency_s:
                time.sleep(server.latency_s)
            if fault in ("429", "500", "401"):
                headers = {"Retry-After": server.retry_after} if fault == "429" else {}
                self._send(int(fault), {"error": {"message": f"injected {fault}"}}, headers)
                return
            if fault == "hang":
                server._closing.wait(server.hang_s)
                self.close_connection = True
                return
            if fault == "stream":
                self._stream()
                return
            chat = self.path.endswith("/chat/completions")
            if not chat and not self.path.endswith("/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            if body.get("model") != SERVED_MODEL:
                self._send(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
                return
            try:
                prompt = message_content(body["messages"][-1]["content"])[0] if chat else body["prompt"]
            except ValueError as exc:
                self._send(400, {"error": {"message": str(exc)}})
                return
            text, reason, n_prompt, n_completion = server.generate(prompt, body)
            if fault == "echo_auth":
                text = "I saw " + self.headers.get("Authorization", "")
            choice = {"index": 0, "finish_reason": reason}
            choice.update({"message": {"role": "assistant", "content": text}} if chat else {"text": text})
            usage = {"prompt_tokens": n_prompt, "completion_tokens": n_completion,
                     "total_tokens": n_prompt + n_completion}  # fmt: skip
            document = {"object": "chat.completion" if chat else "text_completion", "model": SERVED_MODEL,
                        "choices": [choice], "usage": usage}  # fmt: skip
            if fault == "malformed":
                raw = b'{"choices": [{"text": oops'
            else:
                raw = json.dumps(document).encode()
            if fault == "drip_headers":
                self._drip(self._head(raw, pad=200) + raw)
                return
            if fault == "drip_body":
                self.wfile.write(self._head(raw))
                self._drip(raw)
                return
            self._leave()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            if fault == "truncated":  # promise the whole body, send half, hang up
                self.wfile.write(raw[: len(raw) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(raw)

        def _head(self, raw: bytes, pad: int = 0) -> bytes:
            """The status line and headers of a 200 with body ``raw`` (``pad`` bytes of an extra header)."""
            lines = [f"{self.protocol_version} 200 OK", "Content-Type: application/json",
                     f"Content-Length: {len(raw)}"] + ([f"X-Pad: {'p' * pad}"] if pad else [])  # fmt: skip
            return ("\r\n".join(lines) + "\r\n\r\n").encode()

        def _drip(self, data: bytes) -> None:
            """Send ``data`` a byte every ``drip_s`` (one step a byte; stops when the server closes)."""
            self.close_connection = True
            for i in range(len(data)):
                if server._closing.wait(server.drip_s):
                    return
                self.wfile.write(data[i : i + 1])

        def _stream(self) -> None:
            """A 200 whose body has no length and no end: 64 bytes every 10 ms, for ``stream_s`` at most."""
            self.close_connection = True
            self._leave()
            self.wfile.write(b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"choices": [')
            end = time.monotonic() + server.stream_s
            while time.monotonic() < end and not server._closing.wait(0.01):
                self.wfile.write(b" " * 64)

    return Handler
