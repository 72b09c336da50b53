"""Build the per-submission evaluation image from ``containers/Dockerfile``, without network in the build.

The image holds a virtual environment installed from a host-side *wheelhouse* (``pip download`` on the host,
``pip install --no-index`` in the build), the repository's ``evaluators/`` package and the submission folder.
Its tag is content-addressed (:func:`image_tag`): the same inputs give the same tag, so an existing image is
reused, and any changed byte in the Dockerfile, the lock files, ``evaluators/``, the submission folder, the
extra requirements, the base image name or the torch variant gives a new one.

Invariants
----------
- Builds run with ``network_mode="none"``; every wheel comes from ``state_dir/wheelhouse``, filled by
  :mod:`leaderboard.execution.wheelhouse` (for CPython 3.11 on manylinux x86_64, hash-checked).
- This module talks to Docker only through an injected client (it imports ``docker`` for type hints only);
  it never runs submission code (that is :mod:`leaderboard.execution.docker_runner`'s job).

Side effects
------------
- Downloads wheels into ``state_dir/wheelhouse/`` through :mod:`leaderboard.execution.wheelhouse`.
- Writes temporary build contexts under ``state_dir/tmp/`` and removes them afterwards.
- Pulls or builds Docker images and tags them ``chemrobust/<submission_id>:<hash>``; may run
  ``containers/bootstrap-base.sh`` (root, debootstrap, Debian mirror) to make ``chemrobust/base:bookworm``.
- Logs progress through the ``log`` callback (``print`` by default).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.execution.docker_runner import DockerException, ImageNotFound
from leaderboard.execution.wheelhouse import (
    REPO_ROOT,
    WHEELHOUSE_MARKER,
    Log,
    WheelhouseError,
    ensure_extra_wheelhouse,
    ensure_wheelhouse,
    lock_files,
    sha256_of,
)

if TYPE_CHECKING:
    import docker

__all__ = [
    "BOOTSTRAP_BASE_TAG",
    "DEFAULT_BASE_IMAGE",
    "REPO_ROOT",
    "BaseImageError",
    "BuiltImage",
    "ImageBuildError",
    "ImageSpec",
    "ensure_base_image",
    "ensure_image",
    "image_tag",
]

DEFAULT_BASE_IMAGE = "python:3.11-slim-bookworm"
"""The Dockerfile's default base; needs a registry (pulled once, then cached by the engine)."""

BOOTSTRAP_BASE_TAG = "chemrobust/base:bookworm"
"""The registry-free fallback base built by ``containers/bootstrap-base.sh``."""

_PULL_TIMEOUT_S = 60.0
_LOG_TAIL_LINES = 30
_SKIP_DIRS = frozenset({"__pycache__"})
_SKIP_SUFFIXES = (".pyc", ".pyo")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class ImageBuildError(RuntimeError):
    """The image for a submission could not be built.

    Parameters
    ----------
    submission_id : str
        The submission whose image failed.
    reason : str
        One line: what went wrong.
    log_tail : str
        The last lines of the build log (``str()`` shows the last 30).
    """

    def __init__(self, submission_id: str, reason: str, log_tail: str = "") -> None:
        self.submission_id = submission_id
        self.reason = reason
        self.log_tail = log_tail
        super().__init__(submission_id, reason, log_tail)

    def __str__(self) -> str:
        tail = "\n".join(self.log_tail.splitlines()[-_LOG_TAIL_LINES:])
        text = f"image build for submission {self.submission_id!r} failed: {self.reason}"
        if tail:
            text += f"\n--- last lines of the build log ---\n{tail}"
        return text


class BaseImageError(RuntimeError):
    """No base image could be found, pulled or bootstrapped."""


class ImageSpec(BaseModel):
    """Everything that determines a submission's image.

    Parameters
    ----------
    submission_id : str
        Submission id; the image repository is ``chemrobust/<submission_id>`` (lower-case letters, digits,
        ``.``, ``_`` and ``-``).
    submission_dir : pathlib.Path
        The submission folder, copied to ``/submission`` in the image.
    extra_requirements : tuple of str
        The submission's own pip requirements, each an exact ``name==version`` pin.
    base_image : str
        The base image reference, present in the local engine (see :func:`ensure_base_image`).
    torch_variant : {"cpu", "cuda"}
        Which ``containers/torch-<variant>.txt`` to install.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    submission_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,127}$")
    submission_dir: Path
    extra_requirements: tuple[str, ...] = ()
    base_image: str = DEFAULT_BASE_IMAGE
    torch_variant: Literal["cpu", "cuda"] = "cpu"


class BuiltImage(BaseModel):
    """A submission image present in the local engine.

    Parameters
    ----------
    tag : str
        ``chemrobust/<submission_id>:<16 hex>``.
    image_id : str
        The engine's image id (``sha256:…``); record it with the results.
    reused : bool
        True when the tag already existed and nothing was built.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tag: str
    image_id: str
    reused: bool


# --------------------------------------------------------------------------------------------------------
# Content-addressed tags


def _iter_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield ``(posix relative path, path)`` for every file or symlink under ``root``, sorted, no caches."""
    root = Path(root)
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        base = Path(dirpath)
        for d in dirnames:
            if (base / d).is_symlink():  # os.walk does not descend into it; treat it as a link entry
                found.append(((base / d).relative_to(root).as_posix(), base / d))
        for name in filenames:
            if not name.endswith(_SKIP_SUFFIXES):
                found.append(((base / name).relative_to(root).as_posix(), base / name))
    yield from sorted(found)


def _tree_chunks(label: str, root: Path) -> Iterator[bytes]:
    yield f"tree:{label}".encode()
    for rel, path in _iter_files(root):
        if path.is_symlink():
            yield f"link:{rel}".encode()
            yield os.readlink(path).encode()
        else:
            yield f"file:{rel}:{'x' if os.access(path, os.X_OK) else '-'}".encode()
            yield path.read_bytes()


def image_tag(spec: ImageSpec, repo_root: Path = REPO_ROOT) -> str:
    """Return the content-addressed tag of a submission's image.

    Parameters
    ----------
    spec : ImageSpec
        The submission's image inputs.
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/`` and ``evaluators/``.

    Returns
    -------
    str
        ``chemrobust/<submission_id>:<first 16 hex digits of a sha256>``.

    Raises
    ------
    FileNotFoundError
        If ``evaluators/`` or the submission folder is missing.

    Notes
    -----
    The hash covers the Dockerfile, the two lock files of the variant, every file under ``evaluators/`` and
    under the submission folder (sorted relative paths, bytes and executable bit; ``__pycache__`` and
    ``*.pyc`` skipped), the extra requirements, the base image name and the torch variant. It is
    deterministic, and a changed byte in any of these changes it.
    """
    repo_root = Path(repo_root)
    lock, torch_file = lock_files(spec.torch_variant, repo_root)
    for folder in (repo_root / "evaluators", Path(spec.submission_dir)):
        if not folder.is_dir():
            raise FileNotFoundError(
                f"{folder}: folder missing (needed in the image of {spec.submission_id!r})"
            )

    def chunks() -> Iterator[bytes]:
        yield b"chemrobust-image-v1"
        yield (repo_root / "containers" / "Dockerfile").read_bytes()
        yield lock.read_bytes()
        yield torch_file.read_bytes()
        yield from _tree_chunks("evaluators", repo_root / "evaluators")
        yield from _tree_chunks("submission", spec.submission_dir)
        yield b"extra-requirements"
        yield from (r.encode() for r in spec.extra_requirements)
        yield f"base:{spec.base_image}".encode()
        yield f"torch:{spec.torch_variant}".encode()

    return f"chemrobust/{spec.submission_id}:{sha256_of(chunks())[:16]}"


# --------------------------------------------------------------------------------------------------------
# Base image


def _image_exists(client: docker.DockerClient, ref: str) -> bool:
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
    if _image_exists(client, base_image):
        return base_image
    log(f"base image {base_image} is not in the local engine: pulling (up to {pull_timeout_s:.0f} s)")
    error = _pull_with_timeout(client, base_image, pull_timeout_s)
    if error is None:
        log(f"pulled {base_image}")
        return base_image
    banner = "!" * 100
    if _image_exists(client, BOOTSTRAP_BASE_TAG):
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
    if proc.returncode != 0 or not _image_exists(client, BOOTSTRAP_BASE_TAG):
        tail = "\n".join(proc.stdout.splitlines()[-_LOG_TAIL_LINES:])
        raise BaseImageError(
            f"cannot pull {base_image} ({error}) and {script} failed (exit {proc.returncode}); "
            f"it needs root, debootstrap and a reachable Debian mirror (CHEMROBUST_DEBIAN_MIRROR).\n{tail}"
        )
    log(f"built {BOOTSTRAP_BASE_TAG}")
    return BOOTSTRAP_BASE_TAG


# --------------------------------------------------------------------------------------------------------
# Build


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another filesystem, or links not allowed: copy
        shutil.copyfile(src, dst)


def _copy_tree_normalized(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` (caches skipped), readable by everyone: files 0644 (0755 if executable)."""
    dst.mkdir(parents=True, exist_ok=True)
    os.chmod(dst, 0o755)
    for rel, path in _iter_files(src):
        target = dst / rel
        for parent in reversed(target.relative_to(dst).parents[:-1]):
            (dst / parent).mkdir(exist_ok=True)
            os.chmod(dst / parent, 0o755)
        if path.is_symlink():
            os.symlink(os.readlink(path), target)
        else:
            shutil.copyfile(path, target)
            os.chmod(target, 0o755 if os.access(path, os.X_OK) else 0o644)


def _assemble_context(
    ctx: Path, spec: ImageSpec, repo_root: Path, wheelhouse: Path, extra_wheelhouse: Path
) -> None:
    lock, torch_file = lock_files(spec.torch_variant, repo_root)
    shutil.copyfile(repo_root / "containers" / "Dockerfile", ctx / "Dockerfile")
    (ctx / "lock").mkdir()
    shutil.copyfile(lock, ctx / "lock" / lock.name)
    shutil.copyfile(torch_file, ctx / "lock" / torch_file.name)
    for name, source in (("wheelhouse", wheelhouse), ("extra-wheelhouse", extra_wheelhouse)):
        (ctx / name).mkdir()
        for wheel in sorted(source.iterdir()):
            if wheel.is_file() and wheel.name != WHEELHOUSE_MARKER:
                _link_or_copy(wheel, ctx / name / wheel.name)
    extra = "".join(f"{r}\n" for r in spec.extra_requirements)
    (ctx / "extra-requirements.txt").write_text(extra, encoding="utf-8")
    _copy_tree_normalized(repo_root / "evaluators", ctx / "evaluators")
    _copy_tree_normalized(spec.submission_dir, ctx / "submission")


def _stream_build(
    client: docker.DockerClient, ctx: Path, spec: ImageSpec, tag: str, log: Log, tail: deque[str]
) -> str | None:
    """Run the build and stream its output; return None on success, else the engine's error line."""
    pending = ""
    error: str | None = None
    chunks: Iterable[dict[str, Any]] = client.api.build(
        path=str(ctx),
        tag=tag,
        buildargs={"BASE_IMAGE": spec.base_image, "TORCH_VARIANT": spec.torch_variant},
        network_mode="none",
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
        labels={
            "org.chemrobust.submission": spec.submission_id,
            "org.chemrobust.base-image": spec.base_image,
            "org.chemrobust.torch-variant": spec.torch_variant,
        },
    )
    for chunk in chunks:
        if "stream" in chunk:
            pending += chunk["stream"]
            *lines, pending = pending.split("\n")
            for line in lines:
                line = _ANSI.sub("", line).rstrip()
                if line.strip():
                    tail.append(line)
                    log(line)
        elif "error" in chunk:
            error = " ".join(str(chunk["error"]).split())
            tail.append(f"ERROR: {error}")
            log(f"ERROR: {error}")
        elif "status" in chunk:  # pull/progress messages (should not happen with pull=False)
            log(str(chunk["status"]))
    pending = _ANSI.sub("", pending).rstrip()
    if pending.strip():
        tail.append(pending)
        log(pending)
    return error


def _untimed(kind: str, label: str = "") -> AbstractContextManager:
    """No phase clock: time nothing."""
    return nullcontext()


def ensure_image(
    client: docker.DockerClient,
    spec: ImageSpec,
    *,
    repo_root: Path = REPO_ROOT,
    state_dir: Path,
    log: Log = print,
    timed: Callable[..., AbstractContextManager] | None = None,
) -> BuiltImage:
    """Return the submission's image, building it if its content-addressed tag is not present.

    Parameters
    ----------
    client : docker.DockerClient
        Injected Docker client.
    spec : ImageSpec
        The image inputs; ``spec.base_image`` must already be in the engine (:func:`ensure_base_image`).
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/`` and ``evaluators/``.
    state_dir : pathlib.Path
        Local state folder for wheelhouses and temporary build contexts.
    log : callable, optional
        Receives build progress lines.
    timed : callable, optional
        :meth:`leaderboard.execution.phases.Phases.timed`: the wheelhouse is timed as its own phase.

    Returns
    -------
    BuiltImage
        Tag, engine image id, and whether an existing image was reused.

    Raises
    ------
    ImageBuildError
        If the base image is missing, the wheels cannot be fetched, or the build fails; ``str()`` shows
        the reason and the last 30 lines of the build log.
    """
    repo_root = Path(repo_root)
    tag = image_tag(spec, repo_root)
    try:
        image = client.images.get(tag)
        log(f"image {tag} exists: reusing it")
        return BuiltImage(tag=tag, image_id=str(image.id), reused=True)
    except ImageNotFound:
        pass
    except DockerException as exc:
        raise ImageBuildError(spec.submission_id, f"docker engine error: {exc}") from exc
    if not _image_exists(client, spec.base_image):
        raise ImageBuildError(
            spec.submission_id,
            f"base image {spec.base_image!r} is not in the local engine; "
            "call leaderboard.execution.images.ensure_base_image first",
        )
    try:
        with (timed or _untimed)("wheelhouse", spec.torch_variant):
            wheelhouse = ensure_wheelhouse(spec.torch_variant, state_dir, repo_root=repo_root, log=log)
            extra = ensure_extra_wheelhouse(
                spec.extra_requirements, state_dir, variant=spec.torch_variant, repo_root=repo_root, log=log
            )
    except WheelhouseError as exc:
        raise ImageBuildError(
            spec.submission_id, f"cannot prepare the wheels: {exc.summary}", exc.output
        ) from exc
    except (ValueError, OSError) as exc:
        raise ImageBuildError(spec.submission_id, f"cannot prepare the wheels: {exc}") from exc

    tmp_root = Path(state_dir) / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    tail: deque[str] = deque(maxlen=200)
    log(f"building {tag} from {spec.base_image} (torch {spec.torch_variant}, no network)")
    with tempfile.TemporaryDirectory(prefix="context-", dir=tmp_root) as tmp:
        ctx = Path(tmp)
        _assemble_context(ctx, spec, repo_root, wheelhouse, extra)
        try:
            error = _stream_build(client, ctx, spec, tag, log, tail)
        except DockerException as exc:
            error = f"docker engine error: {' '.join(str(exc).split())}"
    if error is not None:
        raise ImageBuildError(spec.submission_id, error, "\n".join(tail))
    try:
        image = client.images.get(tag)
    except DockerException as exc:
        raise ImageBuildError(
            spec.submission_id, f"built image {tag} not found: {exc}", "\n".join(tail)
        ) from exc
    log(f"built {tag} ({image.id})")
    return BuiltImage(tag=tag, image_id=str(image.id), reused=False)
