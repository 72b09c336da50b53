"""``nox -s bench`` runs offline: the AMORE bench finds ChEBI-20 in the local mirror, as ``evaluate`` does.

Before, the bench called ``prepare_dataset`` without the mirror and died on a download with
``CHEMROBUST_DATA_DIR`` set (issue 36). The run here is tiny (5 molecules); its figures are not checked,
only that every line of the report is there.
"""

from __future__ import annotations

import os

import pytest

from leaderboard.tools import bench


def test_the_bench_runs_offline_from_the_mirror(tmp_path, capsys, monkeypatch):
    if not os.environ.get("CHEMROBUST_DATA_DIR"):
        if os.environ.get("CI"):
            pytest.fail("CHEMROBUST_DATA_DIR is not set: CI points it at ../shared/data")
        pytest.skip("no local data mirror (CHEMROBUST_DATA_DIR)")
    # No network: a download attempt must fail loudly rather than silently succeed elsewhere.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    state = tmp_path / "state"
    argv = ["--dataset", "chebi20", "--limit", "5", "--skip-reference", "--repeat", "2"]
    argv += ["--state-dir", str(state)]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    expected = ("track's batches (floor)", "sorted by characters", "whole AMORE evaluation", "overhead ratio")
    expected += ("repeat 2/2", "each repeat's whole run over its own floor", "own forward passes, same run")
    for line in expected:
        assert line in out
    # The mirror is read where it lies: nothing was downloaded into the state folder.
    assert not (state / "data" / "chebi20").exists()


def test_the_forward_clock_counts_the_outermost_module_call_once(monkeypatch):
    """Nested modules (a model's layers) are inside the model's own call: their time is counted once."""
    import torch

    ticks = iter(range(100))
    monkeypatch.setattr(bench.time, "perf_counter", lambda: float(next(ticks)))

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = torch.nn.Sequential(torch.nn.Identity(), torch.nn.Identity())

        def forward(self, x):
            return self.layers(x)

    model, x = Model(), torch.zeros(1)
    model(x)  # outside the clock: not counted
    with bench.ForwardClock() as clock:
        model(x)  # perf_counter read at entry and at exit of the outer call only: 1 tick
        model(x)
    model(x)
    assert clock.seconds == 2.0
