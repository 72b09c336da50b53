"""A fresh machine's MLflow is filled from the board's record (``python -m leaderboard import-results``).

Works on a copy of this checkout's committed ``site/data/`` and a throw-away sqlite store: the imported
store exports exactly the committed board, a second import adds nothing, and every imported result is
found under the key an evaluation of the unchanged submission would look up (so it is reused).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import leaderboard.__main__ as cli
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
    tmp = tmp_path_factory.mktemp("restore")
    site = tmp / "site"
    shutil.copytree(COMMITTED, site / "data", ignore=shutil.ignore_patterns("plots", "molecules.json"))
    store = ResultStore(f"sqlite:///{tmp}/mlflow.db", artifact_root=tmp / "artifacts")
    lines: list[str] = []
    report = import_results(store, site, source="site/data@test", log=lines.append)
    return {"site": site, "store": store, "report": report, "lines": lines, "tmp": tmp}


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
        assert found.data.tags[IMPORTED_TAG] == "site/data@test"
        assert found.data.tags["image_tag"] == record["image_tag"]


def test_a_second_import_adds_nothing(restored) -> None:
    again = import_results(restored["store"], restored["site"], log=lambda line: None)
    assert again.imported == [] and len(again.present) == len(restored["report"].imported)


def test_a_tampered_record_is_refused_naming_the_problem(tmp_path) -> None:
    site = tmp_path / "site"
    shutil.copytree(COMMITTED, site / "data", ignore=shutil.ignore_patterns("plots", "molecules.json"))
    results = site / "data" / "results.csv"
    lines = results.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    at = next(
        i for i, line in enumerate(lines[1:], 1) if line.split(",")[header.index("metric")] == "acc_at_1"
    )
    cells = lines[at].split(",")
    cells[header.index("value")] = "1.5"  # an accuracy above 1
    lines[at] = ",".join(cells)
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    with pytest.raises(ValueError, match=r"acc_at_1 must be a value in \[0, 1\], got 1.5"):
        import_results(store, site, log=lambda line: None)


def test_the_command_line_imports_into_the_state_folder(tmp_path, monkeypatch, capsys) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(COMMITTED, repo / "site" / "data", ignore=shutil.ignore_patterns("plots"))
    monkeypatch.setattr(cli, "REPO_ROOT", repo)
    assert cli.main(["--state-dir", str(tmp_path / "state"), "import-results"]) == 0
    runs = json.loads((COMMITTED / "runs.json").read_text(encoding="utf-8"))
    n = len({(r["submission"], r["track"], r["dataset"]) for r in runs if r["status"] == "FINISHED"})
    assert f"import-results: {n} imported, 0 already present" in capsys.readouterr().out
    assert (tmp_path / "state" / "mlflow.db").is_file()
