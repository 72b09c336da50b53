"""Greedy decoding with the key–value cache, and nothing else: the floor under ``model.generate``.

For greedy decoding without logits processors ``generate`` computes, per step, ``argmax`` of the last
position's logits; everything else it does per step (its stopping criteria over every row, the streamer and
bookkeeping hooks, padding finished rows and running them on) costs time without changing a token. This loop
does the same arithmetic with less around it:

- the prompt (decoders) or the encoder (encoder-decoders) runs once, then one decoder step per token;
- a row that ends (end of sequence, a stop string, its budget) leaves the batch, with its cache rows, so the
  remaining steps run on fewer rows;
- a stop string is looked for only in a row whose new token can hold one of its characters, and only that
  row's text is decoded (``generate``'s criterion decodes every row at every step).

Position ids, attention mask and cache follow ``generate`` (``transformers`` 5: positions from the cumulative
mask, padding at position 0, one more per step; the mask grows by a one per step), so the tokens are the same;
``tests/evaluators/test_generation.py`` compares both on random models and the chem-t5 references.
``lean_greedy_unsupported`` says when ``generate`` must run instead (a logits processor, a static cache,
remote code).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["LeanGreedyUnsupported", "StopWatch", "greedy_tokens", "lean_greedy_unsupported"]

#: ``generation_config`` settings that make ``generate`` add a logits processor or a special cache, with the
#: value that adds none (``None`` is always neutral).
_NEUTRAL: dict[str, Any] = {
    "guidance_scale": 1.0,
    "sequence_bias": None,
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "bad_words_ids": None,
    "min_length": 0,
    "min_new_tokens": 0,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "remove_invalid_values": False,
    "exponential_decay_length_penalty": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "forced_decoder_ids": None,
    "watermarking_config": None,
    "renormalize_logits": False,
    "cache_implementation": "dynamic",
    "prompt_lookup_num_tokens": None,
    "assistant_early_exit": None,
}


def lean_greedy_unsupported(model: Any, *, remote_code: bool) -> str | None:
    """Return why :func:`greedy_tokens` would not decode as ``model.generate`` does, or ``None``.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A model with a language-model head (``AutoModelForCausalLM`` or ``AutoModelForSeq2SeqLM``).
    remote_code : bool
        Whether the model's code came with the checkpoint: its own ``prepare_inputs_for_generation`` may do
        more than the library's, so only ``generate`` is trusted with it.
    """
    if remote_code:
        return "the model's own code may prepare its inputs differently"
    config = getattr(model, "generation_config", None)
    for key, neutral in _NEUTRAL.items():
        value = getattr(config, key, None)
        if value is not None and value != neutral and not (neutral == 0 and value == 0):
            return f"generation_config.{key} = {value!r} changes the logits"
    if model.config.is_encoder_decoder and _decoder_start(model) is None:
        return "no decoder_start_token_id"
    if not {"cache", "past_key_values"} & set(inspect.signature(model.forward).parameters):
        return "its forward takes no key-value cache (a state-space or other recurrent model)"
    return None


class LeanGreedyUnsupported(RuntimeError):
    """The model's cache cannot be carried or cut by row: ``generate`` must decode this model instead."""


def _decoder_start(model: Any) -> int | None:
    for config in (model.generation_config, model.config):
        start = getattr(config, "decoder_start_token_id", None)
        if start is None:
            start = getattr(config, "bos_token_id", None) if config is model.config else None
        if start is not None:
            return int(start[0] if isinstance(start, list | tuple) else start)
    return None


class StopWatch:
    """Finds the first step at which a row's generated text holds a stop string, decoding as little as can be.

    A stop string can only appear when the new token brings one of its characters (or bytes of a character
    not yet complete, which decode to U+FFFD), so rows whose new token brings none are not decoded at all.
    Missing a stop only lets a row run on: the adapter cuts the text at the first stop string afterwards, so
    the completion is the same either way.
    """

    def __init__(self, tokenizer: Any, stops: Sequence[str], found: Callable[[str], bool]) -> None:
        self.tokenizer, self.found = tokenizer, found
        self.chars = {c for s in stops for c in s} | {"\ufffd"}
        self._may: dict[int, bool] = {}

    def may_stop(self, token: int) -> bool:
        """Whether ``token`` can complete a stop string (cached per token id)."""
        may = self._may.get(token)
        if may is None:
            piece = self.tokenizer.decode([token], skip_special_tokens=True)
            may = self._may[token] = any(c in self.chars for c in piece)
        return may

    def stopped(self, tokens: list[int]) -> bool:
        """Whether the text of ``tokens`` (one row's generated tokens so far) holds a stop string."""
        return self.found(self.tokenizer.decode(tokens, skip_special_tokens=True))


def greedy_tokens(
    model: Any,
    input_ids: Any,
    attention_mask: Any,
    *,
    max_new_tokens: int,
    eos: set[int],
    watch: StopWatch | None = None,
) -> list[list[int]]:
    """Decode greedily; return each row's new tokens, through its end-of-sequence token when it has one.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        For which :func:`lean_greedy_unsupported` returned ``None``.
    input_ids, attention_mask : torch.Tensor
        ``(rows, width)`` prompt ids and mask, left-padded for decoders, right-padded for encoder-decoders,
        on the model's device.
    max_new_tokens : int
        The budget per row.
    eos : set of int
        End-of-sequence ids: a row that generates one ends there (the id is kept as its last token).
    watch : StopWatch, optional
        Ends a row at the token that completes a stop string.

    Returns
    -------
    list of list of int
        The tokens ``generate`` returns for the row (after the prompt or the decoder start token), without
        the padding it appends once the row has ended.
    """
    import torch

    rows = input_ids.shape[0]
    out: list[list[int]] = [[] for _ in range(rows)]
    alive = list(range(rows))  # original row of each row still in the batch
    eos_ids = torch.tensor(sorted(eos), dtype=torch.long, device=input_ids.device) if eos else None
    seq2seq = model.config.is_encoder_decoder
    accepts = inspect.signature(model.forward).parameters
    cache_key = "cache" if "cache" in accepts else "past_key_values"
    # As generate: only the last position's logits, never (rows x prompt length x vocabulary) of them at
    # the first step, which for a long prompt and a large vocabulary would not fit in memory.
    last_only = {"logits_to_keep": 1} if "logits_to_keep" in accepts else {}
    if seq2seq:
        encoder = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        step_ids = torch.full((rows, 1), _decoder_start(model), dtype=torch.long, device=input_ids.device)
        inputs: dict[str, Any] = {"encoder_outputs": encoder, "attention_mask": attention_mask}
    else:
        step_ids = input_ids
        mask = attention_mask
        positions = None
        if "position_ids" in accepts:
            positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
        inputs = {"attention_mask": mask}
    cache = None
    for step in range(max_new_tokens):
        kwargs = dict(inputs)
        if seq2seq:
            kwargs["decoder_input_ids"] = step_ids
        else:
            kwargs["input_ids"] = step_ids
            if positions is not None:
                kwargs["position_ids"] = positions if step == 0 else positions[:, -1:]
        if cache is not None:
            kwargs[cache_key] = cache
        output = model(**kwargs, **last_only, use_cache=True, return_dict=True)
        cache = output.get("cache", output.get("past_key_values"))
        if cache is None or not hasattr(cache, "batch_select_indices"):
            # Decoding on without the cache would give other tokens than generate's: refuse, before any
            # token is returned, so that the caller decodes the batch with generate instead.
            raise LeanGreedyUnsupported(f"{type(model).__name__} returned no cache the loop can cut by row")
        # As ``generate``: the last position's logits in float32, then argmax.
        tokens = torch.argmax(output.logits[:, -1].to(dtype=torch.float32), dim=-1)
        values = tokens.tolist()
        ends = torch.isin(tokens, eos_ids).tolist() if eos_ids is not None else [False] * len(values)
        keep: list[int] = []
        for k, (row, token, end) in enumerate(zip(alive, values, ends, strict=True)):
            out[row].append(token)
            if not end and watch is not None and watch.may_stop(token):
                end = watch.stopped(out[row])
            if not end:
                keep.append(k)
        if not keep or step == max_new_tokens - 1:
            break
        if len(keep) < len(alive):
            index = torch.tensor(keep, dtype=torch.long, device=input_ids.device)
            cache.batch_select_indices(index)
            tokens = tokens[index]
            alive = [alive[k] for k in keep]
            inputs["attention_mask"] = inputs["attention_mask"][index]
            if seq2seq:
                inputs["encoder_outputs"] = type(encoder)(last_hidden_state=encoder.last_hidden_state[index])
                encoder = inputs["encoder_outputs"]
            elif positions is not None:
                positions = positions[index]
        step_ids = tokens[:, None]
        if not seq2seq:
            mask = inputs["attention_mask"]
            inputs["attention_mask"] = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=-1)
            if positions is not None:
                positions = positions[:, -1:] + 1
    return out
