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


# --- Two workers (pytest-xdist; ``nox -s tests`` runs ``-n auto --dist loadscope``). Each test module runs
# whole in one worker, so its module fixtures are built once. What is shared engine-wide rather than per
# process — the Docker engine's containers and images (tests assert "no container left" across the
# engine, remove images by tag), the cluster's services on fixed ports and their shutdown at the end of a
# session — is used by one worker only: every module touching it is in the group ``engine``. A costly
# session build shared by several modules (a fresh clone's site, the browser's built site) likewise keeps
# them together.
#
# The scheduler only sees test ids, so the groups are listed by module below; collection checks the list
# against what each module's tests really use (their fixtures and markers), in every run, parallel or not:
# a module that starts using the engine without being listed fails at once, naming the line to add.

#: Fixtures (and markers) of the engine-wide state.
ENGINE_FIXTURES = frozenset(
    {"docker_client", "sandbox_image", "local_slurm", "tracking_server", "experiment"}
)
ENGINE_MARKERS = frozenset({"docker", "cluster"})
#: Costly session-scoped builds, by fixture: the group of the modules that use it.
SHARED_BUILDS = {"fresh_clone_build": "fresh-clone", "public_dir": "built-site"}
#: The modules that run together in one worker, by group (checked at collection: :func:`worker_group`).
GROUPS: dict[str, str] = {
    **dict.fromkeys(
        (
            "tests/cluster/test_services.py",
            "tests/cluster/test_slurm_executor.py",
            "tests/execution/test_adversarial.py",
            "tests/execution/test_e2e_docker.py",
            "tests/execution/test_faults.py",
            "tests/execution/test_host_budget.py",
            "tests/execution/test_images.py",
            "tests/execution/test_live_progress.py",
            "tests/execution/test_output_limits.py",
            "tests/execution/test_prefetch.py",
            "tests/execution/test_published_models.py",
            "tests/execution/test_runner.py",
        ),
        "engine",
    ),
    "tests/site/test_site_merge.py": "fresh-clone",
    "tests/site/test_site_pages.py": "fresh-clone",
    "tests/site/test_browser.py": "built-site",
    "tests/site/test_browser_layout.py": "built-site",
}

#: The longest units of work, longest first, scheduled before the rest (then xdist's order: most tests
#: first), so that neither worker is left with a long one at the end. Seconds measured on the CI machine
#: (2 cores), 2026-12-06, in one process: fresh-clone 329, engine 292, built-site 204, test_restore 155,
#: degenerate answerers 142, answers-stay-out 89, then 56 s and less. A stale entry only loses the order.
LONGEST_FIRST = (
    "fresh-clone",
    "engine",
    "built-site",
    "tests/test_restore.py",
    "tests/validity/test_degenerate_answerers.py",
    "tests/execution/test_answers_stay_out.py",
    "tests/execution/test_style_invariance.py",
    "tests/evaluators/test_representations.py",
    "tests/evaluators/test_prompt_robustness_tasks.py",
    "tests/site/test_site_xss.py",
)


def module_of(nodeid: str) -> str:
    """The module path of a test id (``tests/x/test_y.py::test_z[p]`` → ``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def worker_scope(nodeid: str) -> str:
    """The unit of work a test belongs to: its :data:`GROUPS` group, else its module."""
    module = module_of(nodeid)
    return GROUPS.get(module, module)


def worker_group(module_items: list[pytest.Item]) -> str | None:
    """What one module's tests share beyond their process: ``engine``, a shared build's group, or ``None``."""
    fixtures = {name for item in module_items for name in item.fixturenames}
    markers = {mark.name for item in module_items for mark in item.iter_markers()}
    if fixtures & ENGINE_FIXTURES or markers & ENGINE_MARKERS:
        return "engine"
    return next((group for fixture, group in SHARED_BUILDS.items() if fixture in fixtures), None)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Check :data:`GROUPS` against what each collected module uses (a parallel run relies on it)."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(module_of(item.nodeid), []).append(item)
    for module, module_items in modules.items():
        used, listed = worker_group(module_items), GROUPS.get(module)
        if used is not None and used != listed:
            where = "nowhere" if listed is None else f"in {listed!r}"
            raise pytest.UsageError(
                f"{module} uses what the group {used!r} shares (tests/conftest.py: ENGINE_FIXTURES, "
                f"SHARED_BUILDS) but GROUPS lists it {where}: add {module!r}: {used!r} to GROUPS in "
                "tests/conftest.py, so a parallel run keeps it in one worker"
            )


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unused without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadscope`` by module, with the modules of one :data:`GROUPS` group as one unit of work."""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            first = next((scope for scope in LONGEST_FIRST if scope in self.workqueue), None)
            if first is not None:
                self.workqueue.move_to_end(first, last=False)
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)


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
