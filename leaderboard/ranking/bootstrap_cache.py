"""On-disk cache of bootstrap rank intervals: the key and the JSON file format.

:func:`leaderboard.ranking.uncertainty.cached_rank_intervals` computes :func:`cache_key` from the canonical
per-item arrays (:class:`leaderboard.ranking.item_table.PreparedItems`, with the part layout of criteria
made of parts), the weights and the parameters, reads ``<cache_dir>/rank_intervals-<key[:32]>.json`` with
:func:`read_cache` and, on a miss, writes it with :func:`write_cache`. A table without parts has the same
key as before parts existed.

File format: one JSON object ``{"key": <full sha256>, "params": {...}, "rows": [{"system": ..., <column>:
<value>, ...}, ...]}``, indented, keys sorted, one trailing newline. A file whose key differs from the
expected one, or that cannot be read or parsed, is a miss.

Side effects: :func:`write_cache` creates the cache folder if needed and replaces the file atomically
(a temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from leaderboard.ranking.item_table import PreparedItems

__all__ = ["CACHE_VERSION", "cache_key", "read_cache", "write_cache"]

#: Bumped whenever the method changes, so that stale cache files are never reused.
CACHE_VERSION = 2


def cache_key(prep: PreparedItems, *, seed: int, n_boot: int, level: float) -> str:
    """Return the sha256 over the canonical per-item arrays, the part layout, the weights and the parameters.

    Parameters
    ----------
    prep : PreparedItems
        Per-item results in canonical (sorted) form.
    seed : int
        Seed of the bootstrap.
    n_boot : int
        Number of replicates.
    level : float
        Interval coverage.

    Returns
    -------
    str
        Hex digest; it also covers :data:`CACHE_VERSION`.
    """
    h = hashlib.sha256()
    header = {
        "version": CACHE_VERSION,
        "seed": seed,
        "n_boot": n_boot,
        "level": level,
        "systems": prep.systems,
        "criteria": prep.criteria,
        "weights": [float(x) for x in prep.weights],
        "pools": [(g.name, g.n_items, g.columns.tolist()) for g in prep.groups],
    }
    if prep.layout is not None:
        # Only tables with parts add this entry, so that the key of a table without parts is unchanged.
        header["parts"] = {
            "criterion": prep.layout.criterion.tolist(),
            "part": list(prep.layout.part),
            "combine": list(prep.layout.combine),
        }
    h.update(json.dumps(header, sort_keys=True).encode())
    for g in prep.groups:  # the observed cells and their values: the whole content, without the NaN
        h.update(np.int64(g.width).tobytes())
        h.update(np.ascontiguousarray(g.cells, dtype="<i8").tobytes())
        h.update(np.ascontiguousarray(g.cell_values, dtype="<f8").tobytes())
    return h.hexdigest()


def read_cache(path: Path, key: str, columns: Mapping[str, Callable[[Any], Any]]) -> pd.DataFrame | None:
    """Read a cached interval table, or ``None`` when the file is missing, unreadable or for another key.

    Parameters
    ----------
    path : pathlib.Path
        The cache file.
    key : str
        The expected full key (:func:`cache_key`).
    columns : mapping of str to type
        Column name to its type (``int`` or ``float``), in the order of the returned columns.

    Returns
    -------
    pandas.DataFrame or None
        Indexed by ``system``, the given columns with the given types.
    """
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(payload, dict)
        or payload.get("key") != key
        or not isinstance(payload.get("rows"), list)
    ):
        return None
    try:
        frame = pd.DataFrame(payload["rows"], columns=["system", *columns]).set_index("system")
        return frame.astype(dict(columns))
    except (KeyError, TypeError, ValueError):
        return None


def write_cache(
    path: Path,
    key: str,
    params: dict[str, Any],
    frame: pd.DataFrame,
    columns: Mapping[str, Callable[[Any], Any]],
) -> None:
    """Write an interval table to ``path`` atomically, with its key and the parameters behind it.

    Parameters
    ----------
    path : pathlib.Path
        The cache file (its folder is created if needed).
    key : str
        The full key (:func:`cache_key`).
    params : dict
        JSON-able description of the computation (informative; not checked on reading).
    frame : pandas.DataFrame
        The table, indexed by system, with the columns of ``columns``.
    columns : mapping of str to type
        Column name to the type its values are written as (``int`` or ``float``).
    """
    rows = [{"system": str(s), **{c: columns[c](v) for c, v in row.items()}} for s, row in frame.iterrows()]
    text = json.dumps({"key": key, "params": params, "rows": rows}, indent=1, sort_keys=True) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
