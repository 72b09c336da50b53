"""Host-side scoring of the downstream track (T2): read the embeddings, fit the probe, score the test sets.

:func:`score_probe` reads what the container wrote — ``strings.csv.gz`` (which embedding row is which
molecule in which test set) and ``embeddings.npy`` — as untrusted data: the rows must be exactly the
molecules and test sets the view asked for, the row numbers inside the array, the array a finite float
matrix; anything else is a :class:`ValueError` naming the file and the problem (the host records the run as
failed). Then :func:`evaluators.tracks.downstream.probes.fit_probe` on the training molecules, the same
probe's predictions on every test set, and the metrics of :mod:`evaluators.tracks.downstream`.
"""

from __future__ import annotations

import csv
import gzip
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.downstream.probes import degradation, fit_probe, paired_bootstrap, score

__all__ = ["STRING_COLUMNS", "ScoredProbe", "read_index", "score_probe"]

#: Columns of ``strings.csv.gz``.
STRING_COLUMNS = ("id", "split", "variant", "status", "row", "string")
STATUSES = ("original", "changed", "identical", "excluded")
#: Longest string the host keeps from the index (longer ones are cut: no test molecule is that long).
MAX_STRING = 2000


@dataclass(frozen=True)
class ScoredProbe:
    """What :func:`score_probe` gives: result rows, per-molecule predictions, details for ``result.json``."""

    rows: list[dict[str, Any]]
    predictions: list[dict[str, Any]]
    details: dict[str, Any] = field(default_factory=dict)


def read_index(
    path: Path, expected: dict[tuple[str, str], str]
) -> dict[tuple[str, str], tuple[int, str, str]]:
    """Read ``strings.csv.gz``: ``{(id, variant): (row, status, string)}`` for exactly the expected keys.

    Parameters
    ----------
    path : pathlib.Path
        The run's index file.
    expected : dict
        ``{(id, variant): split}``: every key the view implies, with the molecule's split.

    Raises
    ------
    ValueError
        If the file is missing, is not gzipped CSV with the header :data:`STRING_COLUMNS`, has a key not
        expected or twice, a wrong split or status, a row that is not a non-negative integer, or lacks a key.
    """
    if not path.is_file() or path.is_symlink():
        raise ValueError(f"{path.name}: the run wrote no index of its embeddings")
    found: dict[tuple[str, str], tuple[int, str, str]] = {}
    try:
        with gzip.open(path, "rt", newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if tuple(header or ()) != STRING_COLUMNS:
                raise ValueError(f"{path.name}: header must be {','.join(STRING_COLUMNS)}")
            for number, line in enumerate(reader, 2):
                if number > len(expected) + 1:
                    raise ValueError(f"{path.name}: more lines than the {len(expected)} expected")
                if len(line) != len(STRING_COLUMNS):
                    raise ValueError(f"{path.name}, line {number}: {len(line)} fields")
                mol, split, variant, status, row, text = line
                key = (mol, variant)
                if key not in expected or key in found:
                    raise ValueError(f"{path.name}, line {number}: unexpected or repeated (id, variant) "
                                     f"{mol[:40]!r}, {variant[:40]!r}")  # fmt: skip
                if split != expected[key] or status not in STATUSES or not row.isdigit():
                    raise ValueError(f"{path.name}, line {number}: bad split, status or row")
                found[key] = (int(row), status, text[:MAX_STRING])
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path.name}: unreadable ({type(exc).__name__})") from None
    missing = len(expected) - len(found)
    if missing:
        raise ValueError(f"{path.name}: {missing} (id, variant) pairs are missing")
    return found


def _embeddings(path: Path, rows_needed: int) -> np.ndarray:
    """Load ``embeddings.npy`` (no pickles, memory-mapped) and check it is a finite 2-d float matrix."""
    if not path.is_file() or path.is_symlink():
        raise ValueError(f"{path.name}: the run wrote no embeddings")
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{path.name}: not a readable .npy array ({type(exc).__name__})") from None
    if array.ndim != 2 or array.dtype.kind != "f" or array.shape[0] < rows_needed or array.shape[1] < 1:
        raise ValueError(f"{path.name}: expected a float array with at least {rows_needed} rows, got "
                         f"{array.dtype} {array.shape}")  # fmt: skip
    return array


def score_probe(
    *,
    records: Sequence[dict[str, str]],
    view: Sequence[dict[str, str]],
    label_field: str,
    kind: str,
    out_dir: Path,
    variants: Sequence[str],
    seed: int,
    n_boot: int,
) -> ScoredProbe:
    """Fit the probe on the training embeddings and score the original and every rewritten test set.

    Parameters
    ----------
    records : sequence of dict
        The data set's records (with labels), aligned with ``view``: the predictions table names each
        molecule by its record id (host side), the run's files by the view's opaque id.
    view : sequence of dict
        The view the container got (``id, split, smiles``).
    label_field : str
        The record field holding the label.
    kind : str
        ``regression`` or ``classification``.
    out_dir : pathlib.Path
        The run's output folder (``embeddings.npy``, ``strings.csv.gz``).
    variants : sequence of str
        ``original`` first, then the augmentations.
    seed, n_boot : int
        Of the probe's cross-validation folds and the paired bootstrap.

    Returns
    -------
    ScoredProbe
        Rows over the ``variant`` dimension (the variants and ``worst``), predictions, details.

    Raises
    ------
    ValueError
        For malformed run outputs (:func:`read_index`), or a split that cannot be scored (one class only).
    """
    label_of = {v["id"]: float(r[label_field]) for v, r in zip(view, records, strict=True)}
    record_of = {v["id"]: r["id"] for v, r in zip(view, records, strict=True)}
    usable = [
        v for v in view if v["split"] in ("train", "test") and canonical_smiles(v["smiles"]) is not None
    ]
    train = [v["id"] for v in usable if v["split"] == "train"]
    test = [v["id"] for v in usable if v["split"] == "test"]
    expected = {(i, variants[0]): "train" for i in train}
    expected.update({(i, v): "test" for i in test for v in variants})
    index = read_index(out_dir / "strings.csv.gz", expected)
    emb = _embeddings(out_dir / "embeddings.npy", 1 + max(r for r, _, _ in index.values()))
    original = variants[0]

    def features(ids: list[str], variant: str) -> np.ndarray:
        x = np.asarray(emb[[index[(i, variant)][0] for i in ids]], dtype=np.float64)
        if not np.isfinite(x).all():
            raise ValueError(f"embeddings.npy: rows of the {variant!r} set hold NaN or infinite values")
        return x

    y_train = np.array([label_of[i] for i in train])
    y_test = np.array([label_of[i] for i in test])
    if kind == "classification":
        for name, y in (("training", y_train), ("test", y_test)):
            if len(np.unique(y)) < 2:
                raise ValueError(f"the {name} split holds one class only: ROC-AUC is undefined; use more "
                                 "molecules (the limit option) or another data set")  # fmt: skip
    probe = fit_probe(features(train, original), y_train, kind, seed=seed)
    preds = {v: probe.predict(features(test, v)) for v in variants}
    scores = {v: score(kind, y_test, p) for v, p in preds.items()}
    score_ci, drop_ci = paired_bootstrap(kind, y_test, preds, reference=original, n_boot=n_boot, seed=seed)
    metric = "rmse" if kind == "regression" else "roc_auc"
    drops = {v: degradation(kind, scores[original], scores[v]) for v in variants[1:]}
    worst = max(variants[1:], key=lambda v: (drops[v][0], -variants.index(v)))

    def score_rows(name: str, v: str) -> list[dict[str, Any]]:
        low, high = score_ci[v]
        return [{"variant": name, "metric": m, "value": x}
                for m, x in ((metric, scores[v]), ("score_low", low), ("score_high", high))]  # fmt: skip

    def drop_rows(name: str, v: str) -> list[dict[str, Any]]:
        (absolute, relative), (low, high) = drops[v], drop_ci[v]
        pairs = [("degradation", absolute), ("degradation_low", low), ("degradation_high", high)]
        pairs += [("relative_degradation", relative)] if np.isfinite(relative) else []
        return [{"variant": name, "metric": m, "value": x} for m, x in pairs]

    rows = [{"variant": original, "metric": "n_train", "value": len(train)},
            {"variant": original, "metric": "n_test", "value": len(test)},
            *score_rows(original, original)]  # fmt: skip
    if kind == "regression":
        # The row a model must beat: every test molecule predicted as the training mean (a constant
        # embedder's ridge probe gives exactly this).
        baseline = score(kind, y_test, np.full(len(y_test), float(np.mean(y_train))))
        rows.append({"variant": original, "metric": "baseline_rmse", "value": baseline})
    for v in variants[1:]:
        rows += score_rows(v, v) + drop_rows(v, v)
    rows += score_rows("worst", worst) + drop_rows("worst", worst)
    predictions = [
        {"variant": v, "id": record_of[i], "status": index[(i, v)][1], "string": index[(i, v)][2],
         "label": label_of[i], "prediction": float(p)}
        for v in variants for i, p in zip(test, preds[v], strict=True)
    ]  # fmt: skip
    details = {
        "worst_variant": worst,
        "probe": {"model": "ridge" if kind == "regression" else "logistic (L2)",
                  "chosen_penalty": probe.chosen, "n_features": int(emb.shape[1])},
    }  # fmt: skip
    return ScoredProbe(rows=rows, predictions=predictions, details=details)
