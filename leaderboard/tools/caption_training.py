"""The trained captioning reference (issue 34 point 3): a small T5 that describes a molecule and embeds it.

``chem-t5-caption`` learns, on ChEBI-20's **validation** split, to answer the captioning track's one question
— :data:`evaluators.tracks.captioning.INSTRUCTION` about a SMILES, worded exactly as the track asks it — with
the molecule's gold description. It is the third reference of the captioning board, beside the two retrieval
captioners, and the one that makes AMORE's predictive claim checkable: an encoder-decoder embeds with its
encoder (AMORE) and captions with its decoder (captioning), so the board can correlate its two drops per
rewrite (:mod:`leaderboard.site.extensions.amore.captioning_link`).

Data: the validation split's 3 301 pairs as MolT5 published them, **minus every molecule of every
evaluation set** (:func:`leaderboard.tools.name_corpus.evaluation_index`: the same structure, the same
structure without stereo, per whole molecule and per component; and the same InChIKey, which also merges
tautomers — the board's seen-in-training check), so nothing the model is scored on — on any track it
may run — was seen in training. The SMILES are trained as written in the file (ChEBI-20's own writing,
the captioning track's *original*): the model never sees a rewrite, which is what AMORE probes.

Tokenizer: a BPE learned on the kept SMILES and descriptions, with the question's two fixed parts (before
and after the SMILES) as one added token each (:func:`caption_flags`), like the chem-t5 references.

Determinism: seeded like :mod:`leaderboard.tools.seq2seq_training` (same context manager and optimiser):
the same configuration, corpus and library versions give bitwise-identical weights on CPU.

References
----------
Edwards et al., "Translation between Molecules and Natural Language" (MolT5, ChEBI-20), EMNLP 2022.
Ganeeva et al., "Measuring Chemical LLM robustness to molecular representations" (AMORE),
``../shared/papers/amore-smiles-augmentation-robustness.txt``: the captioning validation of sec. 5.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.tools.seq2seq_data import bpe_tokenizer
from leaderboard.tools.seq2seq_training import (
    Seq2SeqRun,
    deterministic,
    encode,
    new_model,
    save_model,
    target_labels,
)
from leaderboard.tools.training_config import TrainingError
from leaderboard.tools.training_loop import LossLog, optimiser_step, publish_run

__all__ = [
    "CAPTION_MODELS",
    "CaptionConfig",
    "CaptionCorpus",
    "caption_corpus",
    "caption_flags",
    "caption_prompt",
    "epoch_batches",
    "train_captioner",
    "train_caption_reference",
]

#: The split the captioner learns from (``DatasetSpec.training_splits`` of ``chebi20``).
DATASET, SPLIT = "chebi20", "validation"


class CaptionConfig(BaseModel):
    """Everything that determines the captioning reference besides its corpus and the library versions."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = 20261206
    # T5 (field names as Seq2SeqConfig's: t5_config and new_model read them)
    d_model: int = Field(default=128, ge=8)
    d_kv: int = Field(default=32, ge=4)
    d_ff: int = Field(default=384, ge=8)
    num_layers: int = Field(default=2, ge=1)
    num_decoder_layers: int = Field(default=2, ge=1)
    num_heads: int = Field(default=4, ge=1)
    dropout: float = Field(default=0.1, ge=0.0, lt=1.0)
    vocab_size: int = Field(default=1536, ge=64, description="BPE merges' vocabulary (flags on top)")
    max_source_length: int = Field(default=128, ge=8)
    max_target_length: int = Field(default=112, ge=4, description="description tokens trained (the rest cut)")
    # optimisation
    steps: int = Field(default=2400, ge=1)
    batch_size: int = Field(default=32, ge=1)
    learning_rate: float = Field(default=2e-3, gt=0.0)
    warmup_fraction: float = Field(default=0.05, ge=0.0, lt=1.0)
    weight_decay: float = Field(default=0.01, ge=0.0)
    max_grad_norm: float = Field(default=1.0, gt=0.0)
    # execution
    threads: int = Field(default=2, ge=1, description="torch intra-op threads (part of the result)")
    log_every: int = Field(default=25, ge=1)


#: The captioning references, by submission id.
CAPTION_MODELS: dict[str, CaptionConfig] = {"chem-t5-caption": CaptionConfig()}


@dataclass(frozen=True)
class CaptionCorpus:
    """The kept ``(id, smiles, description)`` triples in file order, their sha256 and what was removed."""

    pairs: tuple[tuple[str, str, str], ...]
    sha256: str
    removed: dict[str, int]


def caption_prompt(smiles: str) -> str:
    """Return the captioning track's question about ``smiles``, word for word (the model's input)."""
    from evaluators.asking import protocol
    from evaluators.tracks.captioning import INSTRUCTION, WHAT

    return protocol.with_protocol(f"{INSTRUCTION}\nSMILES: {smiles}", "", what=WHAT)


def caption_flags() -> list[str]:
    """Return the question's fixed parts before and after the SMILES (one added token each)."""
    marker = "\x00"
    return [part for part in caption_prompt(marker).split(marker) if part]


def read_split(path: Path) -> list[tuple[str, str, str]]:
    """Read ChEBI-20's ``CID``/``SMILES``/``description`` TSV as ``(id, smiles, description)`` triples.

    Raises
    ------
    TrainingError
        If a column is missing (name the file and the columns found).
    """
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = {"CID", "SMILES", "description"} - set(reader.fieldnames or [])
        if missing:
            raise TrainingError(f"{path}: missing column(s) {sorted(missing)}; found {reader.fieldnames}")
        return [
            (str(r["CID"]).strip(), str(r["SMILES"]).strip(), " ".join(str(r["description"] or "").split()))
            for r in reader
        ]


def corpus_sha256(pairs: Sequence[tuple[str, str, str]]) -> str:
    """sha256 over the kept triples in order (one tab-separated line each)."""
    digest = hashlib.sha256()
    for triple in pairs:
        digest.update(("\t".join(triple) + "\n").encode("utf-8"))
    return digest.hexdigest()


def filter_pairs(
    rows: Sequence[tuple[str, str, str]], index, inchikeys: Mapping[str, set[str]] | None = None
) -> CaptionCorpus:
    """Keep the rows RDKit reads, that have a description and that no evaluation set holds.

    Parameters
    ----------
    rows : sequence of (id, smiles, description)
    index : leaderboard.tools.name_corpus.EvaluationIndex
        Keys of the evaluation sets; a row any set matches (by structure, with or without stereo, whole
        or per component) goes.
    inchikeys : mapping of str to set of str, optional
        Set name → the InChIKeys of its molecules: a row with one of them goes too (InChI also merges
        tautomers, which the SMILES keys keep apart; the board's seen-in-training check compares these).
    """
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    kept: list[tuple[str, str, str]] = []
    removed = {"RDKit cannot parse the SMILES": 0, "no description": 0}
    for cid, smiles, description in rows:
        mol = Chem.MolFromSmiles(smiles) if smiles else None
        if mol is None:
            removed["RDKit cannot parse the SMILES"] += 1
            continue
        if not description:
            removed["no description"] += 1
            continue
        hits, _ = index.match(Chem.MolToSmiles(mol), "\x00")  # by structure only: no name to compare
        if not hits and inchikeys:
            key = Chem.MolToInchiKey(mol)
            hits = [name for name, keys in sorted(inchikeys.items()) if key and key in keys]
        if hits:
            for name in hits:
                removed[f"in {name}"] = removed.get(f"in {name}", 0) + 1
            continue
        kept.append((cid, smiles, description))
    return CaptionCorpus(tuple(kept), corpus_sha256(kept), removed)


def caption_corpus(state_dir: Path, *, mirror: Path | None = None, log=print) -> CaptionCorpus:
    """Prepare the validation split (sha256-checked) and return what the captioner may learn from."""
    from evaluators.datasets import load_dataset
    from leaderboard.data.prepare import DataError, prepare_training_split
    from leaderboard.inchikeys import inchikeys
    from leaderboard.tools.corpus import prepare_evaluation_sets
    from leaderboard.tools.name_corpus import evaluation_index, evaluation_set_names

    try:
        folder = prepare_training_split(DATASET, SPLIT, state_dir, mirror=mirror, log=log)
    except DataError as exc:
        raise TrainingError(
            f"{exc}. Set CHEMROBUST_DATA_DIR to a folder holding chebi20/validation.tsv "
            "(e.g. ../shared/data) or allow the download."
        ) from None
    roots = prepare_evaluation_sets(state_dir, evaluation_set_names(), mirror=mirror)
    keys = {name: inchikeys(m.smiles for m in load_dataset(name, root).molecules)
            for name, root in roots.items()}
    index = evaluation_index(state_dir, roots=roots)
    return filter_pairs(read_split(folder / "validation.tsv"), index, keys)


def build_caption_tokenizer(pairs: Sequence[tuple[str, str, str]], config: CaptionConfig):
    """BPE over the SMILES and descriptions with the question's two fixed parts as added tokens."""
    texts = [text for _, smiles, description in pairs for text in (smiles, description)]
    return bpe_tokenizer(
        texts, caption_flags(), vocab_size=config.vocab_size, max_length=config.max_source_length
    )


def epoch_batches(lengths: Sequence[int], batch_size: int, *, seed: int, epoch: int) -> list[list[int]]:
    """Every pair once, in batches of similar target length, in a seeded random order.

    Shuffled by ``random.Random(f"{seed}:{epoch}")``, cut into pools of 32 batches, each pool sorted by
    length and cut into batches, then the batches shuffled: a batch pads to its own longest description,
    not to the corpus's (ChEBI-20's descriptions run from a dozen tokens to past the cut).

    Examples
    --------
    >>> batches = epoch_batches([5, 1, 9, 2, 7, 3], 2, seed=0, epoch=0)
    >>> sorted(i for b in batches for i in b), [len(b) for b in batches]
    ([0, 1, 2, 3, 4, 5], [2, 2, 2])
    """
    rng = random.Random(f"{seed}:{epoch}")
    order = list(range(len(lengths)))
    rng.shuffle(order)
    pool = 32 * batch_size
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: lengths[i])
        batches += [chunk[k : k + batch_size] for k in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


def train_captioner(config: CaptionConfig, pairs: Sequence[tuple[str, str, str]], *, log=print) -> Seq2SeqRun:
    """Train the captioner: cross-entropy of the gold description given the track's question.

    Returns
    -------
    Seq2SeqRun
        The trained ``T5ForConditionalGeneration`` (eval mode), its tokenizer and loss history (``loss``,
        ``learning_rate``), seconds and epochs.

    Raises
    ------
    TrainingError
        If there is nothing to train on or the loss stops being finite.
    """
    if not pairs:
        raise TrainingError("the caption corpus is empty: nothing to train on")
    with deterministic(config):
        tokenizer = build_caption_tokenizer(pairs, config)
        model, optimizer, scheduler = new_model(config, tokenizer)
        losses = LossLog(
            ["loss", "learning_rate"],
            steps=config.steps,
            log_every=config.log_every,
            print_every=config.log_every * 8,
            log=log,
        )
        descriptions = [d for _, _, d in pairs]
        cut = {"truncation": True, "max_length": config.max_target_length}
        lengths = [len(ids) for ids in tokenizer(descriptions, **cut)["input_ids"]]
        epoch, batches = 0, epoch_batches(lengths, config.batch_size, seed=config.seed, epoch=0)
        for step in range(config.steps):
            if not batches:
                epoch += 1
                batches = epoch_batches(lengths, config.batch_size, seed=config.seed, epoch=epoch)
            chosen = [pairs[i] for i in batches.pop()]
            inputs = encode(tokenizer, [caption_prompt(s) for _, s, _ in chosen], config.max_source_length)
            labels = target_labels(tokenizer, [d for _, _, d in chosen], config.max_target_length)
            loss = model(**inputs, labels=labels).loss
            values = {"loss": loss.item(), "learning_rate": scheduler.get_last_lr()[0]}
            if not math.isfinite(values["loss"]):
                raise TrainingError(f"loss became {values['loss']} at step {step}; lower learning_rate")
            optimiser_step(model, optimizer, scheduler, loss, config.max_grad_norm)
            losses.add(step, values, epoch)
        model.eval()
        epochs = config.steps * config.batch_size / len(pairs)
        return Seq2SeqRun(model, tokenizer, losses.history, losses.seconds(), epochs)


def caption_record(
    submission_id: str, config: CaptionConfig, corpus: CaptionCorpus, run: Seq2SeqRun, weights: Path
) -> dict:
    """Return the training record (``training.json``): config, corpus, sizes, time, curves, weight sha256."""
    from leaderboard.tools.training_report import environment

    return {
        "submission": submission_id,
        "config": config.model_dump(),
        "corpus": {
            "dataset": DATASET,
            "split": SPLIT,
            "size": len(corpus.pairs),
            "sha256": corpus.sha256,
            "removed": corpus.removed,
        },
        "tokenizer": {
            "vocab_size": len(run.tokenizer),
            "kind": "BPE + one added token per fixed question part",
        },
        "parameters": sum(p.numel() for p in run.model.parameters()),
        "training_seconds": round(run.seconds, 1),
        "epochs": round(run.epochs, 3),
        "final": {k: (v[-1][1] if v else None) for k, v in run.history.items()},
        "weights": {
            "file": "model/model.safetensors",
            "bytes": weights.stat().st_size,
            "sha256": hashlib.sha256(weights.read_bytes()).hexdigest(),
        },
        "environment": environment(config),  # type: ignore[arg-type]
        "rebuild": f"nox -s train-reference -- {submission_id}",
        "history": {k: [[s, round(v, 6)] for s, v in values] for k, values in run.history.items()},
    }


def write_caption_report(folder: Path, rec: dict) -> Path:
    """Write ``TRAINING.md`` (what the captioner learned from, how, and how to rebuild it) from the record."""
    config = CaptionConfig(**rec["config"])
    corpus, env = rec["corpus"], rec["environment"]
    history = rec["history"]["loss"]
    shown = history[:: max(1, len(history) // 10)]
    shown += [] if shown[-1] == history[-1] else [history[-1]]
    curve = "\n".join(f"| {s} | {v:.4f} |" for s, v in shown)
    removed = ", ".join(f"{why}: {n}" for why, n in corpus["removed"].items() if n) or "none"
    text = f"""# {rec["submission"]}: how these weights were trained

Generated by `python -m leaderboard.tools.training {rec["submission"]}`; do not edit by hand.

**Objective:** cross-entropy of the gold ChEBI-20 description given the captioning track's question about the
molecule's SMILES, worded exactly as the track asks it (`leaderboard/tools/caption_training.py`). The SMILES
are the file's own; the model never sees a rewritten one.

## Rebuild

```
{rec["rebuild"]}
```

Seeded and deterministic on CPU: with the same library versions and `threads`, the rebuilt
`model/model.safetensors` has the sha256 below. The run is logged to MLflow (experiment
`chemrobust-training`).

## Corpus

- ChEBI-20's validation split (MolT5's `validation.txt`, sha256-pinned), disjoint from the test split
- minus every molecule of every evaluation set, by structure with and without stereo, whole or per
  component (`leaderboard/tools/name_corpus.py`, `evaluation_index`), and by InChIKey (tautomers; the
  board's seen-in-training check)
- {corpus["size"]} pairs kept, sha256 `{corpus["sha256"]}`; removed: {removed}

## Model

T5 encoder-decoder, {config.num_layers} + {config.num_decoder_layers} layers, d_model {config.d_model},
{config.num_heads} heads, d_ff {config.d_ff}, {rec["parameters"]:,} parameters; BPE tokenizer with one added
token per fixed question part, vocabulary {rec["tokenizer"]["vocab_size"]}. It embeds with its encoder (mean
over the tokens), so AMORE tests the same model whose captions the captioning track scores.

- weights: `model/model.safetensors`, {rec["weights"]["bytes"]:,} bytes, sha256 `{rec["weights"]["sha256"]}`
- training time: {rec["training_seconds"]:.0f} s for {config.steps} steps of {config.batch_size} pairs
  ({rec["epochs"]:.2f} epochs) on {env["processor"]} with threads={config.threads}
  (torch {env["torch"]}, transformers {env["transformers"]}, tokenizers {env["tokenizers"]})

## Configuration

```json
{json.dumps(rec["config"], indent=1)}
```

## Loss (mean over the last {config.log_every} steps)

| step | loss |
| --- | --- |
{curve}
"""
    path = folder / "TRAINING.md"
    path.write_text(text, encoding="utf-8")
    return path


def train_caption_reference(
    submission_id: str,
    *,
    state_dir: Path,
    out: Path,
    settings=None,
    steps: int | None = None,
    mirror: Path | None = None,
    log=print,
) -> dict:
    """Build the captioning reference from scratch: corpus, training, weights, reports, MLflow run.

    Parameters as :func:`leaderboard.tools.seq2seq_training.train_reference`; returns ``training.json``.
    """
    config = CAPTION_MODELS[submission_id]
    if steps:
        config = config.model_copy(update={"steps": steps})
    corpus = caption_corpus(state_dir, mirror=mirror, log=log)
    log(
        f"training: {submission_id} ({config.steps} steps) on {len(corpus.pairs)} ChEBI-20 validation pairs, "
        f"corpus sha256 {corpus.sha256}; removed {corpus.removed}"
    )
    run = train_captioner(config, corpus.pairs, log=log)
    folder = out / submission_id
    weights = save_model(run, folder / "model")
    rec = caption_record(submission_id, config, corpus, run, weights)
    (folder / "training.json").write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    files = [folder / "training.json", write_caption_report(folder, rec)]
    return publish_run(submission_id, config, rec, run, weights, files, settings=settings, log=log)
