"""Downstream probes (T2) end to end: labels stay on the host, the probe sees only training molecules, a
fingerprint model that cannot tell rewrites apart loses nothing, and the numbers match scikit-learn."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evaluators.datasets import load_records
from evaluators.datasets.views import VIEW_FILE
from evaluators.job import JobError, run_job
from evaluators.schema import Job, ModelConfig, TrackOptions
from evaluators.tracks import TRACKS, benchmark_version
from evaluators.tracks.downstream import DOWNSTREAM_TASKS, REWRITES, DownstreamTrack
from evaluators.tracks.downstream import scoring as downstream_scoring
from evaluators.tracks.downstream.probes import fit_probe
from evaluators.tracks.downstream.splits import random_split
from evaluators.tracks.downstream.view import SPLIT_METHODS
from leaderboard.execution.evaluate import Evaluator, data_view
from leaderboard.settings import Settings
from leaderboard.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
AUGMENTATIONS = ("explicit_h", "kekule", "ring_renumber", "random_order")


def _job(dataset: str, data_root: Path, adapter: str = "morgan_fingerprint", limit: int | None = None) -> Job:
    from evaluators.datasets import dataset_hash

    options = TrackOptions(limit=limit)
    version = benchmark_version("downstream", options, dataset_hash(dataset, data_root))
    return Job("x", "downstream", dataset, version, options, ModelConfig(adapter=adapter))


def _run_in_process(tmp: Path, dataset: str, data_root: Path, **kw) -> tuple[Job, Path, Path]:
    """Write the view the way the host does, run the job on it, return (job, view folder, out folder)."""
    work = tmp / "work"
    work.mkdir()
    job = _job(dataset, data_root, **kw)
    job, container_data = data_view(job, work, data_root, _data_hash(dataset, data_root))
    (work / "job.json").write_text(json.dumps(job.to_json()))
    out = work / "out"
    run_job(work / "job.json", data_dir=container_data, models_dir=tmp / "models", out_dir=out,
            submission_dir=tmp / "submission", log=lambda _: None)  # fmt: skip
    return job, container_data, out


def _data_hash(dataset: str, data_root: Path) -> str:
    from evaluators.datasets import dataset_hash

    return dataset_hash(dataset, data_root)


def test_the_container_gets_no_label_and_a_tampered_view_is_refused(tmp_path, benchmark_data) -> None:
    root = benchmark_data("esol")
    job, container_data, out = _run_in_process(tmp_path, "esol", root, limit=120)
    # Only the view is mounted: one file, columns id/split/smiles, none of the set's labels.
    assert sorted(p.relative_to(container_data).as_posix() for p in container_data.rglob("*")) == [
        "esol", f"esol/{VIEW_FILE}"]  # fmt: skip
    with (container_data / "esol" / VIEW_FILE).open() as handle:
        view = list(csv.DictReader(handle))
    assert list(view[0]) == ["id", "split", "smiles"] and len(view) == 120
    assert {r["split"] for r in view} == {"train", "test"}
    labels = {r["label"] for r in load_records("esol", root, limit=120)}
    assert not labels & {cell for r in view for cell in r.values()}
    # The run wrote embeddings and their index, nothing scored (scoring is the host's).
    result = json.loads((out / "result.json").read_text())
    assert {r["metric"] for r in result["rows"]} == {"n_train", "n_test", "n_changed", "n_excluded"}
    assert job.data_view is not None and job.data_view.data_hash == _data_hash("esol", root)
    # One byte changed in the view: the container refuses to run rather than embed something else.
    view_path = container_data / "esol" / VIEW_FILE
    view_path.chmod(0o644)
    view_path.write_text(view_path.read_text().replace(",test,", ",train,", 1))
    with pytest.raises(JobError, match="sha256"):
        run_job(tmp_path / "work" / "job.json", data_dir=container_data, models_dir=tmp_path / "models",
                out_dir=tmp_path / "out2", submission_dir=tmp_path / "submission",
                log=lambda _: None)  # fmt: skip


def test_probe_cross_validation_sees_training_molecules_only(tmp_path, benchmark_data, monkeypatch) -> None:
    root = benchmark_data("esol")
    _, container_data, out = _run_in_process(tmp_path, "esol", root, limit=200)
    seen: dict[str, np.ndarray] = {}

    def spy(features, labels, kind, *, seed=0):
        seen["features"], seen["labels"] = np.array(features), np.array(labels)
        return fit_probe(features, labels, kind, seed=seed)

    monkeypatch.setattr(downstream_scoring, "fit_probe", spy)
    rows = DownstreamTrack.view_rows("esol", load_records("esol", root, limit=200), TrackOptions(limit=200))
    records, view = [r.record for r in rows], [r.shown() for r in rows]
    scored = downstream_scoring.score_probe(records=records, view=view, label_field="label",
                                            kind="regression", out_dir=out,
                                            variants=("original", *AUGMENTATIONS), seed=0,
                                            n_boot=50)  # fmt: skip
    train_ids = [r.record["id"] for r in rows if r.split == "train"]
    test_ids = {r.record["id"] for r in rows if r.split == "test"}
    labels = {r["id"]: float(r["label"]) for r in records}
    # The probe got exactly the training molecules' labels, in order, and nothing of the test set.
    assert seen["labels"].tolist() == [labels[i] for i in train_ids]
    assert len(seen["features"]) == len(train_ids) and not test_ids & set(train_ids)
    predicted = {p["id"] for p in scored.predictions}
    assert predicted == test_ids


def test_rmse_and_auc_agree_with_scikit_learn(tmp_path, benchmark_data) -> None:
    from sklearn.metrics import mean_squared_error, roc_auc_score

    for dataset in ("esol", "bbbp"):
        root = benchmark_data(dataset)
        _, _, out = _run_in_process(_fresh(tmp_path / dataset), dataset, root, limit=300)
        rows = DownstreamTrack.view_rows(
            dataset, load_records(dataset, root, limit=300), TrackOptions(limit=300)
        )
        field, kind = DOWNSTREAM_TASKS[dataset]
        records, view = [r.record for r in rows], [r.shown() for r in rows]
        scored = downstream_scoring.score_probe(records=records, view=view, label_field=field, kind=kind,
                                                out_dir=out, variants=("original", *AUGMENTATIONS), seed=0,
                                                n_boot=50)  # fmt: skip
        preds = [p for p in scored.predictions if p["variant"] == "original"]
        y, p = np.array([q["label"] for q in preds]), np.array([q["prediction"] for q in preds])
        metric = "rmse" if kind == "regression" else "roc_auc"
        expected = np.sqrt(mean_squared_error(y, p)) if kind == "regression" else roc_auc_score(y, p)
        got = {r["metric"]: r["value"] for r in scored.rows if r["variant"] == "original"}
        assert got[metric] == pytest.approx(expected, abs=1e-9)
        assert got["score_low"] <= got[metric] <= got["score_high"]


def _fresh(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_evaluate_puts_t2_on_the_board_and_the_fingerprint_loses_nothing(tmp_path, benchmark_data) -> None:
    benchmark_data("esol")  # the mirror or cache has it (skips outside CI when it cannot be had)
    subs = tmp_path / "submissions"
    for name in ("morgan-fingerprint-reference", "char-ngram-baseline"):
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    state = tmp_path / "state"
    state.mkdir()
    lines: list[str] = []

    def evaluator() -> Evaluator:
        store = ResultStore(f"sqlite:///{state}/mlflow.db", artifact_root=state / "artifacts")
        settings = Settings.from_environment(repo_root=ROOT, state_dir=state)  # CHEMROBUST_DATA_DIR: mirror
        return Evaluator(ROOT, state, store, runner="in-process", options=TrackOptions(limit=400),
                         submissions_dir=subs, log=lines.append, settings=settings)  # fmt: skip

    summary = evaluator().run(None, ["esol"])
    assert summary.computed == 2 and not summary.failed, lines
    results, _ = ResultStore(f"sqlite:///{state}/mlflow.db").export()
    mine = results.loc[results["track"] == "downstream"]
    drop = mine.loc[mine["metric"] == "degradation"].set_index(["submission", "variant"])["value"]
    # Morgan fingerprints are computed from the parsed molecule: every rewrite gives the same features.
    assert (drop.loc["morgan-fingerprint-reference"] == 0.0).all()
    assert len(drop.loc["morgan-fingerprint-reference"]) == len(REWRITES) + 1  # four and the worst
    # Character n-grams see the string: some rewrite costs the probe accuracy.
    assert drop.loc[("char-ngram-baseline", "worst")] > 0.0
    # A second evaluation with nothing changed recomputes nothing.
    again = evaluator().run(None, ["esol"])
    assert (again.computed, again.reused) == (0, 2)
    assert TRACKS.get("downstream") is DownstreamTrack


@pytest.mark.parametrize("dataset", sorted(DOWNSTREAM_TASKS))
def test_every_set_has_its_pinned_split(benchmark_data, dataset) -> None:
    from evaluators.tracks.downstream import SPLIT_SHA256, split_sha256
    from evaluators.tracks.downstream.splits import murcko_scaffold

    records = load_records(dataset, benchmark_data(dataset))
    rows = DownstreamTrack.view_rows(dataset, records, TrackOptions())  # raises on a changed split
    split_of = {r.record["id"]: r.split for r in rows}
    splits = [split_of[r["id"]] for r in records]
    assert split_sha256([r["id"] for r in records], splits) == SPLIT_SHA256[dataset]
    assert 0.15 < splits.count("test") / len(splits) < 0.25 and set(splits) == {"train", "test"}
    if SPLIT_METHODS[dataset] == "scaffold":  # disjoint by scaffold
        sides: dict[str | None, set[str]] = {}
        for r, s in zip(records, splits, strict=True):
            sides.setdefault(murcko_scaffold(r["smiles"]), set()).add(s)
        assert all(len(v) == 1 for k, v in sides.items() if k is not None)


def test_rank_auc_is_scikit_learns_auc_with_ties() -> None:
    from sklearn.metrics import roc_auc_score

    from evaluators.tracks.downstream.probes import rank_auc

    rng = np.random.default_rng(3)
    for _ in range(50):
        y = rng.integers(0, 2, size=40)
        y[:2] = (0, 1)
        p = np.round(rng.random(40), 1)  # many ties
        assert rank_auc(y, p) == pytest.approx(roc_auc_score(y, p), abs=1e-12)


def test_the_host_computes_a_sets_split_once_per_run(tmp_path, benchmark_data, monkeypatch) -> None:
    import evaluators.tracks.downstream.view as view_module
    from leaderboard.execution.results import read_result

    root = benchmark_data("esol")
    calls: list[int] = []

    def counting(keys, **kw):
        calls.append(len(keys))
        return random_split(keys, **kw)

    monkeypatch.setattr(view_module, "random_split", counting)
    view_module._cached.cache_clear()
    # What the host does in one run: write the container's view, then read and score the result.
    job, container_data, out = _run_in_process(tmp_path, "esol", root, limit=120)
    scored = read_result(out, job=job, data_dir=root)
    assert calls == [120]  # the view and the scoring share one split
    view = (container_data / "esol" / VIEW_FILE).read_text().splitlines()
    n_test = sum(1 for line in view if ",test," in line)
    assert {r.metric: r.value for r in scored.rows if r.metric == "n_test"} == {"n_test": n_test}
