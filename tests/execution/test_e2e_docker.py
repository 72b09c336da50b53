"""End to end through the real Docker engine: image build, sandboxed run, MLflow, reuse.

The state folder is private to the test (lock, jobs, MLflow, container labels); the image's wheelhouse and
the data come from the tests' shared cache outside the repository (``tests/execution/_state.py``), and
images from the engine (content-addressed). The Morgan fingerprint reference's metrics are compared with an
independent recomputation (``tests/execution/_amore_expected.py``).

Not skipped in CI (``CI`` set): a missing engine is a failure there. Elsewhere it skips without an engine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evaluators.tracks import TrackOptions
from leaderboard.execution.docker_runner import OWNER_LABEL, docker_client_or_none
from leaderboard.execution.evaluate import Evaluator
from leaderboard.store import ResultStore
from tests.execution._amore_expected import REFERENCE, assert_matches_reference, headline_acc_at_1
from tests.execution._state import cache_root, shared_state

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def engine():
    client = docker_client_or_none()
    if client is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but no Docker engine answers: .ci/run must start dockerd")
        pytest.skip("no Docker engine")
    return client


def test_reference_submissions_through_docker(engine, tmp_path, benchmark_data):
    subs = tmp_path / "submissions"
    for name in (REFERENCE, "char-ngram-baseline"):
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    # A private state folder; its wheelhouse and data are links into the shared cache, never the repository.
    state = shared_state(tmp_path / "state")
    assert (state / "data").resolve() == cache_root() / "data"
    store_uri = f"sqlite:///{tmp_path}/mlflow.db"
    lines: list[str] = []

    def evaluator() -> Evaluator:
        # The whole default set (500 molecules): it holds molecules that share a fingerprint (ties).
        return Evaluator(
            ROOT,
            state,
            ResultStore(store_uri, artifact_root=tmp_path / "artifacts"),
            runner="docker",
            gpu="off",
            options=TrackOptions(),
            submissions_dir=subs,
            log=lines.append,
        )

    summary = evaluator().run(None, ["datamol-default"])
    assert not summary.failed, "\n".join(lines[-40:])
    assert summary.computed == 2 and summary.runner == "docker"

    results, runs = ResultStore(store_uri).export()
    assert set(runs.runner) == {"docker"}
    assert runs.image_id.str.startswith("sha256:").all()
    assert runs.image_tag.str.match(r"chemrobust/[a-z0-9-]+:[0-9a-f]{16}$").all()
    # The reference's numbers out of the sandbox equal the independent recomputation (every rank and count
    # metric of every exact distance, direction and subset), the headline Acc@1 per augmentation first.
    expected = assert_matches_reference(results, benchmark_data("datamol-default"), limit=None)
    headline = headline_acc_at_1(expected)
    assert len(headline) == 5 and min(headline.values()) < 1.0, "the full set must exercise the tie rule"
    # Containers carry the private state folder as owner label, and none is left behind.
    left = engine.containers.list(all=True, filters={"label": f"{OWNER_LABEL}={state.resolve()}"})
    assert left == []

    lines.clear()
    again = evaluator().run(None, ["datamol-default"])
    assert (again.computed, again.reused) == (0, 2), "\n".join(lines)
