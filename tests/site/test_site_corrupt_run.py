"""A bad stored run never breaks the build: a run written to MLflow by other means than the pipeline (a hand
edit, an older version, a damaged file) is listed as failed with the reason, and everything else builds."""

from __future__ import annotations

import gzip
import json
import shutil
import warnings
from pathlib import Path

import pytest

from leaderboard.intake.manifest import load_submission
from leaderboard.site.build import build_site, generate_pages
from leaderboard.site.exports import write_exports
from leaderboard.store import KEY_TAG, ResultStore
from tests._mkdocs import copy_mkdocs_config

ROOT = Path(__file__).resolve().parents[2]
GOOD_ROW = {"augmentation": "kekule", "layer": "last", "distance": "l2", "direction": "original_to_augmented",
            "subset": "non_trivial", "metric": "acc_at_1", "value": 0.5}  # fmt: skip


def _document(submission: str, rows: list) -> dict:
    return {"schema_version": 2, "submission_id": submission, "track": "amore", "track_version": 2,
            "dataset": "datamol-default", "data_hash": "h", "benchmark_version": "v", "seed": 0,
            "rows": rows}  # fmt: skip


def _store_directly(store: ResultStore, tmp: Path, submission: str, files: dict[str, bytes]) -> str:
    """Put a FINISHED run into MLflow the way no pipeline code would: no checks at all."""
    run = store.client.create_run(
        store.experiment_id,
        run_name=submission,
        tags={
            KEY_TAG: f"k-{submission}",
            "submission": submission,
            "track": "amore",
            "dataset": "datamol-default",
        },  # fmt: skip
    )
    folder = tmp / f"out-{submission}"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content)
        store.client.log_artifact(run.info.run_id, str(folder / name))
    store.client.set_terminated(run.info.run_id, "FINISHED")
    return run.info.run_id


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        (
            "unknown-metric",
            json.dumps(_document("bad", [{**GOOD_ROW, "metric": "made_up"}])),
            "unknown metric",
        ),
        ("unknown-value", json.dumps(_document("bad", [{**GOOD_ROW, "distance": "<b>x</b>"}])), "'distance'"),
        ("other-run", json.dumps(_document("someone-else", [GOOD_ROW])), "another submission"),
        ("not-json", "{not json", "JSONDecodeError"),
        ("not-an-object", "[1, 2, 3]", "must be an object"),
    ],
)
def test_a_corrupt_stored_run_is_listed_as_failed_and_the_site_still_builds(tmp_path, name, content, reason):
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    ranks = b"augmentation,id\nkekule,m1\n"  # a damaged per-item table of the good run: wrong columns
    _store_directly(
        store, tmp_path, "char-ngram-baseline",
        {"result.json": json.dumps(_document("char-ngram-baseline", [GOOD_ROW])).encode(),
         "ranks.csv.gz": gzip.compress(ranks)},
    )  # fmt: skip
    _store_directly(store, tmp_path, "bad", {"result.json": content.encode()})

    results, runs = store.export()
    assert set(results["submission"]) == {"char-ngram-baseline"}
    bad = runs.set_index("submission").loc["bad"]
    assert bad["status"] == "FAILED" and "stored result cannot be read" in bad["reason"]
    assert reason in bad["reason"], bad["reason"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = store.export_tables()
    assert tables["item_ranks"].empty and any("ranks.csv.gz not exported" in str(w.message) for w in caught)

    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT / "site", repo / "site", ignore=shutil.ignore_patterns("data", "submissions", "tracks")
    )
    copy_mkdocs_config(repo)
    cards = [
        load_submission(ROOT / "submissions" / "char-ngram-baseline" / "submission.yaml").card()
    ]
    write_exports(results, runs, cards, repo / "site", tables=tables)
    generate_pages(repo / "site", repo_root=ROOT)
    public = build_site(repo, strict=True)
    overview = (public / "index.html").read_text(encoding="utf-8")
    # A ranked model (a reference alone would be shown on no board: it is placed among ranked models).
    assert "Character n-gram baseline" in overview and "stored result cannot be read" in overview
