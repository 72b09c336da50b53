"""The consistency track's "what this board shows": does the KL consistency regulariser help? (issue 12).

The consistency paper (Yan et al., sec. 3.3) finds that adding a symmetric sequence-level KL term between the
outputs given SMILES and given the IUPAC name makes a model more consistent but not more accurate. The
board holds three references trained here on the same data and budget (``chem-t5-ce``, ``chem-t5-kl``,
``chem-t5-randomized``); :func:`finding_lines` compares them item by item from the ``answers`` table:
per task, the SMILES ↔ IUPAC κ consistency (the ranked, chance-adjusted criterion: a model that gives one
answer to everything scores 0, not 1) with a paired bootstrap interval of the difference (items resampled,
κ recomputed on each resample), the raw consistency (the paper's eq. 4, shown, not tallied) and the accuracy
of each representation with a paired bootstrap interval and McNemar's exact p
(:func:`leaderboard.ranking.paired.paired_difference`), and one plain sentence saying whether the KL variant
is more consistent (by κ) and whether it is more accurate, and how many training seeds back each model (read
from ``submissions/<model>/training.json``). Every number is computed from the exported answers when the
page is generated; nothing is written by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from leaderboard.markdown import esc, table
from leaderboard.ranking.paired import PairedDifference, paired_difference
from leaderboard.site.sitedata import SiteData

__all__ = ["BASELINE", "VARIANTS", "finding_lines"]

TRACK = "consistency"
#: The cross-entropy reference every variant is compared with.
BASELINE = "chem-t5-ce"
#: The compared variants and how the text names them.
VARIANTS = {"chem-t5-kl": "the KL-regularised model", "chem-t5-randomized": "the randomized-SMILES model"}
TASKS = ("translation", "formula", "lipinski")
N_BOOT = 10000
#: Replicates of the κ bootstrap (κ is recomputed per replicate: costlier than a mean).
N_BOOT_KAPPA = 2000
SEED = 0
#: The track's κ of bootstrap resamples ``(a, b, picks) -> array``
#: (:func:`evaluators.tracks.consistency.metrics.kappa_resampled`), handed in by the track's extension (the
#: one host module that may import the track package: ``tests/test_layering.py``).
Kappa = Callable[[Sequence[Hashable | None], Sequence[Hashable | None], np.ndarray], np.ndarray]
SUBMISSIONS = Path(__file__).resolve().parents[3] / "submissions"


def seeds(sub: str, root: Path = SUBMISSIONS) -> int | None:
    """Return how many training seeds back a reference model (its ``training.json``); ``None``: unrecorded."""
    path = root / sub / "training.json"
    if not path.is_file():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    config = record.get("config") or {}
    seed = next((r[k] for r in (record, config) for k in ("seeds", "seed") if k in r), None)
    if seed is None:
        return None
    return len(seed) if isinstance(seed, list) else 1


def kappa_difference(
    base: pd.DataFrame, other: pd.DataFrame, kappa: Kappa
) -> tuple[float, float, float, float, str]:
    """κ of both models on their shared items, the difference with a paired bootstrap 95 % interval, verdict.

    Returns ``(κ_base, κ_other, low, high, verdict)``; the verdict is ``higher``/``lower`` when the interval
    excludes 0, else ``same``. ``kappa`` is the track's κ of resamples (:data:`Kappa`).
    """
    ids = base.index.intersection(other.index)
    a_base, b_base = list(base.loc[ids, "a"]), list(base.loc[ids, "b"])
    a_other, b_other = list(other.loc[ids, "a"]), list(other.loc[ids, "b"])
    whole = np.arange(len(ids))[None, :]
    k_base, k_other = float(kappa(a_base, b_base, whole)[0]), float(kappa(a_other, b_other, whole)[0])
    rng = np.random.default_rng(SEED)
    # Drawn one resample at a time, as before, so that the intervals stay those already published.
    picks = np.stack([rng.integers(0, len(ids), len(ids)) for _ in range(N_BOOT_KAPPA)])
    diffs = kappa(a_other, b_other, picks) - kappa(a_base, b_base, picks)
    low, high = (float(q) for q in np.quantile(diffs, [0.025, 0.975]))
    verdict = "higher" if low > 0 else "lower" if high < 0 else "same"
    return k_base, k_other, low, high, verdict


def _scores(answers: pd.DataFrame, sub: str, task: str) -> pd.DataFrame | None:
    """Return per item ``consistency`` (both answers usable and equal), ``acc_smiles``, ``acc_iupac``."""
    rows = answers.loc[(answers["submission"] == sub) & (answers["task"] == task)]
    wide = {}
    for rep in ("smiles", "iupac"):
        side = rows.loc[rows["representation"] == rep].drop_duplicates("id").set_index("id")
        if side.empty:
            return None
        wide[rep] = side
    ids = wide["smiles"].index.intersection(wide["iupac"].index)
    if ids.empty:
        return None
    a, b = wide["smiles"].loc[ids, "answer"], wide["iupac"].loc[ids, "answer"]
    # No answer is None, as the track scores it: the exported table reads an empty answer back as NaN,
    # which κ would count as one more answer (never agreeing, but weighing in its chance).
    def answered(side: pd.Series) -> pd.Series:
        return pd.Series([x if isinstance(x, str) and x else None for x in side], index=ids, dtype=object)

    return pd.DataFrame({
        "a": answered(a), "b": answered(b),
        "consistency": ((a != "") & (a == b)).astype(float),
        "acc_smiles": (wide["smiles"].loc[ids, "correct"] == "1").astype(float),
        "acc_iupac": (wide["iupac"].loc[ids, "correct"] == "1").astype(float),
    }, index=ids)  # fmt: skip


def _cell(r: PairedDifference) -> str:
    return f"{r.diff:+.3f} [{r.low:+.3f}, {r.high:+.3f}] p={r.p:.2g}"


def finding_lines(data: SiteData, dataset: str, *, kappa: Kappa) -> list[str]:
    """Markdown of the comparison on one data set; empty unless ``chem-t5-ce`` and a variant have answers.

    ``kappa`` is the track's κ consistency (:data:`Kappa`), the ranked criterion the verdict is taken on.
    """
    answers = data.tables.get("answers")
    if answers is None or answers.empty:
        return []
    answers = answers.loc[
        (answers["track"].astype(str) == TRACK) & (answers["dataset"].astype(str) == dataset)
    ]
    answers = answers.astype({c: str for c in ("submission", "task", "representation", "id", "answer",
                                               "correct")}).fillna("")  # fmt: skip
    answers = answers.replace({"answer": {"nan": ""}})
    present = set(answers["submission"])
    variants = [v for v in VARIANTS if v in present]
    if BASELINE not in present or not variants:
        return []
    header = ["Task", "Measure", esc(data.name(BASELINE))]
    for v in variants:
        header += [esc(data.name(v)), f"Δ vs {esc(BASELINE)} [95 %] p"]
    body, tally = [], {v: {"consistency": [], "accuracy": []} for v in variants}
    for task in TASKS:
        base = _scores(answers, BASELINE, task)
        if base is None:
            continue
        others = {v: _scores(answers, v, task) for v in variants}
        cells = [esc(task), "κ consistency SMILES ↔ IUPAC (ranked)", ""]
        for v in variants:
            if others[v] is None:
                cells += ["—", "—"]
                continue
            k_base, k_other, low, high, verdict = kappa_difference(base, others[v], kappa)
            cells[2] = f"{k_base:.3f}"
            cells += [f"{k_other:.3f}", f"{k_other - k_base:+.3f} [{low:+.3f}, {high:+.3f}]"]
            tally[v]["consistency"].append(verdict)
        body.append(cells)
        measures = (("consistency", "raw consistency SMILES ↔ IUPAC (paper)"),
                    ("acc_smiles", "accuracy, SMILES"), ("acc_iupac", "accuracy, IUPAC name"))  # fmt: skip
        for measure, label in measures:
            cells = [esc(task), label, f"{base[measure].mean():.3f}"]
            for v in variants:
                other = others[v]
                if other is None:
                    cells += ["—", "—"]
                    continue
                ids = base.index.intersection(other.index)
                r = paired_difference(
                    base.loc[ids, measure], other.loc[ids, measure], n_boot=N_BOOT, seed=SEED
                )
                cells += [f"{r.mean_b:.3f}", _cell(r)]
                if measure != "consistency":  # raw consistency rewards one answer to everything: shown only
                    tally[v]["accuracy"].append(r.verdict)
            body.append(cells)
    if not body:
        return []
    intro = (
        "The consistency paper [1] adds a symmetric sequence-level KL term between the answers given SMILES "
        "and given the IUPAC name, and finds the models become more consistent but not more accurate. The "
        f"references `{BASELINE}`, `chem-t5-kl` and `chem-t5-randomized` were trained here on the same "
        "corpus, steps and batch size (their model pages link the training records). Per task: the κ "
        "consistency the board ranks ((C − chance) / (1 − chance): a model that gives one answer to "
        "everything scores 0), the raw share of items whose two answers are usable and equal (the paper's, "
        "shown only: one answer to everything scores 1), and each representation's accuracy; Δ = variant − "
        "cross-entropy, paired bootstrap over the items (95 %; κ recomputed per resample) and, for the 0/1 "
        "scores, McNemar's exact p."
    )
    align = ["l", "l", "r", *["r", "r"] * len(variants)]
    out = ["### What this board shows: does a consistency regulariser help?", "", intro, "",
           table(header, body, align=align), ""]  # fmt: skip
    for v in variants:
        cons, acc = tally[v]["consistency"], tally[v]["accuracy"]
        out.append(
            f"On {esc(dataset)}, {VARIANTS[v]} is {_summary(cons, 'consistent')} than `{BASELINE}` by κ "
            f"({_counts(cons)} of {len(cons)} tasks) and {_summary(acc, 'accurate')} "
            f"({_counts(acc)} of {len(acc)} task × representation accuracies)."
        )
        out.append("")
    out += [_seed_sentence([BASELINE, *variants]), ""]
    return out


def _seed_sentence(subs: list[str]) -> str:
    counts = {s: seeds(s) for s in subs}
    known = {n for n in counts.values() if n is not None}
    if len(known) == 1 and None not in counts.values():
        n = known.pop()
        each = "one training seed" if n == 1 else f"{n} training seeds"
        return (f"Each model here is {each}: the intervals are over the items, not over training runs, so "
                "a difference says what these trained models do, not what the regulariser does in general.")
    parts = [f"`{s}`: {'unrecorded' if n is None else n}" for s, n in counts.items()]
    return "Training seeds per model — " + ", ".join(parts) + "; the intervals are over the items only."


def _summary(verdicts: list[str], word: str) -> str:
    up, down = verdicts.count("higher"), verdicts.count("lower")
    if up and not down:
        return f"more {word}"
    if down and not up:
        return f"less {word}"
    if up and down:
        return f"sometimes more, sometimes less {word}"
    return f"no more and no less {word}"


def _counts(verdicts: list[str]) -> str:
    return f"higher on {verdicts.count('higher')}, lower on {verdicts.count('lower')}"
