"""The downstream track (T2) on the site: test-set tables, degradation plot, Table 9 view, bootstrap items.

Three made-up models on two data sets (ESOL, regression; BBBP, classification), 12 test molecules each,
predictions made up per test set: "good" predicts well and moves a little under each rewrite, "poor"
predicts badly and moves a lot, "steady" predicts in between and identically in every test set (an
invariant model). The result rows are computed here from the predictions with numpy and scikit-learn,
independently of the track's and the extension's code; both are exported the way the real board is
(write_exports → generate_pages). One molecule id, one rewritten string and a model's name are hostile.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from leaderboard.ranking.item_table import point_table
from leaderboard.site.build import build_site, generate_pages, write_exports
from leaderboard.site.extensions import extension
from leaderboard.site.extensions.downstream import REWRITES, rankings_per_test_set
from leaderboard.site.sitedata import load_site_data
from tests.site import _builders as b

TRACK = "downstream"
KINDS = {"esol": "regression", "bbbp": "classification"}
MODELS = ("good", "steady", "poor")
VARIANTS = ("original", *REWRITES)
HOSTILE_ID = "m<script>alert(1)</script>|`*_"
HOSTILE_STRING = "<img src=x onerror=alert(2)>|C"
HOSTILE_NAME = "<img src=x onerror=alert(3)> *bold* [x](javascript:alert(4)) | v1"
IDS = [HOSTILE_ID, *(f"m{i:02d}" for i in range(1, 12))]
LABELS = {
    "esol": np.round(np.random.default_rng(1).normal(0.0, 1.5, 12), 3),
    "bbbp": np.array([1, 0] * 6, dtype=float),
}


def _predictions(model: str, dataset: str, variant: str) -> np.ndarray:
    """Made-up predictions: one noise per model and data set, a shift per rewrite (none for steady)."""
    y = LABELS[dataset]
    noise = np.random.default_rng(MODELS.index(model) + 7).normal(0.0, 1.0, 12)
    v = VARIANTS.index(variant)
    shift = np.random.default_rng(100 + v).normal(0.0, 1.0, 12) if v else np.zeros(12)
    if model == "poor" and variant == "random_order":
        shift[0] += 6.0  # the hostile molecule moves the most: it is listed on the model's page
    if KINDS[dataset] == "regression":
        scale = {"good": 0.1, "steady": 0.6, "poor": 1.5}[model]
        move = {"good": 0.02, "steady": 0.0, "poor": 0.3}[model]
        return np.round(y + scale * noise + move * shift, 6)
    sep = {"good": 1.0, "steady": 0.8, "poor": 0.2}[model]
    move = {"good": 0.6, "steady": 0.0, "poor": 0.6}[model]
    latent = sep * (2 * y - 1) + noise + move * shift
    return np.round(1.0 / (1.0 + np.exp(-latent)), 6)


def _score(dataset: str, pred: np.ndarray) -> float:
    y = LABELS[dataset]
    if KINDS[dataset] == "regression":
        return float(np.sqrt(np.mean((pred - y) ** 2)))
    return float(roc_auc_score(y.astype(int), pred))


def _degradation(dataset: str, original: float, variant: float) -> float:
    return variant - original if KINDS[dataset] == "regression" else original - variant


def _tables_and_rows() -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    preds, rows, expected = [], [], {}
    for sub in MODELS:
        for dataset, kind in KINDS.items():
            metric = "rmse" if kind == "regression" else "roc_auc"
            scores = {}
            for v in VARIANTS:
                p = _predictions(sub, dataset, v)
                scores[v] = _score(dataset, p)
                for i, mol in enumerate(IDS):
                    string = f"C{'C' * i}O" if v == "original" else f"OC{'C' * i}"
                    if v == "random_order" and i == 0:
                        string = HOSTILE_STRING
                    preds.append({"submission": sub, "track": TRACK, "dataset": dataset, "variant": v,
                                  "id": mol, "status": "original" if v == "original" else "changed",
                                  "string": string, "label": float(LABELS[dataset][i]),
                                  "prediction": float(p[i])})  # fmt: skip
            drops = {v: _degradation(dataset, scores["original"], scores[v]) for v in REWRITES}
            worst = max(REWRITES, key=lambda v: (drops[v], -REWRITES.index(v)))
            expected[(sub, dataset)] = {"score": scores, "drops": drops, "worst": worst}

            def add(variant: str, name: str, value: float, d=dataset, s=sub) -> None:
                rows.append({"submission": s, "track": TRACK, "dataset": d, "variant": variant,
                             "metric": name, "value": value})  # fmt: skip

            add("original", "n_train", 48.0)
            add("original", "n_test", 12.0)
            for v in (*VARIANTS, "worst"):
                score = scores[worst if v == "worst" else v]
                add(v, metric, score)
                add(v, "score_low", score - 0.05)
                add(v, "score_high", score + 0.05)
            for v in (*REWRITES, "worst"):
                d = drops[worst if v == "worst" else v]
                if v != "worst":
                    add(v, "n_changed", 12.0)
                    add(v, "n_excluded", 0.0)
                add(v, "degradation", d)
                add(v, "degradation_low", d - 0.01)
                add(v, "degradation_high", d + 0.01)
    return b.frame(rows), pd.DataFrame(preds), expected


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("t2"))
    results, preds, expected = _tables_and_rows()
    runs = pd.DataFrame([b.run(s, d, track=TRACK) for s in MODELS for d in KINDS])
    cards = b.submissions(list(MODELS))
    for card in cards:
        if card["id"] == "poor":
            card["name"] = HOSTILE_NAME
    write_exports(results, runs, cards, site, tables={"predictions": preds})
    generate_pages(site, repo_root=root)
    data = load_site_data(site)
    return {"site": site, "data": data, "expected": expected, "public": build_site(root, strict=True),
            "track": (site / "tracks" / f"{TRACK}.md").read_text(encoding="utf-8")}  # fmt: skip


def test_the_made_up_models_keep_their_order_in_every_test_set(built) -> None:
    """Precondition of the Table 9 test: good > steady > poor on every test set of both data sets."""
    for dataset, kind in KINDS.items():
        for v in VARIANTS:
            s = [built["expected"][(m, dataset)]["score"][v] for m in MODELS]
            assert (s[0] < s[1] < s[2]) if kind == "regression" else (s[0] > s[1] > s[2]), (dataset, v, s)


def test_item_values_reproduce_rmse_auc_and_the_worst_rewrites_score(built) -> None:
    data = built["data"]
    items = extension(TRACK).item_values(data)
    assert items is not None
    # The criteria are the headline ranking's columns, named as it names them.
    assert set(items["criterion"]) == set(data.ranking.table.columns)
    assert set(items["criterion"]) == {f"{TRACK}/esol/rmse", f"{TRACK}/esol/worst/rmse",
                                       f"{TRACK}/bbbp/roc_auc", f"{TRACK}/bbbp/worst/roc_auc"}  # fmt: skip
    point = point_table(items)
    for sub in MODELS:
        y = LABELS["esol"]
        rmse = float(np.sqrt(np.mean((_predictions(sub, "esol", "original") - y) ** 2)))
        assert point.at[sub, f"{TRACK}/esol/rmse"] == pytest.approx(-rmse, abs=1e-9)
        auc = roc_auc_score(LABELS["bbbp"].astype(int), _predictions(sub, "bbbp", "original"))
        assert point.at[sub, f"{TRACK}/bbbp/roc_auc"] == pytest.approx(auc, abs=1e-9)
        for dataset, metric in (("esol", "rmse"), ("bbbp", "roc_auc")):
            scores = built["expected"][(sub, dataset)]["score"]
            # The worst rewrite's score, computed here over the rewrites (oriented: RMSE negated).
            worst = max(scores[v] for v in REWRITES) if metric == "rmse" else min(scores[v] for v in REWRITES)
            expected = -worst if metric == "rmse" else worst
            assert point.at[sub, f"{TRACK}/{dataset}/worst/{metric}"] == pytest.approx(expected, abs=1e-9)
    # And they equal what the ranking ranks (the result rows, oriented higher-is-better).
    table = data.ranking.table.reindex(index=point.index, columns=point.columns)
    assert np.allclose(point.to_numpy(), table.to_numpy(), atol=1e-9)
    # Both moving models lose under some rewrite (the invariant one: next test).
    for dataset, metric in (("esol", "rmse"), ("bbbp", "roc_auc")):
        for sub in ("good", "poor"):
            assert (
                point.at[sub, f"{TRACK}/{dataset}/worst/{metric}"]
                < point.at[sub, f"{TRACK}/{dataset}/{metric}"]
            )


def test_an_invariant_model_scores_the_same_on_its_worst_rewrite(built) -> None:
    point = point_table(extension(TRACK).item_values(built["data"]))
    for dataset, metric in (("esol", "rmse"), ("bbbp", "roc_auc")):
        assert (
            point.at["steady", f"{TRACK}/{dataset}/worst/{metric}"]
            == point.at["steady", f"{TRACK}/{dataset}/{metric}"]
        )


def test_the_rank_bootstrap_accepts_the_items(built) -> None:
    """generate_pages ran the bootstrap over every ranked track's items: intervals for all three models."""
    intervals = json.loads((built["site"] / "data" / "rank_intervals.json").read_text(encoding="utf-8"))
    text = json.dumps(intervals)
    assert all(f'"{m}"' in text for m in MODELS), text[:500]


def test_the_table_9_view_ranks_the_best_model_first_with_tau_one(built) -> None:
    rankings = rankings_per_test_set(built["data"])
    assert list(rankings) == list(VARIANTS)
    for v, ranking in rankings.items():
        assert ranking.at["good", "rank"] == 1 and ranking.at["poor", "rank"] == 3, v
    page = built["track"]
    # Rows: models in rank order; columns: the test sets; cells: ranks.
    assert "| [Good-BERT \\| v1](../submissions/good.md) | 1 | 1 | 1 | 1 | 1 | 1 |" in page
    assert "| [Steady-BERT \\| v1](../submissions/steady.md) | 2 | 2 | 2 | 2 | 2 | 2 |" in page
    for v in REWRITES:
        assert f"| {v.replace('_', chr(92) + '_')} | 1.000 | 0 | 3 |" in page, v
    # Folded (issue 35: track pages open with the headline), before the first data set's section.
    summary = page.index('??? note "Ranking per test set"')
    assert page.index("Headline criteria") < summary < page.index("\n## ", summary)


def test_the_track_page_says_the_probe_is_frozen_and_shows_tables_and_plot(built) -> None:
    page = built["track"]
    assert "The paper fine-tunes whole models; a frozen-embedding probe is our CPU-feasible default" in page
    # One section each per data set; folded, except the main data set's plot shown above its folds.
    assert page.count('??? note "Scores per test set"') == 2
    assert page.count('??? note "Degradation per rewrite"') == 2
    exp = built["expected"][("good", "esol")]
    original = exp["score"]["original"]
    cell = f"{original:.3f} [{original - 0.05:.3f}, {original + 0.05:.3f}]"
    assert f"| [Good-BERT \\| v1](../submissions/good.md) | {cell} |" in page
    assert "> 0 = worse" in page
    plot_file = built["site"] / "data" / "plots" / f"{TRACK}-esol-degradation.json"
    plot = json.loads(plot_file.read_text(encoding="utf-8"))
    bars = {t["name"]: t["y"] for t in plot["data"]}
    assert bars["Steady-BERT | v1"] == [0.0] * len(REWRITES)
    assert bars["Good-BERT | v1"] == pytest.approx([exp["drops"][v] for v in REWRITES], abs=1e-6)
    assert plot["layout"]["shapes"][0]["y0"] == 0


def test_hostile_names_ids_and_strings_are_escaped(built) -> None:
    site = built["site"]
    pages = {"track": built["track"], "poor": (site / "submissions" / "poor.md").read_text(encoding="utf-8")}
    for name, page in pages.items():
        # (`<script type="application/json">` blocks of the generic pages hold JSON with "<" escaped.)
        assert "<img" not in page and "<script>" not in page and "alert(1)</" not in page, name
        assert not re.search(r"(?<!\\)\]\(javascript", page), name
        assert "&lt;img src=x onerror=alert(3)&gt; \\*bold\\*" in page, name
    # The hostile molecule moved the most under poor's random_order rewrite: listed, as inert code.
    poor = pages["poor"]
    assert "<code>m&lt;script&gt;alert(1)&lt;/script&gt;\\|\\`\\*\\_</code>" in poor
    assert "<code>&lt;img src=x onerror=alert(2)&gt;\\|C</code>" in poor
    assert "Downstream probe per test set" in poor
    # The built pages (mkdocs build --strict) show the hostile texts as text.
    for html_page in (built["public"] / "tracks" / TRACK / "index.html",
                      built["public"] / "submissions" / "poor" / "index.html"):  # fmt: skip
        raw = html_page.read_text(encoding="utf-8")
        assert "<img src=x" not in raw and "<script>alert" not in raw and 'href="javascript' not in raw
        assert "<img src=x onerror=alert(3)> *bold* [x](javascript:alert(4)) | v1" in b.text(html_page)
    assert HOSTILE_ID in b.text(built["public"] / "submissions" / "poor" / "index.html")
    plots = "".join(p.read_text(encoding="utf-8") for p in (site / "data" / "plots").glob(f"{TRACK}-*.json"))
    assert "<img" not in plots and "&lt;img src=x onerror=alert(3)&gt;" in plots


def test_the_methodology_describes_the_design(built) -> None:
    text = (built["site"] / "methodology.md").read_text(encoding="utf-8")
    for phrase in ("scaffold", "Labels never enter the container", "cross-validation on the training "
                   "molecules only", "Morgan fingerprint reference", "degradation is exactly 0",
                   "Table 9", "paired bootstrap"):  # fmt: skip
        assert phrase in text, phrase
