"""Shared fixtures: the Docker engine, a tiny sandbox test image, the services of ``tests/cluster``.

Tests that need the engine take the ``docker_client`` fixture. Without an engine they are skipped, except
in CI (``CI`` set), where they fail: CI starts the engine, so a missing one is a broken pipeline, not a
reason to skip (STYLE.md rule 15).
"""

from __future__ import annotations

import hashlib
import os
import uuid
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


@pytest.fixture(scope="session", autouse=True)
def mlflow_tables_migrated_once() -> Iterator[None]:
    """Give every new, empty sqlite MLflow store of the session the tables of the first one MLflow migrated.

    MLflow makes a new store's tables by running each of its schema migrations in turn: about 5 s per store
    on the CI machine, and the suite makes dozens of throw-away stores (``ResultStore`` on a fresh
    ``sqlite:///…``, ``--state-dir`` of a temporary folder, every ``Evaluator``). The first empty sqlite
    store of the session is migrated by MLflow itself; every later one receives the SQL dump of what that
    migration produced (every table, index and row, ``alembic_version`` included: the same schema,
    statement for statement), then MLflow goes on as after its own migration. Any other database (the
    cluster tests' PostgreSQL server), and a store that already has tables, is left to MLflow.
    """
    try:
        import mlflow.store.db.utils as db_utils
    except ImportError:  # no MLflow: nothing to share
        yield
        return
    migrate = getattr(db_utils, "_initialize_tables", None)
    if migrate is None:  # another MLflow: it migrates every store itself
        yield
        return
    import sqlalchemy

    dump: list[str] = []

    def empty(engine) -> bool:
        return all(t.startswith("alembic_") for t in sqlalchemy.inspect(engine).get_table_names())

    def initialize(engine) -> None:
        if engine.dialect.name != "sqlite" or not empty(engine):
            migrate(engine)
            return
        connection = engine.raw_connection()
        try:
            if dump:
                connection.driver_connection.executescript("\n".join(dump))
                return
        finally:
            connection.close()
        migrate(engine)  # the session's first store: MLflow's own migration, kept as the dump
        connection = engine.raw_connection()
        try:
            dump.extend(connection.driver_connection.iterdump())
        finally:
            connection.close()

    db_utils._initialize_tables = initialize
    try:
        yield
    finally:
        db_utils._initialize_tables = migrate


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Run torch on one intra-op thread in the module that asks (``pytest.mark.usefixtures``); restore after.

    The models those modules run in the test process are tiny (a few layers, 32 to 128 wide): a second
    thread has nothing to gain, and on the 2-core CI machine, busy beside pytest (dockerd, containers,
    services, forked children), torch's second OpenMP thread competes with the main one for the cores
    (``leaderboard.tools.training`` trains on one thread by default). What those tests compare — the lean
    loop against ``generate`` in the same process, the bench's report — does not depend on the thread count.
    Measured 2026-12-05 on the 2-core host shared with other jobs, default (2 threads) → one thread:
    tests/evaluators/test_generation.py 257 → 28-93 s (by the host's load), the generation bench's smoke
    test 154 → 17 s.
    """
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def benchmark_data():
    """Return ``get(name)``: a data root holding ``<name>/…``, prepared the way the product prepares it.

    The data registry finds the files: the local mirror named by ``CHEMROBUST_DATA_DIR`` (CI points it at
    ``../shared/data``), else the cache, else the pinned public URL (sha256-checked). A set that cannot be had
    (offline, no mirror) skips the test with the reason — except in CI (``CI`` set), where it fails.
    """
    from leaderboard.data.prepare import DataError, prepare_dataset
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


# --- tests/cluster: real services (a single-node Slurm with two fake GPUs, PostgreSQL, an MLflow server),
# started by leaderboard.cluster (installed with apt when missing, reused when running). Without root or a
# package mirror they skip with the reason, except in CI, where that fails. Here rather than in
# tests/cluster/conftest.py: two conftest modules may not share a name in this rootless test tree.

#: Port of the tests' tracking server (apart from a maintainer's ``nox -s tracking-server`` on 5055).
TEST_PORT = 5056
#: Set (to anything) to keep the services the suite started running after it, for repeated local runs;
#: otherwise what the suite started it stops (what it found running it leaves alone).
KEEP_SERVICES = "CHEMROBUST_KEEP_SERVICES"


def _cluster_unavailable(what: str, exc: Exception | str) -> None:
    message = f"{what} cannot be started here: {exc}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} — CI must provide it (.ci/run installs slurm-wlm, munge, postgresql)",
                    pytrace=False)  # fmt: skip
    pytest.skip(message)


@pytest.fixture(scope="session")
def local_slurm():
    """A running single-node Slurm with two fake GPUs (gres)."""
    from leaderboard.cluster.local_slurm import ServiceError, ensure_local_slurm, stop_local_slurm

    if os.geteuid() != 0:
        _cluster_unavailable("a local Slurm", "needs root")
    try:
        slurm = ensure_local_slurm(gpus=2, log=print)
    except ServiceError as exc:
        _cluster_unavailable("a local Slurm", exc)
        raise
    yield slurm
    if not os.environ.get(KEEP_SERVICES):
        stop_local_slurm(slurm, log=print)


@pytest.fixture(scope="session")
def tracking_server():
    """A running ``mlflow server`` on PostgreSQL at http://127.0.0.1:5056."""
    from leaderboard.cluster.local_slurm import ServiceError
    from leaderboard.cluster.tracking_server import ensure_tracking_server, stop_tracking_server
    from tests.execution._state import cache_root

    if os.geteuid() != 0:
        _cluster_unavailable("PostgreSQL + MLflow server", "needs root")
    try:
        server = ensure_tracking_server(cache_root() / "cluster", port=TEST_PORT, database="chemrobust_tests",
                                        log=print)  # fmt: skip
    except ServiceError as exc:
        _cluster_unavailable("PostgreSQL + MLflow server", exc)
        raise
    yield server
    if not os.environ.get(KEEP_SERVICES):
        stop_tracking_server(server, cache_root() / "cluster", log=print)


@pytest.fixture
def experiment(tracking_server, monkeypatch) -> Iterator[str]:
    """A fresh experiment name on the tests' server, set as MLFLOW_TRACKING_URI / MLFLOW_EXPERIMENT_NAME.

    The orchestrator's environment is what Slurm passes on to the jobs (``--export=ALL``).
    """
    name = f"test-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tracking_server.uri)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", name)
    yield name
