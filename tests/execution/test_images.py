"""Tests for ``leaderboard.execution.images``, ``…wheelhouse`` and the files in ``containers/``.

The content-addressed tag and the wheelhouse bookkeeping are tested on a temporary copy of a fake repository.
The build tests use a tiny Dockerfile in that fake repository (the full torch image is the end-to-end test's
job); they still go through ``ensure_image`` and the real engine, with ``network_mode="none"``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import docker.errors
import pytest

from leaderboard.execution import images, wheelhouse
from leaderboard.execution.images import (
    BOOTSTRAP_BASE_TAG,
    ImageBuildError,
    ImageSpec,
    ensure_base_image,
    ensure_image,
    image_tag,
    runtime_tag,
)
from leaderboard.execution.wheelhouse import ensure_extra_wheelhouse, ensure_wheelhouse

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTAINERS = REPO_ROOT / "containers"
PIN = re.compile(r"^([a-z0-9][a-z0-9-]*)==([0-9][0-9A-Za-z.+!-]*) \\$")
HASH = re.compile(r"^    --hash=sha256:[0-9a-f]{64}$")


@pytest.fixture()
def fake_repo(tmp_path) -> Path:
    """A repository root with the real containers/ files, a small evaluators/ and a submission folder."""
    root = tmp_path / "repo"
    (root / "containers").mkdir(parents=True)
    names = ("Dockerfile", "Dockerfile.submission", "requirements.lock", "torch-cpu.txt", "torch-cuda.txt",
             "bootstrap-base.sh")  # fmt: skip
    for name in names:
        shutil.copy2(CONTAINERS / name, root / "containers" / name)
    ev = root / "evaluators"
    (ev / "tracks" / "amore").mkdir(parents=True)
    (ev / "__init__.py").write_text('"""evaluators"""\n')
    (ev / "__main__.py").write_text("print('hello from the image')\n")
    (ev / "tracks" / "amore" / "__init__.py").write_text("TRACK = 'amore'\n")
    sub = root / "submissions" / "demo"
    sub.mkdir(parents=True)
    (sub / "submission.yaml").write_text("id: demo\n")
    (sub / "adapter.py").write_text("class DemoAdapter: ...\n")
    return root


def spec_for(root: Path, **overrides) -> ImageSpec:
    fields = {
        "submission_id": "demo",
        "submission_dir": root / "submissions" / "demo",
        "extra_requirements": (),
        "base_image": "python:3.11-slim-bookworm",
        "torch_variant": "cpu",
    }
    return ImageSpec(**{**fields, **overrides})


# --------------------------------------------------------------------------------------------------------
# image_tag


def test_image_tag_is_deterministic_and_well_formed(fake_repo, tmp_path):
    tag = image_tag(spec_for(fake_repo), fake_repo)
    assert re.fullmatch(r"chemrobust/demo:[0-9a-f]{16}", tag)
    assert image_tag(spec_for(fake_repo), fake_repo) == tag
    copy = tmp_path / "elsewhere"
    shutil.copytree(fake_repo, copy)
    assert image_tag(spec_for(copy), copy) == tag, "the tag depends on content, not on paths"


@pytest.mark.parametrize(
    "path",
    ["submissions/demo/adapter.py", "evaluators/tracks/amore/__init__.py", "containers/Dockerfile",
     "containers/Dockerfile.submission", "containers/requirements.lock", "containers/torch-cpu.txt"],
)  # fmt: skip
def test_image_tag_changes_with_one_byte(fake_repo, path):
    before = image_tag(spec_for(fake_repo), fake_repo)
    target = fake_repo / path
    data = bytearray(target.read_bytes())
    data[-1] ^= 0x01
    target.write_bytes(bytes(data))
    assert image_tag(spec_for(fake_repo), fake_repo) != before


def test_image_tag_changes_with_new_file_and_rename(fake_repo):
    before = image_tag(spec_for(fake_repo), fake_repo)
    (fake_repo / "submissions" / "demo" / "extra.txt").write_text("")
    after_new = image_tag(spec_for(fake_repo), fake_repo)
    assert after_new != before
    (fake_repo / "submissions" / "demo" / "extra.txt").rename(
        fake_repo / "submissions" / "demo" / "other.txt"
    )
    assert image_tag(spec_for(fake_repo), fake_repo) not in {before, after_new}


def test_image_tag_ignores_bytecode_caches(fake_repo):
    before = image_tag(spec_for(fake_repo), fake_repo)
    cache = fake_repo / "evaluators" / "__pycache__"
    cache.mkdir()
    (cache / "x.cpython-311.pyc").write_bytes(b"\0junk")
    (fake_repo / "submissions" / "demo" / "stray.pyc").write_bytes(b"\0junk")
    assert image_tag(spec_for(fake_repo), fake_repo) == before


def test_image_tag_covers_requirements_base_and_variant(fake_repo):
    tags = {
        image_tag(spec_for(fake_repo), fake_repo),
        image_tag(spec_for(fake_repo, extra_requirements=("selfies==2.1.1",)), fake_repo),
        image_tag(spec_for(fake_repo, base_image=BOOTSTRAP_BASE_TAG), fake_repo),
        image_tag(spec_for(fake_repo, torch_variant="cuda"), fake_repo),
    }
    assert len(tags) == 4


def test_submissions_share_a_runtime_image_unless_what_it_holds_differs(fake_repo, tmp_path):
    runtime = runtime_tag(spec_for(fake_repo), fake_repo)
    assert re.fullmatch(r"chemrobust-runtime:[0-9a-f]{16}", runtime)
    other = tmp_path / "other-submission"
    shutil.copytree(fake_repo / "submissions" / "demo", other)
    (other / "adapter.py").write_text("class OtherAdapter: ...\n")
    (fake_repo / "evaluators" / "__main__.py").write_text("print('changed')\n")
    (fake_repo / "containers" / "Dockerfile.submission").write_text("FROM scratch\n")
    # The evaluators, the submission folder and the thin Dockerfile are the submission image's layers.
    assert runtime_tag(spec_for(fake_repo, submission_id="other", submission_dir=other), fake_repo) == runtime
    assert runtime_tag(spec_for(fake_repo), fake_repo) == runtime
    # What the runtime image holds changes its tag.
    different = {
        runtime_tag(spec_for(fake_repo, extra_requirements=("selfies==2.1.1",)), fake_repo),
        runtime_tag(spec_for(fake_repo, base_image=BOOTSTRAP_BASE_TAG), fake_repo),
        runtime_tag(spec_for(fake_repo, torch_variant="cuda"), fake_repo),
    }
    for path in ("containers/Dockerfile", "containers/requirements.lock", "containers/torch-cpu.txt"):
        target = fake_repo / path
        original = target.read_bytes()
        target.write_bytes(original + b"\n")
        different.add(runtime_tag(spec_for(fake_repo), fake_repo))
        target.write_bytes(original)
    assert len(different) == 6 and runtime not in different


def test_image_tag_needs_the_submission_folder(fake_repo):
    with pytest.raises(FileNotFoundError, match="no-such-dir"):
        image_tag(spec_for(fake_repo, submission_dir=fake_repo / "no-such-dir"), fake_repo)


def test_image_spec_is_frozen_and_strict(fake_repo):
    spec = spec_for(fake_repo)
    with pytest.raises(ValueError, match="frozen"):
        spec.submission_id = "other"
    with pytest.raises(ValueError, match="unknown_field"):
        spec_for(fake_repo, unknown_field=1)
    with pytest.raises(ValueError, match="submission_id"):
        spec_for(fake_repo, submission_id="Not A Docker Name")
    with pytest.raises(ValueError, match="torch_variant"):
        spec_for(fake_repo, torch_variant="rocm")


# --------------------------------------------------------------------------------------------------------
# containers/: lock files, Dockerfile, bootstrap script


def read_pins(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    pins: dict[str, str] = {}
    requirement_lines = [line for line in lines if not line.startswith("    --hash=")]
    for line in requirement_lines:
        match = PIN.match(line)
        assert match, f"{path.name}: not an exact pin followed by a hash: {line!r}"
        assert match.group(1) not in pins, f"{path.name}: {match.group(1)} pinned twice"
        pins[match.group(1)] = match.group(2)
    hash_lines = [line for line in lines if line.startswith("    --hash=")]
    assert len(hash_lines) == len(requirement_lines), f"{path.name}: one sha256 per pin"
    assert all(HASH.match(line) for line in hash_lines)
    return pins


def test_lock_files_hold_only_exact_hashed_pins():
    pins = read_pins(CONTAINERS / "requirements.lock")
    torch = read_pins(CONTAINERS / "torch-cpu.txt")
    assert list(torch) == ["torch"] and torch["torch"].startswith("2.13.0")
    needed = {"transformers", "tokenizers", "safetensors", "huggingface-hub", "numpy", "rdkit", "faiss-cpu",
              "pyyaml", "tqdm", "filelock", "sympy", "networkx", "jinja2", "fsspec"}  # fmt: skip
    assert needed <= set(pins), needed - set(pins)
    assert not {"docker", "mlflow", "torch"} & set(pins)


def test_lock_header_says_how_to_regenerate():
    text = (CONTAINERS / "requirements.lock").read_text()
    assert "python containers/lock.py" in text.split("\n\n")[0]


def test_cuda_torch_file_pins_torch_and_names_its_index():
    text = (CONTAINERS / "torch-cuda.txt").read_text()
    assert re.search(r"^torch==2\.13\.0\b", text, re.M)
    assert re.search(r"^--extra-index-url https://download\.pytorch\.org/whl/cu\d+$", text, re.M)


def test_dockerfile_contract():
    text = (CONTAINERS / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=python:3\.11-slim-bookworm$", text, re.M)
    assert re.search(r"^ARG TORCH_VARIANT=cpu$", text, re.M)
    assert re.search(r"^FROM \$\{BASE_IMAGE\} AS deps$", text, re.M)
    assert len(re.findall(r"^FROM ", text, re.M)) == 2
    assert re.search(r"^USER 10001:10001$", text, re.M)
    assert 'ENTRYPOINT ["python", "-m", "evaluators"]' in text
    assert "COPY --from=deps /opt/venv /opt/venv" in text
    for line in re.findall(r"pip install[^;]*", text.replace("\\\n", " ")):
        assert "--no-index" in line, f"a pip install without --no-index: {line}"
    for env in ("PYTHONPATH=/app", "HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "HOME=/tmp"):
        assert env in text


def test_bootstrap_script_is_valid_and_names_no_mirror():
    script = CONTAINERS / "bootstrap-base.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    assert not re.search(r"https?://", text), "mirror must come from apt config or CHEMROBUST_DEBIAN_MIRROR"
    assert "CHEMROBUST_DEBIAN_MIRROR" in text and "--variant=minbase" in text
    usage = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage" in usage.stderr


# --------------------------------------------------------------------------------------------------------
# Wheelhouses (pip replaced by a fake)


@pytest.fixture()
def fake_pip(monkeypatch):
    calls: list[list[str]] = []

    def pip_download(args, log):
        calls.append(args)
        dest = Path(args[args.index("-d") + 1])
        requirement_file = Path(args[args.index("-r") + 1])
        (dest / f"{requirement_file.stem}-0-py3-none-any.whl").write_bytes(b"wheel")

    monkeypatch.setattr(wheelhouse, "_pip_download", pip_download)
    return calls


def test_wheelhouse_is_fetched_once(fake_repo, tmp_path, fake_pip):
    first = ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    assert first.name.startswith("cpu-") and (first / ".complete").is_file()
    assert len(fake_pip) == 2
    lock_call, torch_call = fake_pip
    assert "--no-deps" in lock_call and "--require-hashes" in lock_call
    assert "--no-deps" in torch_call, "the CPU torch file is hashed, hence complete"
    again = ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    assert again == first and len(fake_pip) == 2


def test_half_done_wheelhouse_is_redone(fake_repo, tmp_path, fake_pip):
    first = ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    (first / ".complete").unlink()
    (first / "partial-download.whl.tmp").write_bytes(b"")
    again = ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    assert again == first and len(fake_pip) == 4
    assert not (again / "partial-download.whl.tmp").exists()


def test_wheelhouse_key_follows_the_lock(fake_repo, tmp_path, fake_pip):
    first = ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    lock = fake_repo / "containers" / "requirements.lock"
    lock.write_text(lock.read_text() + "# a comment changes nothing pip reads\n")
    assert ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None) == first
    lock.write_text(lock.read_text().replace("tqdm==", "tqdm==9"))
    second = ensure_wheelhouse("cpu", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    assert second != first
    assert not first.exists(), "the older wheelhouse of the variant is removed"


def test_unlocked_cuda_torch_is_fetched_with_dependencies(fake_repo, tmp_path, fake_pip):
    ensure_wheelhouse("cuda", tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    assert "--no-deps" not in fake_pip[1]


def test_extra_wheelhouse(fake_repo, tmp_path, fake_pip):
    empty = ensure_extra_wheelhouse([], tmp_path / "state", repo_root=fake_repo, log=lambda _: None)
    assert [p.name for p in empty.iterdir()] == [".complete"] and not fake_pip
    extra = ensure_extra_wheelhouse(["toolz==1.1.0"], tmp_path / "state", repo_root=fake_repo,
                                    log=lambda _: None)  # fmt: skip
    download = fake_pip[-1]
    assert "--no-deps" not in download and "-c" in download and "--find-links" in download
    assert (extra / ".complete").is_file() and extra != empty
    for bad in ("toolz", "toolz>=1", "--index-url=http://evil/ x==1", "git+https://x/y.git==1"):
        with pytest.raises(ValueError, match="exact pin"):
            ensure_extra_wheelhouse([bad], tmp_path / "state", repo_root=fake_repo, log=lambda _: None)


# --------------------------------------------------------------------------------------------------------
# Errors and the base image (fake clients)


def test_build_error_shows_the_log_tail():
    tail = "\n".join(f"line {i}" for i in range(100))
    text = str(ImageBuildError("demo", "The command '/bin/sh -c false' returned a non-zero code: 1", tail))
    assert "demo" in text and "returned a non-zero code" in text
    assert "line 99" in text and "line 70" in text and "line 69" not in text


class _Images:
    def __init__(self, present, pull_error=None):
        self.present = set(present)
        self.pull_error = pull_error
        self.pulled = []

    def get(self, ref):
        if ref not in self.present:
            raise docker.errors.ImageNotFound(ref)
        return SimpleNamespace(id=f"sha256:{ref}")

    def pull(self, ref):
        self.pulled.append(ref)
        if self.pull_error:
            raise self.pull_error
        self.present.add(ref)


def test_base_image_present_is_used(tmp_path):
    client = SimpleNamespace(images=_Images({"python:3.11-slim-bookworm"}))
    assert ensure_base_image(client, "python:3.11-slim-bookworm", tmp_path, log=lambda _: None) == (
        "python:3.11-slim-bookworm"
    )
    assert client.images.pulled == []


def test_base_image_is_pulled_when_possible(tmp_path):
    client = SimpleNamespace(images=_Images(set()))
    lines: list[str] = []
    assert ensure_base_image(client, "python:3.11-slim-bookworm", tmp_path, log=lines.append) == (
        "python:3.11-slim-bookworm"
    )
    # Exactly one pull, of the reference asked for, and it is what made the image present.
    assert client.images.pulled == ["python:3.11-slim-bookworm"]
    assert "python:3.11-slim-bookworm" in client.images.present
    assert lines[-1] == "pulled python:3.11-slim-bookworm"


def test_base_image_falls_back_to_the_bootstrap_base_loudly(tmp_path):
    error = docker.errors.APIError("Get https://registry-1.docker.io/v2/: no such host")
    client = SimpleNamespace(images=_Images({BOOTSTRAP_BASE_TAG}, pull_error=error))
    lines: list[str] = []
    assert (
        ensure_base_image(client, "python:3.11-slim-bookworm", tmp_path, log=lines.append)
        == BOOTSTRAP_BASE_TAG
    )
    text = "\n".join(lines)
    assert "WARNING" in text and "no such host" in text and BOOTSTRAP_BASE_TAG in text
    assert client.images.pulled == ["python:3.11-slim-bookworm"], "the fallback comes after a real attempt"


def test_base_image_bootstrap_failure_is_clear(tmp_path):
    (tmp_path / "containers").mkdir()
    (tmp_path / "containers" / "bootstrap-base.sh").write_text("echo 'debootstrap: not root' >&2; exit 1\n")
    client = SimpleNamespace(images=_Images(set(), pull_error=docker.errors.APIError("no registry")))
    with pytest.raises(images.BaseImageError, match="not root"):
        ensure_base_image(client, "python:3.11-slim-bookworm", tmp_path, log=lambda _: None)


# --------------------------------------------------------------------------------------------------------
# Building through the real engine (tiny Dockerfile, empty wheelhouse)

NO_NETWORK = """RUN python3 -c "import socket, sys; s = socket.socket(); s.settimeout(3); \\
sys.exit('build has network' if s.connect_ex(('1.1.1.1', 53)) == 0 else 0)"
"""
# The runtime image: what containers/Dockerfile builds, without the wheels.
TINY_DOCKERFILE = f"""\
ARG BASE_IMAGE
FROM ${{BASE_IMAGE}}
ARG TORCH_VARIANT
{NO_NETWORK}RUN echo "variant=${{TORCH_VARIANT}}"
"""
# The submission's layers: what containers/Dockerfile.submission builds, and a step that may fail.
TINY_SUBMISSION_DOCKERFILE = f"""\
ARG RUNTIME_IMAGE
FROM ${{RUNTIME_IMAGE}}
COPY evaluators/ /app/evaluators/
COPY submission/ /submission/
{NO_NETWORK}RUN test -r /submission/secret-mode.txt && {{fail}}
"""


@pytest.fixture()
def tiny_repo(fake_repo, tmp_path, monkeypatch):
    wheelhouse = tmp_path / "state" / "wheelhouse" / "empty"
    wheelhouse.mkdir(parents=True)
    (wheelhouse / ".complete").write_text("")
    monkeypatch.setattr(images, "ensure_wheelhouse", lambda *a, **k: wheelhouse)
    secret = fake_repo / "submissions" / "demo" / "secret-mode.txt"
    secret.write_text("owner-only on the host, readable in the image\n")
    secret.chmod(0o600)
    return fake_repo


def write_tiny_dockerfile(repo: Path, fail: str) -> None:
    (repo / "containers" / "Dockerfile").write_text(TINY_DOCKERFILE)
    thin = TINY_SUBMISSION_DOCKERFILE.replace("{fail}", fail)
    (repo / "containers" / "Dockerfile.submission").write_text(thin)


@pytest.mark.docker
def test_ensure_image_builds_then_reuses(docker_client, sandbox_image, tiny_repo, tmp_path, monkeypatch):
    write_tiny_dockerfile(tiny_repo, "true")
    wheels = images.ensure_wheelhouse
    prepared: list[str] = []
    monkeypatch.setattr(images, "ensure_wheelhouse", lambda *a, **k: prepared.append("w") or wheels(*a, **k))
    spec = spec_for(tiny_repo, base_image=BOOTSTRAP_BASE_TAG, submission_id="demo-test")
    other = tmp_path / "other"
    shutil.copytree(tiny_repo / "submissions" / "demo", other)
    (other / "adapter.py").write_text("class OtherAdapter: ...\n")
    second = spec_for(tiny_repo, base_image=BOOTSTRAP_BASE_TAG, submission_id="demo-2", submission_dir=other)
    lines: list[str] = []
    runtime = runtime_tag(spec, tiny_repo)
    # Another test (or an earlier run) may have left this tiny runtime image: it is built here, not reused.
    if docker_client.images.list(name=runtime):
        docker_client.images.remove(runtime, force=True)
    built = ensure_image(
        docker_client, spec, repo_root=tiny_repo, state_dir=tmp_path / "state", log=lines.append
    )
    tags = [built.tag, runtime]
    try:
        assert not built.reused and built.tag == image_tag(spec, tiny_repo)
        assert any("variant=cpu" in line for line in lines) and prepared == ["w"]
        again = ensure_image(docker_client, spec, repo_root=tiny_repo, state_dir=tmp_path / "state",
                             log=lambda _: None)  # fmt: skip
        assert again.reused and again.image_id == built.image_id
        labels = docker_client.images.get(built.tag).labels
        assert labels["org.chemrobust.submission"] == "demo-test"
        # Another submission is built on the same runtime image: no wheels prepared or sent, no runtime step
        # run again, and its image starts with the runtime image's layers.
        lines.clear()
        other_built = ensure_image(docker_client, second, repo_root=tiny_repo, state_dir=tmp_path / "state",
                                   log=lines.append)  # fmt: skip
        tags.append(other_built.tag)
        assert not other_built.reused and prepared == ["w"]
        assert not any('echo "variant=' in line or "building the runtime" in line for line in lines)
        layers = [docker_client.images.get(t).attrs["RootFS"]["Layers"] for t in (runtime, other_built.tag)]
        assert layers[1][: len(layers[0])] == layers[0] and len(layers[1]) > len(layers[0])
        assert not list((tmp_path / "state" / "tmp").iterdir()), "the build contexts are removed"
    finally:
        for tag in tags:
            docker_client.images.remove(tag, force=True)


@pytest.mark.docker
def test_ensure_image_build_failure_raises_with_log(docker_client, sandbox_image, tiny_repo, tmp_path):
    write_tiny_dockerfile(tiny_repo, "echo 'submission setup exploded' && exit 3")
    spec = spec_for(tiny_repo, base_image=BOOTSTRAP_BASE_TAG, submission_id="demo-broken")
    with pytest.raises(ImageBuildError) as info:
        ensure_image(
            docker_client, spec, repo_root=tiny_repo, state_dir=tmp_path / "state", log=lambda _: None
        )
    assert "non-zero code: 3" in info.value.reason
    assert "submission setup exploded" in str(info.value)
    assert not docker_client.images.list(name="chemrobust/demo-broken")


@pytest.mark.docker
def test_ensure_image_needs_the_base_locally(docker_client, tiny_repo, tmp_path):
    spec = spec_for(tiny_repo, base_image="chemrobust-test/no-such-base:0")
    with pytest.raises(ImageBuildError, match="ensure_base_image"):
        ensure_image(
            docker_client, spec, repo_root=tiny_repo, state_dir=tmp_path / "state", log=lambda _: None
        )
