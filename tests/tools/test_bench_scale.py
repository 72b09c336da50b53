"""The figures ``nox -s bench-scale`` prints: each job's timeline and overhead, and the N-GPU estimate."""

from __future__ import annotations

import pytest

from leaderboard.tools.bench_scale import JobTiming, estimated_wall_s, job_timings


def test_overhead_is_submit_to_seen_less_the_container_time() -> None:
    events = {"7": {"submitted": 1000.5, "allocated": 1002.0, "seen": 1031.0},
              "8": {"submitted": 1001.0, "allocated": 1031.0, "seen": 1070.0},
              "9": {"submitted": 1001.5, "allocated": 1003.0}}  # fmt: skip  (9 never seen done: left out)
    runs = [
        {"job_id": "8", "label": "b × amore × s", "start": 1034.0, "end": 1068.0, "wall_s": "30.0"},
        {"job_id": "7", "label": "a × amore × s", "start": 1003.0, "end": 1030.0, "wall_s": "25.5"},
        {"job_id": "9", "label": "c × amore × s", "start": 1005.0, "end": 1020.0, "wall_s": "10.0"},
        {"job_id": "", "label": "untagged", "start": 1005.0, "end": 1020.0, "wall_s": "10.0"},
    ]
    timings = job_timings(events, runs, phase_start=1000.0)
    assert [t.label for t in timings] == ["a × amore × s", "b × amore × s"]  # in order of submission
    a, b = timings
    assert (a.submitted, a.allocated, a.started, a.ended, a.seen) == (0.5, 2.0, 3.0, 30.0, 31.0)
    assert a.overhead_s == pytest.approx(31.0 - 2.0 - 25.5) and a.queued_s == pytest.approx(1.5)
    # b waited for a's GPU: that wait is queueing, not overhead.
    assert b.queued_s == pytest.approx(30.0) and b.overhead_s == pytest.approx(70.0 - 31.0 - 30.0)


@pytest.mark.parametrize(
    ("jobs", "gpus", "waves"), [(4, 1, 4), (4, 2, 2), (5, 2, 3), (4, 8, 1), (64, 32, 2)]
)
def test_estimate_counts_whole_waves(jobs: int, gpus: int, waves: int) -> None:
    assert estimated_wall_s(jobs, gpus, job_s=20.0, overhead_s=5.0) == waves * 25.0


def test_timing_is_a_value() -> None:
    t = JobTiming("x", 0.0, 0.5, 1.0, 2.0, 3.0, 1.5)
    assert t.overhead_s == 1.0 and t == JobTiming("x", 0.0, 0.5, 1.0, 2.0, 3.0, 1.5)
