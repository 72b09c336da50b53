"""The drop of a caption score from the original string to a rewrite, with a paired bootstrap interval.

A rewrite is asked only about the molecules whose rewritten string differs from the original (and passed
the identity check); its drop compares the two writings **on those molecules**:

    drop_m = S_m(original captions of S_r) − S_m(rewrite captions of S_r)

with ``S_m`` the corpus score of metric ``m`` (:func:`evaluators.tracks.captioning.metrics.aggregate`:
corpus BLEU from summed sufficient statistics, means of per-item ROUGE and METEOR). Positive: the model
captions worse when the molecule is written the other way.

The interval is a **paired** percentile bootstrap: each replicate draws ``n`` molecules of ``S_r`` with
replacement and scores the *same* draw under both writings, so what a molecule's difficulty adds to both
cancels and the interval is that of the difference, not of two independent scores. Replicates
:data:`REPLICATES`, level :data:`LEVEL`, generator ``numpy.random.default_rng((seed, k))`` with ``k`` the
rewrite's position in the track's list: deterministic, and each rewrite has its own stream. When the two
writings' items are identical every replicate's drop is exactly 0, so the interval is ``[0, 0]``.

Pure: no file, no network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluators.tracks.captioning.metrics import METRIC_NAMES, ItemScores, aggregate

__all__ = ["LEVEL", "REPLICATES", "Drop", "paired_drops"]

#: Bootstrap replicates per rewrite (the interval's ends move by ~0.002 between seeds at 400: enough for a
#: number shown to three decimals beside a drop, and ~1 s per rewrite for 200 molecules).
REPLICATES = 400
#: Two-sided coverage of the percentile interval.
LEVEL = 0.95


@dataclass(frozen=True)
class Drop:
    """The drop of one metric: point estimate and the paired bootstrap interval's ends."""

    value: float
    low: float
    high: float


def paired_drops(
    original: Sequence[ItemScores],
    rewrite: Sequence[ItemScores],
    *,
    seed: int,
    stream: int,
    replicates: int = REPLICATES,
    level: float = LEVEL,
) -> dict[str, Drop]:
    """Return the drop of every caption metric (:data:`METRIC_NAMES`) from ``original`` to ``rewrite``.

    Parameters
    ----------
    original, rewrite : sequence of ItemScores
        Item ``i`` of both is the same molecule (the original string's caption and the rewrite's).
    seed, stream : int
        The run's seed and the rewrite's index: the generator is ``default_rng((seed, stream))``.
    replicates : int
        Bootstrap replicates.
    level : float
        Coverage of the percentile interval.

    Raises
    ------
    ValueError
        If the two sequences differ in length or are empty.

    Examples
    --------
    >>> from evaluators.tracks.captioning.metrics import BleuStatistics
    >>> s = BleuStatistics((3, 2, 1, 0), (3, 2, 1, 1), 3, 3)
    >>> item = ItemScores(s, 1.0, 0.0, 1.0, 1.0, 1.0, 0.9)
    >>> paired_drops([item] * 4, [item] * 4, seed=0, stream=0, replicates=20)["rouge1"]
    Drop(value=0.0, low=0.0, high=0.0)
    """
    if len(original) != len(rewrite):
        raise ValueError(f"{len(original)} original items for {len(rewrite)} rewritten ones: not paired")
    if not original:
        raise ValueError("no paired items")
    point = _difference(aggregate(original), aggregate(rewrite))
    rng = np.random.default_rng((int(seed), int(stream)))
    n = len(original)
    draws = {name: np.empty(replicates) for name in METRIC_NAMES}
    for b in range(replicates):
        picked = rng.integers(0, n, size=n)
        difference = _difference(aggregate([original[i] for i in picked]),
                                 aggregate([rewrite[i] for i in picked]))  # fmt: skip
        for name in METRIC_NAMES:
            draws[name][b] = difference[name]
    tail = 100.0 * (1.0 - level) / 2.0
    out = {}
    for name in METRIC_NAMES:
        low, high = np.percentile(draws[name], [tail, 100.0 - tail])
        out[name] = Drop(point[name], float(low), float(high))
    return out


def _difference(original: dict[str, float], rewrite: dict[str, float]) -> dict[str, float]:
    return {name: float(original[name] - rewrite[name]) for name in METRIC_NAMES}
