"""The base image every runtime image starts from: pulled from a registry, or bootstrapped without one.

Side effects: pulls ``python:3.11-slim-bookworm`` through the injected Docker client, or runs
``containers/bootstrap-base.sh`` (root, debootstrap, a Debian mirror) to make ``chemrobust/base:bookworm``;
logs what happened through the ``log`` callback.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.execution.docker_runner import DockerException, ImageNotFound
from leaderboard.execution.wheelhouse import REPO_ROOT, Log

if TYPE_CHECKING:
    import docker

__all__ = [
    "BOOTSTRAP_BASE_TAG",
    "DEFAULT_BASE_IMAGE",
    "LOG_TAIL_LINES",
    "BaseImageError",
    "ensure_base_image",
    "image_exists",
]

DEFAULT_BASE_IMAGE = "python:3.11-slim-bookworm"
"""The Dockerfile's default base; needs a registry (pulled once, then cached by the engine)."""

BOOTSTRAP_BASE_TAG = "chemrobust/base:bookworm"
"""The registry-free fallback base built by ``containers/bootstrap-base.sh``."""

_PULL_TIMEOUT_S = 60.0
#: Lines of a failed build's or bootstrap's log shown in its error.
LOG_TAIL_LINES = 30


class BaseImageError(RuntimeError):
    """No base image could be found, pulled or bootstrapped."""


def image_exists(client: docker.DockerClient, ref: str) -> bool:
    """Return whether the engine has an image named ``ref``."""
    try:
        client.images.get(ref)
    except ImageNotFound:
        return False
    return True


def _pull_with_timeout(client: docker.DockerClient, ref: str, timeout_s: float) -> str | None:
    """Try to pull ``ref``; return None on success, else a one-line reason. Gives up after ``timeout_s``."""
    outcome: dict[str, str | None] = {}

    def pull() -> None:
        try:
            client.images.pull(ref)
            outcome["error"] = None
        except DockerException as exc:
            outcome["error"] = " ".join(str(exc).split())

    thread = threading.Thread(target=pull, name=f"pull {ref}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        return f"no answer within {timeout_s:.0f} s"
    return outcome.get("error", "pull thread ended without a result")


def ensure_base_image(
    client: docker.DockerClient,
    base_image: str = DEFAULT_BASE_IMAGE,
    repo_root: Path = REPO_ROOT,
    *,
    log: Log = print,
    pull_timeout_s: float = _PULL_TIMEOUT_S,
) -> str:
    """Return a base image reference present in the local engine, pulling or bootstrapping one if needed.

    Parameters
    ----------
    client : docker.DockerClient
        Injected Docker client.
    base_image : str, optional
        The preferred base (default ``python:3.11-slim-bookworm``).
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/bootstrap-base.sh``.
    log : callable, optional
        Receives what happened (loudly, when falling back).
    pull_timeout_s : float, optional
        How long to wait for a pull before giving up on the registry.

    Returns
    -------
    str
        ``base_image`` when present or pulled; otherwise ``chemrobust/base:bookworm``, built once by
        ``containers/bootstrap-base.sh`` (debootstrap + ``docker import``; about a minute) and reused after.

    Raises
    ------
    BaseImageError
        If the pull fails and the bootstrap script fails too (it needs root, debootstrap and a Debian
        mirror reachable from the host).
    """
    if image_exists(client, base_image):
        return base_image
    log(f"base image {base_image} is not in the local engine: pulling (up to {pull_timeout_s:.0f} s)")
    error = _pull_with_timeout(client, base_image, pull_timeout_s)
    if error is None:
        log(f"pulled {base_image}")
        return base_image
    banner = "!" * 100
    if image_exists(client, BOOTSTRAP_BASE_TAG):
        log(
            f"{banner}\nWARNING: cannot pull {base_image} ({error}).\n"
            f"Using the registry-free base {BOOTSTRAP_BASE_TAG} already in the engine instead.\n{banner}"
        )
        return BOOTSTRAP_BASE_TAG
    script = Path(repo_root) / "containers" / "bootstrap-base.sh"
    log(
        f"{banner}\nWARNING: cannot pull {base_image} ({error}).\n"
        f"Building the registry-free base {BOOTSTRAP_BASE_TAG} with {script} "
        f"(debootstrap from the host's Debian mirror; about a minute).\n{banner}"
    )
    proc = subprocess.run(
        ["bash", str(script), BOOTSTRAP_BASE_TAG],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or not image_exists(client, BOOTSTRAP_BASE_TAG):
        tail = "\n".join(proc.stdout.splitlines()[-LOG_TAIL_LINES:])
        raise BaseImageError(
            f"cannot pull {base_image} ({error}) and {script} failed (exit {proc.returncode}); "
            f"it needs root, debootstrap and a reachable Debian mirror (CHEMROBUST_DEBIAN_MIRROR).\n{tail}"
        )
    log(f"built {BOOTSTRAP_BASE_TAG}")
    return BOOTSTRAP_BASE_TAG
