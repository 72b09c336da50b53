"""The identity-blinded track (T5) on the site: the diagnostic table, the methodology, the bootstrap's items.

Two made-up models are scored by the track itself on the made-up pairs of
``tests/evaluators/test_identity_blinded_track.py`` (an oracle and a source-label copier); their rows and
per-item answers are exported the way the real board is (write_exports → generate_pages → mkdocs build
--strict), and the rank bootstrap's item values must reproduce every headline number the track reported.
"""

from __future__ import annotations

import csv
import gzip
import json
import math

import pandas as pd
import pytest

import evaluators.datasets as datasets
from leaderboard.ranking.item_table import point_table
from leaderboard.site.build import build_site, generate_pages, write_exports
from tests.evaluators.test_identity_blinded_track import _CL_TO_OH, RECORDS, TRACK, _copier, _oracle, _result
from tests.site import _builders as b

NAME, DATASET = "identity_blinded", "edit-pairs"
MODELS = {"oracle": _oracle, "copier": _copier}


def _scored(tmp_path, answer):
    by_id = {r["id"]: r for r in RECORDS}
    out = tmp_path / "out"
    out.mkdir()
    lines = [json.dumps({"id": q.request.id, "completion": answer(q, by_id[q.item])})
             for q in TRACK.questions(RECORDS)]  # fmt: skip
    (out / "completions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    tables = {}
    for name in ("blinded_answers", "blinded_pairs"):
        with gzip.open(out / f"{name}.csv.gz", "rt", encoding="utf-8", newline="") as handle:
            tables[name] = pd.DataFrame(list(csv.DictReader(handle)))
    return scored, tables


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    patch = pytest.MonkeyPatch()
    patch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in RECORDS])
    rows, tables = [], {"blinded_answers": [], "blinded_pairs": []}
    try:
        for sub, answer in MODELS.items():
            scored, made = _scored(tmp_path_factory.mktemp(sub), answer)
            for r in scored.rows:
                rows.append({"submission": sub, "track": NAME, "dataset": DATASET, **dict(r.dims),
                             "metric": r.metric, "value": r.value})  # fmt: skip
            for name, frame in made.items():
                tables[name].append(frame.assign(submission=sub, track=NAME, dataset=DATASET))
    finally:
        patch.undo()
    root, site = b.repo(tmp_path_factory.mktemp("t5"))
    results = b.frame(rows)
    runs = pd.DataFrame([b.run(s, DATASET, track=NAME) for s in MODELS])
    cards = b.submissions(list(MODELS), capabilities={s: ["generate"] for s in MODELS})
    write_exports(results, runs, cards, site,
                  tables={n: pd.concat(f, ignore_index=True) for n, f in tables.items()})  # fmt: skip
    generate_pages(site, repo_root=root)
    return {"site": site, "public": build_site(root, strict=True), "rows": results}


def test_item_values_reproduce_every_headline_number(built) -> None:
    from leaderboard.site.extensions.identity_blinded import item_values
    from leaderboard.site.sitedata import load_site_data

    table = point_table(item_values(load_site_data(built["site"])))
    rows = built["rows"]
    checked = 0
    for crit in TRACK.headline:
        where = dict(crit.where)
        sel = rows.loc[(rows["metric"] == crit.metric) & (rows["condition"] == where["condition"])
                       & (rows["group"] == where["group"])]  # fmt: skip
        suffix = "".join(f"/{where[d]}" for d in crit.per[2:])
        for _, r in sel.iterrows():
            column = f"{NAME}/{DATASET}/{r['task']}/{r['representation']}{suffix}/{crit.metric}"
            sign = 1.0 if crit.metric == "balanced_accuracy" else -1.0
            assert math.isclose(table.at[r["submission"], column], sign * r["value"], abs_tol=1e-9), column
            checked += 1
    # 2 models × (binary C1, C3: 2 representations; C2: SMILES; numeric C1, C2 on label-inconsistent
    # pairs: SMILES; C3: 2 representations) — the IUPAC pairs are all label-consistent.
    assert checked == 2 * (2 + 1 + 2) + 2 * (1 + 1 + 2)
    assert not table.filter(like="/iupac/C2/").notna().any().any()
    # The copier states the true source label under C2: always wrong on label-inconsistent pairs.
    assert table.at["copier", f"{NAME}/{DATASET}/logp_gt_3/smiles/C2/inconsistent/balanced_accuracy"] == 0.0
    assert (table.filter(like="balanced_accuracy").loc["oracle"].dropna() == 1.0).all()


def test_the_track_page_shows_the_diagnostic_table(built) -> None:
    text = b.text(built["public"] / "tracks" / NAME / "index.html")
    assert "Identity-blinded diagnostic" in text and "logP > 3 (yes/no)" in text
    # Copier, numeric task, SMILES: MAE 0.45 / 2.75 under C1 and C2 → CR 6.11; shift 1 under C3.
    assert "6.11 [" in text


def test_the_methodology_states_the_criteria_and_their_directions(built) -> None:
    text = b.text(built["public"] / "methodology" / "index.html")
    assert "closer to 1 is better" in text and "BA on label-inconsistent pairs ↑" in text
    assert "charged MAE on all pairs, false source label stated ↓" in text and "reported, not ranked" in text
    assert "Is the Wildman-Crippen logP of the target molecule" in text


def test_model_pages_show_the_pair_explorer_with_drawings(built) -> None:
    copier = b.text(built["public"] / "submissions" / "copier" / "index.html")
    oracle = b.text(built["public"] / "submissions" / "oracle" / "index.html")
    assert "Pair explorer" in copier and "Pair explorer" in oracle
    # The copier answers every C3 question with the false source label; the oracle never moves.
    assert copier.count("4 of 4 pairs followed the false label") == 2
    assert oracle.count("0 of 4 pairs followed the false label") == 2
    assert _CL_TO_OH in copier
    # Source and target drawn: the drawings the pages link are generated into the built site.
    drawings = list((built["public"] / "data" / "molecules").glob("*.svg"))
    index = json.loads((built["site"] / "data" / "molecules.json").read_text(encoding="utf-8"))
    assert {"Clc1ccccc1", "Oc1ccccc1"} <= set(index.values())
    assert len(drawings) == len(index)
    html = (built["public"] / "submissions" / "copier" / "index.html").read_text(encoding="utf-8")
    assert sum(f"data/molecules/{name}" in html for name in index) >= 4
