"""Does AMORE predict captioning? The paper's validation claim, measured on the board (issue 34 point 2).

AMORE (Ganeeva et al. 2024, §"Captioning quality is consistent with AMORE") reports that across SMILES
augmentations a model's retrieval Acc@1 follows its captioning quality on ChEBI-20: "the Spearman
correlation for Acc@1 is greater than 0.7 with p-value = 0.003". For every model with both results on
ChEBI-20 — AMORE Acc@1 in the headline setting (last layer, L2, original → augmented, non-trivial pairs)
per augmentation, and the captioning track's score per rewrite (the same five rewrites, by name) — this
module computes Spearman's

    ρ = corr(rank(Acc@1_r), rank(S_r)),   r over the rewrites both tracks asked,

S being ROUGE-1 or METEOR of the captions of molecules written with rewrite r (equivalently: the AMORE
drop 1 − Acc@1 against the caption drop S_original − S_r, as the original is the same for every r). Per
model n ≤ 5 points, so the p-value is exact: the share of the n! pairings whose |ρ| is at least the one
observed (:func:`spearman`); pooled over models the points of every model together (n = 5 × models), the
p-value from a seeded permutation test. Nothing here is ranked; a model needs both capabilities (an
encoder-decoder embeds with its encoder and captions with its decoder).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from leaderboard.markdown import esc, table
from leaderboard.site.sitedata import SiteData

__all__ = ["DATASET", "Correlation", "link_lines", "linked_points", "spearman"]

#: The data set both tracks ask (the paper's ChEBI-20 test set).
DATASET = "chebi20"
#: AMORE's headline setting (evaluators.tracks.amore.HEADLINE_SETTING), the Acc@1 correlated.
_SETTING = {"layer": "last", "distance": "l2", "direction": "original_to_augmented", "subset": "non_trivial"}
#: Caption scores correlated, as the paper's Table 5.
SCORES = (("rouge1", "ROUGE-1"), ("meteor", "METEOR"))
#: The paper's threshold and the permutations of the pooled test.
PAPER_RHO = 0.7
_PERMUTATIONS = 20_000
_SEED = 0


@dataclass(frozen=True, slots=True)
class Correlation:
    """Spearman's ρ of ``n`` points, its two-sided p-value and how that was computed (exact or sampled)."""

    rho: float
    p: float
    n: int
    exact: bool


def _ranks(values: Sequence[float]) -> list[float]:
    """Average ranks (ties share the mean of their positions), as Spearman's ρ needs."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _pearson(x: Sequence[float], y: Sequence[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def spearman(x: Sequence[float], y: Sequence[float], *, exact_up_to: int = 8) -> Correlation:
    """Return Spearman's ρ of ``x`` and ``y`` with a two-sided permutation p-value.

    Exact (every pairing of the ranks) for ``n ≤ exact_up_to``; otherwise :data:`_PERMUTATIONS` seeded
    shuffles, counting the observed pairing too (so p > 0). ``nan`` for fewer than three points or a
    constant side.
    """
    n = len(x)
    if n != len(y):
        raise ValueError(f"{n} x values and {len(y)} y values")
    rx, ry = _ranks(x), _ranks(y)
    rho = _pearson(rx, ry)
    if n < 3 or math.isnan(rho):
        return Correlation(float("nan"), float("nan"), n, True)
    tolerance = 1e-12
    if n <= exact_up_to:
        pairings = list(itertools.permutations(ry))
        hits = sum(abs(_pearson(rx, list(p))) >= abs(rho) - tolerance for p in pairings)
        return Correlation(rho, hits / len(pairings), n, True)
    rng = random.Random(_SEED)
    shuffled = list(ry)
    hits = 1
    for _ in range(_PERMUTATIONS):
        rng.shuffle(shuffled)
        hits += abs(_pearson(rx, shuffled)) >= abs(rho) - tolerance
    return Correlation(rho, hits / (_PERMUTATIONS + 1), n, False)


def linked_points(data: SiteData) -> dict[str, list[tuple[str, float, dict[str, float]]]]:
    """Per model with both results on :data:`DATASET`: ``(rewrite, Acc@1, {score: value})`` per rewrite."""
    results = data.results
    on = results.loc[results["dataset"].astype(str) == DATASET]
    amore = on.loc[(on["track"].astype(str) == "amore") & (on["metric"].astype(str) == "acc_at_1")]
    for column, value in _SETTING.items():
        amore = amore.loc[amore[column].astype(str) == value]
    captions = on.loc[on["track"].astype(str) == "captioning"]
    out: dict[str, list[tuple[str, float, dict[str, float]]]] = {}
    for sub in sorted(set(amore["submission"].astype(str)) & set(captions["submission"].astype(str))):
        acc = {str(a): float(v) for a, v in amore.loc[amore["submission"].astype(str) == sub,
                                                      ["augmentation", "value"]].itertuples(index=False)}
        mine = captions.loc[captions["submission"].astype(str) == sub]
        rows = mine[["augmentation", "metric", "value"]].itertuples(index=False)
        scores = {(str(a), str(m)): float(v) for a, m, v in rows}
        points = [(r, acc[r], {s: scores[(r, s)] for s, _ in SCORES})
                  for r in sorted(acc) if all((r, s) in scores for s, _ in SCORES)]  # fmt: skip
        if points:
            out[sub] = points
    return out


def _cell(c: Correlation) -> str:
    if math.isnan(c.rho):
        return "—"
    return f"{c.rho:+.2f} (p = {c.p:.3f}{'' if c.exact else ', sampled'})"


def link_lines(data: SiteData, sub_id: str | None = None) -> list[str]:
    """Markdown: the correlation per model (or ``sub_id``'s only), pooled, and the finding in one sentence."""
    points = linked_points(data)
    if sub_id is not None:
        points = {sub_id: points[sub_id]} if sub_id in points else {}
    if not points:
        return [] if sub_id is not None else [
            "### Does AMORE predict captioning?", "",
            "No model has both an AMORE and a captioning result on ChEBI-20 yet, so the paper's claim "
            "(Spearman ρ > 0.7 between Acc@1 and caption quality across augmentations) cannot be checked "
            "here.", ""]  # fmt: skip
    rows, pooled_x, pooled_y = [], [], {s: [] for s, _ in SCORES}
    for sub, pts in points.items():
        accs = [a for _, a, _ in pts]
        cells = []
        for score, _ in SCORES:
            ys = [p[score] for _, _, p in pts]
            cells.append(_cell(spearman(accs, ys)))
            pooled_y[score] += ys
        pooled_x += accs
        rows.append([esc(data.name(sub)), str(len(pts)), *cells])
    pooled = {s: spearman(pooled_x, ys) for s, ys in pooled_y.items()}
    out = ["### Does AMORE predict captioning?" if sub_id is None else "#### AMORE and captioning", ""]
    out += ["Spearman's ρ across rewrites between the model's AMORE Acc@1 on ChEBI-20 (last layer, L2, "
            "original → augmented, non-trivial pairs) and the score of its captions of the same rewrites "
            "(captioning track), with its exact two-sided permutation p-value (n: rewrites). The AMORE "
            f"paper reports ρ > {PAPER_RHO} (p = 0.003).", ""]  # fmt: skip
    header = ["Model", "n", *(f"ρ(Acc@1, {label})" for _, label in SCORES)]
    if sub_id is None and len(points) > 1:
        rows.append(["**all models pooled**", str(len(pooled_x)), *(_cell(pooled[s]) for s, _ in SCORES)])
    out += [table(header, rows, align=["l", "r", "r", "r"]), ""]
    if sub_id is None:
        flat = [s for s, _ in SCORES
                if all(len({round(p[s], 9) for _, _, p in pts}) < 2 for pts in points.values())]  # fmt: skip
        out += [_finding(pooled, len(points), flat), ""]
    return out


def _finding(pooled: dict[str, Correlation], models: int, flat: list[str]) -> str:
    """Return one sentence: does the board reproduce the paper's ρ > 0.7 (pooled ROUGE-1 and METEOR).

    ``flat``: the scores whose values do not vary across rewrites for any model (ρ undefined).
    """
    rho = {s: c.rho for s, c in pooled.items()}
    p = {s: c.p for s, c in pooled.items()}
    if any(math.isnan(v) for v in rho.values()):
        labels = dict(SCORES)
        which = ", ".join(labels[s] for s in flat) or "the caption scores"
        return (f"**Finding:** the board cannot check the paper's claim yet: {which} of the models with both "
                "results does not vary across rewrites (they write no usable caption), so ρ is undefined "
                "or rests on noise.")
    both = all(rho[s] > PAPER_RHO and p[s] < 0.05 for s, _ in SCORES)
    shown = ", ".join(f"{label} ρ = {rho[s]:+.2f} (p = {p[s]:.3f})" for s, label in SCORES)
    verdict = "reproduces" if both else "does not reproduce"
    return (f"**Finding:** pooled over {models} model{'s' if models != 1 else ''} ({shown}), the board "
            f"{verdict} the paper's claim that AMORE's Acc@1 predicts caption quality across rewrites "
            f"(ρ > {PAPER_RHO}, significant).")


def frame_of(points: dict[str, list[tuple[str, float, dict[str, float]]]]) -> pd.DataFrame:
    """Return the linked points as a table: ``submission, augmentation, acc_at_1, rouge1, meteor``."""
    rows = [{"submission": sub, "augmentation": r, "acc_at_1": a, **s} for sub, pts in points.items()
            for r, a, s in pts]  # fmt: skip
    return pd.DataFrame(rows, columns=["submission", "augmentation", "acc_at_1", *(s for s, _ in SCORES)])
