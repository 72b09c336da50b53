"""A submission's training record (``submissions/<id>/training.json``) as the site publishes it.

The reference models trained by the project (``nox -s train-reference``) ship a ``training.json`` beside
their ``model/`` folder (:mod:`leaderboard.tools.training_report`, :mod:`leaderboard.tools.seq2seq_training`).
:func:`read_training_record` turns it into the compact ``training`` entry of the submission's card in
``site/data/submissions.json``: training time, parameters, corpus hash and size, weight size and sha256,
the rebuild command and the loss curve (at most :data:`MAX_POINTS` points). The file is in a submission's
folder, so it is read as untrusted: size-limited, schema-checked, strings bounded; anything else is no
record (``None``), never an error that stops the board.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["MAX_POINTS", "RECORD_FILE", "read_training_record"]

RECORD_FILE = "training.json"
#: Largest ``training.json`` read.
MAX_BYTES = 512 * 1024
#: Points of the published loss curve (evenly thinned, last point kept).
MAX_POINTS = 120
_HEX64 = r"^[0-9a-f]{64}$"


class _Weights(BaseModel):
    model_config = ConfigDict(extra="ignore")
    bytes: int = Field(ge=0)
    sha256: str = Field(pattern=_HEX64)


class _Corpus(BaseModel):
    model_config = ConfigDict(extra="ignore")
    sha256: str = Field(pattern=_HEX64)
    size: int = Field(ge=0)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")
    training_seconds: float = Field(ge=0)
    epochs: float | None = Field(default=None, ge=0)
    parameters: int | None = Field(default=None, ge=0)
    encoder_parameters: int | None = Field(default=None, ge=0)
    corpus: _Corpus
    weights: _Weights
    rebuild: str = Field(max_length=200)
    history: dict[str, list[tuple[int, float]]] = Field(default_factory=dict, max_length=16)


def _thin(points: list[tuple[int, float]]) -> list[list[float]]:
    finite = [(s, v) for s, v in points if math.isfinite(v)]
    if len(finite) > MAX_POINTS:
        step = math.ceil(len(finite) / MAX_POINTS)
        finite = finite[::step] + ([finite[-1]] if (len(finite) - 1) % step else [])
    return [[int(s), round(float(v), 5)] for s, v in finite]


def read_training_record(folder: Path) -> dict[str, Any] | None:
    """Return the publishable training record of a submission folder, or ``None`` when it has none.

    Parameters
    ----------
    folder : pathlib.Path
        ``submissions/<id>``.

    Returns
    -------
    dict or None
        ``seconds``, ``epochs``, ``parameters``, ``corpus_sha256``, ``corpus_size``, ``weights_bytes``,
        ``weights_sha256``, ``rebuild`` and ``loss`` (``[[step, value], ...]``); ``None`` when the file is
        absent, a link, too large, not JSON or not a training record.
    """
    path = Path(folder) / RECORD_FILE
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
        return None
    try:
        rec = _Record.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, ValidationError):
        return None
    return {
        "seconds": round(rec.training_seconds, 1),
        "epochs": rec.epochs,
        "parameters": rec.parameters if rec.parameters is not None else rec.encoder_parameters,
        "corpus_sha256": rec.corpus.sha256,
        "corpus_size": rec.corpus.size,
        "weights_bytes": rec.weights.bytes,
        "weights_sha256": rec.weights.sha256,
        "rebuild": rec.rebuild,
        "loss": _thin(rec.history.get("loss", [])),
    }
