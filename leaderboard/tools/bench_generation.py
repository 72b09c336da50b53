"""Generation speed of the consistency track (T3): the track's run against ``generate`` and the floor.

``python -m leaderboard.tools.bench_generation [--items N] [--batch-size B] [--model DIR --architecture A]``
(``nox -s bench-generation``) times three things on the same prompts and the same batches (the adapter's own
:meth:`~evaluators.adapters.transformers.TransformersAdapter.plan`), for each model:

1. **floor** — a plain greedy loop with the key–value cache and nothing else: the prompt (decoders) or the
   encoder (encoder-decoders) once, then one decoder step per token for every row until every row has
   written its end-of-sequence token or the budget is spent; decoded once. The model's own forward passes.
2. **generate** — ``model.generate`` (greedy) on the same batches, decoded.
3. **T3 run** — :meth:`evaluators.tracks.consistency.ConsistencyTrack.run` with the ``transformers``
   adapter: prompt building, the adapter's batching and decoding (the lean loop of
   :mod:`evaluators.adapters.greedy`), stop strings, token counts, ``completions.jsonl``; and the same run
   with the lean loop switched off (every batch through ``generate``, as before issue 36).

and prints the seconds, the ratios to the floor (target for the T3 run ≤ 1.3) and OPSIN's parsing rate
(names/s) on the same data set's names. Each phase runs ``--repeat`` times, the three interleaved, and the
fastest of each is kept (the machine is shared; the minimum is the least disturbed). Then the
prompt-robustness track (T4) on the same molecules: its whole run (every template's prompts in one stream)
against each template's prompts generated on their own.

Models: without ``--model``, the committed reference ``chem-t5-ce`` (a T5 encoder-decoder, with its
manifest's batch size and length) and a small random GPT-2 built in a temporary folder (4 layers, 256
wide unless told, character tokenizer), so the bench needs no download; ``--model DIR`` measures a real
checkpoint instead (on a GPU when one is present). The data set is the embedded ``pubchem-names`` (built from
installed packages; the data mirror ``CHEMROBUST_DATA_DIR`` is used when set).
"""

from __future__ import annotations

import argparse
import string
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["floor_tokens", "main", "tiny_gpt2"]

REPO_ROOT = Path(__file__).resolve().parents[2]


def tiny_gpt2(path: Path, *, width: int = 256, layers: int = 4) -> Path:
    """Save a seeded random GPT-2 with a character-level tokenizer to ``path`` (the same model every time)."""
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    specials = ["[PAD]", "[UNK]", "[BOS]", "[EOS]"]
    chars = list(string.ascii_letters + string.digits + string.punctuation + " ≤↔")
    tok = Tokenizer(models.WordLevel({t: i for i, t in enumerate(specials + chars)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", bos_token="[BOS]", eos_token="[EOS]"
    ).save_pretrained(path)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(specials) + len(chars), n_embd=width, n_layer=layers, n_head=4,
                        n_positions=1024, bos_token_id=2, eos_token_id=3, pad_token_id=0)  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(path)
    return path


def floor_tokens(model, input_ids, attention_mask, *, max_new_tokens: int, eos: set[int]):
    """Greedy tokens of one padded batch by the plainest loop with the key–value cache: the floor.

    Every row runs until all rows have ended (no row leaves the batch); positions follow the mask for
    left-padded decoders. Returns the ``(rows, steps)`` tensor of new tokens.
    """
    import inspect

    import torch

    # transformers 5 renamed the cache argument; the old name still works, through a slower warning path.
    accepts = inspect.signature(model.forward).parameters
    key = "cache" if "cache" in accepts else "past_key_values"
    last_only = {"logits_to_keep": 1} if "logits_to_keep" in accepts else {}  # as generate does
    rows = input_ids.shape[0]
    done = torch.zeros(rows, dtype=torch.bool, device=input_ids.device)
    eos_ids = torch.tensor(sorted(eos), dtype=torch.long, device=input_ids.device)
    steps = []
    if model.config.is_encoder_decoder:
        encoder = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        start = model.generation_config.decoder_start_token_id
        step = torch.full((rows, 1), start, dtype=torch.long, device=input_ids.device)
        cache = None
        for _ in range(max_new_tokens):
            cached = {} if cache is None else {key: cache}
            out = model(encoder_outputs=encoder, attention_mask=attention_mask, decoder_input_ids=step,
                        use_cache=True, **cached)  # fmt: skip
            cache, token = out.get("cache", out.get("past_key_values")), out.logits[:, -1].argmax(-1)
            steps.append(token)
            done |= torch.isin(token, eos_ids)
            if bool(done.all()):
                break
            step = token[:, None]
        return torch.stack(steps, dim=1)
    mask = attention_mask
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True, **last_only)
    for _ in range(max_new_tokens):
        token = out.logits[:, -1].argmax(-1)
        steps.append(token)
        done |= torch.isin(token, eos_ids)
        if bool(done.all()) or len(steps) == max_new_tokens:
            break
        mask = torch.cat([mask, mask.new_ones((rows, 1))], dim=-1)
        positions = positions[:, -1:] + 1
        cache = out.get("cache", out.get("past_key_values"))
        out = model(input_ids=token[:, None], attention_mask=mask, position_ids=positions, use_cache=True,
                    **{key: cache}, **last_only)  # fmt: skip
    return torch.stack(steps, dim=1)


@dataclass
class _Model:
    """One model the bench measures: its label, folder and the manifest settings the adapter gets."""

    label: str
    path: Path
    architecture: str
    batch_size: int
    max_length: int


def _phases(adapter, requests, run_track) -> dict[str, float]:
    """Seconds of the floor, of ``generate`` and of the track's run, on the adapter's own batches."""
    import torch

    batches, prompts = adapter.plan(requests)
    model, eos, pad = adapter.generator, adapter._eos_ids(), adapter._pad_id()
    decode = adapter.tokenizer.batch_decode
    seconds: dict[str, float] = {}
    with torch.inference_mode():
        started = time.perf_counter()
        for batch in batches:
            ids, mask = adapter.padded([prompts[i] for i in batch])
            tokens = floor_tokens(model, ids, mask, max_new_tokens=requests[batch[0]].max_new_tokens, eos=eos)
            decode(tokens.tolist(), skip_special_tokens=True)
        seconds["floor"] = time.perf_counter() - started
        started = time.perf_counter()
        for batch in batches:
            ids, mask = adapter.padded([prompts[i] for i in batch])
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, num_beams=1,
                                 max_new_tokens=requests[batch[0]].max_new_tokens, pad_token_id=pad,
                                 eos_token_id=sorted(eos))  # fmt: skip
            decode(out[:, 1 if adapter.seq2seq else ids.shape[1] :].tolist(), skip_special_tokens=True)
        seconds["generate"] = time.perf_counter() - started
    started = time.perf_counter()
    run_track("lean")
    seconds["T3 run"] = time.perf_counter() - started
    # The same run with the adapter's lean loop switched off (every batch through ``generate`` and its
    # stop-string criterion): what the track cost before issue 36.
    lean, adapter.lean_unsupported = adapter.lean_unsupported, "switched off by the bench"
    try:
        started = time.perf_counter()
        run_track("generate")
        seconds["T3 run via generate"] = time.perf_counter() - started
    finally:
        adapter.lean_unsupported = lean
    return seconds


def _measure(spec: _Model, subset, repeat: int, tmp_dir: Path) -> dict:
    """Best-of-``repeat`` seconds per phase for one model on the T3 questions of ``subset``."""
    from evaluators.adapters import ModelConfig, load_adapter
    from evaluators.schema import TrackOptions
    from evaluators.tracks.consistency import ConsistencyTrack

    adapter = load_adapter(ModelConfig(adapter="transformers", path=spec.path, architecture=spec.architecture,
                                       batch_size=spec.batch_size, max_length=spec.max_length))  # fmt: skip
    track = ConsistencyTrack(TrackOptions(limit=len(subset)))
    requests = [q.request for q in track.questions(subset)]
    dataset = track.container_dataset(subset)
    adapter.generate(requests[: spec.batch_size])  # warm-up: first calls allocate and compile kernels
    best: dict[str, float] = {}
    for k in range(repeat):
        def run_track(path: str, k: int = k) -> None:
            out = tmp_dir / f"{spec.label}-{path}-{k}"
            out.mkdir(parents=True)
            track.run(adapter, dataset, out_dir=out, log=lambda line: None)

        for phase, s in _phases(adapter, requests, run_track).items():
            best[phase] = min(best.get(phase, s), s)
    return {"model": spec, "n": len(requests), "seconds": best, "adapter": adapter}


def _models(args, tmp_dir: Path) -> list[_Model]:
    if args.model is not None:
        return [_Model(str(args.model), args.model, args.architecture, args.batch_size, 1024)]
    import yaml

    folder = REPO_ROOT / "submissions" / "chem-t5-ce"
    manifest = yaml.safe_load((folder / "submission.yaml").read_text(encoding="utf-8"))
    return [
        _Model("chem-t5-ce (T5, committed reference)", folder / manifest["model"]["path"], "encoder-decoder",
               int(manifest["batch_size"]), int(manifest["tokenizer"]["max_length"])),
        _Model(f"random GPT-2 ({args.decoder_layers} layers, {args.decoder_width} wide)",
               tiny_gpt2(tmp_dir / "gpt2", width=args.decoder_width, layers=args.decoder_layers), "decoder",
               args.batch_size, 1024),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its table; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_generation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--items", type=int, default=16, help="molecules of pubchem-names (default 16)")
    parser.add_argument("--batch-size", type=int, default=16, help="batch of the GPT-2 (default 16)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each phase; the fastest is kept (2)")
    parser.add_argument("--model", type=Path, help="a checkpoint folder (default: chem-t5-ce and a GPT-2)")
    parser.add_argument("--architecture", default="decoder", choices=["decoder", "encoder-decoder"],
                        help="of --model (default decoder)")  # fmt: skip
    parser.add_argument("--no-t4", action="store_true", help="skip the T4 template costs")
    parser.add_argument("--decoder-width", type=int, default=256, help="of the random GPT-2 (default 256)")
    parser.add_argument("--decoder-layers", type=int, default=4, help="of the random GPT-2 (default 4)")
    args = parser.parse_args(argv)

    from evaluators.answers.opsin import names_to_smiles
    from evaluators.datasets import load_records
    from leaderboard.data.prepare import prepare_dataset
    from leaderboard.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        settings = Settings.from_environment(repo_root=REPO_ROOT, state_dir=tmp_dir / "state")
        root = prepare_dataset("pubchem-names", tmp_dir / "state", mirror=settings.data_mirror,
                               log=lambda *a, **k: None)  # fmt: skip
        records = load_records("pubchem-names", root)
        subset = records[: args.items]
        results = [_measure(spec, subset, args.repeat, tmp_dir) for spec in _models(args, tmp_dir)]
        names = [r["iupac"] for r in subset]
        started = time.perf_counter()
        parsed = names_to_smiles(names)
        opsin_s = time.perf_counter() - started
        t4 = None if args.no_t4 else _t4_costs(results[-1]["adapter"], subset, tmp_dir / "t4")
    for result in results:
        _print_phases(result, args.items, args.repeat)
    ok = sum(p is not None for p in parsed)
    print(f"OPSIN {len(names) / opsin_s:8.1f} names/s ({ok}/{len(names)} parsed, {opsin_s:.1f} s, one JVM "
          "per batch)")  # fmt: skip
    if t4 is not None:
        _print_t4(t4)
    return 0


def _print_phases(result: dict, items: int, repeat: int) -> None:
    spec, n, s = result["model"], result["n"], result["seconds"]
    print(f"T3 generation bench — {spec.label}: {n} prompts ({items} molecules × tasks × representations), "
          f"batch size {spec.batch_size}, best of {repeat}")  # fmt: skip
    print("  phase                      seconds   prompts/s   ratio to floor")
    phases = (("floor", ""), ("generate", ""), ("T3 run", "   (target ≤ 1.3)"),
              ("T3 run via generate", "   (the adapter before the lean loop)"))  # fmt: skip
    for phase, target in phases:
        print(f"  {phase:<24} {s[phase]:9.2f} {n / s[phase]:11.1f} {s[phase] / s['floor']:15.3f}{target}")
    print(f"  T3 run / generate         {s['T3 run'] / s['generate']:9.3f}")


def _t4_costs(adapter, records: list[dict[str, str]], out: Path) -> dict:
    """Time T4's run (one stream) and each template's prompts alone, on the same adapter and molecules."""
    from evaluators.schema import TrackOptions
    from evaluators.tracks.prompt_robustness import PromptRobustnessTrack

    out.mkdir()
    track = PromptRobustnessTrack(TrackOptions())
    questions = track.questions(records)
    started = time.perf_counter()
    result = track.run(adapter, track.container_dataset(records), out_dir=out,
                       log=lambda line: None)  # fmt: skip
    whole_s = time.perf_counter() - started
    per_template: dict[str, dict[str, float]] = {}
    for template in dict.fromkeys(q.template for q in questions):
        requests = [q.request for q in questions if q.template == template]
        started = time.perf_counter()
        done = adapter.generate(requests)
        per_template[template] = {
            "n": len(requests),
            "seconds": time.perf_counter() - started,
            "prompt_tokens": sum(c.prompt_tokens or 0 for c in done) / len(done),
            "completion_tokens": sum(c.completion_tokens or 0 for c in done) / len(done),
        }
    return {"n": len(questions), "whole_s": whole_s, "generated": result["counts"]["n_generated"],
            "templates": per_template}  # fmt: skip


def _print_t4(t4: dict) -> None:
    templates = t4["templates"]
    alone = sum(t["seconds"] for t in templates.values())
    print(f"T4 generation cost: {t4['n']} prompts ({len(templates)} templates × tasks × representations), "
          f"{t4['generated']} generated")  # fmt: skip
    print("  template  prompts  seconds  prompts/s  prompt tok/q  answer tok/q")
    for name, t in templates.items():
        print(f"  {name:<8} {t['n']:8d} {t['seconds']:8.2f} {t['n'] / t['seconds']:10.1f} "
              f"{t['prompt_tokens']:13.1f} {t['completion_tokens']:13.1f}")  # fmt: skip
    print(f"  templates one by one       {alone:8.2f} s")
    print(f"  T4 run (one stream)        {t4['whole_s']:8.2f} s   ratio {t4['whole_s'] / alone:.3f} "
          "(< 1: batching across templates saves)")


if __name__ == "__main__":
    raise SystemExit(main())
