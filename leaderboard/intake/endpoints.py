"""The ``source: endpoint`` part of the manifest: an OpenAI-compatible API that the host calls.

:class:`EndpointModel` is one member of the manifest's tagged union of model sources
(:mod:`leaderboard.intake.manifest`); :func:`endpoint_rules` holds its cross-field rules, returned as
``(field, value, message, fix)`` so that the manifest turns them into problems of the usual shape. Nothing of
such a submission runs: the host sends its prompts to ``url`` (:mod:`leaderboard.execution.endpoint`).

Invariants
----------
- The key is never in a manifest: ``api_key_env`` only names the maintainer's environment variable, and
  that name is tied to the submission id (:func:`endpoint_key_env`), so that no manifest can have the host
  send another submission's key, or any other secret of the maintainer's, to an address it chooses.
- A key never travels in clear text to another machine: ``http://`` with a key is for loopback only.

Side effects: none.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "API_PATHS", "ENDPOINT_FIXES", "EndpointModel", "TokenPrice", "endpoint_key_env", "endpoint_rules",
]  # fmt: skip

#: The path the host appends to ``model.url`` for each ``model.api`` (so the URL is the API's base).
API_PATHS: dict[str, str] = {"chat": "/chat/completions", "completions": "/completions"}
#: Loopback host names: the only hosts an ``http://`` endpoint may send a key to.
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})
#: Top-level manifest fields that configure code in the sandbox, meaningless for an endpoint.
_UNUSED = ("adapter", "code", "requirements", "options", "pooling", "batch_size")


class TokenPrice(BaseModel):
    """What the API charges, in US dollars per million tokens: ``input`` (prompt) and ``output`` (completion).

    Only for the estimated cost the evaluation prints and records
    (:mod:`leaderboard.execution.endpoint_spend`); it caps nothing. Finite and not negative: ``.nan``,
    ``.inf`` or a negative price is refused.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    output: Annotated[float, Field(ge=0, allow_inf_nan=False)]


class EndpointModel(BaseModel):
    """An OpenAI-compatible API called from the host: no weights, no image, no submission code."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_max_length=4096)

    source: Literal["endpoint"]
    architecture: Literal["encoder", "decoder", "encoder-decoder", "non-neural"]
    capabilities: list[Literal["embed", "generate"]] = Field(min_length=1, max_length=2)
    #: ``[text, image]``: images are sent as ``image_url`` parts of the chat message (``api: chat`` only).
    inputs: list[Literal["text", "image"]] = Field(
        default_factory=lambda: ["text"], min_length=1, max_length=2
    )
    url: Annotated[str, Field(pattern=r"^https?://[^\s/?#@]+(?:/[^\s?#]*)?$", max_length=500)]
    model: Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$")]
    api: Literal["chat", "completions"] = "chat"
    api_key_env: Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{0,127}$")] | None = None
    max_concurrency: Annotated[int, Field(ge=1, le=64)] = 4
    timeout_s: Annotated[float, Field(gt=0, le=600)] = 60.0
    max_requests: Annotated[int, Field(ge=1, le=10_000_000)]
    max_tokens_total: Annotated[int, Field(ge=1, le=10**12)] | None = None
    price_per_million_tokens: TokenPrice | None = None


#: Fixes of the endpoint's fields, by YAML path (merged into the manifest's fixes).
ENDPOINT_FIXES: dict[str, str] = {
    "model.url": "Give the API's base address with its version path, e.g. 'https://api.example.org/v1' "
    "(no user name, password, query or fragment; the key goes in the variable 'model.api_key_env' names).",
    "model.model": "Give the model name the API serves (its 'model' request field), e.g. 'acme-chem-7b'.",
    "model.api": "Use 'chat' (/chat/completions, for chat models) or 'completions' (/completions).",
    "model.api_key_env": "Name the maintainer's environment variable holding the key, 'CHEMROBUST_KEY_<ID>' "
    "(never the key itself), or remove it for an API without a key.",
    "model.max_concurrency": "Give the most requests in flight at once, 1 to 64 (default 4).",
    "model.timeout_s": "Give the seconds one request may take, more than 0 and at most 600 (default 60).",
    "model.max_requests": "Give the most HTTP requests one run may send (retries count, cached answers do "
    "not), e.g. 20000; a dry run counts them: python -m leaderboard.execution.endpoint_runner --help.",
    "model.max_tokens_total": "Give the most tokens (prompt + completion) one run may spend, or remove it.",
    "model.price_per_million_tokens": "Give the API's price in US dollars per million tokens as "
    "'{input: 3.0, output: 15.0}' (prompt, completion; finite, 0 or more), or remove it.",
    "model.price_per_million_tokens.input": "Give the price in US dollars per million prompt tokens, a "
    "finite number, 0 or more (e.g. 3.0), or remove 'model.price_per_million_tokens'.",
    "model.price_per_million_tokens.output": "Give the price in US dollars per million completion tokens, a "
    "finite number, 0 or more (e.g. 15.0), or remove 'model.price_per_million_tokens'.",
}


def endpoint_key_env(submission_id: str) -> str:
    """Return the only environment variable an endpoint submission may name in ``model.api_key_env``.

    Parameters
    ----------
    submission_id : str
        The submission's id.

    Returns
    -------
    str
        ``CHEMROBUST_KEY_`` and the id in capitals, ``-`` written ``_``.

    Examples
    --------
    >>> endpoint_key_env("acme-gpt-4")
    'CHEMROBUST_KEY_ACME_GPT_4'
    """
    return "CHEMROBUST_KEY_" + re.sub(r"[^A-Z0-9]", "_", submission_id.upper())


def is_loopback(url: str) -> bool:
    """Tell whether ``url``'s host is this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _request_path_rule(model: EndpointModel) -> list[tuple[str, Any, str, str]]:
    """Refuse a ``model.url`` that already ends in a request path the host appends itself.

    Such a URL passed the schema and every request then went to ``…/chat/completions/chat/completions``,
    a 404 found only at run time.
    """
    parts = urlsplit(model.url)
    path = parts.path.rstrip("/")
    # The longest first: '/chat/completions' also ends in '/completions'.
    paths = sorted(set(API_PATHS.values()), key=len, reverse=True)
    suffix = next((s for s in paths if path.endswith(s)), None)
    if suffix is None:
        return []
    base = f"{parts.scheme}://{parts.netloc}{path[: -len(suffix)]}"
    return [(
        "model.url",
        model.url,
        f"'model.url' ends in '{suffix}', a path the host adds itself: requests would go to "
        f"'{path}{API_PATHS[model.api]}' on that server and fail with 404.",
        f"Give the API's base URL, '{base}' (it usually ends in the version, e.g. '/v1'), and choose the "
        "request kind with 'model.api' (chat or completions).",
    )]  # fmt: skip


def endpoint_rules(
    model: EndpointModel | None,
    *,
    submission_id: str | None,
    fields_set: set[str],
    trust_remote_code: bool | None,
    chat_template: bool | None,
    track_needs: dict[str, str] | None,
) -> list[tuple[str, Any, str, str]]:
    """Check an endpoint submission's cross-field rules; return every broken one, in a fixed order.

    The rules are independent (each reads its own fields), so all of them run: one push shows every
    problem rather than the first. A field given as ``None`` did not pass the schema (its own problem is
    reported there); only the rules that read it are skipped.

    Parameters
    ----------
    model : EndpointModel or None
        The manifest's ``model``.
    submission_id : str or None
        The manifest's ``id``.
    fields_set : set of str
        Top-level fields the manifest gives (defaults left out).
    trust_remote_code, chat_template : bool or None
        The manifest's ``trust_remote_code`` and ``tokenizer.chat_template``.
    track_needs : dict of str to str, or None
        The capability each of the manifest's ``tracks`` needs.

    Returns
    -------
    list of tuple
        ``(field, value, message, fix)`` per rule broken; empty when all hold.
    """
    out: list[tuple[str, Any, str, str]] = []
    if model is not None and model.capabilities != ["generate"]:
        out.append((
            "model.capabilities",
            model.capabilities,
            "an API endpoint ('model.source: endpoint') is called for text generation only.",
            "Set 'model.capabilities: [generate]'.",
        ))  # fmt: skip
    if model is not None and model.architecture == "encoder":
        out.append((
            "model.architecture",
            model.architecture,
            "an encoder cannot generate text, and an endpoint is only asked to generate.",
            "Use decoder, encoder-decoder or non-neural (whatever serves the API).",
        ))  # fmt: skip
    unused = [f for f in _UNUSED if f in fields_set]
    unused += ["trust_remote_code"] * bool(trust_remote_code)
    unused += ["tokenizer.chat_template"] * bool(chat_template)
    for name in unused:  # one problem per field: each is removed on its own
        hint = " (for a chat model choose 'model.api: chat')" if name.endswith("chat_template") else ""
        out.append((
            name,
            None,
            f"'{name}' does not apply to an endpoint submission: the host calls the API, no submission code "
            "runs.",
            f"Remove it{hint}.",
        ))  # fmt: skip
    for track, need in (track_needs or {}).items():
        if need != "generate":
            message = f"'tracks': {track!r} needs capability {need!r}; an endpoint only generates."
            out.append(("tracks", track, message, "Remove the track."))
    if model is not None:
        out.extend(_request_path_rule(model))
    if model is None or model.api_key_env is None:
        return out
    expected = None if submission_id is None else endpoint_key_env(submission_id)
    if expected is not None and model.api_key_env != expected:
        out.append((
            "model.api_key_env",
            model.api_key_env,
            f"'model.api_key_env' must be {expected!r}: the key's variable is tied to the submission id, so "
            "that no manifest can ask for another secret of the maintainer's.",
            f"Set 'model.api_key_env: {expected}' (a maintainer puts the key there), or remove it for an API "
            "without a key.",
        ))  # fmt: skip
    if model.url.startswith("http://") and not is_loopback(model.url):
        out.append((
            "model.url",
            model.url,
            "'model.url' is plain http to another machine: the key would travel unencrypted.",
            "Use the https:// address of the API.",
        ))  # fmt: skip
    return out
