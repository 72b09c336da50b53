"""The captioning track's site extension: caption scores per rewrite, their drops, and the methodology.

Registered as ``EXTENSIONS["captioning"]``. Per data set, the track page gets one table: a row per model
and metric (BLEU-2/4, ROUGE-1/2/L, METEOR), the score on the original string, then per rewrite the score
and its drop from the original on the same molecules with the paired bootstrap interval. Nothing of the
track is ranked (:mod:`evaluators.tracks.captioning`): the page says so above the table.

Everything a submission controls (its name, its ids) is escaped with :mod:`leaderboard.markdown`.

References
----------
.. [1] Ganeeva, V. et al. (2024). AMORE (``../shared/papers/amore-smiles-augmentation-robustness.txt``).
.. [2] Edwards, C. et al. (2022). Translation between Molecules and Natural Language. EMNLP.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evaluators.tracks.captioning import (
    INSTRUCTION,
    ITEMS_PER_DATASET,
    ORIGINAL,
    REWRITES,
    SCORES,
    TRACK,
    WHAT,
)
from evaluators.tracks.captioning.drops import LEVEL, REPLICATES
from leaderboard.markdown import code, esc, table
from leaderboard.site.blocks import Figures
from leaderboard.site.extensions import EXTENSIONS, Extension
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import metric

#: Why nothing of this track is ranked (shown on the track page and in the methodology).
NOT_RANKED = (
    "Not ranked: a constant caption (\"The molecule is a …\") scores well above zero on BLEU and ROUGE "
    "against ChEBI-20's descriptions, which all open with \"The molecule is\", and never drops under a "
    "rewrite. The retrieval reference captioners (the description of the nearest ChEBI-20 validation "
    "molecule, by Morgan fingerprint or by character 3-grams of the string) show where honest scores lie; "
    "until the degenerate-answerer checks cover this track, these numbers are reported only."
)


def _num(value: Any) -> str:
    if value is None or not math.isfinite(float(value)):
        return "—"
    return f"{float(value):.3f}"


def _values(rows: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """``(submission, augmentation, metric) → value`` of the track's rows of one data set."""
    keys = zip(rows["submission"].astype(str), rows["augmentation"].astype(str), rows["metric"].astype(str),
               strict=True)  # fmt: skip
    return {k: float(v) for k, v in zip(keys, rows["value"], strict=True)}


def _drop_cell(values: dict, sub: str, rewrite: str, name: str) -> str:
    score = values.get((sub, rewrite, name))
    if score is None:
        return "—"
    drop = values.get((sub, rewrite, f"{name}_drop"))
    low, high = (values.get((sub, rewrite, f"{name}_drop_{end}")) for end in ("low", "high"))
    if drop is None:
        return _num(score)
    return f"{_num(score)} (Δ {_num(drop)} [{_num(low)}, {_num(high)}])"


def track_sections(data: SiteData, dataset: str, figures: Figures) -> list[str]:
    """Return one table of a data set: per model and metric, the scores and drops."""
    del figures
    rows = data.track_results(TRACK)
    rows = rows.loc[rows["dataset"] == dataset]
    if rows.empty:
        return []
    values = _values(rows)
    subs = data.order({str(s) for s in rows["submission"].unique()})
    present = [r for r in REWRITES if r in set(rows["augmentation"].astype(str))]
    header = ["Model", "Metric", "original", *present]
    body = []
    for sub in subs:
        for name in SCORES.values():
            if (sub, ORIGINAL, name) not in values and not any((sub, r, name) in values for r in present):
                continue
            first = _num(values.get((sub, ORIGINAL, name)))
            body.append([esc(data.name(sub)), esc(metric(name).label), first,
                         *(_drop_cell(values, sub, r, name) for r in present)])  # fmt: skip
    counts = []
    for r in present:
        asked = {values.get((s, r, "n_items")) for s in subs} - {None}
        same = {values.get((s, r, "n_identical")) for s in subs} - {None}
        if asked:
            counts.append(f"{code(r)}: {', '.join(str(int(n)) for n in sorted(asked))} asked"
                          + (f", {', '.join(str(int(n)) for n in sorted(same))} identical to the original"
                             if same else ""))  # fmt: skip
    out = ["### Caption scores per rewrite", "", f"**{esc(NOT_RANKED)}**", ""]
    out += [
        "Each cell of a rewrite: its score over the molecules asked in it, then (Δ) the drop from the "
        "original string on the same molecules (positive: worse when rewritten) with its "
        f"{int(LEVEL * 100)} % paired bootstrap interval ({REPLICATES} replicates). A rewrite equal to the "
        "original string is not asked again.",
        "",
        table(header, body, align=["l", "l"] + ["r"] * (1 + len(present))),
        "",
    ]
    if counts:
        out += ["Molecules per rewrite: " + "; ".join(counts) + ".", ""]
    return out + string_section(data, dataset, values, subs, present)


def item_spearman(items: pd.DataFrame, score: str) -> float | None:
    """Spearman's ρ between the per-molecule Levenshtein ratio and ``score`` (one model, one rewrite).

    ``None`` with fewer than three molecules or a constant column (ρ undefined).
    """
    from scipy.stats import spearmanr

    frame = items[["levenshtein_ratio", score]].astype(float).dropna()
    if len(frame) < 3 or frame.nunique().min() < 2:
        return None
    return float(spearmanr(frame["levenshtein_ratio"], frame[score]).statistic)


def string_section(data: SiteData, dataset: str, values: dict, subs: list[str], present: list[str]
                   ) -> list[str]:  # fmt: skip
    """Return AMORE's Table 7 for the sample: how far each rewrite moves the string, beside each drop.

    Per writing, the mean SMILES length and (rewrites) the mean Levenshtein ratio to the original string —
    the same for every model (they are asked the same strings) — then per model the ROUGE-1 and METEOR
    drops and, over the molecules, Spearman's ρ between a molecule's Levenshtein ratio and its caption's
    ROUGE-1 / METEOR (the paper's last two columns).
    """
    def shared(writing: str, name: str) -> str:
        found = {values.get((s, writing, name)) for s in subs} - {None}
        return _num(next(iter(found))) if len(found) == 1 else "—"

    if not any((s, r, "levenshtein_ratio") in values for s in subs for r in present):
        return []
    items = data.tables.get("captions")
    groups: dict[tuple[str, str], Any] = {}
    if items is not None:
        items = items.loc[items["dataset"].astype(str) == dataset]
        # Each model's rows of each rewrite found once (a mask per model and rewrite grew with the models²).
        keys = [items["submission"].astype(str), items["augmentation"].astype(str)]
        groups = items.groupby(keys, sort=False).indices
    header = ["Writing", "Mean length", "Levenshtein ratio"]
    body = [[code(ORIGINAL), shared(ORIGINAL, "mean_length"), "0"]]
    for r in present:
        body.append([code(r), shared(r, "mean_length"), shared(r, "levenshtein_ratio")])
    per_model = []
    for sub in subs:
        for r in present:
            if (sub, r, "rouge1_drop") not in values:
                continue
            mine = None
            if items is not None:
                mine = items.iloc[groups.get((sub, r), [])]
            rho = ["—", "—"] if mine is None or mine.empty else [
                _num(item_spearman(mine, s)) for s in ("rouge1", "meteor")]
            per_model.append([esc(data.name(sub)), code(r), _num(values.get((sub, r, "rouge1_drop"))),
                              _num(values.get((sub, r, "meteor_drop"))), *rho])  # fmt: skip
    out = ["### How far each rewrite moves the string (AMORE Table 7)", "",
           "Mean length in characters of the SMILES asked, and the mean Levenshtein ratio of each rewrite to "
           "the original string (edit distance over the original's length; 0: unchanged), on this data "
           "set's sample: the same strings for every model.", "",
           table(header, body, align=["l", "r", "r"]), ""]  # fmt: skip
    if per_model:
        out += ["Per model and rewrite: the caption drops beside Spearman's ρ, over the molecules, between a "
                "molecule's Levenshtein ratio and its caption's score (negative: the further the string "
                "moved, the worse the caption).", "",
                table(["Model", "Rewrite", "ROUGE-1 drop", "METEOR drop", "ρ(ratio, ROUGE-1)",
                       "ρ(ratio, METEOR)"], per_model, align=["l", "l", "r", "r", "r", "r"]), ""]  # fmt: skip
    return out


def methodology() -> list[str]:
    """Return the instruction, the sample, the rewrites, the scores and why nothing is ranked."""
    return [
        f"The captioning track asks every generative model to describe {ITEMS_PER_DATASET} ChEBI-20 test "
        "molecules (a fixed sample, first in `sha256(seed|id)` order) written as the data set's SMILES and "
        "as each of T1's five checked rewrites (" + ", ".join(code(r) for r in REWRITES) + "); a rewrite "
        "equal to the original string is not asked again, and one that fails the identity check is left "
        "out, both counted. One instruction, word for word, then the molecule and the answer protocol's "
        "last line:",
        "",
        f"> {esc(INSTRUCTION)}",
        "> SMILES: `<the molecule as written>`",
        f"> End your reply with a final line of the form \"Answer: &lt;answer&gt;\", where &lt;answer&gt; is "
        f"{esc(WHAT)}.",
        "",
        "The container sees only the prompts (opaque ids); the gold descriptions stay on the host. The "
        "caption is the last `Answer:` line (else the first paragraph), kept as written, and is scored "
        "against the gold description as the MolT5 authors' evaluation script does [2]: corpus BLEU-2 and "
        "BLEU-4 (NLTK, no smoothing), mean ROUGE-1/2/L F-measures (rouge-score), mean METEOR (NLTK, "
        "WordNet 3.0). BLEU and METEOR count SciBERT WordPiece tokens where that tokenizer's files are on "
        "the scoring machine, else BERT's basic (uncased, no WordPiece) tokens; each result records "
        "which, and only numbers of one tokenisation are comparable. The drop of a rewrite is the "
        "original's score minus the rewrite's on the molecules asked in both, with a paired percentile "
        f"bootstrap interval ({REPLICATES} replicates resampling the same molecules for both writings, "
        f"{int(LEVEL * 100)} %) [1].",
        "",
        f"**{esc(NOT_RANKED)}**",
        "",
    ]


EXTENSIONS.register(TRACK)(Extension(track_sections=track_sections, methodology=methodology))
