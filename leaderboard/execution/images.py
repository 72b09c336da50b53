"""Build the per-submission evaluation image, without network in the build.

Two images, both content-addressed (the same inputs give the same tag, so an existing image is reused):

- the *runtime image* (:func:`ensure_runtime_image`, ``containers/Dockerfile``): a virtual environment
  installed from a host-side *wheelhouse* (``pip download`` on the host, ``pip install --no-index`` in the
  build), the sandbox user and the container protocol. Its tag (:func:`runtime_tag`) covers the Dockerfile,
  the lock files, the extra requirements, the base image name and the torch variant, so every submission
  without extra requirements shares one;
- the *submission image* (:func:`ensure_image`, ``containers/Dockerfile.submission``): the runtime image
  plus the repository's ``evaluators/`` package and the submission folder. Its tag (:func:`image_tag`) covers
  the runtime tag, that Dockerfile and both folders. Building it sends the engine a context of a few hundred
  KB: the wheelhouse (hundreds of MB) travels once, with the runtime image.

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
- Pulls or builds Docker images and tags them ``chemrobust-runtime:<hash>`` and
  ``chemrobust/<submission_id>:<hash>``; may run
  ``containers/bootstrap-base.sh`` (root, debootstrap, Debian mirror) to make ``chemrobust/base:bookworm``.
- Logs progress through the ``log`` callback (``print`` by default).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leaderboard.execution.base_image import (
    BOOTSTRAP_BASE_TAG,
    DEFAULT_BASE_IMAGE,
    LOG_TAIL_LINES,
    BaseImageError,
    ensure_base_image,
    image_exists,
)
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
    "ensure_runtime_image",
    "image_tag",
    "runtime_tag",
]

RUNTIME_REPOSITORY = "chemrobust-runtime"
"""Repository of the runtime images (:func:`runtime_tag`): outside ``chemrobust/``, where every submission id
names a repository of its own, so no submission's images can share it."""

SUBMISSION_DOCKERFILE = "Dockerfile.submission"
"""The thin Dockerfile of a submission's image, in ``containers/``."""

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
        tail = "\n".join(self.log_tail.splitlines()[-LOG_TAIL_LINES:])
        text = f"image build for submission {self.submission_id!r} failed: {self.reason}"
        if tail:
            text += f"\n--- last lines of the build log ---\n{tail}"
        return text


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


def runtime_tag(spec: ImageSpec, repo_root: Path = REPO_ROOT) -> str:
    """Return the content-addressed tag of the runtime image a submission's image is built on.

    Parameters
    ----------
    spec : ImageSpec
        The submission's image inputs (only the extra requirements, base image and torch variant count).
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/``.

    Returns
    -------
    str
        ``chemrobust-runtime:<first 16 hex digits of a sha256>``.

    Notes
    -----
    The hash covers ``containers/Dockerfile``, the two lock files of the variant, the extra requirements,
    the base image name and the torch variant: submissions that agree on these share one runtime image.
    """
    repo_root = Path(repo_root)
    lock, torch_file = lock_files(spec.torch_variant, repo_root)

    def chunks() -> Iterator[bytes]:
        yield b"chemrobust-runtime-v1"
        yield (repo_root / "containers" / "Dockerfile").read_bytes()
        yield lock.read_bytes()
        yield torch_file.read_bytes()
        yield b"extra-requirements"
        yield from (r.encode() for r in spec.extra_requirements)
        yield f"base:{spec.base_image}".encode()
        yield f"torch:{spec.torch_variant}".encode()

    return f"{RUNTIME_REPOSITORY}:{sha256_of(chunks())[:16]}"


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
    The hash covers the runtime image's tag (:func:`runtime_tag`: the Dockerfile, the lock files, the extra
    requirements, the base image name and the torch variant), ``containers/Dockerfile.submission``, and
    every file under ``evaluators/`` and under the submission folder (sorted relative paths, bytes and
    executable bit; ``__pycache__`` and ``*.pyc`` skipped). It is deterministic, and a changed byte in any of
    these changes it.
    """
    repo_root = Path(repo_root)
    for folder in (repo_root / "evaluators", Path(spec.submission_dir)):
        if not folder.is_dir():
            raise FileNotFoundError(
                f"{folder}: folder missing (needed in the image of {spec.submission_id!r})"
            )

    def chunks() -> Iterator[bytes]:
        yield b"chemrobust-image-v2"
        yield runtime_tag(spec, repo_root).encode()
        yield (repo_root / "containers" / SUBMISSION_DOCKERFILE).read_bytes()
        yield from _tree_chunks("evaluators", repo_root / "evaluators")
        yield from _tree_chunks("submission", spec.submission_dir)

    return f"chemrobust/{spec.submission_id}:{sha256_of(chunks())[:16]}"


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


def _runtime_context(
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


def _submission_context(ctx: Path, spec: ImageSpec, repo_root: Path) -> None:
    shutil.copyfile(repo_root / "containers" / SUBMISSION_DOCKERFILE, ctx / "Dockerfile")
    _copy_tree_normalized(repo_root / "evaluators", ctx / "evaluators")
    _copy_tree_normalized(spec.submission_dir, ctx / "submission")


def _build(
    client: docker.DockerClient,
    ctx: Path,
    tag: str,
    buildargs: dict[str, str],
    labels: dict[str, str],
    log: Log,
    tail: deque[str],
) -> str | None:
    """Run the build and stream its output; return None on success, else the engine's error line."""
    pending = ""
    error: str | None = None
    chunks: Iterable[dict[str, Any]] = client.api.build(
        path=str(ctx),
        tag=tag,
        buildargs=buildargs,
        network_mode="none",
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
        labels=labels,
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


def _build_in_context(
    client: docker.DockerClient,
    spec: ImageSpec,
    tag: str,
    state_dir: Path,
    assemble: Callable[[Path], None],
    buildargs: dict[str, str],
    labels: dict[str, str],
    log: Log,
) -> str:
    """Assemble a context in a temporary folder, build ``tag`` from it, return the engine's image id."""
    tmp_root = Path(state_dir) / "tmp"
    tmp_root.mkdir(parents=True, exist_ok=True)
    tail: deque[str] = deque(maxlen=200)
    with tempfile.TemporaryDirectory(prefix="context-", dir=tmp_root) as tmp:
        assemble(Path(tmp))
        try:
            error = _build(client, Path(tmp), tag, buildargs, labels, log, tail)
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
    return str(image.id)


def _untimed(kind: str, label: str = "") -> AbstractContextManager:
    """No phase clock: time nothing."""
    return nullcontext()


def _existing(client: docker.DockerClient, spec: ImageSpec, tag: str) -> str | None:
    """Return the engine's id of ``tag``, or None when the engine has no such image."""
    try:
        return str(client.images.get(tag).id)
    except ImageNotFound:
        return None
    except DockerException as exc:
        raise ImageBuildError(spec.submission_id, f"docker engine error: {exc}") from exc


def ensure_runtime_image(
    client: docker.DockerClient,
    spec: ImageSpec,
    *,
    repo_root: Path = REPO_ROOT,
    state_dir: Path,
    log: Log = print,
    timed: Callable[..., AbstractContextManager] | None = None,
) -> str:
    """Return the tag of the runtime image ``spec``'s image is built on, building it if it is not present.

    Parameters are those of :func:`ensure_image`. The wheels are prepared (timed as the ``wheelhouse``
    phase) and sent to the engine only when the runtime image must be built: once per lock, base image,
    torch variant and set of extra requirements.

    Returns
    -------
    str
        :func:`runtime_tag` of ``spec``.

    Raises
    ------
    ImageBuildError
        If the base image is missing, the wheels cannot be fetched, or the build fails.
    """
    repo_root = Path(repo_root)
    tag = runtime_tag(spec, repo_root)
    if _existing(client, spec, tag) is not None:
        return tag
    if not image_exists(client, spec.base_image):
        raise ImageBuildError(
            spec.submission_id,
            f"base image {spec.base_image!r} is not in the local engine; "
            "call leaderboard.execution.images.ensure_base_image first",
        )
    timer = timed or _untimed
    try:
        with timer("wheelhouse", spec.torch_variant):
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
    log(f"building the runtime image {tag} from {spec.base_image} (torch {spec.torch_variant}, no network)")
    with timer("runtime image", tag):
        _build_in_context(
            client, spec, tag, state_dir,
            lambda ctx: _runtime_context(ctx, spec, repo_root, wheelhouse, extra),
            buildargs={"BASE_IMAGE": spec.base_image, "TORCH_VARIANT": spec.torch_variant},
            labels={
                "org.chemrobust.base-image": spec.base_image,
                "org.chemrobust.torch-variant": spec.torch_variant,
            },
            log=log,
        )  # fmt: skip
    return tag


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

    The image is its runtime image (:func:`ensure_runtime_image`, built first when missing) plus
    ``evaluators/`` and the submission folder (``containers/Dockerfile.submission``).

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
        :meth:`leaderboard.execution.phases.Phases.timed`: the wheelhouse and the runtime image are timed
        as phases of their own.

    Returns
    -------
    BuiltImage
        Tag, engine image id, and whether an existing image was reused.

    Raises
    ------
    ImageBuildError
        If the base image is missing, the wheels cannot be fetched, or a build fails; ``str()`` shows
        the reason and the last 30 lines of the build log.
    """
    repo_root = Path(repo_root)
    tag = image_tag(spec, repo_root)
    image_id = _existing(client, spec, tag)
    if image_id is not None:
        log(f"image {tag} exists: reusing it")
        return BuiltImage(tag=tag, image_id=image_id, reused=True)
    runtime = ensure_runtime_image(
        client, spec, repo_root=repo_root, state_dir=state_dir, log=log, timed=timed
    )
    log(f"building {tag} on {runtime} (no network)")
    image_id = _build_in_context(
        client, spec, tag, state_dir,
        lambda ctx: _submission_context(ctx, spec, repo_root),
        buildargs={"RUNTIME_IMAGE": runtime},
        labels={
            "org.chemrobust.submission": spec.submission_id,
            "org.chemrobust.base-image": spec.base_image,
            "org.chemrobust.torch-variant": spec.torch_variant,
        },
        log=log,
    )  # fmt: skip
    return BuiltImage(tag=tag, image_id=image_id, reused=False)
