"""Display order of the site's labels: augmentations, layer stacks and layer labels.

- :func:`parse_layer` splits a layer label (``encoder.K``, ``decoder.K``, a bare ``K``) into its stack and
  index.
- :func:`layer_sort_key` orders layer labels numerically within each stack (``encoder.10`` after
  ``encoder.2``), encoder before decoder, then ``last``, then any other label.
- :func:`order_key` / :func:`ordered` put known values in a preferred order (e.g.
  :data:`AUGMENTATION_ORDER`) and any other value after them, by name.

Everything here is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = [
    "AUGMENTATION_ORDER",
    "STACK_ORDER",
    "layer_sort_key",
    "order_key",
    "ordered",
    "parse_layer",
]

#: AMORE augmentations in display order (others follow by name).
AUGMENTATION_ORDER: tuple[str, ...] = ("canonical", "explicit_h", "kekule", "ring_renumber", "random_order")
#: Layer stacks in display order: a bare index (``""``), then encoder, then decoder (others follow by name).
STACK_ORDER: tuple[str, ...] = ("", "encoder", "decoder")

_LAYER = re.compile(r"^(?:(?P<stack>[A-Za-z_][A-Za-z0-9_]*)\.)?(?P<index>\d+)$")


def order_key(value: str, preferred: Sequence[str]) -> tuple[int, str]:
    """Sort key putting the ``preferred`` values first, in their order, and any other value after, by name.

    Parameters
    ----------
    value : str
        The value to place.
    preferred : sequence of str
        Known values in display order.

    Returns
    -------
    tuple of (int, str)
        ``(position in preferred, "")`` for a known value, ``(len(preferred), value)`` otherwise.

    Examples
    --------
    >>> sorted(["z", "b", "a", "y"], key=lambda v: order_key(v, ("b", "a")))
    ['b', 'a', 'y', 'z']
    """
    return (preferred.index(value), "") if value in preferred else (len(preferred), value)


def ordered(values: Iterable[str], preferred: Sequence[str]) -> list[str]:
    """Return the distinct ``values`` sorted by :func:`order_key`.

    Parameters
    ----------
    values : iterable of str
        Values, possibly repeated.
    preferred : sequence of str
        Known values in display order.

    Returns
    -------
    list of str
        Each value once: the preferred ones in their order, then the others by name.

    Examples
    --------
    >>> ordered(["kekule", "zzz", "canonical", "kekule"], AUGMENTATION_ORDER)
    ['canonical', 'kekule', 'zzz']
    """
    return sorted(set(values), key=lambda v: order_key(v, preferred))


def parse_layer(label: str) -> tuple[str, int] | None:
    """Split a layer label into its stack and index.

    Parameters
    ----------
    label : str
        Layer label as in the results: ``encoder.K``, ``decoder.K``, a bare index ``K``, ``last``
        or ``-`` (pair counts).

    Returns
    -------
    tuple of (str, int) or None
        ``(stack, K)`` with stack ``""`` for a bare index; ``None`` for ``last``, ``-`` and any
        label without an index (e.g. ``decoder.last``).

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

    Parameters
    ----------
    label : str
        Layer label (:func:`parse_layer`); a non-string (an integer layer column) is read as ``str(label)``.

    Returns
    -------
    tuple
        Numbered layers come first, grouped by stack in :data:`STACK_ORDER` (bare index, ``encoder``,
        ``decoder``, then other stacks by name) and ordered by their index as a number, so
        ``encoder.10`` follows ``encoder.2`` and ``10`` follows ``2``. ``last`` comes next, then any
        other label (``decoder.last``, ``-``) by name.

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
