"""Tests for leaderboard/site.py: exports, generated pages and a strict MkDocs build."""

from __future__ import annotations

import html
import itertools
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from leaderboard.site import (
    GENERATED_HEADER,
    RESULT_COLUMNS,
    RUN_KEYS,
    SUBMISSION_KEYS,
    SiteBuildError,
    build_site,
    generate_pages,
    read_results,
    reproduce_command,
    write_exports,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
AUGMENTATIONS = ("canonical", "explicit_h", "kekule", "ring_renumber", "random_order")
DATASETS = ("datamol-default", "chebi20")

# Headline Acc@1 per submission: "zeta" beats everyone on every criterion, "alpha" is second,
# "mu" third (and only has datamol-default: its chebi20 run failed). Names are chosen so that the
# Copeland order (zeta, alpha, mu) differs from the alphabetical one.
BASE_SCORE = {"zeta": 0.9, "alpha": 0.6, "mu": 0.3}
FAILED_REASON = "CUDA out of memory while embedding batch 3 (reduce batch_size)"
RUN_ID = "0123456789abcdef0123456789abcdef"


def _results(base: dict[str, float]) -> pd.DataFrame:
    rows = []
    for sub, score in base.items():
        datasets = ("datamol-default",) if sub == "mu" else DATASETS
        for dataset, (a, aug) in itertools.product(datasets, enumerate(AUGMENTATIONS)):
            for layer, distance, direction, subset in itertools.product(
                ("0", "last"),
                ("l2", "cosine"),
                ("original_to_augmented", "augmented_to_original"),
                ("all", "non_trivial"),
            ):
                acc1 = round(score - 0.05 * a - (0.01 if subset == "non_trivial" else 0.0), 6)
                for metric, value in (("acc_at_1", acc1), ("acc_at_5", acc1 + 0.05), ("mrr", acc1 + 0.02)):
                    rows.append(
                        (sub, "amore", dataset, aug, layer, distance, direction, subset, metric, value)
                    )
            for metric, value in (("n_pairs", 100.0), ("n_identical", 10.0 * a), ("n_excluded", 0.0)):
                rows.append(
                    (sub, "amore", dataset, aug, "last", "l2", "original_to_augmented", "all", metric, value)
                )
    # Unsorted on purpose: write_exports must sort deterministically.
    return pd.DataFrame(rows[::-1], columns=list(RESULT_COLUMNS))


def _run(sub: str, dataset: str, status: str = "FINISHED", reason: str | None = None) -> dict:
    return {
        "submission": sub,
        "track": "amore",
        "dataset": dataset,
        "status": status,
        "reason": reason,
        "run_id": f"{RUN_ID}{sub}-{dataset}" if sub != "zeta" else RUN_ID,
        "image_tag": f"chemrobust/{sub}:abc123",
        "image_id": "sha256:" + "f" * 64,
        "benchmark_version": "amore-v1-1a2b3c",
        "data_hash": "sha256:" + "d" * 16,
        "model_revision": "a" * 40,
        "runner": "docker",
        "hardware": json.dumps({"cpu": "AMD EPYC", "gpu": None}),
        "git_commit": "c" * 40,
        "started_at": 1_735_689_600_000,  # MLflow milliseconds
        "duration_s": 12.5,
    }


def _runs() -> pd.DataFrame:
    runs = [_run("zeta", "datamol-default")]
    runs += [_run("alpha", d) for d in DATASETS]
    runs += [_run("mu", "datamol-default"), _run("mu", "chebi20", "FAILED", FAILED_REASON + "\nTraceback...")]
    return pd.DataFrame(runs)


def _submissions(ids: list[str]) -> list[dict]:
    return [
        {
            "id": sub,
            "name": f"{sub.capitalize()}-BERT | v1",
            "authors": ["A. Author", "B. Author"],
            "contact": "a@example.org",
            "license": "MIT",
            "url": "https://example.org/paper",
            "description": f"A test model called {sub}.",
            "architecture": "encoder",
            "source": {"type": "huggingface", "id": f"org/{sub}", "revision": "a" * 40},
            "capabilities": ["embed"],
            "training_data": "ZINC (assumed)",
            "pooling": "mean",
            "tracks": ["amore"],
            "unknown_extra": "dropped",
        }
        for sub in ids
    ]


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    (root / "site").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "mkdocs.yml", root / "mkdocs.yml")
    return root, root / "site"


def _text(page: Path) -> str:
    """Visible text of the page's article (without the navigation and table of contents)."""
    raw = page.read_text(encoding="utf-8")
    article = re.search(r"<article\b.*?</article>", raw, flags=re.S)
    assert article is not None, page
    text = re.sub(r"</?(span|code|a|strong|em)\b[^>]*>", "", article.group(0))  # inline tags
    text = re.sub(r"<[^>]+>", " ", text)
    return re.sub(r"\s+", " ", html.unescape(text))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = _repo(tmp_path_factory.mktemp("site"))
    results = _results(BASE_SCORE)
    write_exports(results, _runs(), _submissions(["mu", "alpha", "zeta"]), site)
    pages = generate_pages(site)
    public = build_site(root, strict=True)
    return {"root": root, "site": site, "public": public, "results": results, "pages": pages}


def test_strict_build_and_every_page_is_generated(built: dict) -> None:
    public = built["public"]
    assert (public / "index.html").is_file()
    for rel in ("amore", "methodology", "downloads", "submissions", "submissions/zeta"):
        assert (public / rel / "index.html").is_file(), rel
    for name in ("results.csv", "results.json", "runs.json", "submissions.json"):
        assert (public / "data" / name).is_file()
    for page in built["pages"]:
        assert page.read_text(encoding="utf-8").startswith(GENERATED_HEADER + "\n")
    names = {p.relative_to(built["site"]).as_posix() for p in built["pages"]}
    assert {"index.md", "amore.md", "methodology.md", "downloads.md", "submissions/index.md"} <= names
    assert {"submissions/zeta.md", "submissions/alpha.md", "submissions/mu.md"} <= names


def test_overview_ranks_by_copeland(built: dict) -> None:
    text = _text(built["public"] / "index.html")
    ranking = text[text.index("Overall ranking") : text.index("Failed runs")]
    positions = [ranking.index(f"{sub.capitalize()}-BERT | v1") for sub in ("zeta", "alpha", "mu")]
    assert positions == sorted(positions)
    # zeta beats both, alpha beats mu: scores +2, 0, -2.
    assert re.search(r"1\s+Zeta-BERT \| v1\s+\+2\s+2 / 0 / 0", ranking)
    assert re.search(r"2\s+Alpha-BERT \| v1\s+0\s+1 / 1 / 0", ranking)
    assert re.search(r"3\s+Mu-BERT \| v1\s+-2\s+0 / 2 / 0", ranking)
    assert "Condorcet winner" in ranking and "Zeta-BERT" in ranking
    assert "10 criteria" in ranking
    # Headline value: zeta, datamol-default/canonical, non-trivial = 0.9 - 0.01.
    assert "0.890" in ranking


def test_failed_run_reason_on_overview(built: dict) -> None:
    text = _text(built["public"] / "index.html")
    failed = text[text.index("Failed runs") :]
    assert FAILED_REASON in failed
    assert "Traceback" not in failed  # one line only
    assert "chebi20" in failed and "Mu-BERT" in failed


def test_results_csv_round_trips(built: dict) -> None:
    expected = built["results"].sort_values(list(RESULT_COLUMNS[:-1])).reset_index(drop=True)
    got = read_results(built["site"])
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    raw = pd.read_csv(built["public"] / "data" / "results.csv")
    assert list(raw.columns) == list(RESULT_COLUMNS)
    assert raw["value"].tolist() == expected["value"].tolist()
    records = json.loads((built["site"] / "data" / "results.json").read_text(encoding="utf-8"))
    assert isinstance(records, list) and len(records) == len(expected)
    assert records[0] == dict(zip(RESULT_COLUMNS, expected.iloc[0].tolist(), strict=True))


def test_runs_and_submissions_json(built: dict) -> None:
    runs = json.loads((built["site"] / "data" / "runs.json").read_text(encoding="utf-8"))
    assert all(list(r) == list(RUN_KEYS) for r in runs)
    assert {r["status"] for r in runs} == {"FINISHED", "FAILED"}
    assert runs[0]["hardware"] == {"cpu": "AMD EPYC", "gpu": None}
    assert runs[0]["started_at"] == "2025-01-01T00:00:00+00:00"
    subs = json.loads((built["site"] / "data" / "submissions.json").read_text(encoding="utf-8"))
    assert [s["id"] for s in subs] == ["alpha", "mu", "zeta"]
    assert all(list(s) == list(SUBMISSION_KEYS) for s in subs)


def test_submission_page_has_provenance_and_reproduce_command(built: dict) -> None:
    text = _text(built["public"] / "submissions" / "zeta" / "index.html")
    assert reproduce_command("zeta", "datamol-default") in text
    assert "nox -s evaluate -- --submission zeta --dataset datamol-default" in text
    assert RUN_ID in text
    assert "sha256:" + "f" * 64 in text  # image id
    assert "amore-v1-1a2b3c" in text and "c" * 40 in text
    assert "Acc@1" in text and "0.890" in text


def test_failed_submission_page(built: dict) -> None:
    text = _text(built["public"] / "submissions" / "mu" / "index.html")
    assert FAILED_REASON in text
    assert "nox -s evaluate -- --submission mu --dataset chebi20" in text


def test_amore_page_tables(built: dict) -> None:
    text = _text(built["public"] / "amore" / "index.html")
    for part in ("datamol-default", "chebi20", "ring_renumber", "n identical", "cosine distance"):
        assert part in text
    assert "0.010" in text  # chance level 1/100


def test_generation_is_deterministic(built: dict, tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    write_exports(
        built["results"].sample(frac=1.0, random_state=0),
        _runs(),
        _submissions(["zeta", "mu", "alpha"]),
        site,
    )
    for page in generate_pages(site):
        rel = page.relative_to(site)
        assert page.read_bytes() == (built["site"] / rel).read_bytes(), rel
    for name in ("results.csv", "results.json", "runs.json", "submissions.json"):
        assert (site / "data" / name).read_bytes() == (built["site"] / "data" / name).read_bytes()


def test_no_results_builds_strictly(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    write_exports(pd.DataFrame(columns=list(RESULT_COLUMNS)), pd.DataFrame(), [], site)
    generate_pages(site)
    public = build_site(root, strict=True)
    assert "No results yet" in _text(public / "index.html")


def test_no_data_dir_builds_strictly(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    generate_pages(site)
    public = build_site(root, strict=True)
    assert "No data exported yet" in _text(public / "downloads" / "index.html")


def test_all_runs_failed_submission(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    results = _results({"zeta": 0.9, "alpha": 0.6})
    runs = pd.DataFrame(
        [_run("zeta", "datamol-default"), _run("alpha", "datamol-default")]
        + [_run("broken", d, "FAILED", "submission.yaml: model could not be loaded") for d in DATASETS]
    )
    write_exports(results, runs, _submissions(["zeta", "alpha", "broken"]), site)
    generate_pages(site)
    public = build_site(root, strict=True)
    overview = _text(public / "index.html")
    assert "Not ranked" in overview and "Broken-BERT" in overview
    assert "model could not be loaded" in overview
    page = _text(public / "submissions" / "broken" / "index.html")
    assert "No results yet" in page and "model could not be loaded" in page


def test_stale_generated_pages_are_removed(tmp_path: Path) -> None:
    _, site = _repo(tmp_path)
    (site / "submissions").mkdir()
    stale = site / "submissions" / "gone.md"
    stale.write_text(GENERATED_HEADER + "\n\n# Gone\n", encoding="utf-8")
    handwritten = site / "submissions" / "notes.md"
    handwritten.write_text("# Hand-written\n", encoding="utf-8")
    generate_pages(site)
    assert not stale.exists()
    assert handwritten.exists()


def test_broken_link_fails_strict_build(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    generate_pages(site)
    (site / "methodology.md").write_text("# M\n\n[missing](nowhere.md)\n", encoding="utf-8")
    with pytest.raises(SiteBuildError, match="nowhere.md"):
        build_site(root, strict=True)
    assert build_site(root, strict=False).is_dir()


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r.drop(columns=["subset"]), "missing columns"),
        (lambda r: pd.concat([r, r.iloc[:1]]), "repeat a key"),
        (lambda r: r.assign(submission="../evil"), "not a slug"),
        (lambda r: r.assign(value="high"), "must be numeric"),
        (lambda r: r.assign(submission="index"), "reserved"),
    ],
)
def test_write_exports_rejects_bad_results(tmp_path: Path, mutate, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        write_exports(mutate(_results({"zeta": 0.9})), pd.DataFrame(), [], tmp_path)


def test_write_exports_rejects_unknown_run_status(tmp_path: Path) -> None:
    runs = pd.DataFrame([_run("zeta", "chebi20", "RUNNING")])
    with pytest.raises(ValueError, match="RUNNING"):
        write_exports(_results({"zeta": 0.9}), runs, [], tmp_path)


def test_missing_value_is_null_and_dash(tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    results = _results({"zeta": 0.9, "alpha": 0.6})
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
    write_exports(results, pd.DataFrame(), _submissions(["zeta", "alpha"]), site)
    records = json.loads((site / "data" / "results.json").read_text(encoding="utf-8"))
    assert sum(r["value"] is None for r in records) == 1
    assert read_results(site)["value"].isna().sum() == 1
    generate_pages(site)
    build_site(root, strict=True)
    index = (site / "index.md").read_text(encoding="utf-8")
    alpha_row = next(line for line in index.splitlines() if "Alpha-BERT" in line and line.startswith("| 2"))
    assert "—" in alpha_row
