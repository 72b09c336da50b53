"""Real services for the cluster tests: a single-node Slurm with two fake GPUs, PostgreSQL, an MLflow server.

Started by :mod:`leaderboard.cluster` (installed with apt when missing, reused when already running, timings
printed). Where they cannot be had (not root, no package mirror) the tests skip with the reason — except in
CI (``CI`` set), where that fails: CI must be able to run them (STYLE.md rule 15). Each test gets an
experiment of its own on the one server (``MLFLOW_EXPERIMENT_NAME``), so earlier runs are never reused.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

from leaderboard.cluster.local_slurm import LocalSlurm, ServiceError, ensure_local_slurm
from leaderboard.cluster.tracking_server import TrackingServer, ensure_tracking_server
from tests.execution._state import cache_root

#: Port of the tests' tracking server (apart from a maintainer's ``nox -s tracking-server`` on 5055).
TEST_PORT = 5056


def _unavailable(what: str, exc: Exception | str) -> None:
    message = f"{what} cannot be started here: {exc}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} — CI must provide it (.ci/run installs slurm-wlm, munge, postgresql)",
                    pytrace=False)  # fmt: skip
    pytest.skip(message)


@pytest.fixture(scope="session")
def local_slurm() -> LocalSlurm:
    """A running single-node Slurm with two fake GPUs (gres)."""
    if os.geteuid() != 0:
        _unavailable("a local Slurm", "needs root")
    try:
        return ensure_local_slurm(gpus=2, log=print)
    except ServiceError as exc:
        _unavailable("a local Slurm", exc)
        raise


@pytest.fixture(scope="session")
def tracking_server() -> TrackingServer:
    """A running ``mlflow server`` on PostgreSQL at http://127.0.0.1:5056."""
    if os.geteuid() != 0:
        _unavailable("PostgreSQL + MLflow server", "needs root")
    try:
        return ensure_tracking_server(cache_root() / "cluster", port=TEST_PORT, database="chemrobust_tests",
                                      log=print)  # fmt: skip
    except ServiceError as exc:
        _unavailable("PostgreSQL + MLflow server", exc)
        raise


@pytest.fixture
def experiment(tracking_server, monkeypatch) -> Iterator[str]:
    """A fresh experiment name on the tests' server, set as MLFLOW_TRACKING_URI / MLFLOW_EXPERIMENT_NAME.

    The orchestrator's environment is what Slurm passes on to the jobs (``--export=ALL``).
    """
    name = f"test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking_server.uri)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", name)
    yield name
