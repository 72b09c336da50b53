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

__all__ = ["DATASET", "USABLE_ROUGE1", "Correlation", "link_lines", "linked_points", "spearman", "usable"]

#: The data set both tracks ask (the paper's ChEBI-20 test set).
DATASET = "chebi20"
#: AMORE's headline setting (evaluators.tracks.amore.HEADLINE_SETTING), the Acc@1 correlated.
_SETTING = {"layer": "last", "distance": "l2", "direction": "original_to_augmented", "subset": "non_trivial"}
#: Caption scores correlated, as the paper's Table 5.
SCORES = (("rouge1", "ROUGE-1"), ("meteor", "METEOR"))
#: The paper's threshold and the permutations of the pooled test.
PAPER_RHO = 0.7
#: A model writes usable captions when those of the original writing reach this mean ROUGE-1: the pool and
#: the finding take only such models (a model with no caption has scores that are 0 or noise in every
#: writing, whose ranks say nothing about AMORE; the Chem-T5 answerers of T3 score ≤ 0.001, a constant
#: ChEBI-style caption 0.22, the trained captioner 0.43).
USABLE_ROUGE1 = 0.1
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
    if n < 3:
        return Correlation(float("nan"), float("nan"), n, True)
    rx, ry = _ranks(x), _ranks(y)
    rho = _pearson(rx, ry)
    if math.isnan(rho):
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
    """Per model with both results on :data:`DATASET`: ``(rewrite, Acc@1, {score: value})`` per rewrite.

    Computed once per generation (:attr:`SiteData.cache`): every model page asks, and a pass over the whole
    board per page made the pages quadratic in the models.
    """
    if "amore/captioning-points" not in data.cache:
        data.cache["amore/captioning-points"] = _linked_points(data)
    return data.cache["amore/captioning-points"]


def _linked_points(data: SiteData) -> dict[str, list[tuple[str, float, dict[str, float]]]]:
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


def usable(data: SiteData) -> dict[str, float]:
    """Mean ROUGE-1 of each model's captions of the original writing on :data:`DATASET`, by model.

    Memoised per generation, as :func:`linked_points`.
    """
    if "amore/captioning-usable" in data.cache:
        return data.cache["amore/captioning-usable"]
    results = data.results
    hit = results.loc[(results["dataset"].astype(str) == DATASET)
                      & (results["track"].astype(str) == "captioning")
                      & (results["augmentation"].astype(str) == "original")
                      & (results["metric"].astype(str) == "rouge1")]  # fmt: skip
    out = {str(sub): float(v) for sub, v in hit[["submission", "value"]].itertuples(index=False)}
    data.cache["amore/captioning-usable"] = out
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
    original = usable(data)
    rows, pooled_x, pooled_y = [], [], {s: [] for s, _ in SCORES}
    writes = []
    for sub, pts in points.items():
        accs = [a for _, a, _ in pts]
        cells = []
        ok = original.get(sub, 0.0) >= USABLE_ROUGE1
        for score, _ in SCORES:
            ys = [p[score] for _, _, p in pts]
            cells.append(_cell(spearman(accs, ys)))
            if ok:
                pooled_y[score] += ys
        if ok:
            pooled_x += accs
            writes.append(sub)
        shown = f"{original[sub]:.3f}" if sub in original else "—"
        rows.append([esc(data.name(sub)), str(len(pts)), shown + ("" if ok else " (none usable)"), *cells])
    pooled = {s: spearman(pooled_x, ys) for s, ys in pooled_y.items()}
    out = ["### Does AMORE predict captioning?" if sub_id is None else "#### AMORE and captioning", ""]
    out += ["Spearman's ρ across rewrites between the model's AMORE Acc@1 on ChEBI-20 (last layer, L2, "
            "original → augmented, non-trivial pairs) and the score of its captions of the same rewrites "
            "(captioning track), with its exact two-sided permutation p-value (n: rewrites). The AMORE "
            f"paper reports ρ > {PAPER_RHO} (p = 0.003). Only models that write usable captions (ROUGE-1 of "
            f"the original writing's captions ≥ {USABLE_ROUGE1}) enter the pool: the others' scores are 0 "
            "or noise in every writing.", ""]  # fmt: skip
    header = ["Model", "n", "ROUGE-1, original", *(f"ρ(Acc@1, {label})" for _, label in SCORES)]
    if sub_id is None and len(points) > 1:
        label = f"**pooled: the {_count(len(writes), 'model')} with usable captions**"
        rows.append([label, str(len(pooled_x)), "", *(_cell(pooled[s]) for s, _ in SCORES)])
    out += [table(header, rows, align=["l", "r", "r", "r", "r"]), ""]
    if sub_id is None:
        out += [_finding(pooled, writes, len(points) - len(writes)), ""]
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _finding(pooled: dict[str, Correlation], writes: Sequence[str], silent: int) -> str:
    """Return one sentence: whether the board reproduces the paper's ρ > 0.7 (pooled ROUGE-1 and METEOR).

    ``writes``: the models with usable captions (the pool); ``silent``: how many models with both results
    write none.
    """
    others = f"; {_count(silent, 'other model')} with both results, no usable caption, left out"
    others = others if silent else ""
    rho = {s: c.rho for s, c in pooled.items()}
    p = {s: c.p for s, c in pooled.items()}
    if not writes or any(math.isnan(v) for v in rho.values()):
        return ("**Finding:** the board cannot check the paper's claim yet: no model with both results "
                f"writes captions whose scores vary across rewrites{others}.")  # fmt: skip
    both = all(rho[s] > PAPER_RHO and p[s] < 0.05 for s, _ in SCORES)
    shown = ", ".join(f"{label} ρ = {rho[s]:+.2f} (p = {p[s]:.3f})" for s, label in SCORES)
    verdict = "reproduces" if both else "does not reproduce"
    return (f"**Finding:** pooled over the {_count(len(writes), 'model')} writing usable captions ({shown}"
            f"{others}), the board {verdict} the paper's claim that AMORE's Acc@1 predicts caption quality "
            f"across rewrites (ρ > {PAPER_RHO}, significant).")  # fmt: skip


def frame_of(points: dict[str, list[tuple[str, float, dict[str, float]]]]) -> pd.DataFrame:
    """Return the linked points as a table: ``submission, augmentation, acc_at_1, rouge1, meteor``."""
    rows = [{"submission": sub, "augmentation": r, "acc_at_1": a, **s} for sub, pts in points.items()
            for r, a, s in pts]  # fmt: skip
    return pd.DataFrame(rows, columns=["submission", "augmentation", "acc_at_1", *(s for s, _ in SCORES)])
