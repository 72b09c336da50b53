"""Each bench's own code runs on a tiny size, so that a broken bench fails CI (issue 36, part 5).

The figures are not checked (a loaded 2-core machine makes them noise at this size); that the bench runs
to its report, and what its exit status promises, are.
"""

from __future__ import annotations

from leaderboard.tools import bench_endpoint, bench_ranking


def test_the_endpoint_bench_runs_and_its_rerun_sends_nothing(capsys) -> None:
    assert bench_endpoint.main(["--requests", "4", "--latency-ms", "1"]) == 0  # 0: the rerun sent nothing
    assert capsys.readouterr().out.strip()


def test_the_ranking_bench_runs_on_a_few_systems(capsys) -> None:
    status = bench_ranking.main(["--systems", "4", "--n-boot", "20"])
    assert status in (0, 1)  # 1 only when over its time target: not a failure of the code
    out = capsys.readouterr().out
    assert "items" in out
