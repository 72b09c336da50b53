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
    "missing_share",
    "numeric_adjusted_consistency",
    "numeric_chance_mse",
    "numeric_consistency_mse",
    "numeric_error_mse",
    "raw_agreement",
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
