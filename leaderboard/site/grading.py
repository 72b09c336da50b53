"""Strict and lenient accuracy of structure answers and how the wrong ones are wrong (issue 31 item 4).

The asking tracks grade every structure answer strictly (at the layers the input carries), leniently (the
same compound up to stereo, tautomer and protonation) and classify the wrong ones
(:mod:`evaluators.asking.grading`). This module gathers those rows of a track into one table — for a data
set on the track's page, for a model on its page — so a reader sees at a glance whether a model's answers
are wrong chemistry or the right compound written with the wrong stereo.

Each track reports them on its own dimensions (:data:`VIEWS`): the consistency track per task and
representation, prompt robustness as means over the templates, the identity-blinded track for the
reconstruction under C1.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from evaluators.answers.match import CLASS_LABELS
from evaluators.asking.grading import WRONG
from leaderboard.markdown import esc, table
from leaderboard.site.format import fmt
from leaderboard.site.sitedata import SiteData

__all__ = ["VIEWS", "GradingView", "grading_frame", "grading_lines"]


@dataclass(frozen=True)
class GradingView:
    """Where a track's grading rows are.

    Attributes
    ----------
    where : tuple of (str, str)
        The dimension values of the rows (``("pair", "-")`` …).
    strict : str
        The strict accuracy's metric.
    suffix : str
        Suffix of the lenient and class metrics (``_mean``: means over templates).
    question : str
        What the rows are of, for the table's caption.
    """

    where: tuple[tuple[str, str], ...]
    strict: str
    suffix: str
    question: str


#: Track → where its grading rows are.
VIEWS = {
    "consistency": GradingView((("pair", "-"),), "accuracy", "", "per task and representation asked"),
    "prompt_robustness": GradingView((("template", "-"),), "accuracy_mean", "_mean",
                                     "means over the templates"),
    "identity_blinded": GradingView((("condition", "C1"), ("group", "-")), "reconstruction_accuracy", "",
                                    "the target's SMILES written from the source and the edit (C1)"),
}  # fmt: skip
_COLUMNS = ("strict", "lenient", *WRONG, "no truth")


def grading_frame(data: SiteData, track_name: str, dataset: str, sub_id: str | None = None) -> pd.DataFrame:
    """Return one row per (model, task, representation) with the strict and lenient accuracy and classes.

    Columns: ``submission, task, representation`` and :data:`_COLUMNS` (shares; ``no truth`` a count).
    Empty when the track has no grading rows for ``dataset`` (a run scored before issue 31, or no
    structure task).
    """
    view = VIEWS.get(track_name)
    if view is None:
        return pd.DataFrame()
    if sub_id is not None:  # the model's own rows: a model page never scans every model's
        rows = data.submission_results(sub_id, track_name, dataset)
    else:
        rows = data.track_results(track_name)
        rows = rows.loc[rows["dataset"].astype(str) == dataset]
    if rows.empty:
        return pd.DataFrame()
    excluded = rows.loc[rows["metric"] == "n_truth_excluded"]
    for dim, value in view.where:
        rows = rows.loc[rows[dim].astype(str) == value]
    names = {view.strict: "strict", f"accuracy_lenient{view.suffix}": "lenient",
             **{f"wrong_{c}{view.suffix}": c for c in WRONG}}  # fmt: skip
    picked = rows.loc[rows["metric"].isin(list(names))]
    if picked.empty or not (picked["metric"] == f"accuracy_lenient{view.suffix}").any():
        return pd.DataFrame()
    keys = ["submission", "task", "representation"]
    wide = picked.assign(column=picked["metric"].map(names)).pivot_table(
        index=keys, columns="column", values="value", aggfunc="first"
    )
    wide = wide.loc[wide["lenient"].notna()]
    # The same items are left out of every template (T4 reports the count per template): the max is it.
    counts = excluded.groupby(keys)["value"].max() if not excluded.empty else pd.Series(dtype=float)
    wide["no truth"] = counts.reindex(wide.index)
    return wide.reindex(columns=list(_COLUMNS)).reset_index()


def grading_lines(data: SiteData, track_name: str, dataset: str, sub_id: str | None = None) -> list[str]:
    """Markdown: the table of :func:`grading_frame` with its explanation (``[]`` when there is none)."""
    from leaderboard.tracks import track

    frame = grading_frame(data, track_name, dataset, sub_id)
    if frame.empty:
        return []
    cls = track(track_name)
    label = dict(cls.dimension("task").labels or ())
    rep_label = dict(cls.dimension("representation").labels or ())
    order = {s: i for i, s in enumerate(data.order(set(frame["submission"].astype(str))))}
    frame = frame.assign(_o=frame["submission"].astype(str).map(order)).sort_values(
        ["_o", "task", "representation"]
    )
    header = ([] if sub_id else ["Model"]) + ["Task", "Input", "strict ↑", "lenient ↑"]
    header += [f"wrong: {CLASS_LABELS[c]}" for c in WRONG] + ["no truth (left out)"]
    body = []
    for _, r in frame.iterrows():
        cells = [] if sub_id else [esc(data.name(str(r["submission"])))]
        cells += [esc(label.get(str(r["task"]), str(r["task"]))),
                  esc(rep_label.get(str(r["representation"]), str(r["representation"])))]  # fmt: skip
        cells += [fmt(r[c], "accuracy") for c in ("strict", "lenient", *WRONG)]
        cells.append("" if pd.isna(r["no truth"]) else fmt(r["no truth"], "n_truth_excluded"))
        body.append(cells)
    view = VIEWS[track_name]
    return [
        "#### Structure answers: strict, lenient, and how the wrong ones are wrong" if sub_id is None
        else "#### How its structure answers are wrong",
        "",
        f"Structure answers ({esc(view.question)}): **strict** = the same canonical SMILES, stereo included "
        "where the input carries it (a name without the stereo of the data set's SMILES is graded without "
        "it); **lenient** = the same compound up to stereo, tautomer and protonation (standard InChIKey "
        "skeleton). A wrong answer is one of: stereo only, tautomer / protonation, a constitutional isomer "
        "(same formula), a different formula, or no molecule at all. *No truth*: items whose name shown "
        "OPSIN cannot verify as the compound, left out of every score of the name "
        "([methodology](../methodology.md#grading-structure-answers)).",
        "",
        table(header, body),
        "",
    ]
