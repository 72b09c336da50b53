"""Every ranked T2 and T5 number recomputes from the committed per-item tables alone (issue 29, part 4).

A reader who downloads ``site/data/`` must be able to check the board without our code: this test plays
that reader. It reads the committed ``results.csv.gz`` and the per-item tables, selects the rows the tracks'
headline criteria rank (the declarations only choose *which* rows; nothing of the tracks' scoring code is
called), and recomputes each value independently:

- **T2** (``downstream``): RMSE ``√(Σ (ŷ − y)² / n)`` with numpy and ROC-AUC with scikit-learn's
  ``roc_auc_score`` over ``downstream_predictions`` of the original test set; the worst rewrite is the
  rewrite with the highest RMSE / lowest ROC-AUC, recomputed the same way for each.
- **T5** (``identity_blinded``): balanced accuracy ``(1/K) Σ_k mean(score | class k)`` over the property
  answers of ``blinded_answers`` (an empty score is an invalid answer: 0), the class being the target's
  label in ``blinded_pairs``; charged MAE ``Σ e*_k / n``, ``e*_k`` the committed absolute error or, for an
  invalid answer, ``max(y − low, high − y)`` with ``y`` the target's value from ``blinded_pairs`` and the
  declared plausible range of the quantity.

It fails when a table loses precision (version 1's 10-decimal predictions left 7 ROC-AUC cells off by up to
0.0034), when a table and the results disagree, or when a ranked result has no table behind it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from evaluators.answers.ranges import PLAUSIBLE
from evaluators.tracks import TRACKS

DATA = Path(__file__).resolve().parents[2] / "site" / "data"
TOLERANCE = 1e-9  # the results carry 12 significant decimals at least; a lost digit shows as 1e-6 or more


def _read(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / name, dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    return _read("results.csv.gz")


def _ranked(results: pd.DataFrame, track: str) -> pd.DataFrame:
    """The result rows the track's headline criteria select (metric and fixed dimensions)."""
    rows = results[results["track"] == track]
    picked = []
    for criterion in TRACKS.get(track).headline:
        mask = rows["metric"] == criterion.metric
        for dimension, value in criterion.where:
            mask &= rows[dimension] == value
        picked.append(rows[mask])
    return pd.concat(picked).drop_duplicates()


def _rmse(labels: np.ndarray, predictions: np.ndarray) -> float:
    return float(np.sqrt(np.mean((predictions - labels) ** 2)))


def _t2_score(metric: str, table: pd.DataFrame) -> float:
    labels = table["label"].astype(float).to_numpy()
    predictions = table["prediction"].astype(float).to_numpy()
    if metric == "rmse":
        return _rmse(labels, predictions)
    return float(roc_auc_score(labels.astype(int), predictions))


def test_every_ranked_downstream_number_recomputes(results: pd.DataFrame) -> None:
    ranked = _ranked(results, "downstream")
    assert len(ranked) > 0, "the committed board ranks no T2 number"
    predictions = _read("downstream_predictions.csv.gz")
    groups = dict(tuple(predictions.groupby(["submission", "dataset"])))
    off = []
    for row in ranked.itertuples(index=False):
        table = groups.get((row.submission, row.dataset))
        assert table is not None, f"{row.submission} × {row.dataset}: ranked, but no committed predictions"
        if row.variant == "worst":
            scores = [_t2_score(row.metric, part) for variant, part in table.groupby("variant")
                      if variant != "original"]  # fmt: skip
            assert scores, f"{row.submission} × {row.dataset}: no rewritten test set committed"
            expected = max(scores) if row.metric == "rmse" else min(scores)
        else:
            part = table[table["variant"] == row.variant]
            assert len(part) > 0, f"{row.submission} × {row.dataset}: no {row.variant!r} predictions"
            expected = _t2_score(row.metric, part)
        if abs(float(row.value) - expected) > TOLERANCE:
            off.append(f"{row.submission} × {row.dataset} × {row.variant} {row.metric}: "
                       f"committed {row.value}, recomputed {expected!r}")  # fmt: skip
    assert not off, "\n".join(off)


def _balanced_accuracy(scores: list[float], classes: list[bool]) -> float:
    by_class: dict[bool, list[float]] = {}
    for value, label in zip(scores, classes, strict=True):
        by_class.setdefault(label, []).append(value)
    return sum(sum(v) / len(v) for v in by_class.values()) / len(by_class)


def _t5_expected(metric: str, task: str, answers: pd.DataFrame, truth: dict[str, str]) -> float:
    if metric == "balanced_accuracy":
        scores = [float(s) if s else 0.0 for s in answers["score"]]
        return _balanced_accuracy(scores, [float(truth[i]) >= 0.5 for i in answers["id"]])
    low, high = PLAUSIBLE[task]
    charged = []
    for item, error in zip(answers["id"], answers["score"], strict=True):
        y = float(truth[item])
        charged.append(abs(float(error)) if error else max(y - low, high - y))
    return sum(charged) / len(charged)


def test_every_ranked_identity_blinded_number_recomputes(results: pd.DataFrame) -> None:
    ranked = _ranked(results, "identity_blinded")
    assert len(ranked) > 0, "the committed board ranks no T5 number"
    answers = _read("blinded_answers.csv.gz")
    answers = answers[answers["question"] == "property"]
    pairs = _read("blinded_pairs.csv.gz")
    truth = dict(zip(zip(pairs["submission"], pairs["id"], strict=True), pairs["target_label"], strict=True))
    groups = dict(tuple(answers.groupby(["submission", "dataset", "task", "representation", "condition"])))
    off = []
    for row in ranked.itertuples(index=False):
        part = groups.get((row.submission, row.dataset, row.task, row.representation, row.condition))
        where = f"{row.submission} × {row.task}/{row.representation}/{row.condition}"
        assert part is not None, f"{where}: ranked, but no committed answers"
        if row.group != "-":
            part = part[part["group"] == row.group]
        assert len(part) > 0, f"{row.submission} × {row.task}/{row.condition}/{row.group}: no answers"
        expected = _t5_expected(row.metric, row.task, part,
                                {i: truth[(row.submission, i)] for i in part["id"]})  # fmt: skip
        if abs(float(row.value) - expected) > TOLERANCE:
            off.append(f"{row.submission} × {row.task}/{row.representation}/{row.condition}/{row.group} "
                       f"{row.metric}: committed {row.value}, recomputed {expected!r}")  # fmt: skip
    assert not off, "\n".join(off)
