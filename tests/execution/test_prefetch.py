"""Weights are fetched on the host, before the sandbox, at the pinned revision (issue 4, item 2).

The real ``huggingface_hub`` client code runs against a local HTTP server that answers the requests it
makes (``HF_ENDPOINT``): the tree listing ``GET /api/models/<repo>/tree/<revision>`` and ``HEAD``/``GET
/<repo>/resolve/<revision>/<file>`` with the headers the hub sends (``X-Repo-Commit``, ``ETag`` or
``X-Linked-Etag`` for LFS files, ``Content-Length``). The server records every request, so the tests can
tell which files the client asked for.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import stat
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.execution.docker_runner import DockerRunner
from leaderboard.execution.sandbox import CONTAINER_ENV, SandboxLimits
from leaderboard.execution.weights import WeightsError, fetch_weights
from leaderboard.intake.manifest import load_submission
from tests.execution._state import shared_state

REPO = "chemrobust-test/tiny-model"
REVISION = hashlib.sha1(b"chemrobust-test revision 1").hexdigest()
OTHER = hashlib.sha1(b"chemrobust-test revision 2").hexdigest()
FILES = {
    "config.json": b'{"model_type": "bert", "hidden_size": 8}\n',
    "tokenizer.json": b'{"version": "1.0", "model": {"type": "WordLevel"}}\n',
    "tokenizer_config.json": b'{"model_max_length": 128}\n',
    "vocab.txt": b"[PAD]\n[UNK]\nC\nO\nN\n",
    "model.safetensors": b"\x08\x00\x00\x00\x00\x00\x00\x00{}      " + bytes(range(64)),
    "pytorch_model.bin": b"\x80\x04\x95 a pickle that would run code when loaded",
    "train.py": b"print('training script')\n",
    "data/corpus.parquet": b"PAR1 not needed to run the model",
}
LFS = {"model.safetensors", "pytorch_model.bin"}


def git_blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


class FakeHub(http.server.ThreadingHTTPServer):
    """The slice of the Hub's HTTP API used by ``snapshot_download`` and ``verify_repo_checksums``."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HubHandler)
        self.files = dict(FILES)
        self.served_commit = REVISION  # what X-Repo-Commit says
        self.tampered: dict[str, bytes] = {}  # served instead of the listed content
        self.requests: list[tuple[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"

    def asked_for(self, name: str) -> bool:
        return any(path.endswith(f"/resolve/{REVISION}/{name}") for _, path in self.requests)


class _HubHandler(http.server.BaseHTTPRequestHandler):
    server: FakeHub

    def log_message(self, *args) -> None:
        pass

    def _send(self, code: int, body: bytes, headers: dict[str, str], *, head: bool = False) -> None:
        self.send_response(code)
        for key, value in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _not_found(self, code: str, head: bool) -> None:
        self._send(404, json.dumps({"error": code}).encode(), {"X-Error-Code": code}, head=head)

    def _handle(self, head: bool) -> None:
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        self.server.requests.append((self.command, path))
        tree_prefix = f"/api/models/{REPO}/tree/"
        resolve_prefix = f"/{REPO}/resolve/"
        if path.startswith(tree_prefix):
            if path[len(tree_prefix) :] != REVISION:
                return self._not_found("RevisionNotFound", head)
            listing = []
            for name, content in sorted(self.server.files.items()):
                entry = {"type": "file", "path": name, "size": len(content), "oid": git_blob_id(content)}
                if name in LFS:
                    sha = hashlib.sha256(content).hexdigest()
                    entry["lfs"] = {"oid": sha, "size": len(content), "pointerSize": 134}
                listing.append(entry)
            return self._send(
                200, json.dumps(listing).encode(), {"Content-Type": "application/json"}, head=head
            )
        if path.startswith(resolve_prefix):
            revision, _, name = path[len(resolve_prefix) :].partition("/")
            if revision != REVISION:
                return self._not_found("RevisionNotFound", head)
            if name not in self.server.files:
                return self._not_found("EntryNotFound", head)
            listed = self.server.files[name]
            body = self.server.tampered.get(name, listed)
            headers = {"X-Repo-Commit": self.server.served_commit, "Content-Type": "application/octet-stream"}
            if name in LFS:
                headers["X-Linked-Etag"] = f'"{hashlib.sha256(listed).hexdigest()}"'
                headers["X-Linked-Size"] = str(len(body))
                headers["ETag"] = f'"{git_blob_id(listed)}"'
            else:
                headers["ETag"] = f'"{git_blob_id(listed)}"'
            return self._send(200, body, headers, head=head)
        return self._not_found("RepoNotFound", head)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._handle(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._handle(head=True)


@pytest.fixture()
def hub(monkeypatch) -> Iterator[FakeHub]:
    """A local hub; its address reaches the code as an argument (Settings.hf_endpoint), not via env."""
    server = FakeHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    yield server
    server.shutdown()
    server.server_close()


def submission(tmp_path: Path, *, revision: str = REVISION, allow_pickle: bool = False):
    folder = tmp_path / "submissions" / "tiny-hf"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "embed.py").write_text(ADAPTER_CODE)
    (folder / "submission.yaml").write_text(
        MANIFEST.format(repo=REPO, revision=revision, allow_pickle=str(allow_pickle).lower())
    )
    return load_submission(folder), folder


MANIFEST = """\
id: tiny-hf
name: Tiny model from a local hub
authors: [ChemRobust tests]
contact: https://example.org/issues
license: MIT
model:
  source: huggingface
  id: {repo}
  revision: {revision}
  allow_pickle: {allow_pickle}
  architecture: encoder  # a hub model is a network (the custom echo adapter runs any architecture)
  capabilities: [embed]
adapter: custom
code: {{file: embed.py, object: ConfigEcho}}
"""

# Runs in the sandbox: reads the prefetched files from /models and reports what it saw.
ADAPTER_CODE = """\
import hashlib
import os

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings


class ConfigEcho(EmbeddingAdapter):
    def __init__(self, config):
        super().__init__(config)
        root = str(config.path)
        self.files = sorted(
            os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
        )
        self.config_text = open(os.path.join(root, "config.json")).read()
        try:
            open(os.path.join(root, "written-by-the-sandbox"), "w").close()
            self.models_write = "writable"
        except OSError as exc:
            self.models_write = exc.strerror
        self.offline = os.environ.get("HF_HUB_OFFLINE")

    def embed(self, strings):
        rows = [np.frombuffer(hashlib.sha256(s.encode()).digest(), dtype=np.uint8) for s in strings]
        return Embeddings({"last": np.stack(rows).astype(np.float32)})

    def describe(self):
        return {"files": self.files, "config": self.config_text, "models_write": self.models_write,
                "hf_hub_offline": self.offline}
"""


def regular_files(folder: Path) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if not p.is_dir()}


SAFE = {"config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "model.safetensors"}


# --------------------------------------------------------------------------------------------------------


def test_prefetch_fetches_safe_files_verifies_them_and_mounts_plain_files(hub, tmp_path):
    sub, folder = submission(tmp_path)
    state = tmp_path / "state"
    path = fetch_weights(sub, folder, state, hf_endpoint=hub.url)
    files = regular_files(path)
    assert set(files) - {".chemrobust-complete"} == SAFE
    for name in SAFE:
        st = files[name].lstat()
        assert stat.S_ISREG(st.st_mode), f"{name} must be a plain file, not a link into the hub cache"
        assert st.st_mode & 0o444 == 0o444, f"{name} must be readable by the sandbox user"
        assert files[name].read_bytes() == FILES[name]
    assert path.is_relative_to(state / "models" / "hf-mount") and path.name == REVISION
    # Pickles, training scripts and data were never even requested.
    for name in ("pytorch_model.bin", "train.py", "data/corpus.parquet"):
        assert not hub.asked_for(name), name
    assert hub.asked_for("model.safetensors")

    hub.requests.clear()
    assert fetch_weights(sub, folder, state, hf_endpoint=hub.url) == path
    assert hub.requests == [], "a verified prefetch is reused without asking the hub again"


def test_pickle_weights_need_the_manifest_and_a_maintainer(hub, tmp_path):
    state = tmp_path / "state"
    sub, folder = submission(tmp_path, allow_pickle=True)
    without = fetch_weights(sub, folder, state, allow_pickle=False, hf_endpoint=hub.url)
    assert "pytorch_model.bin" not in regular_files(without)
    assert not hub.asked_for("pytorch_model.bin")

    sub_no, folder_no = submission(tmp_path / "b", allow_pickle=False)
    maintainer_only = fetch_weights(sub_no, folder_no, state, allow_pickle=True, hf_endpoint=hub.url)
    assert "pytorch_model.bin" not in regular_files(maintainer_only)
    assert not hub.asked_for("pytorch_model.bin")

    both = fetch_weights(sub, folder, state, allow_pickle=True, hf_endpoint=hub.url)
    assert both != without
    assert regular_files(both)["pytorch_model.bin"].read_bytes() == FILES["pytorch_model.bin"]


def test_model_code_is_fetched_only_with_trust_remote_code(hub, tmp_path):
    _, folder = submission(tmp_path)
    text = (folder / "submission.yaml").read_text()
    (folder / "submission.yaml").write_text(text + "trust_remote_code: true\n")
    sub = load_submission(folder, allow_remote_code=["tiny-hf"])
    path = fetch_weights(sub, folder, tmp_path / "state", hf_endpoint=hub.url)
    assert regular_files(path)["train.py"].read_bytes() == FILES["train.py"]
    assert "pytorch_model.bin" not in regular_files(path)


def test_unknown_revision_is_rejected(hub, tmp_path):
    sub, folder = submission(tmp_path, revision=OTHER)
    with pytest.raises(WeightsError, match=f"cannot fetch {REPO}@{OTHER}: RevisionNotFoundError"):
        fetch_weights(sub, folder, tmp_path / "state", hf_endpoint=hub.url)
    assert not (tmp_path / "state" / "models" / "hf-mount").exists()


def test_files_of_another_commit_are_rejected(hub, tmp_path):
    hub.served_commit = OTHER  # the server answers for REVISION with the files of another commit
    sub, folder = submission(tmp_path)
    with pytest.raises(WeightsError, match=REVISION):
        fetch_weights(sub, folder, tmp_path / "state", hf_endpoint=hub.url)
    assert not (tmp_path / "state" / "models" / "hf-mount").exists()


def test_a_file_that_does_not_match_the_revision_tree_is_rejected(hub, tmp_path):
    hub.tampered["config.json"] = b'{"model_type": "evil", "hidden_size": 8}\n'
    sub, folder = submission(tmp_path)
    with pytest.raises(WeightsError, match=r"not revision .*config\.json \(git-sha1"):
        fetch_weights(sub, folder, tmp_path / "state", hf_endpoint=hub.url)
    assert not (tmp_path / "state" / "models" / "hf-mount").exists()


def test_the_container_sees_the_hub_offline_and_the_weights_read_only(tmp_path):
    assert CONTAINER_ENV["HF_HUB_OFFLINE"] == "1" and CONTAINER_ENV["TRANSFORMERS_OFFLINE"] == "1"
    dockerfile = Path(__file__).resolve().parents[2] / "containers" / "Dockerfile"
    assert "HF_HUB_OFFLINE=1" in dockerfile.read_text()
    dirs = {n: tmp_path / n for n in ("job", "data", "models", "out")}
    kwargs = DockerRunner(client=None).create_kwargs(
        job_dir=dirs["job"], data_dir=dirs["data"], models_dir=dirs["models"], out_dir=dirs["out"],
        limits=SandboxLimits(), gpu=False,
    )  # fmt: skip
    (models,) = [m for m in kwargs["mounts"] if m["Target"] == "/models"]
    assert models["ReadOnly"] is True and models["Source"] == str(dirs["models"].resolve())
    assert kwargs["environment"]["HF_HUB_OFFLINE"] == "1" and kwargs["network_mode"] == "none"


@pytest.mark.docker
@pytest.mark.slow
def test_prefetched_weights_reach_the_sandbox_through_the_real_pipeline(hub, docker_client, tmp_path):
    """A huggingface submission end to end: host prefetch, image build, run with /models mounted read-only."""
    from evaluators.tracks import TrackOptions
    from leaderboard.execution.evaluate import Evaluator
    from leaderboard.execution.images import DEFAULT_BASE_IMAGE, ensure_base_image
    from leaderboard.settings import Settings
    from leaderboard.store import ResultStore

    root = Path(__file__).resolve().parents[2]
    _, folder = submission(tmp_path)
    state = shared_state(tmp_path / "state")
    lines: list[str] = []
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    evaluator = Evaluator(
        root, state, store, runner="docker", gpu="off",
        base_image=ensure_base_image(docker_client, DEFAULT_BASE_IMAGE, root),
        options=TrackOptions(limit=10), submissions_dir=folder.parent, log=lines.append,
        limits=SandboxLimits(timeout_s=300, memory="1g"),
        settings=Settings(repo_root=root, state_dir=state, hf_endpoint=hub.url),
    )  # fmt: skip
    summary = evaluator.run(None, ["datamol-default"])
    assert summary.computed == 1 and not summary.failed, "\n".join(lines[-30:])
    (run,) = store.latest_runs()
    result = store.result_of(run)
    seen = result["model"]
    assert set(seen["files"]) - {".chemrobust-complete"} == SAFE
    assert seen["config"] == FILES["config.json"].decode()
    assert seen["models_write"] == "Read-only file system"
    assert seen["hf_hub_offline"] == "1"
    assert run.data.tags["model_revision"] == f"{REPO}@{REVISION}"
    assert hub.asked_for("model.safetensors") and not hub.asked_for("pytorch_model.bin")
