"""Tests of leaderboard.files.gzip_writer: compressed on threads, the same bytes whatever the threads."""

from __future__ import annotations

import gzip
import random
import zlib
from pathlib import Path

import pandas as pd
import pyarrow.csv as pa_csv
import pytest

from leaderboard.files import gzip_writer


def _csv_bytes(rows: int, seed: int = 0) -> bytes:
    rng = random.Random(seed)
    lines = ["submission,id,value"]
    lines += [f"m{rng.randrange(20)},mol-{i},{rng.random():.6f}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def _write(path: Path, data: bytes, *, threads: int, piece: int, member_bytes: int = 4096) -> bytes:
    with gzip_writer(path, threads=threads, member_bytes=member_bytes) as out:
        for start in range(0, len(data), piece):
            out.write(data[start : start + piece])
    return path.read_bytes()


def test_bytes_depend_on_the_data_alone(tmp_path: Path) -> None:
    """One thread or four, written in one piece or in odd pieces: the same file, read back whole."""
    data = _csv_bytes(3000)
    files = {
        (threads, piece): _write(tmp_path / f"t{threads}-{piece}.csv.gz", data, threads=threads, piece=piece)
        for threads, piece in ((1, len(data)), (4, 777), (2, 4096), (3, 1))
    }
    assert len(set(files.values())) == 1
    blob = next(iter(files.values()))
    assert gzip.decompress(blob) == data
    assert blob[:2] == b"\x1f\x8b" and blob[4:8] == b"\0\0\0\0"  # gzip, mtime 0


def test_members_of_fixed_size_are_read_as_one_stream(tmp_path: Path) -> None:
    """The file holds several members (one per 4 KiB here); gzip, pyarrow and pandas read every row."""
    data = _csv_bytes(3000)
    path = tmp_path / "table.csv.gz"
    blob = _write(path, data, threads=2, piece=1000)
    members, rest = 0, blob
    while rest:  # walk the concatenated members
        d = zlib.decompressobj(wbits=31)
        d.decompress(rest)
        rest = d.unused_data
        members += 1
    assert members == -(-len(data) // 4096)
    assert pa_csv.read_csv(path).num_rows == 3000
    assert len(pd.read_csv(path)) == 3000


def test_an_empty_file_is_valid_gzip(tmp_path: Path) -> None:
    path = tmp_path / "empty.gz"
    with gzip_writer(path):
        pass
    assert gzip.decompress(path.read_bytes()) == b""


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    """The file is renamed into place only when the block ends: a raise mid-write keeps the old bytes."""
    path = tmp_path / "table.csv.gz"
    old = _write(path, b"a,b\n1,2\n", threads=1, piece=100)
    with pytest.raises(RuntimeError, match="mid-write"):
        with gzip_writer(path, threads=2, member_bytes=64) as out:
            out.write(_csv_bytes(500))
            raise RuntimeError("mid-write")
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv.gz"]  # no temporary file left


def test_the_same_content_keeps_the_old_bytes(tmp_path: Path) -> None:
    """A rewrite with nothing changed keeps a file written another way (level 9, one member): the committed
    record does not churn when the writer changes; any difference, or an unreadable file, is rewritten."""
    data = _csv_bytes(2000)
    path = tmp_path / "table.csv.gz"
    path.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    old = path.read_bytes()
    assert _write(path, data, threads=2, piece=999) == old
    for other in (data[:-1], data + b"x", data.replace(b"m1,", b"m9,", 1), b""):
        path.write_bytes(old)
        new = _write(path, other, threads=2, piece=999)
        assert new != old and gzip.decompress(new) == other
    path.write_bytes(b"not gzip at all")
    assert gzip.decompress(_write(path, data, threads=1, piece=5000)) == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv.gz"]
