"""Model adapters: a small batched interface per capability, and their registry.

Registers (one module each): ``transformers`` (Hugging Face encoders, decoders and encoder-decoders loaded
with ``transformers``), ``morgan_fingerprint`` (RDKit Morgan fingerprints, the invariant reference) and
``custom`` (an adapter class in the submission's own code). Capabilities: ``embed`` (embedding tracks,
:class:`EmbeddingAdapter`) and ``generate`` (generative tracks, :class:`GenerativeAdapter`). Output order
always equals input order. Each adapter class declares what the host's manifest check reads without
building it: its ``capabilities``, the ``architectures`` it runs, whether it reads ``weights`` and the
manifest ``settings`` it applies (the model pages show only those).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from evaluators.registry import Registry
from evaluators.schema import ModelConfig

ADAPTERS: Registry[type[Adapter]] = Registry("model adapter", __name__)
#: Every ``model.architecture`` a manifest may declare; an adapter runs a subset (``Adapter.architectures``).
ARCHITECTURES: tuple[str, ...] = ("encoder", "decoder", "encoder-decoder", "non-neural")
#: The capabilities a model of each architecture can have, whatever its adapter: an encoder has no
#: decoder to write text with, so it only embeds (the manifest check refuses ``generate`` for it).
ARCHITECTURE_CAPABILITIES: Mapping[str, frozenset[str]] = MappingProxyType({
    "encoder": frozenset({"embed"}),
    "decoder": frozenset({"embed", "generate"}),
    "encoder-decoder": frozenset({"embed", "generate"}),
    "non-neural": frozenset({"embed", "generate"}),
})  # fmt: skip
#: What ``Adapter.weights`` may declare.
WEIGHTS: tuple[str, ...] = ("required", "optional", "none")
__all__ = [
    "ADAPTERS",
    "ARCHITECTURES",
    "ARCHITECTURE_CAPABILITIES",
    "Adapter",
    "Completion",
    "EmbeddingAdapter",
    "Embeddings",
    "GenerationRequest",
    "GenerativeAdapter",
    "ModelConfig",
    "WEIGHTS",
    "as_completions",
    "load_adapter",
    "stop_index",
]


@dataclass(frozen=True, slots=True)
class Embeddings:
    """Pooled embeddings of a list of strings, one float32 ``(n, d)`` array per layer.

    ``layers`` maps a layer label to its array; the label ``"last"`` is always present and is the
    representation the leaderboard headline uses. ``truncated`` flags the inputs cut at ``max_length``
    (``None``: the adapter never truncates).
    """

    layers: dict[str, np.ndarray]
    truncated: np.ndarray | None = None

    @property
    def n_truncated(self) -> int:
        """Number of truncated inputs."""
        return 0 if self.truncated is None else int(np.count_nonzero(self.truncated))


class Adapter(ABC):  # noqa: B024 - abstract methods live in the capability bases
    """Common base: every adapter is built from a :class:`ModelConfig` and declares its capabilities."""

    capabilities: ClassVar[frozenset[str]] = frozenset()
    #: The manifest's ``model.architecture`` values it runs (the manifest check reads this).
    architectures: ClassVar[frozenset[str]] = frozenset(ARCHITECTURES)
    #: Whether it reads a weights folder (``ModelConfig.path``): ``required``, ``none`` (never reads one,
    #: so a manifest that ships weights is a mistake) or ``optional``; one of :data:`WEIGHTS`.
    weights: ClassVar[str] = "optional"
    #: Top-level manifest settings the adapter applies (the model card shows them, and only them), each
    #: with the capability it serves: ``pooling`` matters only when the model embeds. A registry lookup
    #: for the site (:func:`leaderboard.intake.consistency.adapter_facts`), so that no page guesses from
    #: the adapter's name which settings mean something.
    settings: ClassVar[Mapping[str, str]] = MappingProxyType({})

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.progress: Callable[[str, int, int], None] | None = None

    def report(self, stage: str, done: int, total: int) -> None:
        """Report batch progress (``progress(stage, done, total)``) when the job runner asked for it.

        Adapters call it between batches so a long forward pass shows live on the host; set by
        :func:`evaluators.job.run_job`, ``None`` elsewhere.
        """
        progress = getattr(self, "progress", None)  # a submission's class may skip our __init__
        if progress is not None:
            progress(stage, done, total)

    def describe(self) -> dict[str, Any]:
        """Facts about the loaded model recorded with the results (parameter count, layers …)."""
        return {}


class EmbeddingAdapter(Adapter):
    """An adapter with the ``embed`` capability."""

    capabilities = frozenset({"embed"})

    @abstractmethod
    def embed(self, strings: Sequence[str]) -> Embeddings:
        """Embed ``strings`` (same order in the output), pooling every available layer.

        Parameters
        ----------
        strings : sequence of str
            Input strings (SMILES here; any text in general).

        Returns
        -------
        Embeddings
            ``layers[label]`` has shape ``(len(strings), d)``.
        """


@dataclass(frozen=True, slots=True)
class GenerationRequest:
    """One prompt for a generative track, with explicit decoding options (part of the result key).

    Attributes
    ----------
    id : str
        The request's id (unique within a run); the completion carries it back.
    prompt : str
        The prompt text (for chat models: the user message; the adapter applies the chat template when
        the manifest asks for it).
    max_new_tokens : int
        Generation stops after this many new tokens (``finish_reason`` ``"length"``).
    temperature : float
        ``0`` decodes greedily (deterministic); above 0 samples with ``seed``.
    seed : int
        Seed of this request's sampling (set per request, so batching never changes a sample).
    stop : tuple of str
        Generation stops at the first of these strings after the first non-blank character, which is cut
        from the text (``"stop"``; :func:`stop_index`): a leading blank line is never taken for the end.
    images : tuple of str
        Images the question shows, in order, as ``data:image/png;base64,…`` URIs (OpenAI's ``image_url``
        form); empty for a text question. Only a model whose manifest lists ``image`` in ``model.inputs``
        (:attr:`evaluators.schema.ModelConfig.images`) is sent any. The prompt refers to them in words.
    """

    id: str
    prompt: str
    max_new_tokens: int = 128
    temperature: float = 0.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    images: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Completion:
    """What a model answered to one :class:`GenerationRequest` (raw text; the host extracts answers).

    Attributes
    ----------
    id : str
        The request's id.
    text : str
        The generated text, without the prompt, cut at the first stop string.
    finish_reason : str
        ``"stop"`` (end of sequence or a stop string) or ``"length"`` (``max_new_tokens`` reached).
    prompt_tokens, completion_tokens : int or None
        Token counts when the adapter knows them.
    """

    id: str
    text: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class GenerativeAdapter(Adapter):
    """An adapter with the ``generate`` capability (generative tracks T3–T5)."""

    capabilities = frozenset({"generate"})

    @abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion | str]:
        """Return one completion per request, in request order.

        A plain string is accepted for a completion (a submission's simple adapter) and read as
        ``Completion(id, text)``; :func:`as_completions` turns the list into completions and checks it.
        """

    def prepare(self, requests: Sequence[GenerationRequest]) -> None:
        """See every distinct request of a run once, before :meth:`generate` receives them in chunks.

        :func:`evaluators.asking.ask` calls it once per run with all the requests it will send, in the
        order it sends them; :meth:`generate` then gets them a chunk (:data:`evaluators.asking.CHUNK`) at
        a time. An adapter whose work has a fixed cost per call does that work once here — the tool
        reference parses every IUPAC name in one OPSIN process instead of one process per chunk. The
        default does nothing; :meth:`generate` must still answer any request without it.
        """
        return None


def as_completions(
    requests: Sequence[GenerationRequest], answers: Sequence[Completion | str]
) -> list[Completion]:
    """Check an adapter's answers against its requests and return them as :class:`Completion` objects.

    Raises
    ------
    ValueError
        If the number of answers differs from the number of requests, an answer is neither a string nor a
        :class:`Completion`, or a completion carries another request's id.
    """
    if len(answers) != len(requests):
        raise ValueError(f"the adapter returned {len(answers)} completions for {len(requests)} requests")
    out = []
    for request, answer in zip(requests, answers, strict=True):
        if isinstance(answer, str):
            answer = Completion(request.id, answer)
        elif not isinstance(answer, Completion):
            raise ValueError(
                f"request {request.id!r}: a completion must be a str or evaluators.adapters.Completion, "
                f"got {type(answer).__name__}"
            )
        elif answer.id != request.id:
            raise ValueError(f"request {request.id!r}: the completion carries the id {answer.id!r}")
        out.append(answer)
    return out


def load_adapter(config: ModelConfig) -> Adapter:
    """Instantiate the adapter that ``config.adapter`` names."""
    return ADAPTERS.get(config.adapter)(config)


POOLINGS = ("mean", "cls", "last_token", "mean_no_special")


def pool(hidden, mask, special, pooling: str):
    """Pool token states ``(b, t, d)`` into ``(b, d)`` (torch tensors in, tensor out).

    ``mask`` is the attention mask ``(b, t)``; ``special`` marks special tokens ``(b, t)``; padding is on
    the right.
    """
    import torch

    if pooling == "cls":
        return hidden[:, 0]
    if pooling == "last_token":
        last = mask.sum(dim=1) - 1
        return hidden[torch.arange(hidden.shape[0]), last]
    weights = (mask if pooling == "mean" else mask * (1 - special)).to(hidden.dtype)
    # A batched matrix product, not a masked (b, t, d) temporary per layer.
    summed = weights.unsqueeze(1).bmm(hidden).squeeze(1)
    return summed / weights.sum(dim=1, keepdim=True).clamp(min=1.0)


def pad_rows(columns: Mapping[str, Sequence[Sequence[int]]], pad: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Pad each column's token rows on the right into one ``int64`` array, as a tokenizer pads a batch.

    ``pad`` gives each column's padding value (missing: 0). Lets a batch be cut from encodings made once
    for every string, instead of tokenizing each batch again.

    Examples
    --------
    >>> out = pad_rows({"input_ids": [[5, 6, 7], [5]], "attention_mask": [[1, 1, 1], [1]]}, {"input_ids": 9})
    >>> out["input_ids"].tolist(), out["attention_mask"].tolist()
    ([[5, 6, 7], [5, 9, 9]], [[1, 1, 1], [1, 0, 0]])
    """
    out: dict[str, np.ndarray] = {}
    for key, rows in columns.items():
        width = max((len(row) for row in rows), default=0)
        array = np.full((len(rows), width), pad.get(key, 0), dtype=np.int64)
        for k, row in enumerate(rows):
            array[k, : len(row)] = row
        out[key] = array
    return out


def encode_once(tokenizer, texts: Sequence[str], *, batch_size: int, max_length: int):
    """Tokenize every text once: ``(batches sorted by tokens, encodings)`` for :func:`cut_batch`.

    ``encodings`` is ``None`` where batches cannot be cut from them (a slow tokenizer, which keeps no
    overflow; no padding token): the caller tokenizes each batch then.
    """
    encoded = tokenizer(list(texts), truncation=True, max_length=max_length, return_special_tokens_mask=True)
    batches = length_bucketed_batches(texts, batch_size, lengths=[len(r) for r in encoded["input_ids"]])
    usable = encoded.encodings is not None and tokenizer.pad_token_id is not None
    return batches, encoded if usable else None


def cut_batch(tokenizer, encoded, index: np.ndarray) -> tuple[dict[str, np.ndarray], list[bool]]:
    """Return rows ``index`` of ``encoded`` padded on the right as ``tokenizer`` pads, and truncated flags.

    The same arrays as ``tokenizer(texts, padding=True, truncation=True, return_special_tokens_mask=True)``
    on those texts (padded special-token mask 1, as the tokenizer pads it), without tokenizing again.
    """
    pad = {
        "input_ids": tokenizer.pad_token_id,
        "token_type_ids": tokenizer.pad_token_type_id,
        "special_tokens_mask": 1,
    }
    arrays = pad_rows({key: [encoded[key][i] for i in index] for key in encoded}, pad)
    return arrays, [bool(encoded.encodings[i].overflowing) for i in index]


def length_bucketed_batches(
    strings: Sequence[str], batch_size: int, *, lengths: Sequence[int] | np.ndarray | None = None
) -> list[np.ndarray]:
    """Index batches of similar length, so that padding (and wasted compute) stays small.

    Sorted by ``lengths`` when given (tokens per string: what the model pays for), else by characters.
    Returns index arrays into ``strings``; every index appears exactly once. Sorting is stable, so the
    batching is deterministic.

    Examples
    --------
    >>> [b.tolist() for b in length_bucketed_batches(["ccc", "c", "cc"], 2)]
    [[1, 2], [0]]
    >>> [b.tolist() for b in length_bucketed_batches(["ccc", "c", "cc"], 2, lengths=[1, 3, 2])]
    [[0, 2], [1]]
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if lengths is None:
        sizes = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    else:
        sizes = np.asarray(lengths, dtype=np.int64)
        if sizes.shape != (len(strings),):
            raise ValueError(f"lengths has shape {sizes.shape}, expected ({len(strings)},)")
    order = np.argsort(sizes, kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def stop_index(text: str, stops: Sequence[str]) -> int | None:
    r"""Return where ``text`` is cut by the first of ``stops``, or ``None``: never inside leading blanks.

    A stop string ends an answer, so it only counts once the answer has begun: a completion that opens
    with a blank line (chat models often do) keeps what follows it.

    Examples
    --------
    >>> stop_index("\n\nCCO\n\nBecause", ["\n\n"])
    5
    >>> stop_index("\n\n", ["\n\n"]) is None
    True
    """
    begun = len(text) - len(text.lstrip())
    cuts = [i for i in (text.find(s, begun) for s in stops if s) if i >= 0]
    return min(cuts) if cuts else None
