"""Metrics of the identity-blinded diagnostic track (T5): group comparison, collapse ratio, label response.

Issue 14 item 3; Su et al., *Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction*
(``../shared/papers/identity-blinded-reasoning-diagnostic.txt``, Tables 2, D2–D4, F1–F3). Pure functions of
per-item results (numpy and scipy are imported by the functions that need them). Conditions: C0 target
SMILES; C1 source + edit; C2 + true source label ``y_s``; C3 + false source label ``y_s'``. Groups:
label-consistent (c) and label-inconsistent (i) pairs (:mod:`evaluators.tracks.identity_blinded.pairs`).

===========================  ==========================================================================
quantity                     definition
===========================  ==========================================================================
score (accuracy)             S = Σ_k 1[ŷ_k = y_k] / n; an invalid answer (``None``) is wrong
score (MAE)                  S = Σ_k |ŷ_k − y_k| / n_valid; invalid answers are left out (never an error 0)
balanced accuracy            BA = (1/|K|) Σ_{c∈K} Σ_{k: y_k=c} 1[ŷ_k = y_k] / n_c, K the classes present
                             among the truths; invalid = wrong. A constant scores 1/|K| (0.5), whatever the
                             class shares (issue 28: plain accuracy gives a constant the majority share)
charged MAE                  MAE* = Σ_k e*_k / n over every item asked, e*_k = |ŷ_k − y_k| for a plausible
                             answer, else the bounded charge of :func:`evaluators.answers.ranges.
                             invalid_error` (the worst plausible answer's error): abstaining never pays
collapse ratio (accuracy)    CR = S_c / S_i
collapse ratio (MAE)         CR = MAE_i / MAE_c (an error: inverted so that CR > 1 still means "better on
                             the consistent group")
                             CR is undefined (``None``) when its denominator is 0 (paper: "Undefined")
CR 95% interval              stratified percentile bootstrap: each replicate resamples the c group and the i
                             group with replacement within themselves (sizes n_c, n_i), CR*; the interval
                             is the 2.5 and 97.5 percentiles of CR* (linear interpolation, numpy's default);
                             CR* = +inf when only its denominator is 0, replicates with 0/0 are dropped
between-group test           accuracy: Fisher's exact test, two-sided, on [[c correct, c wrong],
                             [i correct, i wrong]]; MAE: Mann–Whitney U, two-sided, on the errors
q value                      Benjamini–Hochberg over one family (the paper: the 24 comparisons of a
                             condition): q_(r) = min_{j ≥ r} min(1, p_(j) · m / j), p sorted ascending
effect (accuracy)            Cohen's h = 2·asin√S_c − 2·asin√S_i
effect (MAE)                 rank-biserial r = 1 − 2·U_c / (n_c·n_i) = P(e_c < e_i) − P(e_c > e_i), U_c
                             the Mann–Whitney U of the consistent errors (> 0: consistent errors smaller)
binary C2→C3 response        over items valid in both: toward = ŷ3 ≠ ŷ2 and ŷ3 = y_s'; away = ŷ3 ≠ ŷ2 and
                             ŷ3 ≠ y_s'; unchanged = ŷ3 = ŷ2; rates over n; Clopper–Pearson 95% interval
                             of the toward rate (the paper's D_binary)
numeric C2→C3 response       normalised shift s_k = (ŷ3 − ŷ2) / (y_s' − y_s) (1: the prediction moved by the
                             whole label change; 0: unmoved; < 0: moved against it), its mean and median;
                             same-direction rate = share with sign(ŷ3 − ŷ2) = sign(y_s' − y_s) over all
                             valid items (unchanged ones count as not same-direction), Clopper–Pearson 95%
reconstruction               exact match of canonical SMILES, stereo included; invalid = wrong (Table D1)
===========================  ==========================================================================

How the test was identified: the paper does not name it, but its Tables F1/F2 fix it. For BACE, with
n_c = n_i = 68, Fisher's exact two-sided p times the Benjamini–Hochberg factor m / rank with m = 24 gives
the printed q: C2 Claude (68/68 vs 0/68) p = 3.36e-40, × 24 / 1 = 8.07e-39 (printed 8.07e-39; a chi-square
test gives p ≈ 2e-31); C2 GPT p = 5.22e-14, × 24 / 2 = 6.26e-13 (printed 6.26e-13); C1 Claude
9.11e-4 × 24 / 13 = 0.00168 (0.0017); C1 Gemini 0.1224 × 24 / 19 = 0.1546 (0.1546); C1 DeepSeek
0.6071 × 24 / 21 = 0.6938 (0.6938); C2 DeepSeek 0.0141 × 24 / 15 = 0.0226 (0.0226). The effect column is
Cohen's h to three decimals in all eight BACE rows (e.g. 0.295, 0.415, 0.605, −0.118; 3.142 = π for
100 % vs 0 %), and the printed CR intervals are reproduced by the stratified bootstrap to about ±0.02
(e.g. 39/68 vs 29/68 → [0.970, 1.952] against [0.970, 1.950]). The D_binary intervals of Table F3 are
Clopper–Pearson (59/136 → [34.9 %, 52.1 %]). The test for MAE (yield) is not printed; Mann–Whitney U is
the rank test that matches Fisher's role (no normality assumption on skewed errors).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "METRICS",
    "GroupComparison",
    "Interval",
    "balanced_accuracy",
    "binary_response",
    "charged_mae",
    "bh_qvalues",
    "between_group_test",
    "clopper_pearson",
    "cohens_h",
    "collapse_ratio",
    "collapse_ratio_interval",
    "compare_groups",
    "compare_family",
    "numeric_response",
    "reconstruction_accuracy",
    "score",
]

#: Group scores: ``accuracy`` (per-item correctness 1/0, ``None`` = invalid = wrong) and ``mae`` (per-item
#: absolute errors, ``None`` = invalid, left out).
METRICS = ("accuracy", "mae")


def _check_metric(metric: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {METRICS}")


def _values(items: Sequence[float | bool | None], metric: str) -> list[float]:
    """Per-item values a score is the mean of: correctness with ``None`` as 0, or the valid errors."""
    _check_metric(metric)
    if metric == "accuracy":
        return [float(bool(v)) if v is not None else 0.0 for v in items]
    return [abs(float(v)) for v in items if v is not None]


def score(items: Sequence[float | bool | None], metric: str) -> float | None:
    """Score of one group (or one condition): accuracy ``Σ correct / n`` or MAE ``Σ |e| / n_valid``.

    Parameters
    ----------
    items : sequence
        ``accuracy``: per-item correctness (bool or 1.0/0.0), ``None`` for an invalid answer (counted wrong).
        ``mae``: per-item absolute errors, ``None`` for an invalid answer (left out).
    metric : str
        ``accuracy`` or ``mae``.

    Returns
    -------
    float or None
        ``None`` when there is nothing to average.

    Examples
    --------
    >>> score([True, False, None, True], "accuracy"), score([1.0, None, 3.0], "mae")
    (0.5, 2.0)
    """
    values = _values(items, metric)
    return sum(values) / len(values) if values else None


def balanced_accuracy(correct: Sequence[float | bool | None], truths: Sequence[bool]) -> float | None:
    """Balanced accuracy: the mean over the classes present of each class's recall (invalid = wrong).

    ``BA = (1/|K|) Σ_{c∈K} Σ_{k: y_k=c} 1[ŷ_k = y_k] / n_c``. A constant answer scores ``1/|K|`` (0.5 with
    both classes present), an always-invalid one 0, a uniform random label 0.5 in expectation.

    Parameters
    ----------
    correct : sequence
        Per-item correctness (bool or 1.0/0.0), ``None`` for an invalid answer (counted wrong).
    truths : sequence of bool
        The items' true labels (the classes).

    Returns
    -------
    float or None
        ``None`` when there are no items.

    Examples
    --------
    >>> balanced_accuracy([1, 1, 1, 0], [True, True, True, False])  # "yes" to 3 yes, 1 no
    0.5
    >>> balanced_accuracy([1, None, 0, 1], [True, True, False, False])
    0.5
    """
    by_class: dict[bool, list[float]] = {}
    for c, y in zip(correct, truths, strict=True):
        by_class.setdefault(bool(y), []).append(float(bool(c)) if c is not None else 0.0)
    if not by_class:
        return None
    return sum(sum(v) / len(v) for v in by_class.values()) / len(by_class)


def charged_mae(errors: Sequence[float | None], charges: Sequence[float]) -> float | None:
    """MAE over every item asked: ``Σ_k e*_k / n``, ``e*_k`` the error, or the item's charge when invalid.

    Parameters
    ----------
    errors : sequence
        Per-item absolute errors, ``None`` for an invalid (missing, unparseable or implausible) answer.
    charges : sequence of float
        Per-item error charged to an invalid answer (:func:`evaluators.answers.ranges.invalid_error`:
        bounded, and no smaller than any plausible answer's error).

    Returns
    -------
    float or None
        ``None`` when there are no items.

    Examples
    --------
    >>> charged_mae([1.0, None, 3.0], [40.0, 50.0, 40.0])
    18.0
    """
    values = [abs(float(e)) if e is not None else float(c) for e, c in zip(errors, charges, strict=True)]
    return sum(values) / len(values) if values else None


def _ratio(s_c: float | None, s_i: float | None, metric: str) -> float | None:
    if s_c is None or s_i is None:
        return None
    numerator, denominator = (s_c, s_i) if metric == "accuracy" else (s_i, s_c)
    return numerator / denominator if denominator > 0 else None


def collapse_ratio(
    consistent: Sequence[float | bool | None], inconsistent: Sequence[float | bool | None], metric: str
) -> float | None:
    """Collapse ratio: ``S_c / S_i`` for accuracy, ``MAE_i / MAE_c`` for MAE; ``None`` when undefined.

    CR > 1: the model does better when source and target share the label, i.e. it leans on the source.

    Examples
    --------
    >>> round(collapse_ratio([1, 1, 1, 0], [1, 0, 0, 0], "accuracy"), 3)
    3.0
    >>> collapse_ratio([0.5, 1.5], [3.0, 5.0], "mae")
    4.0
    >>> collapse_ratio([1, 1], [0, 0], "accuracy") is None
    True
    """
    return _ratio(score(consistent, metric), score(inconsistent, metric), metric)


@dataclass(frozen=True, slots=True)
class Interval:
    """A percentile bootstrap interval (``high`` may be ``inf``).

    Attributes
    ----------
    low, high : float
        The interval.
    n_boot : int
        Replicates drawn.
    n_undefined : int
        Replicates left out because their ratio was 0/0.
    """

    low: float
    high: float
    n_boot: int
    n_undefined: int


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of sorted values that may hold ``inf``."""
    position = q * (len(sorted_values) - 1)
    lower, upper = math.floor(position), math.ceil(position)
    a, b = sorted_values[lower], sorted_values[upper]
    if a == b or lower == upper:
        return float(a)
    if math.isinf(b):
        return math.inf
    return float(a + (position - lower) * (b - a))


def collapse_ratio_interval(
    consistent: Sequence[float | bool | None],
    inconsistent: Sequence[float | bool | None],
    metric: str,
    *,
    n_boot: int = 10000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval | None:
    """Stratified percentile bootstrap interval of the collapse ratio (seeded; numpy ``default_rng``).

    Each replicate draws ``n_c`` items from the consistent group and ``n_i`` from the inconsistent group
    with replacement (each group within itself) and computes CR*; the interval is the
    ``(1 − level)/2`` and ``(1 + level)/2`` percentiles of CR*. A replicate whose denominator is 0 gives
    CR* = +inf (numerator > 0) or is left out (0/0). ``None`` when the point estimate is undefined (the
    paper prints "Undefined" then) or a group has no valid item.

    Examples
    --------
    >>> ci = collapse_ratio_interval([1] * 39 + [0] * 29, [1] * 29 + [0] * 39, "accuracy")
    >>> 0.9 < ci.low < 1.05 and 1.85 < ci.high < 2.05  # paper Table F1, BACE Gemini C1: [0.970, 1.950]
    True
    """
    import numpy as np

    c, i = np.asarray(_values(consistent, metric)), np.asarray(_values(inconsistent, metric))
    if collapse_ratio(consistent, inconsistent, metric) is None or not len(c) or not len(i):
        return None
    rng = np.random.default_rng(seed)
    s_c = c[rng.integers(0, len(c), size=(n_boot, len(c)))].mean(axis=1)
    s_i = i[rng.integers(0, len(i), size=(n_boot, len(i)))].mean(axis=1)
    numerator, denominator = (s_c, s_i) if metric == "accuracy" else (s_i, s_c)
    defined = ~((numerator == 0) & (denominator == 0))
    with np.errstate(divide="ignore"):
        ratios = np.sort(np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0),
                                  np.inf)[defined])  # fmt: skip
    tail = (1.0 - level) / 2.0
    values = ratios.tolist()
    return Interval(_percentile(values, tail), _percentile(values, 1.0 - tail), n_boot, int((~defined).sum()))


def cohens_h(p_c: float, p_i: float) -> float:
    """Cohen's h of two proportions: ``2·asin√p_c − 2·asin√p_i`` (0.2 small, 0.5 medium, 0.8 large).

    Examples
    --------
    >>> round(cohens_h(39 / 68, 29 / 68), 3), round(cohens_h(1.0, 0.0), 3)  # paper Tables F1, F2
    (0.295, 3.142)
    """
    return 2.0 * math.asin(math.sqrt(p_c)) - 2.0 * math.asin(math.sqrt(p_i))


def between_group_test(
    consistent: Sequence[float | bool | None], inconsistent: Sequence[float | bool | None], metric: str
) -> tuple[float, float, str]:
    """Test the consistent against the inconsistent group; return ``(p, effect, test name)``.

    Accuracy: Fisher's exact test, two-sided, on the 2×2 table of correct/wrong per group (invalid =
    wrong), effect Cohen's h (:func:`cohens_h`). MAE: Mann–Whitney U, two-sided (scipy's exact/asymptotic
    choice), on the valid absolute errors, effect the rank-biserial correlation
    ``1 − 2·U_c / (n_c·n_i)`` (> 0 when consistent errors are smaller).

    Examples
    --------
    >>> p, h, test = between_group_test([1] * 68, [0] * 68, "accuracy")
    >>> f"{p * 24:.3g}", round(h, 3), test  # paper Table F2, BACE Claude C2: q 8.07e-39, effect 3.142
    ('8.07e-39', 3.142, 'fisher_exact')
    """
    from scipy import stats

    c, i = _values(consistent, metric), _values(inconsistent, metric)
    if not c or not i:
        raise ValueError("both groups need at least one valid item")
    if metric == "accuracy":
        k_c, k_i = round(sum(c)), round(sum(i))
        table = [[k_c, len(c) - k_c], [k_i, len(i) - k_i]]
        p = float(stats.fisher_exact(table, alternative="two-sided").pvalue)
        return p, cohens_h(k_c / len(c), k_i / len(i)), "fisher_exact"
    result = stats.mannwhitneyu(c, i, alternative="two-sided")
    return float(result.pvalue), 1.0 - 2.0 * float(result.statistic) / (len(c) * len(i)), "mann_whitney_u"


def bh_qvalues(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg q values in input order: ``q_(r) = min_{j ≥ r} min(1, p_(j)·m / j)``.

    Examples
    --------
    >>> [round(q, 4) for q in bh_qvalues([0.01, 0.04, 0.03, 0.5])]
    [0.04, 0.0533, 0.0533, 0.5]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda k: p_values[k])
    out = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        k = order[rank - 1]
        running = min(running, p_values[k] * m / rank)
        out[k] = min(1.0, running)
    return out


@dataclass(frozen=True, slots=True)
class GroupComparison:
    """One row of the paper's Tables F1/F2 (``q`` filled in by :func:`compare_family`)."""

    metric: str
    n_c: int
    n_i: int
    s_c: float | None
    s_i: float | None
    cr: float | None
    ci: Interval | None
    p: float
    effect: float
    test: str
    q: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain values for JSON (``ci_low``/``ci_high`` ``None`` when undefined)."""
        return {
            "metric": self.metric, "n_c": self.n_c, "n_i": self.n_i, "s_c": self.s_c, "s_i": self.s_i,
            "cr": self.cr, "ci_low": self.ci.low if self.ci else None,
            "ci_high": self.ci.high if self.ci else None, "p": self.p, "q": self.q, "effect": self.effect,
            "test": self.test,
        }  # fmt: skip


def compare_groups(
    consistent: Sequence[float | bool | None],
    inconsistent: Sequence[float | bool | None],
    metric: str,
    *,
    n_boot: int = 10000,
    seed: int = 0,
) -> GroupComparison:
    """Scores, collapse ratio with its bootstrap interval, test and effect of one task × model × condition.

    ``n_c``/``n_i`` count the items of each group (all of them for accuracy, the valid ones for MAE).
    """
    p, effect, test = between_group_test(consistent, inconsistent, metric)
    return GroupComparison(
        metric=metric,
        n_c=len(_values(consistent, metric)),
        n_i=len(_values(inconsistent, metric)),
        s_c=score(consistent, metric),
        s_i=score(inconsistent, metric),
        cr=collapse_ratio(consistent, inconsistent, metric),
        ci=collapse_ratio_interval(consistent, inconsistent, metric, n_boot=n_boot, seed=seed),
        p=p,
        effect=effect,
        test=test,
    )


def compare_family(comparisons: Sequence[GroupComparison]) -> list[GroupComparison]:
    """Fill in Benjamini–Hochberg q values over one family (e.g. every task × model of one condition)."""
    from dataclasses import replace

    qs = bh_qvalues([c.p for c in comparisons])
    return [replace(c, q=q) for c, q in zip(comparisons, qs, strict=True)]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval of a binomial proportion ``k / n``.

    Examples
    --------
    >>> [round(x, 3) for x in clopper_pearson(59, 136)]  # paper Table F3, BACE Gemini D_binary
    [0.349, 0.521]
    """
    from scipy import stats

    if n <= 0:
        raise ValueError("n must be positive")
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def binary_response(
    c2: Sequence[bool | None], c3: Sequence[bool | None], false_labels: Sequence[bool]
) -> dict[str, float]:
    """Paired C2→C3 response of binary predictions to the false source label (paper Fig. 4a, D_binary).

    Parameters
    ----------
    c2, c3 : sequence of bool or None
        The predicted target class under C2 (true source label) and C3 (false source label), per pair;
        ``None`` for an invalid answer (the pair is left out).
    false_labels : sequence of bool
        The false source label shown under C3.

    Returns
    -------
    dict
        ``n`` (pairs valid in both), ``toward``/``away``/``unchanged`` rates (summing to 1), ``toward_low``/
        ``toward_high`` (Clopper–Pearson 95 %); empty when no pair is valid.

    Examples
    --------
    >>> r = binary_response([True, True, False, False, None], [False, True, True, True, True],
    ...                     [False, False, True, False, True])
    >>> r["n"], r["toward"], r["away"], r["unchanged"]
    (4, 0.5, 0.25, 0.25)
    """
    triples = zip(c2, c3, false_labels, strict=True)
    rows = [(a, b, f) for a, b, f in triples if a is not None and b is not None]
    if not rows:
        return {}
    n = len(rows)
    toward = sum(bool(b) != bool(a) and bool(b) == bool(f) for a, b, f in rows)
    away = sum(bool(b) != bool(a) and bool(b) != bool(f) for a, b, f in rows)
    low, high = clopper_pearson(toward, n)
    return {"n": n, "toward": toward / n, "away": away / n, "unchanged": (n - toward - away) / n,
            "toward_low": low, "toward_high": high}  # fmt: skip


def numeric_response(
    c2: Sequence[float | None],
    c3: Sequence[float | None],
    true_source: Sequence[float],
    false_source: Sequence[float],
) -> dict[str, float]:
    """Paired C2→C3 response of numeric predictions to the false source label (paper Fig. 4c, Table D2).

    Per pair ``s = (ŷ3 − ŷ2) / (y_s' − y_s)``: the shift of the prediction as a fraction of the shift of the
    source label (1: moved by all of it, toward the false label; 0: unmoved; negative: moved against it).

    Returns
    -------
    dict
        ``n`` (pairs valid in both), ``shift_mean``, ``shift_median``, ``same_direction`` (share with
        ``sign(ŷ3 − ŷ2) = sign(y_s' − y_s)``, unchanged = not), its Clopper–Pearson 95 % interval
        ``same_direction_low``/``_high``, ``opposite`` and ``unchanged`` rates, and ``same_direction_changed``
        (among the changed predictions; absent when none changed). Pairs with an invalid answer or
        ``y_s' = y_s`` are left out; empty when none is left.

    Examples
    --------
    >>> r = numeric_response([-3.0, -2.0, -5.0], [-5.0, -2.0, -4.0], [-3.0, -1.0, -6.0], [-7.0, -5.0, -2.0])
    >>> r["n"], r["shift_mean"], r["same_direction"], r["unchanged"]
    (3, 0.25, 0.6666666666666666, 0.3333333333333333)
    """
    import statistics

    rows = [
        (float(a), float(b), float(f) - float(t))
        for a, b, t, f in zip(c2, c3, true_source, false_source, strict=True)
        if a is not None and b is not None and float(f) != float(t)
    ]
    if not rows:
        return {}
    n = len(rows)
    shifts = [(b - a) / d for a, b, d in rows]
    same = sum((b - a) * d > 0 for a, b, d in rows)
    opposite = sum((b - a) * d < 0 for a, b, d in rows)
    low, high = clopper_pearson(same, n)
    out = {"n": n, "shift_mean": statistics.fmean(shifts), "shift_median": statistics.median(shifts),
           "same_direction": same / n, "same_direction_low": low, "same_direction_high": high,
           "opposite": opposite / n, "unchanged": (n - same - opposite) / n}  # fmt: skip
    if same + opposite:
        out["same_direction_changed"] = same / (same + opposite)
    return out


def reconstruction_accuracy(predicted: Sequence[str | None], targets: Sequence[str]) -> dict[str, float]:
    """Structure reconstruction (Table D1): share of predicted SMILES equal to the target's, canonically.

    Equality of RDKit canonical SMILES, stereo included (:func:`evaluators.answers.similarity.exact_match`);
    an invalid or missing SMILES is wrong.

    Examples
    --------
    >>> reconstruction_accuracy(["OCC", "CC", None], ["CCO", "CCO", "C"])
    {'n': 3, 'correct': 1, 'accuracy': 0.3333333333333333}
    """
    from evaluators.answers.similarity import exact_match

    correct = sum(exact_match(p, t) == 1.0 for p, t in zip(predicted, targets, strict=True))
    n = len(targets)
    return {"n": n, "correct": correct, "accuracy": correct / n if n else 0.0}
