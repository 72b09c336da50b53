"""End to end through the real Docker engine: image build, sandboxed run, MLflow, reuse.

Not skipped in CI (``CI`` set): a missing engine is a failure there. Elsewhere it skips without an engine.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evaluators.tracks import TrackOptions
from leaderboard.execution.docker_runner import docker_client_or_none
from leaderboard.execution.evaluate import Evaluator
from leaderboard.store import ResultStore

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


def test_reference_submissions_through_docker(engine, tmp_path):
    subs = tmp_path / "submissions"
    for name in ("morgan-fingerprint-reference", "char-ngram-baseline"):
        shutil.copytree(ROOT / "submissions" / name, subs / name)
    # Caches (wheelhouse, base image, images) are shared with the repository's state folder; the store is not.
    state = ROOT / ".state"
    store_uri = f"sqlite:///{tmp_path}/mlflow.db"
    lines: list[str] = []

    def evaluator() -> Evaluator:
        return Evaluator(ROOT, state, ResultStore(store_uri, artifact_root=tmp_path / "artifacts"),
                         runner="docker", gpu="off", options=TrackOptions(limit=40), submissions_dir=subs,
                         log=lines.append)

    summary = evaluator().run(None, ["datamol-default"])
    assert not summary.failed, "\n".join(lines[-40:])
    assert summary.computed == 2 and summary.runner == "docker"

    results, runs = ResultStore(store_uri).export()
    assert set(runs.runner) == {"docker"}
    assert runs.image_id.str.startswith("sha256:").all()
    assert runs.image_tag.str.match(r"chemrobust/[a-z0-9-]+:[0-9a-f]{16}$").all()
    head = results[(results.submission == "morgan-fingerprint-reference") & (results.metric == "acc_at_1")
                   & (results.subset == "non_trivial") & (results.layer == "last")
                   & (results.direction == "original_to_augmented") & (results.distance == "l2")]
    assert len(head) == 5
    ties = results[(results.submission == "morgan-fingerprint-reference") & (results.metric == "n_ties")
                   & (results.subset == "non_trivial") & (results.layer == "last")
                   & (results.direction == "original_to_augmented") & (results.distance == "l2")]
    # The fingerprint ceiling: perfect except where two different molecules share a fingerprint.
    for aug, row in head.set_index("augmentation").iterrows():
        n_tied = ties.set_index("augmentation").loc[aug, "value"]
        assert row.value == 1.0 or n_tied > 0, f"{aug}: acc@1 {row.value} without ties"

    lines.clear()
    again = evaluator().run(None, ["datamol-default"])
    assert (again.computed, again.reused) == (0, 2), "\n".join(lines)
