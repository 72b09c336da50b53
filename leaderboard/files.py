"""Atomic file writes: the one helper every host module uses to write a file others read.

A killed process leaves either the old file or the new one, never a truncated page, export or job file.
:func:`gzip_writer` compresses what is written into a ``.gz`` file on every core, with the same bytes
whatever the core count.
Side effects: creates the parent folder; writes ``.<name>.*.tmp`` beside the target while writing.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import tempfile
import zlib
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from leaderboard.cpus import usable_cpus


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


#: Uncompressed bytes per gzip member of :func:`gzip_writer`: the members compress side by side, and a
#: member boundary costs a header and a cold dictionary (measured: < 0.1 % of an 8 MiB member).
GZIP_MEMBER_BYTES = 8 << 20
#: zlib's default level: on the board's per-item tables 2.3-4.2x faster than level 9 for 1-6 % more bytes
#: (item_ranks 3.21 -> 3.25 MB, template_answers 4.01 -> 4.27 MB; 1.48 -> 0.64 s and 3.71 -> 0.88 s).
GZIP_LEVEL = 6


def _compress(block: bytes, level: int) -> bytes:
    # mtime 0 (and no file name): the same block gives the same bytes on every rebuild.
    return gzip.compress(block, compresslevel=level, mtime=0)


class _SameContent:
    """Compares a stream of bytes, as it is written, with the content of an existing gzip file.

    So that a rewrite with nothing changed keeps the committed file's bytes (whatever level or members
    wrote it): only the comparison costs, a decompression of the old file alongside.
    """

    def __init__(self, path: Path | None) -> None:
        self._old: IO[bytes] | None = None
        self.same = False
        if path is not None and path.is_file():
            self._old = gzip.open(path, "rb")
            self.same = True

    def feed(self, data: memoryview) -> None:
        """Compare the next bytes written with the old file's next bytes."""
        if not self.same or not len(data):
            return
        try:
            self.same = self._read(len(data)) == data
        except (OSError, EOFError, zlib.error):  # not a readable gzip file: it changes
            self.same = False

    def _read(self, n: int) -> bytes:
        assert self._old is not None
        parts, want = [], n
        while want:
            chunk = self._old.read(want)
            if not chunk:
                break
            parts.append(chunk)
            want -= len(chunk)
        return b"".join(parts)

    def at_end(self) -> bool:
        """Whether every byte so far was the same and the old file has no more."""
        if not self.same:
            return False
        try:
            return self._read(1) == b""
        except (OSError, EOFError, zlib.error):
            return False

    def close(self) -> None:
        if self._old is not None:
            self._old.close()
            self._old = None


class _GzipMembers(io.RawIOBase):
    """A writable stream that gzips fixed-size blocks as concatenated members (RFC 1952 section 2.2).

    The blocks are cut at fixed byte offsets and compressed on a thread pool (zlib releases the GIL), and
    written in order, so the file's bytes depend on the data alone, not on the thread count or on how the
    writes were split. Every gzip reader (Python's ``gzip``, pyarrow, pandas, ``gunzip``, browsers) reads a
    multi-member file as one stream.
    """

    def __init__(
        self, raw: IO[bytes], *, level: int, member_bytes: int, threads: int, old: Path | None = None
    ) -> None:
        super().__init__()
        self._raw, self._level, self._size = raw, level, member_bytes
        self.old = _SameContent(old)
        self._buffer = bytearray()
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="gzip") if threads > 1 else None
        self._pending: deque[Future[bytes]] = deque()
        self._limit = 2 * threads  # blocks in flight: bounds the memory to a few members
        self._members = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        self.old.feed(view)
        self._buffer += view
        while len(self._buffer) >= self._size:
            block = bytes(self._buffer[: self._size])
            del self._buffer[: self._size]
            self._submit(block)
        return len(view)

    def _submit(self, block: bytes) -> None:
        self._members += 1
        if self._pool is None:
            self._raw.write(_compress(block, self._level))
            return
        self._pending.append(self._pool.submit(_compress, block, self._level))
        while len(self._pending) > self._limit:
            self._raw.write(self._pending.popleft().result())

    def finish(self) -> None:
        """Compress what is buffered (an empty file is one empty member) and write every member."""
        if self._buffer or not self._members:
            self._submit(bytes(self._buffer))
            self._buffer.clear()
        while self._pending:
            self._raw.write(self._pending.popleft().result())

    def close(self) -> None:
        if self._pool is not None:
            for future in self._pending:
                future.cancel()
            self._pool.shutdown(wait=True)
            self._pool = None
        self.old.close()
        super().close()


def gzip_threads() -> int:
    """Return the threads :func:`gzip_writer` compresses on: the CPUs this process may use, at most 8."""
    return min(8, usable_cpus())


@contextlib.contextmanager
def gzip_writer(
    path: Path, *, level: int = GZIP_LEVEL, member_bytes: int = GZIP_MEMBER_BYTES, threads: int | None = None
) -> Iterator[IO[bytes]]:
    """Open ``path`` for writing gzip-compressed bytes, atomically (:func:`atomic_open`).

    Parameters
    ----------
    path : pathlib.Path
        The ``.gz`` file to (re)write.
    level : int, optional
        zlib compression level (default :data:`GZIP_LEVEL`).
    member_bytes : int, optional
        Uncompressed bytes per gzip member (default :data:`GZIP_MEMBER_BYTES`).
    threads : int, optional
        Compression threads (default :func:`gzip_threads`); the bytes written do not depend on it.

    Yields
    ------
    IO[bytes]
        A binary stream; what is written is compressed in members of ``member_bytes`` and the file is
        renamed into place when the ``with`` block ends — unless ``path`` already holds a gzip file with
        exactly the same content: then its bytes are kept (a rebuild with nothing changed rewrites no
        committed file, whichever level or members wrote it). If the block raises, the target is
        untouched.
    """
    path = Path(path)
    try:
        with atomic_open(path) as raw:
            stream = _GzipMembers(
                raw,
                level=level,
                member_bytes=member_bytes,
                threads=gzip_threads() if threads is None else threads,
                old=path,
            )
            try:
                yield stream
                stream.finish()
                unchanged = stream.old.at_end()
            finally:
                stream.close()
            if unchanged:
                raise _Unchanged  # leaves atomic_open without the rename: its temporary file is removed
    except _Unchanged:
        pass


class _Unchanged(Exception):
    """The content written equals the existing file's: keep that file."""
