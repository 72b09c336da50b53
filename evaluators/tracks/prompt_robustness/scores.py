"""Scores of the prompt-robustness track (T4): per answer, per template, and over templates.

Pure functions, host side. Definitions (issue 13 item 3, issue 28; ChemDIRT §III-D,
``../shared/papers/chemdirt-instruction-representation-benchmark.txt``):

- **validity**: share of answers that normalise (:mod:`evaluators.answers`) and, for a number, lie in the
  quantity's plausible range (:func:`evaluators.answers.ranges.plausible`); an empty, unparseable or
  absurd answer is invalid — counted, and never scored as a zero error.
- **accuracy**: exact match, invalid = wrong: canonical SMILES equality (stereo included) for structures
  (a name is compared through OPSIN's structure) at the layers the input carries (a name without the
  stereo of the data set's SMILES is graded without stereo: :mod:`evaluators.asking.grading`),
  element-count equality for formulas, equality for yes/no and for counts (ring counts: a count is a
  fact, not a measurement, so off by one is wrong).
- **accuracy_lenient**, **wrong_<class>** (structures): the same compound up to stereo, tautomer and
  protonation; the share of answers wrong in each way (stereo only, tautomer, isomer, formula, none).
- **balanced_accuracy** (yes/no answers and counts): the mean recall over the classes present in the
  truth, ``BA = (1/K) Σ_k |{i ∈ k : answer_i = truth_i}| / n_k`` (invalid = wrong). Plain accuracy
  rewards a constant on an imbalanced set (a 90 %-"yes" set gives "yes" 0.90; on FreeSolv half the
  molecules have no aromatic ring, so "0" is right half the time); BA gives any constant 1/K.
- **tanimoto_<fp>**: mean Tanimoto similarity over the valid structure answers
  (:mod:`evaluators.answers.similarity`: MACCS, Morgan r=2 as 2048 bits and as counts, RDKit path
  fingerprint).
- **element_cosine**, **atom_f1**: means over the valid formula answers.
- **mae_charged** (numbers; the primary score): over *all* asked items, an invalid answer charged the
  bounded error :func:`evaluators.answers.ranges.invalid_error` (the worst plausible answer's):
  ``MAE = (1/n) Σ_i e_i`` with ``e_i = |ŷ_i − y_i|`` if ``ŷ_i`` is valid, else
  ``max(y_i − low, high − y_i)``. Never dropped, never 0: abstaining is the worst a model can do.
- **mae**, **rmse**: the paper's errors, over the valid numeric answers only (reported, not ranked; a
  model with 2 valid answers of 1 200 could have a small one).

Over templates (:func:`over_templates`), for the task's primary score (:data:`PRIMARY`: accuracy;
balanced accuracy for yes/no and counts; charged MAE for numbers): mean, population SD, min, max, the
worst case (min of an accuracy, max of an error) and the spread best − worst = max − min.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evaluators.answers import similarity as sim
from evaluators.answers.ranges import invalid_error, plausible
from evaluators.asking.grading import WRONG, grade

__all__ = [
    "PRIMARY", "SUMMARY_STATS", "balanced_accuracy", "item_scores", "over_templates", "primary_metric",
    "template_metrics",
]  # fmt: skip

#: Primary score per answer kind: what a template's score and the summaries over templates are of.
PRIMARY = {"smiles": "accuracy", "name": "accuracy", "formula": "accuracy", "label": "balanced_accuracy",
           "number": "mae_charged", "count": "balanced_accuracy"}  # fmt: skip
#: Statistics over templates, in display order.
SUMMARY_STATS = ("mean", "sd", "min", "max", "worst", "spread")
_STRUCTURE = ("smiles", "name")


def primary_metric(kind: str) -> str:
    """Return the primary metric of an answer kind (``accuracy``, ``balanced_accuracy``, ``mae_charged``)."""
    return PRIMARY[kind]


def item_scores(
    kind: str, answer: Any, truth: Any, quantity: str | None = None, level: str = "exact"
) -> dict[str, float | None]:
    """Scores of one normalised answer against the truth; ``None`` marks a score the answer cannot have.

    Parameters
    ----------
    kind : str
        The answer kind (:data:`evaluators.answers.ANSWER_KINDS`).
    answer : Any
        The normalised answer (canonical SMILES, Hill formula, bool, float) or ``None`` (invalid).
    truth : Any
        The normalised true answer.
    quantity : str, optional
        For numbers (required there): the quantity asked, a key of
        :data:`evaluators.answers.ranges.PLAUSIBLE`; a number outside its range is invalid.
    level : str
        For structures: the level the item is graded at (:mod:`evaluators.asking.grading`: ``exact``, or
        ``stereo`` / ``tautomer`` where the name shown cannot say more).

    Returns
    -------
    dict
        ``valid`` (1.0 or 0.0) and the kind's scores: ``accuracy`` (invalid = 0.0), the Tanimoto and
        formula similarities (``None`` when invalid); for structures also ``accuracy_lenient`` and the
        ``wrong_<class>`` indicators (:func:`evaluators.asking.grading.grade`); for yes/no also ``truth``
        (1.0 or 0.0, the class of :func:`balanced_accuracy`); for counts ``accuracy`` and ``truth`` (the true
        count, its class); for numbers ``abs_error`` (``None`` when
        invalid) and ``error``, the error charged (``abs_error``, or
        :func:`~evaluators.answers.ranges.invalid_error` when invalid).

    Examples
    --------
    >>> item_scores("formula", "C2H4O2", "C2H6O")["accuracy"], item_scores("label", None, True)
    (0.0, {'valid': 0.0, 'accuracy': 0.0, 'truth': 1.0})
    >>> item_scores("number", 180.0, 180.16, "molecular_weight")["abs_error"] < 0.2
    True
    >>> item_scores("number", 6e14, 46.07, "molecular_weight")
    {'valid': 0.0, 'abs_error': None, 'error': 5553.93}
    """
    if kind == "number":
        if quantity is None:
            raise ValueError("a numeric answer needs its quantity (its plausible range)")
        answer = plausible(quantity, answer)
    valid = answer is not None
    out: dict[str, float | None] = {"valid": float(valid)}
    if kind in _STRUCTURE:
        graded = grade(answer, truth, level)
        out["accuracy"] = float(graded.strict)
        out["accuracy_lenient"] = float(graded.lenient)
        out.update({f"wrong_{c}": float(graded.kind == c and not graded.strict) for c in WRONG})
        for fp in sim.FINGERPRINTS:
            out[f"tanimoto_{fp}"] = sim.tanimoto(answer, truth, fp) if valid else None
    elif kind == "formula":
        out["accuracy"] = float(valid and sim.formula_exact(answer, truth) == 1.0)
        out["element_cosine"] = sim.element_cosine(answer, truth) if valid else None
        out["atom_f1"] = sim.atom_f1(answer, truth) if valid else None
    elif kind == "label":
        out["accuracy"] = float(valid and answer == truth)
        out["truth"] = float(bool(truth))
    elif kind == "count":
        out["accuracy"] = float(valid and int(answer) == int(truth))
        out["truth"] = float(truth)
    elif kind == "number":
        out["abs_error"] = sim.absolute_error(answer, truth) if valid else None
        error = out["abs_error"]
        out["error"] = round(invalid_error(quantity, truth) if error is None else error, 12)
    else:
        raise ValueError(f"unknown answer kind {kind!r}")
    return out


def balanced_accuracy(correct: Sequence[float], classes: Sequence[Any]) -> float | None:
    """Balanced accuracy: the mean over the classes present of the share right in that class.

    ``BA = (1/K) Σ_k (Σ_{i: c_i = k} correct_i) / n_k`` over the ``K`` classes of ``classes``; an invalid
    answer is a 0 in ``correct``. A constant answer scores ``1/K`` (``1`` when the truth has one class:
    such a set cannot tell a constant from knowledge). ``None`` for no items.

    Examples
    --------
    >>> balanced_accuracy([1, 1, 1, 1, 1, 1, 1, 1, 1, 0], [1] * 9 + [0])  # "yes" on a 90 %-yes set
    0.5
    >>> balanced_accuracy([1, 0, 1, 1], [1, 1, 0, 0])
    0.75
    """
    if len(correct) != len(classes):
        raise ValueError(f"{len(correct)} scores for {len(classes)} classes")
    groups: dict[Any, list[float]] = {}
    for c, k in zip(correct, classes, strict=True):
        groups.setdefault(k, []).append(float(c))
    if not groups:
        return None
    return sum(sum(v) / len(v) for v in groups.values()) / len(groups)


def template_metrics(kind: str, scores: Sequence[dict[str, float | None]]) -> dict[str, float]:
    """Metrics of one template from its items' :func:`item_scores` (only the defined ones).

    Examples
    --------
    The invalid answer is charged ``max(10 − (−55), 33 − 10) = 65``:

    >>> rows = [item_scores("number", a, 10.0, "hydration_free_energy") for a in (9.0, 13.0, None)]
    >>> m = template_metrics("number", rows)
    >>> m["mae_charged"], m["mae"], round(m["rmse"], 4), round(m["validity"], 4), m["n_items"]
    (23.0, 2.0, 2.2361, 0.6667, 3)
    >>> m = template_metrics("label", [item_scores("label", True, t) for t in (True, True, True, False)])
    >>> m["accuracy"], m["balanced_accuracy"]
    (0.75, 0.5)
    """
    out: dict[str, float] = {"n_items": len(scores)}
    if not scores:
        return out
    out["validity"] = sum(float(s["valid"] or 0.0) for s in scores) / len(scores)
    keys = [k for k in scores[0] if k not in ("valid", "abs_error", "error", "truth")]
    for key in keys:
        values = [s[key] for s in scores if s[key] is not None]
        if key == "accuracy":
            out[key] = sum(values) / len(scores)
        elif values:
            out[key] = sum(values) / len(values)
    if kind in ("label", "count"):
        ba = balanced_accuracy([float(s["accuracy"] or 0.0) for s in scores], [s["truth"] for s in scores])
        if ba is not None:
            out["balanced_accuracy"] = ba
    if kind == "number":
        out["mae_charged"] = sum(float(s["error"]) for s in scores) / len(scores)
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
