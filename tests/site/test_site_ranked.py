"""Tests for the rank intervals, other rules, pairwise heatmap, failure explorer and derived files."""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pandas as pd
import pytest

from leaderboard.site.build import build_site, generate_pages, write_exports
from leaderboard.site.exports import read_results
from leaderboard.site.molecules import Drawings, draw_svg, read_index
from leaderboard.tracks import result_columns
from tests.site import _builders as b

N_ITEMS = 40
WORST = N_ITEMS - 1  # every model misses this molecule, at rank 30, on every augmentation
IDS = {
    "datamol-default": [f"dm:{i:03d}" for i in range(N_ITEMS)],
    "chebi20": [f"c{i:03d}" for i in range(N_ITEMS)],
}


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("ranked")
    root, site = b.repo(tmp)
    items = b.item_ranks(IDS, N_ITEMS, WORST)
    write_exports(
        b.results(b.BASE_SCORE),
        b.runs(),
        b.submissions(["mu", "alpha", "zeta"]),
        site,
        tables={"item_ranks": items},
    )
    cache = tmp / "cache"
    pages = generate_pages(site, repo_root=root, cache_dir=cache)
    public = build_site(root, strict=True)
    return {"root": root, "site": site, "public": public, "pages": pages, "items": items, "cache": cache}


def test_overview_rank_intervals_groups_and_other_rules(ranked: dict) -> None:
    text = b.text(ranked["public"] / "index.html")
    ranking = text[text.index("Boards") : text.index("Other ranking rules")]
    assert "Rank interval" in ranking and "cannot be told apart" in ranking
    # zeta is first in every bootstrap replicate: interval [1, 1], group 1.
    skill = r"\s+\d\.\d\d(?:\s\[\d\.\d\d,\s\d\.\d\d\])?"  # robust skill, beside the rank
    assert re.search(r"1\s+Zeta-BERT \| v1" + skill + r"\s+\+2\s+2 / 0 / 0\s+\[1, 1\]\s+1\s", ranking)
    payload = json.loads((ranked["site"] / "data" / "rank_intervals.json").read_text(encoding="utf-8"))
    assert payload["n_boot"] == 1000 and payload["seed"] == 0 and payload["level"] == 0.9
    assert payload["setting"] == {
        "track": "amore",
        "layer": "last",
        "distance": "l2",
        "direction": "original_to_augmented",
        "subset": "non_trivial",
        "metric": "acc_at_1",
    }
    systems = payload["systems"]
    assert [s["submission"] for s in systems] == ["zeta", "alpha", "mu"]
    assert all(s["rank_lo"] <= s["rank"] <= s["rank_hi"] for s in systems)
    groups = [s["group"] for s in systems]
    assert groups[0] == 1 and groups == sorted(groups)
    assert list(ranked["cache"].glob("rank_intervals-*.json"))  # the bootstrap cache was written
    rules_section = text[text.index("Other ranking rules") : text.index("Pairwise wins and losses")]
    for label in ("Borda", "Minimax", "Mean rank", "Mean score", "Δ"):
        assert label in rules_section, label
    rules = pd.read_csv(ranked["site"] / "data" / "rules.csv", index_col="submission")
    assert rules.index.tolist() == ["zeta", "alpha", "mu"]
    assert {"rank_borda", "change_borda", "rank_minimax", "condorcet_winner", "name"} <= set(rules.columns)
    assert bool(rules.at["zeta", "condorcet_winner"]) and rules.at["zeta", "name"] == "Zeta-BERT | v1"


def test_intervals_need_items_of_every_ranked_value(ranked: dict, tmp_path) -> None:
    _, site = b.repo(tmp_path)
    items = ranked["items"]
    write_exports(
        b.results(b.BASE_SCORE), b.runs(), b.submissions(["mu", "alpha", "zeta"]), site,
        tables={"item_ranks": items.loc[items["submission"] != "mu"]},
    )  # fmt: skip
    generate_pages(site)
    index = (site / "index.md").read_text(encoding="utf-8")
    assert "| Rank interval |" not in index and "missing for Mu-BERT" in index
    assert not (site / "data" / "rank_intervals.json").exists()


def test_pairwise_heatmap(ranked: dict) -> None:
    fig = json.loads(
        (ranked["site"] / "data" / "plots" / "overview-pairwise-embedding.json").read_text(encoding="utf-8")
    )
    (trace,) = fig["data"]
    assert trace["type"] == "heatmap"
    assert trace["y"] == ["Zeta-BERT | v1", "Alpha-BERT | v1", "Mu-BERT | v1"]  # Copeland order
    assert trace["z"] == [[None, 1, 1], [-1, None, 1], [-1, -1, None]]
    pairwise = pd.read_csv(ranked["site"] / "data" / "pairwise.csv", index_col="submission")
    assert pairwise.loc["zeta"].tolist() == [0, 1, 1] and pairwise.loc["mu", "alpha"] == -1
    index = (ranked["public"] / "index.html").read_text()
    assert 'data-figure="data/plots/overview-pairwise-embedding.json"' in index


def test_failure_explorer_lists_and_draws_the_worst_molecules(ranked: dict) -> None:
    page = (ranked["site"] / "submissions" / "zeta.md").read_text(encoding="utf-8")
    worst = IDS["datamol-default"][WORST]
    section = page[page.index("### amore · datamol-default") :]
    section = section[section.index('??? note "Failure explorer') :]  # folded (issue 35)
    first_row = next(line.strip() for line in section.splitlines() if line.strip().startswith("| <code>"))
    assert first_row.startswith(f"| <code>{worst}</code> | 5 of 5 | 30.0 | 30 | 30 | 30 | 30 | 30 |")
    # zeta finds 36 of 40 molecules: 4 are missed, all of them on every augmentation.
    assert "(4 of 40 molecules are missed at least once)" in section
    svgs = re.findall(r"\]\(\.\./(data/molecules/[0-9a-f]+\.svg)\)", section)
    # The pages name the drawings; the committed index holds their strings and the build draws them.
    index = read_index(ranked["site"])
    assert svgs and {svg.removeprefix("data/molecules/") for svg in svgs} <= set(index)
    assert not (ranked["site"] / "data" / "molecules").exists()  # never written to the source tree
    built = ranked["public"] / svgs[0]
    assert built.read_text(encoding="utf-8") == draw_svg(index[svgs[0].removeprefix("data/molecules/")])
    assert built.read_text(encoding="utf-8").lstrip().startswith("<?xml")
    # The strings come from the table (what the model saw), never recomputed: 40 % 5 = 4 -> "CCCCO".
    assert "<code>CCCCO</code>" in section and "<code>OCCCC</code>" in section
    assert "kekule · rank **30**" in section
    html_page = (ranked["public"] / "submissions" / "zeta" / "index.html").read_text(encoding="utf-8")
    srcs = re.findall(r'<img[^>]+src="([^"]+\.svg)"', html_page)
    assert srcs and all((ranked["public"] / "submissions" / "zeta" / s).resolve().is_file() for s in srcs)


def test_failure_explorer_without_strings_shows_ids_and_ranks(ranked: dict, tmp_path) -> None:
    root, site = b.repo(tmp_path)
    items = b.item_ranks(IDS, N_ITEMS, WORST, strings=False)
    write_exports(
        b.results(b.BASE_SCORE), b.runs(), b.submissions(["zeta"]), site, tables={"item_ranks": items}
    )
    generate_pages(site, repo_root=root)
    page = (site / "submissions" / "zeta.md").read_text(encoding="utf-8")
    assert "ids and ranks only, no drawings" in page and IDS["datamol-default"][WORST] in page
    assert read_index(site) == {}
    build_site(root, strict=True)


def test_all_numbers_are_embedded_in_the_page(ranked: dict) -> None:
    raw = (ranked["public"] / "submissions" / "zeta" / "index.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<script type="application/json" class="chemrobust-table">(.*?)</script>', raw)
    assert len(blocks) == 2  # one per data set
    tables = [json.loads(block) for block in blocks]
    n_numbers = sum(sum(cell != "—" for row in t["rows"] for cell in row[5:]) for t in tables)
    results = read_results(ranked["site"])
    assert n_numbers == int((results["submission"] == "zeta").sum())
    assert tables[0]["columns"][:5] == ["Augmentation", "Layer", "Distance", "Direction", "Subset"]
    assert "data-search-exclude" in raw


def test_derived_files_are_deleted_without_results(ranked: dict, tmp_path) -> None:
    root, site = b.repo(tmp_path)
    shutil.copytree(ranked["site"] / "data", site / "data")
    write_exports(pd.DataFrame(columns=result_columns()), pd.DataFrame(), [], site)
    generate_pages(site, repo_root=root)
    for name in ("rank_intervals.json", "rules.csv", "pairwise.csv"):
        assert not (site / "data" / name).exists(), name
    assert read_index(site) == {}
    build_site(root, strict=True)


def test_drawings_are_named_by_their_string_and_indexed_for_the_build(tmp_path) -> None:
    site = tmp_path / "site"
    (site / "data" / "molecules").mkdir(parents=True)
    (site / "data" / "molecules" / "legacy.svg").write_text("<svg/>", encoding="utf-8")
    drawings = Drawings(site)
    first = drawings.path("c1ccccc1O")
    assert first == drawings.path("c1ccccc1O") == Drawings(site).path("c1ccccc1O")
    digest = hashlib.sha256(b"260x190\0c1ccccc1O").hexdigest()
    assert first == f"data/molecules/{digest[:24]}.svg"
    assert drawings.path("OC1=CC=CC=C1") != first  # another way of writing it is another drawing
    assert drawings.path("not a smiles") is None
    drawings.write_index()
    index = read_index(site)
    assert index == {first.removeprefix("data/molecules/"): "c1ccccc1O",
                     drawings.path("OC1=CC=CC=C1").removeprefix("data/molecules/"): "OC1=CC=CC=C1"}
    assert not (site / "data" / "molecules").exists()  # the folder older versions drew into is gone
    # Same SVG bytes for the same string (the build draws it again on every machine).
    assert draw_svg("c1ccccc1O") == draw_svg.__wrapped__("c1ccccc1O")
    # A hand-edited index that names a drawing after another string is refused, naming the fix.
    (site / "data" / "molecules.json").write_text(json.dumps({first.split("/")[-1]: "CCO"}))
    with pytest.raises(ValueError, match="molecules.json.*python -m leaderboard site"):
        read_index(site)
