"""``--executor slurm`` without a cluster: its options and defaults file, the batch script, the refusals.

What needs Slurm itself runs in ``tests/cluster/``; these check what a maintainer meets before any job is
submitted: a bad defaults file or option named with its field, a local store refused with the fix, and the
batch script a job is given (its name is the result key, its allocation and the clean-up trap).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.executors.slurm_job import JobRequest, SlurmOptions, batch_script

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_file_then_options(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.toml"
    conf.write_text('[slurm]\npartition = "gpu"\ngpus_per_job = 1\nsbatch_args = ["--qos=normal"]\n')
    options = SlurmOptions.load(conf, {"partition": "a100", "time": None})
    assert (options.partition, options.gpus_per_job, options.time) == ("a100", 1, "02:00:00")
    assert options.sbatch_args == ("--qos=normal",)


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ('[slurm]\ngpus_per_job = -1\n', {}, "slurm.toml [slurm]: 'gpus_per_job': Input should be greater"),
        ('[slurm]\npartiton = "gpu"\n', {}, "'partiton': Extra inputs are not permitted"),
        ("[slurm\n", {}, "slurm.toml: cannot read the Slurm defaults"),
        ("", {"mem_per_job": "lots"}, "'mem_per_job': String should match pattern"),
    ],
)
def test_bad_defaults_named_with_their_field(tmp_path: Path, text: str, overrides: dict, message: str):
    conf = tmp_path / "slurm.toml"
    conf.write_text(text)
    with pytest.raises(ValueError) as info:
        SlurmOptions.load(conf, overrides)
    assert message in str(info.value)


def test_batch_script_is_named_by_the_key_and_removes_its_container(tmp_path: Path) -> None:
    request = JobRequest("sub-a", "amore", "datamol-default", tmp_path / "subs", "7", "k" * 32, "docker",
                         True, "python:3.11-slim-bookworm", {"limit": 20}, {"cpus": 1.0})  # fmt: skip
    options = SlurmOptions(gpus_per_job=1, cpus_per_job=3, mem_per_job="6G", partition="gpu",
                           sbatch_args=("--constraint=a100",))  # fmt: skip
    script = batch_script(request, options, repo_root=ROOT, state_dir=tmp_path / "state",
                          tracking_uri="http://127.0.0.1:5055", log_file=tmp_path / "x.log")  # fmt: skip
    directives = [line.removeprefix("#SBATCH ") for line in script.splitlines() if line.startswith("#SBATCH")]
    assert f"--job-name=chemrobust-{'k' * 32}" in directives
    assert {"--cpus-per-task=3", "--mem=6G", "--gres=gpu:1", "--partition=gpu", "--constraint=a100"} <= set(
        directives
    )
    assert 'container="chemrobust-slurm-${SLURM_JOB_ID}"' in script
    assert "trap cleanup EXIT" in script and 'docker rm -f "$container"' in script
    assert "--expect-key " + "k" * 32 in script
    assert "export MLFLOW_TRACKING_URI=http://127.0.0.1:5055" in script
    # The script is valid bash.
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0


def _cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", "--state-dir", str(tmp_path / "state"), "evaluate",
         "--executor", "slurm", "--no-site", "--submission", "char-ngram-baseline", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip


def test_cli_refuses_a_local_store(tmp_path: Path) -> None:
    done = _cli(tmp_path, env={"MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path}/m.db"})
    assert done.returncode == 2, done.stderr
    assert "--executor slurm needs a shared tracking server (MLFLOW_TRACKING_URI=http://…)" in done.stderr
    assert "nox -s tracking-server" in done.stderr


def test_cli_names_a_bad_option(tmp_path: Path) -> None:
    done = _cli(tmp_path, "--time", "soon", env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:9"})
    assert done.returncode == 2
    assert "error: the --slurm-* options: 'time': String should match pattern" in done.stderr
