"""Where an evaluation's time goes (issue 36 part 2): every ``evaluate`` ends with its per-phase summary.

The clock charges each phase its own time, nested phases excluded, so the table adds up to the wall time it
covers; the command prints it after the jobs (and the site, when built), with ``nox``'s environment install.
"""

from __future__ import annotations

import pytest

from leaderboard.execution.phases import KINDS, Phases
from tests.execution._state import shared_data


def _clock(*ticks: float) -> Phases:
    it = iter(ticks)
    return Phases(now=lambda: next(it))


def test_nested_phases_are_charged_their_own_time_and_add_up_to_the_wall_time():
    clock = _clock(0.0, 1.0, 2.0, 5.0, 6.0, 7.0, 8.0, 20.0)
    with clock.timed("job", "a × amore × d"):  # 0 → 20
        with clock.timed("data set", "d"):  # 1 → 2
            pass
        with clock.timed("image build", "a"):  # 5 → 8, with a wheelhouse inside
            with clock.timed("wheelhouse", "cpu"):  # 6 → 7
                pass
    seconds = {(p.kind, p.label): p.seconds for p in clock.phases}
    assert seconds == {("data set", "d"): 1.0, ("wheelhouse", "cpu"): 1.0, ("image build", "a"): 2.0,
                       ("job", "a × amore × d"): 16.0}  # fmt: skip
    assert clock.total() == 20.0  # the wall time of the outermost phase: nothing counted twice


def test_the_same_data_set_for_several_jobs_is_one_row_and_unknown_kinds_are_refused():
    clock = _clock(0.0, 2.0, 10.0, 13.0)
    for _ in range(2):
        with clock.timed("data set", "freesolv"):
            pass
    assert [(p.label, p.seconds) for p in clock.phases] == [("freesolv", 5.0)]
    with pytest.raises(ValueError, match="unknown phase kind 'download'"):
        with clock.timed("download"):
            pass


def test_the_table_gives_totals_per_kind_and_the_longest_phases_first():
    clock = Phases()
    for kind, label, seconds in [("environment", "nox", 30.0), ("image build", "m", 60.0),
                                 ("job", "m × amore × d", 100.0), ("job", "n × amore × d", 10.0),
                                 ("data set", "d", 0.01)]:  # fmt: skip
        clock.add(kind, label, seconds)
    lines = clock.table(rows=2)
    assert lines[0] == "where the time went (200.0 s in 5 phase(s)):"
    kinds = [line.split()[0] for line in lines[2 : 2 + 4]]
    assert kinds == ["environment", "image", "data", "job"]  # the order a first run meets them
    assert any(line.split()[:4] == ["job", "2", "110.0", "55.0%"] for line in lines)
    longest = lines[lines.index("  longest:") + 1 :]
    assert [line.split(": ", 1)[1] for line in longest] == ["m × amore × d", "m"]  # two rows, longest first
    assert Phases().table() == [] and set(KINDS) >= {"base image", "wheelhouse", "weights", "site"}


def test_evaluate_prints_where_the_time_went(tmp_path, capsys, monkeypatch):
    from leaderboard.__main__ import main

    monkeypatch.setenv("CHEMROBUST_ENVIRONMENT_SECONDS", "12.5")
    state = shared_data(tmp_path / "state")
    argv = ["--state-dir", str(state), "evaluate", "--runner", "in-process", "--no-site", "--submission",
            "morgan-fingerprint-reference", "--dataset", "datamol-default", "--limit", "40"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    table = out[out.index("where the time went") :].splitlines()
    rows = {line.split()[0]: line for line in table[2:] if not line.startswith("  longest")}
    assert {"environment", "data", "job"} <= set(rows)
    assert rows["environment"].split()[1:3] == ["1", "12.5"]
    assert any("job: morgan-fingerprint-reference" in line for line in table)
