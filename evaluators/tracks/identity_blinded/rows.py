"""Result rows of the identity-blinded track (T5) from its scored items; the track's own metrics.

Pure host-side functions over :class:`Item` (one scored answer); the statistics are
:mod:`evaluators.tracks.identity_blinded.metrics`'s. Per task and representation (:func:`track_rows`):

- per condition and per group (``group`` = ``consistent``/``inconsistent``, ``-`` = all pairs): the score
  (``accuracy`` for binary tasks, invalid = wrong; ``mae`` for numeric tasks over the valid answers: the
  paper's numbers), the headline scores (``balanced_accuracy``, invalid = wrong; ``mae_charged`` over every
  item asked, an invalid answer charged :func:`evaluators.answers.ranges.invalid_error`), ``validity`` and
  ``n_items``;
- under C1 and C2, at ``group`` = ``-``: the group comparison — ``collapse_ratio`` (accuracy S_c / S_i, MAE
  MAE_i / MAE_c) with its stratified bootstrap interval (``collapse_ratio_low``/``_high``; an infinite
  bound is left out), ``cr_distance`` = |ln CR| (0 = no reliance on the source), ``group_gap`` =
  |S_c − S_i| (the ranked form: 0 ⇔ CR = 1, defined when a group scores 0), the two-sided test's
  ``group_p`` (Fisher exact / Mann–Whitney U), ``group_q`` (Benjamini–Hochberg over every comparison of the
  same condition in this result) and ``group_effect`` (Cohen's h / rank-biserial r);
- at C3, ``group`` = ``-``: the paired C2→C3 response to the false label — binary: ``toward_rate``
  (Clopper–Pearson ``toward_low``/``_high``), ``away_rate``, ``unchanged_rate``; numeric:
  ``label_shift_mean``/``_median`` (the prediction's shift as a fraction of the label's shift),
  ``same_direction_rate`` (``same_direction_low``/``_high``), ``opposite_rate``, ``unchanged_rate``; and
  ``n_paired`` (pairs valid under both);
- at C1, ``group`` = ``-``: ``reconstruction_accuracy`` (exact canonical SMILES of the target, at the
  layers the input carries: a source name without the stereo of its SMILES is graded without stereo), the
  lenient ``accuracy_lenient`` and the ``wrong_<class>`` shares (:mod:`evaluators.asking.grading`); for
  names, ``n_truth_excluded`` (source names OPSIN cannot verify as the source: left out of these rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evaluators.answers.ranges import invalid_error
from evaluators.asking import grading
from evaluators.metrics import register_metric
from evaluators.schema import MetricRow, MetricSpec
from evaluators.tracks.identity_blinded import metrics as blinded

__all__ = ["METRIC_NAMES", "Item", "headline_score", "item_score", "track_rows"]

_NEW = (
    MetricSpec("collapse_ratio", False, "collapse ratio",
               "Score on label-consistent pairs over score on label-inconsistent pairs (MAE: inverted); "
               "1 = no reliance on the source label, > 1 = collapse onto the source. Closer to 1 is better.",
               0.0),
    MetricSpec("collapse_ratio_low", False, "CR 2.5 %", "Lower bound of the collapse ratio's stratified "
               "percentile bootstrap 95 % interval.", 0.0),
    MetricSpec("collapse_ratio_high", False, "CR 97.5 %", "Upper bound of the collapse ratio's stratified "
               "percentile bootstrap 95 % interval (left out when infinite).", 0.0),
    MetricSpec("cr_distance", False, "|ln CR|", "Distance of the collapse ratio from 1 on a log scale "
               "(0 = equal scores on both groups; lower is better).", 0.0),
    MetricSpec("group_gap", False, "group gap", "|S_consistent − S_inconsistent|: the absolute difference "
               "of the two groups' accuracies (or MAEs); 0 ⇔ CR = 1, and defined when a group scores 0. "
               "Lower is better.", 0.0),
    MetricSpec("group_p", False, "p (groups)", "Two-sided p of the between-group test: Fisher's exact "
               "(accuracy) or Mann–Whitney U (absolute errors).", 0.0, 1.0),
    MetricSpec("group_q", False, "q (groups)", "Benjamini–Hochberg q of the between-group test over every "
               "comparison of the same condition in the result.", 0.0, 1.0),
    MetricSpec("group_effect", False, "effect (groups)", "Cohen's h of the two group accuracies, or the "
               "rank-biserial r of the errors (> 0: better on consistent pairs; 0 is best).",
               -math.pi, math.pi),
    MetricSpec("toward_rate", False, "toward false label", "Share of pairs answered under C2 and C3 whose "
               "prediction changed to the false source label's class (lower is better).", 0.0, 1.0),
    MetricSpec("toward_low", False, "toward 2.5 %", "Clopper–Pearson 95 % lower bound of the toward rate.",
               0.0, 1.0),
    MetricSpec("toward_high", False, "toward 97.5 %", "Clopper–Pearson 95 % upper bound of the toward rate.",
               0.0, 1.0),
    MetricSpec("away_rate", False, "away from false label", "Share of pairs whose C3 prediction changed, "
               "but not to the false label's class.", 0.0, 1.0),
    MetricSpec("unchanged_rate", True, "unchanged", "Share of pairs whose prediction is the same under C2 "
               "and C3 (a false source label ignored).", 0.0, 1.0),
    MetricSpec("label_shift_mean", False, "label shift (mean)", "Mean of (ŷ_C3 − ŷ_C2) / (y_false − "
               "y_source): 1 = the prediction moved by the whole label change, 0 = unmoved (best)."),
    MetricSpec("label_shift_median", False, "label shift (median)", "Median of the normalised shift "
               "toward the false source label."),
    MetricSpec("same_direction_rate", False, "same direction", "Share of numeric predictions that moved "
               "from C2 to C3 in the direction of the false label (lower is better).", 0.0, 1.0),
    MetricSpec("same_direction_low", False, "same direction 2.5 %", "Clopper–Pearson 95 % lower bound of "
               "the same-direction rate.", 0.0, 1.0),
    MetricSpec("same_direction_high", False, "same direction 97.5 %", "Clopper–Pearson 95 % upper bound of "
               "the same-direction rate.", 0.0, 1.0),
    MetricSpec("opposite_rate", False, "opposite direction", "Share of numeric predictions that moved "
               "against the false label's direction.", 0.0, 1.0),
    MetricSpec("n_paired", True, "n paired", "Pairs with a valid answer under both C2 and C3.", 0.0,
               integral=True),
    MetricSpec("reconstruction_accuracy", True, "reconstruction", "Share of C1 answers whose SMILES is the "
               "edited target's (canonical, stereo included where the input carries it; invalid = wrong).",
               0.0, 1.0),
)  # fmt: skip
for _spec in _NEW:
    register_metric(_spec)

#: Every metric the track reports (``accuracy``, ``mae``, ``validity``, ``n_items``, ``balanced_accuracy`` and
#: ``mae_charged`` are shared with other tracks: :mod:`evaluators.metrics`).
METRIC_NAMES: tuple[str, ...] = (
    "accuracy", "mae", "validity", "n_items", "balanced_accuracy", "mae_charged", *(s.name for s in _NEW),
    *grading.GRADING_METRICS, "n_truth_excluded",
)
_GROUPS = ("consistent", "inconsistent")
_COMPARED = ("C1", "C2")


@dataclass(frozen=True, slots=True)
class Item:
    """One scored answer.

    Attributes
    ----------
    task, representation, condition : str
        Where it was asked (reconstruction: condition ``C1``).
    question : str
        ``property`` or ``reconstruction``.
    id, group : str
        The pair and its group (``consistent``/``inconsistent``).
    kind : str
        Answer kind: ``label``, ``number`` or ``smiles``.
    answer, truth : Any
        Normalised answer (``None``: invalid) and the truth (bool, float, canonical SMILES).
    score : float or None
        :func:`item_score`.
    source_label, false_label : Any
        The pair's true and false source labels (as shown: numbers rounded to two decimals).
    level : str or None
        Reconstruction: the level it is graded at (:mod:`evaluators.asking.grading`; ``None``: the source
        name shown cannot be verified as the source, no truth).
    """

    task: str
    representation: str
    condition: str
    question: str
    id: str
    group: str
    kind: str
    answer: Any
    truth: Any
    score: float | None
    source_label: Any
    false_label: Any
    level: str | None = "exact"


def item_score(kind: str, answer: Any, truth: Any) -> float | None:
    """Score one answer: 1/0 for a label or SMILES (invalid = 0), the absolute error of a number (or None).

    Examples
    --------
    >>> item_score("label", True, True), item_score("label", None, False), item_score("number", None, 1.0)
    (1.0, 0.0, None)
    >>> item_score("number", -2.5, -3.0), item_score("smiles", "CCO", "CCO")
    (0.5, 1.0)
    """
    if kind == "number":
        return None if answer is None else abs(float(answer) - float(truth))
    return float(answer is not None and answer == truth)


def headline_score(items: Sequence[Item]) -> tuple[str, float | None]:
    """Return the headline score of one task's answers: balanced accuracy or the charged MAE.

    Binary tasks: :func:`~.metrics.balanced_accuracy` of the correctness against the target labels.
    Numeric tasks: :func:`~.metrics.charged_mae`, an invalid answer charged
    :func:`~evaluators.answers.ranges.invalid_error` of the task's quantity at the item's truth.
    """
    if items[0].kind == "label":
        return "balanced_accuracy", blinded.balanced_accuracy([it.score for it in items],
                                                              [it.truth for it in items])  # fmt: skip
    charges = [invalid_error(it.task, float(it.truth)) for it in items]
    return "mae_charged", blinded.charged_mae([it.score for it in items], charges)


def _score_rows(row, key: tuple[str, ...], items: Sequence[Item], metric: str) -> list[MetricRow]:
    value = blinded.score([it.score for it in items], metric)
    out = [row(*key, "n_items", len(items)),
           row(*key, "validity", sum(it.answer is not None for it in items) / len(items))]  # fmt: skip
    if value is not None and math.isfinite(value):
        out.append(row(*key, metric, value))
    name, headline = headline_score(items)
    if headline is not None:
        out.append(row(*key, name, headline))
    return out


def _comparison_rows(row, key: tuple[str, ...], comparison: blinded.GroupComparison) -> list[MetricRow]:
    values = {"group_p": comparison.p, "group_q": comparison.q, "group_effect": comparison.effect,
              "collapse_ratio": comparison.cr}  # fmt: skip
    if comparison.cr is not None and comparison.cr > 0:
        values["cr_distance"] = abs(math.log(comparison.cr))
    if comparison.ci is not None:
        values["collapse_ratio_low"] = comparison.ci.low
        values["collapse_ratio_high"] = comparison.ci.high
    return [row(*key, m, v) for m, v in values.items() if v is not None and math.isfinite(v)]


def _response_rows(row, key: tuple[str, ...], c2: Sequence[Item], c3: Sequence[Item]) -> list[MetricRow]:
    by_id = {it.id: it for it in c3}
    pairs = [(a, by_id[a.id]) for a in c2 if a.id in by_id]
    if not pairs:
        return []
    answers2, answers3 = [a.answer for a, _ in pairs], [b.answer for _, b in pairs]
    if c2[0].kind == "label":
        r = blinded.binary_response(answers2, answers3, [bool(a.false_label) for a, _ in pairs])
        names = {"toward": "toward_rate", "toward_low": "toward_low", "toward_high": "toward_high",
                 "away": "away_rate", "unchanged": "unchanged_rate", "n": "n_paired"}  # fmt: skip
    else:
        r = blinded.numeric_response(answers2, answers3, [a.source_label for a, _ in pairs],
                                     [a.false_label for a, _ in pairs])  # fmt: skip
        names = {"shift_mean": "label_shift_mean", "shift_median": "label_shift_median",
                 "same_direction": "same_direction_rate", "same_direction_low": "same_direction_low",
                 "same_direction_high": "same_direction_high", "opposite": "opposite_rate",
                 "unchanged": "unchanged_rate", "n": "n_paired"}  # fmt: skip
    return [row(*key, names[k], v) for k, v in r.items() if k in names and math.isfinite(v)]


def track_rows(items: Sequence[Item], *, n_boot: int = 10000, seed: int = 0) -> list[MetricRow]:
    """All result rows of one run (module docstring), dimensions (task, representation, condition, group).

    Parameters
    ----------
    items : sequence of Item
        Every scored answer of the run.
    n_boot, seed : int
        Bootstrap replicates and seed of the collapse-ratio intervals.
    """

    def row(task: str, rep: str, condition: str, group: str, metric: str, value: float) -> MetricRow:
        dims = (("task", task), ("representation", rep), ("condition", condition), ("group", group))
        return MetricRow(dims, metric, float(value))

    cells: dict[tuple[str, str], dict[tuple[str, str], list[Item]]] = {}
    for it in items:
        cell = cells.setdefault((it.task, it.representation), {})
        cell.setdefault((it.question, it.condition), []).append(it)
    rows: list[MetricRow] = []
    comparisons: dict[str, list[tuple[tuple[str, ...], blinded.GroupComparison]]] = {}
    for (task, rep), by_condition in cells.items():
        for (question, condition), its in by_condition.items():
            if question == "reconstruction":  # strict at the layers the input carries, lenient, classes
                graded = grading.summary([grading.grade(it.answer, it.truth, it.level) for it in its
                                          if it.level is not None])  # fmt: skip
                if graded:
                    rows.append(row(task, rep, condition, "-", "reconstruction_accuracy", graded["accuracy"]))
                    rows += [row(task, rep, condition, "-", m, graded[m]) for m in grading.GRADING_METRICS]
                if rep == "iupac":
                    n = sum(it.level is None for it in its)
                    rows.append(row(task, rep, condition, "-", "n_truth_excluded", n))
                continue
            metric = "accuracy" if its[0].kind == "label" else "mae"
            rows += _score_rows(row, (task, rep, condition, "-"), its, metric)
            groups = {g: [it for it in its if it.group == g] for g in _GROUPS}
            for g, members in groups.items():
                if members:
                    rows += _score_rows(row, (task, rep, condition, g), members, metric)
            scores = {g: [it.score for it in members] for g, members in groups.items()}
            group_values = {g: blinded.score(s, metric) for g, s in scores.items()}
            if condition in _COMPARED and all(v is not None for v in group_values.values()):
                gap = abs(group_values["consistent"] - group_values["inconsistent"])
                if math.isfinite(gap):
                    rows.append(row(task, rep, condition, "-", "group_gap", gap))
                comparison = blinded.compare_groups(scores["consistent"], scores["inconsistent"], metric,
                                                    n_boot=n_boot, seed=seed)  # fmt: skip
                comparisons.setdefault(condition, []).append(((task, rep, condition, "-"), comparison))
        c2, c3 = by_condition.get(("property", "C2")), by_condition.get(("property", "C3"))
        if c2 and c3:
            rows += _response_rows(row, (task, rep, "C3", "-"), c2, c3)
    for family in comparisons.values():
        filled = blinded.compare_family([c for _, c in family])
        for (key, _), comparison in zip(family, filled, strict=True):
            rows += _comparison_rows(row, key, comparison)
    return rows
