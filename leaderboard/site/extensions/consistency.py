"""The consistency track's (T3) site extension: task tables, accuracy vs consistency, answers side by side.

Registered as ``EXTENSIONS["consistency"]``. Per data set, the track page gets one table per task (every
pair of representations: consistency, chance, adjusted, false consistency, raw string agreement and the
accuracy of each side; numeric tasks: the MSE forms) and the paper's "orthogonal" view, accuracy against
adjusted consistency, one point per model and task; where the project's generative references are on
the board, what they show about the KL consistency regulariser
(:mod:`leaderboard.site.extensions.consistency_finding`). A model's page gets the items whose SMILES and IUPAC
answers disagree, both answers side by side (escaped: completions are a submission's text) with the
structures drawn where the answer is one.

References
----------
.. [1] Yan, B. et al. (2025). "Inconsistency of LLMs in molecular representations". Digital Discovery.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evaluators.asking.grading import align, coarsest
from evaluators.asking.tasks import TASKS
from evaluators.tracks.consistency import metrics as cm
from evaluators.tracks.consistency import structural as consistency_structural
from leaderboard.frames import text_values
from leaderboard.markdown import code, esc, table
from leaderboard.site.blocks import Figures
from leaderboard.site.extensions import EXTENSIONS, Extension
from leaderboard.site.extensions.consistency_finding import finding_lines
from leaderboard.site.figures import display_name, legend, scatter_trace, submission_colours
from leaderboard.site.molecule_ids import molecule_cell
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import track

TRACK = "consistency"
ANSWERS = "answers"
#: Items listed per task in a model's explorer, and how many of them get drawings.
SHOWN, DRAWN = 8, 3
_STRUCTURE_TASKS = ("translation", "reaction", "reaction_own_notation", "retrosynthesis",
                    "retrosynthesis_own_notation")


def _label(dimension: str, value: str) -> str:
    return track(TRACK).dimension(dimension).label(value)


def _num(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "—"
    return "—" if not math.isfinite(number) else f"{round(number, 3) + 0.0:.3f}"  # never "-0.000"


def _values(rows: pd.DataFrame) -> dict[tuple[str, str, str, str, str], float]:
    """``(submission, task, pair, representation, metric) → value`` of a track's rows."""
    keys = zip(rows["submission"], rows["task"], rows["pair"], rows["representation"], rows["metric"],
               strict=True)  # fmt: skip
    return {tuple(map(str, k)): float(v) for k, v in zip(keys, rows["value"], strict=True)}


def track_sections(data: SiteData, dataset: str, figures: Figures) -> list[str]:
    """One table per task and the accuracy-vs-consistency figure of one data set."""
    rows = data.track_results(TRACK)
    rows = rows.loc[rows["dataset"] == dataset]
    if rows.empty:
        return []
    values = _values(rows)
    subs = data.order({str(s) for s in rows["submission"].unique()})
    tasks = [t for t in track(TRACK).dimension("task").values if t in set(rows["task"])]
    out = finding_lines(data, dataset, kappa=cm.kappa_resampled)
    out += ["### Consistency by task", ""]
    for task in tasks:
        out += [f"#### {esc(_label('task', task))}", ""]
        numeric = any(m.startswith("mse_") for (_, t, _, _, m) in values if t == task)
        header = ["Model", "Representations"]
        header += (
            ["MSE between", "chance MSE", "adjusted (paper)", "agreement (↑, headline)", "MSE vs truth (a)",
             "MSE vs truth (b)"]
            if numeric
            else ["consistency", "chance", "adjusted (paper)", "κ (↑, headline)", "false consistency",
                  "raw agreement", "accuracy (a)", "accuracy (b)"]
        )  # fmt: skip
        body = []
        for sub in subs:
            for pair in track(TRACK).dimension("pair").values:
                a, b = pair.split("-")
                pair_metrics = (
                    ("mse_consistency", "mse_chance", "mse_adjusted", "numeric_agreement")
                    if numeric
                    else ("consistency", "chance_consistency", "adjusted_consistency", "kappa_consistency",
                          "false_consistency", "raw_agreement")
                )  # fmt: skip
                if values.get((sub, task, pair, "-", pair_metrics[0])) is None:
                    continue
                side = "mse_error" if numeric else "accuracy"
                cells = [esc(data.name(sub)), esc(_label("pair", pair))]
                cells += [_num(values.get((sub, task, pair, "-", m))) for m in pair_metrics]
                cells += [_num(values.get((sub, task, "-", rep, side))) for rep in (a, b)]
                body.append(cells)
        out += [table(header, body), ""]
    out += ["(a) and (b) are the two representations of the pair, in the order named. Adjusted consistency "
            "(the paper's) subtracts the agreement two random answers would have; κ, the ranked criterion, "
            "divides that by what is left above chance (1 = always the same answer, 0 = a constant or "
            "chance); false consistency is the agreement among the items both representations get wrong.",
            ""]  # fmt: skip
    fig = _scatter(values, subs, data)
    out += ["### Accuracy against consistency", ""]
    out += figures.block(
        fig,
        TRACK,
        dataset,
        "accuracy-consistency",
        caption="One point per model and task: mean accuracy of the SMILES and IUPAC questions (x) against "
        "the κ consistency of their answers (y). The paper finds the two orthogonal: being right "
        "more often does not make a model agree with itself.",
    )
    return out


def _scatter(values: dict, subs: list[str], data: SiteData) -> dict[str, Any] | None:
    colours = submission_colours(subs)
    names = {s: data.name(s) for s in subs}
    traces = []
    for sub in subs:
        xs, ys, texts = [], [], []
        for (s, task, pair, _, metric), value in values.items():
            if s != sub or pair != "smiles-iupac" or metric != "kappa_consistency":
                continue
            accs = [values.get((sub, task, "-", rep, "accuracy")) for rep in ("smiles", "iupac")]
            if any(a is None for a in accs):
                continue
            xs.append(round(sum(accs) / 2, 4))
            ys.append(round(value, 4))
            texts.append(_label("task", task))
        if xs:
            traces.append(
                scatter_trace(
                    x=xs,
                    y=ys,
                    text=texts,
                    mode="markers",
                    name=display_name(names, sub),
                    marker={"color": colours[sub], "size": 10},
                    hovertemplate="%{text}<br>accuracy %{x:.3f}<br>adjusted %{y:.3f}",
                )
            )
    if not traces:
        return None
    layout = {
        "xaxis": {"title": {"text": "accuracy (mean of SMILES and IUPAC questions)"}, "range": [-0.02, 1.02]},
        "yaxis": {"title": {"text": "adjusted consistency (SMILES ↔ IUPAC)"}, "range": [-0.52, 1.02]},
        "legend": legend(-0.25),
        "margin": {"t": 20},
        "height": 460,
    }
    return {"data": traces, "layout": layout}


def submission_sections(
    data: SiteData, sub_id: str, dataset: str, figures: Figures, explorer: Explorer
) -> list[str]:
    """List the items whose SMILES and IUPAC answers disagree, side by side, per task."""
    del figures
    mine = data.table_rows(ANSWERS, sub_id, TRACK, dataset)
    if mine.empty:
        return []
    out = ["#### Answers side by side", ""]
    out += ["Items whose answers to the SMILES and the IUPAC question differ (first "
            f"{SHOWN} per task by item id). Answers are shown as the model wrote them (first 300 "
            "characters) and as normalised for scoring; ✓ marks a correct answer.", ""]  # fmt: skip
    for task, rows in mine.groupby("task", sort=False):
        by_rep = {str(r): g.set_index("id") for r, g in rows.groupby("representation")}
        if "smiles" not in by_rep or "iupac" not in by_rep:
            continue
        left, right = by_rep["smiles"], by_rep["iupac"]
        common = left.index.intersection(right.index)
        # Aligned arrays, not a lookup per item: this ran for every model page and data set.
        mine_, theirs = (side.loc[common, "answer"].astype(str).to_numpy() for side in (left, right))
        differ = list(common[(mine_ != theirs) | (mine_ == "")])
        if not differ:
            out += [f"**{esc(_label('task', str(task)))}**: every item answered the same way.", ""]
            continue
        shown = sorted(differ, key=lambda i: (len(str(i)), str(i)))[:SHOWN]
        out += [f"**{esc(_label('task', str(task)))}** — {len(differ)} of {len(common)} items differ.", ""]
        body = []
        for item in shown:
            body.append([
                # The id links to its database entry where the set has one; the name is the next column.
                molecule_cell(dataset, item), code(left.at[item, "input"]), code(right.at[item, "input"]),
                _answer(left.loc[item]), _answer(right.loc[item]),
            ])  # fmt: skip
        out += [table(["Item", "SMILES asked", "name asked", "answer to SMILES", "answer to name"], body), ""]
        if str(task) in _STRUCTURE_TASKS:
            out += _drawings(explorer, [(i, left.loc[i], right.loc[i]) for i in shown[:DRAWN]])
    return out


def _answer(row: pd.Series) -> str:
    mark = " ✓" if str(row["correct"]) == "1" else ""
    raw = str(row["completion"])
    normal = str(row["answer"])
    if not raw.strip():
        return "*(no answer)*"
    return f"{code(raw)} → {code(normal) if normal else '*unusable*'}{mark}"


def _drawings(explorer: Explorer, items: list[tuple[str, pd.Series, pd.Series]]) -> list[str]:
    """Per item: the molecule asked (the SMILES question's input), then each answer that parses, labelled.

    Without the molecule asked, identical drawings of a model's answers told nothing about whether they
    were right; an answer that is no molecule gets a card saying so instead of a drawing.
    """
    cards = []
    for item, left, right in items:
        sides = [("the molecule asked", str(left["input"]), "")]
        for side, row in (("answer to the SMILES", left), ("answer to the name", right)):
            sides.append((side, str(row["answer"]), {"1": " ✓", "0": " ✗"}.get(str(row["correct"]), "")))
        for side, smiles, mark in sides:
            path = explorer.drawings.path(smiles) if smiles and smiles != "nan" else None
            label = f"**{esc(item)}** · {side}{mark}"
            if path is None:
                cards.append(f"-   {label}\n\n    *(not a molecule: nothing to draw)*")
                continue
            image = f"![{esc(item)} {side}](../{path}){{ loading=lazy }}"
            cards.append(f"-   {image}\n\n    {label}")
    if not cards:
        return []
    grid = '<div class="grid cards chemrobust-molecules" markdown>'
    return [grid, "", "\n\n".join(cards), "", "</div>", ""]


def item_values(data: SiteData) -> pd.DataFrame | None:
    """Per-item terms of the headline criteria, from the ``answers`` table, for the rank bootstrap.

    κ consistency is ``mean_i ([a_i = b_i] − P_v) / (1 − P_v)`` (:func:`~evaluators.tracks.consistency.
    metrics.kappa_terms`): item ``i`` contributes its term with the chance of the whole sample (a resample
    keeps the chance fixed, so the bootstrap spreads the agreement, the part that varies by item). Numeric
    answers: ``1 − d_i / (2·Var)`` (:func:`~evaluators.tracks.consistency.metrics.numeric_agreement_terms`;
    an invalid side, exported as an empty answer, charged the squared plausible width). The means over all
    items are exactly the reported values.
    """
    from evaluators.tracks.consistency import plausible_width

    answers = data.tables.get(ANSWERS)
    if answers is None or answers.empty:
        return None
    mine = answers.loc[(answers["track"] == TRACK).to_numpy()]
    if mine.empty:
        return None
    pairs = track(TRACK).dimension("pair").values
    # Each column's few distinct strings converted once, then taken by row: the table has a row per model,
    # item and question, and per-row conversions made this the slowest step of a large board's build.
    answer = text_values(mine["answer"], _answer_or_none)
    level = (text_values(mine["level"], lambda v: "exact" if v in ("", "nan") else v)
             if "level" in mine.columns  # a table written before issue 31's grading: every item exact
             else np.full(len(mine), "exact", dtype=object))  # fmt: skip
    item = text_values(mine["id"], str)
    rep = text_values(mine["representation"], str)
    structural = {t.name for t in TASKS if consistency_structural(t)}
    keys = [mine[c] for c in ("submission", "dataset", "task")]
    subs, crits, datasets, items, values = [], [], [], [], []
    for (sub, dataset, task), where in sorted(
        mine.groupby(keys, sort=False, observed=True).indices.items(), key=lambda kv: tuple(map(str, kv[0]))
    ):
        # Items without a truth on a side are left out of its pairs, as the track scores them.
        where = where[level[where] != "excluded"]
        by_rep = {r: where[rep[where] == r] for r in dict.fromkeys(rep[where])}
        numeric = str(task) == "hydration_free_energy"
        for pair in pairs:
            a_rep, b_rep = pair.split("-")
            if a_rep not in by_rep or b_rep not in by_rep:
                continue
            left, right = by_rep[a_rep], by_rep[b_rep]
            ids = pd.Index(item[left]).intersection(pd.Index(item[right]), sort=False)
            ia = left[pd.Index(item[left]).get_indexer(ids)]
            ib = right[pd.Index(item[right]).get_indexer(ids)]
            a, b = answer[ia].tolist(), answer[ib].tolist()
            if str(task) in structural:  # compared at the layers both inputs carry, as the track does
                sides = zip(level[ia].tolist(), level[ib].tolist(), strict=True)
                levels = [coarsest([x, y]) for x, y in sides]
                b = align(a, b, levels)
            if numeric:
                terms = cm.numeric_agreement_terms(_numbers(a), _numbers(b), plausible_width(str(task)))
                metric = "numeric_agreement"
            else:
                terms = cm.kappa_terms(a, b)
                metric = "kappa_consistency"
            n = len(terms)
            subs += [str(sub)] * n
            crits += [f"{TRACK}/{dataset}/{task}/{pair}/{metric}"] * n
            datasets += [str(dataset)] * n
            items += list(ids)
            values += list(terms)
    if not values:
        return None
    return pd.DataFrame({"submission": subs, "criterion": crits, "dataset": datasets, "item": items,
                         "value": np.asarray(values, dtype=float)})  # fmt: skip


def _answer_or_none(value: str) -> str | None:
    return None if value in ("", "nan") else value


def _numbers(values: list) -> list[float | None]:
    def number(value):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None

    return [number(v) for v in values]


def methodology() -> list[str]:
    """T3's questions, representations and the formulas of its metrics."""
    return [
        "The consistency track [1] asks a generative model the same question about a molecule written "
        "in several ways — canonical SMILES, the IUPAC name, a randomized SMILES (seeded per item), and "
        "for the formula, Lipinski, hydration-free-energy and retrosynthesis questions also SELFIES and "
        "standard InChI — "
        "with otherwise identical wording, and compares each with the canonical SMILES's answers. A "
        "molecule whose SELFIES or InChI does not read back as itself (stereo and tautomer included) is not "
        "asked that way and is left out of that pair (counted as *n not written*). The model only writes "
        "text: the container returns raw completions, and the host extracts each answer by fixed rules "
        "(the last `Answer:` "
        "line the answer protocol asks for, else the older rules; no judge model), normalises it (SMILES → "
        "RDKit canonical SMILES; names → OPSIN → canonical SMILES; formulas → element counts in Hill "
        "order; yes/no; numbers) and scores it. An "
        "answer that does not normalise is *unusable*; two unusable answers never agree.",
        "",
        "**Questions**, word for word (the answer protocol's last line follows each; the molecule is "
        "introduced as the writing's phrase, e.g. “the molecule with the SMILES …”, or for reactions as "
        "“the SMILES strings of the reactants and reagents, …,” / “the IUPAC names of …”). The forward "
        "reaction is asked twice: once for the product's SMILES whatever the input (the paper's Table 1), "
        "once for the product written as the reactants are (a name from names, a SMILES from SMILES: the "
        "paper's setting for its eq. 4); both answers are read back to a structure before comparison. "
        "Retrosynthesis asks the reverse, from the product: its consistency needs no ground truth (the "
        "answers from the product's SMILES and from its name are compared with each other, as sets of "
        "molecules); its accuracy is exact match with what the record lists as going in — reactants and "
        "reagents together, since the records do not say which is which — reported, not ranked. It too is "
        "asked a second time in the product's own notation: SMILES from a SMILES, IUPAC names (joined by "
        "'.', or listed) from a name, each name read back by OPSIN before the sets are compared; the "
        "record's reactant names are not always the recorded structures (a Grignard reagent's name, "
        "“magnesium(1+)”, for C[Mg+]), which caps the name side's accuracy, never its consistency.",
        "",
        table(["Task", "Question", "Answer asked, per writing"],
              [[esc(t.label), code(t.template), esc(", ".join(f"{r}: {k}" for r, k in t.answer.items()))]
               for t in TASKS]),  # fmt: skip
        "",
        table(
            ["Metric", "Formula", "Meaning"],
            [
                ["consistency `C`", "`(1/N) · Σ_i [a_i = b_i ≠ none]`", "Share of items answered alike."],
                ["chance `P_e` (paper)", "`Σ_y p(y)²` over all 2N answers", "Two random answers agree."],
                ["adjusted consistency (paper)", "`C − P_e`", "Agreement beyond chance (eq. 6; reported)."],
                ["false consistency", "consistency over items both sides get wrong",
                 "Agreeing on a wrong answer."],
                ["raw agreement", "`[raw_a = raw_b]`", "The paper's string match, before normalising."],
                ["accuracy", "`(1/N) · Σ_i [a_i = truth_i]`", "Per representation; unusable = wrong."],
                ["numeric (ΔG_hyd, paper)", "MSE(a, b); chance 2·Var(ŷ); adjusted = chance − MSE",
                 "Paper eq. 10–12 (reported; unbounded, not ranked)."],
                ["MSE vs truth (invalid charged)", "`(1/N) Σ_i e_i²`, invalid: worst plausible error",
                 "Invalid counts as wrong, bounded."],
            ],
        ),  # fmt: skip
        "",
        "A numeric answer outside its plausible range (ΔG_hyd: −55 … 33 kcal/mol) is invalid: it is no "
        "number, agrees with nothing and is wrong. **Headline criteria** (ranked, per task and pair of "
        "representations):",
        "",
        table(
            ["Criterion", "Formula", "Direction", "Constant", "Abstaining / unparseable", "Random valid"],
            [
                ["κ consistency (categorical)",
                 "`clip((C − P_v) / (1 − P_v), −1, 1)`, `P_v = Σ_y q(y)²` over the valid answers only; "
                 "`P_v = 1`: `C − 1`",
                 "higher is better (1 = same answer everywhere, oracle)", "0 (below 0 if it fails items)",
                 "−1", "≈ 0"],
                ["numeric agreement (ΔG_hyd)",
                 "`clip(1 − (1/N) Σ_i d_i / (2·Var(ŷ)), −1, 1)`, `d_i = (a_i − b_i)²`, invalid side: "
                 "`d_i = w²` (w = plausible width, 88 kcal/mol); `Var` over the valid answers",
                 "higher is better (1 = identical answers, oracle)", "0", "−1", "≈ 0"],
            ],
        ),  # fmt: skip
        "",
        "Why not the paper's forms: `C − P_e` is not maximal for a perfect answerer when the truth is "
        "imbalanced (random answers lower the chance term more than the agreement), and `2·Var − MSE` has "
        "no upper bound (an absurd answer made it 4·10²⁸). Both stay as reported columns. Consistency "
        "alone does not ask for correctness: accuracy is reported beside it.",
        "",
        "References: [1] Yan et al., *Inconsistency of LLMs in molecular representations*, Digital "
        "Discovery 2025.",
        "",
    ]


EXTENSIONS.register(TRACK)(
    Extension(
        track_sections=track_sections,
        submission_sections=submission_sections,
        item_values=item_values,
        methodology=methodology,
    )
)
