"""Atomic file writes: the one helper every host module uses to write a file others read.

A killed process leaves either the old file or the new one, never a truncated page, export or job file.
Side effects: creates the parent folder; writes ``.<name>.*.tmp`` beside the target while writing.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_open(path: Path, *, mode: int = 0o644) -> Iterator[IO[bytes]]:
    """Open a temporary file beside ``path`` for binary writing; rename it onto ``path`` when complete.

    Parameters
    ----------
    path : pathlib.Path
        The file to (re)write.
    mode : int, optional
        Permission bits of the finished file (default ``0o644``: readable by the sandbox user).

    Yields
    ------
    IO[bytes]
        The open temporary file. If the ``with`` block raises, the target is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path) as handle:
        handle.write(text.encode("utf-8"))


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON (no NaN, non-ASCII kept) to ``path`` atomically."""
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
