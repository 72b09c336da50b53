"""Shared fixtures: the Docker engine and a tiny sandbox test image.

Tests that need the engine take the ``docker_client`` fixture. Without an engine they are skipped, except
in CI (``CI`` set), where they fail: CI starts the engine, so a missing one is a broken pipeline, not a
reason to skip (STYLE.md rule 15).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

# The sandbox test image: the registry-free base plus a user 10001 and an entrypoint that runs
# /job/snippet.py with the runner's fixed arguments (run --job … --out …) as sys.argv[1:].
SANDBOX_DOCKERFILE = """\
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN echo 'chemrobust:x:10001:' >> /etc/group \\
 && echo 'chemrobust:x:10001:10001::/tmp:/usr/sbin/nologin' >> /etc/passwd
COPY entry.py /opt/entry.py
USER 10001:10001
ENTRYPOINT ["python3", "/opt/entry.py"]
"""

SANDBOX_ENTRY = """\
import runpy, sys
sys.argv = ["/job/snippet.py", *sys.argv[1:]]
runpy.run_path("/job/snippet.py", run_name="__main__")
"""


@pytest.fixture(scope="session")
def benchmark_data():
    """Return ``get(name)``: a data root holding ``<name>/…``, prepared the way the product prepares it.

    The data registry finds the files: the local mirror named by ``CHEMROBUST_DATA_DIR`` (CI points it at
    ``../shared/data``), else the cache, else the pinned public URL (sha256-checked). A set that cannot be had
    (offline, no mirror) skips the test with the reason — except in CI (``CI`` set), where it fails.
    """
    from leaderboard.execution.data import DataError, prepare_dataset
    from leaderboard.settings import Settings

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chemrobust-tests"
    settings = Settings.from_environment(repo_root=REPO_ROOT, state_dir=cache)

    def get(name: str) -> Path:
        try:
            return prepare_dataset(name, cache, mirror=settings.data_mirror, log=lambda _line: None)
        except DataError as exc:
            message = f"benchmark data set {name!r} is not available here ({exc})"
            if os.environ.get("CI"):
                pytest.fail(message, pytrace=False)
            pytest.skip(message)

    return get


@pytest.fixture(scope="session")
def docker_client() -> Iterator[object]:
    """A connected ``docker.DockerClient``; skip without an engine, fail when ``CI`` is set."""
    from leaderboard.execution.docker_runner import docker_client_or_none

    client = docker_client_or_none()
    if client is None:
        message = "no Docker engine answers (docker.from_env().ping() failed)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, but CI is set: the CI job must start dockerd", pytrace=False)
        pytest.skip(message)
    yield client
    client.close()


@pytest.fixture(scope="session")
def sandbox_image(docker_client, tmp_path_factory) -> str:
    """Tag of a tiny image whose entrypoint runs ``/job/snippet.py``; built once per session, then reused."""
    from leaderboard.execution.images import BOOTSTRAP_BASE_TAG, ensure_base_image

    base = ensure_base_image(docker_client, BOOTSTRAP_BASE_TAG, REPO_ROOT)
    base_id = docker_client.images.get(base).id
    key = hashlib.sha256(f"{SANDBOX_DOCKERFILE}\0{SANDBOX_ENTRY}\0{base_id}".encode()).hexdigest()[:16]
    tag = f"chemrobust-test/sandbox:{key}"
    if docker_client.images.list(name=tag):
        return tag
    ctx = tmp_path_factory.mktemp("sandbox-image")
    (ctx / "Dockerfile").write_text(SANDBOX_DOCKERFILE)
    (ctx / "entry.py").write_text(SANDBOX_ENTRY)
    docker_client.images.build(
        path=str(ctx), tag=tag, buildargs={"BASE_IMAGE": base}, network_mode="none", rm=True, forcerm=True
    )
    return tag


# Hostile submission folders (tests/adversarial/<id>/attack.py) are fixtures that must only ever run
# inside the sandbox, through tests/test_adversarial.py: keep pytest (also --doctest-modules) off them.
# tests/toy_track.py registers a track when imported: only tests/test_plugin_track.py may import it.
collect_ignore_glob = ["adversarial/*/*.py", "toy_track.py"]
