"""A shared MLflow tracking server on PostgreSQL, on this machine: what every cluster job writes to.

:func:`ensure_postgres` installs PostgreSQL when missing, starts its cluster (``pg_ctlcluster``, no systemd)
and creates a role and a database; :func:`ensure_tracking_server` starts ``mlflow server`` on it with a
``postgresql+psycopg2://`` backend (plain ``postgresql://`` picks psycopg 3 under SQLAlchemy 2, which is not
installed), ``--workers 1`` and ``MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false`` (the default 4 workers plus a
job runner take 2.3 GB; one worker 360 MB), serving artifacts from one shared folder (clients upload
through the server: ``mlflow-artifacts:/``). Both are idempotent: a server that answers ``/health`` with the
same backend is reused. ``python -m leaderboard.cluster.tracking_server`` (``nox -s tracking-server``)
starts both and prints the ``MLFLOW_TRACKING_URI`` to export.

Listens on 127.0.0.1 only. Side effects: packages (apt, pip), a PostgreSQL role and database, a detached
server process (pid and log in ``<state>/tracking-server/``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from leaderboard.cluster.local_slurm import Log, ServiceError, install_missing, run_command

HOST = "127.0.0.1"
DEFAULT_PORT = 5055
DEFAULT_DATABASE = "chemrobust"
#: The one server-side driver this needs, pinned by leaderboard/requirements.lock.
DRIVER = "psycopg2-binary"


@dataclass
class TrackingServer:
    """A running MLflow server.

    Attributes
    ----------
    uri : str
        ``http://127.0.0.1:<port>``: what ``MLFLOW_TRACKING_URI`` should be.
    backend : str
        The backend store URI (PostgreSQL), password left out.
    artifacts : pathlib.Path
        The shared artifact root the server serves.
    reused : bool
        True when a running server was reused.
    timings : dict of str to float
        Seconds per step.
    """

    uri: str
    backend: str
    artifacts: Path
    reused: bool
    timings: dict[str, float] = field(default_factory=dict)


def _psql(sql: str, database: str = "postgres") -> subprocess.CompletedProcess:
    psql = ["runuser", "-u", "postgres", "--", "psql", "-v", "ON_ERROR_STOP=1", "-tAc", sql, database]
    return run_command(psql)


def ensure_postgres(database: str = DEFAULT_DATABASE, *, log: Log = print) -> tuple[str, dict[str, float]]:
    """Install, start and prepare PostgreSQL; return the SQLAlchemy URI of ``database`` and timings.

    The role ``chemrobust`` (password ``chemrobust``: the server listens on localhost only) owns the
    database.

    Raises
    ------
    ServiceError
        If it cannot be installed, no cluster exists, or it does not start.
    """
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    install_missing({"pg_ctlcluster": "postgresql"}, log=log)
    timings["install"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    clusters = run_command(["pg_lsclusters", "-h"]).stdout.split()
    if len(clusters) < 4:
        # The package makes a cluster when it is installed, unless create_main_cluster is off: make one.
        found = Path("/usr/lib/postgresql").glob("*")
        versions = sorted((p.name for p in found if p.name.isdigit()), key=int)
        if not versions:
            raise ServiceError("PostgreSQL's server is not installed (/usr/lib/postgresql is empty)")
        made = run_command(["pg_createcluster", versions[-1], "main"])
        if made.returncode != 0:
            raise ServiceError(f"pg_createcluster {versions[-1]} main failed: {made.stderr.strip()}")
        log(f"PostgreSQL: created cluster {versions[-1]}/main")
        clusters = run_command(["pg_lsclusters", "-h"]).stdout.split()
        if len(clusters) < 4:
            raise ServiceError("no PostgreSQL cluster after pg_createcluster (pg_lsclusters is empty)")
    version, name, port, status = clusters[:4]
    if status != "online":
        started = run_command(["pg_ctlcluster", version, name, "start"])
        if started.returncode != 0:
            raise ServiceError(f"pg_ctlcluster {version} {name} start failed: {started.stderr.strip()}")
        timings[f"started {version}/{name}"] = 0.0  # what stop_tracking_server may stop again
    timings["postgres"] = time.perf_counter() - t0
    if _psql("SELECT 1 FROM pg_roles WHERE rolname='chemrobust'").stdout.strip() != "1":
        _psql("CREATE ROLE chemrobust LOGIN PASSWORD 'chemrobust'")
    if _psql(f"SELECT 1 FROM pg_database WHERE datname='{database}'").stdout.strip() != "1":
        made = _psql(f'CREATE DATABASE "{database}" OWNER chemrobust')
        if made.returncode != 0:
            raise ServiceError(f"cannot create database {database}: {made.stderr.strip()}")
    return f"postgresql+psycopg2://chemrobust:chemrobust@127.0.0.1:{port}/{database}", timings


def ensure_driver(python: str = sys.executable, *, lock: Path | None = None, log: Log = print) -> bool:
    """Install :data:`DRIVER` into ``python``'s environment unless ``psycopg2`` imports; tell if it did.

    ``lock`` (default ``leaderboard/requirements.lock``) pins the version.
    """
    if run_command([python, "-c", "import psycopg2"]).returncode == 0:
        return False
    lock = lock or Path(__file__).resolve().parents[1] / "requirements.lock"
    log(f"installing {DRIVER} (pip, pinned by {lock.name})")
    done = run_command([python, "-m", "pip", "install", "-q", "-c", str(lock), DRIVER])
    if done.returncode != 0:
        raise ServiceError(f"pip install {DRIVER} failed: {done.stderr.strip()[-500:]}")
    return True


def _health(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:  # noqa: S310 - loopback only
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def ensure_tracking_server(
    state_dir: Path,
    *,
    port: int = DEFAULT_PORT,
    database: str = DEFAULT_DATABASE,
    python: str = sys.executable,
    log: Log = print,
    timeout_s: float = 90,
) -> TrackingServer:
    """Start (or reuse) ``mlflow server`` on PostgreSQL at ``http://127.0.0.1:<port>``.

    Parameters
    ----------
    state_dir : pathlib.Path
        Holds ``tracking-server/{artifacts,server.json,server.log}``.
    port : int
        Port on 127.0.0.1.
    database : str
        PostgreSQL database of the backend store.
    python : str
        Interpreter whose ``mlflow`` runs the server.
    log : callable
        Receives what was done, with timings.
    timeout_s : float
        How long the server may take to answer ``/health``.

    Raises
    ------
    ServiceError
        If the port answers with another backend, or the server does not come up (its log's last lines).
    """
    folder = Path(state_dir).resolve() / "tracking-server"
    artifacts = folder / "artifacts"
    record = folder / "server.json"
    uri = f"http://{HOST}:{port}"
    backend, timings = ensure_postgres(database, log=log)
    shown = backend.replace(":chemrobust@", ":***@")
    if _health(uri):
        known = json.loads(record.read_text()) if record.is_file() else {}
        if known.get("backend") != shown:
            raise ServiceError(
                f"{uri} already answers, but not with the backend {shown} (server.json: {known or 'none'}); "
                "stop it or choose another --port"
            )
        log(f"tracking server: reused {uri} ({shown})")
        return TrackingServer(uri, shown, Path(known["artifacts"]), True, timings)
    t0 = time.perf_counter()
    ensure_driver(python, log=log)
    timings["driver"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    artifacts.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    cmd = [python, "-m", "mlflow", "server", "--backend-store-uri", backend, "--artifacts-destination",
           str(artifacts), "--host", HOST, "--port", str(port), "--workers", "1"]  # fmt: skip
    with open(folder / "server.log", "ab") as out:
        # Detached (own session): the server outlives the command that started it, like a service.
        process = subprocess.Popen(cmd, stdout=out, stderr=out, stdin=subprocess.DEVNULL, env=env,
                                   start_new_session=True)  # fmt: skip
    facts = {"pid": process.pid, "backend": shown, "artifacts": str(artifacts), "uri": uri}
    record.write_text(json.dumps(facts))
    deadline = time.monotonic() + timeout_s
    while not _health(uri):
        if process.poll() is not None or time.monotonic() > deadline:
            tail = "\n".join((folder / "server.log").read_text(errors="replace").splitlines()[-15:])
            raise ServiceError(f"mlflow server did not come up at {uri}; {folder / 'server.log'}:\n{tail}")
        time.sleep(0.3)
    timings["mlflow server"] = time.perf_counter() - t0
    log(f"tracking server: started {uri} ({shown}, pid {process.pid}); "
        + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))  # fmt: skip
    return TrackingServer(uri, shown, artifacts, False, timings)


def stop_tracking_server(server: TrackingServer, state_dir: Path, *, log: Log = print) -> list[str]:
    """Stop what :func:`ensure_tracking_server` started: the server process and a PostgreSQL it started.

    A reused server (``server.reused``) is left running: someone else started it. Returns what was stopped.

    Parameters
    ----------
    server : TrackingServer
        What :func:`ensure_tracking_server` returned.
    state_dir : pathlib.Path
        The same folder (its ``tracking-server/server.json`` names the process).
    log : callable
        Receives one line of what was stopped.
    """
    if server.reused:
        return []
    stopped = []
    record = Path(state_dir).resolve() / "tracking-server" / "server.json"
    pid = json.loads(record.read_text()).get("pid") if record.is_file() else None
    if isinstance(pid, int) and _stop_group(pid):
        stopped.append(f"mlflow server (pid {pid})")
    for step in server.timings:
        if step.startswith("started "):
            version, name = step.removeprefix("started ").split("/")
            if run_command(["pg_ctlcluster", version, name, "stop"]).returncode == 0:
                stopped.append(f"PostgreSQL {version}/{name}")
    if stopped:
        log("tracking server: stopped " + ", ".join(stopped))
    return stopped


def _stop_group(pid: int, timeout_s: float = 15) -> bool:
    """SIGTERM the process group ``pid`` leads (the server runs in its own session); True if it ended."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # our own child (a test): reap it, or it stays a zombie that answers kill(pid, 0)
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        time.sleep(0.1)
    os.killpg(pid, signal.SIGKILL)
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m leaderboard.cluster.tracking_server [--port P] [--database D] [--state-dir DIR]``."""
    prog = "python -m leaderboard.cluster.tracking_server"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--database", default=DEFAULT_DATABASE)
    parser.add_argument("--state-dir", default=str(Path(__file__).resolve().parents[2] / ".state"))
    args = parser.parse_args(argv)
    try:
        server = ensure_tracking_server(Path(args.state_dir), port=args.port, database=args.database)
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"export MLFLOW_TRACKING_URI={server.uri}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
