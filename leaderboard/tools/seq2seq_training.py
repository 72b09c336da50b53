"""Generative reference models: small T5 encoder-decoders trained here to answer T3's questions (issue 12).

Three variants, same corpus, architecture, steps and batch size (:data:`GENERATIVE_MODELS`):

- ``chem-t5-ce``: cross-entropy on the answers, each item asked about the canonical SMILES and the name;
- ``chem-t5-kl``: the same plus the consistency paper's symmetric sequence-level KL term between the
  output distributions given the SMILES and given the name, weight 1.0 (its appendix C.1), on the tasks
  whose two views share one answer (formula, Lipinski; :data:`leaderboard.tools.seq2seq_data.
  SHARED_ANSWER_TASKS`);
- ``chem-t5-randomized``: cross-entropy with a fresh randomized SMILES per item and epoch instead of the
  canonical one.

KL term (Yan et al., sec. 2.5 and appendix C.1): ``D(P‖Q) = Σ_y P(y) log P(y)/Q(y)`` with ``P = p(·|x_S)``,
``Q = p(·|x_I)``. Its gradient is ``E_{y~P}[(log P(y) − log Q(y)) ∇log P(y) − ∇log Q(y)]`` (the term
``E_P[∇log P] = 0`` drops out), which is the gradient of the Monte Carlo surrogate
``(1/M) Σ_m [sg(log P(y_m) − log Q(y_m)) · log P(y_m) − log Q(y_m)]`` over ``M`` sequences sampled from
``P`` (``sg`` = stop-gradient). The loss adds this surrogate for ``D(P‖Q)`` and, sampling from ``Q``, for
``D(Q‖P)``; :func:`kl_surrogate` is one direction. The logged ``kl`` is the plain estimate
``mean(log P − log Q)`` of both directions (≥ 0 in expectation).

Determinism: the same configuration, corpus, library versions and thread count give bitwise-identical
weights on CPU — seeds for initialisation, dropout and sampling (``torch.manual_seed``), batch order
(``random.Random``), random SMILES (RDKit, seeded per item), ``torch.use_deterministic_algorithms(True)``.

Outputs per model in ``submissions/<id>/``: ``model/`` (``config.json``, ``generation_config.json``,
``model.safetensors`` at most :data:`MAX_WEIGHT_BYTES`, the tokenizer), ``training.json`` and
``TRAINING.md`` (:func:`write_reports`); one MLflow run per model in ``chemrobust-training``.

References
----------
Yan et al., "Inconsistency of LLMs in molecular representations" (``../shared/papers/
smiles-iupac-consistency.txt``): the KL regulariser, weight 1.0, Monte Carlo estimate.
Raffel et al., "Exploring the Limits of Transfer Learning with a Unified Text-to-Text Transformer" (T5).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.tools.seq2seq_data import (
    SHARED_ANSWER_TASKS,
    Molecule,
    build_tokenizer,
    epoch_items,
    views,
)
from leaderboard.tools.smiles_tokenizer import save_tokenizer
from leaderboard.tools.training_config import TrainingError
from leaderboard.tools.training_loop import LossLog, optimiser_step, publish_run, warmup_cosine

__all__ = [
    "GENERATIVE_MODELS",
    "MAX_WEIGHT_BYTES",
    "Seq2SeqConfig",
    "Seq2SeqRun",
    "deterministic",
    "encode",
    "kl_surrogate",
    "new_model",
    "save_model",
    "sequence_log_probs",
    "t5_config",
    "target_labels",
    "train",
]

#: Upper bound on a committed ``model.safetensors`` (issue 12: ≤ 20 MB).
MAX_WEIGHT_BYTES = 20 * 1000 * 1000

Seq2SeqVariant = Literal["ce", "kl", "randomized"]


class Seq2SeqConfig(BaseModel):
    """Everything that determines a generative reference model besides the corpus and library versions.

    ``batch_size`` counts sequences per step: ``batch_size // 2`` items, each asked about the SMILES and
    about the name, for every variant (the same tokens and cross-entropy terms per step).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: Seq2SeqVariant
    seed: int = 20241201
    # T5
    d_model: int = Field(default=128, ge=8)
    d_kv: int = Field(default=32, ge=4)
    d_ff: int = Field(default=512, ge=8)
    num_layers: int = Field(default=2, ge=1)
    num_decoder_layers: int = Field(default=2, ge=1)
    num_heads: int = Field(default=4, ge=1)
    dropout: float = Field(default=0.1, ge=0.0, lt=1.0)
    vocab_size: int = Field(default=1024, ge=64, description="BPE merges' vocabulary (flags on top)")
    max_source_length: int = Field(default=96, ge=8)
    max_target_length: int = Field(default=64, ge=4)
    # optimisation
    steps: int = Field(default=1100, ge=1)
    batch_size: int = Field(default=64, ge=2)
    learning_rate: float = Field(default=2e-3, gt=0.0)
    warmup_fraction: float = Field(default=0.05, ge=0.0, lt=1.0)
    weight_decay: float = Field(default=0.01, ge=0.0)
    max_grad_norm: float = Field(default=1.0, gt=0.0)
    # KL variant
    kl_weight: float = Field(default=1.0, ge=0.0, description="the paper's appendix: 1.0")
    kl_samples: int = Field(default=1, ge=1, description="sequences sampled per item and direction (M, N)")
    kl_max_new_tokens: int = Field(default=8, ge=2, description="sampled answer length bound")
    # execution
    threads: int = Field(default=2, ge=1, description="torch intra-op threads (part of the result)")
    log_every: int = Field(default=25, ge=1)


#: The generative reference submissions, by submission id.
GENERATIVE_MODELS: dict[str, Seq2SeqConfig] = {
    "chem-t5-ce": Seq2SeqConfig(variant="ce"),
    "chem-t5-kl": Seq2SeqConfig(variant="kl"),
    "chem-t5-randomized": Seq2SeqConfig(variant="randomized"),
}


@dataclass
class Seq2SeqRun:
    """A trained model, its tokenizer, loss history (``{name: [(step, value)]}``), time and epochs."""

    model: Any
    tokenizer: Any
    history: dict[str, list[tuple[int, float]]]
    seconds: float
    epochs: float


def t5_config(config: Seq2SeqConfig, tokenizer):
    """Return the ``T5Config`` of a reference model (``<pad>`` starts decoding, ``</s>`` ends it)."""
    from transformers import T5Config

    return T5Config(
        vocab_size=len(tokenizer),
        d_model=config.d_model,
        d_kv=config.d_kv,
        d_ff=config.d_ff,
        num_layers=config.num_layers,
        num_decoder_layers=config.num_decoder_layers,
        num_heads=config.num_heads,
        dropout_rate=config.dropout,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )


def sequence_log_probs(model, inputs: dict, labels):
    """``log p(y | x)`` of each row: the sum of its target tokens' log-probabilities (``-100`` ignored).

    Parameters
    ----------
    model : transformers.T5ForConditionalGeneration
    inputs : dict
        ``input_ids`` and ``attention_mask`` of the questions.
    labels : torch.Tensor
        ``(b, t)`` target ids, ``-100`` after the end.
    """
    import torch

    logits = model(**inputs, labels=labels).logits
    mask = labels != -100
    gathered = torch.log_softmax(logits.float(), dim=-1).gather(-1, labels.clamp(min=0).unsqueeze(-1))
    return (gathered.squeeze(-1) * mask).sum(dim=1)


def kl_surrogate(log_p, log_q):
    """Monte Carlo surrogate of ``D(P‖Q)`` for sequences sampled from ``P`` (module docstring).

    ``mean[sg(log P − log Q) · log P − log Q]``: its value is not the divergence, its gradient is the
    divergence's gradient. Returns ``(surrogate, estimate)`` with ``estimate = mean(log P − log Q)``.

    Examples
    --------
    >>> import torch
    >>> lp = torch.tensor([-1.0, -2.0], requires_grad=True)
    >>> lq = torch.tensor([-1.5, -1.0], requires_grad=True)
    >>> loss, est = kl_surrogate(lp, lq); loss.backward()
    >>> lp.grad.tolist(), lq.grad.tolist(), round(est.item(), 3)
    ([0.25, -0.5], [-0.5, -0.5], -0.25)
    """
    ratio = (log_p - log_q).detach()
    return (ratio * log_p - log_q).mean(), ratio.mean()


def _random_smiles(smiles: str, *parts: object) -> str:
    """One random-atom-order SMILES of ``smiles``, seeded by ``parts`` (stable across processes)."""
    from rdkit import Chem

    seed = int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:4], "big") & 0x7FFFFFFF
    mol = Chem.MolFromSmiles(smiles)
    return Chem.MolToRandomSmilesVect(mol, 1, randomSeed=seed or 1)[0]


class _Batches:
    """Items epoch after epoch, ``batch_size // 2`` per step: the SMILES views, then the name views."""

    def __init__(self, molecules: Sequence[Molecule], config: Seq2SeqConfig) -> None:
        self.molecules = molecules
        self.config = config
        self.per_batch = config.batch_size // 2
        self.epoch = 0
        self.position = 0
        self.items = epoch_items(len(molecules), seed=config.seed, epoch=0)

    def next(self) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
        """Return SMILES questions, name questions, their answers, and each item's task."""
        chosen = []
        while len(chosen) < self.per_batch:
            if self.position == len(self.items):
                self.epoch += 1
                self.position = 0
                self.items = epoch_items(len(self.molecules), seed=self.config.seed, epoch=self.epoch)
            chosen.append(self.items[self.position])
            self.position += 1
        q_s, q_i, a_s, a_i, tasks = [], [], [], [], []
        for n, item in enumerate(chosen):
            mol = self.molecules[item.molecule]
            shown = None
            if self.config.variant == "randomized":
                shown = _random_smiles(mol.smiles, self.config.seed, self.epoch, item.molecule, item.task, n)
            (qs, as_), (qi, ai) = views(mol, item.task, shown)
            q_s.append(qs)
            q_i.append(qi)
            a_s.append(as_)
            a_i.append(ai)
            tasks.append(item.task)
        return q_s, q_i, a_s, a_i, tasks


def encode(tokenizer, texts: Sequence[str], max_length: int) -> dict:
    """Tokenize ``texts`` as one padded, truncated batch of tensors."""
    return tokenizer(list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt")


def target_labels(tokenizer, texts: Sequence[str], max_length: int):
    """Token ids of the target ``texts`` (ending in ``</s>``), ``-100`` on padding (ignored by the loss)."""
    ids = encode(tokenizer, texts, max_length)
    labels = ids["input_ids"].clone()
    labels[ids["attention_mask"] == 0] = -100
    return labels


def _sample(model, inputs: dict, config: Seq2SeqConfig):
    """Sample answers (ancestral, temperature 1) and return them as labels (``-100`` after ``</s>``)."""
    import torch

    model.eval()
    with torch.no_grad():
        out = model.generate(**inputs, do_sample=True, top_k=0, top_p=1.0, temperature=1.0,
                             max_new_tokens=config.kl_max_new_tokens)  # fmt: skip
    model.train()
    labels = out[:, 1:].clone()  # drop the decoder start token
    eos = model.config.eos_token_id
    ended = (labels == eos).int().cumsum(dim=1)
    # keep tokens up to and including the first </s>; padding after it is not part of the sequence
    after = (ended - (labels == eos).int()) > 0
    labels[after] = -100
    return labels


def train(config: Seq2SeqConfig, molecules: Sequence[Molecule], *, log=print) -> Seq2SeqRun:
    """Train one generative reference model as ``config`` says.

    Parameters
    ----------
    config : Seq2SeqConfig
        Variant, architecture, optimisation and seed.
    molecules : sequence of Molecule
        The corpus with its answers (:func:`leaderboard.tools.seq2seq_data.make_molecules`).
    log : callable
        Receives progress lines.

    Returns
    -------
    Seq2SeqRun
        The trained ``T5ForConditionalGeneration`` (eval mode), tokenizer and loss history (``loss``, ``ce``,
        and for the KL variant ``kl`` and ``kl_surrogate``; ``learning_rate``).

    Notes
    -----
    Deterministic (module docstring). The global state it changes (deterministic algorithms, thread count)
    is restored afterwards; the global seeds are not.
    """
    with deterministic(config):
        tokenizer = build_tokenizer(
            molecules, vocab_size=config.vocab_size, max_length=config.max_source_length
        )
        model, optimizer, scheduler = new_model(config, tokenizer)
        batches = _Batches(molecules, config)
        names = ["loss", "ce", "learning_rate"] + (["kl", "kl_surrogate"] if config.variant == "kl" else [])
        losses = LossLog(names, steps=config.steps, log_every=config.log_every,
                         print_every=config.log_every * 8, log=log)  # fmt: skip
        for step in range(config.steps):
            q_s, q_i, a_s, a_i, tasks = batches.next()
            inputs = encode(tokenizer, q_s + q_i, config.max_source_length)
            labels = target_labels(tokenizer, a_s + a_i, config.max_target_length)
            ce = model(**inputs, labels=labels).loss
            loss = ce
            values = {"ce": ce.item()}
            if config.variant == "kl":
                shared = [k for k, t in enumerate(tasks) if t in SHARED_ANSWER_TASKS]
                if shared:
                    surrogate, estimate = _kl_term(model, tokenizer, config, [q_s[k] for k in shared],
                                                   [q_i[k] for k in shared])  # fmt: skip
                    loss = loss + config.kl_weight * surrogate
                    values.update(kl=estimate, kl_surrogate=surrogate.item())
            values.update(loss=loss.item(), learning_rate=scheduler.get_last_lr()[0])
            if not math.isfinite(values["loss"]):
                raise TrainingError(f"loss became {values['loss']} at step {step}; lower learning_rate")
            optimiser_step(model, optimizer, scheduler, loss, config.max_grad_norm)
            losses.add(step, values, batches.epoch)
        model.eval()
        epochs = config.steps * batches.per_batch / max(1, 3 * len(molecules))
        return Seq2SeqRun(model, tokenizer, losses.history, losses.seconds(), epochs)


@contextmanager
def deterministic(config) -> Iterator[None]:
    """Seed every generator from ``config.seed``, make torch deterministic with ``config.threads`` threads.

    The global state it changes (deterministic algorithms, thread count) is restored on exit; the global
    seeds are not.
    """
    import numpy as np
    import torch

    previous = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(config.threads)
    try:
        random.seed(config.seed)
        np.random.seed(config.seed % 2**32)
        torch.manual_seed(config.seed)
        yield
    finally:
        torch.use_deterministic_algorithms(previous[0])
        torch.set_num_threads(previous[1])


def new_model(config, tokenizer) -> tuple[Any, Any, Any]:
    """Return a fresh T5 of ``config`` in training mode, its AdamW and its warm-up + cosine schedule.

    Weight decay applies to the weight matrices only (not to biases, layer norms or the shared embedding).
    ``config`` needs the fields of :class:`Seq2SeqConfig`'s architecture and optimisation sections.
    """
    import torch
    from transformers import T5ForConditionalGeneration

    model = T5ForConditionalGeneration(t5_config(config, tokenizer))
    model.generation_config.decoder_start_token_id = tokenizer.pad_token_id
    model.train()
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "shared" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "shared" not in n)]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": config.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=config.learning_rate,
    )
    schedule = warmup_cosine(config.steps, config.warmup_fraction)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    return model, optimizer, scheduler


def _kl_term(model, tokenizer, config: Seq2SeqConfig, q_s: list[str], q_i: list[str]):
    """Symmetric KL surrogate between the answers to the SMILES and to the name questions of the items."""
    x_s = encode(tokenizer, q_s * config.kl_samples, config.max_source_length)
    x_i = encode(tokenizer, q_i * config.kl_samples, config.max_source_length)
    from_p = _sample(model, x_s, config)  # y ~ P(·|x_S)
    from_q = _sample(model, x_i, config)  # y ~ Q(·|x_I)
    pq, est_pq = kl_surrogate(sequence_log_probs(model, x_s, from_p), sequence_log_probs(model, x_i, from_p))
    qp, est_qp = kl_surrogate(sequence_log_probs(model, x_i, from_q), sequence_log_probs(model, x_s, from_q))
    return pq + qp, (est_pq + est_qp).item()


def save_model(run: Seq2SeqRun, folder: Path) -> Path:
    """Save the model (greedy generation config) and tokenizer in ``folder``; return the weights file.

    Raises
    ------
    TrainingError
        If ``model.safetensors`` is larger than :data:`MAX_WEIGHT_BYTES`.
    """
    if folder.exists():
        for old in folder.iterdir():
            if old.is_file():
                old.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    run.model.config.architectures = ["T5ForConditionalGeneration"]
    run.model.save_pretrained(str(folder))
    save_tokenizer(run.tokenizer, folder)
    for path in folder.iterdir():
        path.chmod(0o644)  # read by the evaluation sandbox's unprivileged user
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise TrainingError(f"{folder}: save_pretrained wrote no model.safetensors")
    if weights.stat().st_size > MAX_WEIGHT_BYTES:
        size = weights.stat().st_size
        raise TrainingError(f"{weights}: {size} bytes, over the {MAX_WEIGHT_BYTES}-byte limit; "
                            "make d_model or the layer counts smaller")  # fmt: skip
    return weights


def sha256_file(path: Path) -> str:
    """sha256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def record(submission_id: str, config: Seq2SeqConfig, corpus: dict, run: Seq2SeqRun, weights: Path) -> dict:
    """Return the training record (``training.json``): config, corpus, sizes, time, curves, weight sha256."""
    from leaderboard.tools.training_report import environment

    return {
        "submission": submission_id,
        "config": config.model_dump(),
        "corpus": corpus,
        "tokenizer": {"vocab_size": len(run.tokenizer), "kind": "BPE + one added token per question flag"},
        "parameters": sum(p.numel() for p in run.model.parameters()),
        "training_seconds": round(run.seconds, 1),
        "epochs": round(run.epochs, 3),
        "final": {k: (v[-1][1] if v else None) for k, v in run.history.items()},
        "weights": {
            "file": "model/model.safetensors",
            "bytes": weights.stat().st_size,
            "sha256": sha256_file(weights),
        },  # fmt: skip
        "environment": environment(config),  # type: ignore[arg-type]
        "rebuild": f"nox -s train-reference -- {submission_id}",
        "history": {k: [[s, round(v, 6)] for s, v in values] for k, values in run.history.items()},
    }


def write_record(folder: Path, rec: dict) -> Path:
    """Write ``training.json`` in ``folder``."""
    path = folder / "training.json"
    path.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    return path


_VARIANT_TEXT = {
    "ce": "cross-entropy on the answers; every item asked about its canonical SMILES and its IUPAC name",
    "kl": "cross-entropy as chem-t5-ce plus the symmetric sequence-level KL consistency term between the "
    "answers given the SMILES and given the name (weight {w}, {m} sampled sequence(s) per direction; "
    "formula and Lipinski items, whose two questions share one answer)",
    "randomized": "cross-entropy with a fresh randomized SMILES per item and epoch instead of the "
    "canonical one",
}


def write_report(folder: Path, rec: dict) -> Path:
    """Write ``TRAINING.md`` (how the weights were trained and how to rebuild them) from the record."""
    config = Seq2SeqConfig(**rec["config"])
    corpus, env = rec["corpus"], rec["environment"]
    objective = _VARIANT_TEXT[config.variant].format(w=config.kl_weight, m=config.kl_samples)
    curve_keys = [k for k in ("loss", "ce", "kl") if rec["history"].get(k)]
    points = {k: dict((s, v) for s, v in rec["history"][k]) for k in curve_keys}
    every = max(1, config.steps // 10)
    steps = sorted({s for s in points["loss"] if s % every == 0} | {config.steps})
    cells = [[f"{points[k].get(s, float('nan')):.4f}" for k in curve_keys] for s in steps]
    curve = "\n".join(f"| {s} | " + " | ".join(c) + " |" for s, c in zip(steps, cells, strict=True))
    rejected = ", ".join(f"{why}: {n}" for why, n in corpus["rejected"].items() if n)
    excluded = ", ".join(f"{name}: {n}" for name, n in corpus["excluded"].items())
    text = f"""# {rec["submission"]}: how these weights were trained

Generated by `python -m leaderboard.tools.training {rec["submission"]}`; do not edit by hand.

**Objective:** {objective}. Tasks: the consistency track's (T3) name ↔ structure translation, molecular
formula and Lipinski questions, worded exactly as T3 asks them (`leaderboard/tools/seq2seq_data.py`).

## Rebuild

```
{rec["rebuild"]}
```

Seeded and deterministic on CPU: with the same library versions and `threads`, the rebuilt
`model/model.safetensors` has the sha256 below. The run is logged to MLflow (experiment
`chemrobust-training`).

## Corpus

- PubChem compounds of the `chemicals` package whose restored IUPAC name OPSIN reads back to the same
  structure, minus every molecule (and name) of every evaluation set (`leaderboard/tools/name_corpus.py`)
- {corpus["size"]} molecules, sha256 `{corpus["sha256"]}`
- rejected: {rejected}
- removed as evaluation molecules, per set: {excluded}

## Model

T5 encoder-decoder, {config.num_layers} + {config.num_decoder_layers} layers, d_model {config.d_model},
{config.num_heads} heads, d_ff {config.d_ff}, {rec["parameters"]:,} parameters; BPE tokenizer with one added
token per fixed question part (the task flag), vocabulary {rec["tokenizer"]["vocab_size"]}.

- weights: `model/model.safetensors`, {rec["weights"]["bytes"]:,} bytes, sha256 `{rec["weights"]["sha256"]}`
- training time: {rec["training_seconds"]:.0f} s for {config.steps} steps of {config.batch_size} sequences
  ({rec["epochs"]:.2f} epochs over the corpus items) on {env["processor"]} with threads={config.threads}
  (torch {env["torch"]}, transformers {env["transformers"]}, tokenizers {env["tokenizers"]})

## Configuration

```json
{json.dumps(rec["config"], indent=1)}
```

## Loss (mean over the last {config.log_every} steps)

| step | {" | ".join(curve_keys)} |
| --- | {" | ".join("---" for _ in curve_keys)} |
{curve}
"""
    path = folder / "TRAINING.md"
    path.write_text(text, encoding="utf-8")
    return path


def train_reference(
    submission_id: str,
    *,
    state_dir: Path,
    out: Path,
    settings=None,
    steps: int | None = None,
    mirror: Path | None = None,
    log=print,
) -> dict:
    """Build one generative reference from scratch: corpus, training, weights, reports, MLflow run.

    Parameters
    ----------
    submission_id : str
        A key of :data:`GENERATIVE_MODELS`.
    state_dir : pathlib.Path
        State folder (corpus and data caches).
    out : pathlib.Path
        Folder of the submission folders (``submissions/``).
    settings : leaderboard.settings.Settings, optional
        Where to log the MLflow run; ``None`` logs nothing.
    steps : int, optional
        Override the steps (smoke runs; not the reference).
    mirror : pathlib.Path, optional
        Data mirror for the evaluation sets (``CHEMROBUST_DATA_DIR``).

    Returns
    -------
    dict
        The training record (``training.json``).
    """
    from leaderboard.tools.name_corpus import build_name_corpus
    from leaderboard.tools.seq2seq_data import make_molecules

    config = GENERATIVE_MODELS[submission_id]
    if steps:
        config = config.model_copy(update={"steps": steps})
    corpus = build_name_corpus(state_dir, mirror=mirror, log=log)
    molecules = make_molecules(corpus.pairs)
    log(f"training: {submission_id} ({config.variant}, {config.steps} steps) on {len(molecules)} molecules, "
        f"corpus sha256 {corpus.sha256}")  # fmt: skip
    run = train(config, molecules, log=log)
    folder = out / submission_id
    weights = save_model(run, folder / "model")
    info = {"sha256": corpus.sha256, "size": len(corpus.rows), "rejected": corpus.rejected,
            "excluded": corpus.excluded}  # fmt: skip
    rec = record(submission_id, config, info, run, weights)
    files = [write_record(folder, rec), write_report(folder, rec)]
    return publish_run(submission_id, config, rec, run, weights, files, settings=settings, log=log)
