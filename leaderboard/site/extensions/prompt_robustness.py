"""The prompt-robustness track's (T4) site extension: spread tables, per-template scores, rank flips.

Registered as ``EXTENSIONS["prompt_robustness"]``. Per data set, the track page gets

- one table per task: each model's primary score per representation (exact-match accuracy; balanced
  accuracy for yes/no; MAE with invalid answers charged for numbers) as mean ± SD over the templates, the
  worst template (these two are ranked), the best, the spread best − worst (shown, not ranked) and the
  validity;
- a strip plot per data set: every template's score per model, one panel per task and representation, so
  a wide spread is seen at a glance;
- the rank flips: per task and representation, each model's rank under each template, the Kendall τ-b
  between the templates' rankings and how many template pairs reverse at least one pair of models
  (:mod:`leaderboard.ranking.stability`);
- the templates themselves, word for word.

References
----------
.. [1] ChemDIRT: chemistry tasks with varied instructions and representations
   (``../shared/papers/chemdirt-instruction-representation-benchmark.txt``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evaluators.answers.ranges import PLAUSIBLE
from evaluators.tracks.prompt_robustness import ITEMS_PER_DATASET, SETS, TRACK
from evaluators.tracks.prompt_robustness.groups import GROUPS
from evaluators.tracks.prompt_robustness.scores import PRIMARY
from leaderboard.frames import text_codes
from leaderboard.markdown import code, esc, table
from leaderboard.ranking.stability import ranking_stability
from leaderboard.site.blocks import Figures
from leaderboard.site.extensions import EXTENSIONS, Extension
from leaderboard.site.figures import display_name, legend, submission_colours
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import track

ANSWERS = "template_answers"
_SETS = {s.task: s for s in SETS}
#: ChemDIRT's reasoning category of each task (the paper's Table I), for the methodology page's catalogue.
CATEGORIES = {
    "formula": "property calculation", "molecular_weight": "property calculation",
    "lipinski": "property calculation", "ring_count": "recognition", "aromatic_ring_count": "recognition",
    "functional_group": "recognition",
    "hydration_free_energy": "property prediction", "aqueous_solubility": "property prediction",
    "iupac_to_smiles": "translation", "smiles_to_iupac": "translation", "clinical_toxicity": "classification",
    "bbb_penetration": "classification", "equivalence": "relational", "similarity": "relational",
    "name_equivalence": "relational", "image_to_smiles": "translation (image input)",
    "image_to_iupac": "translation (image input)", "forward_reaction": "reaction prediction",
    "retrosynthesis": "retrosynthesis",
}  # fmt: skip


def _label(dimension: str, value: str) -> str:
    return track(TRACK).dimension(dimension).label(value)


def _primary(task: str) -> str:
    """Return the task's primary per-template score (``scores.PRIMARY`` of its answer kind)."""
    s = _SETS.get(task)
    kinds = set(s.answer.values()) if s is not None else set()
    return PRIMARY[kinds.pop()] if len(kinds) == 1 else "accuracy"


def _score_name(primary: str) -> str:
    return {"mae_charged": "MAE", "balanced_accuracy": "balanced accuracy"}.get(primary, "accuracy")


#: Model names under the strip plot are cut to this many characters (the hover and legend show them whole).
_TICK_CHARS = 24


def _num(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return f"{round(float(value), digits) + 0.0:.{digits}f}"  # + 0.0: never "-0.000"


def _frame(data: SiteData, dataset: str) -> pd.DataFrame:
    rows = data.track_results(TRACK)
    return rows.loc[rows["dataset"] == dataset]


def _per_template(rows: pd.DataFrame, combos: list[tuple[str, str]]) -> dict[tuple[str, str], pd.DataFrame]:
    """``model, template, score`` rows (the primary score) of each (task, representation) in ``combos``."""
    sel = rows.loc[(rows["template"] != "-").to_numpy()]
    groups = sel.groupby(["task", "representation"], sort=False, observed=True).indices
    out = {}
    for task, rep in combos:
        mine = sel.iloc[groups.get((task, rep), [])]
        mine = mine.loc[(mine["metric"] == _primary(task)).to_numpy()]
        out[(task, rep)] = pd.DataFrame({"model": mine["submission"].astype(str),
                                         "template": mine["template"].astype(str),
                                         "score": mine["value"].astype(float)})  # fmt: skip
    return out


def _combos(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(task, representation) pairs present, in declaration order."""
    present = set(zip(rows["task"].astype(str), rows["representation"].astype(str), strict=True))
    return [(s.task, r) for s in SETS for r in s.representations if (s.task, r) in present]


def track_sections(data: SiteData, dataset: str, figures: Figures) -> list[str]:
    """Spread tables, the per-template strip plot, rank flips and the templates of one data set."""
    rows = _frame(data, dataset)
    if rows.empty:
        return []
    summary = rows.loc[rows["template"] == "-"]
    values = {(str(s), str(t), str(r), str(m)): float(v) for s, t, r, m, v in zip(
        summary["submission"], summary["task"], summary["representation"], summary["metric"],
        summary["value"], strict=True)}  # fmt: skip
    subs = data.order({str(s) for s in rows["submission"].unique()})
    combos = _combos(rows)
    out = ["### Scores over templates", "",
           f"Each question was asked in {len(SETS[0].templates)} wordings about the same "
           f"{ITEMS_PER_DATASET} molecules (a fixed seeded sample). Accuracy: exact match, an invalid answer "
           "counts as wrong; yes/no questions: balanced accuracy (the mean of the recall on “yes” and on "
           "“no”, so a constant answer scores 0.5); MAE: over every item, an invalid or implausible answer "
           "charged the worst plausible answer's error. Ranked: the mean over templates and the *worst* "
           "template. *Spread* (best − worst template) says how much the score depends on the wording; it "
           "is shown beside the mean but not ranked, since a model that gives one answer to everything has "
           "no spread at all.", ""]  # fmt: skip
    for task in dict.fromkeys(t for t, _ in combos):
        p = _primary(task)
        out += [f"#### {esc(_label('task', task))}", ""]
        header = ["Model", "Representation", f"{_score_name(p)} mean ± SD (ranked)", "worst (ranked)",
                  "best", "spread", "validity"]  # fmt: skip
        body = []
        for sub in subs:
            for t, rep in combos:
                mean = values.get((sub, task, rep, f"{p}_mean"))
                if t != task or mean is None:
                    continue
                best = values.get((sub, task, rep, f"{p}_min" if p == "mae_charged" else f"{p}_max"))
                body.append([
                    esc(data.name(sub)), esc(_label("representation", rep)),
                    f"{_num(mean)} ± {_num(values.get((sub, task, rep, f'{p}_sd')))}",
                    _num(values.get((sub, task, rep, f"{p}_worst"))), _num(best),
                    _num(values.get((sub, task, rep, f"{p}_spread"))),
                    _num(values.get((sub, task, rep, "validity_mean"))),
                ])  # fmt: skip
        out += [table(header, body, align=["l", "l", "r", "r", "r", "r", "r"]), ""]
    out += ["### Score per template", ""]
    per_template = _per_template(rows, combos)  # the strips and the flips read the same rows
    out += figures.block(
        _strips(per_template, combos, subs, data),
        TRACK,
        dataset,
        "templates",
        caption="Every template's score per model (one dot per template; hover for its id): a tall column "
        "of dots is a model whose answer depends on the wording. Accuracy panels run 0–1, MAE panels "
        "from 0 up (lower is better).",
    )
    out += _flips(per_template, combos, data)
    out += ["Every template, word for word: [methodology](../methodology.md#prompt_robustness).", ""]
    return out


def _strips(per_template: dict[tuple[str, str], pd.DataFrame], combos: list[tuple[str, str]], subs: list[str],
            data: SiteData) -> dict[str, Any] | None:  # fmt: skip
    """One panel per (task, representation), stacked one per row (readable on a phone).

    The panels share one model axis (``matches``); the lowest panel names the models under it (axis ``x``,
    so that ``plots.js`` moves the legend below those names), shortened to :data:`_TICK_CHARS` characters.
    """
    if not combos:
        return None
    colours = submission_colours(subs)
    names = {s: data.name(s) for s in subs}
    n = len(combos)
    gap = 0.5 / n
    height = (1.0 - gap * (n - 1)) / n
    traces: list[dict[str, Any]] = []
    layout: dict[str, Any] = {"height": 160 * n + 220, "margin": {"l": 60, "r": 20, "t": 30, "b": 40},
                              "hovermode": "closest", "legend": legend(-140 / (160 * n + 220)),
                              "annotations": []}  # fmt: skip
    shown = [display_name(names, s) for s in subs]
    short = [t if len(t) <= _TICK_CHARS else t[: _TICK_CHARS - 1] + "…" for t in shown]
    ticks = {"tickmode": "array", "tickvals": shown, "ticktext": short, "tickangle": -30, "automargin": True}
    for k, (task, rep) in enumerate(combos):
        axis = "" if k == n - 1 else str(k + 2)  # the lowest panel gets axis x, the others x2, x3 …
        top = 1.0 - k * (height + gap)
        by_model = dict(tuple(per_template[(task, rep)].groupby("model", sort=False)))
        for sub in subs:
            mine = by_model.get(sub)
            if mine is None or mine.empty:
                continue
            traces.append({
                "type": "scatter", "mode": "markers", "x": [display_name(names, sub)] * len(mine),
                "y": [round(float(v), 4) for v in mine["score"]], "text": list(mine["template"]),
                "name": display_name(names, sub), "legendgroup": sub, "showlegend": k == 0,
                "marker": {"color": colours[sub], "size": 8, "opacity": 0.8},
                "xaxis": f"x{axis}", "yaxis": f"y{axis}",
                "hovertemplate": "%{text}: %{y:.3f}<extra>%{x}</extra>",
            })  # fmt: skip
        metric = _score_name(_primary(task))
        xaxis: dict[str, Any] = {"domain": [0, 1], "anchor": f"y{axis}", "type": "category",
                                 "categoryorder": "array", "categoryarray": shown}  # fmt: skip
        if axis:
            xaxis.update(matches="x", showticklabels=False)
        else:
            xaxis.update(ticks, title={"text": "model (one column each, one dot per template)"})
        layout[f"xaxis{axis}"] = xaxis
        scale = {"rangemode": "tozero"} if metric == "MAE" else {"range": [-0.05, 1.05]}
        layout[f"yaxis{axis}"] = {"domain": [max(0.0, top - height), top], "anchor": f"x{axis}",
                                  "title": {"text": metric}, **scale}  # fmt: skip
        layout["annotations"].append({
            "text": f"{_label('task', task)} · {_label('representation', rep)}", "showarrow": False,
            "xref": "paper", "yref": "paper", "x": 0, "y": top, "xanchor": "left", "yanchor": "bottom",
        })  # fmt: skip
    return {"data": traces, "layout": layout} if traces else None


def _flips(per_template: dict[tuple[str, str], pd.DataFrame], combos: list[tuple[str, str]],
           data: SiteData) -> list[str]:  # fmt: skip
    """Rank stability across templates, and the per-template ranks where a template reorders models."""
    out = ["### Rank flips", "",
           "Does the model ranking survive a change of wording? Per task and representation: the mean and "
           "lowest Kendall τ-b between the model rankings under two templates (1 = the same order), and "
           "how many of the template pairs reverse at least one pair of models.", ""]  # fmt: skip
    body, detail = [], []
    for task, rep in combos:
        scores = per_template[(task, rep)]
        models = scores["model"].nunique()
        if models < 2:
            continue
        higher = _primary(task) != "mae_charged"
        stab = ranking_stability(scores.assign(score=scores["score"] if higher else -scores["score"]))
        body.append([esc(_label("task", task)), esc(_label("representation", rep)), str(models),
                     _num(stab["mean_tau"]), _num(stab["min_tau"]),
                     f"{stab['n_reversing_pairs']} of {stab['n_template_pairs']}"])  # fmt: skip
        if stab["n_reversing_pairs"]:
            detail += _rank_table(scores, higher, task, rep, data)
    if not body:
        return out[:2] + ["Fewer than two models answered any task of this data set.", ""]
    out += [table(["Task", "Representation", "Models", "mean τ-b", "lowest τ-b", "pairs that flip"], body,
                  align=["l", "l", "r", "r", "r", "r"]), ""]  # fmt: skip
    if detail:
        out += detail
    else:
        out += ["No change of wording reorders any two models here.", ""]
    return out


def _rank_table(scores: pd.DataFrame, higher: bool, task: str, rep: str, data: SiteData) -> list[str]:
    wide = scores.pivot(index="model", columns="template", values="score")
    ranks = wide.rank(ascending=not higher, method="min")
    order = wide.mean(axis=1).sort_values(ascending=not higher).index
    templates = list(wide.columns)
    ranks = ranks.reindex(index=order)
    body = [[esc(data.name(str(m)))] + [_rank(r) for r in row]
            for m, row in zip(order, ranks.to_numpy(dtype=float).tolist(), strict=True)]  # fmt: skip
    return [f"**{esc(_label('task', task))} · {esc(_label('representation', rep))}** — rank of each model "
            "under each template (1 = best):", "",
            table(["Model", *[code(t) for t in templates]], body, align=["l"] + ["r"] * len(templates)),
            ""]  # fmt: skip


def _rank(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else str(int(value))


def item_values(data: SiteData) -> pd.DataFrame | None:
    """Per-item, per-template terms of the headline criteria, for the rank bootstrap.

    Every criterion is a function of the per-template scores (``part`` = template): the mean over templates
    (``combine`` mean) or the worst template (``combine`` min). Items are oriented higher-is-better:
    accuracy items are 1/0 (invalid = 0); MAE items are −(error charged), the invalid answers' bounded
    penalty included, so each template's part mean is minus its charged MAE. Balanced-accuracy items are
    ``correct · N / (K · n_class)`` (``N`` items of the template, ``K`` classes, ``n_class`` items of the
    item's true class): their mean is exactly the balanced accuracy on the full data (resampled, the class
    weights stay those of the full sample).
    """
    answers = data.tables.get(ANSWERS)
    if answers is None or answers.empty:
        return None
    mine = answers.loc[(answers["track"] == TRACK).to_numpy()]
    score = pd.to_numeric(mine["score"], errors="coerce").to_numpy(dtype=float)
    # Columns as integer codes and their few distinct values: the table has millions of rows, a handful
    # of tasks, templates and data sets (strings built per row made this the build's slowest step).
    task, tasks = text_codes(mine["task"])
    primaries = [_primary(t) for t in tasks]
    label = np.array([p == "balanced_accuracy" for p in primaries], dtype=bool)[task]
    mae = np.array([p == "mae_charged" for p in primaries], dtype=bool)[task]
    if "truth" not in mine:  # a table written before the truth column: balanced accuracy cannot be rebuilt
        score = np.where(label, np.nan, score)
    keep = ~np.isnan(score)
    if not keep.any():
        return None
    mine, score, task, label, mae = mine.loc[keep], score[keep], task[keep], label[keep], mae[keep]
    value = np.where(mae, -score, score)
    if label.any():
        group = [mine[c] for c in ("submission", "dataset", "task", "representation", "template")]
        rows = pd.Series(score, index=mine.index).loc[label]
        group = [g.loc[label] for g in group]
        truth = mine["truth"].loc[label].astype(str)
        n_all = rows.groupby(group, observed=True).transform("size")
        n_class = rows.groupby([*group, truth], observed=True).transform("size")
        k = truth.groupby(group, observed=True).transform("nunique")
        value[label] = (rows * n_all / (k * n_class)).to_numpy(dtype=float)
    dataset, datasets = text_codes(mine["dataset"])
    rep, reps = text_codes(mine["representation"])
    combos, combo = np.unique((dataset * len(tasks) + task) * len(reps) + rep, return_inverse=True)
    d_of, rest = np.divmod(combos, len(tasks) * len(reps))
    t_of, r_of = np.divmod(rest, len(reps))
    names = [f"{TRACK}/{datasets[d]}/{tasks[t]}/{reps[r]}/{primaries[t]}"
             for d, t, r in zip(d_of.tolist(), t_of.tolist(), r_of.tolist(), strict=True)]  # fmt: skip
    stats = (("mean", "mean"), ("worst", "min"))  # the criterion's suffix and how its templates combine
    n = len(mine)

    def twice(column: str) -> pd.Categorical:
        codes, values = text_codes(mine[column])
        return pd.Categorical.from_codes(np.tile(codes, len(stats)), values)

    return pd.DataFrame({
        "submission": twice("submission"),
        "criterion": pd.Categorical.from_codes(
            np.concatenate([combo.ravel() + i * len(names) for i in range(len(stats))]),
            [f"{name}_{stat}" for stat, _ in stats for name in names]),
        "dataset": pd.Categorical.from_codes(np.tile(dataset, len(stats)), datasets),
        "item": twice("id"), "part": twice("template"),
        "combine": pd.Categorical.from_codes(np.repeat(np.arange(len(stats)), n), [c for _, c in stats]),
        "value": np.tile(value, len(stats)),
    })  # fmt: skip


def methodology() -> list[str]:
    """T4's design, metrics and every template, word for word."""
    out = [
        "The prompt-robustness track [1] asks every question in six wordings (templates, written by the "
        "maintainers and reviewed like code: `evaluators/tracks/prompt_robustness/prompt_templates.json`) "
        "and, where the data allow, in SMILES and as an IUPAC name, some also as SELFIES and InChI (asked "
        "only where the string reads back as the same molecule; reactions also as molecular formulas), and "
        "to a model whose manifest declares `model.inputs: [text, image]` also as a drawing: an RDKit "
        "depiction (300 × 300 px PNG, pixels only: no text chunk, so the answer never travels with the "
        "image) sent as an image part, the prompt saying `[image]` where the molecule would be. A text-only "
        "model is not asked image questions: those cells are *not applicable* to it (no row, so no "
        "ranking criterion counts against it), and what it is asked is word for word what it was asked "
        "before image questions existed. "
        "Every template of a task names the same inputs and ends with the same answer-format sentence; only "
        f"the wording differs. Each data set contributes a fixed sample of {ITEMS_PER_DATASET} records "
        "(the first in sha256(seed | id) order). Answers are extracted and normalised by fixed rules, as "
        "in the consistency track; no judge model.",
        "",
        table(
            ["Metric", "Definition"],
            [
                ["validity", "share of answers that normalise (a number: and lies in its plausible range); "
                 "an invalid answer is counted, never scored as a zero error"],
                ["accuracy", "exact match (canonical SMILES with stereo; formula element counts; yes/no); "
                 "invalid = wrong"],
                ["balanced accuracy (yes/no, counts)", "mean recall over the classes the truth has (“yes” "
                 "and “no”; each true count): a constant scores 1/K; invalid = wrong"],
                ["Tanimoto (MACCS, Morgan r=2 bits / counts, RDKit)", "mean over valid structure answers"],
                ["element cosine, atom F1", "mean over valid formula answers"],
                ["MAE (invalid charged)", "(1/n) Σ eᵢ over every asked item: eᵢ = |ŷᵢ − yᵢ| for a valid "
                 "answer, max(yᵢ − low, high − yᵢ) (the worst plausible answer's error) for an invalid one"],
                ["MAE, RMSE (the paper's)", "over valid numeric answers only; reported, not ranked"],
                ["mean, SD, min, max, worst", "of the per-template score; SD is the population SD; worst = "
                 "min accuracy or max MAE"],
                ["spread (shown, not ranked)", "best − worst template: how much the wording matters"],
                ["rank flips", "Kendall τ-b between per-template model rankings; template pairs that "
                 "reverse at least one pair of models"],
            ],
        ),  # fmt: skip
        "",
        "Retrosynthesis is asked only where the reactants are known: the records list reactants, "
        "reagents and solvents together without atom maps, so an item is posed only where one of the 127 "
        "named reaction rules that ship with datamol 0.13.0 (forward SMARTS, file pinned by its sha256) "
        "turns a subset of the recorded components into the recorded product (RDKit), and exactly one "
        "subset does — on the consistency study's 300 reactions, 68. That subset is the truth (reagents "
        "and solvents left out); answers are compared as sets (exact match) and by Tanimoto similarity, "
        "which gives partial credit, since a product has other valid routes than the recorded one. The "
        "consistency track asks retrosynthesis on every reaction, where agreement between writings needs "
        "no ground truth. "
        "Description-based design is not asked: its truth would be a judgement of the design, not a "
        "structure the answer can be compared with.",
        "",
        "**Tasks** (ChemDIRT's categories):",
        "",
        table(["Task", "Category", "Answer", "Notations", "Templates"],
              [[esc(s.label), esc(CATEGORIES.get(s.task, "")), esc(", ".join(sorted(set(s.answer.values())))),
                esc(", ".join(_label("representation", r) for r in s.representations)), str(len(s.templates))]
               for s in SETS]),  # fmt: skip
        "",
        "Classification (ClinTox, BBBP): the measured label of the data set, on a sample of 100 molecules "
        "per class. Relational questions: *same molecule?* shows a canonical SMILES and a random-order "
        "SMILES of the same molecule or of a hard negative (its stereoisomer, an isomer of the set, a "
        "one-atom edit), half each within molecules with and without stereo marks; *more similar?* shows A "
        "with one of its ten nearest neighbours in the set and a molecule at least 0.2 less similar (Morgan "
        "r=2 Tanimoto), the closer one as B on half the items. *Same molecule? A name and a SMILES* asks the "
        "equivalence items without stereo marks with A written as its IUPAC name (kept only where OPSIN "
        "reads the name as exactly the record's molecule), so a name silent on stereo or written as another "
        "tautomer never makes the truth ambiguous; the same items are also asked with A as its standard "
        "InChI (only where the InChI reads back as A exactly and does not also write the negative: InChI's "
        "mobile hydrogens make some tautomers one string). *Same molecule?* is also asked as two SELFIES, "
        "B encoded from its random-order SMILES, so the two strings differ exactly where the SMILES do; "
        "never as two InChIs, whose string equality would answer it. A name that OPSIN verifies only as "
        "another tautomer of the record's SMILES has no truth where a tautomer can change it (functional "
        "groups, aromatic rings, Lipinski's donors, similarity), and the item is left out of those cells.",
        "",
        "Functional groups: each item names one group of the table below (`{group}` in the templates) and "
        "asks whether the molecule contains it; the truth is whether RDKit finds the group's SMARTS. Every "
        "group is asked about as many molecules that contain it as molecules that lack it (rounds over the "
        "groups, each taking one of each from the sample in sha256 order), so neither the group named nor "
        "the class balance predicts the answer: a constant or a guess from the group's name scores 0.5.",
        "",
        table(["Group as asked", "SMARTS (RDKit)"], [[esc(g.name), code(g.smarts)] for g in GROUPS]),
        "",
        "Reactions are also drawn, every reactant and reagent in one image, for models that take images; the "
        "product is asked as a SMILES, and answering with one of the reactants counts as no answer (echo), "
        "as for the other writings.",
        "",
        "**Headline criteria** (per data set, task and representation; issue 28: none can be won by an "
        "answerer that does not read the molecule — `tests/validity` runs constant, abstaining, "
        "unparseable, absurd and random answerers through this scoring and checks it):",
        "",
        table(
            ["Criterion", "Formula", "Direction", "Constant", "Abstaining / unparseable", "Random valid"],
            [
                ["accuracy mean / worst (structures, formulas)", "mean over templates t of acc_t; "
                 "min over t of acc_t; acc_t = (1/n) Σ 1[answerᵢ = truthᵢ]", "↑", "the share of items "
                 "whose truth is that constant (≈ 0)", "0", "the chance a random molecule of the set is "
                 "the right one (≈ 1/n)"],
                ["balanced accuracy mean / worst (yes/no, counts)", "mean and min over t of (1/K) Σ_k "
                 "recall_k", "↑", "1/K (0.5 for yes/no; 1.0 where the truth has one class: declared flat)",
                 "0", "≈ 1/K"],
                ["MAE mean / worst (numbers, invalid charged)", "mean and max over t of (1/n) Σ eᵢ", "↓",
                 "the constant's MAE (≈ the truth's mean absolute deviation when it is the mean)",
                 "(1/n) Σ max(yᵢ − low, high − yᵢ): worse than any valid answer", "≈ a third of the "
                 "truth's span"],
            ],
        ),
        "",
        "Plausible ranges (an answer outside is invalid): "
        + "; ".join(f"{code(q)} [{lo:g}, {hi:g}]" for q, (lo, hi) in PLAUSIBLE.items()) + ".",
        "",
        "The spread and the SD over templates are shown beside the mean on each track page but not ranked: a "
        "constant answerer has spread 0 — the best — on every criterion. The paper's valid-only MAE and "
        "plain accuracy of yes/no answers are kept as reported columns.",
        "",
    ]
    for s in SETS:
        out += [f"**{esc(s.label)}** (`{esc(s.task)}`; answer: "
                f"{esc(', '.join(sorted(set(s.answer.values()))))}; asked as "
                f"{esc(', '.join(_label('representation', r) for r in s.representations))}). "
                "Instruction appended to every template: "
                f"{' / '.join(code(i) for i in dict.fromkeys(s.instruction.values()))}", ""]  # fmt: skip
        out += [table(["Id", "Template"], [[code(t.id), esc(t.text.replace(chr(10), ' ⏎ '))]
                                          for t in s.templates]), ""]  # fmt: skip
    out += ["References: [1] ChemDIRT, chemistry tasks with varied instructions and representations.", ""]
    return out


EXTENSIONS.register(TRACK)(
    Extension(track_sections=track_sections, item_values=item_values, methodology=methodology)
)
