"""``--executor slurm`` end to end, for real: a local Slurm with two fake GPUs, Docker, an MLflow server on
PostgreSQL. Same numbers as the local executor; one GPU per job; a failing job reported with its reason and
not stopping the other; ``scancel`` leaves no container; a restarted orchestrator does not resubmit.

Each test has its own experiment on the server and its own state folder (wheelhouse and data shared with the
other execution tests, ``tests/execution/_state.py``). Not skipped in CI (``CI`` set).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

from leaderboard.execution.evaluate import Summary
from leaderboard.execution.outfs import mounts_below
from leaderboard.executors.slurm import queued_jobs
from leaderboard.executors.slurm_job import CONTAINER_PREFIX, JOB_TAG
from leaderboard.intake.manifest import load_submission
from leaderboard.site.exports import read_results
from leaderboard.site.publish import publish
from leaderboard.store import ResultStore
from tests._mkdocs import copy_mkdocs_config
from tests.cluster._helpers import ROOT, evaluator, slurm, submissions
from tests.execution._amore_expected import REFERENCE
from tests.execution._state import shared_state

pytestmark = [pytest.mark.cluster, pytest.mark.docker, pytest.mark.slow]
DATASETS = ["datamol-default"]


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def test_same_results_as_local_one_gpu_per_job(
    local_slurm, tracking_server, experiment, docker_client, tmp_path
):
    subs = submissions(tmp_path / "submissions", REFERENCE, "char-ngram-baseline")
    state = shared_state(tmp_path / "state")
    lines: list[str] = []
    local_store = ResultStore(f"sqlite:///{tmp_path}/local.db", artifact_root=tmp_path / "artifacts")
    local = evaluator(state, local_store, subs, lines.append).run(None, DATASETS)
    assert (local.computed, local.failed) == (2, []), "\n".join(lines[-30:])

    # A container left by a job whose node failed (its trap never ran): the next job on the node removes it.
    image = docker_client.images.list(filters={"reference": "chemrobust/*"})[0]
    orphan = docker_client.containers.create(image.id, ["sleep", "600"], name=f"{CONTAINER_PREFIX}99999999")
    store = ResultStore(tracking_server.uri, experiment=experiment)
    t0 = time.perf_counter()
    summary = slurm().run(evaluator(state, store, subs, lines.append), None, DATASETS)
    wall = time.perf_counter() - t0
    assert (summary.computed, summary.failed) == (2, []), "\n".join(lines[-40:])
    assert docker_client.containers.list(all=True, filters={"id": orphan.id}) == []
    print(f"2 Slurm jobs: {wall:.1f} s wall; local executor {local.seconds:.1f} s")

    local_results, _ = local_store.export()
    results, runs = ResultStore(tracking_server.uri, experiment=experiment).export()
    pd.testing.assert_frame_equal(_sorted(results), _sorted(local_results))
    assert set(runs.runner) == {"docker"} and len(runs) == 2

    # Each job had one fake GPU of its own: Slurm's allocation is recorded with its run.
    found = store.client.search_runs([store.experiment_id])
    gpus = sorted(r.data.tags["slurm.cuda_visible_devices"] for r in found)
    assert set(gpus) <= {"0", "1"} and all(r.data.tags[JOB_TAG] for r in found)
    spans = [(r.info.start_time, r.info.end_time) for r in found]
    if spans[0][0] < spans[1][1] and spans[1][0] < spans[0][1]:  # they ran at once: different GPUs
        assert gpus == ["0", "1"]
    # The container had the job's allocation, not the sandbox defaults (1 CPU, 2 GB).
    for run in found:
        assert '"cpus":1.0' in run.data.tags["sandbox"] and '"memory":"2048m"' in run.data.tags["sandbox"]
    # The site builds from the server's runs (what `evaluate --executor slurm` does at its end) and publishes
    # the same results as one built from the local executor's store.
    server_store = ResultStore(tracking_server.uri, experiment=experiment)
    server_public = _publish(server_store, subs, tmp_path / "server")
    local_public = _publish(local_store, subs, tmp_path / "local")
    server_site, local_site = tmp_path / "server" / "site", tmp_path / "local" / "site"
    pd.testing.assert_frame_equal(_sorted(read_results(server_site)), _sorted(read_results(local_site)))
    assert {r["submission"] for r in json.loads((server_site / "data" / "runs.json").read_text())} == {
        REFERENCE, "char-ngram-baseline"
    }
    for public in (server_public, local_public):
        page = (public / "index.html").read_text(encoding="utf-8")
        assert "char-ngram-baseline" in page and REFERENCE in page
    # Run again: everything is in the store, nothing is submitted.
    lines.clear()
    again = slurm().run(evaluator(state, store, subs, lines.append), None, DATASETS)
    assert (again.computed, again.reused) == (0, 2) and not any("submitted" in line for line in lines)


def _publish(store: ResultStore, subs, root) -> object:
    """Merge ``store`` into an empty board in a repository copy at ``root``, build it; return ``public/``."""
    copy_mkdocs_config(root)
    skip = shutil.ignore_patterns("data", "submissions", "*.md", "vendor")
    shutil.copytree(ROOT / "site", root / "site", ignore=skip)
    cards = [load_submission(path).card() for path in sorted(subs.glob("*/submission.yaml"))]
    # The runs are smoke-test previews (--limit): this throw-away board takes them on purpose.
    done = publish(
        store, cards, root / "site", repo_root=root, cache_dir=root / "cache", allow_previews=True, echo=print
    )
    assert done.public is not None
    return done.public


def test_failing_job_reported_other_succeeds(
    local_slurm, tracking_server, experiment, docker_client, tmp_path
):
    subs = submissions(tmp_path / "submissions", REFERENCE, "attack-wrong-shape")
    state = shared_state(tmp_path / "state")
    lines: list[str] = []
    store = ResultStore(tracking_server.uri, experiment=experiment)
    summary = slurm().run(evaluator(state, store, subs, lines.append), None, DATASETS)
    assert summary.computed == 1, "\n".join(lines[-40:])
    assert len(summary.failed) == 1 and "attack-wrong-shape" in summary.failed[0]
    assert "EmbeddingError: layer 'last': expected an array of shape" in summary.failed[0]
    _, runs = store.export()
    failed = runs.loc[runs.status == "FAILED"]
    assert list(failed.submission) == ["attack-wrong-shape"] and "EmbeddingError" in failed.reason.iloc[0]


def _in_thread(target) -> tuple[threading.Thread, dict]:
    box: dict = {}

    def run() -> None:
        box["summary"] = target()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_scancel_leaves_no_container(local_slurm, tracking_server, experiment, docker_client, tmp_path):
    subs = submissions(tmp_path / "submissions", "attack-timeout")  # sleeps for an hour, ignores SIGTERM
    state = shared_state(tmp_path / "state")
    lines: list[str] = []
    store = ResultStore(tracking_server.uri, experiment=experiment)
    thread, box = _in_thread(lambda: slurm().run(evaluator(state, store, subs, lines.append), None, DATASETS))
    deadline = time.monotonic() + 300
    container = None
    while container is None and time.monotonic() < deadline and thread.is_alive():
        running = docker_client.containers.list(filters={"name": CONTAINER_PREFIX, "status": "running"})
        container = running[0] if running else None
        time.sleep(0.5)
    assert container is not None, "\n".join(lines[-40:])
    job_id = container.name.removeprefix(CONTAINER_PREFIX)
    t0 = time.monotonic()
    subprocess.run(["scancel", job_id], check=True)
    thread.join(120)
    assert not thread.is_alive()
    gone_s = time.monotonic() - t0
    assert docker_client.containers.list(all=True, filters={"name": container.name}) == []
    # run-one unwound on SIGTERM: the job's /out filesystem is unmounted and its folder deleted.
    assert mounts_below(state / "slurm-jobs") == [] and list((state / "slurm-jobs").iterdir()) == []
    print(f"scancel → container removed and job accounted for in {gone_s:.1f} s")
    summary: Summary = box["summary"]
    assert summary.computed == 0 and len(summary.failed) == 1
    assert f"Slurm job {job_id} ended CANCELLED" in summary.failed[0], summary.failed
    _, runs = store.export()
    assert list(runs.status) == ["FAILED"] and "CANCELLED" in runs.reason.iloc[0]


def test_restarted_orchestrator_does_not_resubmit(local_slurm, tracking_server, experiment, docker_client,
                                                  tmp_path):  # fmt: skip
    subs = submissions(tmp_path / "submissions", REFERENCE)
    state = shared_state(tmp_path / "state")
    # The first orchestrator submits its job held (it cannot start), then is killed.
    first = subprocess.Popen(
        [sys.executable, "-m", "tests.cluster._helpers", str(state), str(subs), tracking_server.uri,
         experiment, "--hold"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    job_id = None
    for line in first.stdout:
        if "submitted as Slurm job" in line:
            job_id = line.rsplit(" ", 1)[1].strip()
            break
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert job_id is not None
    assert [jid for jid, _ in queued_jobs().values()] == [job_id]

    lines: list[str] = []
    store = ResultStore(tracking_server.uri, experiment=experiment)
    thread, box = _in_thread(lambda: slurm().run(evaluator(state, store, subs, lines.append), None, DATASETS))
    deadline = time.monotonic() + 120
    while not any("waiting for it" in line for line in lines) and time.monotonic() < deadline:
        time.sleep(0.2)
    subprocess.run(["scontrol", "release", job_id], check=True)
    thread.join(300)
    assert not thread.is_alive()
    assert any(f"already pending as Slurm job {job_id}; waiting for it" in line for line in lines), lines
    assert not any("submitted" in line for line in lines), lines
    assert box["summary"].computed == 1, "\n".join(lines[-30:])
    assert [r.info.status for r in store.runs_tagged(JOB_TAG, job_id)] == ["FINISHED"]
    assert len(list((state / "slurm").glob("*.sbatch"))) == 1


def test_cli_evaluate_with_the_slurm_executor(
    local_slurm, tracking_server, experiment, docker_client, tmp_path
):
    """What a maintainer types (`nox -s evaluate -- --executor slurm …`), defaults from a TOML file."""
    state = shared_state(tmp_path / "state")
    conf = tmp_path / "slurm.toml"
    conf.write_text('[slurm]\ngpus_per_job = 1\ncpus_per_job = 1\nmem_per_job = "2G"\npoll_s = 0.5\n')
    command = [sys.executable, "-m", "leaderboard", "--state-dir", str(state), "evaluate",
               "--executor", "slurm", "--slurm-config", str(conf), "--runner", "docker", "--gpu", "off",
               "--limit", "20", "--no-site", "--submission", REFERENCE,
               "--dataset", "datamol-default"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "submitted as Slurm job" in done.stdout, done.stdout[-2000:]
    assert "1 result(s) computed" in done.stdout
    store = ResultStore(tracking_server.uri, experiment=experiment)
    found = store.client.search_runs([store.experiment_id])
    assert [r.info.status for r in found] == ["FINISHED"]
    assert found[0].data.tags["slurm.cuda_visible_devices"] in {"0", "1"}
    assert '"cpus":1.0' in found[0].data.tags["sandbox"]
