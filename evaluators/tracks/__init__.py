"""Tracks (SPEC §4) and their registry; the benchmark version that keys every result.

Registers one package per track (``amore``, ``downstream``, ``consistency``, ``prompt_robustness``,
``identity_blinded``; found by the registry, each ``evaluators/tracks/<name>/``): the package holds
everything of that track that runs in the box or is pure science, and imports no other track. A track
owns its whole path, declared in one place, its class:

- what it needs and is: ``capability`` (``embed`` or ``generate``), ``version`` (bumped whenever its data
  handling, prompts or metrics change), ``description``, ``citation``;
- what it returns: ``dimensions`` (the axes of its result rows), ``metrics`` (names in
  :data:`evaluators.metrics.METRICS`, which hold directions and bounds), ``tables`` (per-item tables the
  site shows, written as artifacts), ``artifacts`` (the other files the host may store, each at most
  ``artifact_max_bytes``);
- how it is ranked: ``headline`` (criteria families; the track's criteria share a weight of 1);
- how it runs: :meth:`Track.run` inside the container and, optionally, :meth:`Track.score` on the host,
  with data the container never sees.

The host's store, exports, ranking and site iterate over :data:`TRACKS` and read only these declarations.
Invariant: deterministic given (data, seed, code version).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from evaluators.adapters import Adapter
from evaluators.datasets import DatasetSpec, LoadedDataset
from evaluators.metrics import METRICS
from evaluators.registry import Registry
from evaluators.schema import Criterion, Dimension, MetricSpec, TableSpec, TrackOptions, TrackResult

TRACKS: Registry[type[Track]] = Registry("track", __name__)
Progress = Callable[[str, int, int], None]


def no_progress(stage: str, done: int, total: int) -> None:
    """Ignore a progress report (the default when nobody follows the run)."""
    del stage, done, total


# Every embedding track checks what the adapter returned the same way before it measures anything.


class EmbeddingError(RuntimeError):
    """The model returned embeddings of the wrong shape or with NaN/inf values."""


def check_embeddings(layers: dict[str, np.ndarray], n: int) -> None:
    """Raise :class:`EmbeddingError` unless every layer is a finite ``(n, d)`` array and ``last`` is there."""
    if "last" not in layers:
        raise EmbeddingError(f"the adapter returned layers {sorted(layers)} without 'last'")
    for label, array in layers.items():
        if not isinstance(array, np.ndarray) or array.ndim != 2 or array.shape[0] != n or array.shape[1] < 1:
            shape = getattr(array, "shape", type(array).__name__)
            raise EmbeddingError(f"layer {label!r}: expected an array of shape ({n}, d), got {shape}")
        bad = ~np.isfinite(array).all(axis=1)
        if bad.any():
            raise EmbeddingError(f"layer {label!r}: {int(bad.sum())} of {n} embeddings contain NaN or inf")


class Track(ABC):
    """A benchmark track: runs an adapter over a data set and returns metric rows and counts.

    Subclasses set the class attributes below and implement :meth:`definition` and :meth:`run`; a track
    that scores on the host also overrides :meth:`score`.
    """

    name: ClassVar[str]
    version: ClassVar[int]
    capability: ClassVar[str]
    main_metric: ClassVar[str]
    description: ClassVar[str] = ""
    citation: ClassVar[str] = ""
    #: Axes of the result rows, in order (every row has exactly these keys plus ``metric``, ``value``).
    dimensions: ClassVar[tuple[Dimension, ...]] = ()
    #: Metrics the track may report (names in :data:`evaluators.metrics.METRICS`).
    metrics: ClassVar[tuple[str, ...]] = ()
    #: Headline criteria families for the overall ranking.
    headline: ClassVar[tuple[Criterion, ...]] = ()
    #: Per-item tables the site shows (written by :meth:`run` as artifacts).
    tables: ClassVar[tuple[TableSpec, ...]] = ()
    #: Files besides ``result.json`` the host may store from ``/out`` when :meth:`run` lists them in the
    #: result's ``artifacts`` (the tables' artifacts are stored anyway); any other file is left unstored.
    artifacts: ClassVar[tuple[str, ...]] = ()
    #: Largest size in bytes of each stored artifact; a run that writes a larger one is refused.
    artifact_max_bytes: ClassVar[int] = 256 * 1024**2

    def __init__(self, options: TrackOptions) -> None:
        self.options = options

    @classmethod
    def metric_specs(cls) -> dict[str, MetricSpec]:
        """Return the declared metrics with their directions and bounds, from the metric registry."""
        return {name: METRICS.get(name) for name in cls.metrics}

    @classmethod
    def dimension(cls, name: str) -> Dimension:
        """Return the declared dimension called ``name``."""
        for dim in cls.dimensions:
            if dim.name == name:
                return dim
        raise KeyError(
            f"track {cls.name!r} has no dimension {name!r}; it has {[d.name for d in cls.dimensions]}"
        )

    @classmethod
    def accepts(cls, dataset: DatasetSpec) -> bool:
        """Whether this track runs on ``dataset``: by default, when the data set lists the track.

        A data set declares the tracks its content serves (``DatasetSpec.tracks``: molecules for retrieval,
        names and properties for consistency); a track that runs on any set of molecules overrides this.
        """
        return cls.name in dataset.tracks

    @classmethod
    def parse_result(cls, obj: Any) -> TrackResult:
        """Check a ``result.json`` document against this track's declarations (see :class:`TrackResult`)."""
        return TrackResult.from_json(obj, dimensions=cls.dimensions, metrics=cls.metric_specs())

    #: Whether the model takes images too (:attr:`evaluators.schema.ModelConfig.images`): a track with image
    #: questions asks them only then, and its :meth:`definition` says so (a text-only model's is unchanged).
    images: bool = False

    @classmethod
    def for_model(cls, options: TrackOptions, *, chat: bool = False, images: bool = False) -> Track:
        """Return the track as it runs for one model, with ``options``.

        ``chat``: a chat model or an API; ``images``: it takes images too. Tracks that ask nothing of
        either ignore them.
        """
        del chat
        track = cls(options)
        track.images = bool(images)
        return track

    @classmethod
    def container_view(
        cls,
        dataset: str,
        records: list[dict[str, str]],
        options: TrackOptions,
        *,
        chat: bool = False,
        images: bool = False,
    ) -> list[dict[str, str]] | None:
        """Return the rows the container gets instead of the data set's files, or ``None`` (the files).

        A track whose labels must never reach the model (T2 fits its probes on the host) returns label-free
        rows with at least ``id`` and ``smiles``; the host writes them as ``/data/<set>/view.csv``
        (:mod:`evaluators.datasets.views`) and :meth:`run` receives them as ``dataset.records``. ``records``
        are the set's records (:func:`evaluators.datasets.load_records`, already limited by ``options.limit``)
        of data set ``dataset``. Must be deterministic: the view's hash is checked inside the container.
        ``chat`` tells a generative track that the model is a chat model or an API
        (:mod:`evaluators.asking.protocol`), ``images`` that it takes images (:attr:`images`); other tracks
        ignore them.
        """
        del dataset, records, options, chat, images
        return None

    #: Whether the container gets :meth:`container_view`'s label-free rows instead of the set's files.
    withholds_labels: ClassVar[bool] = False
    #: Columns of the view file, in order (when :meth:`container_view` returns rows).
    view_columns: ClassVar[tuple[str, ...]] = ("id", "smiles")

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Host-side scoring: turn the run's raw outputs in ``out_dir`` into metric rows.

        Runs on the host after the container finished, with the host's copy of the data set in
        ``data_dir`` (where reference answers may live that the container never sees). The default keeps
        the container's rows. An override returns a new :class:`TrackResult` (``dataclasses.replace``)
        whose rows are checked against the declarations again before they are stored.
        """
        del out_dir, data_dir
        return result

    @abstractmethod
    def definition(self) -> dict[str, Any]:
        """Everything besides data and seed that determines results (augmentations, metrics …)."""

    @abstractmethod
    def run(
        self,
        adapter: Adapter,
        dataset: LoadedDataset,
        *,
        out_dir: Path,
        log: Callable[[str], None],
        progress: Progress = no_progress,
    ) -> dict[str, Any]:
        """Evaluate ``adapter`` on ``dataset``; write per-item artifacts to ``out_dir``.

        Parameters
        ----------
        adapter : Adapter
            The loaded model.
        dataset : LoadedDataset
            The data set's valid molecules.
        out_dir : pathlib.Path
            Where artifacts go (``/out``).
        log : callable
            Human-readable progress messages.
        progress : callable
            ``progress(stage, done, total)``: structured progress the host shows live.

        Returns
        -------
        dict
            ``rows`` (long rows: the declared dimensions, ``metric``, ``value``), ``counts``, and
            optionally ``details`` (JSON blocks for the site), ``artifacts`` (file names) and ``timing``.
        """


def benchmark_version(track: str, options: TrackOptions, data_hash: str, *, images: bool = False) -> str:
    """Hash of the data, the track's definition and code version, and the seed (16 hex characters).

    Results are keyed by it: any change to what is measured gives a new version, nothing else does.
    ``images``: the model takes images (:attr:`Track.images`); the definition is the one it is asked, so a
    text-only model's version does not move when a track adds image questions.
    """
    cls = TRACKS.get(track)
    payload = {
        "track": track,
        "track_version": cls.version,
        "definition": cls.for_model(options, images=images).definition(),
        "data": data_hash,
        "seed": options.seed,
        "limit": options.limit,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
