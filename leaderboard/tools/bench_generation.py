"""Generation speed of the consistency track (T3): our overhead over a bare ``model.generate`` loop.

``python -m leaderboard.tools.bench_generation [--items N] [--batch-size B] [--model DIR]`` (``nox -s
bench-generation``) times, on the same prompts and the same batches:

1. **bare** — the floor: the T3 prompts grouped by decoding settings and length exactly as the adapter groups
   them, left-padded by the tokenizer, ``model.generate`` greedy, decoded. Nothing else.
2. **T3 run** — :meth:`evaluators.tracks.consistency.ConsistencyTrack.run` with the ``transformers``
   adapter: prompt building, the adapter's batching, stop strings, token counts, ``completions.jsonl``.

and prints both, their ratio (target ≤ 1.15) and OPSIN's parsing rate (names/s, batched) on the same data
set's names. Then the prompt-robustness track (T4) on the same molecules: its whole run (every template's
prompts in one stream, batched by length across templates) against each template's prompts generated on
their own — the generation cost per template (seconds, prompt and answer tokens per question) and what
one stream saves over asking template by template.

Without ``--model`` a small random GPT-2 (4 layers, 256 wide, character tokenizer) is built in a temporary
folder, so the bench needs no download; pass a real checkpoint folder to measure a real model (on a
GPU when one is present). The data set is the embedded ``pubchem-names`` (built from installed packages).
"""

from __future__ import annotations

import argparse
import string
import tempfile
import time
from pathlib import Path

__all__ = ["main", "tiny_gpt2"]


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


def _bare(model_dir: Path, questions, batch_size: int) -> float:
    """Seconds of the floor: the same prompts and batches through ``model.generate`` alone."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from evaluators.adapters import length_bucketed_batches

    tokenizer = AutoTokenizer.from_pretrained(model_dir, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    groups: dict[int, list[str]] = {}
    for q in questions:
        groups.setdefault(q.request.max_new_tokens, []).append(q.request.prompt)
    started = time.perf_counter()
    with torch.inference_mode():
        for max_new_tokens, prompts in groups.items():
            for index in length_bucketed_batches(prompts, batch_size):
                batch = tokenizer([prompts[i] for i in index], return_tensors="pt", padding=True)
                out = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False,
                                     pad_token_id=tokenizer.pad_token_id)  # fmt: skip
                tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its table; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_generation", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--items", type=int, default=16, help="molecules of pubchem-names (default 16)")
    parser.add_argument("--batch-size", type=int, default=16, help="prompts per batch (default 16)")
    parser.add_argument("--model", type=Path, help="a decoder checkpoint folder (default: a random GPT-2)")
    args = parser.parse_args(argv)

    from evaluators.adapters import ModelConfig, load_adapter
    from evaluators.answers.opsin import names_to_smiles
    from evaluators.datasets import load_records
    from evaluators.schema import TrackOptions
    from evaluators.tracks.consistency import ConsistencyTrack
    from leaderboard.data.prepare import prepare_dataset

    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        root = prepare_dataset("pubchem-names", tmp_dir / "state")
        records = load_records("pubchem-names", root)
        model_dir = args.model or tiny_gpt2(tmp_dir / "model")
        track = ConsistencyTrack(TrackOptions(limit=args.items))
        subset = records[: args.items]
        questions = track.questions(subset)
        bare_s = _bare(model_dir, questions, args.batch_size)
        adapter = load_adapter(ModelConfig(adapter="transformers", path=model_dir, architecture="decoder",
                                           batch_size=args.batch_size, max_length=1024))  # fmt: skip
        dataset = track.container_dataset(subset)
        out = tmp_dir / "out"
        out.mkdir()
        started = time.perf_counter()
        track.run(adapter, dataset, out_dir=out, log=lambda line: None)
        run_s = time.perf_counter() - started
        names = [r["iupac"] for r in records]
        started = time.perf_counter()
        parsed = names_to_smiles(names)
        opsin_s = time.perf_counter() - started
        t4 = _t4_costs(adapter, subset, tmp_dir / "t4")
    model = "random GPT-2" if args.model is None else args.model
    print(f"T3 generation bench: {len(questions)} prompts ({args.items} molecules × tasks × "
          f"representations), batch size {args.batch_size}, model {model}")  # fmt: skip
    print(f"  bare model.generate loop   {bare_s:8.2f} s   {len(questions) / bare_s:7.1f} prompts/s")
    print(f"  T3 run (adapter + track)   {run_s:8.2f} s   {len(questions) / run_s:7.1f} prompts/s")
    print(f"  overhead ratio             {run_s / bare_s:8.3f}   (target ≤ 1.15)")
    ok = sum(p is not None for p in parsed)
    print(f"  OPSIN                      {len(names) / opsin_s:8.1f} names/s ({ok}/{len(names)} parsed, "
          f"{opsin_s:.1f} s, one JVM per batch)")  # fmt: skip
    _print_t4(t4)
    return 0


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
