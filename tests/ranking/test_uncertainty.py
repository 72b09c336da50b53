"""Tests for ``leaderboard.ranking.uncertainty`` (rank intervals) and ``ResultStore.export_item_ranks``."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking import uncertainty
from leaderboard.ranking.copeland import copeland_ranking
from leaderboard.ranking.uncertainty import (
    INTERVAL_COLUMNS,
    bootstrap_ranks,
    cached_rank_intervals,
    item_values_from_ranks,
    point_table,
    rank_intervals,
)


def _items(values: dict[str, np.ndarray], *, datasets: dict[str, int], augs: int = 2) -> pd.DataFrame:
    """Long per-item table; ``values[system]`` holds one value per (dataset, augmentation, item) in order."""
    rows = []
    for system, vals in values.items():
        k = 0
        for dataset, n in datasets.items():
            for a in range(augs):
                for i in range(n):
                    rows.append(
                        (system, f"amore/{dataset}/aug{a}/acc_at_1", f"{dataset}-{i:04d}", float(vals[k]))
                    )
                    k += 1
    return pd.DataFrame(rows, columns=["submission", "criterion", "item", "value"])


DATASETS = {"d1": 60, "d2": 40}
N_VALUES = sum(DATASETS.values()) * 2


@pytest.fixture(scope="module")
def mixed() -> pd.DataFrame:
    """Six systems of graded skill with noisy 0/1 per-item results (some close calls)."""
    rng = np.random.default_rng(11)
    skill = {"s1": 0.8, "s2": 0.75, "s3": 0.6, "s4": 0.58, "s5": 0.4, "s6": 0.2}
    return _items({s: (rng.random(N_VALUES) < p).astype(float) for s, p in skill.items()}, datasets=DATASETS)


# --------------------------------------------------------------------------- intervals


def test_intervals_contain_the_point_rank_and_match_the_leaderboard(mixed: pd.DataFrame) -> None:
    out = rank_intervals(mixed, seed=0, n_boot=300)
    assert list(out.columns) == list(INTERVAL_COLUMNS)
    assert out.index.name == "system"
    assert ((out["rank_lo"] <= out["rank"]) & (out["rank"] <= out["rank_hi"])).all()
    assert (out["rank_lo"] >= 1).all() and (out["rank_hi"] <= len(out)).all()
    # The point ranking is Copeland on the per-criterion means, as on the leaderboard.
    want = copeland_ranking(point_table(mixed))
    assert out["rank"].to_dict() == want["rank"].to_dict()
    assert out["score"].to_dict() == want["score"].to_dict()
    # Close calls make some intervals wider than one rank.
    assert (out["rank_hi"] > out["rank_lo"]).any()
    # Groups are consecutive tiers along the point ranking.
    assert out["group"].iloc[0] == 1
    assert (out["group"].diff().dropna().isin([0, 1])).all()


def test_dominant_system_has_interval_one_one() -> None:
    rng = np.random.default_rng(1)
    values = {"top": np.ones(N_VALUES)} | {f"o{i}": rng.random(N_VALUES) * 0.9 for i in range(4)}
    out = rank_intervals(_items(values, datasets=DATASETS), seed=3, n_boot=200)
    assert out.loc["top", ["rank", "rank_lo", "rank_hi"]].tolist() == [1, 1, 1]
    assert out.loc["top", "group"] == 1
    assert (out.drop(index="top")["group"] > 1).all()  # alone in its group


def test_identical_systems_are_inseparable() -> None:
    rng = np.random.default_rng(2)
    twin = (rng.random(N_VALUES) < 0.6).astype(float)
    values = {
        "twin_a": twin,
        "twin_b": twin.copy(),
        "weak": (rng.random(N_VALUES) < 0.1).astype(float),
    }
    items = _items(values, datasets=DATASETS)
    out = rank_intervals(items, seed=0, n_boot=200)
    assert out.loc["twin_a", "group"] == out.loc["twin_b", "group"]
    assert (
        out.loc["twin_a", ["rank", "rank_lo", "rank_hi"]].tolist()
        == out.loc["twin_b", ["rank", "rank_lo", "rank_hi"]].tolist()
    )
    result = bootstrap_ranks(items, seed=0, n_boot=200)
    assert result.p_better.loc["twin_a", "twin_b"] == 0.0
    assert result.p_better.loc["twin_b", "twin_a"] == 0.0
    assert (result.ranks["twin_a"] == result.ranks["twin_b"]).all()


def test_resampling_is_paired_across_systems() -> None:
    """The same molecules are drawn for every system: a uniform per-item edge wins every replicate."""
    rng = np.random.default_rng(4)
    base = rng.random(N_VALUES)  # widely spread per-item scores
    items = _items({"a": base, "b": base + 0.01, "c": rng.random(N_VALUES) * 0.2}, datasets=DATASETS)
    result = bootstrap_ranks(items, seed=5, n_boot=300)
    assert result.p_better.loc["b", "a"] == 1.0
    out = rank_intervals(items, seed=5, n_boot=300)
    assert out.loc["b", "group"] != out.loc["a", "group"]


def test_resampling_stays_within_each_dataset() -> None:
    # "tiny" has one molecule, so a within-dataset draw always picks it: x wins its 3 criteria in every
    # replicate, and 1 of the 3 "big" criteria, so x beats y 4 to 2 every time. Drawing from the pooled
    # molecules would leave the tiny one out of about a third of the replicates, where y wins 2 to 1.
    rng = np.random.default_rng(6)
    base = rng.random((3, 50))
    x = np.r_[np.ones(3), base.ravel()]
    y = np.r_[np.zeros(3), (base + np.array([[0.01], [0.01], [-0.01]])).ravel()]
    items = _items({"x": x, "y": y}, datasets={"tiny": 1, "big": 50}, augs=3)
    result = bootstrap_ranks(items, seed=0, n_boot=200)
    assert result.p_better.loc["x", "y"] == 1.0
    # An explicit 'dataset' column names the same pools as the criterion names do.
    explicit = items.assign(dataset=items["criterion"].str.split("/").str[1])
    pd.testing.assert_frame_equal(bootstrap_ranks(explicit, seed=0, n_boot=200).ranks, result.ranks)
    with pytest.raises(ValueError, match="more than one dataset"):
        bootstrap_ranks(items.assign(dataset=np.where(np.arange(len(items)) % 2, "a", "b")), seed=0, n_boot=5)


def test_seeded_and_row_order_independent(mixed: pd.DataFrame) -> None:
    a = bootstrap_ranks(mixed, seed=7, n_boot=150)
    b = bootstrap_ranks(mixed.sample(frac=1.0, random_state=1), seed=7, n_boot=150)
    pd.testing.assert_frame_equal(a.ranks, b.ranks)
    c = bootstrap_ranks(mixed, seed=8, n_boot=150)
    assert not a.ranks.equals(c.ranks)
    pd.testing.assert_frame_equal(
        rank_intervals(mixed, seed=7, n_boot=150), rank_intervals(mixed, seed=7, n_boot=150)
    )


def test_categorical_columns_draw_as_their_strings(mixed: pd.DataFrame) -> None:
    """Categorical ids whose categories are not in string order draw the same items as plain strings.

    ``pandas.factorize`` orders a categorical by its categories; the draws follow the sorted ids, so the
    categories must be put in string order first (a large board's tables are categorical).
    """
    text = mixed.astype({c: str for c in ("submission", "criterion", "item")})
    shuffled = text.copy()
    for col in ("submission", "criterion", "item"):
        reverse = sorted(text[col].unique(), reverse=True)
        shuffled[col] = pd.Categorical(text[col], categories=reverse)
    a = bootstrap_ranks(text, seed=7, n_boot=150)
    b = bootstrap_ranks(shuffled, seed=7, n_boot=150)
    pd.testing.assert_frame_equal(a.ranks, b.ranks)


def test_ranks_do_not_depend_on_the_threads(monkeypatch) -> None:
    """From 64 systems the replicates are re-ranked on threads: the same ranks with one thread or three."""
    rng = np.random.default_rng(4)
    skill = np.linspace(0.9, 0.1, 70)
    items = _items({f"s{i:02d}": (rng.random(N_VALUES) < p).astype(float) for i, p in enumerate(skill)},
                   datasets=DATASETS)  # fmt: skip
    runs = {}
    for cpus in (1, 3):
        monkeypatch.setattr(uncertainty, "usable_cpus", lambda cpus=cpus: cpus)
        runs[cpus] = bootstrap_ranks(items, seed=5, n_boot=60)
    pd.testing.assert_frame_equal(runs[1].ranks, runs[3].ranks)
    pd.testing.assert_frame_equal(runs[1].p_better, runs[3].p_better)


def test_missing_items_and_weights() -> None:
    rng = np.random.default_rng(9)
    items = _items(
        {s: (rng.random(N_VALUES) < p).astype(float) for s, p in (("a", 0.7), ("b", 0.3))}, datasets=DATASETS
    )
    # b has no results at all on one criterion: ignored pairwise, as in the leaderboard.
    items = items.loc[~((items["submission"] == "b") & (items["criterion"] == "amore/d1/aug0/acc_at_1"))]
    table = point_table(items)
    assert np.isnan(table.loc["b", "amore/d1/aug0/acc_at_1"])
    weights = pd.Series(1.0, index=table.columns)
    out = rank_intervals(items, seed=0, n_boot=100, weights=weights)
    assert out.loc["a", "rank"] == 1
    with pytest.raises(ValueError, match="no weight for criteria"):
        rank_intervals(items, seed=0, n_boot=10, weights=weights.iloc[1:])


def test_invalid_inputs_raise(mixed: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="missing required columns"):
        rank_intervals(mixed.drop(columns="item"), seed=0, n_boot=10)
    with pytest.raises(ValueError, match="duplicated"):
        rank_intervals(pd.concat([mixed, mixed.iloc[:1]]), seed=0, n_boot=10)
    with pytest.raises(ValueError, match="n_boot"):
        rank_intervals(mixed, seed=0, n_boot=0)
    with pytest.raises(ValueError, match="seed"):
        rank_intervals(mixed, seed=-1, n_boot=10)
    with pytest.raises(ValueError, match="level"):
        rank_intervals(mixed, seed=0, n_boot=10, level=1.5)
    with pytest.raises(ValueError, match="numeric"):
        rank_intervals(mixed.assign(value="x"), seed=0, n_boot=10)


def test_thousand_replicates_take_seconds() -> None:
    rng = np.random.default_rng(0)
    n_items, n_sys, n_crit = 3300, 10, 10
    p = rng.uniform(0.3, 0.9, n_sys)
    hits = rng.random((n_sys, n_crit, n_items)) < p[:, None, None]
    s, c, i = np.meshgrid(np.arange(n_sys), np.arange(n_crit), np.arange(n_items), indexing="ij")
    items = pd.DataFrame(
        {
            "submission": np.array([f"s{k}" for k in range(n_sys)])[s.ravel()],
            "criterion": np.array([f"amore/chebi20/a{k}/acc_at_1" for k in range(n_crit)])[c.ravel()],
            "item": i.ravel().astype(str),
            "value": hits.ravel().astype(float),
        }
    )
    start = time.perf_counter()
    out = rank_intervals(items, seed=0, n_boot=1000)
    assert time.perf_counter() - start < 20.0
    assert len(out) == n_sys


# --------------------------------------------------------------------------- cache


def test_cache_hit_does_not_recompute(mixed: pd.DataFrame, tmp_path: Path, monkeypatch) -> None:
    fresh = rank_intervals(mixed, seed=0, n_boot=100)
    calls = []
    real = uncertainty._run_bootstrap

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(uncertainty, "_run_bootstrap", counting)
    first = cached_rank_intervals(mixed, seed=0, n_boot=100, cache_dir=tmp_path)
    assert len(calls) == 1
    files = list(tmp_path.glob("rank_intervals-*.json"))
    assert len(files) == 1
    second = cached_rank_intervals(
        mixed.sample(frac=1.0, random_state=0), seed=0, n_boot=100, cache_dir=tmp_path
    )
    assert len(calls) == 1  # same data in another row order: read from the cache
    pd.testing.assert_frame_equal(first, second)
    pd.testing.assert_frame_equal(first, fresh)

    cached_rank_intervals(mixed, seed=1, n_boot=100, cache_dir=tmp_path)
    assert len(calls) == 2  # another seed: another key
    changed = mixed.copy()
    changed.loc[changed.index[0], "value"] = 1.0 - changed.loc[changed.index[0], "value"]
    cached_rank_intervals(changed, seed=0, n_boot=100, cache_dir=tmp_path)
    assert len(calls) == 3  # one value changed: recomputed
    assert len(list(tmp_path.glob("rank_intervals-*.json"))) == 3


def test_corrupt_cache_file_is_recomputed(mixed: pd.DataFrame, tmp_path: Path) -> None:
    first = cached_rank_intervals(mixed, seed=0, n_boot=50, cache_dir=tmp_path)
    (path,) = tmp_path.glob("rank_intervals-*.json")
    payload = json.loads(path.read_text())
    assert payload["params"]["n_boot"] == 50 and payload["params"]["n_items"] == DATASETS
    path.write_text("{not json")
    pd.testing.assert_frame_equal(cached_rank_intervals(mixed, seed=0, n_boot=50, cache_dir=tmp_path), first)
    assert json.loads(path.read_text())["key"] == payload["key"]


# --------------------------------------------------------------------------- per-molecule ranks


def _ranks_rows(submission: str, dataset: str) -> pd.DataFrame:
    rows = []
    for distance in ("l2", "cosine"):
        for direction in ("original_to_augmented", "augmented_to_original"):
            rows += [
                ("kekule", distance, direction, "m1", "changed", 1.0),
                ("kekule", distance, direction, "m2", "changed", 1.5),
                ("kekule", distance, direction, "m3", "identical", 1.0),
                ("kekule", distance, direction, "m4", "changed", 4.0),
            ]
    frame = pd.DataFrame(rows, columns=["augmentation", "distance", "direction", "id", "status", "rank"])
    return frame.assign(submission=submission, track="amore", dataset=dataset)


def test_item_values_from_ranks() -> None:
    ranks = _ranks_rows("m", "chebi20")
    acc = item_values_from_ranks(ranks)
    assert acc["criterion"].astype(str).unique().tolist() == ["amore/chebi20/kekule/acc_at_1"]
    assert dict(zip(acc["item"].astype(str), acc["value"], strict=True)) == {"m1": 1.0, "m2": 0.0, "m4": 0.0}
    assert set(acc["dataset"].astype(str)) == {"chebi20"}
    every = item_values_from_ranks(ranks, subset="all", metric="acc_at_5")
    assert dict(zip(every["item"].astype(str), every["value"], strict=True)) == {
        "m1": 1.0,
        "m2": 1.0,
        "m3": 1.0,
        "m4": 1.0,
    }
    mrr = item_values_from_ranks(ranks, metric="mrr")
    assert mrr["value"].tolist() == pytest.approx([1.0, 1 / 1.5, 0.25])
    with pytest.raises(ValueError, match="metric"):
        item_values_from_ranks(ranks, metric="recall")
    with pytest.raises(ValueError, match=">= 1"):
        item_values_from_ranks(ranks.assign(rank=0.0))


def test_store_export_item_ranks_feeds_the_bootstrap(tmp_path: Path) -> None:
    from evaluators.tracks.amore import AmoreTrack
    from leaderboard.store import ResultStore

    store = ResultStore(f"sqlite:///{tmp_path / 'mlflow.db'}", artifact_root=tmp_path / "artifacts")
    for submission, status in (("good", "FINISHED"), ("other", "FINISHED"), ("broken", "FAILED")):
        tags = {"submission": submission, "track": "amore", "dataset": "chebi20"}
        run_id = store.start(f"key-{submission}", name=submission, tags=tags, params={})
        if status == "FAILED":
            store.fail(run_id, "boom")
            continue
        out = tmp_path / f"out-{submission}"
        out.mkdir()
        row = {"augmentation": "kekule", "layer": "last", "distance": "l2",
               "direction": "original_to_augmented", "subset": "non_trivial", "metric": "acc_at_1",
               "value": 0.5}  # fmt: skip
        result = AmoreTrack.parse_result(
            {"schema_version": 2, "submission_id": submission, "track": "amore", "track_version": 2,
             "dataset": "chebi20", "data_hash": "h", "benchmark_version": "v", "seed": 0, "rows": [row]}
        )  # fmt: skip
        frame = _ranks_rows(submission, "chebi20").drop(columns=["submission", "track", "dataset"])
        frame = frame.assign(original="CCO", augmented="OCC")
        if submission == "other":
            frame["rank"] = 1.0
        with gzip.open(out / "ranks.csv.gz", "wt", newline="") as handle:
            frame.to_csv(handle, index=False)
        store.finish(run_id, result, out)

    ranks = store.export_tables()["item_ranks"]
    assert list(ranks.columns) == [
        "submission",
        "track",
        "dataset",
        "augmentation",
        "distance",
        "direction",
        "id",
        "status",
        "rank",
        "original",
        "augmented",
    ]
    assert sorted(ranks["submission"].unique()) == ["good", "other"]  # the FAILED run has no ranks
    # The export holds the headline setting the table declares, whatever else the artifact holds.
    assert set(ranks["distance"]) == {"l2"} and set(ranks["direction"]) == {"original_to_augmented"}
    good = ranks.loc[ranks["submission"] == "good"].set_index("id")
    assert good["rank"].to_dict() == {"m1": 1.0, "m2": 1.5, "m3": 1.0, "m4": 4.0}
    assert good["status"].to_dict()["m3"] == "identical"
    assert set(good["augmented"]) == {"OCC"}
    assert store.export_tables(["good"])["item_ranks"]["submission"].unique().tolist() == ["good"]

    out = rank_intervals(item_values_from_ranks(ranks), seed=0, n_boot=50)
    assert out.loc["other", ["rank", "rank_lo", "rank_hi"]].tolist() == [1, 1, 1]
