"""The services themselves, for real: Slurm hands out fake GPUs; the MLflow server stores in PostgreSQL."""

from __future__ import annotations

import subprocess
import time

import pytest

from leaderboard.cluster.local_slurm import ensure_local_slurm
from leaderboard.cluster.tracking_server import ensure_tracking_server
from leaderboard.store import ResultStore
from tests.execution._state import cache_root

pytestmark = pytest.mark.cluster


def test_bring_up_is_idempotent(local_slurm, tracking_server):
    again = ensure_local_slurm(gpus=2, log=print)
    assert again.reused and again.gpus == 2
    port = int(tracking_server.uri.rsplit(":", 1)[1])
    server = ensure_tracking_server(
        cache_root() / "cluster", port=port, database="chemrobust_tests", log=print
    )
    assert server.reused and server.uri == tracking_server.uri
    assert server.backend.startswith("postgresql+psycopg2://chemrobust:***@127.0.0.1:")


def test_two_jobs_get_their_own_fake_gpu(local_slurm, tmp_path):
    script = tmp_path / "gpu.sh"
    script.write_text("#!/bin/bash\necho \"$CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS\"\nsleep 2\n")
    ids = [
        subprocess.run(["sbatch", "--parsable", "--gres=gpu:1", "--cpus-per-task=1", "--mem=100",
                        f"--output={tmp_path}/%j.out", str(script)],
                       capture_output=True, text=True, check=True).stdout.strip()
        for _ in range(2)
    ]  # fmt: skip
    outs = [tmp_path / f"{i}.out" for i in ids]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(o.exists() and o.stat().st_size for o in outs):
        time.sleep(0.3)
    seen = sorted(o.read_text().split()[0] for o in outs)
    assert seen == ["0", "1"], seen


def test_server_stores_runs_in_postgres(tracking_server, experiment):
    store = ResultStore(tracking_server.uri, experiment=experiment)
    run_id = store.start("k" * 32, name="probe", tags={"submission": "probe"}, params={"a": 1})
    store.fail(run_id, "probe reason")
    # A second client, given the experiment by id (as every Slurm job is), sees the same run.
    other = ResultStore(tracking_server.uri, experiment_id=store.experiment_id)
    runs = other.runs_tagged("submission", "probe")
    assert [r.info.run_id for r in runs] == [run_id]
    assert runs[0].info.status == "FAILED"
    assert runs[0].data.tags["chemrobust.failure_reason"] == "probe reason"


def test_stopping_ends_the_server_it_started_and_leaves_a_reused_one(tmp_path):
    """What the suite started it stops afterwards (tests/conftest.py); what it found running it leaves."""
    import json
    import os
    import subprocess
    import sys

    from leaderboard.cluster.tracking_server import TrackingServer, stop_tracking_server

    folder = tmp_path / "tracking-server"
    folder.mkdir()
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    (folder / "server.json").write_text(json.dumps({"pid": process.pid}))
    reused = TrackingServer("http://127.0.0.1:1", "postgresql://…", tmp_path, True, {})
    assert stop_tracking_server(reused, tmp_path) == [] and process.poll() is None
    started = TrackingServer("http://127.0.0.1:1", "postgresql://…", tmp_path, False, {})
    assert stop_tracking_server(started, tmp_path) == [f"mlflow server (pid {process.pid})"]
    assert process.wait(timeout=5) is not None
    try:
        os.kill(process.pid, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError("the server process is still there")
