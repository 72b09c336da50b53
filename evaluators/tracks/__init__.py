"""Tracks (SPEC §4) and their registry; the benchmark version that keys every result.

Registers (one module each): ``amore``. A track declares the adapter capability it needs (``embed`` or
``generate``), a ``version`` bumped whenever its data handling, prompts or metrics change, and a
``definition()`` — the data that, with the data set's content hash, determines its results. Invariant:
deterministic given (data, seed, code version).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from evaluators.adapters import Adapter
from evaluators.datasets import LoadedDataset
from evaluators.registry import Registry

TRACKS: Registry[type[Track]] = Registry("track", __name__)


@dataclass(frozen=True, slots=True)
class TrackOptions:
    """Run options that change results (part of the benchmark version) or only speed (not part of it)."""

    seed: int = 0
    limit: int | None = None
    distances: tuple[str, ...] = ("l2", "cosine", "inner_product", "hnsw")


class Track(ABC):
    """A benchmark track: runs an adapter over a data set and returns metric rows and counts."""

    name: ClassVar[str]
    version: ClassVar[int]
    capability: ClassVar[str]
    main_metric: ClassVar[str]
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""

    def __init__(self, options: TrackOptions) -> None:
        self.options = options

    @abstractmethod
    def definition(self) -> dict[str, Any]:
        """Everything besides data and seed that determines results (augmentations, metrics …)."""

    @abstractmethod
    def run(
        self, adapter: Adapter, dataset: LoadedDataset, *, out_dir: Path, log: Callable[[str], None]
    ) -> dict[str, Any]:
        """Evaluate ``adapter`` on ``dataset``; write per-item artifacts to ``out_dir``.

        Returns
        -------
        dict
            At least ``metrics`` (long rows) and ``counts``; merged into ``result.json``.
        """


def benchmark_version(track: str, options: TrackOptions, data_hash: str) -> str:
    """Hash of the data, the track's definition and code version, and the seed (16 hex characters).

    Results are keyed by it: any change to what is measured gives a new version, nothing else does.
    """
    cls = TRACKS.get(track)
    payload = {
        "track": track,
        "track_version": cls.version,
        "definition": cls(options).definition(),
        "data": data_hash,
        "seed": options.seed,
        "limit": options.limit,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
