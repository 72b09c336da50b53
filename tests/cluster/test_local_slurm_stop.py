"""What ``stop_local_slurm`` stops: what ``ensure_local_slurm`` started, munged included, and nothing else.

The suite's session fixture (``tests/conftest.py``: ``local_slurm``) stops the real daemons when the suite
ends; here the stopping itself is recorded instead (``_stop``), so that no daemon the running session still
needs is touched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import leaderboard.cluster.local_slurm as local_slurm
from leaderboard.cluster.local_slurm import LocalSlurm, stop_local_slurm


@pytest.fixture
def stopped(monkeypatch, tmp_path) -> list[tuple[str, Path]]:
    """Each ``_stop(daemon, pidfile)`` call, recorded instead of made; munged's pid file in ``tmp_path``."""
    calls: list[tuple[str, Path]] = []
    pidfile = tmp_path / "munged.pid"
    pidfile.write_text("4242\n")
    monkeypatch.setattr(local_slurm, "MUNGE_PIDFILE", pidfile)
    monkeypatch.setattr(local_slurm, "_stop", lambda daemon, path: calls.append((daemon, path)))
    return calls


def test_a_munged_started_here_is_stopped_with_the_daemons(stopped) -> None:
    slurm = LocalSlurm(partition="debug", gpus=2, reused=False, started_munge=True)
    assert "munged" in stop_local_slurm(slurm, log=lambda _line: None)
    assert ("munged", local_slurm.MUNGE_PIDFILE) in stopped


@pytest.mark.parametrize(
    ("reused", "started_munge"),
    [(False, False), (True, True), (True, False)],
    ids=["munged-already-running", "reused-controller-needs-it", "reused-controller"],
)
def test_munged_found_running_or_under_a_reused_controller_stays(stopped, reused, started_munge) -> None:
    slurm = LocalSlurm(partition="debug", gpus=2, reused=reused, started_munge=started_munge)
    assert "munged" not in stop_local_slurm(slurm, log=lambda _line: None)
    assert all(daemon != "munged" for daemon, _ in stopped)
