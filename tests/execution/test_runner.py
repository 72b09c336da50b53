"""Tests for the runners (``docker_runner``, ``inprocess_runner``, ``sandbox``): real engine and fallback.

The sandbox tests run small Python snippets in a tiny image (``sandbox_image`` in conftest) through
``DockerRunner.run`` with its real arguments: no network, read-only root, uid 10001, no host environment,
limits and timeout.
"""

from __future__ import annotations

import json
import textwrap
import warnings
from pathlib import Path
from types import SimpleNamespace

import docker.errors
import pytest

from leaderboard.execution.docker_runner import DockerRunner, gpu_available
from leaderboard.execution.inprocess_runner import InProcessRunner
from leaderboard.execution.sandbox import (
    CONTAINER_COMMAND,
    NoSandboxWarning,
    RunOutcome,
    SandboxLimits,
    hardware_info,
)

SECRET_NAME = "CHEMROBUST_TEST_HOST_SECRET"

PROBE = """\
import errno, json, os, socket, sys

report = {"argv": sys.argv[1:], "uid": os.getuid(), "gid": os.getgid(), "env": dict(os.environ)}

try:
    socket.create_connection(("1.1.1.1", 53), timeout=3).close()
    report["network"] = "reachable"
except OSError as exc:
    report["network"] = f"unreachable: {exc}"
try:
    socket.getaddrinfo("pypi.org", 443)
    report["dns"] = "resolves"
except OSError as exc:
    report["dns"] = f"fails: {exc}"
report["interfaces"] = sorted(name for _, name in socket.if_nameindex())

try:
    open("/etc/chemrobust-probe", "w").close()
    report["root_fs"] = "writable"
except OSError as exc:
    report["root_fs"] = errno.errorcode.get(exc.errno, str(exc.errno))
with open("/tmp/probe", "w") as f:
    f.write("tmp is writable")
report["tmp"] = open("/tmp/probe").read()
try:
    open("/job/new-file", "w").close()
    report["job_mount"] = "writable"
except OSError as exc:
    report["job_mount"] = errno.errorcode.get(exc.errno, str(exc.errno))
report["job"] = json.load(open("/job/job.json"))
report["data"] = open("/data/input.txt").read()

with open("/out/result.json", "w") as f:
    json.dump(report, f)
print("probe done")
"""


def make_dirs(tmp_path: Path, snippet: str) -> dict[str, Path]:
    job, data, models, out = (tmp_path / n for n in ("job", "data", "models", "out"))
    for d in (job, data, models):
        d.mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"track": "probe"}))
    (job / "snippet.py").write_text(textwrap.dedent(snippet))
    (data / "input.txt").write_text("data visible")
    return {"job_dir": job, "data_dir": data, "models_dir": models, "out_dir": out}


def run_snippet(client, image: str, tmp_path: Path, snippet: str, **limit_overrides) -> RunOutcome:
    dirs = make_dirs(tmp_path, snippet)
    limits = SandboxLimits(**{"timeout_s": 60, "memory": "256m", **limit_overrides})
    return DockerRunner(client).run(image, limits=limits, gpu=False, **dirs)


# --------------------------------------------------------------------------------------------------------
# Through the real engine


@pytest.fixture(scope="module")
def probe(docker_client, sandbox_image, tmp_path_factory) -> tuple[RunOutcome, dict]:
    mp = pytest.MonkeyPatch()
    mp.setenv(SECRET_NAME, "hunter2")
    try:
        tmp = tmp_path_factory.mktemp("probe")
        outcome = run_snippet(docker_client, sandbox_image, tmp, PROBE)
    finally:
        mp.undo()
    result_file = tmp / "out" / "result.json"
    report = json.loads(result_file.read_text()) if result_file.is_file() else {}
    return outcome, report


@pytest.mark.docker
def test_probe_succeeds_and_results_come_back(probe):
    outcome, report = probe
    assert outcome.status == "succeeded", outcome
    assert outcome.exit_code == 0 and outcome.runner == "docker" and not outcome.gpu
    assert "probe done" in outcome.log_tail
    assert report["argv"] == CONTAINER_COMMAND
    assert report["job"] == {"track": "probe"} and report["data"] == "data visible"


@pytest.mark.docker
def test_network_is_unreachable(probe):
    _, report = probe
    assert report["network"].startswith("unreachable"), report["network"]
    assert report["dns"].startswith("fails"), report["dns"]
    assert report["interfaces"] == ["lo"]


@pytest.mark.docker
def test_root_fs_and_inputs_are_read_only_tmp_is_writable(probe):
    _, report = probe
    assert report["root_fs"] == "EROFS"
    assert report["job_mount"] == "EROFS"
    assert report["tmp"] == "tmp is writable"


@pytest.mark.docker
def test_runs_as_uid_10001(probe):
    _, report = probe
    assert (report["uid"], report["gid"]) == (10001, 10001)


@pytest.mark.docker
def test_host_environment_is_not_visible(probe):
    _, report = probe
    env = report["env"]
    assert SECRET_NAME not in env
    assert "hunter2" not in json.dumps(env)
    assert env["HF_HUB_OFFLINE"] == "1" and env["TRANSFORMERS_OFFLINE"] == "1" and env["HOME"] == "/tmp"


@pytest.mark.docker
def test_timeout_kills_the_container(docker_client, sandbox_image, tmp_path):
    outcome = run_snippet(
        docker_client, sandbox_image, tmp_path, "import time\ntime.sleep(120)\n", timeout_s=2
    )
    assert outcome.status == "timeout"
    assert outcome.exit_code is None
    assert outcome.reason == "wall-clock timeout after 2 s"
    assert outcome.wall_s < 30
    assert not docker_client.containers.list(all=True, filters={"ancestor": sandbox_image})


@pytest.mark.docker
def test_nonzero_exit_gives_last_stderr_line(docker_client, sandbox_image, tmp_path):
    snippet = """\
    import sys
    print("some progress")
    print("warning: first", file=sys.stderr)
    print("chemrobust: error: ValueError: bad SMILES 'C1CC'", file=sys.stderr)
    print("", file=sys.stderr)
    sys.exit(3)
    """
    outcome = run_snippet(docker_client, sandbox_image, tmp_path, snippet)
    assert outcome.status == "failed"
    assert outcome.exit_code == 3
    assert outcome.reason == "chemrobust: error: ValueError: bad SMILES 'C1CC'"
    assert "some progress" in outcome.log_tail


@pytest.mark.docker
def test_memory_hog_is_killed(docker_client, sandbox_image, tmp_path):
    snippet = "blocks = []\nwhile True:\n    blocks.append(b'x' * (16 << 20))\n"
    outcome = run_snippet(docker_client, sandbox_image, tmp_path, snippet, memory="64m")
    assert outcome.status == "failed"
    assert outcome.exit_code == 137
    assert "out of memory (limit 64m)" in outcome.reason


@pytest.mark.docker
def test_pids_limit(docker_client, sandbox_image, tmp_path):
    snippet = """\
    import sys, threading, time
    threads = []
    try:
        for _ in range(200):
            t = threading.Thread(target=time.sleep, args=(5,), daemon=True)
            t.start()
            threads.append(t)
    except RuntimeError as exc:
        sys.exit(f"stopped after {len(threads)} threads: {exc}")
    """
    outcome = run_snippet(docker_client, sandbox_image, tmp_path, snippet, pids=32)
    assert outcome.status == "failed"
    assert outcome.reason.startswith("stopped after"), outcome.reason


@pytest.mark.docker
def test_missing_image_is_a_failed_outcome_not_a_crash(docker_client, tmp_path):
    outcome = run_snippet(docker_client, "chemrobust-test/does-not-exist:0", tmp_path, "pass\n")
    assert outcome.status == "failed"
    assert outcome.reason.startswith("docker error:")


@pytest.mark.docker
def test_gpu_available_is_a_bool(docker_client):
    assert isinstance(gpu_available(docker_client), bool)


# --------------------------------------------------------------------------------------------------------
# Without an engine


def test_create_kwargs_hold_the_sandbox(tmp_path):
    dirs = make_dirs(tmp_path, "pass")
    kwargs = DockerRunner(client=None).create_kwargs(limits=SandboxLimits(), gpu=False, **dirs)
    assert kwargs["command"] == CONTAINER_COMMAND
    assert kwargs["network_disabled"] is True and kwargs["network_mode"] == "none"
    assert kwargs["read_only"] is True
    assert kwargs["user"] == "10001:10001"
    assert kwargs["cap_drop"] == ["ALL"] and kwargs["security_opt"] == ["no-new-privileges"]
    assert kwargs["mem_limit"] == kwargs["memswap_limit"] == "6g"
    assert kwargs["pids_limit"] == 512 and kwargs["nano_cpus"] == 2_000_000_000
    assert kwargs["tmpfs"] == {"/tmp": "rw,nosuid,nodev,size=2g,mode=1777"}
    assert "device_requests" not in kwargs
    mounts = {m["Target"]: m for m in kwargs["mounts"]}
    assert {t: m["ReadOnly"] for t, m in mounts.items()} == {
        "/job": True, "/data": True, "/models": True, "/out": False,
    }  # fmt: skip
    # The whole environment, nothing of the host's: the fixed variables and the thread pools' sizes.
    assert set(kwargs["environment"]) == {
        "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HOME", "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    }  # fmt: skip


def test_create_kwargs_gpu_and_writable_root(tmp_path):
    dirs = make_dirs(tmp_path, "pass")
    limits = SandboxLimits(read_only_root=False)
    kwargs = DockerRunner(client=None).create_kwargs(limits=limits, gpu=True, **dirs)
    assert kwargs["read_only"] is False
    (request,) = kwargs["device_requests"]
    assert request["Count"] == -1 and request["Capabilities"] == [["gpu"]]


class _FailingContainers:
    def __init__(self):
        self.removed = False

    def create(self, image, **kwargs):
        container = SimpleNamespace(id="abc", remove=self._remove)

        def start():
            raise docker.errors.APIError("cannot start: no such runtime")

        container.start = start
        return container

    def _remove(self, force):
        self.removed = force


def test_engine_error_is_reported_and_container_removed(tmp_path):
    containers = _FailingContainers()
    outcome = DockerRunner(SimpleNamespace(containers=containers)).run(
        "img", limits=SandboxLimits(), gpu=False, **make_dirs(tmp_path, "pass")
    )
    assert outcome.status == "failed" and outcome.reason.startswith("docker error:")
    assert containers.removed is True


def test_out_dir_is_writable_by_the_sandbox_user(tmp_path):
    dirs = make_dirs(tmp_path, "pass")
    DockerRunner(SimpleNamespace(containers=_FailingContainers())).run(
        "img", limits=SandboxLimits(), gpu=False, **dirs
    )
    st = dirs["out_dir"].stat()
    assert st.st_uid == 10001 or (st.st_mode & 0o777) == 0o777


def test_missing_job_file_raises(tmp_path):
    dirs = make_dirs(tmp_path, "pass")
    (dirs["job_dir"] / "job.json").unlink()
    with pytest.raises(FileNotFoundError, match="job.json"):
        DockerRunner(client=None).run("img", limits=SandboxLimits(), gpu=False, **dirs)


def test_gpu_available_reads_runtimes():
    assert gpu_available(SimpleNamespace(info=lambda: {"Runtimes": {"runc": {}, "nvidia": {}}}))
    assert not gpu_available(SimpleNamespace(info=lambda: {"Runtimes": {"runc": {}}}))


def test_hardware_info_keys():
    info = hardware_info()
    assert {"cpu_model", "cpu_count", "gpu_model", "gpu_driver"} <= set(info)
    assert all(isinstance(v, str) and v for v in info.values())


def test_limits_are_validated():
    with pytest.raises(ValueError, match="memory"):
        SandboxLimits(memory="lots")
    with pytest.raises(ValueError, match="greater than 0"):
        SandboxLimits(timeout_s=0)


# --------------------------------------------------------------------------------------------------------
# In-process fallback: a fake repository whose `evaluators` package runs a snippet


FAKE_MAIN = """\
import argparse, json, os, runpy, sys
p = argparse.ArgumentParser()
p.add_argument("command")
for name in ("--job", "--data", "--models", "--out", "--submission"):
    p.add_argument(name)
args = p.parse_args()
sys.argv = ["snippet", *sys.argv[1:]]
runpy.run_path(os.path.join(os.path.dirname(args.job), "snippet.py"), run_name="__main__")
"""


@pytest.fixture()
def fake_repo(tmp_path) -> Path:
    pkg = tmp_path / "repo" / "evaluators"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(FAKE_MAIN)
    return tmp_path / "repo"


def run_in_process(fake_repo: Path, tmp_path: Path, snippet: str, **limit_overrides) -> RunOutcome:
    dirs = make_dirs(tmp_path, snippet)
    limits = SandboxLimits(**{"timeout_s": 60, **limit_overrides})
    with pytest.warns(NoSandboxWarning, match="NO sandbox"):
        return InProcessRunner(fake_repo).run(None, limits=limits, gpu=False, **dirs)


def test_in_process_runs_with_a_minimal_env(fake_repo, tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_NAME, "hunter2")
    snippet = """\
    import json, os, sys
    out = sys.argv[sys.argv.index("--out") + 1]
    json.dump({"env": dict(os.environ), "cwd": os.getcwd()}, open(os.path.join(out, "result.json"), "w"))
    print("done")
    """
    outcome = run_in_process(fake_repo, tmp_path, snippet)
    assert outcome.status == "succeeded" and outcome.runner == "in-process", outcome
    report = json.loads((tmp_path / "out" / "result.json").read_text())
    assert SECRET_NAME not in report["env"]
    assert report["env"]["HF_HUB_OFFLINE"] == "1" and report["env"]["TRANSFORMERS_OFFLINE"] == "1"
    assert report["env"]["PYTHONPATH"] == str(fake_repo.resolve())
    assert report["cwd"] == str(fake_repo.resolve())
    assert "done" in outcome.log_tail


def test_in_process_failure_reason_and_timeout(fake_repo, tmp_path):
    failing = "import sys\nprint('x', file=sys.stderr)\nsys.exit('chemrobust: error: boom')\n"
    outcome = run_in_process(fake_repo, tmp_path / "a", failing)
    assert (outcome.status, outcome.exit_code, outcome.reason) == ("failed", 1, "chemrobust: error: boom")

    outcome = run_in_process(fake_repo, tmp_path / "b", "import time\ntime.sleep(60)\n", timeout_s=1)
    assert outcome.status == "timeout" and outcome.reason == "wall-clock timeout after 1 s"
    assert outcome.wall_s < 20


def test_in_process_warning_is_emitted_every_run(fake_repo, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        InProcessRunner(fake_repo).run(
            None, limits=SandboxLimits(timeout_s=30), gpu=False, **make_dirs(tmp_path, "pass\n")
        )
    assert any(issubclass(w.category, NoSandboxWarning) for w in caught)
