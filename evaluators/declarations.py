"""What a track declares: its metrics, result dimensions, headline criteria and per-item tables.

Frozen types read by both worlds: the container checks its own rows against them before writing
``result.json``; the host validates results, stores, ranks and renders pages from them. Standard library
only; no registry lives here (see :data:`evaluators.metrics.METRICS` and :data:`evaluators.tracks.TRACKS`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

#: A dimension value or label in a result: ``-`` (not applicable) or a short name.
LABEL = re.compile(r"^(-|[A-Za-z0-9][A-Za-z0-9_.:+-]{0,99})$")
#: A registry name (track, metric, dimension, table): snake_case.
NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class SchemaError(ValueError):
    """A job or result document does not match the contract; the message names the place."""


def clip(value: Any, limit: int = 100) -> str:
    """Return ``value`` as one printable line of at most ``limit`` characters (for error messages)."""
    text = repr(value) if not isinstance(value, str) else value
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A registered metric: direction, bounds and how to show it.

    Attributes
    ----------
    name : str
        Registry name (``acc_at_1``); names of counts start with ``n_``.
    higher_is_better : bool
        Direction, read by the ranking (a lower-is-better metric is negated there).
    label : str
        Short display label (``Acc@1``).
    description : str
        One sentence for the methodology page.
    low, high : float
        Closed interval of possible values; a value outside it makes the whole result invalid.
    integral : bool
        Whether values are whole numbers (counts).
    """

    name: str
    higher_is_better: bool
    label: str
    description: str
    low: float = -math.inf
    high: float = math.inf
    integral: bool = False

    def check(self, value: Any, where: str) -> float:
        """Return ``value`` as a float if this metric can take it, else raise :class:`SchemaError`."""
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SchemaError(f"{where}: {self.name} must be a finite number, got {clip(value)}")
        if not self.low <= value <= self.high or (self.integral and value != int(value)):
            kind = "a count" if self.integral else "a value"
            raise SchemaError(
                f"{where}: {self.name} must be {kind} in [{self.low:g}, {self.high:g}], got {value!r}"
            )
        return float(value)


@dataclass(frozen=True, slots=True)
class Dimension:
    """One axis of a track's results (``augmentation``, ``layer`` …).

    Attributes
    ----------
    name : str
        Column name in results and exports.
    description : str
        What the axis is, for the methodology page.
    values : tuple of str
        The allowed values in display order; empty for an open axis (any :data:`LABEL`, e.g. layer names).
    labels : tuple of (str, str)
        Display labels of values that need one (``("l2", "L2")``).
    numeric : bool
        Order values by their embedded numbers (``encoder.2`` before ``encoder.10``).
    """

    name: str
    description: str
    values: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    numeric: bool = False

    def check(self, value: Any, where: str) -> str:
        """Return ``value`` if it is allowed on this axis, else raise :class:`SchemaError`."""
        if not isinstance(value, str) or not LABEL.match(value):
            raise SchemaError(
                f"{where}: {self.name!r} must be '-' or a name of letters, digits and '_.:+-' (at most 100 "
                f"characters), got {clip(value)}"
            )
        if self.values and value != "-" and value not in self.values:
            raise SchemaError(f"{where}: {self.name!r} is {clip(value)}, not one of {list(self.values)}")
        return value

    def label(self, value: str) -> str:
        """Display label of ``value`` (the value itself when none is declared)."""
        return dict(self.labels).get(value, value)


@dataclass(frozen=True, slots=True)
class Criterion:
    """A family of headline criteria of a track, ranked by Vote'n'Rank (SPEC §5).

    The rows with ``metric`` whose dimensions equal ``where`` form one criterion per data set and per
    value of the dimensions in ``per`` (``chebi20/kekule``). A track's criteria share its weight of 1.

    Attributes
    ----------
    metric : str
        The metric ranked.
    where : tuple of (str, str)
        The fixed setting (``(("layer", "last"), ("distance", "l2"), …)``).
    per : tuple of str
        Dimensions that vary across criteria besides the data set. A dimension fixed by ``where`` may be
        named too, which puts its value into the criterion's name: the way two families of one metric in
        different settings (T5's C1 and C2) get distinct criteria.
    label : str
        What the criterion measures, in words (the overview's column group).
    flat : tuple of (str, str)
        Criteria of this family that are not ranked, each ``(criterion, reason)`` with ``criterion`` the
        name ``<dataset>/<per values>``: those on which an honest but imperfect answerer cannot be told from
        a degenerate one (``tests/validity``), e.g. a yes/no question whose truth is "yes" for every
        molecule of the set. They are still reported; the methodology page lists them with the reason.
    """

    metric: str
    where: tuple[tuple[str, str], ...]
    per: tuple[str, ...]
    label: str
    flat: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A per-item table a track writes for the site (per-molecule ranks, curves …).

    Attributes
    ----------
    name : str
        Export name (``item_ranks``); the site writes it to ``site/data/<file>``.
    file : str
        Export file name under ``site/data/`` (``.csv`` or ``.csv.gz``).
    columns : tuple of str
        Columns of the table in the run's artifact, besides the key columns the host adds
        (``submission``, ``track``, ``dataset``).
    description : str
        What a row is, for the downloads page.
    artifact : str
        File the container writes in ``/out`` (a ``.csv`` or ``.csv.gz`` with a header row).
    where : tuple of (str, str)
        Rows kept in the export (``()``: every row); says what the export holds.
    numeric : tuple of str
        Columns parsed as numbers.
    added : tuple of str
        Columns of ``columns`` added after the board first recorded the table: a recorded table without
        one reads it as empty (nothing stored is lost), and they are not part of a row's key.
    """

    name: str
    file: str
    columns: tuple[str, ...]
    description: str
    artifact: str
    where: tuple[tuple[str, str], ...] = ()
    numeric: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
