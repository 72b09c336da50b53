"""``transformers``: Hugging Face models loaded with ``transformers`` from a local folder.

The host prefetches weights at a pinned revision (or unpacks a pinned pip package) and mounts them
read-only; the hub is offline here. Hidden states are pooled in the same forward pass that computes them:
``pooling`` is ``mean`` over the attention mask with special tokens included (the AMORE reference
behaviour), ``cls``, ``last_token`` or ``mean_no_special``. For encoder-decoder models the encoder stack is
used for ``last`` and, with option ``decoder_stack`` (default true), the decoder stack is a separate
component fed the same tokens shifted right behind the decoder start token. With option ``layers: all``
(default) every hidden state (embedding output + each block) is returned as ``encoder.<k>`` /
``decoder.<k>`` besides ``last``. Inputs longer than ``max_length`` tokens are truncated and flagged.
``tokenizer.pre_tokenizer`` (``pre_tokenizer`` here) replaces the folder's tokenizer by a SMILES regex over
its ``vocab.txt`` (:mod:`evaluators.adapters.smiles_tokens`; embedding only), and option ``model_type``
reads a ``config.json`` that predates the ``model_type`` key.

Decoders (``AutoModelForCausalLM``) and encoder-decoders (``AutoModelForSeq2SeqLM``) also ``generate``:
greedy requests are batched by prompt length (left padding for decoders), each sampled request runs alone
under its own seed so that batching never changes a sample, and stop strings cut the decoded text. The model
runs on CUDA when available. A checkpoint that only loads as ``AutoModel`` keeps ``embed`` alone.

With ``model.inputs: [text, image]`` (``ModelConfig.images``) the adapter built is a
:class:`evaluators.adapters.vision.VisionLanguageAdapter` (processor and image-text-to-text model).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from evaluators.adapters import (
    ADAPTERS,
    POOLINGS,
    Completion,
    EmbeddingAdapter,
    Embeddings,
    GenerationRequest,
    GenerativeAdapter,
    ModelConfig,
    cut_batch,
    encode_once,
    length_bucketed_batches,
    pool,
    stop_index,
)
from evaluators.adapters.greedy import (
    LeanGreedyUnsupported,
    StopWatch,
    greedy_tokens,
    lean_greedy_unsupported,
)


@ADAPTERS.register("transformers")
class TransformersAdapter(EmbeddingAdapter, GenerativeAdapter):
    """A ``transformers`` model: pooled hidden states, and generation for decoders and encoder-decoders."""

    #: What the adapter may offer (the manifest check reads this); an instance narrows it to what its
    #: architecture allows: ``embed`` for encoders, ``embed`` and ``generate`` for the others.
    capabilities: ClassVar[frozenset[str]] = frozenset({"embed", "generate"})
    architectures: ClassVar[frozenset[str]] = frozenset({"encoder", "decoder", "encoder-decoder"})
    weights: ClassVar[str] = "required"
    #: It pools hidden states into embeddings the way the manifest's ``pooling`` says.
    settings: ClassVar[Mapping[str, str]] = MappingProxyType({"pooling": "embed"})

    def __new__(cls, config: ModelConfig, *args: Any, **kwargs: Any) -> Any:
        """Return a built :class:`~evaluators.adapters.vision.VisionLanguageAdapter` if ``config.images``."""
        # The manifest keeps naming adapter 'transformers'; the vision path lives in its own module so that
        # this one stays the text path, unchanged. Not an instance of this class, so __init__ is skipped.
        if cls is TransformersAdapter and config.images:
            from evaluators.adapters.vision import VisionLanguageAdapter

            return VisionLanguageAdapter(config)
        return super().__new__(cls)

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        import torch
        from transformers import AutoTokenizer

        if config.path is None:
            raise ValueError("adapter 'transformers' needs model weights (model.source in the manifest)")
        if config.pooling not in POOLINGS:
            raise ValueError(f"pooling {config.pooling!r} is not one of {POOLINGS}")
        torch.manual_seed(0)
        self._torch = torch
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        # A SMILES model trained on regex tokens gets them (smiles_tokens), not its folder's tokenizer class.
        self.vocab_tokenizer = _vocab_tokenizer(config)
        if self.vocab_tokenizer is None:
            self.tokenizer = AutoTokenizer.from_pretrained(
                config.path, trust_remote_code=config.trust_remote_code
            )
            self.tokenizer.padding_side = "right"  # embedding; generation pads by hand (left for decoders)
            if self.tokenizer.pad_token is None:
                self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        else:
            self.tokenizer = self.vocab_tokenizer
        self.seq2seq = config.architecture == "encoder-decoder"
        model, self.generator, self.generate_unavailable = _load(config)
        if self.seq2seq and not (hasattr(model, "get_encoder") and hasattr(model, "get_decoder")):
            raise ValueError(
                f"architecture 'encoder-decoder' declared, but {type(model).__name__} has no encoder"
            )
        model = model.to(self.device).eval()
        #: Why greedy batches go through ``generate`` rather than the lean loop (``None``: they do not).
        self.lean_unsupported = (
            lean_greedy_unsupported(self.generator, remote_code=config.trust_remote_code)
            if self.generator is not None
            else "no generator"
        )
        self.capabilities = frozenset({"embed", "generate"} if self.generator is not None else {"embed"})
        if self.vocab_tokenizer is not None:  # a SMILES pre-tokenizer splits SMILES, never a prompt
            self.capabilities = frozenset({"embed"})
        self.stack = "decoder" if config.architecture == "decoder" else "encoder"
        # Encoder-decoders: the decoder stack is a separate component, off unless asked for.
        self.decoder_stack = self.seq2seq and bool(config.options.get("decoder_stack", True))
        # The embedding module: the bare stack under a language-model head, when the class exposes one.
        base = model if self.seq2seq else model.base_model
        self.model = model.get_encoder() if self.seq2seq and not self.decoder_stack else base
        # A language-model head without a bare stack to call: its output has hidden_states only.
        self._hidden_only = not self.seq2seq and self.model is self.generator
        self.all_layers = config.options.get("layers", "all") == "all"
        self.truncated_prompts = 0

    def describe(self) -> dict[str, Any]:  # noqa: D102
        model = self.generator if self.generator is not None else self.model
        out = {
            "parameters": int(sum(p.numel() for p in model.parameters())),
            "model_type": getattr(model.config, "model_type", ""),
            "architecture": self.config.architecture,
            "model_class": type(model).__name__,
            "device": self.device.type,
            "pooling": self.config.pooling,
            "max_length": self.config.max_length,
        }
        if self.generator is not None:
            defaults = self.generator.generation_config.to_diff_dict()
            out["generation_defaults"] = {
                k: v for k, v in defaults.items() if not k.startswith("_") and k != "transformers_version"
            }
            out["chat_template"] = self.config.chat_template
            out["truncated_prompts"] = self.truncated_prompts
        elif self.generate_unavailable:
            out["generate_unavailable"] = self.generate_unavailable
        return out

    def _decoder_inputs(self, input_ids, attention_mask):
        """Return the tokens as decoder input, shifted right behind the decoder start token."""
        torch = self._torch
        cfg = self.model.config
        start = cfg.decoder_start_token_id
        if start is None:
            start = cfg.pad_token_id if cfg.pad_token_id is not None else self.tokenizer.pad_token_id
        shifted = torch.full_like(input_ids, start)
        shifted[:, 1:] = input_ids[:, :-1]
        mask = torch.ones_like(attention_mask)
        mask[:, 1:] = attention_mask[:, :-1]
        pad = cfg.pad_token_id if cfg.pad_token_id is not None else self.tokenizer.pad_token_id
        shifted = shifted.masked_fill(mask == 0, pad)
        return shifted, mask

    def _states(self, batch):
        """Hidden states to pool, as ``{label: (hidden, mask, special)}``; ``last`` is the headline."""
        torch = self._torch
        mask, special = batch["attention_mask"], batch["special_tokens_mask"]
        inputs = {k: v for k, v in batch.items() if k != "special_tokens_mask"}
        if not self.seq2seq or not self.decoder_stack:
            output = self.model(**inputs, output_hidden_states=self.all_layers or self._hidden_only)
            last = output.hidden_states[-1] if self._hidden_only else output.last_hidden_state
            states = {"last": (last, mask, special)}
            if self.all_layers:
                states.update(
                    {f"{self.stack}.{k}": (h, mask, special) for k, h in enumerate(output.hidden_states)}
                )
            return states
        dec_ids, dec_mask = self._decoder_inputs(inputs["input_ids"], mask)
        # The two stacks are called one by one, as the bare seq2seq model does, so that a model with a
        # language-model head never computes vocabulary logits here.
        enc = self.model.get_encoder()(**inputs, output_hidden_states=self.all_layers)
        dec = self.model.get_decoder()(
            input_ids=dec_ids,
            attention_mask=dec_mask,
            encoder_hidden_states=enc.last_hidden_state,
            encoder_attention_mask=mask,
            use_cache=False,
            output_hidden_states=self.all_layers,
        )
        dec_special = torch.zeros_like(special)
        dec_special[:, 1:] = special[:, :-1]
        dec_special[:, 0] = 1  # the decoder start token is special
        states = {"last": (enc.last_hidden_state, mask, special)}
        if self.all_layers:
            states.update({f"encoder.{k}": (h, mask, special) for k, h in enumerate(enc.hidden_states)})
            states.update(
                {f"decoder.{k}": (h, dec_mask, dec_special) for k, h in enumerate(dec.hidden_states)}
            )
        else:
            states["decoder.last"] = (dec.last_hidden_state, dec_mask, dec_special)
        return states

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        torch = self._torch
        cfg = self.config
        texts = [cfg.prompt_prefix + s for s in strings]
        truncated = np.zeros(len(texts), dtype=bool)
        layers: dict[str, np.ndarray] = {}
        done = 0
        batches, encoded = self._embedding_plan(texts)
        with torch.inference_mode():
            for index in batches:
                self.report("embed", done, len(texts))
                done += len(index)
                if encoded is None:
                    batch, truncated[index] = self._encode([texts[i] for i in index])
                else:  # the same tensors, cut from one tokenization of every string
                    arrays, truncated[index] = cut_batch(self.tokenizer, encoded, index)
                    batch = {k: torch.from_numpy(v).to(self.device) for k, v in arrays.items()}
                states = self._states(batch)
                final = f"{self.stack}.{len(states) - 2}" if self.all_layers and not self.seq2seq else None
                for label, (hidden, mask, special) in states.items():
                    if label == final:
                        continue  # identical to "last": copied below instead of pooled twice
                    pooled = pool(hidden, mask, special, cfg.pooling).float().cpu().numpy()
                    if label not in layers:
                        layers[label] = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
                    layers[label][index] = pooled
        if self.all_layers and not self.seq2seq:
            n_states = sum(1 for k in layers if k.startswith(f"{self.stack}."))
            layers[f"{self.stack}.{n_states}"] = layers["last"].copy()
        return Embeddings(layers, truncated=truncated)

    def embedding_batches(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Return the batches :meth:`embed` runs ``texts`` in (indices), sorted by token count.

        Tokens, not characters, are what a forward pass pays for: sorting by them cut the padded tokens of
        the default AMORE set by 7 % (11 % of the attention's quadratic term) against sorting by characters,
        where ``[H]`` or ``Cl`` and a long ring closure weigh differently from one letter. Public so that
        ``nox -s bench`` times its floor on exactly these batches.
        """
        return self._embedding_plan(texts)[0]

    def _embedding_plan(self, texts: Sequence[str]):
        cfg = self.config
        if self.vocab_tokenizer is None:
            return encode_once(self.tokenizer, texts, batch_size=cfg.batch_size, max_length=cfg.max_length)
        lengths = [min(len(self.vocab_tokenizer.token_ids(t)) + 2, cfg.max_length) for t in texts]
        return length_bucketed_batches(texts, cfg.batch_size, lengths=lengths), None

    def _encode(self, chunk: list[str]):
        """Tokenize one batch: ``(tensors on the device, truncated flags)``."""
        cfg = self.config
        if self.vocab_tokenizer is not None:
            arrays, truncated = self.vocab_tokenizer.encode(chunk, cfg.max_length)
            return {k: self._torch.from_numpy(v).to(self.device) for k, v in arrays.items()}, truncated
        batch = self.tokenizer(
            chunk,
            padding=True,
            truncation=True,
            max_length=cfg.max_length,
            return_tensors="pt",
            return_special_tokens_mask=True,
        ).to(self.device)
        if batch.encodings is not None:  # fast tokenizer: the cut-off part is kept as overflow
            return batch, [bool(e.overflowing) for e in batch.encodings]
        full = self.tokenizer(chunk, add_special_tokens=True)["input_ids"]
        return batch, [len(ids) > cfg.max_length for ids in full]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Complete each request with the model, in request order.

        Greedy requests (``temperature == 0``) sharing ``max_new_tokens`` and ``stop`` are batched by
        prompt length; every sampled request runs alone after ``torch.manual_seed(seed)``, so its text
        never depends on the other requests. Sampling is plain temperature sampling (no top-k/top-p).

        Parameters
        ----------
        requests : sequence of GenerationRequest
            The prompts and their decoding options.

        Returns
        -------
        list of Completion
            ``text`` is cut at the first stop string and at end of sequence; ``finish_reason`` is
            ``"length"`` when ``max_new_tokens`` tokens were generated without either, else ``"stop"``.
            ``prompt_tokens`` counts the prompt as the model saw it (after the chat template and
            truncation to ``max_length``), ``completion_tokens`` the generated tokens up to and including
            the end-of-sequence token or the token that completed the stop string.

        Raises
        ------
        TypeError
            If the model cannot generate (an encoder, or a checkpoint without a language-model head).
            Also if a request has images (a model that takes them is a
            :class:`~evaluators.adapters.vision.VisionLanguageAdapter`).
        ValueError
            If ``tokenizer.chat_template`` is on and the tokenizer has no chat template, or a request has
            ``max_new_tokens < 1`` or a negative temperature.
        """
        pictured = [r.id for r in requests if r.images]
        if pictured:  # the tracks never send them to a text model: a guard on that contract
            raise TypeError(
                f"request {pictured[0]!r} has images, but the manifest does not declare model.inputs: "
                "[text, image]"
            )
        if self.generator is None:
            reason = f": {self.generate_unavailable}" if self.generate_unavailable else ""
            raise TypeError(
                f"architecture {self.config.architecture!r} has no 'generate' capability (declare "
                f"'decoder' or 'encoder-decoder'){reason}"
            )
        for r in requests:
            if r.max_new_tokens < 1 or r.temperature < 0:
                raise ValueError(f"request {r.id!r}: needs max_new_tokens >= 1 and temperature >= 0")
        batches, prompts = self.plan(requests)
        out: list[Completion | None] = [None] * len(requests)
        done = 0
        with self._torch.inference_mode():
            for batch in batches:
                self.report("generate", done, len(requests))
                answers = self._generate_batch([requests[i] for i in batch], [prompts[i] for i in batch])
                for i, answer in zip(batch, answers, strict=True):
                    out[i] = answer
                done += len(batch)
        self.report("generate", done, len(requests))
        return out

    def plan(self, requests: Sequence[GenerationRequest]) -> tuple[list[list[int]], list[list[int]]]:
        """Return how :meth:`generate` decodes ``requests``: its batches (request indices) and prompt ids.

        Requests that share their decoding options are batched by prompt length (``batch_size`` each);
        a sampled request is a batch of its own, so that its seed alone decides its sample. Public so that
        ``nox -s bench-generation`` times its floor on exactly these batches.
        """
        texts = [self._render(r.prompt) for r in requests]
        prompts = self._prompt_ids(texts)
        groups: dict[tuple[int, float, tuple[str, ...]], list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault((r.max_new_tokens, float(r.temperature), tuple(r.stop)), []).append(i)
        batches: list[list[int]] = []
        for (_, temperature, _), members in groups.items():
            if temperature > 0:
                batches.extend([i] for i in members)
            else:
                buckets = length_bucketed_batches([texts[i] for i in members], self.config.batch_size)
                batches.extend([members[j] for j in bucket] for bucket in buckets)
        return batches, prompts

    def padded(self, prompts: Sequence[Sequence[int]]):
        """Return ``(input_ids, attention_mask)`` of one batch on the model's device.

        Decoders pad on the left, so that every row's next token follows its own last prompt token;
        encoder-decoders on the right.
        """
        torch = self._torch
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self._pad_id(), dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            cols = slice(0, len(ids)) if self.seq2seq else slice(width - len(ids), width)
            input_ids[row, cols] = torch.tensor(ids, dtype=torch.long)
            mask[row, cols] = 1
        return input_ids.to(self.device), mask.to(self.device)

    def _render(self, prompt: str) -> str:
        """Return the text the tokenizer sees: prefix, then the chat template when the manifest asks."""
        text = self.config.prompt_prefix + prompt
        if not self.config.chat_template:
            return text
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(
                f"the manifest sets tokenizer.chat_template: true, but the tokenizer in {self.config.path} "
                "has no chat template (tokenizer_config.json 'chat_template' or chat_template.jinja); "
                "ship one or set tokenizer.chat_template: false"
            )
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=False
        )

    def _prompt_ids(self, texts: list[str]) -> list[list[int]]:
        """Return token ids per prompt, cut to ``max_length`` (cuts are counted in ``truncated_prompts``).

        Decoders keep the end of the prompt (where the question usually is), encoder-decoders the beginning;
        the tokenizer cuts, so special tokens (BOS, EOS) survive.
        """
        if not texts:
            return []
        # A rendered chat template already holds the special tokens (BOS …); adding them again doubles them.
        special = not self.config.chat_template
        ids = self.tokenizer(texts, add_special_tokens=special)["input_ids"]
        limit = self.config.max_length
        long = [i for i, x in enumerate(ids) if len(x) > limit]
        if long:
            side = self.tokenizer.truncation_side
            self.tokenizer.truncation_side = "right" if self.seq2seq else "left"
            try:
                cut = self.tokenizer(
                    [texts[i] for i in long], add_special_tokens=special, truncation=True, max_length=limit
                )["input_ids"]
            finally:
                self.tokenizer.truncation_side = side  # embedding cuts on the tokenizer's own side
            for i, x in zip(long, cut, strict=True):
                ids[i] = x
        self.truncated_prompts += len(long)
        if self.seq2seq:
            return ids
        # An empty prompt would leave a row with nothing to attend to: start it from BOS instead.
        start = self.tokenizer.bos_token_id
        start = start if start is not None else self.generator.generation_config.bos_token_id
        return [x or [start if start is not None else self._pad_id()] for x in ids]

    def _eos_ids(self) -> set[int]:
        eos = self.generator.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return set() if eos is None else {eos} if isinstance(eos, int) else set(eos)

    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.generator.generation_config.pad_token_id
        return pad if pad is not None else min(self._eos_ids(), default=0)

    def _generate_batch(
        self, requests: list[GenerationRequest], prompts: list[list[int]]
    ) -> list[Completion]:
        """Complete one batch of requests that share their decoding options.

        Greedy batches run the lean loop (:mod:`evaluators.adapters.greedy`, the same tokens as ``generate``
        with less around them) unless the model's generation settings need ``generate``.
        """
        first = requests[0]
        pad, eos = self._pad_id(), self._eos_ids()
        input_ids, mask = self.padded(prompts)
        new = self._decode(input_ids, mask, first, pad, eos)
        return [
            self._finish(r, tokens, len(p), pad, eos)
            for r, tokens, p in zip(requests, new, prompts, strict=True)
        ]

    def _decode(self, input_ids, mask, first: GenerationRequest, pad: int, eos: set[int]) -> list[list[int]]:
        """Each row's new tokens: the lean greedy loop where it matches ``generate``, else ``generate``."""
        stops = [s for s in first.stop if s]  # an empty string would stop generation at once
        if first.temperature > 0 or self.lean_unsupported is not None:
            return self._library_generate(input_ids, mask, first, pad, eos, stops)
        watch = None
        if stops:
            watch = StopWatch(self.tokenizer, stops, lambda text: stop_index(text, stops) is not None)
        budget = first.max_new_tokens
        try:
            return greedy_tokens(self.generator, input_ids, mask, max_new_tokens=budget, eos=eos, watch=watch)
        except LeanGreedyUnsupported as exc:  # seen at the first step: this and later batches via generate
            self.lean_unsupported = str(exc)
            return self._library_generate(input_ids, mask, first, pad, eos, stops)

    def _library_generate(
        self, input_ids, mask, first: GenerationRequest, pad: int, eos: set[int], stops: list[str]
    ) -> list[list[int]]:
        """Each row's new tokens from ``model.generate`` (sampling, or settings the lean loop lacks)."""
        kwargs: dict[str, Any] = {
            "max_new_tokens": first.max_new_tokens,
            "num_beams": 1,
            "num_return_sequences": 1,
            "pad_token_id": pad,
            "eos_token_id": sorted(eos) or None,
        }
        if first.temperature > 0:
            kwargs.update(do_sample=True, temperature=float(first.temperature), top_k=0, top_p=1.0)
            self._torch.manual_seed(first.seed)  # one request per batch: its seed alone decides the sample
        else:
            kwargs["do_sample"] = False
        # Encoder-decoder outputs start with the decoder start token; decoder outputs repeat the prompt.
        start = 1 if self.seq2seq else input_ids.shape[1]
        if stops:
            from transformers import StoppingCriteriaList

            # Only saves the steps after a stop string; the cut of the decoded text below defines the
            # result. Not transformers' stop_strings: it also matches across the end of the prompt.
            kwargs["stopping_criteria"] = StoppingCriteriaList([_StopAtStrings(self.tokenizer, start, stops)])
        sequences = self.generator.generate(input_ids=input_ids, attention_mask=mask, **kwargs)
        return sequences[:, start:].tolist()

    def _finish(
        self, request: GenerationRequest, tokens: list[int], n_prompt: int, pad: int, eos: set[int]
    ) -> Completion:
        """Cut one row's new tokens at end of sequence and its text at the first stop string."""
        ended = next((k for k, t in enumerate(tokens) if t in eos), None)
        if ended is not None:
            tokens = tokens[:ended]
        else:
            # A row stopped early (by a stop string) is filled with padding while the batch goes on.
            while tokens and tokens[-1] == pad:
                tokens.pop()
        decode = self.tokenizer.decode
        text = decode(tokens, skip_special_tokens=True)
        cut = stop_index(text, request.stop)
        if cut is not None:

            def reached(k: int) -> bool:
                return stop_index(decode(tokens[:k], skip_special_tokens=True), request.stop) is not None

            used = _first_prefix(len(tokens), reached)
            return Completion(request.id, text[:cut], "stop", n_prompt, used)
        if ended is not None:
            return Completion(request.id, text, "stop", n_prompt, len(tokens) + 1)
        reason = "length" if len(tokens) >= request.max_new_tokens else "stop"
        return Completion(request.id, text, reason, n_prompt, len(tokens))


class _StopAtStrings:
    """Stopping criterion: a row is done once its generated text (never the prompt) holds a stop string.

    Only after the text has begun (:func:`evaluators.adapters.stop_index`): a leading blank line goes on.
    """

    def __init__(self, tokenizer, start: int, stops: list[str]) -> None:
        self.tokenizer, self.start, self.stops = tokenizer, start, stops

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        texts = self.tokenizer.batch_decode(input_ids[:, self.start :].tolist(), skip_special_tokens=True)
        done = [stop_index(text, self.stops) is not None for text in texts]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)


def _first_prefix(n: int, holds) -> int:
    """Smallest ``k`` in ``1..n`` with ``holds(k)`` (``holds`` is monotone and ``holds(n)`` is true)."""
    lo, hi = 1, n
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _vocab_tokenizer(config: ModelConfig):
    """Return the regex-over-``vocab.txt`` tokenizer ``tokenizer.pre_tokenizer`` asks for, or ``None``."""
    if not config.pre_tokenizer:
        return None
    from evaluators.adapters.smiles_tokens import VocabTokenizer

    vocab = config.path / "vocab.txt"
    if not vocab.is_file():
        raise ValueError(
            f"tokenizer.pre_tokenizer {config.pre_tokenizer!r} needs the vocabulary 'vocab.txt' (one token "
            "per line) in the model folder; the folder has none"
        )
    return VocabTokenizer(vocab, config.pre_tokenizer)


def _config(config: ModelConfig):
    """Return the model's configuration: ``config.json`` as is, or read as option ``model_type`` says.

    Checkpoints written before ``transformers`` 3 (rxnfp's BERTs) have no ``model_type`` key, and inside the
    sandbox the folder is ``/models``, whose name gives ``AutoConfig`` nothing to guess from.
    """
    from transformers import AutoConfig

    model_type = config.options.get("model_type")
    if not model_type:
        return None
    raw = json.loads((config.path / "config.json").read_text(encoding="utf-8"))
    declared = raw.pop("model_type", None)
    if declared not in (None, model_type):
        raise ValueError(f"option model_type {model_type!r}, but config.json says model_type {declared!r}")
    return AutoConfig.for_model(str(model_type), **raw)


def _load(config: ModelConfig):
    """Load the model for ``config.architecture``: ``(model, generator or None, why no generator)``.

    Decoders load with their language-model head, encoder-decoders as seq2seq LMs; a checkpoint that
    ``transformers`` cannot map to such a class (custom code without one) falls back to ``AutoModel``
    and can only embed.
    """
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM

    kwargs: dict[str, Any] = {"trust_remote_code": config.trust_remote_code}
    model_config = _config(config)
    if model_config is not None:
        kwargs["config"] = model_config
    heads = {"decoder": AutoModelForCausalLM, "encoder-decoder": AutoModelForSeq2SeqLM}
    head = heads.get(config.architecture)
    reason = None
    if head is not None:
        try:
            model = head.from_pretrained(config.path, **kwargs)
        except ValueError as exc:
            if "Unrecognized configuration class" not in str(exc):
                raise
            reason = f"{head.__name__} cannot load this model ({str(exc).splitlines()[0]})"
        else:
            return model, model, None
    return AutoModel.from_pretrained(config.path, **kwargs), None, reason
