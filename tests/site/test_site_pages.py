"""Tests for leaderboard/site/build.py and the pages: generated Markdown and a strict MkDocs build."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from leaderboard.ranking.boards import rank_boards
from leaderboard.settings import references
from leaderboard.site.build import SiteBuildError, build_site, generate_pages, write_exports
from leaderboard.site.exports import read_results
from leaderboard.site.format import change
from leaderboard.site.pages.submission import reproduce_command
from leaderboard.site.schema import GENERATED_HEADER
from leaderboard.tracks import result_columns
from tests.site import _builders as b


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("site"))
    results = b.results(b.BASE_SCORE)
    write_exports(results, b.runs(), b.submissions(["mu", "alpha", "zeta"]), site)
    pages = generate_pages(site)
    public = build_site(root, strict=True)
    return {"root": root, "site": site, "public": public, "results": results, "pages": pages}


def test_strict_build_and_every_page_is_generated(built: dict) -> None:
    public = built["public"]
    assert (public / "index.html").is_file()
    for rel in ("tracks", "tracks/amore", "methodology", "downloads", "submissions", "submissions/zeta"):
        assert (public / rel / "index.html").is_file(), rel
    for name in ("results.csv.gz", "runs.json", "submissions.json"):
        assert (public / "data" / name).is_file()
    for page in built["pages"]:
        # The header opens the page, or follows the front matter that titles a model page.
        content = page.read_text(encoding="utf-8")
        assert content.startswith(GENERATED_HEADER + "\n") or (
            content.startswith("---\ntitle: ") and f"\n---\n{GENERATED_HEADER}\n" in content
        ), page
    names = {p.relative_to(built["site"]).as_posix() for p in built["pages"]}
    assert {"index.md", "tracks/index.md", "tracks/amore.md", "methodology.md", "downloads.md"} <= names
    assert {
        "submissions/index.md",
        "submissions/zeta.md",
        "submissions/alpha.md",
        "submissions/mu.md",
    } <= names
    assert "amore.md" not in names


def test_overview_ranks_by_copeland(built: dict) -> None:
    text = b.text(built["public"] / "index.html")
    ranking = text[text.index("Boards") : text.index("Failed runs")]
    positions = [ranking.index(f"{sub.capitalize()}-BERT | v1") for sub in ("zeta", "alpha", "mu")]
    assert positions == sorted(positions)
    # zeta beats both, alpha beats mu: scores +2, 0, -2.
    # Each row: rank, name, robust skill (here AMORE's mean Acc@1, with its interval), Copeland, W / L / T.
    skill = r"\s+\d\.\d\d(?:\s\[\d\.\d\d,\s\d\.\d\d\])?"
    assert re.search(r"1\s+Zeta-BERT \| v1" + skill + r"\s+\+2\s+2 / 0 / 0", ranking)
    assert re.search(r"2\s+Alpha-BERT \| v1" + skill + r"\s+0\s+1 / 1 / 0", ranking)
    assert re.search(r"3\s+Mu-BERT \| v1" + skill + r"\s+-2\s+0 / 2 / 0", ranking)
    assert "Condorcet winner" in ranking and "Zeta-BERT" in ranking
    assert "10 criteria of 1 track" in ranking and "each track weighs 1" in ranking
    # The column group of the track, with its criterion label and weights.
    assert "amore — Acc@1 on non-trivial pairs (last layer, L2, original → augmented): 10 columns" in ranking
    assert "weight 1 in all (0.1 each)" in ranking
    # Headline value: zeta, datamol-default/canonical, non-trivial = 0.9 - 0.01.
    assert "0.890" in ranking


def test_failed_run_reason_on_overview(built: dict) -> None:
    text = b.text(built["public"] / "index.html")
    failed = text[text.index("Failed runs") :]
    assert b.FAILED_REASON in failed
    assert "Traceback" not in failed  # one line only
    assert "chebi20" in failed and "Mu-BERT" in failed


def test_submission_page_has_provenance_and_reproduce_command(built: dict) -> None:
    text = b.text(built["public"] / "submissions" / "zeta" / "index.html")
    assert reproduce_command("zeta", "datamol-default") in text
    assert "nox -s evaluate -- --submission zeta --dataset datamol-default" in text
    assert b.RUN_ID in text
    assert "sha256:" + "f" * 64 in text  # image id
    assert "amore-v1-1a2b3c" in text and "c" * 40 in text
    assert "Acc@1" in text and "0.890" in text


def test_failed_submission_page(built: dict) -> None:
    text = b.text(built["public"] / "submissions" / "mu" / "index.html")
    assert b.FAILED_REASON in text
    assert "nox -s evaluate -- --submission mu --dataset chebi20" in text


def test_track_pages_from_declarations(built: dict) -> None:
    index = b.text(built["public"] / "tracks" / "index.html")
    assert "amore" in index and "Embedding retrieval" in index and "Ganeeva" in index
    text = b.text(built["public"] / "tracks" / "amore" / "index.html")
    for part in (
        "datamol-default",
        "chebi20",
        "ring_renumber",
        "n identical",
        "Headline",
        "Ranking per criterion",
    ):
        assert part in text, part
    for part in (
        "Acc@1 by distance",
        "Acc@1 by subset",
        "Acc@1 by direction",
        "MRR by layer",
        "L2 (headline)",
    ):
        assert part in text, part
    assert "non-trivial pairs (headline)" in text and "all pairs" in text  # Dimension labels
    assert "cosine" in text and "augmented → original" in text


def test_generation_is_deterministic(built: dict, tmp_path) -> None:
    _, site = b.repo(tmp_path)
    write_exports(
        built["results"].sample(frac=1.0, random_state=0),
        b.runs(),
        b.submissions(["zeta", "mu", "alpha"]),
        site,
    )
    for page in generate_pages(site):
        rel = page.relative_to(site)
        assert page.read_bytes() == (built["site"] / rel).read_bytes(), rel
    for name in ("results.csv.gz", "runs.json", "submissions.json"):
        assert (site / "data" / name).read_bytes() == (built["site"] / "data" / name).read_bytes()


def test_no_results_builds_strictly(tmp_path) -> None:
    root, site = b.repo(tmp_path)
    write_exports(pd.DataFrame(columns=result_columns()), pd.DataFrame(), [], site)
    generate_pages(site)
    public = build_site(root, strict=True)
    assert "No results yet" in b.text(public / "index.html")
    assert "No results yet" in b.text(public / "tracks" / "amore" / "index.html")


def test_no_data_dir_builds_strictly(tmp_path) -> None:
    root, site = b.repo(tmp_path)
    generate_pages(site)
    public = build_site(root, strict=True)
    assert "No data exported yet" in b.text(public / "downloads" / "index.html")


def test_all_runs_failed_submission(tmp_path) -> None:
    root, site = b.repo(tmp_path)
    results = b.results({"zeta": 0.9, "alpha": 0.6})
    runs = pd.DataFrame(
        [b.run("zeta", "datamol-default"), b.run("alpha", "datamol-default")]
        + [b.run("broken", d, "FAILED", "submission.yaml: model could not be loaded") for d in b.DATASETS]
    )
    write_exports(results, runs, b.submissions(["zeta", "alpha", "broken"]), site)
    generate_pages(site)
    public = build_site(root, strict=True)
    overview = b.text(public / "index.html")
    assert "Not ranked" in overview and "Broken-BERT" in overview
    assert "model could not be loaded" in overview
    page = b.text(public / "submissions" / "broken" / "index.html")
    assert "No results yet" in page and "model could not be loaded" in page


def test_stale_generated_pages_are_removed(tmp_path) -> None:
    _, site = b.repo(tmp_path)
    for folder in ("submissions", "tracks"):
        (site / folder).mkdir()
        (site / folder / "gone.md").write_text(GENERATED_HEADER + "\n\n# Gone\n", encoding="utf-8")
        (site / folder / "notes.md").write_text("# Hand-written\n", encoding="utf-8")
    generate_pages(site)
    for folder in ("submissions", "tracks"):
        assert not (site / folder / "gone.md").exists()
        assert (site / folder / "notes.md").exists()


def test_broken_link_fails_strict_build(tmp_path) -> None:
    root, site = b.repo(tmp_path)
    generate_pages(site)
    (site / "methodology.md").write_text("# M\n\n[missing](nowhere.md)\n", encoding="utf-8")
    with pytest.raises(SiteBuildError, match="nowhere.md"):
        build_site(root, strict=True)
    assert build_site(root, strict=False).is_dir()


def test_missing_value_is_a_dash(tmp_path) -> None:
    root, site = b.repo(tmp_path)
    results = b.results({"zeta": 0.9, "alpha": 0.6})
    hole = (
        (results["submission"] == "alpha")
        & (results["dataset"] == "chebi20")
        & (results["augmentation"] == "kekule")
        & (results["layer"] == "last")
        & (results["distance"] == "l2")
        & (results["direction"] == "original_to_augmented")
        & (results["subset"] == "non_trivial")
        & (results["metric"] == "acc_at_1")
    )
    assert hole.sum() == 1
    results.loc[hole, "value"] = float("nan")
    write_exports(results, pd.DataFrame(), b.submissions(["zeta", "alpha"]), site)
    generate_pages(site)
    build_site(root, strict=True)
    index = (site / "index.md").read_text(encoding="utf-8")
    alpha_row = next(line for line in index.splitlines() if "Alpha-BERT" in line and line.startswith("| 2"))
    assert "—" in alpha_row and "lacks capability" not in alpha_row  # missing, not "cannot run"


def test_rank_changes_are_shown_with_arrows() -> None:
    assert [change(2), change(-1), change(0)] == ["↑2", "↓1", "="]


def test_methodology_from_declarations(built: dict) -> None:
    from evaluators.datasets import DATASETS

    text = b.text(built["public"] / "methodology" / "index.html")
    for name in DATASETS.names():
        spec = DATASETS.get(name)
        assert name in text and spec.license in text
        for data_file in spec.files:
            assert data_file.sha256 in text
    for part in (
        "Acc@1",
        "MRR",
        "Recall@K",
        "Borda",
        "Minimax",
        "Rank intervals and groups",
        "Failure explorer",
    ):
        assert part in text, part
    # Generated from the track's class: its dimensions, metric labels and headline criterion.
    for part in ("augmentation", "inner product", "HNSW (approximate)", "n non-trivial", "higher", "lower"):
        assert part in text, part
    assert "Acc@1 on non-trivial pairs (last layer, L2, original → augmented)" in text


def test_downloads_page_lists_declared_tables(built: dict) -> None:
    text = b.text(built["public"] / "downloads" / "index.html")
    assert "results.json" not in text
    assert "item_ranks.csv.gz" in text and "recall_at_k.csv.gz" in text
    assert "original, augmented" in text.replace("`", "")


def test_how_to_submit_and_security_pages_are_in_the_nav(built: dict) -> None:
    for page in ("how-to-submit", "security"):
        assert (built["public"] / page / "index.html").is_file()
    nav = (built["public"] / "index.html").read_text(encoding="utf-8")
    assert "How to submit" in nav and "Security model" in nav and "Tracks" in nav
    # No valid manifest in this repository: the fallback page points to the contributor guide.
    assert "CONTRIBUTING.md" in b.text(built["public"] / "how-to-submit" / "index.html")


def test_vendored_tablesort_and_table_script() -> None:
    folder = b.REPO_ROOT / "site" / "javascripts" / "tablesort"
    for rel in ("tablesort.min.js", "sorts/tablesort.number.min.js"):
        head = (folder / rel).read_text(encoding="utf-8")[:200]
        assert "tablesort v5.7.1" in head and "Licensed MIT" in head, rel
    assert "5.7.1" in (folder / "README.md").read_text(encoding="utf-8")
    assert (folder / "LICENCE").is_file()
    config = (b.REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    order = [
        config.index(f"javascripts/{p}")
        for p in ("tablesort/tablesort.min.js", "tablesort/sorts", "tables.js")
    ]
    assert order == sorted(order)
    js = (b.REPO_ROOT / "site" / "javascripts" / "tables.js").read_text(encoding="utf-8")
    assert "document$.subscribe" in js and "new Tablesort(" in js and "table:not([class])" in js
    assert "http://" not in js and "https://" not in js


def test_committed_site_builds_from_its_data(fresh_clone_build) -> None:
    """The committed site/data regenerates into pages that build strictly (the record stays readable).

    The build is the session's fresh-clone build (tests/site/conftest.py: ``mkdocs build --strict`` from the
    committed files and an empty store); test_site_merge.py checks it changes no committed file.
    """
    assert fresh_clone_build.status == 0, fresh_clone_build.out
    root = fresh_clone_build.root
    public = root / "public"
    ranking = b.text(public / "index.html")
    cards = {
        r["id"]: r["name"] for r in json.loads((root / "site" / "data" / "submissions.json").read_text())
    }
    # Each board ranks the committed record exactly as rank_boards does (references left out), best first.
    boards = rank_boards(read_results(root / "site"), references(b.REPO_ROOT))
    titles = [board.spec.title for board in boards.values()] + ["How to read the boards"]
    for board, end in zip(boards.values(), titles[1:], strict=True):
        section = ranking[ranking.index(board.spec.title) : ranking.index(end)]
        rows = board.ranking.copeland.iterrows()
        positions = [section.index(f"{int(row['rank'])} {cards[sub]}") for sub, row in rows]
        assert positions == sorted(positions) and len(positions) >= 3
        for ref in board.references.index:  # shown, marked, never with a rank number
            assert f"– {cards[ref]} reference" in section, ref
