"""Fetch the evaluation image's wheels on the host, once, into a *wheelhouse* keyed by the lock files.

The image is built without network (:mod:`leaderboard.execution.images`): every wheel it installs comes
from a folder filled here by ``pip download``. :func:`ensure_wheelhouse` fetches the locked environment
(``containers/requirements.lock`` plus ``containers/torch-<variant>.txt``); :func:`ensure_extra_wheelhouse`
fetches a submission's extra pinned requirements, constrained to the lock.

Invariants
----------
- The wheelhouse targets CPython 3.11 on manylinux (glibc 2.36, x86_64), i.e. Debian bookworm, whatever the
  host's own Python is (:data:`PIP_TARGET_ARGS`).
- ``requirements.lock`` and ``torch-cpu.txt`` are complete (every transitive dependency, exact ``==`` pins and
  ``sha256`` hashes), so their wheels are fetched with ``--no-deps``; pip verifies the hashes on download and
  again in the image.
- A wheelhouse folder is complete only once its :data:`WHEELHOUSE_MARKER` file exists (written last); a
  folder without it is emptied and fetched again.
- Extra requirements are exact ``name==version`` pins from PyPI (no options, URLs or paths) and can add
  packages, never move a locked one.
- Never talks to Docker and never runs submission code.

Side effects
------------
- Downloads wheels into ``state_dir/wheelhouse/`` (network; hundreds of MB for the main lock) by running
  ``python -m pip download``; removes older wheelhouses of the same variant.
- Logs progress through the ``log`` callback (``print`` by default).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "PIP_TARGET_ARGS",
    "REPO_ROOT",
    "TORCH_VARIANTS",
    "WHEELHOUSE_MARKER",
    "Log",
    "WheelhouseError",
    "ensure_extra_wheelhouse",
    "ensure_wheelhouse",
    "lock_files",
    "sha256_of",
]

Log = Callable[[str], None]
"""Receives progress lines."""

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository root (``containers/``) this module belongs to."""

TORCH_VARIANTS = ("cpu", "cuda")
"""The torch variants, each with its ``containers/torch-<variant>.txt``."""
PIP_TARGET_ARGS: tuple[str, ...] = (
    "--only-binary=:all:",
    "--implementation",
    "cp",
    "--python-version",
    "3.11",
    "--abi",
    "cp311",
    *(arg for minor in range(36, 16, -1) for arg in ("--platform", f"manylinux_2_{minor}_x86_64")),
    "--platform",
    "manylinux2014_x86_64",
)
"""pip options that select wheels for the image (CPython 3.11, glibc <= 2.36, x86_64), not for the host.

pip does not expand ``manylinux_2_36`` to the older glibc tags by itself, hence the explicit list.
"""

WHEELHOUSE_MARKER = ".complete"
"""Written last into a complete wheelhouse folder (it lists the wheels)."""

_LOG_TAIL_LINES = 30


class WheelhouseError(RuntimeError):
    """``pip download`` failed while filling a wheelhouse.

    Parameters
    ----------
    summary : str
        One line: pip's first ``ERROR:`` line, or its exit status.
    output : str
        The end of pip's output.
    """

    def __init__(self, summary: str, output: str = "") -> None:
        self.summary = summary
        self.output = output
        super().__init__(f"{summary}\n{output}" if output else summary)


def lock_files(variant: str, repo_root: Path = REPO_ROOT) -> tuple[Path, Path]:
    """Return the two lock files installed for a torch variant.

    Parameters
    ----------
    variant : {"cpu", "cuda"}
        The torch variant.
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/``.

    Returns
    -------
    tuple of pathlib.Path
        ``containers/requirements.lock`` and ``containers/torch-<variant>.txt``.

    Raises
    ------
    ValueError
        If ``variant`` is not ``"cpu"`` or ``"cuda"``.
    """
    if variant not in TORCH_VARIANTS:
        raise ValueError(f"torch variant must be one of {TORCH_VARIANTS}, got {variant!r}")
    containers = Path(repo_root) / "containers"
    return containers / "requirements.lock", containers / f"torch-{variant}.txt"


def sha256_of(chunks: Iterable[bytes]) -> str:
    """Hash a sequence of byte strings unambiguously (each chunk is preceded by its length).

    Parameters
    ----------
    chunks : iterable of bytes
        The content, in order.

    Returns
    -------
    str
        The sha256 hex digest.
    """
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(len(chunk).to_bytes(8, "big"))
        digest.update(chunk)
    return digest.hexdigest()


def _pip_download(args: list[str], log: Log) -> None:
    """Run ``python -m pip download`` with the image's target platform options, streaming its output."""
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", *PIP_TARGET_ARGS, *args]
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    lines = proc.stdout.splitlines()
    for line in lines:
        if line.startswith(("Saved ", "Successfully", "ERROR", "WARNING: Requested", "File was already")):
            log(f"  {line}")
    if proc.returncode != 0:
        errors = [line for line in lines if line.startswith("ERROR:")]
        summary = errors[0] if errors else f"pip download failed (exit {proc.returncode})"
        raise WheelhouseError(summary, "\n".join(lines[-_LOG_TAIL_LINES:]))


def _has_hashes(path: Path) -> bool:
    return "--hash=" in path.read_text(encoding="utf-8")


def _finish(dest: Path) -> Path:
    names = sorted(p.name for p in dest.iterdir() if p.is_file() and p.name != WHEELHOUSE_MARKER)
    (dest / WHEELHOUSE_MARKER).write_text("\n".join(names) + "\n", encoding="utf-8")
    return dest


def ensure_wheelhouse(
    variant: str, state_dir: Path, *, repo_root: Path = REPO_ROOT, log: Log = print
) -> Path:
    """Download the image's locked wheels once, into a folder keyed by the lock files' content.

    Parameters
    ----------
    variant : {"cpu", "cuda"}
        The torch variant (selects ``containers/torch-<variant>.txt``).
    state_dir : pathlib.Path
        Local state folder (e.g. ``.state``); wheels go to ``state_dir/wheelhouse/<variant>-<hash>``.
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/``.
    log : callable, optional
        Receives progress lines.

    Returns
    -------
    pathlib.Path
        The wheelhouse folder; it contains a ``.complete`` marker written last.

    Raises
    ------
    WheelhouseError
        If ``pip download`` fails (the half-done folder is redone on the next call).

    Notes
    -----
    Idempotent: a folder with the marker is returned as is; one without (an interrupted download) is
    emptied and fetched again. The key ignores comments in the lock files; once a new folder is complete,
    older folders of the same variant are removed.

    ``requirements.lock`` is complete, so it is fetched with ``--no-deps`` and ``sha256`` checking. A
    hashed torch file is complete too; an unhashed one (the CUDA template before ``containers/lock.py
    --variant cuda`` has been run) is fetched with its dependencies.
    """
    lock, torch_file = lock_files(variant, repo_root)
    key = sha256_of([_requirement_bytes(lock), _requirement_bytes(torch_file)])[:16]
    dest = Path(state_dir) / "wheelhouse" / f"{variant}-{key}"
    if (dest / WHEELHOUSE_MARKER).is_file():
        return dest
    if dest.exists():
        log(f"wheelhouse {dest} is incomplete (interrupted download?): fetching again")
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    log(f"wheelhouse: downloading the {variant} lock into {dest}")
    _pip_download(["--no-deps", "--require-hashes", "-r", str(lock), "-d", str(dest)], log)
    torch_args = ["--no-deps"] if _has_hashes(torch_file) else []
    _pip_download([*torch_args, "-r", str(torch_file), "-d", str(dest)], log)
    _finish(dest)
    for old in dest.parent.glob(f"{variant}-*"):
        if old != dest and old.is_dir():
            log(f"wheelhouse: removing {old} (an older lock)")
            shutil.rmtree(old, ignore_errors=True)
    return dest


def _requirement_bytes(path: Path) -> bytes:
    """Return a lock file without its comments and blank lines: what pip reads from it."""
    lines = (line.split("#", 1)[0].rstrip() for line in path.read_text(encoding="utf-8").splitlines())
    return "\n".join(line for line in lines if line).encode()


def _pins(path: Path) -> dict[str, str]:
    """Read ``name==version`` pins from a lock file (continuation lines and options skipped)."""
    pins: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip().rstrip("\\").strip()
        if not line or line.startswith("-"):
            continue
        name, sep, version = line.split(";", 1)[0].partition("==")
        if sep:
            pins[_canonical(name)] = version.split()[0]
    return pins


def _canonical(name: str) -> str:
    return "-".join(name.strip().lower().replace("_", "-").replace(".", "-").split("-"))


def _check_extra_requirements(requirements: Iterable[str]) -> list[str]:
    cleaned = []
    for req in requirements:
        text = req.strip()
        if text.startswith("-") or "==" not in text or any(c in text for c in "@/\\"):
            raise ValueError(
                f"extra requirement {req!r} must be an exact pin 'name==version' from PyPI "
                "(no options, URLs or paths), e.g. 'selfies==2.1.1'"
            )
        cleaned.append(text)
    return cleaned


def ensure_extra_wheelhouse(
    requirements: list[str] | tuple[str, ...],
    state_dir: Path,
    *,
    variant: str = "cpu",
    repo_root: Path = REPO_ROOT,
    log: Log = print,
) -> Path:
    """Download a submission's extra pinned requirements and their dependencies once.

    Parameters
    ----------
    requirements : list of str
        Exact pins ``name==version``; may be empty (then an empty folder is returned).
    state_dir : pathlib.Path
        Local state folder; wheels go to ``state_dir/wheelhouse/extra-<hash>``.
    variant : {"cpu", "cuda"}, optional
        Torch variant whose lock constrains the resolution.
    repo_root : pathlib.Path, optional
        Repository root holding ``containers/``.
    log : callable, optional
        Receives progress lines.

    Returns
    -------
    pathlib.Path
        A folder holding only the wheels that the main wheelhouse lacks, with a ``.complete`` marker.

    Raises
    ------
    ValueError
        If a requirement is not an exact ``name==version`` pin.
    WheelhouseError
        If ``pip download`` fails, e.g. a requirement conflicts with the main lock.

    Notes
    -----
    Resolved with dependencies, constrained to the main lock's versions (an extra requirement may add
    packages, never move a locked one), with the main wheelhouse as a local source; wheels that the main
    wheelhouse already holds are then removed from this folder. The key is the hash of the requirement
    list and of the main lock files.
    """
    reqs = _check_extra_requirements(requirements)
    lock, torch_file = lock_files(variant, repo_root)
    locks = [_requirement_bytes(lock), _requirement_bytes(torch_file)]
    key = sha256_of([*(r.encode() for r in reqs), b"\0", *locks])[:16]
    dest = Path(state_dir) / "wheelhouse" / f"extra-{key}"
    if (dest / WHEELHOUSE_MARKER).is_file():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if not reqs:
        return _finish(dest)
    main = ensure_wheelhouse(variant, state_dir, repo_root=repo_root, log=log)
    constraints = {**_pins(lock), **_pins(torch_file)}
    with tempfile.TemporaryDirectory(prefix="chemrobust-extra-") as tmp:
        req_file = Path(tmp) / "extra-requirements.txt"
        req_file.write_text("\n".join(reqs) + "\n", encoding="utf-8")
        con_file = Path(tmp) / "constraints.txt"
        con_file.write_text("".join(f"{n}=={v}\n" for n, v in sorted(constraints.items())), encoding="utf-8")
        log(f"extra wheelhouse: downloading {', '.join(reqs)} into {dest}")
        _pip_download(
            ["--find-links", str(main), "-c", str(con_file), "-r", str(req_file), "-d", str(dest)], log
        )
    present = {p.name for p in main.iterdir()}
    for wheel in dest.iterdir():
        if wheel.name in present:
            wheel.unlink()
    return _finish(dest)
