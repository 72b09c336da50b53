"""Paired comparison of two models on the same items: is a difference in a per-item 0/1 score real.

Used for the consistency track's "what this board shows" (issue 12): the KL-regularised reference against
the cross-entropy one, item by item. :func:`paired_difference` gives both means, their difference with a
percentile bootstrap interval over items (the items resampled together for both models, so the pairing is
kept) and McNemar's exact test on the discordant items.

Pure functions; deterministic given ``seed``.

References
----------
McNemar, Q. (1947). Note on the sampling error of the difference between correlated proportions or
percentages. Psychometrika 12, 153–157 (the exact form: a binomial test on the discordant pairs).
Efron, B. & Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 13 (percentile intervals).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PairedDifference", "paired_difference"]


@dataclass(frozen=True)
class PairedDifference:
    """Two models' mean scores on the same items and their difference.

    Attributes
    ----------
    n : int
        Items.
    mean_a, mean_b : float
        Mean score of each model.
    diff : float
        ``mean_b - mean_a``.
    low, high : float
        Percentile bootstrap interval of ``diff``.
    only_a, only_b : int
        Discordant items: scored by ``a`` only, by ``b`` only.
    p : float
        Two-sided exact McNemar p (1.0 without discordant items).
    """

    n: int
    mean_a: float
    mean_b: float
    diff: float
    low: float
    high: float
    only_a: int
    only_b: int
    p: float

    @property
    def verdict(self) -> str:
        """Return ``higher``/``lower`` (the interval excludes 0; sign of ``b - a``) or ``no difference``."""
        if self.low > 0:
            return "higher"
        if self.high < 0:
            return "lower"
        return "no difference"


def paired_difference(
    a: Sequence[float], b: Sequence[float], *, n_boot: int = 10000, seed: int = 0, level: float = 0.95
) -> PairedDifference:
    """Compare two models' 0/1 scores on the same items (``a[i]`` and ``b[i]`` are item ``i``).

    Parameters
    ----------
    a, b : sequence of float
        Per-item scores, 0 or 1, aligned.
    n_boot : int
        Bootstrap replicates (items drawn with replacement, the same draw for both models).
    seed : int
        Seed of the draws.
    level : float
        Coverage of the interval.

    Returns
    -------
    PairedDifference

    Raises
    ------
    ValueError
        If the sequences differ in length, are empty, or hold values other than 0 and 1.

    Examples
    --------
    >>> r = paired_difference([1, 1, 0, 0, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 0, 1], n_boot=2000)
    >>> (r.mean_a, r.mean_b, r.only_a, r.only_b, round(r.p, 4))
    (0.375, 0.875, 0, 4, 0.125)
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(x) == 0:
        raise ValueError(
            f"paired_difference: two aligned, non-empty score lists needed, got {x.shape}, {y.shape}"
        )
    if not np.isin(x, (0.0, 1.0)).all() or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("paired_difference: scores must be 0 or 1")
    n = len(x)
    only_a = int(((x == 1) & (y == 0)).sum())
    only_b = int(((x == 0) & (y == 1)).sum())
    tail = (1.0 - level) / 2.0
    if only_a + only_b == 0:
        low = high = 0.0  # every item scores the same for both: every resample's difference is 0
    else:
        # The same draws as int64 ones (numpy draws any range under 2**32 from the same 32-bit stream), in
        # half the memory; the gathered differences are -1/0/1, so an integer sum divided by n is exactly
        # the float mean, at an eighth of the memory traffic (4-5x faster at 10 000 x 3 300).
        draws = np.random.default_rng(seed).integers(0, n, size=(n_boot, n), dtype=np.int32)
        diffs = (y - x).astype(np.int8)[draws].sum(axis=1, dtype=np.int64) / n
        low, high = np.quantile(diffs, [tail, 1.0 - tail])
    from scipy.stats import binomtest

    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(binomtest(min(only_a, only_b), discordant, 0.5).pvalue)
    return PairedDifference(n, float(x.mean()), float(y.mean()), float(y.mean() - x.mean()), float(low),
                            float(high), only_a, only_b, min(1.0, p))  # fmt: skip
