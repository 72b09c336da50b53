"""AMORE's "what this board shows": do published chemical LMs behave as the paper reports? (issue 32).

AMORE (Ganeeva et al. 2024) finds that chemical language models are not robust to SMILES augmentations —
the embedding of a molecule written another way is often not the nearest to the original — and fall far
behind a structure-aware baseline (Morgan fingerprints, invariant to how a molecule is written). The board
checks this on the published models it holds: every model whose card has no training record of this
project (:func:`published_models`: weights from a package or the hub, trained by their authors).

From the ``item_ranks`` table (rank of the true partner per molecule; the headline setting: non-trivial
pairs, last layer, L2, original → augmented) :func:`finding_lines` computes, per data set and augmentation,
each model's Acc@1 against Morgan's on the *same* molecules: the paired difference with its 95 %
bootstrap interval and McNemar's exact p (:func:`leaderboard.ranking.paired.paired_difference`). A model is

- **below Morgan** on an augmentation when the interval of (model − Morgan) lies below 0;
- **not robust** on a data set when its worst augmentation's Acc@1 has a Wilson 95 % upper bound below
  :data:`ROBUST` (a robust encoder retrieves nearly every rewritten molecule);

and the augmentation that **hurts most** is the one with the lowest Acc@1. Nothing is written by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from leaderboard.markdown import esc, table
from leaderboard.ranking.paired import PairedDifference, paired_difference
from leaderboard.site.sitedata import SiteData

__all__ = [
    "REFERENCE", "ROBUST", "agrees_with_paper", "compare", "finding_lines", "published_models", "wilson",
]  # fmt: skip

TRACK = "amore"
#: The structure-aware baseline of the paper.
REFERENCE = "morgan-fingerprint-reference"
#: Acc@1 a robust encoder reaches on every augmentation (the Wilson upper bound must stay below it to say
#: "not robust").
ROBUST = 0.9
N_BOOT = 2000
SEED = 0
_SOURCES = ("pip", "huggingface")


def published_models(data: SiteData) -> list[str]:
    """Return the models their authors trained: weights from a package or the hub, no training record here."""
    out = []
    for sub_id, card in data.submissions.items():
        source = card.get("source") if isinstance(card.get("source"), dict) else {}
        if source.get("source") in _SOURCES and not card.get("training") and sub_id != REFERENCE:
            out.append(sub_id)
    return data.order(out)


def wilson(hits: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion ``hits / n`` (95 % by default).

    >>> [round(x, 4) for x in wilson(45, 50)]
    [0.7864, 0.9565]
    """
    if n <= 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _hits(items: pd.DataFrame) -> pd.Series:
    """Per molecule id: 1.0 when the true partner ranks first (a non-trivial pair), else 0.0."""
    changed = items.loc[(items["status"].astype(str) == "changed").to_numpy()]
    ranks = pd.to_numeric(changed["rank"], errors="coerce")
    return pd.Series((ranks <= 1).astype(float).to_numpy(), index=changed["id"].astype(str).to_numpy())


def compare(data: SiteData) -> dict[tuple[str, str], dict[str, PairedDifference]]:
    """Return (model, set) → augmentation → paired difference, Morgan (a) vs model (b), same molecules."""
    key = "amore/finding"
    if key in data.cache:
        return data.cache[key]
    items = data.tables.get("item_ranks")
    out: dict[tuple[str, str], dict[str, PairedDifference]] = {}
    models = published_models(data)
    if items is None or items.empty or not models:
        data.cache[key] = out
        return out
    items = items.loc[(items["track"].astype(str) == TRACK).to_numpy()]
    keys = ["submission", "dataset", "augmentation"]
    groups = {(str(s), str(d), str(a)): g for (s, d, a), g in items.groupby(keys, observed=True)}
    for (sub, dataset, aug), rows in sorted(groups.items()):
        ref = groups.get((REFERENCE, dataset, aug))
        if sub not in models or ref is None:
            continue
        a, b = _hits(ref), _hits(rows)
        common = sorted(set(a.index) & set(b.index))
        if not common:
            continue
        diff = paired_difference(a[common].tolist(), b[common].tolist(), n_boot=N_BOOT, seed=SEED)
        out.setdefault((sub, dataset), {})[aug] = diff
    data.cache[key] = out
    return out


def _worst(diffs: dict[str, PairedDifference]) -> tuple[str, float]:
    """Return the augmentation with the lowest Acc@1 and that Acc@1's Wilson upper bound."""
    worst = min(diffs, key=lambda a: (diffs[a].mean_b, a))
    w = diffs[worst]
    return worst, wilson(round(w.mean_b * w.n), w.n)[1]


def agrees_with_paper(diffs: dict[str, PairedDifference]) -> bool:
    """Below Morgan on every augmentation, and not robust (worst Acc@1's upper bound below :data:`ROBUST`)."""
    return all(d.high < 0 for d in diffs.values()) and _worst(diffs)[1] < ROBUST


def _verdict(name: str, dataset: str, diffs: dict[str, PairedDifference]) -> str:
    below = [a for a, d in diffs.items() if d.high < 0]
    worst, hi = _worst(diffs)
    robust = "not robust" if hi < ROBUST else "not shown to be non-robust"
    return (
        f"On {esc(dataset)}, {esc(name)} is below Morgan on {len(below)} of {len(diffs)} augmentations "
        f"(paired 95 % interval below 0) and {robust} (worst Acc@1 {diffs[worst].mean_b:.3f} on "
        f"{esc(worst)}, Wilson upper bound {hi:.3f} {'<' if hi < ROBUST else '≥'} {ROBUST}); {esc(worst)} "
        "hurts it most."
    )


def finding_lines(data: SiteData, order: Sequence[str] | None = None) -> list[str]:
    """Return the section: Acc@1 against Morgan per augmentation, and one sentence per model and set."""
    found = compare(data)
    if not found:
        return []
    augs = list(order) if order else sorted({a for d in found.values() for a in d})
    rows, sentences, agrees = [], [], []
    for (sub, dataset), diffs in sorted(found.items(), key=lambda kv: (kv[0][1], data.order([kv[0][0]]))):
        name = data.name(sub)
        cells = []
        for a in augs:
            d = diffs.get(a)
            text = "—" if d is None else f"{d.mean_b:.3f} ({d.diff:+.3f} [{d.low:+.3f}, {d.high:+.3f}])"
            cells.append(text)
        morgan = min((d.mean_a for d in diffs.values()), default=float("nan"))
        rows.append([esc(name), esc(dataset), *cells, f"{morgan:.3f}"])
        sentences.append(f"- {_verdict(name, dataset, diffs)}")
        agrees.append(agrees_with_paper(diffs))
    verdict = (
        "as the paper reports: every one is below Morgan on every augmentation and not robust"
        if all(agrees)
        else f"as the paper reports on {sum(agrees)} of {len(agrees)} (model, data set) pairs only"
    )
    return [
        "## Published models against the paper",
        "",
        "AMORE reports that chemical language models are not robust to SMILES augmentations and fall far "
        "below structure-aware fingerprints. On this board's published models (trained by their authors, "
        f"not by this project) that holds {verdict}. Each cell: the model's Acc@1 (non-trivial pairs, last "
        "layer, L2, original → augmented), then its difference from Morgan on the same molecules with the "
        "paired 95 % bootstrap interval; the last column is Morgan's lowest Acc@1.",
        "",
        table(["Model", "Data set", *(esc(a) for a in augs), "Morgan (lowest)"], rows,
              align=["l", "l", *["r"] * len(augs), "r"]),  # fmt: skip
        "",
        *sentences,
        "",
    ]
