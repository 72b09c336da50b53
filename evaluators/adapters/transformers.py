"""``transformers``: Hugging Face models loaded with ``transformers`` from a local folder.

The host prefetches weights at a pinned revision (or unpacks a pinned pip package) and mounts them
read-only; the hub is offline here. Hidden states are pooled in the same forward pass that computes them:
``pooling`` is ``mean`` over the attention mask with special tokens included (the AMORE reference
behaviour), ``cls``, ``last_token`` or ``mean_no_special``. For encoder-decoder models the encoder stack is
used. With option ``layers: all`` every hidden state (embedding output + each block) is returned as
``<stack>.<k>`` besides ``last``. Inputs longer than ``max_length`` tokens are truncated and counted.
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
        if config.architecture == "encoder-decoder":
            model = model.get_encoder()
        self.stack = "decoder" if config.architecture == "decoder" else "encoder"
        self.model = model.eval()
        self.all_layers = config.options.get("layers", "all") == "all"

    def describe(self) -> dict[str, Any]:  # noqa: D102
        return {
            "parameters": int(sum(p.numel() for p in self.model.parameters())),
            "model_type": getattr(self.model.config, "model_type", ""),
            "pooling": self.config.pooling,
            "max_length": self.config.max_length,
        }

    def embed(self, strings: Sequence[str]) -> Embeddings:  # noqa: D102
        torch = self._torch
        cfg = self.config
        texts = [cfg.prompt_prefix + s for s in strings]
        lengths = [len(ids) for ids in self.tokenizer(texts, add_special_tokens=True)["input_ids"]]
        n_truncated = sum(n > cfg.max_length for n in lengths)
        layers: dict[str, np.ndarray] = {}
        with torch.inference_mode():
            for index in length_bucketed_batches(texts, cfg.batch_size):
                batch = self.tokenizer(
                    [texts[i] for i in index],
                    padding=True,
                    truncation=True,
                    max_length=cfg.max_length,
                    return_tensors="pt",
                    return_special_tokens_mask=True,
                )
                special = batch.pop("special_tokens_mask")
                output = self.model(**batch, output_hidden_states=self.all_layers)
                states = {"last": output.last_hidden_state}
                if self.all_layers:
                    states.update({f"{self.stack}.{k}": h for k, h in enumerate(output.hidden_states)})
                for label, hidden in states.items():
                    pooled = pool(hidden, batch["attention_mask"], special, cfg.pooling).float().numpy()
                    if label not in layers:
                        layers[label] = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
                    layers[label][index] = pooled
        return Embeddings(layers, n_truncated=n_truncated)
