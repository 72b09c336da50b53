"""The consistency track (T3) on the site: task tables, accuracy vs consistency, answers side by side.

Built from exports the way the real board is (write_exports → generate_pages → mkdocs build --strict), with
one hostile completion: a model's text is shown escaped, never as markup.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from leaderboard.site.build import build_site, generate_pages, write_exports
from leaderboard.site.molecules import read_index
from tests.site import _builders as b

HOSTILE = '<img src=x onerror="alert(1)"> [click](javascript:alert(1))'


def _t3(sub: str, task: str, pair: str, rep: str, metric: str, value: float) -> dict:
    return {"submission": sub, "track": "consistency", "dataset": "pubchem-names", "task": task, "pair": pair,
            "representation": rep, "metric": metric, "value": value}  # fmt: skip


def _rows() -> pd.DataFrame:
    rows = []
    for sub, adj, acc in (("tools", 0.9, 0.95), ("echo", 0.0, 0.1)):
        for task in ("translation", "formula", "lipinski"):
            for pair in ("smiles-iupac", "smiles-randomized"):
                for metric, value in (
                    ("consistency", adj + 0.05),
                    ("chance_consistency", 0.05),
                    ("adjusted_consistency", adj),
                    ("kappa_consistency", adj),
                    ("raw_agreement", 0.0),
                ):
                    rows.append(_t3(sub, task, pair, "-", metric, value))
            for rep in ("smiles", "iupac", "randomized"):
                rows += [_t3(sub, task, "-", rep, "accuracy", acc), _t3(sub, task, "-", rep, "n_items", 2)]
        for pair in ("smiles-iupac", "smiles-randomized"):
            for metric, value in (("mse_consistency", 1.0), ("mse_chance", 3.0), ("mse_adjusted", 2.0),
                                  ("numeric_agreement", 2 / 3)):  # fmt: skip
                rows.append(_t3(sub, "hydration_free_energy", pair, "-", metric, value))
    return b.frame(rows)


def _answers() -> pd.DataFrame:
    base = {"submission": "tools", "track": "consistency", "dataset": "pubchem-names", "task": "translation"}
    rows = [
        {**base, "representation": "smiles", "id": "702", "input": "CCO", "completion": HOSTILE, "answer": "",
         "correct": "0"},
        {**base, "representation": "iupac", "id": "702", "input": "ethanol", "completion": "CCO",
         "answer": "CCO", "correct": "1"},
        {**base, "representation": "smiles", "id": "180", "input": "CC(C)=O", "completion": "propan-2-one",
         "answer": "CC(C)=O", "correct": "1"},
        {**base, "representation": "iupac", "id": "180", "input": "propan-2-one", "completion": "CC(=O)C",
         "answer": "CC(C)=O", "correct": "1"},
    ]  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("t3"))
    runs = pd.DataFrame([b.run(s, "pubchem-names", track="consistency") for s in ("tools", "echo")])
    cards = b.submissions(["tools", "echo"], capabilities={"tools": ["generate"], "echo": ["generate"]})
    write_exports(_rows(), runs, cards, site, tables={"answers": _answers()})
    generate_pages(site, repo_root=root)
    return {"site": site, "public": build_site(root, strict=True)}


def test_the_track_page_has_a_table_per_task_and_the_orthogonality_figure(built) -> None:
    text = b.text(built["public"] / "tracks" / "consistency" / "index.html")
    for label in ("Name ↔ structure translation", "Molecular formula", "Lipinski's rule of five (yes/no)",
                  "Hydration free energy (kcal/mol)"):  # fmt: skip
        assert label in text, label
    assert "Tools-BERT | v1 SMILES ↔ IUPAC 0.950 0.050 0.900 0.900" in text
    assert "MSE between" in text
    assert "Echo-BERT | v1 canonical ↔ random SMILES 1.000 3.000 2.000 0.667" in text
    plot = built["site"] / "data" / "plots" / "consistency-pubchem-names-accuracy-consistency.json"
    figure = json.loads(plot.read_text(encoding="utf-8"))
    points = {t["name"]: list(zip(t["x"], t["y"], strict=True)) for t in figure["data"]}
    assert points["Tools-BERT | v1"] == [(0.95, 0.9)] * 3 and points["Echo-BERT | v1"] == [(0.1, 0.0)] * 3


def test_answers_are_side_by_side_escaped_with_structures_drawn(built) -> None:
    md = (built["site"] / "submissions" / "tools.md").read_text(encoding="utf-8")
    section = md[md.index('??? note "Answers side by side"') :]  # folded (issue 35)
    assert "1 of 2 items differ" in section  # item 180 answered the same structure both ways
    assert "<img src=x" not in section and "&lt;img src=x onerror=" in section
    assert "javascript:" not in built["public"].joinpath("submissions", "tools", "index.html").read_text(
        encoding="utf-8"
    ).split("Answers side by side", 1)[1].split("</table>", 1)[0].replace("javascript:alert(1))</code>", "")
    assert "*(no answer)*" not in section and "→ *unusable*" in section and "→ <code>CCO</code> ✓" in section
    # The structure given from the name is drawn at build time from the committed index.
    drawings = read_index(built["site"])
    assert "CCO" in drawings.values()
    name = next(k for k, v in drawings.items() if v == "CCO")
    assert (built["public"] / "data" / "molecules" / name).is_file()


def test_the_methodology_page_explains_the_metrics(built) -> None:
    text = b.text(built["public"] / "methodology" / "index.html")
    assert "two unusable answers never agree" in text
    # Deliverable 4: each headline criterion with its formula, direction and degenerate answerers' scores.
    for needle in ("κ consistency (categorical)", "(C − P_v) / (1 − P_v)", "numeric agreement (ΔG_hyd)",
                   "Abstaining / unparseable", "Random valid", "higher is better"):  # fmt: skip
        assert needle in text, needle


def test_the_methodology_page_lists_freesolv_lipinski_as_flat(built) -> None:
    text = b.text(built["public"] / "methodology" / "index.html")
    assert "freesolv/lipinski/smiles-iupac" in text and "642 of 642" in text


def _item_table(task: str, smiles: list[str], iupac: list[str]) -> pd.DataFrame:
    base = {"submission": "m", "track": "consistency", "dataset": "d", "task": task, "input": "x",
            "completion": "x", "correct": "0"}  # fmt: skip
    return pd.DataFrame(
        [{**base, "representation": rep, "id": str(i), "answer": ans}
         for rep, answers in (("smiles", smiles), ("iupac", iupac)) for i, ans in enumerate(answers)]
    )  # fmt: skip


def test_item_values_average_to_the_reported_kappa_consistency() -> None:
    from evaluators.tracks.consistency import metrics as cm
    from leaderboard.site.extensions.consistency import item_values
    from leaderboard.site.sitedata import SiteData

    smiles = ["CCO", "C", "", "N", "O", "CCO"]
    iupac = ["CCO", "N", "", "N", "C", "CCO"]
    data = SiteData(b.frame([]), [], {}, {"answers": _item_table("formula", smiles, iupac)})
    items = item_values(data)
    assert set(items["criterion"]) == {"consistency/d/formula/smiles-iupac/kappa_consistency"}
    expected = cm.kappa_consistency([s or None for s in smiles], [s or None for s in iupac])
    assert items["value"].mean() == pytest.approx(expected)
    assert len(items) == 6 and set(items["dataset"]) == {"d"}


def test_item_values_average_to_the_reported_numeric_agreement_with_invalid_sides_charged() -> None:
    from evaluators.tracks.consistency import metrics as cm
    from evaluators.tracks.consistency import plausible_width
    from leaderboard.site.extensions.consistency import item_values
    from leaderboard.site.sitedata import SiteData

    smiles, iupac = ["-1.0", "-3.5", "", "2.0"], ["-1.5", "-3.0", "-4.0", "2.0"]
    data = SiteData(b.frame([]), [], {}, {"answers": _item_table("hydration_free_energy", smiles, iupac)})
    items = item_values(data)
    assert set(items["criterion"]) == {"consistency/d/hydration_free_energy/smiles-iupac/numeric_agreement"}
    expected = cm.numeric_agreement([-1.0, -3.5, None, 2.0], [-1.5, -3.0, -4.0, 2.0],
                                    plausible_width("hydration_free_energy"))  # fmt: skip
    assert items["value"].mean() == pytest.approx(expected) and len(items) == 4
