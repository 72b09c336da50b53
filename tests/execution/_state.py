"""Private state folders for the execution tests, sharing expensive caches kept outside the repository.

Evaluations need a state folder (lock, job folders, MLflow, wheelhouse, data). Each test gets a private one
in its temporary folder, so tests never write into the repository; the costly caches in it — the image's
main wheelhouse (hundreds of MB from PyPI) and the data cache — are links into one persistent folder shared
by every test and every session:

- ``$CHEMROBUST_TEST_STATE`` when set (CI can point it at a cached folder),
- else ``$XDG_CACHE_HOME/chemrobust/test-state``,
- else ``~/.cache/chemrobust/test-state``.

Images live in the Docker engine and are content-addressed, so they are shared whatever the state folder;
containers are labelled with the private folder (``OWNER_LABEL``), so each test finds only its own.
Not a test module: tests import it as ``tests.execution._state``.
"""

from __future__ import annotations

import os
from pathlib import Path

from leaderboard.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]


def cache_root() -> Path:
    """The shared, persistent cache folder of the tests (created; never inside the repository)."""
    explicit = os.environ.get("CHEMROBUST_TEST_STATE")
    if explicit:
        root = Path(explicit).expanduser()
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(base).expanduser() / "chemrobust" / "test-state"
    root = root.resolve()
    if root == REPO_ROOT or REPO_ROOT in root.parents:
        raise ValueError(f"the tests' shared cache {root} must lie outside the repository {REPO_ROOT}")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _link(link: Path, target: Path) -> None:
    if not link.exists() and not link.is_symlink():
        link.symlink_to(target.resolve(), target_is_directory=True)


def shared_data(state: Path) -> Path:
    """Make ``state`` a private state folder whose data cache is the shared one (no Docker caches)."""
    state.mkdir(parents=True, exist_ok=True)
    data = cache_root() / "data"
    data.mkdir(exist_ok=True)
    _link(state / "data", data)
    return state


def data_mirror() -> Path | None:
    """The local data mirror the product would use (``CHEMROBUST_DATA_DIR``; CI: ``../shared/data``), or None.

    Tests that prepare data or evaluate pass it on, so that a set built from others (``edit-pairs`` from
    ``bace``) is built from the mirror, not downloaded: without it the build needs a warm shared cache
    that an earlier test happened to fill, and fails offline on a fresh machine.
    """
    mirror = os.environ.get("CHEMROBUST_DATA_DIR")
    return Path(mirror).expanduser().resolve() if mirror else None


def data_settings(state: Path) -> Settings:
    """Settings with only the data mirror (:func:`data_mirror`) set, for an ``Evaluator`` of ``state``."""
    return Settings(repo_root=REPO_ROOT, state_dir=state, data_mirror=data_mirror())


def shared_state(state: Path) -> Path:
    """Make ``state`` a private state folder sharing the main wheelhouse (fetched once) and the data cache."""
    from leaderboard.execution.wheelhouse import ensure_wheelhouse

    cache = cache_root()
    main = ensure_wheelhouse("cpu", cache, repo_root=REPO_ROOT, log=lambda line: None)
    (state / "wheelhouse").mkdir(parents=True, exist_ok=True)
    _link(state / "wheelhouse" / main.name, main)
    return shared_data(state)
