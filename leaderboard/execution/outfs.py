"""A filesystem of its own for a run's ``/out``: the kernel, not a poll, stops a run that writes too much.

:func:`capped_output` gives a run's output folder its own filesystem: a sparse ext4 image file of
:attr:`~leaderboard.execution.sandbox.SandboxLimits.out_cap_bytes` beside the folder (``<out>.ext4``, in
the job folder), with a little more than ``out_max_files`` inodes, loop-mounted ``nosuid,nodev,noexec``
on the folder, its root owned by the sandbox user. A write past it fails inside the container
(``ENOSPC``): ``fallocate`` of more than the cap, sparse files filled in, floods of small files. The image
never takes more host disk than its size, so one run costs the host at most the cap, whatever it does.
:func:`leaderboard.execution.sandbox.out_over_limit` still measures the folder while the run goes on; it
kills a run over the cap early and gives the reason, but it no longer has to be in time.

When the host cannot do this (not root, no ``mkfs.ext4`` or ``mount``, no loop device), the run falls back
to that polling alone — loudly: a :class:`~leaderboard.execution.sandbox.NoKernelLimitWarning`, and
:attr:`OutVolume.note` says so (recorded with the run as the tag ``out_limit``).

Invariants
----------
- Leaving :func:`capped_output` unmounts the filesystem and deletes the image whatever happened inside
  (timeout, kill, exception); a busy mount is detached lazily, and its space returns once the last user
  lets go. What the run wrote is gone afterwards: read and store the outputs inside the context.
- Before mounting, the folder itself is made root's, mode 0755: a container that would see the folder
  instead of the filesystem (an engine in a mount namespace of its own) cannot write at all — the limit
  fails closed, never open.
- :func:`unmount_below` removes what a killed orchestrator left mounted under a folder.

Side effects
------------
Runs ``mkfs.ext4``, ``mount`` and ``umount``; creates and deletes the image file; reads
``/proc/self/mountinfo``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from leaderboard.execution.sandbox import (
    POLL_S,
    SANDBOX_UID,
    NoKernelLimitWarning,
    OutVolume,
    SandboxLimits,
    human_size,
    last_line,
)

__all__ = [
    "MOUNT_OPTIONS", "TOOL_TIMEOUT_S", "capped_output", "image_inodes", "mounts_below", "unmount_below",
]  # fmt: skip

MKFS = "mkfs.ext4"
MOUNT = "mount"
UMOUNT = "umount"
MOUNT_OPTIONS = "loop,nosuid,nodev,noexec"
"""Options of the ``/out`` filesystem's mount: no setuid files, no devices, nothing executable."""

_GROUP_BYTES = 128 * 1024**2  # one ext4 block group with 4 KiB blocks
TOOL_TIMEOUT_S = 60
"""Each ``mkfs.ext4``, ``mount`` and ``umount`` call is given this many seconds."""


def image_inodes(limits: SandboxLimits) -> int:
    """Inodes asked of ``mkfs.ext4`` for a run's ``/out``: ``out_max_files`` plus what ext4 keeps and rounds.

    Parameters
    ----------
    limits : SandboxLimits
        Holds ``out_cap_bytes`` and ``out_max_files``.

    Returns
    -------
    int
        ``out_max_files + 16`` (ext4's reserved inodes) ``+ 16`` per block group (``mkfs`` rounds the count
        per group to whole inode-table blocks, down as well as up).
    """
    groups = -(-limits.out_cap_bytes // _GROUP_BYTES)
    return limits.out_max_files + 16 + 16 * groups


def _run(args: list[str]) -> None:
    subprocess.run(args, check=True, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)


def _failure(exc: Exception) -> str:
    if isinstance(exc, subprocess.CalledProcessError):
        detail = last_line(exc.stderr or "") or f"exit code {exc.returncode}"
        return f"{Path(exc.cmd[0]).name} failed: {detail}"
    return last_line(f"{type(exc).__name__}: {exc}")


def _why_not() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "the orchestrator does not run as root, which mounting needs"
    for tool in (MKFS, MOUNT, UMOUNT):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    return None


def _unmount(mount_point: Path) -> bool:
    """Unmount ``mount_point`` (lazily when it is busy); True when it is no longer mounted."""
    for args in ([UMOUNT, str(mount_point)], [UMOUNT, "-l", str(mount_point)]):
        try:
            _run(args)
            return True
        except (OSError, subprocess.SubprocessError):
            continue
    return not os.path.ismount(mount_point)


def _mount(out_dir: Path, image: Path, limits: SandboxLimits) -> None:
    """Make the image, mount it on ``out_dir`` and hand its root to the sandbox user (undone on failure)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if os.path.ismount(out_dir) or any(out_dir.iterdir()):
        raise OSError(f"{out_dir} is not an empty folder")
    os.chown(out_dir, 0, 0)  # fail closed: without the mount, uid 10001 cannot write here
    os.chmod(out_dir, 0o755)
    with open(image, "wb") as handle:
        handle.truncate(limits.out_cap_bytes)  # sparse: costs the host nothing until written
    _run([
        MKFS, "-q", "-F", "-b", "4096", "-m", "0", "-N", str(image_inodes(limits)),
        "-O", "^has_journal,^resize_inode", "-E", f"nodiscard,root_owner={SANDBOX_UID}:{SANDBOX_UID}",
        "-L", "chemrobust-out", str(image),
    ])  # fmt: skip
    _run([MOUNT, "-t", "ext4", "-o", MOUNT_OPTIONS, str(image), str(out_dir)])
    try:
        (out_dir / "lost+found").rmdir()  # /out must hold only what the run writes
        os.chmod(out_dir, 0o755)
    except OSError:
        _unmount(out_dir)
        raise


@contextmanager
def capped_output(out_dir: Path, limits: SandboxLimits) -> Iterator[OutVolume]:
    """Give ``out_dir`` a filesystem of ``limits.out_cap_bytes`` for the duration of the context.

    Parameters
    ----------
    out_dir : pathlib.Path
        The run's output folder (created when missing; must be empty).
    limits : SandboxLimits
        ``out_cap_bytes`` sizes the filesystem; ``out_max_files`` its inode count (:func:`image_inodes`).

    Yields
    ------
    OutVolume
        ``kernel=True`` with the image when mounted; otherwise ``kernel=False`` and a note that says why
        only polling limits ``/out`` (also emitted as a :class:`NoKernelLimitWarning`).
    """
    out_dir = Path(out_dir)
    image = out_dir.with_name(out_dir.name + ".ext4")
    cap = human_size(limits.out_cap_bytes)
    why = _why_not()
    mounted = False
    try:
        if why is None:
            try:
                _mount(out_dir, image, limits)
                mounted = True
            except (OSError, subprocess.SubprocessError) as exc:
                why = _failure(exc)
        if mounted:
            fs = os.statvfs(out_dir)
            note = (
                f"kernel: /out is an ext4 filesystem of {cap} with {fs.f_favail} free inodes "
                f"({MOUNT_OPTIONS})"
            )
            volume = OutVolume(out_dir, True, note, image)
        else:
            image.unlink(missing_ok=True)
            out_dir.mkdir(parents=True, exist_ok=True)
            note = (
                f"POLLING ONLY: /out has no filesystem of its own ({why}); it is measured every "
                f"{POLL_S:g} s, so one call can write past its {cap} limit before the run is killed"
            )
            warnings.warn(note, NoKernelLimitWarning, stacklevel=3)
            volume = OutVolume(out_dir, False, note)
        yield volume
    finally:
        if mounted and not _unmount(out_dir):
            warnings.warn(f"could not unmount {out_dir}", RuntimeWarning, stacklevel=3)
        image.unlink(missing_ok=True)


def _unescape(field: str) -> str:
    """Decode the octal escapes of ``/proc/self/mountinfo`` (space, tab, newline and backslash)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def mounts_below(folder: Path) -> list[Path]:
    """Return the mount points at or under ``folder``, deepest first (none where mountinfo is missing).

    Parameters
    ----------
    folder : pathlib.Path
        A host folder (resolved before comparing).

    Returns
    -------
    list of pathlib.Path
        Mount points, most nested first, so that unmounting in this order always works.
    """
    root = Path(folder).resolve()
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found = {Path(_unescape(line.split()[4])) for line in lines if len(line.split()) > 4}
    inside = [p for p in found if p == root or root in p.parents]
    return sorted(inside, key=lambda p: len(p.parts), reverse=True)


def unmount_below(folder: Path) -> int:
    """Unmount every filesystem mounted at or under ``folder`` (left by a killed orchestrator).

    Parameters
    ----------
    folder : pathlib.Path
        A job folder, or the folder holding them.

    Returns
    -------
    int
        How many were unmounted.
    """
    return sum(_unmount(p) for p in mounts_below(folder))
