"""Scores of the prompt-robustness track (T4): per answer, per template, and over templates.

Pure functions, host side. Definitions (issue 13 item 3; ChemDIRT §III-D,
``../shared/papers/chemdirt-instruction-representation-benchmark.txt``):

- **validity**: share of answers that normalise (:mod:`evaluators.answers`); an empty or unparseable answer
  is invalid — counted, and never scored as a zero error.
- **accuracy**: exact match, invalid = wrong: canonical SMILES equality (stereo included) for structures
  (a name is compared through OPSIN's structure), element-count equality for formulas, equality for yes/no.
- **tanimoto_<fp>**: mean Tanimoto similarity over the valid structure answers
  (:mod:`evaluators.answers.similarity`: MACCS, Morgan r=2 as 2048 bits and as counts, RDKit path
  fingerprint).
- **element_cosine**, **atom_f1**: means over the valid formula answers.
- **mae**, **rmse**: over the valid numeric answers.

Over templates (:func:`over_templates`), for the task's primary score (accuracy, or MAE for numbers):
mean, population SD, min, max, the worst case (min of an accuracy, max of an error) and the spread
best − worst = max − min (lower: less sensitive to wording).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evaluators.answers import similarity as sim

__all__ = ["PRIMARY", "SUMMARY_STATS", "item_scores", "over_templates", "primary_metric", "template_metrics"]

#: Primary score per answer kind: what a template's score and the summaries over templates are of.
PRIMARY = {"smiles": "accuracy", "name": "accuracy", "formula": "accuracy", "label": "accuracy",
           "number": "mae"}  # fmt: skip
#: Statistics over templates, in display order.
SUMMARY_STATS = ("mean", "sd", "min", "max", "worst", "spread")
_STRUCTURE = ("smiles", "name")


def primary_metric(kind: str) -> str:
    """Return the primary metric of an answer kind (``accuracy`` or ``mae``)."""
    return PRIMARY[kind]


def item_scores(kind: str, answer: Any, truth: Any) -> dict[str, float | None]:
    """Scores of one normalised answer against the truth; ``None`` marks a score the answer cannot have.

    Parameters
    ----------
    kind : str
        The answer kind (:data:`evaluators.answers.ANSWER_KINDS`).
    answer : Any
        The normalised answer (canonical SMILES, Hill formula, bool, float) or ``None`` (invalid).
    truth : Any
        The normalised true answer.

    Returns
    -------
    dict
        ``valid`` (1.0 or 0.0) and the kind's scores: ``accuracy`` (invalid = 0.0), the Tanimoto and
        formula similarities (``None`` when invalid), ``abs_error`` for numbers (``None`` when invalid).

    Examples
    --------
    >>> item_scores("formula", "C2H4O2", "C2H6O")["accuracy"], item_scores("label", None, True)
    (0.0, {'valid': 0.0, 'accuracy': 0.0})
    >>> item_scores("number", 180.0, 180.16)["abs_error"] < 0.2
    True
    """
    valid = answer is not None
    out: dict[str, float | None] = {"valid": float(valid)}
    if kind in _STRUCTURE:
        out["accuracy"] = float(valid and answer == truth)
        for fp in sim.FINGERPRINTS:
            out[f"tanimoto_{fp}"] = sim.tanimoto(answer, truth, fp) if valid else None
    elif kind == "formula":
        out["accuracy"] = float(valid and sim.formula_exact(answer, truth) == 1.0)
        out["element_cosine"] = sim.element_cosine(answer, truth) if valid else None
        out["atom_f1"] = sim.atom_f1(answer, truth) if valid else None
    elif kind == "label":
        out["accuracy"] = float(valid and answer == truth)
    elif kind == "number":
        out["abs_error"] = sim.absolute_error(answer, truth) if valid else None
    else:
        raise ValueError(f"unknown answer kind {kind!r}")
    return out


def template_metrics(kind: str, scores: Sequence[dict[str, float | None]]) -> dict[str, float]:
    """Metrics of one template from its items' :func:`item_scores` (only the defined ones).

    Examples
    --------
    >>> rows = [item_scores("number", a, 10.0) for a in (9.0, 13.0, None)]
    >>> m = template_metrics("number", rows)
    >>> m["mae"], round(m["rmse"], 4), round(m["validity"], 4), m["n_items"]
    (2.0, 2.2361, 0.6667, 3)
    """
    out: dict[str, float] = {"n_items": len(scores)}
    if not scores:
        return out
    out["validity"] = sum(float(s["valid"] or 0.0) for s in scores) / len(scores)
    keys = [k for k in scores[0] if k not in ("valid", "abs_error")]
    for key in keys:
        values = [s[key] for s in scores if s[key] is not None]
        if key == "accuracy":
            out[key] = sum(values) / len(scores)
        elif values:
            out[key] = sum(values) / len(values)
    if kind == "number":
        errors = [s["abs_error"] for s in scores]
        for name, value in (("mae", sim.mae(errors)), ("rmse", sim.rmse(errors))):
            if value is not None:
                out[name] = value
    return out


def over_templates(values: Sequence[float], higher_is_better: bool) -> dict[str, float]:
    """Mean, population SD, min, max, worst and spread of one model's per-template scores.

    Parameters
    ----------
    values : sequence of float
        One score per template (templates without a score left out).
    higher_is_better : bool
        Orientation: the worst case is the min of an accuracy and the max of an error.

    Returns
    -------
    dict
        :data:`SUMMARY_STATS` → value; empty when there is no score.

    Examples
    --------
    >>> over_templates([0.5, 0.7, 0.9], higher_is_better=True)["spread"]
    0.4
    >>> s = over_templates([2.0, 4.0], higher_is_better=False)
    >>> s["mean"], s["sd"], s["worst"]
    (3.0, 1.0, 4.0)
    """
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not xs:
        return {}
    mean = sum(xs) / len(xs)
    low, high = min(xs), max(xs)
    return {
        "mean": mean,
        "sd": math.sqrt(sum((x - mean) ** 2 for x in xs) / len(xs)),
        "min": low,
        "max": high,
        "worst": low if higher_is_better else high,
        "spread": round(high - low, 12),
    }
