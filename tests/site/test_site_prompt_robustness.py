"""The prompt-robustness track (T4) on the site: spread tables, per-template strip plot, rank flips.

Built from exports the way the real board is (write_exports → generate_pages → mkdocs build --strict). The
per-item answers are made up so that two templates reorder two models; every number the pages and the rank
bootstrap show is derived from them here, independently of the track's code.
"""

from __future__ import annotations

import html
import json
import math
import re

import pandas as pd
import pytest

from evaluators.tracks.prompt_robustness.scores import over_templates
from leaderboard.ranking.item_table import point_table
from leaderboard.site.build import build_site, generate_pages, write_exports
from tests.site import _builders as b

TRACK, DATASET = "prompt_robustness", "pubchem-names"
TEMPLATES = ("t1", "t2", "t3", "t4", "t5", "t6")
ITEMS = ("1", "2", "3", "4")
#: Per model, per template: which items are right (formula from SMILES). "steady" is right on items 1-2
#: under every template; "fickle" is right on all four under t1-t3 and on none under t4-t6, so the two
#: swap places between the first and the last three templates.
RIGHT = {
    "steady": {t: {"1", "2"} for t in TEMPLATES},
    "fickle": {t: (set(ITEMS) if t in ("t1", "t2", "t3") else set()) for t in TEMPLATES},
}
#: Per model, per template: absolute errors of the molecular weight answers (None = invalid answer,
#: charged the error :data:`CHARGED` in the table, as the track writes it).
ERRORS = {
    "steady": {t: [1.0, 1.0, 1.0, 1.0] for t in TEMPLATES},
    "fickle": {t: ([0.5, 0.5, 0.5, None] if t != "t6" else [9.0, 9.0, 9.0, 9.0]) for t in TEMPLATES},
}
CHARGED = 1.5


def esc_text(text: str) -> str:
    """The words as the built page shows them (HTML entities for quotes and ampersands)."""
    return html.escape(text, quote=False)


def _row(sub: str, task: str, template: str, metric: str, value: float) -> dict:
    return {"submission": sub, "track": TRACK, "dataset": DATASET, "task": task, "representation": "smiles",
            "template": template, "metric": metric, "value": value}  # fmt: skip


def _answers() -> pd.DataFrame:
    rows = []
    for sub in RIGHT:
        for t in TEMPLATES:
            for i in ITEMS:
                right = i in RIGHT[sub][t]
                rows.append({"task": "formula", "answer": "C2H6O" if right else "", "score": float(right),
                             "template": t, "id": i, "submission": sub})  # fmt: skip
                error = ERRORS[sub][t][int(i) - 1]
                rows.append({"task": "molecular_weight", "answer": "" if error is None else "46.0",
                             "score": CHARGED if error is None else error, "template": t, "id": i,
                             "submission": sub})  # fmt: skip
    frame = pd.DataFrame(rows)
    truth = frame["task"].map({"formula": "C2H6O", "molecular_weight": "46.07"})
    return frame.assign(track=TRACK, dataset=DATASET, representation="smiles", completion="x", truth=truth)


def _rows(answers: pd.DataFrame) -> pd.DataFrame:
    """Per-template and over-template rows computed from the answers (the track's definitions)."""
    rows = []
    for (sub, task), group in answers.groupby(["submission", "task"]):
        per_template = []
        for t, g in group.groupby("template"):
            if task == "formula":
                value = float(g["score"].astype(float).mean())
                rows += [_row(sub, task, t, "accuracy", value), _row(sub, task, t, "validity", value)]
            else:
                charged = pd.to_numeric(g["score"])
                value = float(charged.mean())
                valid = g["answer"] != ""
                rows += [_row(sub, task, t, "mae_charged", value),
                         _row(sub, task, t, "mae", float(charged[valid].mean())),
                         _row(sub, task, t, "validity", float(valid.mean()))]  # fmt: skip
            per_template.append(value)
        primary = "accuracy" if task == "formula" else "mae_charged"
        stats = over_templates(per_template, higher_is_better=primary == "accuracy")
        rows += [_row(sub, task, "-", f"{primary}_{s}", v) for s, v in stats.items()]
        rows.append(_row(sub, task, "-", "validity_mean", 1.0))
    return b.frame(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("t4"))
    answers = _answers()
    runs = pd.DataFrame([b.run(s, DATASET, track=TRACK) for s in RIGHT])
    cards = b.submissions(list(RIGHT), capabilities={s: ["generate"] for s in RIGHT})
    write_exports(_rows(answers), runs, cards, site, tables={"template_answers": answers})
    generate_pages(site, repo_root=root)
    return {"site": site, "public": build_site(root, strict=True), "answers": answers}


def test_the_track_page_shows_mean_sd_worst_best_and_spread_per_task(built) -> None:
    text = b.text(built["public"] / "tracks" / TRACK / "index.html")
    assert "Molecular formula" in text and "Molecular weight (g/mol)" in text
    # fickle: accuracy 1, 1, 1, 0, 0, 0 → mean 0.5, population SD 0.5, worst 0, best 1, spread 1.
    assert "Fickle-BERT | v1 SMILES 0.500 ± 0.500 0.000 1.000 1.000" in text
    assert "Steady-BERT | v1 SMILES 0.500 ± 0.000 0.500 0.500 0.000" in text
    # fickle MAE, the invalid answer charged 1.5: (0.5·3 + 1.5)/4 = 0.75 under t1-t5, 9 under t6 → mean
    # 12.75/6 = 2.125, population SD sqrt((5·1.375² + 6.875²)/6) = 3.075, worst (max) 9, best 0.75,
    # spread 8.25.
    assert "Fickle-BERT | v1 SMILES 2.125 ± 3.075 9.000 0.750 8.250" in text
    # The page says what is ranked: the mean and the worst template, not the spread.
    assert "mean ± SD (ranked)" in text and "worst (ranked)" in text


def test_the_strip_plot_has_one_dot_per_template_and_model(built) -> None:
    plot = built["site"] / "data" / "plots" / f"{TRACK}-{DATASET}-templates.json"
    figure = json.loads(plot.read_text(encoding="utf-8"))
    dots = {(t["name"], t["yaxis"]): sorted(zip(t["text"], t["y"], strict=True)) for t in figure["data"]}
    # The first panel (formula) is axis 2; the lowest (molecular weight) is axis x, which names the models.
    assert dots[("Fickle-BERT | v1", "y2")] == [("t1", 1.0), ("t2", 1.0), ("t3", 1.0), ("t4", 0.0),
                                                ("t5", 0.0), ("t6", 0.0)]  # fmt: skip
    assert len(dots) == 4  # 2 models × (formula, molecular weight)
    # One panel per row, so that a phone shows each at full width.
    layout = figure["layout"]
    domains = [layout[k]["domain"] for k in ("yaxis2", "yaxis")]
    assert domains[0][0] > domains[1][1] and layout["xaxis"]["domain"] == [0, 1]
    # Issue 35: the strip plot has x labels: the lowest panel names every model, the others share its axis.
    assert sorted(layout["xaxis"]["ticktext"]) == sorted({name for name, _ in dots}), layout["xaxis"]
    assert layout["xaxis"]["title"]["text"].startswith("model")
    assert layout["xaxis2"]["matches"] == "x" and layout["xaxis2"]["showticklabels"] is False


def test_rank_flips_count_the_template_pairs_that_reorder_the_models(built) -> None:
    text = b.text(built["public"] / "tracks" / TRACK / "index.html")
    # Formula: t1-t3 put fickle first, t4-t6 steady; the 9 cross pairs reverse them (τ-b = -1), the 6
    # within-group pairs agree (τ-b = 1): mean τ-b (6 - 9) / 15 = -0.2.
    assert "Molecular formula SMILES 2 -0.200 -1.000 9 of 15" in text
    # Molecular weight: fickle better (0.75 < 1) under t1-t5, worse under t6: 5 of 15 pairs flip.
    assert "Molecular weight (g/mol) SMILES 2 0.333 -1.000 5 of 15" in text
    assert "rank of each model under each template" in text


def test_the_methodology_shows_every_template_word_for_word(built) -> None:
    from evaluators.tracks.prompt_robustness.templates import load_template_sets

    text = b.text(built["public"] / "methodology" / "index.html")
    for s in load_template_sets():
        for t in s.templates:
            # The longest stretch of words between slots: a template that starts with a slot is checked too.
            words = max(re.split(r"\{\w+\}", t.text.replace("\n", " ")), key=len).strip()
            assert esc_text(words) in text, (s.task, t.id)


def test_item_values_reproduce_the_reported_mean_and_worst(built) -> None:
    from leaderboard.site.extensions.prompt_robustness import item_values
    from leaderboard.site.sitedata import load_site_data

    data = load_site_data(built["site"])
    items = item_values(data)
    table = point_table(items)
    rows = _rows(built["answers"])
    for sub in RIGHT:
        for task, primary in (("formula", "accuracy"), ("molecular_weight", "mae_charged")):
            sign = 1.0 if primary == "accuracy" else -1.0
            for stat in ("mean", "worst"):
                reported = rows.loc[(rows["submission"] == sub) & (rows["task"] == task)
                                    & (rows["metric"] == f"{primary}_{stat}"), "value"].item()  # fmt: skip
                column = f"{TRACK}/{DATASET}/{task}/smiles/{primary}_{stat}"
                expected = sign * reported
                assert math.isclose(table.at[sub, column], expected, abs_tol=1e-9), (sub, column)
