"""The identity-blinded track's (T5) site extension: the diagnostic table, the bootstrap's items, methodology.

Registered as ``EXTENSIONS["identity_blinded"]``. Per data set the track page gets one table per task:
each model's score per condition (C0–C3), the collapse ratio under C1 and C2 with its bootstrap interval
and Benjamini–Hochberg q, the C2→C3 response (toward rate, or the normalised shift for numbers) and the
structure reconstruction. Each model's page gets a pair explorer (:func:`submission_sections`): source
and target drawn with RDKit next to the model's answers under C0–C3. :func:`item_values` gives the rank
bootstrap the per-pair terms of the headline criteria from the ``blinded_answers`` table;
:func:`methodology` states the conditions, the metrics and the criteria with their directions.

References
----------
.. [1] Su et al., Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction
   (``../shared/papers/identity-blinded-reasoning-diagnostic.txt``).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from evaluators.datasets.edit_pairs import NUMERIC_THRESHOLDS
from evaluators.tracks.identity_blinded import (
    CONDITIONS,
    LAYOUT,
    MIN_RANKED_PAIRS,
    PAIRS_PER_GROUP,
    RECONSTRUCTION,
    TRACK,
    WORDINGS,
    TaskWording,
)
from leaderboard.markdown import code, esc, table
from leaderboard.site.blocks import Figures
from leaderboard.site.extensions import EXTENSIONS, Extension
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import track

ANSWERS = "blinded_answers"
PAIRS = "blinded_pairs"
#: Pairs listed and drawn per task in a model's pair explorer.
PAIRS_SHOWN = 3


def _label(dimension: str, value: str) -> str:
    return track(TRACK).dimension(dimension).label(value)


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{round(float(value), digits) + 0.0:.{digits}f}"  # + 0.0: never "-0.000"


def _q(value: Any) -> str:
    return "—" if value is None else f"{float(value):.2g}"


def track_sections(data: SiteData, dataset: str, figures: Figures) -> list[str]:
    """One table per task: scores per condition, collapse ratios, the response to a false label."""
    del figures
    rows = data.track_results(TRACK)
    rows = rows.loc[(rows["dataset"] == dataset) & (rows["group"] == "-")]
    if rows.empty:
        return []
    values = {(str(s), str(t), str(r), str(c), str(m)): float(v) for s, t, r, c, m, v in zip(
        rows["submission"], rows["task"], rows["representation"], rows["condition"], rows["metric"],
        rows["value"], strict=True)}  # fmt: skip
    subs = data.order({str(s) for s in rows["submission"].unique()})
    present = set(zip(rows["task"].astype(str), rows["representation"].astype(str), strict=True))
    out = ["### Identity-blinded diagnostic", "",
           "Score of the target's label per condition (C0 target shown, C1 source + edit, C2 + true source "
           "label, C3 + false source label); CR = score on label-consistent pairs / score on "
           "label-inconsistent pairs (MAE: inverted), 1 = no reliance on the source, with its 95 % "
           "bootstrap interval and BH q; toward = share of C2 answers that flip to a false label under C3 "
           "(↓); reconstruction = the target's SMILES written exactly under C1.", ""]  # fmt: skip
    for w in WORDINGS:
        reps = [r for r in ("smiles", "iupac") if (w.task, r) in present]
        if not reps:
            continue
        p = "accuracy" if w.kind == "label" else "mae"
        response = ("toward_rate", "toward (↓)") if w.kind == "label" else ("label_shift_mean", "shift (→0)")
        header = ["Model", "Repr.", *(f"{c} {'acc' if p == 'accuracy' else 'MAE'}" for c in CONDITIONS),
                  "CR C1 [95 %] q", "CR C2 [95 %] q", response[1], "reconstruction"]  # fmt: skip
        body = []
        for sub in subs:
            for rep in reps:
                if not any(k[:3] == (sub, w.task, rep) for k in values):
                    continue

                def get(condition: str, metric: str, key=(sub, w.task, rep)) -> float | None:
                    return values.get((*key, condition, metric))

                crs = [f"{_num(get(c, 'collapse_ratio'), 2)} [{_num(get(c, 'collapse_ratio_low'), 2)}, "
                       f"{_num(get(c, 'collapse_ratio_high'), 2)}] {_q(get(c, 'group_q'))}"
                       for c in ("C1", "C2")]  # fmt: skip
                body.append([esc(data.name(sub)), esc(_label("representation", rep)),
                             *(_num(get(c, p)) for c in CONDITIONS), *crs, _num(get("C3", response[0])),
                             _num(get("C1", "reconstruction_accuracy"))])  # fmt: skip
        align = ["l", "l", *["r"] * (len(header) - 2)]
        out += [f"#### {esc(w.label)}", "", table(header, body, align=align), ""]
    out += ["Wordings and definitions: [methodology](../methodology.md#identity_blinded).", ""]
    return out


def submission_sections(
    data: SiteData, sub_id: str, dataset: str, figures: Figures, explorer: Explorer
) -> list[str]:
    """Write the pair explorer: per task, a few pairs drawn (source, target) with the answers under C0–C3.

    Pairs are picked in this order: those whose answer followed the false source label under C3 (binary:
    flipped to it from the C2 answer; numeric: moved at least half-way toward it), then those answered
    wrongly under C1 (numeric: error over the task's consistency threshold), then the rest; ties by pair
    id. SMILES prompts only (the IUPAC prompts ask about the same pairs).
    """
    del figures
    answers, pairs = data.tables.get(ANSWERS), data.tables.get(PAIRS)
    if answers is None or answers.empty or pairs is None or pairs.empty:
        return []

    answers = data.table_rows(ANSWERS, sub_id, TRACK, dataset)
    pairs = data.table_rows(PAIRS, sub_id, TRACK, dataset).drop_duplicates("id").set_index("id")
    answers = answers.loc[(answers["question"].astype(str) == "property")
                          & (answers["representation"].astype(str) == "smiles")]  # fmt: skip
    if answers.empty or pairs.empty:
        return []
    out = ["#### Pair explorer", "",
           "Per task, pairs whose answer followed the false source label (C3) first, then pairs answered "
           "wrongly from source + edit (C1); the source and the edited target drawn with RDKit. Answers as "
           "normalised for scoring (SMILES prompts); ✓ = correct (numbers: within the task's threshold "
           "of the target's value); C2/C3 show the stated source label → the answer.", ""]  # fmt: skip
    for w in WORDINGS:
        rows = answers.loc[answers["task"].astype(str) == w.task]
        if rows.empty:
            continue
        by = {(str(i), str(c)): r for i, c, r in zip(rows["id"], rows["condition"],
                                                     rows.to_dict("records"), strict=True)}  # fmt: skip
        ids = sorted({str(i) for i in rows["id"]} & set(pairs.index.astype(str)), key=_natural)
        rank = {i: _pick_rank(w.kind, w.task, by.get((i, "C1")), by.get((i, "C2")), by.get((i, "C3")))
                for i in ids}  # fmt: skip
        n_toward = sum(r == 0 for r in rank.values())
        shown = sorted(ids, key=lambda i: rank[i])[:PAIRS_SHOWN]  # sorted() is stable: id order within
        out += [f"**{esc(w.label)}** — {n_toward} of {len(ids)} pairs followed the false label.", ""]
        body, cards = [], []
        for i in shown:
            pair = pairs.loc[i]
            truth = _value(w.kind, pair["target_label"])
            body.append([code(i), esc(_group(pair["group"])), esc(pair["edit"]), code(truth),
                         *(_answer(w, by.get((i, c))) for c in CONDITIONS)])  # fmt: skip
            for role in ("source", "target"):
                smiles = str(pair[f"{role}_smiles"])
                path = explorer.drawings.path(smiles)
                image = f"![{esc(role)} of {esc(i)}](../{path}){{ loading=lazy }}\n\n    " if path else ""
                label = _value(w.kind, pair["source_label" if role == "source" else "target_label"])
                cards.append(f"-   {image}**{esc(i)}** · {role} · {esc(label)}\n\n    {code(smiles)}")
        out += [table(["Pair", "Group", "Edit", "Target label", *CONDITIONS], body), ""]
        out += ['<div class="grid cards chemrobust-molecules" markdown>', "", "\n\n".join(cards), "",
                "</div>", ""]  # fmt: skip
    return out


def _natural(pair_id: str) -> tuple[str, int, str]:
    """Sort key of ``<task>:<n>`` ids by number."""
    head, _, tail = pair_id.rpartition(":")
    return (head, int(tail), "") if tail.isdigit() else (pair_id, -1, pair_id)


def _group(group: Any) -> str:
    return {"consistent": "same label", "inconsistent": "label differs"}.get(str(group), str(group))


def _value(kind: str, value: Any) -> str:
    """Write a label as the prompts do: yes/no, or a number with two decimals (``stated`` already is)."""
    if str(value) in ("yes", "no"):
        return str(value)
    number = float(value)
    if kind == "label":
        return "yes" if number >= 0.5 else "no"
    return f"{number:.2f}"


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _correct(task: str, kind: str, row: dict | None) -> bool:
    score = None if row is None else _number(row.get("score"))
    if score is None:
        return False
    return score == 1.0 if kind == "label" else score <= NUMERIC_THRESHOLDS[task]


def _pick_rank(kind: str, task: str, c1: dict | None, c2: dict | None, c3: dict | None) -> int:
    """0: followed the false label under C3; 1: wrong under C1; 2: otherwise."""
    if c2 is not None and c3 is not None:
        a2, a3, stated = str(c2.get("answer") or ""), str(c3.get("answer") or ""), str(c3.get("stated") or "")
        if kind == "label" and a2 and a3 and a3 != a2 and a3 == stated:
            return 0
        n2, n3, false, true = _number(a2), _number(a3), _number(stated), _number(c2.get("stated"))
        if kind == "number" and None not in (n2, n3, false, true) and false != true:
            if (n3 - n2) / (false - true) >= 0.5:
                return 0
    return 1 if not _correct(task, kind, c1) else 2


def _answer(w: TaskWording, row: dict | None) -> str:
    """One cell: the stated source label (C2, C3), the normalised answer, ✓ when correct."""
    if row is None:
        return "—"
    answer = str(row.get("answer") or "")
    shown = code(answer) if answer else "*invalid*"
    stated = str(row.get("stated") or "")
    if stated:
        shown = f"{code(_value(w.kind, stated))} → {shown}"
    return shown + (" ✓" if _correct(w.task, w.kind, row) else "")


def item_values(data: SiteData) -> pd.DataFrame | None:
    """Per-pair terms of the headline criteria, for the rank bootstrap (oriented higher-is-better).

    Binary tasks, balanced accuracy (C1 and C3 on all pairs, C2 on label-inconsistent pairs): 1/0 per pair
    (invalid = 0) with ``part`` = the target's class and ``combine`` = ``mean``, so the bootstrap's value is
    the mean of the per-class recalls. Numeric tasks, charged MAE (C1 and C2 on label-inconsistent pairs,
    C3 on all pairs): −|error| per pair, −:func:`~evaluators.answers.ranges.invalid_error` for an invalid
    answer. The targets' labels come from the ``blinded_pairs`` table.
    """
    from evaluators.answers.ranges import invalid_error

    answers, pairs = data.tables.get(ANSWERS), data.tables.get(PAIRS)
    if answers is None or answers.empty or pairs is None or pairs.empty:
        return None
    keys = ["submission", "dataset", "id"]
    mine = answers.loc[(answers["track"].astype(str) == TRACK)
                       & (answers["question"].astype(str) == "property")]  # fmt: skip
    if mine.empty:
        return None
    mine = mine.assign(**{c: mine[c].astype(str) for c in ("submission", "dataset", "task", "representation",
                                                          "condition", "group", "id")})  # fmt: skip
    truths = pairs.loc[pairs["track"].astype(str) == TRACK, [*keys, "target_label"]]
    truths = truths.assign(**{c: truths[c].astype(str) for c in keys}).drop_duplicates(keys)
    mine = mine.merge(truths, on=keys, how="inner")
    score = pd.to_numeric(mine["score"], errors="coerce")
    truth = pd.to_numeric(mine["target_label"], errors="coerce").astype(float)
    numeric = mine["task"].isin(list(NUMERIC_THRESHOLDS)).to_numpy()
    charged = [invalid_error(t, y) if n else 0.0
               for t, y, n in zip(mine["task"], truth, numeric, strict=True)]  # fmt: skip
    value = score.where(~numeric, -score.fillna(pd.Series(charged, index=mine.index))).fillna(0.0)
    base = TRACK + "/" + mine["dataset"] + "/" + mine["task"] + "/" + mine["representation"] + "/"
    frames = []
    for crit in track(TRACK).headline:
        where = dict(crit.where)
        pick = (mine["condition"] == where["condition"]) & (mine["group"] == where["group"]
                if where["group"] != "-" else True)  # fmt: skip
        pick &= pd.Series(numeric if crit.metric == "mae_charged" else ~numeric, index=mine.index)
        suffix = "/".join(where[d] for d in crit.per[2:])
        frame = pd.DataFrame({
            "submission": mine.loc[pick, "submission"], "dataset": mine.loc[pick, "dataset"],
            "criterion": base[pick] + (suffix + "/" if suffix else "") + crit.metric,
            "item": mine.loc[pick, "id"], "value": value[pick].astype(float),
        })  # fmt: skip
        if crit.metric == "balanced_accuracy":
            frame = frame.assign(part=truth[pick].map(lambda y: "yes" if y >= 0.5 else "no"), combine="mean")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _cell_count(task: str, representation: str) -> str:
    """``n`` pairs per group (``n (k yes)`` for binary tasks), ``—`` when not asked; † when not ranked."""
    n, yes = PAIRS_PER_GROUP.get((task, representation), (0, None))
    if not n:
        return "—"
    return f"{n}" + (f" ({yes} yes)" if yes is not None else "") + (" †" if n < MIN_RANKED_PAIRS else "")


def methodology() -> list[str]:
    """T5's design, metrics, criteria with their directions, and every wording."""
    out = [
        "The identity-blinded diagnostic [1] asks for a property of a *target* molecule that the model "
        "sees only as a *source* molecule plus a structural edit in words (single-cut matched molecular "
        "pairs, each description verified by RDKit to have exactly one outcome). Pairs are sampled per task "
        "in equal label-consistent (source and target share the label; numbers: |Δ| within the task's "
        "threshold) and label-inconsistent groups with the same target classes (numbers: quartiles) in "
        "both; the pairs asked as IUPAC names are sampled first as balanced groups of their own, so the "
        "IUPAC subset is balanced too. A model that reasons about the edited structure scores alike on "
        "both groups; one that leans on the source's identity does better on the consistent group.",
        "",
        "Tasks: FreeSolv hydration free energy and aqueous log solubility (numeric, measured), four binary "
        "properties RDKit computes exactly (logP > 3, TPSA > 75, rule of five, > 2 H-bond donors), and "
        "BACE-1 inhibition (MoleculeNet BACE, measured `Class`; the first of the paper's six tasks here: "
        "pairs are searched among BACE's own molecules, so both labels of a pair are measured ones; BACE "
        "has no IUPAC names, so it is asked in SMILES only). Pairs per group (label-consistent = "
        "label-inconsistent; binary: of which target label yes):",
        "",
        table(["Task", "SMILES", "IUPAC"],
              [[esc(w.label), *(_cell_count(w.task, rep) for rep in ("smiles", "iupac"))] for w in WORDINGS]),
        "",
        table(["Condition", "The prompt shows"], [
            ["C0", "the target molecule"], ["C1", "the source molecule and the edit"],
            ["C2", "C1 + the source's true label"], ["C3", "C1 + a false source label"],
        ]),
        "",
        "Same wording under every condition except the lines a condition adds; asked in SMILES and, for "
        "pairs with IUPAC names of both molecules whose edit names no atom position in the source SMILES, "
        "as IUPAC names. Greedy decoding; answers normalised by fixed rules, no judge model.",
        "",
        table(["Metric", "Definition"], [
            ["accuracy / MAE", "the paper's: per condition and group; invalid = wrong (accuracy), left out "
             "(MAE)"],
            ["balanced accuracy / charged MAE", "the headline scores, per condition and group (below)"],
            ["collapse ratio CR", "S_consistent / S_inconsistent (MAE: MAE_i / MAE_c); **closer to 1 is "
             "better**; undefined (not shown) when the denominator is 0"],
            ["CR interval", "95 % stratified percentile bootstrap (10 000 replicates, fixed seed)"],
            ["p, q, effect", "Fisher's exact test (accuracy) or Mann–Whitney U (errors), two-sided; "
             "Benjamini–Hochberg q over the comparisons of one condition in a run; Cohen's h / "
             "rank-biserial r"],
            ["group gap", "|S_consistent − S_inconsistent| (↓): 0 exactly when CR = 1, and defined when a "
             "group scores 0 (the source-label copier's inconsistent pairs under C2), where CR is not; "
             "reported, not ranked"],
            ["|ln CR|", "distance of CR from 1 on a log scale (↓); reported next to CR"],
            ["toward / away / unchanged", "binary C2→C3 response over pairs valid under both; toward = the "
             "answer flipped to the false label (↓), Clopper–Pearson interval; reported, not ranked"],
            ["normalised shift", "numeric C2→C3: (ŷ3 − ŷ2) / (y_false − y_source); 0 = unmoved (best), 1 = "
             "moved by the whole label change; same-direction rate (↓)"],
            ["reconstruction", "C1: the target's SMILES written exactly (canonical, stereo included) ↑"],
        ]),  # fmt: skip
        "",
        "Headline criteria (per task and representation; issue 28: none can be won by an answerer that does "
        "not read the molecule — constant, abstaining, unparseable, absurd, random or source-label copier, "
        "checked by `tests/validity`). Balanced accuracy BA = (1/|K|) Σ_c (correct answers of class c) / "
        "n_c over the true classes K present, invalid = wrong (↑). Charged MAE = Σ_k e*_k / n over every "
        "item asked, e*_k = |ŷ_k − y_k|, or, for an invalid answer (missing, unparseable, or outside the "
        "plausible range: hydration free energy [−55, 33] kcal/mol, log solubility [−25, 15]), the worst "
        "plausible answer's error max(y − low, high − y) (↓).",
        "",
        table(["Criterion", "Formula, direction", "Constant", "Abstaining / invalid", "Random valid",
               "Source-label copier"], [
            ["C1 binary", "BA on all pairs ↑", "0.5", "0", "0.5 (expected)",
             "≈ 0.5: right on consistent, wrong on inconsistent pairs"],
            ["C1 numeric", "charged MAE on label-inconsistent pairs ↓", "|y| of 0 (≈ 4.1 / 2.9)",
             "the charge (≈ 50 / 22)", "≈ E|U − y| over the range",
             "mean |y_source − y_target| (3.5 / 1.4 on edit-pairs)"],
            ["C2 binary", "BA on label-inconsistent pairs ↑", "0.5", "0", "0.5 (expected)",
             "0: the true source label is always wrong there"],
            ["C2 numeric", "charged MAE on label-inconsistent pairs ↓", "as C1", "as C1", "as C1", "as C1"],
            ["C3 binary", "BA on all pairs, false source label stated ↑", "0.5", "0", "0.5 (expected)",
             "≈ 0.5: copying the false label is right only where the labels differ"],
            ["C3 numeric", "charged MAE on all pairs, false source label stated ↓", "≈ 4.1 / 2.8",
             "the charge", "≈ E|U − y|", "mean |y_false − y_target| (5.5 / 2.8)"],
        ]),  # fmt: skip
        "",
        "Numeric C1 is taken on the label-inconsistent pairs because on all pairs copying the source's value "
        "is as good as an answerer right 70 % of the time (mean |y_source − y_target| 1.96 kcal/mol and 0.81 "
        "log units against 2.06 and 0.93). The paper's numbers — plain accuracy, valid-only MAE, the "
        "collapse ratio with its interval and tests, the group gap and the toward/away rates — are shown "
        "in the tables but not ranked: a constant or an always-invalid answerer has group gap 0 and toward "
        "rate 0, the best possible values. A cell (task × representation) is ranked only when both of its "
        f"groups hold at least {MIN_RANKED_PAIRS} pairs; smaller cells are shown but not ranked (flat): "
        + "; ".join(f"{code(name)} ({esc(why)})" for crit in track(TRACK).headline for name, why in crit.flat)
        + f". († in the table above: fewer than {MIN_RANKED_PAIRS} pairs per group, not ranked.)",
        "",
        "Prompt lines: " + " / ".join(code(v) for v in LAYOUT.values()) + "; reconstruction: "
        + code(RECONSTRUCTION["question"]) + " " + code(RECONSTRUCTION["instruction"]),
        "",
        table(["Task", "Question", "Answer format"],
              [[esc(w.label), esc(w.question), code(w.instruction)] for w in WORDINGS]),
        "",
        "References: [1] Su et al., Beyond Benchmark Accuracy (identity-blinded diagnostic).",
        "",
    ]  # fmt: skip
    return out


EXTENSIONS.register(TRACK)(
    Extension(
        track_sections=track_sections,
        submission_sections=submission_sections,
        item_values=item_values,
        methodology=methodology,
    )
)
