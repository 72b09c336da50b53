"""The host's view of the track registry: everything store, ranking and site need to know about tracks.

Reads only the declarations of :mod:`evaluators.tracks` (dimensions, metrics, headline criteria, per-item
tables) and of :mod:`evaluators.metrics` (directions, bounds, labels); never runs a track. Importing it is
cheap (no torch, no mlflow). A new track registered in ``evaluators/tracks/`` — or from a plug-in module —
appears here without any edit. Side effects: none.
"""

from __future__ import annotations

import re

from evaluators.metrics import METRICS
from evaluators.schema import Dimension, MetricSpec, TableSpec
from evaluators.tracks import TRACKS, Track

#: Key columns of every export row, before the track's own columns.
KEY_COLUMNS: tuple[str, ...] = ("submission", "track", "dataset")
_NUMBER = re.compile(r"(\d+)")


def track_names() -> list[str]:
    """Names of the registered tracks, sorted."""
    return TRACKS.names()


def track(name: str) -> type[Track]:
    """Return the registered track class called ``name`` (``KeyError`` with close matches otherwise)."""
    return TRACKS.get(name)


def metric(name: str) -> MetricSpec:
    """Return the registered metric called ``name``: direction, bounds, label."""
    return METRICS.get(name)


def higher_is_better() -> dict[str, bool]:
    """Direction of every registered metric, as the ranking reads it."""
    return {name: METRICS.get(name).higher_is_better for name in METRICS.names()}


def dimensions() -> list[Dimension]:
    """Every registered track's dimensions, each name once (first declaration wins), in track order."""
    out: dict[str, Dimension] = {}
    for name in TRACKS.names():
        for dim in TRACKS.get(name).dimensions:
            out.setdefault(dim.name, dim)
    return list(out.values())


def result_columns() -> list[str]:
    """Columns of the long results export: keys, every track's dimensions, ``metric``, ``value``.

    A row of one track holds ``-`` in the dimensions of other tracks.
    """
    return [*KEY_COLUMNS, *(d.name for d in dimensions()), "metric", "value"]


def table_specs() -> dict[str, tuple[str, TableSpec]]:
    """Every per-item table a registered track declares, by export name, with its track's name.

    Raises
    ------
    ValueError
        If two tables share a name or an export file.
    """
    out: dict[str, tuple[str, TableSpec]] = {}
    files: dict[str, str] = {}
    for name in TRACKS.names():
        for spec in TRACKS.get(name).tables:
            clash = spec.name if spec.name in out else spec.file if spec.file in files else None
            if clash is not None:
                raise ValueError(f"track {name!r} declares a table {clash!r} that another table already uses")
            out[spec.name] = (name, spec)
            files[spec.file] = spec.name
    return out


def value_sort_key(dim: Dimension | None, value: str) -> tuple[int, tuple[object, ...]]:
    """Sort key of a dimension value: declared order first, then numbers inside labels numerically.

    Examples
    --------
    >>> layer = Dimension("layer", "hidden layer", numeric=True)
    >>> sorted(["encoder.10", "last", "encoder.2", "-", "decoder.1"], key=lambda v: value_sort_key(layer, v))
    ['last', 'decoder.1', 'encoder.2', 'encoder.10', '-']
    """
    if value == "last":
        return (0, ())
    if value == "-":
        return (3, ())
    if dim is not None and value in dim.values:
        return (1, (dim.values.index(value),))
    parts = tuple(int(p) if p.isdigit() else p for p in _NUMBER.split(value) if p != "")
    if dim is None or not dim.numeric:
        return (2, (value,))
    # Mixed int/str parts compare safely as (is_text, value) pairs.
    return (2, tuple((isinstance(p, str), p if isinstance(p, str) else f"{p:012d}") for p in parts))


def ordered(dim: Dimension | None, values: list[str] | set[str]) -> list[str]:
    """``values`` (deduplicated) in display order, see :func:`value_sort_key`."""
    return sorted(set(values), key=lambda v: value_sort_key(dim, v))
