"""Each bench's own code runs on a tiny size, so that a broken bench fails CI (issue 36, part 5).

The figures are not checked (a loaded 2-core machine makes them noise at this size); that the bench runs
to its report, and what its exit status promises, are.
"""

from __future__ import annotations

import pytest

from leaderboard.tools import bench_endpoint, bench_ranking


def test_the_endpoint_bench_runs_and_its_rerun_sends_nothing(capsys) -> None:
    assert bench_endpoint.main(["--requests", "4", "--latency-ms", "1"]) == 0  # 0: the rerun sent nothing
    assert capsys.readouterr().out.strip()


def test_the_ranking_bench_runs_on_a_few_systems(capsys) -> None:
    status = bench_ranking.main(["--systems", "4", "--n-boot", "20"])
    assert status in (0, 1)  # 1 only when over its time target: not a failure of the code
    out = capsys.readouterr().out
    assert "items" in out


def test_the_ranking_bench_builds_the_site_of_a_few_systems(capsys) -> None:
    # The site path copies mkdocs.yml into a temporary folder: it failed there when the config's hook,
    # named by a path relative to it, was not beside the copy.
    status = bench_ranking.main(["--systems", "3", "--n-boot", "20", "--site"])
    out = capsys.readouterr().out
    assert status in (0, 1)  # 1 only when over its time target: not a failure of the code
    assert "site: build_site" in out and "pages" in out, out


@pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py: tiny models, a shared machine
def test_the_generation_bench_runs_on_the_reference_and_a_decoder(capsys) -> None:
    from leaderboard.tools import bench_generation

    tiny = ["--decoder-width", "32", "--decoder-layers", "1"]
    argv = ["--items", "1", "--repeat", "1", "--batch-size", "4", *tiny]
    assert bench_generation.main(argv) == 0
    out = capsys.readouterr().out
    for line in ("chem-t5-ce", "random GPT-2", "floor", "T3 run via generate", "T4 run (one stream)"):
        assert line in out


def test_the_downstream_bench_runs_on_a_few_molecules_from_the_mirror(tmp_path, capsys) -> None:
    import os

    import pytest

    from leaderboard.tools import bench_downstream

    if not os.environ.get("CHEMROBUST_DATA_DIR"):
        if os.environ.get("CI"):
            pytest.fail("CHEMROBUST_DATA_DIR is not set: CI points it at ../shared/data")
        pytest.skip("no local data mirror (CHEMROBUST_DATA_DIR)")
    argv = ["--submission", "morgan-fingerprint-reference", "--dataset", "esol", "--limit", "120",
            "--state-dir", str(tmp_path / "state")]  # fmt: skip
    assert bench_downstream.main(argv) == 0
    out = capsys.readouterr().out
    for line in ("(120 molecules)", "model's embed call (floor)", "host side", "T1 (AMORE) on the same set"):
        assert line in out


def test_the_site_bench_clones_every_track_and_table_kind_and_builds(capsys) -> None:
    from leaderboard.site.exports import read_board
    from leaderboard.tools import bench_site

    site = bench_site.REPO_ROOT / "site"
    board = read_board(site)
    results, runs, submissions, tables = bench_site.clone_board(site, 2 * len(board.submissions))
    # Every model twice, under new ids: each clone has its model's tracks, runs and per-item rows.
    ids = {s["id"] for s in submissions}
    assert len(submissions) == len(ids) == 2 * len(board.submissions)
    assert set(results["track"].astype(str)) == set(board.results["track"].astype(str))
    assert len(results) == 2 * len(board.results) and len(runs) == 2 * len(board.runs)
    assert {n: len(t) for n, t in tables.items()} == {n: 2 * len(t) for n, t in board.tables.items()}
    assert all(len(t) for t in tables.values())  # every table kind the board has, none empty
    assert bench_site.main(["--systems", "1,2", "--no-mkdocs"]) == 0
    out = capsys.readouterr().out
    assert "growth from 1 to 2 submissions" in out, out
