"""The Vote'n'Rank GLUE table with the paper's preprocessing, shared by the ranking tests (SPEC section 5)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

#: The committed copy of the published table (tests/fixtures/votenrank/README.md: source and hash).
GLUE_CSV = Path(__file__).resolve().parent / "fixtures" / "votenrank" / "glue.csv"
GLUE_SHA256 = "e52c3b4d20907a8e796f2d9a25f315bb2ef2da6db7efe647350300fbc685432b"

GLUE_TASKS = ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI-m", "MNLI-mm", "QNLI", "RTE", "WNLI"]
GLUE_PAIRED = {"MRPC", "STS-B", "QQP"}  # "a/b" columns: two criteria of weight 0.5 each


def load_glue(*, keep_ax: bool = True) -> tuple[pd.DataFrame, pd.Series]:
    """Load the Vote'n'Rank GLUE table with the paper's preprocessing.

    First 30 rows, systems indexed by ``Model``, "a/b" columns split into two criteria of weight
    0.5 each, AX kept with weight 0 (or dropped), rows with a missing score dropped.
    """
    path = GLUE_CSV
    if hashlib.sha256(path.read_bytes()).hexdigest() != GLUE_SHA256:
        raise ValueError(f"{path} is not the published table (sha256 {GLUE_SHA256})")
    raw = pd.read_csv(path).head(30).set_index("Model")
    columns: dict[str, pd.Series] = {}
    weights: dict[str, float] = {}
    for task in GLUE_TASKS + (["AX"] if keep_ax else []):
        col = raw[task].astype(str).str.strip()
        if task in GLUE_PAIRED:
            parts = col.str.split("/", expand=True)
            if parts.shape[1] != 2:
                raise ValueError(f"{path}: column {task!r} should hold 'a/b' values")
            for i in (0, 1):
                name = f"{task}/{i}"
                columns[name] = pd.to_numeric(parts[i], errors="coerce")
                weights[name] = 0.5
        else:
            columns[task] = pd.to_numeric(col, errors="coerce")
            weights[task] = 0.0 if task == "AX" else 1.0
    table = pd.DataFrame(columns).dropna(how="any")
    return table, pd.Series(weights)
