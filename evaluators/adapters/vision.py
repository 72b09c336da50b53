"""Vision-language models behind the ``transformers`` adapter (manifest ``model.inputs: [text, image]``).

:class:`~evaluators.adapters.transformers.TransformersAdapter` builds a :class:`VisionLanguageAdapter`
instead of itself when :attr:`evaluators.schema.ModelConfig.images` is true; this module holds that path so
that the text one stays as it was. The model folder's processor (``AutoProcessor``: image processor and
tokenizer) and the model (``AutoModelForImageTextToText``, or ``AutoModelForVision2Seq`` where the installed
``transformers`` still has it and the first does not know the configuration) load from local files only.
This module never imports :mod:`evaluators.adapters.transformers` (that one imports this one to dispatch),
so the few lines of completion bookkeeping it shares with the text path are its own copy.

Every request goes through the processor, those without images too: one code path, one tokenizer, and a
vision-language model need not expose a text-only language model the text path could drive. A prompt is
rendered as the text path renders it (``prompt_prefix``, then, when the manifest sets
``tokenizer.chat_template``, one user message through the chat template), with the images in front of the
text: as ``{"type": "image"}`` parts of the message, or as the processor's image token once per image
without a template. The manifest's flag, not the presence of a template, decides, because it also sets the
answer budget and stop strings the tracks send (``submissions/README.md``). Greedy requests sharing
``max_new_tokens``, ``stop`` and whether they carry images are batched by prompt length (``batch_size``
each, left padding for decoders); a sampled request runs alone after ``torch.manual_seed(seed)``. Decoding is
``model.generate`` (the lean greedy loop of :mod:`evaluators.adapters.greedy` feeds token ids only, not
pixels), and texts are cut and counted as on the text path. Prompts are never truncated: cutting the image
placeholder tokens would desynchronise them from the image features, which the model refuses.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evaluators.adapters import (
    Completion,
    GenerationRequest,
    GenerativeAdapter,
    ModelConfig,
    length_bucketed_batches,
    stop_index,
)

if TYPE_CHECKING:  # Pillow is imported when an image is decoded, not with the adapters package
    from PIL.Image import Image

#: The only image form a request may carry (``GenerationRequest.images``): a PNG as a base64 data URI.
PNG_DATA_URI = "data:image/png;base64,"


def decode_image(uri: str, request_id: str) -> Image:
    """Return the RGB ``PIL.Image.Image`` that a ``data:image/png;base64,…`` URI holds.

    Parameters
    ----------
    uri : str
        The data URI (one entry of ``GenerationRequest.images``).
    request_id : str
        The request's id, named in the error.

    Returns
    -------
    PIL.Image.Image
        The decoded image, converted to RGB (image processors expect three channels; RDKit may write RGBA).

    Raises
    ------
    ValueError
        If the URI is not a base64 PNG data URI or its bytes are not a PNG that decodes.
    """
    import PIL.Image
    from PIL import UnidentifiedImageError

    if not isinstance(uri, str) or not uri.startswith(PNG_DATA_URI):
        head = uri[:40] if isinstance(uri, str) else type(uri).__name__
        raise ValueError(f"request {request_id!r}: an image must be a {PNG_DATA_URI}… URI, got {head!r}")
    try:
        data = base64.b64decode(uri[len(PNG_DATA_URI) :], validate=True)
        with PIL.Image.open(io.BytesIO(data)) as image:
            if image.format != "PNG":
                raise ValueError(f"the bytes are {image.format}, not PNG")
            image.load()  # decode now: a truncated PNG fails here, not inside the processor
            return image.convert("RGB")
    except (binascii.Error, UnidentifiedImageError, OSError, ValueError) as exc:
        raise ValueError(f"request {request_id!r}: the image data URI does not hold a PNG ({exc})") from exc


def load_vision_model(config: ModelConfig) -> tuple[Any, Any]:
    """Load ``(processor, model)`` from ``config.path``, local files only.

    ``AutoModelForImageTextToText`` first; ``AutoModelForVision2Seq`` (older ``transformers`` only; 5.x
    has none) when the first does not know the configuration class.

    Raises
    ------
    ValueError
        If no image-text-to-text class knows the model's configuration.
    """
    import transformers
    from transformers import AutoModelForImageTextToText, AutoProcessor

    kwargs: dict[str, Any] = {"trust_remote_code": config.trust_remote_code, "local_files_only": True}
    processor = AutoProcessor.from_pretrained(config.path, **kwargs)
    heads = [AutoModelForImageTextToText]
    if hasattr(transformers, "AutoModelForVision2Seq"):
        heads.append(transformers.AutoModelForVision2Seq)
    refusals = []
    for head in heads:
        try:
            return processor, head.from_pretrained(config.path, **kwargs)
        except ValueError as exc:
            if "Unrecognized configuration class" not in str(exc):
                raise
            refusals.append(f"{head.__name__}: {str(exc).splitlines()[0]}")
    why = "; ".join(refusals)
    raise ValueError(f"model.inputs declares image, but no image-text-to-text class loads the model ({why})")


class VisionLanguageAdapter(GenerativeAdapter):
    """The ``transformers`` adapter for a vision-language model: ``generate`` with images, no ``embed``.

    Built by ``TransformersAdapter(config)`` when ``config.images`` is true (not registered on its own: the
    manifest still names adapter ``transformers``, whose class-level facts the manifest check reads).
    """

    capabilities = frozenset({"generate"})  # pooled hidden states of a VLM are not offered

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        import torch

        if config.path is None:
            raise ValueError("adapter 'transformers' needs model weights (model.source in the manifest)")
        if config.architecture not in ("decoder", "encoder-decoder"):
            raise ValueError(
                f"model.inputs declares image, which needs a generating model (architecture 'decoder' or "
                f"'encoder-decoder'), not {config.architecture!r}"
            )
        torch.manual_seed(0)
        self._torch = torch
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.seq2seq = config.architecture == "encoder-decoder"
        self.processor, model = load_vision_model(config)
        self.tokenizer = getattr(self.processor, "tokenizer", None)
        if self.tokenizer is None:
            name = type(self.processor).__name__
            raise ValueError(f"the processor in {config.path} ({name}) has no tokenizer")
        # Decoders: every row's next token must follow its own last prompt token, so pad on the left.
        self.tokenizer.padding_side = "right" if self.seq2seq else "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        self.generator = model.to(self.device).eval()

    def describe(self) -> dict[str, Any]:  # noqa: D102
        model = self.generator
        defaults = model.generation_config.to_diff_dict()
        return {
            "parameters": int(sum(p.numel() for p in model.parameters())),
            "model_type": getattr(model.config, "model_type", ""),
            "architecture": self.config.architecture,
            "model_class": type(model).__name__,
            "processor_class": type(self.processor).__name__,
            "inputs": ["text", "image"],
            "device": self.device.type,
            "generation_defaults": {
                k: v for k, v in defaults.items() if not k.startswith("_") and k != "transformers_version"
            },
            "chat_template": self.config.chat_template,
        }

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Complete each request, images included, in request order.

        Parameters
        ----------
        requests : sequence of GenerationRequest
            Prompts, their images (``data:image/png;base64,…`` URIs, possibly none) and decoding options.

        Returns
        -------
        list of Completion
            As :meth:`evaluators.adapters.transformers.TransformersAdapter.generate`: ``text`` cut at the
            first stop string and at end of sequence, ``finish_reason`` ``"length"`` when
            ``max_new_tokens`` tokens came without either. ``prompt_tokens`` counts the prompt as the model
            saw it (the image placeholder tokens the processor inserts included), ``completion_tokens`` the
            new tokens up to and including the end-of-sequence token or the one that completed a stop string.

        Raises
        ------
        ValueError
            If an image is not a PNG data URI (the message names the request), a request has
            ``max_new_tokens < 1`` or a negative temperature, the manifest sets ``tokenizer.chat_template``
            and neither the processor nor its tokenizer has a template, or an image comes without a template
            and the processor has no image token.
        """
        for r in requests:
            if r.max_new_tokens < 1 or r.temperature < 0:
                raise ValueError(f"request {r.id!r}: needs max_new_tokens >= 1 and temperature >= 0")
        # Every image is decoded before any decoding starts: a malformed one fails the call at once.
        images = [[decode_image(uri, r.id) for uri in r.images] for r in requests]
        texts = [self._render_with_images(r) for r in requests]
        out: list[Completion | None] = [None] * len(requests)
        done = 0
        with self._torch.inference_mode():
            for batch in self._vision_batches(requests, texts):
                self.report("generate", done, len(requests))
                answers = self._generate_vision_batch(
                    [requests[i] for i in batch], [texts[i] for i in batch], [images[i] for i in batch]
                )
                for i, answer in zip(batch, answers, strict=True):
                    out[i] = answer
                done += len(batch)
        self.report("generate", done, len(requests))
        return out

    def _render_with_images(self, request: GenerationRequest) -> str:
        """Return the text the processor sees: its images first, then prefix and prompt (chat when asked)."""
        text = self.config.prompt_prefix + request.prompt
        n = len(request.images)
        if self.config.chat_template:
            own = getattr(self.processor, "chat_template", None)
            template = None if own else getattr(self.tokenizer, "chat_template", None)
            if not own and not template:
                raise ValueError(
                    f"the manifest sets tokenizer.chat_template: true, but neither the processor nor the "
                    f"tokenizer in {self.config.path} has a chat template (chat_template.jinja or "
                    "chat_template.json); ship one or set tokenizer.chat_template: false"
                )
            content: list[dict[str, str]] = [{"type": "image"} for _ in range(n)]
            content.append({"type": "text", "text": text})
            return self.processor.apply_chat_template(
                [{"role": "user", "content": content}],
                chat_template=template,
                add_generation_prompt=True,
                tokenize=False,
            )
        if not n:
            return text
        token = getattr(self.processor, "image_token", None)
        if not token:
            name = type(self.processor).__name__
            raise ValueError(
                f"request {request.id!r} has images, but the processor {name} has no "
                "image token to place them with; set tokenizer.chat_template: true to render them with its "
                "chat template"
            )
        return token * n + text

    def _vision_batches(self, requests: Sequence[GenerationRequest], texts: list[str]) -> list[list[int]]:
        """Request indices per batch: greedy ones by shared options and prompt length, sampled ones alone.

        Requests with and without images never share a batch: a processor is then called either with an
        image per placeholder or with none, the two forms every processor takes.
        """
        groups: dict[tuple[int, float, tuple[str, ...], bool], list[int]] = {}
        for i, r in enumerate(requests):
            key = (r.max_new_tokens, float(r.temperature), tuple(r.stop), bool(r.images))
            groups.setdefault(key, []).append(i)
        batches: list[list[int]] = []
        for (_, temperature, _, _), members in groups.items():
            if temperature > 0:
                batches.extend([i] for i in members)
            else:
                buckets = length_bucketed_batches([texts[i] for i in members], self.config.batch_size)
                batches.extend([members[int(j)] for j in bucket] for bucket in buckets)
        return batches

    def _generate_vision_batch(
        self, requests: list[GenerationRequest], texts: list[str], images: list[list[Image]]
    ) -> list[Completion]:
        """Complete one batch of requests that share their decoding options (``model.generate``)."""
        torch = self._torch
        first = requests[0]
        inputs = self.processor(
            text=texts,
            images=images if any(images) else None,
            padding=True,
            # A rendered chat template holds its special tokens already (as on the text path).
            add_special_tokens=not self.config.chat_template,
            return_tensors="pt",
        ).to(self.device)
        pad, eos = self._pad_id(), self._eos_ids()
        stops = [s for s in first.stop if s]  # an empty string would stop generation at once
        kwargs: dict[str, Any] = {
            "max_new_tokens": first.max_new_tokens,
            "num_beams": 1,
            "num_return_sequences": 1,
            "pad_token_id": pad,
            "eos_token_id": sorted(eos) or None,
        }
        if first.temperature > 0:
            kwargs.update(do_sample=True, temperature=float(first.temperature), top_k=0, top_p=1.0)
            torch.manual_seed(first.seed)  # one request per batch: its seed alone decides the sample
        else:
            kwargs["do_sample"] = False
        # Encoder-decoder outputs start with the decoder start token; decoder outputs repeat the prompt.
        start = 1 if self.seq2seq else inputs["input_ids"].shape[1]
        if stops:
            from transformers import StoppingCriteriaList

            kwargs["stopping_criteria"] = StoppingCriteriaList([_StopAtStrings(self.tokenizer, start, stops)])
        sequences = self.generator.generate(**inputs, **kwargs)
        lengths = inputs["attention_mask"].sum(dim=1).tolist()
        return [
            self._finish(r, tokens, int(n), pad, eos)
            for r, tokens, n in zip(requests, sequences[:, start:].tolist(), lengths, strict=True)
        ]

    def _eos_ids(self) -> set[int]:
        """End-of-sequence ids: the generation config's, else the tokenizer's (as on the text path)."""
        eos = self.generator.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return set() if eos is None else {eos} if isinstance(eos, int) else set(eos)

    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.generator.generation_config.pad_token_id
        return pad if pad is not None else min(self._eos_ids(), default=0)

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

        def decode(ids: list[int]) -> str:
            return self.tokenizer.decode(ids, skip_special_tokens=True)

        text = decode(tokens)
        cut = stop_index(text, request.stop)
        if cut is not None:
            # The fewest new tokens whose text already holds the stop string (a binary search: the
            # property only turns on as tokens are added).
            lo, hi = 1, len(tokens)
            while lo < hi:
                mid = (lo + hi) // 2
                if stop_index(decode(tokens[:mid]), request.stop) is None:
                    lo = mid + 1
                else:
                    hi = mid
            return Completion(request.id, text[:cut], "stop", n_prompt, lo)
        if ended is not None:
            return Completion(request.id, text, "stop", n_prompt, len(tokens) + 1)
        reason = "length" if len(tokens) >= request.max_new_tokens else "stop"
        return Completion(request.id, text, reason, n_prompt, len(tokens))


class _StopAtStrings:
    """Stopping criterion: a row is done once its generated text (never the prompt) holds a stop string."""

    def __init__(self, tokenizer: Any, start: int, stops: list[str]) -> None:
        self.tokenizer, self.start, self.stops = tokenizer, start, stops

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        texts = self.tokenizer.batch_decode(input_ids[:, self.start :].tolist(), skip_special_tokens=True)
        done = [stop_index(text, self.stops) is not None for text in texts]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
