"""``transformers``: Hugging Face models loaded with ``transformers`` from a local folder.

The host prefetches weights at a pinned revision (or unpacks a pinned pip package) and mounts them
read-only; the hub is offline here. Hidden states are pooled in the same forward pass that computes them:
``pooling`` is ``mean`` over the attention mask with special tokens included (the AMORE reference
behaviour), ``cls``, ``last_token`` or ``mean_no_special``. For encoder-decoder models the encoder stack is
used for ``last`` and, with option ``decoder_stack`` (default true), the decoder stack is a separate
component fed the same tokens shifted right behind the decoder start token. With option ``layers: all``
(default) every hidden state (embedding output + each block) is returned as ``encoder.<k>`` /
``decoder.<k>`` besides ``last``. Inputs longer than ``max_length`` tokens are truncated and flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluators.adapters import ADAPTERS, EmbeddingAdapter, Embeddings, ModelConfig, length_bucketed_batches

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


@ADAPTERS.register("transformers")
class TransformersAdapter(EmbeddingAdapter):
    """Pooled hidden states of a ``transformers`` model (encoder, decoder or the encoder of a seq2seq)."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        import torch
        from transformers import AutoModel, AutoTokenizer

        if config.path is None:
            raise ValueError("adapter 'transformers' needs model weights (model.source in the manifest)")
        if config.pooling not in POOLINGS:
            raise ValueError(f"pooling {config.pooling!r} is not one of {POOLINGS}")
        torch.manual_seed(0)
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(
            config.path, trust_remote_code=config.trust_remote_code
        )
        self.tokenizer.padding_side = "right"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token or self.tokenizer.unk_token
        model = AutoModel.from_pretrained(config.path, trust_remote_code=config.trust_remote_code)
        self.seq2seq = config.architecture == "encoder-decoder"
        if self.seq2seq and not hasattr(model, "get_encoder"):
            raise ValueError(
                f"architecture 'encoder-decoder' declared, but {type(model).__name__} has no encoder"
            )
        self.stack = "decoder" if config.architecture == "decoder" else "encoder"
        # Encoder-decoders: the decoder stack is a separate component, off unless asked for.
        self.decoder_stack = self.seq2seq and bool(config.options.get("decoder_stack", True))
        self.model = (model if self.decoder_stack or not self.seq2seq else model.get_encoder()).eval()
        self.all_layers = config.options.get("layers", "all") == "all"

    def describe(self) -> dict[str, Any]:  # noqa: D102
        return {
            "parameters": int(sum(p.numel() for p in self.model.parameters())),
            "model_type": getattr(self.model.config, "model_type", ""),
            "pooling": self.config.pooling,
            "max_length": self.config.max_length,
        }

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
            output = self.model(**inputs, output_hidden_states=self.all_layers)
            states = {"last": (output.last_hidden_state, mask, special)}
            if self.all_layers:
                states.update(
                    {f"{self.stack}.{k}": (h, mask, special) for k, h in enumerate(output.hidden_states)}
                )
            return states
        dec_ids, dec_mask = self._decoder_inputs(inputs["input_ids"], mask)
        output = self.model(
            **inputs, decoder_input_ids=dec_ids, decoder_attention_mask=dec_mask, output_hidden_states=True
        )
        dec_special = torch.zeros_like(special)
        dec_special[:, 1:] = special[:, :-1]
        dec_special[:, 0] = 1  # the decoder start token is special
        states = {"last": (output.encoder_last_hidden_state, mask, special)}
        if self.all_layers:
            states.update(
                {f"encoder.{k}": (h, mask, special) for k, h in enumerate(output.encoder_hidden_states)}
            )
            states.update(
                {
                    f"decoder.{k}": (h, dec_mask, dec_special)
                    for k, h in enumerate(output.decoder_hidden_states)
                }
            )
        else:
            states["decoder.last"] = (output.last_hidden_state, dec_mask, dec_special)
        return states

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        torch = self._torch
        cfg = self.config
        texts = [cfg.prompt_prefix + s for s in strings]
        truncated = np.zeros(len(texts), dtype=bool)
        layers: dict[str, np.ndarray] = {}
        done = 0
        with torch.inference_mode():
            for index in length_bucketed_batches(texts, cfg.batch_size):
                self.report("embed", done, len(texts))
                done += len(index)
                chunk = [texts[i] for i in index]
                batch = self.tokenizer(
                    chunk,
                    padding=True,
                    truncation=True,
                    max_length=cfg.max_length,
                    return_tensors="pt",
                    return_special_tokens_mask=True,
                )
                if batch.encodings is not None:  # fast tokenizer: the cut-off part is kept as overflow
                    truncated[index] = [bool(e.overflowing) for e in batch.encodings]
                else:
                    full = self.tokenizer(chunk, add_special_tokens=True)["input_ids"]
                    truncated[index] = [len(ids) > cfg.max_length for ids in full]
                states = self._states(batch)
                final = f"{self.stack}.{len(states) - 2}" if self.all_layers and not self.seq2seq else None
                for label, (hidden, mask, special) in states.items():
                    if label == final:
                        continue  # identical to "last": copied below instead of pooled twice
                    pooled = pool(hidden, mask, special, cfg.pooling).float().numpy()
                    if label not in layers:
                        layers[label] = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
                    layers[label][index] = pooled
        if self.all_layers and not self.seq2seq:
            n_states = sum(1 for k in layers if k.startswith(f"{self.stack}."))
            layers[f"{self.stack}.{n_states}"] = layers["last"].copy()
        return Embeddings(layers, truncated=truncated)
