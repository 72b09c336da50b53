"""Cross-representation consistency metrics of T3 (SPEC §4 T3), as pure functions of normalised answers.

The paper is Yan et al., "Inconsistency of LLMs in molecular representations"
(``../shared/papers/smiles-iupac-consistency.txt``, appendix A.1); the equation numbers below are theirs.
Every function takes the *normalised* answers of one task asked with two representations of the same
molecules — side ``a`` (e.g. SMILES input) and side ``b`` (e.g. IUPAC input) — item by item, with
``None`` for an answer that could not be extracted or normalised.

House rule, stricter than the paper where it is silent: **a missing answer never equals another missing
answer**. Two unparseable answers are neither consistent nor correct, and a missing answer is a
prediction no other prediction can match (it counts in the denominators of the chance baselines, never in
their sums), so a model cannot earn consistency by failing the same way twice.

Invalid answers (issue 28): a numeric answer outside its quantity's plausible range
(:mod:`evaluators.answers.ranges`) is normalised to ``None`` by the track before it reaches these
functions, so it is *inconsistent* with whatever the other side says (categorical and numeric alike) and
*wrong* in accuracy.

Categorical answers (canonical SMILES, formulas, yes/no labels) are compared for equality; numeric answers
(a property value) by squared error. Functions return ``nan`` when their denominator is empty (no item,
no item wrong on both sides, fewer than two numeric predictions); callers report such a metric as absent,
never as 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = [
    "accuracy",
    "adjusted_consistency",
    "chance_consistency",
    "consistency",
    "false_consistency",
    "kappa_consistency",
    "kappa_resampled",
    "kappa_terms",
    "missing_share",
    "numeric_adjusted_consistency",
    "numeric_agreement",
    "numeric_agreement_terms",
    "numeric_chance_mse",
    "numeric_consistency_mse",
    "numeric_error_charged",
    "numeric_error_mse",
    "raw_agreement",
    "valid_chance",
]

Answer = Hashable | None


def _check(a: Sequence[object], b: Sequence[object]) -> int:
    if len(a) != len(b):
        raise ValueError(f"the two sides must answer the same items: {len(a)} answers vs {len(b)}")
    return len(a)


def consistency(a: Sequence[Answer], b: Sequence[Answer]) -> float:
    """Share of items whose two normalised answers are equal (paper eq. 4 and 7).

    Parameters
    ----------
    a, b : sequence of hashable or None
        Normalised answers of the same items from the two representations; ``None`` is a missing answer.

    Returns
    -------
    float
        ``mean(a_i == b_i and a_i is not None)``; ``nan`` without items.

    Examples
    --------
    >>> consistency(["CCO", "C", None], ["CCO", "N", None])
    0.3333333333333333
    """
    n = _check(a, b)
    if n == 0:
        return math.nan
    return sum(x is not None and x == y for x, y in zip(a, b, strict=True)) / n


def chance_consistency(a: Sequence[Answer], b: Sequence[Answer]) -> float:
    """Agreement of two predictions drawn independently from all predictions: Σ_y p(y)² (eq. 5 and 8).

    ``p`` is the empirical distribution of the answers of *both* sides (``2n`` predictions); missing
    answers count in the denominator and match nothing. For binary labels this is ``p(0)² + p(1)²``.

    Examples
    --------
    >>> chance_consistency(["yes", "yes"], ["no", "yes"])
    0.625
    >>> chance_consistency(["yes", None], [None, None])  # only one of four predictions is an answer
    0.0625
    """
    n = _check(a, b)
    if n == 0:
        return math.nan
    counts = Counter(x for x in (*a, *b) if x is not None)
    total = 2 * n
    return sum((c / total) ** 2 for c in counts.values())


def adjusted_consistency(a: Sequence[Answer], b: Sequence[Answer]) -> float:
    """Consistency beyond chance: :func:`consistency` − :func:`chance_consistency` (eq. 6 and 9)."""
    return consistency(a, b) - chance_consistency(a, b)


def valid_chance(a: Sequence[Answer], b: Sequence[Answer]) -> float:
    """Agreement of two answers drawn from the *valid* answers of both sides: ``Σ_y q(y)²``.

    Unlike :func:`chance_consistency` (eq. 5, invalid answers in the denominator) ``q`` is the distribution
    of the valid answers alone, so failing to answer never lowers the chance term. ``nan`` without a valid
    answer.

    Examples
    --------
    >>> valid_chance(["yes", None], ["no", None])
    0.5
    """
    _check(a, b)
    counts = Counter(x for x in (*a, *b) if x is not None)
    total = sum(counts.values())
    if total == 0:
        return math.nan
    return sum((c / total) ** 2 for c in counts.values())


def kappa_consistency(a: Sequence[Answer], b: Sequence[Answer]) -> float:
    """Chance-normalised consistency (Scott's π on the valid answers): the T3 categorical headline (issue 28).

    ``κ = clip((C − P_v) / (1 − P_v), −1, 1)``, with ``C`` :func:`consistency` over all items (eq. 4; an
    invalid side is inconsistent) and ``P_v`` :func:`valid_chance` (eq. 5 over the valid answers only).
    Degenerate cases: ``P_v = 1`` (one answer everywhere it answers) scores ``C − 1`` (0 for a constant,
    below 0 when it also fails some items); no valid answer at all scores −1.

    Why not the paper's ``C − P_e`` (:func:`adjusted_consistency`, eq. 6, kept as a metric): it is not
    maximal for the oracle when the truth is imbalanced (random answers lower ``P_e`` more than ``C``:
    measured on smiles-iupac-pairs' Lipinski labels, a 70 %-right answerer beat the oracle). Dividing by
    ``1 − P_v`` makes perfect agreement 1 whatever the balance; taking the chance over valid answers only
    keeps a constant that fails a few items (a reaction answer that repeats an input is no answer) from
    earning agreement on its pattern of failures (with eq. 5's chance it scored 0.49). Random answers ≈ 0.
    Higher is better; ``nan`` without items.

    Examples
    --------
    >>> kappa_consistency(["yes", "no"], ["yes", "no"]), kappa_consistency(["yes"] * 3, ["yes"] * 3)
    (1.0, 0.0)
    >>> kappa_consistency([None, None], [None, None]), kappa_consistency(["C", None], ["C", None])
    (-1.0, -0.5)
    """
    terms = kappa_terms(a, b)
    return float(np.mean(terms)) if terms else math.nan


def kappa_terms(a: Sequence[Answer], b: Sequence[Answer]) -> list[float]:
    """Per-item terms of :func:`kappa_consistency`: ``([a_i = b_i ≠ none] − P_v) / (1 − P_v)``.

    ``P_v`` is the whole sample's chance (fixed under a resample of the items); ``P_v = 1``: ``[…] − 1``;
    no valid answer: −1. When the mean leaves [−1, 1] every term is the clipped mean, so the mean of the
    terms is always the metric.
    """
    n = _check(a, b)
    if n == 0:
        return []
    chance = valid_chance(a, b)
    agree = [float(x is not None and x == y) for x, y in zip(a, b, strict=True)]
    if math.isnan(chance):
        return [-1.0] * n
    if chance >= 1.0:
        return [x - 1.0 for x in agree]
    terms = [(x - chance) / (1.0 - chance) for x in agree]
    mean = sum(terms) / n
    if not -1.0 <= mean <= 1.0:
        return [min(max(mean, -1.0), 1.0)] * n
    return terms


def kappa_resampled(a: Sequence[Answer], b: Sequence[Answer], picks: np.ndarray) -> np.ndarray:
    """:func:`kappa_consistency` of ``(a[p], b[p])`` for every row ``p`` of ``picks`` (bootstrap resamples).

    The same κ, recomputed per resample — its chance ``P_v`` included, as a bootstrap of κ must — but on
    integer codes with ``numpy.bincount`` instead of a ``Counter`` per resample: the site's paired κ
    intervals (2 000 resamples per comparison) spent minutes in the Counter. Equal to
    ``[kappa_consistency([a[i] for i in p], [b[i] for i in p]) for p in picks]`` up to float rounding
    (``tests/evaluators/test_consistency_metrics.py`` checks it against that).

    Parameters
    ----------
    a, b : sequence of hashable or None
        Answers of the same items from the two representations.
    picks : numpy.ndarray
        ``R × m`` item indices, one resample per row.

    Returns
    -------
    numpy.ndarray
        ``R`` values of κ.
    """
    _check(a, b)
    codes: dict[Answer, int] = {}
    ca = np.array([-1 if x is None else codes.setdefault(x, len(codes)) for x in a], dtype=np.int64)
    cb = np.array([-1 if x is None else codes.setdefault(x, len(codes)) for x in b], dtype=np.int64)
    agree = ((ca >= 0) & (ca == cb)).astype(float)
    picks = np.asarray(picks, dtype=np.int64)
    out = np.empty(len(picks))
    for r, pick in enumerate(picks):
        both = np.concatenate([ca[pick], cb[pick]])
        valid = both[both >= 0]
        if valid.size == 0:  # no valid answer: −1 (kappa_terms)
            out[r] = -1.0
            continue
        counts = np.bincount(valid)
        counts = counts[counts > 0]
        c = float(agree[pick].mean())
        if counts.size == 1:  # one answer everywhere it answers: P_v = 1, κ = C − 1
            out[r] = c - 1.0
            continue
        chance = float(np.sum((counts / valid.size) ** 2))
        out[r] = min(max((c - chance) / (1.0 - chance), -1.0), 1.0)
    return out


def false_consistency(a: Sequence[Answer], b: Sequence[Answer], truth: Sequence[Answer]) -> float:
    """Consistency among the items both sides get wrong (paper A.1, "false consistency").

    An item is wrong on a side when that side's answer is missing or differs from ``truth``. Separates
    agreeing on the right answer (which accuracy already rewards) from agreeing on a wrong one.

    Returns
    -------
    float
        Share of those items whose two answers are equal (and not missing); ``nan`` when no item is wrong on
        both sides.

    Examples
    --------
    >>> false_consistency(["A", "B", "C", None], ["A", "B", "D", None], ["A", "X", "Y", "Z"])
    0.3333333333333333
    """
    _check(a, b)
    _check(a, truth)
    both_wrong = [
        (x, y) for x, y, t in zip(a, b, truth, strict=True) if not _correct(x, t) and not _correct(y, t)
    ]
    if not both_wrong:
        return math.nan
    return sum(x is not None and x == y for x, y in both_wrong) / len(both_wrong)


def accuracy(answers: Sequence[Answer], truth: Sequence[Answer]) -> float:
    """Share of items answered with the true (normalised) answer; a missing answer is wrong (A.1.1)."""
    n = _check(answers, truth)
    if n == 0:
        return math.nan
    return sum(_correct(x, t) for x, t in zip(answers, truth, strict=True)) / n


def missing_share(answers: Sequence[Answer]) -> float:
    """Share of items without a usable answer (nothing extracted, or it did not normalise)."""
    if len(answers) == 0:
        return math.nan
    return sum(x is None for x in answers) / len(answers)


def raw_agreement(a: Sequence[str], b: Sequence[str]) -> float:
    """Share of items whose raw completions are identical after trimming whitespace (the paper's "match").

    Reported for comparability with the paper, which compares output strings without normalising them.
    Empty completions never agree.
    """
    n = _check(a, b)
    if n == 0:
        return math.nan
    return sum(bool(x.strip()) and x.strip() == y.strip() for x, y in zip(a, b, strict=True)) / n


def _correct(answer: Answer, truth: Answer) -> bool:
    return answer is not None and truth is not None and answer == truth


# --------------------------------------------------------------------------------------------------------
# Numeric answers (eq. 10-12): lower MSE is more consistent
# --------------------------------------------------------------------------------------------------------


def _floats(values: Sequence[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def numeric_consistency_mse(a: Sequence[float | None], b: Sequence[float | None]) -> float:
    """MSE between the two sides' predictions over the items both answered (eq. 10); ``nan`` if none."""
    _check(a, b)
    x, y = _floats(a), _floats(b)
    both = np.isfinite(x) & np.isfinite(y)
    if not both.any():
        return math.nan
    return float(np.mean((x[both] - y[both]) ** 2))


def numeric_chance_mse(a: Sequence[float | None], b: Sequence[float | None]) -> float:
    """Return the expected squared difference of two independent draws of all predictions: 2·Var(ŷ) (eq. 11).

    ``ŷ`` pools the answered predictions of both sides; ``Var`` is the population variance (the
    expectation over independent draws with replacement is exactly ``2·Var``). ``nan`` with fewer than two.

    Examples
    --------
    >>> numeric_chance_mse([0.0, 2.0], [None, 4.0])
    5.333333333333333
    """
    _check(a, b)
    pooled = _floats([*a, *b])
    pooled = pooled[np.isfinite(pooled)]
    if pooled.size < 2:
        return math.nan
    return float(2.0 * np.var(pooled))


def numeric_adjusted_consistency(a: Sequence[float | None], b: Sequence[float | None]) -> float:
    """Improvement of the consistency MSE over chance: 2·Var(ŷ) − MSE(a, b) (eq. 12; higher is better)."""
    return numeric_chance_mse(a, b) - numeric_consistency_mse(a, b)


def numeric_error_mse(answers: Sequence[float | None], truth: Sequence[float]) -> float:
    """MSE of the answered predictions against the truth (A.1.1 (3)); ``nan`` when nothing was answered.

    Missing answers are excluded here and reported by :func:`missing_share` (a missing value is never
    scored as 0).
    """
    _check(answers, truth)
    x, t = _floats(answers), _floats(truth)
    ok = np.isfinite(x) & np.isfinite(t)
    if not ok.any():
        return math.nan
    return float(np.mean((x[ok] - t[ok]) ** 2))


def numeric_agreement_terms(
    a: Sequence[float | None], b: Sequence[float | None], width: float
) -> list[float]:
    """Per-item terms of :func:`numeric_agreement` (their mean is the headline; the bootstrap resamples them).

    With ``d_i = (a_i − b_i)²`` when both sides answered and ``d_i = width²`` otherwise (a pair with an
    invalid side is maximally inconsistent), and ``V`` the population variance of all valid answers of both
    sides, the term of item ``i`` is ``1 − d_i / (2V)``. Degenerate cases, where no ratio exists: no valid
    answer at all → every term −1; ``V = 0`` (one value answered everywhere) → every term 0 if every pair
    agrees (a constant), else −1. When the mean of the terms leaves [−1, 1] every term is the clipped mean,
    so that the mean of the terms is always :func:`numeric_agreement`.

    Parameters
    ----------
    a, b : sequence of float or None
        The two sides' valid answers (``None``: missing or outside the plausible range).
    width : float
        Width of the quantity's plausible range (``high − low``): the largest difference two valid answers
        can have.

    Returns
    -------
    list of float
        One term per item (empty without items).
    """
    n = _check(a, b)
    if n == 0:
        return []
    x, y = _floats(a), _floats(b)
    both = np.isfinite(x) & np.isfinite(y)
    d = np.where(both, (x - y) ** 2, float(width) ** 2)
    pooled = np.concatenate([x[np.isfinite(x)], y[np.isfinite(y)]])
    if pooled.size == 0:
        return [-1.0] * n
    var = float(np.var(pooled))
    if var == 0.0:
        return [0.0 if float(d.max()) == 0.0 else -1.0] * n
    terms = 1.0 - d / (2.0 * var)
    mean = float(terms.mean())
    if not -1.0 <= mean <= 1.0:
        return [float(np.clip(mean, -1.0, 1.0))] * n
    return [float(t) for t in terms]


def numeric_agreement(a: Sequence[float | None], b: Sequence[float | None], width: float) -> float:
    """Chance-adjusted, scale-free agreement of numeric answers: the T3 numeric headline (issue 28).

    ``κ_num = clip(1 − MSE_all / (2·Var(ŷ)), −1, 1)``, with ``MSE_all = (1/N) Σ_i d_i``,
    ``d_i = (a_i − b_i)²`` when both sides gave a valid answer and ``d_i = w²`` otherwise.

    The paper's eq. 10–12 in ratio form: ``2·Var(ŷ)`` (eq. 11, over the valid answers of both sides) is the
    squared difference two independent draws of the model's own answers would have, so the ratio is the
    MSE between representations (eq. 10, here over *all* N items, an invalid side charged the squared
    plausible width ``w²``) relative to chance. It is the intraclass correlation of the two sides' answers:
    the oracle scores 1, independent random answers ≈ 0, one number everywhere (``Var = 0``, ``MSE = 0``)
    exactly 0, an answerer with no valid answer −1 (:func:`numeric_agreement_terms` for the degenerate
    cases). Unlike ``2·Var − MSE`` it has the data's scale removed and cannot grow without bound. Higher is
    better; ``nan`` without items.

    Examples
    --------
    >>> numeric_agreement([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 10.0)
    1.0
    >>> numeric_agreement([0.0, 0.0], [0.0, 0.0], 10.0), numeric_agreement([None, None], [None, None], 10.0)
    (0.0, -1.0)
    """
    terms = numeric_agreement_terms(a, b, width)
    return float(np.mean(terms)) if terms else math.nan


def numeric_error_charged(answers: Sequence[float | None], truth: Sequence[float], quantity: str) -> float:
    """MSE against the truth over every item, an invalid answer charged the worst plausible error.

    ``(1/N) Σ_i e_i²`` with ``e_i = ŷ_i − y_i`` for a valid answer and ``e_i =`` :func:`~evaluators.answers.
    ranges.invalid_error` ``(quantity, y_i)`` for a missing or implausible one: invalid counts as wrong,
    bounded, never dropped (issue 28). :func:`numeric_error_mse` is the paper's form (answered items only).
    """
    from evaluators.answers.ranges import invalid_error

    n = _check(answers, truth)
    if n == 0:
        return math.nan
    errors = [invalid_error(quantity, float(t)) if x is None else float(x) - float(t)
              for x, t in zip(answers, truth, strict=True)]  # fmt: skip
    return float(np.mean(np.square(errors)))
