"""The host's view of the track registry: everything store, ranking and site need to know about tracks.

Reads only the declarations of :mod:`evaluators.tracks` (dimensions, metrics, headline criteria, per-item
tables, stored artifacts) and of :mod:`evaluators.metrics` (directions, bounds, labels); never runs a
track. Importing it is cheap (no torch, no mlflow). A new track registered in ``evaluators/tracks/`` — or
from a plug-in module — appears here without any edit. Side effects: none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evaluators.metrics import METRICS
from evaluators.schema import Dimension, MetricSpec, TableSpec
from evaluators.tracks import TRACKS, Track

#: Key columns of every export row, before the track's own columns.
KEY_COLUMNS: tuple[str, ...] = ("submission", "track", "dataset")


def track_names() -> list[str]:
    """Names of the registered tracks, sorted."""
    return TRACKS.names()


def track(name: str) -> type[Track]:
    """Return the registered track class called ``name`` (``KeyError`` with close matches otherwise)."""
    return TRACKS.get(name)


def metric(name: str) -> MetricSpec:
    """Return the registered metric called ``name``: direction, bounds, label."""
    return METRICS.get(name)


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


def stored_artifacts(name: str, listed: Iterable[str] = ()) -> list[str]:
    """Names of the files of a run of track ``name`` that the host checks and stores, besides ``result.json``.

    Parameters
    ----------
    name : str
        The track.
    listed : iterable of str
        The names the run's result lists in its ``artifacts``.

    Returns
    -------
    list of str
        Sorted: the artifacts of the track's tables, and the names in ``listed`` that the track declares
        (``Track.artifacts``). Every other file a run writes is left unstored.
    """
    cls = TRACKS.get(name)
    tables = {spec.artifact for spec in cls.tables}
    return sorted(tables | (set(listed) & (set(cls.artifacts) | tables)))


#: Layer stacks in display order: a bare index (``""``), then encoder, then decoder (others follow by name).
STACK_ORDER: tuple[str, ...] = ("", "encoder", "decoder")
_LAYER = re.compile(r"^(?:(?P<stack>[A-Za-z_][A-Za-z0-9_]*)\.)?(?P<index>\d+)$")


def order_key(value: str, preferred: Sequence[str]) -> tuple[int, str]:
    """Sort key putting the ``preferred`` values first, in their order, and any other value after, by name.

    Examples
    --------
    >>> sorted(["z", "b", "a", "y"], key=lambda v: order_key(v, ("b", "a")))
    ['b', 'a', 'y', 'z']
    """
    return (preferred.index(value), "") if value in preferred else (len(preferred), value)


def ordered_by(values: Iterable[str], preferred: Sequence[str]) -> list[str]:
    """Return the distinct ``values`` sorted by :func:`order_key`.

    Examples
    --------
    >>> ordered_by(["kekule", "zzz", "canonical", "kekule"], ("canonical", "kekule"))
    ['canonical', 'kekule', 'zzz']
    """
    return sorted(set(values), key=lambda v: order_key(v, preferred))


def parse_layer(label: str) -> tuple[str, int] | None:
    """Split a layer label (``encoder.K``, ``decoder.K``, a bare ``K``) into its stack and index.

    Returns ``None`` for ``last``, ``-`` and any label without an index (``decoder.last``).

    Examples
    --------
    >>> parse_layer("encoder.3"), parse_layer("7"), parse_layer("last")
    (('encoder', 3), ('', 7), None)
    """
    match = _LAYER.fullmatch(str(label))
    if match is None:
        return None
    return (match.group("stack") or "", int(match.group("index")))


def layer_sort_key(label: str) -> tuple[int, int, str, int, str]:
    """Sort key of a layer label: numbered layers first, numerically per stack, then ``last``, then the rest.

    Stacks follow :data:`STACK_ORDER` (bare index, ``encoder``, ``decoder``, others by name), so
    ``encoder.10`` follows ``encoder.2`` and ``10`` follows ``2``.

    Examples
    --------
    >>> sorted(["encoder.10", "last", "decoder.1", "encoder.2", "encoder.0"], key=layer_sort_key)
    ['encoder.0', 'encoder.2', 'encoder.10', 'decoder.1', 'last']
    >>> sorted(["10", "last", "2", "-", "decoder.last"], key=layer_sort_key)
    ['2', '10', 'last', '-', 'decoder.last']
    """
    text = str(label)
    parsed = parse_layer(text)
    if parsed is not None:
        stack, index = parsed
        return (0, *order_key(stack, STACK_ORDER), index, "")
    if text == "last":
        return (1, 0, "", 0, "")
    return (2, 0, "", 0, text)


def value_sort_key(dim: Dimension | None, value: str) -> tuple[int, tuple[object, ...]]:
    """Sort key of a dimension value: the declared order, numbered layers numerically, ``-`` last.

    In tables the headline layer ``last`` comes first, then the numbered layers (:func:`layer_sort_key`).

    Examples
    --------
    >>> layer = Dimension("layer", "hidden layer", numeric=True)
    >>> sorted(["encoder.10", "last", "encoder.2", "-", "decoder.1"], key=lambda v: value_sort_key(layer, v))
    ['last', 'encoder.2', 'encoder.10', 'decoder.1', '-']
    >>> subset = Dimension("subset", "pairs", values=("non_trivial", "all"))
    >>> sorted(["all", "non_trivial"], key=lambda v: value_sort_key(subset, v))
    ['non_trivial', 'all']
    """
    if value == "-":
        return (3, ())
    if value == "last":
        return (-1, ())
    if dim is not None and dim.numeric:
        return (0, layer_sort_key(value))
    if dim is not None and value in dim.values:
        return (1, (dim.values.index(value),))
    return (2, (value,))


def ordered(dim: Dimension | None, values: Iterable[str]) -> list[str]:
    """``values`` (deduplicated) in display order, see :func:`value_sort_key`."""
    return sorted(set(values), key=lambda v: value_sort_key(dim, v))
