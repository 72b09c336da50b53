"""A fresh machine's MLflow is filled from the board's record (``python -m leaderboard import-results``).

Works on a copy of this checkout's committed ``site/data/`` and a throw-away sqlite store: the imported
store exports exactly the committed board, a second import adds nothing, and every imported result is
found under the key an evaluation of the unchanged submission would look up (so it is reused).
The record is imported once for the module, through the command line (an import of the whole record takes
a minute here): the tests read what :func:`leaderboard.restore.import_results` was called with and
returned, what the command printed, and the store it filled.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import leaderboard.__main__ as cli
import leaderboard.restore as restore
from leaderboard.execution.job_inputs import git_commit
from leaderboard.restore import import_results, key_fields
from leaderboard.site.publish import merge_exports
from leaderboard.store import IMPORTED_TAG, ResultStore, run_key

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "site" / "data"


def _digests(folder: Path) -> dict[str, str]:
    """Each file's SHA-256: a failure names the files that changed without pytest diffing megabytes of bytes
    (with CI set, pytest does not truncate its explanation, and that diff ran past CI's time limit)."""
    files = (p for p in sorted(folder.iterdir()) if p.is_file())
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture(scope="module")
def restored(tmp_path_factory):
    """``python -m leaderboard --state-dir STATE import-results`` in a repository with a copy of the record.

    Records the one call of :func:`~leaderboard.restore.import_results` the command makes (its store, site
    folder, source and report) and what the command printed: one line per imported result, then the report.
    """
    tmp = tmp_path_factory.mktemp("restore")
    repo = tmp / "repo"
    shutil.copytree(COMMITTED, repo / "site" / "data", ignore=shutil.ignore_patterns("plots"))
    calls: list[dict] = []

    def recorded(store, site_dir, **kwargs):
        report = import_results(store, site_dir, **kwargs)
        calls.append({"store": store, "site": Path(site_dir), "report": report, **kwargs})
        return report

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setattr(cli, "REPO_ROOT", repo)
        mp.setattr(restore, "import_results", recorded)  # the command imports it when it runs
        code = cli.main(["--state-dir", str(tmp / "state"), "import-results"])
    printed = out.getvalue().splitlines()
    assert len(calls) == 1, (code, printed)
    return {**calls[0], "lines": printed[:-1], "out": out.getvalue(), "code": code, "repo": repo, "tmp": tmp}


def test_every_committed_result_is_imported(restored) -> None:
    runs = json.loads((COMMITTED / "runs.json").read_text(encoding="utf-8"))
    keys = {(r["submission"], r["track"], r["dataset"]) for r in runs if r["status"] == "FINISHED"}
    assert len(keys) >= 18
    assert sorted(restored["report"].imported) == sorted(keys)
    assert (
        restored["report"].line()
        == f"import-results: {len(keys)} imported, 0 already present, 0 without a finished result"
    )
    assert len(restored["lines"]) == len(keys)


def test_the_restored_store_exports_exactly_the_committed_board(restored) -> None:
    cards = json.loads((COMMITTED / "submissions.json").read_text(encoding="utf-8"))
    site = restored["site"]
    before = _digests(site / "data")
    report = merge_exports(restored["store"], cards, site)
    # Every key is the committed run itself (same run id), and no file changes by a byte.
    assert len(report.same) == len(restored["report"].imported)
    assert not report.added and not report.replaced and not report.kept
    assert _digests(site / "data") == before
    _, runs = restored["store"].export()
    committed = {r["run_id"] for r in json.loads((COMMITTED / "runs.json").read_text(encoding="utf-8"))}
    assert set(runs["run_id"]) <= committed  # provenance: the id of the run that computed each result


def test_an_evaluation_would_reuse_the_imported_results(restored) -> None:
    store = restored["store"]
    for record in json.loads((COMMITTED / "runs.json").read_text(encoding="utf-8")):
        if record["status"] != "FINISHED":
            continue
        found = store.find_finished(run_key(key_fields(record)))
        assert found is not None, record["run_id"]
        assert found.data.tags[IMPORTED_TAG] == restored["source"]
        assert found.data.tags["image_tag"] == record["image_tag"]


def test_a_second_import_adds_nothing(restored) -> None:
    again = import_results(restored["store"], restored["site"], log=lambda line: None)
    assert again.imported == [] and len(again.present) == len(restored["report"].imported)


def test_the_artifacts_of_a_key_are_its_rows_of_each_table_in_table_order(tmp_path) -> None:
    from leaderboard.site.merge import Board
    from leaderboard.tracks import table_specs
    from tests.site import _builders as b

    ranks = b.item_ranks({"datamol-default": ["m1", "m2"], "chebi20": ["c1", "c2"]}, n_items=2, worst=1)
    tables = {"item_ranks": ranks, "recall_at_k": b.curves(["zeta", "alpha"], "chebi20")}
    board = Board.from_exports(b.results(b.BASE_SCORE), b.runs(), b.submissions(list(b.BASE_SCORE)), tables)
    rows = restore._table_rows(board)
    for key, names in (
        (("alpha", "amore", "chebi20"), ["item_ranks", "recall_at_k"]),
        (("zeta", "amore", "datamol-default"), ["item_ranks"]),  # no curves of that data set
        (("mu", "amore", "chebi20"), []),  # its run failed: no rows
    ):
        folder = tmp_path / "-".join(key)
        folder.mkdir()
        paths = restore._tables(board, rows, key, folder)
        assert [p.name for p in paths] == [table_specs()[n][1].artifact for n in names]
        for name, path in zip(names, paths, strict=True):
            table, spec = board.tables[name], table_specs()[name][1]
            mine = table.loc[
                (table["submission"].astype(str) == key[0])
                & (table["track"].astype(str) == key[1])
                & (table["dataset"].astype(str) == key[2])
            ]
            assert len(mine) > 0
            # Compressed as the tracks write theirs, gzip level 5 (the header's XFL byte is 2 for level 9).
            assert path.read_bytes()[:3] == b"\x1f\x8b\x08" and path.read_bytes()[8] == 0
            expected = io.StringIO(mine.loc[:, list(spec.columns)].to_csv(index=False))
            pd.testing.assert_frame_equal(
                pd.read_csv(path, dtype=str, keep_default_na=False),
                pd.read_csv(expected, dtype=str, keep_default_na=False),
            )


def test_a_tampered_record_is_refused_naming_the_problem(tmp_path) -> None:
    site = tmp_path / "site"
    shutil.copytree(COMMITTED, site / "data", ignore=shutil.ignore_patterns("plots", "molecules.json"))
    results = site / "data" / "results.csv.gz"
    lines = gzip.decompress(results.read_bytes()).decode("utf-8").splitlines()
    header = lines[0].split(",")
    at = next(
        i for i, line in enumerate(lines[1:], 1) if line.split(",")[header.index("metric")] == "acc_at_1"
    )
    cells = lines[at].split(",")
    cells[header.index("value")] = "1.5"  # an accuracy above 1
    lines[at] = ",".join(cells)
    results.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode("utf-8")))
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    with pytest.raises(ValueError, match=r"acc_at_1 must be a value in \[0, 1\], got 1.5"):
        import_results(store, site, log=lambda line: None)


def test_the_command_line_imports_into_the_state_folder(restored) -> None:
    # The command of the module's import: the repository's site folder, the source naming its commit.
    assert restored["code"] == 0
    assert restored["site"] == restored["repo"] / "site"
    assert restored["source"] == f"site/data@{git_commit(restored['repo'])}"
    runs = json.loads((COMMITTED / "runs.json").read_text(encoding="utf-8"))
    n = len({(r["submission"], r["track"], r["dataset"]) for r in runs if r["status"] == "FINISHED"})
    assert f"import-results: {n} imported, 0 already present" in restored["out"]
    assert restored["out"].splitlines()[-1] == restored["report"].line()
    assert (restored["tmp"] / "state" / "mlflow.db").is_file()
