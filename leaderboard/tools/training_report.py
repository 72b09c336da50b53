"""Reports of a reference-model training run: ``training.json``, ``TRAINING.md`` and the MLflow run.

- :func:`write_reports` writes ``training.json`` (configuration, corpus hash and counts, loss history,
  weight sha256, environment) and ``TRAINING.md`` (how the weights were trained and how to rebuild them)
  beside a submission's ``model/`` folder.
- :func:`log_to_mlflow` logs the run to the experiment ``chemrobust-training`` of the project's store
  (through :meth:`leaderboard.store.ResultStore.log_training`).
- :func:`rebuild_command`, :func:`loss_summary` and :func:`environment` are the pieces both use.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
from collections.abc import Sequence
from pathlib import Path

from leaderboard.settings import Settings
from leaderboard.tools.corpus import Corpus
from leaderboard.tools.training_config import TrainingConfig, TrainingRun

__all__ = ["environment", "log_to_mlflow", "loss_summary", "rebuild_command", "write_reports"]

_VARIANT_TEXT = {
    "canonical": "masked language modelling on RDKit canonical isomeric SMILES only",
    "randomized": "masked language modelling on randomized SMILES (a fresh random atom order per molecule "
    "and epoch)",
    "contrastive": "masked language modelling on randomized SMILES plus an InfoNCE loss pulling the "
    "mean-pooled last-layer embeddings of two different random SMILES of the same molecule together "
    "(in-batch negatives)",
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def environment(config: TrainingConfig) -> dict[str, str]:
    """Return the library versions and machine a run used (recorded with the model and in MLflow).

    Parameters
    ----------
    config : TrainingConfig
        The run's configuration (its ``threads``).

    Returns
    -------
    dict of str to str
        Versions of torch, transformers, tokenizers, rdkit and datamol, the Python version, machine,
        processor name and thread count.
    """
    env = {
        name: importlib.metadata.version(name)
        for name in ("torch", "transformers", "tokenizers", "rdkit", "datamol")
    }
    env.update(
        python=platform.python_version(),
        machine=platform.machine(),
        processor=_cpu_name(),
        threads=str(config.threads),
    )
    return env


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def rebuild_command(submission_id: str) -> str:
    """Return the command that rebuilds one reference model's weights from scratch.

    Parameters
    ----------
    submission_id : str
        A key of :data:`leaderboard.tools.training_config.REFERENCE_MODELS`.

    Returns
    -------
    str
        The shell command (recorded in ``training.json`` and ``TRAINING.md``).

    Examples
    --------
    >>> rebuild_command("smiles-mlm-canonical")
    'CHEMROBUST_DATA_DIR=../shared/data nox -s train-reference -- smiles-mlm-canonical'
    """
    return f"CHEMROBUST_DATA_DIR=../shared/data nox -s train-reference -- {submission_id}"


def loss_summary(history: dict[str, list[tuple[int, float]]], key: str) -> float | None:
    """Return the mean of the last five logged values of one history series, rounded to 4 decimals.

    Parameters
    ----------
    history : dict
        ``{name: [(step, value), ...]}`` as in :attr:`TrainingRun.history`.
    key : str
        The series (``loss``, ``mlm_loss``...).

    Returns
    -------
    float or None
        The mean, or ``None`` when the series is missing or empty.

    Examples
    --------
    >>> loss_summary({"loss": [(10, 2.0), (20, 1.0)]}, "loss"), loss_summary({}, "loss")
    (1.5, None)
    """
    values = history.get(key) or []
    tail = values[-5:]
    return round(sum(v for _, v in tail) / len(tail), 4) if tail else None


def write_reports(
    submission_id: str, config: TrainingConfig, corpus: Corpus, run: TrainingRun, weights: Path
) -> tuple[Path, Path]:
    """Write ``training.json`` and ``TRAINING.md`` beside the model folder; return both paths.

    Parameters
    ----------
    submission_id : str
        The reference submission.
    config : TrainingConfig
        The configuration it was trained with.
    corpus : Corpus
        The training corpus (hash and counts).
    run : TrainingRun
        The finished run.
    weights : pathlib.Path
        ``<submission>/model/model.safetensors`` as written by
        :func:`leaderboard.tools.training.save_model`; the reports go to ``<submission>/``.

    Returns
    -------
    tuple of pathlib.Path
        ``(training.json, TRAINING.md)``, both overwritten.
    """
    folder = weights.parent.parent
    n_params = sum(p.numel() for p in run.model.roberta.parameters())
    record = {
        "submission": submission_id,
        "config": config.model_dump(),
        "corpus": {"sha256": corpus.sha256, **corpus.stats},
        "tokenizer": {"vocab_size": len(run.tokenizer), "regex": "Schwaller et al. 2019 (SMILES_REGEX)"},
        "encoder_parameters": n_params,
        "training_seconds": round(run.seconds, 1),
        "epochs": round(run.epochs, 2),
        "final": {k: loss_summary(run.history, k) for k in run.history},
        "weights": {
            "file": "model/model.safetensors",
            "bytes": weights.stat().st_size,
            "sha256": _sha256(weights),
        },
        "environment": environment(config),
        "rebuild": rebuild_command(submission_id),
        "history": {k: [[s, round(v, 6)] for s, v in values] for k, values in run.history.items()},
    }
    json_path = folder / "training.json"
    json_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    checkpoints = sorted(
        {s for s, _ in run.history["loss"] if s % max(1, config.steps // 10) == 0} | {config.steps}
    )
    columns = [k for k in ("loss", "mlm_loss", "contrastive_loss", "contrastive_acc") if k in run.history]
    lookup = {k: dict(run.history[k]) for k in columns}
    curve = "\n".join(
        f"| {s} | " + " | ".join(f"{lookup[k][s]:.4f}" for k in columns) + " |" for s in checkpoints
    )
    stats = corpus.stats
    sources = "\n".join(f"| {src} | {n} |" for src, n in stats["read_per_source"].items())
    removed = ", ".join(f"{why}: {n}" for why, n in stats["removed"].items())
    evals = ", ".join(f"{name} ({n} molecules)" for name, n in stats["evaluation_sets"].items())
    env = record["environment"]
    text = f"""# {submission_id}: how these weights were trained

Generated by `python -m leaderboard.tools.training {submission_id}`; do not edit by hand.

**Objective:** {_VARIANT_TEXT[config.variant]}.

## Rebuild

```
{rebuild_command(submission_id)}
```

(or `python -m leaderboard.tools.training {submission_id}` in the locked environment). Training is seeded and
deterministic on CPU: with the same library versions and `threads`, the rebuilt `model/model.safetensors`
has the sha256 below. The run is also logged to MLflow (experiment `chemrobust-training`: configuration,
corpus hash, loss curves).

## Corpus

- sha256 (sorted canonical isomeric SMILES, one per line): `{corpus.sha256}`
- molecules: {stats["size"]} (after deduplication; removed: {removed})
- evaluation molecules removed by canonical identity (whole molecule or largest fragment): {evals}
- packages: datamol {stats["datamol"]}, rdkit {stats["rdkit"]}

| source | molecules read |
| --- | --- |
{sources}

## Model

RoBERTa encoder, {config.num_hidden_layers} layers, hidden size {config.hidden_size},
{config.num_attention_heads} heads, intermediate size {config.intermediate_size}, {n_params:,} parameters;
atom-level SMILES tokenizer (regex of Schwaller et al.), vocabulary {len(run.tokenizer)} tokens, at most
{config.max_length} tokens per input.
The MLM head is not shipped; `model/` holds the encoder (`AutoModel`) and the tokenizer (`AutoTokenizer`).

- weights: `model/model.safetensors`, {weights.stat().st_size:,} bytes, sha256 `{record["weights"]["sha256"]}`
- training time: {run.seconds:.0f} s for {config.steps} steps ({run.epochs:.1f} epochs over the molecules) on
  {env["processor"]} with threads={config.threads} (torch {env["torch"]}, transformers {env["transformers"]},
  tokenizers {env["tokenizers"]}, python {env["python"]})

## Configuration

```json
{json.dumps(config.model_dump(), indent=1)}
```

## Loss (mean over the last {config.log_every} steps)

| step | {" | ".join(columns)} |
| --- | {" | ".join("---" for _ in columns)} |
{curve}
"""
    md_path = folder / "TRAINING.md"
    md_path.write_text(text, encoding="utf-8")
    return json_path, md_path


def log_to_mlflow(
    settings: Settings,
    submission_id: str,
    config: TrainingConfig,
    corpus: Corpus,
    run: TrainingRun,
    files: Sequence[Path],
) -> str:
    """Log one finished run to the experiment ``chemrobust-training`` of the project's MLflow store.

    Parameters
    ----------
    settings : leaderboard.settings.Settings
        Where the store is (its state folder is created if needed and holds the artifacts).
    submission_id : str
        The reference submission.
    config : TrainingConfig
        Logged as parameters, with the corpus size and vocabulary size.
    corpus : Corpus
        Its sha256 is a tag.
    run : TrainingRun
        Loss history (metrics) and training time (tag).
    files : sequence of pathlib.Path
        Artifacts (the reports and the model files).

    Returns
    -------
    str
        The MLflow run id.
    """
    from leaderboard.store import ResultStore

    settings.state_dir.mkdir(parents=True, exist_ok=True)
    store = ResultStore(settings.mlflow_uri(), artifact_root=settings.state_dir / "mlartifacts")
    params = {**config.model_dump(), "corpus_size": corpus.stats["size"], "vocab_size": len(run.tokenizer)}
    tags = {
        "submission": submission_id,
        "corpus_sha256": corpus.sha256,
        "training_seconds": f"{run.seconds:.1f}",
        **{f"env.{k}": v for k, v in environment(config).items()},
    }
    return store.log_training(submission_id, params, tags, run.history, list(files))
