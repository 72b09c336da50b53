"""Configuration and result types of the reference-model training (:mod:`leaderboard.tools.training`).

- :class:`TrainingConfig`: everything that determines a reference model besides the corpus and the
  library versions (variant, architecture, optimisation, seed, threads).
- :data:`REFERENCE_MODELS`: the reference submissions, by submission id.
- :class:`TrainingRun`: a trained model with its tokenizer, loss history and timing.
- :class:`TrainingError`: training cannot run as specified.

Pure definitions: no side effects, no heavy imports (torch, transformers and RDKit are imported by the
functions that use them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["REFERENCE_MODELS", "TrainingConfig", "TrainingError", "TrainingRun", "Variant"]

#: The training objectives of the reference models.
Variant = Literal["canonical", "randomized", "contrastive"]


class TrainingConfig(BaseModel):
    """Everything that determines a reference model besides the corpus and the library versions.

    ``batch_size`` counts sequences per step for every variant: the contrastive variant takes
    ``batch_size // 2`` molecules and two views of each, so all three variants see the same number of
    sequences and tokens per step, and the same compute for the same ``steps``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    variant: Variant
    seed: int = 20240601
    # RoBERTa encoder
    hidden_size: int = Field(default=128, ge=8)
    num_hidden_layers: int = Field(default=4, ge=1)
    num_attention_heads: int = Field(default=4, ge=1)
    intermediate_size: int = Field(default=512, ge=8)
    max_length: int = Field(default=256, ge=8, description="tokens per sequence, [CLS] and [SEP] included")
    dropout: float = Field(default=0.1, ge=0.0, lt=1.0)
    # optimisation
    steps: int = Field(default=1000, ge=1)
    batch_size: int = Field(default=64, ge=2)
    learning_rate: float = Field(default=1e-3, gt=0.0)
    warmup_fraction: float = Field(default=0.06, ge=0.0, lt=1.0)
    weight_decay: float = Field(default=0.01, ge=0.0)
    max_grad_norm: float = Field(default=1.0, gt=0.0)
    mlm_probability: float = Field(default=0.15, gt=0.0, lt=1.0)
    bucket_batches: int = Field(default=32, ge=1, description="batches sorted by length together")
    # contrastive variant
    contrastive_weight: float = Field(default=1.0, ge=0.0)
    temperature: float = Field(default=0.07, gt=0.0)
    # execution
    threads: int = Field(default=1, ge=1, description="torch intra-op threads (part of the result)")
    log_every: int = Field(default=10, ge=1)


#: The reference submissions that :mod:`leaderboard.tools.training` builds, by submission id.
REFERENCE_MODELS: dict[str, TrainingConfig] = {
    "smiles-mlm-canonical": TrainingConfig(variant="canonical"),
    "smiles-mlm-randomized": TrainingConfig(variant="randomized"),
    "smiles-mlm-contrastive": TrainingConfig(variant="contrastive"),
}


class TrainingError(RuntimeError):
    """Training cannot run as specified (missing evaluation data, oversized weights, bad arguments)."""


@dataclass
class TrainingRun:
    """A trained model with its tokenizer, loss history and timing.

    Attributes
    ----------
    model : transformers.RobertaForMaskedLM
        The trained model, in eval mode.
    tokenizer : transformers.PreTrainedTokenizerFast
        Its tokenizer (vocabulary built from the corpus).
    history : dict
        ``{name: [(step, value), ...]}``: ``loss``, ``mlm_loss``, ``learning_rate`` and, for the
        contrastive variant, ``contrastive_loss`` and ``contrastive_acc``, averaged over ``log_every`` steps.
    seconds : float
        Wall-clock training time.
    epochs : float
        Passes over the corpus molecules.
    """

    model: Any
    tokenizer: Any
    history: dict[str, list[tuple[int, float]]]
    seconds: float
    epochs: float
