"""The consistency track's "what this board shows": does the KL consistency regulariser help? (issue 12).

The consistency paper (Yan et al., sec. 3.3) finds that adding a symmetric sequence-level KL term between the
outputs given SMILES and given the IUPAC name makes a model more consistent but not more accurate. The
board holds three references trained here on the same data and budget (``chem-t5-ce``, ``chem-t5-kl``,
``chem-t5-randomized``); :func:`finding_lines` compares them item by item from the ``answers`` table:
per task, the SMILES ↔ IUPAC consistency (both answers usable and equal, the paper's eq. 4) and the
accuracy of each representation, the difference against ``chem-t5-ce`` with a paired bootstrap interval
and McNemar's exact p (:func:`leaderboard.ranking.paired.paired_difference`), and one plain sentence saying
whether the KL variant is more consistent and whether it is more accurate. Every number is computed from
the exported answers when the page is generated; nothing is written by hand.
"""

from __future__ import annotations

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
SEED = 0


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
    return pd.DataFrame({
        "consistency": ((a != "") & (a == b)).astype(float),
        "acc_smiles": (wide["smiles"].loc[ids, "correct"] == "1").astype(float),
        "acc_iupac": (wide["iupac"].loc[ids, "correct"] == "1").astype(float),
    }, index=ids)  # fmt: skip


def _cell(r: PairedDifference) -> str:
    return f"{r.diff:+.3f} [{r.low:+.3f}, {r.high:+.3f}] p={r.p:.2g}"


def finding_lines(data: SiteData, dataset: str) -> list[str]:
    """Markdown of the comparison on one data set; empty unless ``chem-t5-ce`` and a variant have answers."""
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
        measures = (("consistency", "consistency SMILES ↔ IUPAC"), ("acc_smiles", "accuracy, SMILES"),
                    ("acc_iupac", "accuracy, IUPAC name"))  # fmt: skip
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
                tally[v]["consistency" if measure == "consistency" else "accuracy"].append(r.verdict)
            body.append(cells)
    if not body:
        return []
    intro = (
        "The consistency paper [1] adds a symmetric sequence-level KL term between the answers given SMILES "
        "and given the IUPAC name, and finds the models become more consistent but not more accurate. The "
        f"references `{BASELINE}`, `chem-t5-kl` and `chem-t5-randomized` were trained here on the same "
        "corpus, steps and batch size (their model pages link the training records). Per task: the share "
        "of items whose two answers are usable and equal, and each representation's accuracy; Δ = variant − "
        "cross-entropy, paired bootstrap over the items (95 %) and McNemar's exact p."
    )
    align = ["l", "l", "r", *["r", "r"] * len(variants)]
    out = ["### What this board shows: does a consistency regulariser help?", "", intro, "",
           table(header, body, align=align), ""]  # fmt: skip
    for v in variants:
        cons, acc = tally[v]["consistency"], tally[v]["accuracy"]
        out.append(
            f"On {esc(dataset)}, {VARIANTS[v]} is {_summary(cons, 'consistent')} than `{BASELINE}` "
            f"({_counts(cons)} of {len(cons)} tasks) and {_summary(acc, 'accurate')} "
            f"({_counts(acc)} of {len(acc)} task × representation accuracies)."
        )
        out.append("")
    return out


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
