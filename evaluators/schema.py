"""The typed contract between the host and the container: what is asked, what comes back.

Both worlds import this module and nothing else to talk to each other: the host builds a :class:`Job`
and writes ``job.json``; the container parses the same type (:meth:`Job.from_json`), runs the track and
writes ``result.json`` as a :class:`TrackResult`; the host parses that file back through
:meth:`TrackResult.from_json`, which checks every row against the track's declarations
(:class:`Dimension`, :class:`MetricSpec`). A track's declarations — its result dimensions, metrics with
directions and bounds, headline criteria and exported tables — are the types of
:mod:`evaluators.declarations`, re-exported here, so the host can read them without importing anything
heavy.

Invariants: standard library only (no numpy, no torch); every type is frozen; JSON in and out is strict —
an unknown key, a missing key, a wrong type or a value outside a metric's bounds raises
:class:`SchemaError` naming the place, never a silent default. ``result.json`` is written by submission
code and is therefore hostile: parsing never trusts its sizes, labels or numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from evaluators.declarations import (
    LABEL,
    NAME,
    Criterion,
    Dimension,
    MetricSpec,
    SchemaError,
    TableSpec,
    clip,
)

__all__ = [
    "LABEL", "NAME", "MAX_ROWS", "SCHEMA_VERSION", "Criterion", "Dimension", "Job", "MetricKey",
    "MetricRow", "MetricSpec", "ModelConfig", "SchemaError", "TableSpec", "TrackOptions", "TrackResult",
    "clip", "parse_rows",
]  # fmt: skip

#: Version of ``job.json`` and ``result.json``; bumped whenever either shape changes.
SCHEMA_VERSION = 2

#: The most rows one result may hold (AMORE on 4 distances × 2 directions × 2 subsets × 13 layers × 5
#: augmentations is about 10 k; the cap keeps a hostile result from exhausting the host).
MAX_ROWS = 500_000


def _require_keys(obj: Any, where: str, required: Iterable[str], optional: Iterable[str] = ()) -> None:
    if not isinstance(obj, Mapping):
        raise SchemaError(f"{where} must be an object, got {type(obj).__name__}")
    required, optional = set(required), set(optional)
    missing = sorted(required - set(obj))
    if missing:
        raise SchemaError(f"{where} lacks {missing}")
    unknown = sorted(set(obj) - required - optional)
    if unknown:
        raise SchemaError(f"{where} has unknown key(s) {[clip(k) for k in unknown[:5]]}")


def _typed(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = obj[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise SchemaError(f"{where}.{key} must be {kind}, got a boolean")
    if not isinstance(value, kind):
        raise SchemaError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return value


# --------------------------------------------------------------------------------------------
# The job: what the host asks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TrackOptions:
    """Run options that change results (part of the benchmark version).

    Attributes
    ----------
    seed : int
        Seed of every randomised step (augmentations, sampling), per item.
    limit : int or None
        Evaluate only the first ``limit`` molecules (tests, smoke runs).
    distances : tuple of str
        Distances of the retrieval tracks.
    """

    seed: int = 0
    limit: int | None = None
    distances: tuple[str, ...] = ("l2", "cosine", "inner_product", "hnsw")

    def to_json(self) -> dict[str, Any]:
        """JSON form (lists for tuples)."""
        return {"seed": self.seed, "limit": self.limit, "distances": list(self.distances)}

    @classmethod
    def from_json(cls, obj: Any, where: str = "job.options") -> TrackOptions:
        """Parse the JSON form strictly."""
        _require_keys(obj, where, (), ("seed", "limit", "distances"))
        seed = obj.get("seed", 0)
        limit = obj.get("limit")
        distances = obj.get("distances", list(cls().distances))
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise SchemaError(f"{where}.seed must be an integer")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise SchemaError(f"{where}.limit must be a positive integer or null")
        if not isinstance(distances, list) or not all(isinstance(d, str) for d in distances):
            raise SchemaError(f"{where}.distances must be a list of names")
        return cls(seed=seed, limit=limit, distances=tuple(distances))

    def preview(self) -> str:
        """Name the options that make a run with these options a preview, never a board result.

        The board is defined by the default options (every molecule, seed 0, every distance): a run with
        any other value measures something else, so it is shown locally and never merged into the record.

        Returns
        -------
        str
            The options that differ from the defaults, as a maintainer would recognise them (``--limit 3``,
            ``seed 7``, ``distances l2``), joined by ``, ``; empty for a run the board takes.

        Examples
        --------
        >>> TrackOptions().preview()
        ''
        >>> TrackOptions(limit=3, seed=7).preview()
        '--limit 3, seed 7'
        """
        board = TrackOptions()
        parts = [f"--limit {self.limit}"] if self.limit != board.limit else []
        if self.seed != board.seed:
            parts.append(f"seed {self.seed}")
        if self.distances != board.distances:
            parts.append(f"distances {' '.join(self.distances) or '(none)'}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """How to load and call a model; built from the submission manifest by the host.

    Attributes
    ----------
    adapter : str
        Registered adapter name.
    path : pathlib.Path or None
        Folder with weights/tokenizer (prefetched by the host, mounted read-only), if any. In
        ``job.json`` it is relative to the models folder (``"."`` or ``null``).
    submission_dir : pathlib.Path
        The submission's folder (custom code lives there); set by the container, not by the job.
    architecture : str
        ``encoder``, ``decoder``, ``encoder-decoder`` or ``non-neural``.
    pooling : str
        ``mean`` (over the attention mask, special tokens included), ``cls``, ``last_token`` or
        ``mean_no_special``.
    max_length : int
        Tokens kept per input; longer inputs are truncated and counted.
    prompt_prefix : str
        Text prepended to every input string.
    trust_remote_code : bool
        Passed to ``transformers``; the host only sets it when a maintainer allowed it.
    batch_size : int
        Strings per forward pass.
    options : dict
        Adapter-specific options from the manifest.
    code : dict or None
        ``{"file": ..., "object": ...}`` for the ``custom`` adapter.
    chat_template : bool
        Generative tracks: wrap each prompt as a user message with the tokenizer's chat template.
    pre_tokenizer : str
        ``""`` (the folder's own tokenizer) or a key of
        :data:`evaluators.adapters.smiles_tokens.PRE_TOKENIZERS` (a SMILES regex over ``vocab.txt``).
    images : bool
        The model takes images as well as text (the manifest's ``model.inputs`` lists ``image``): generative
        tracks ask it their image questions (:attr:`evaluators.adapters.GenerationRequest.images`); a
        text-only model is not asked them (not applicable, never scored as wrong).
    """

    adapter: str
    path: Path | None = None
    submission_dir: Path = Path("/submission")
    architecture: str = "encoder"
    pooling: str = "mean"
    max_length: int = 512
    prompt_prefix: str = ""
    trust_remote_code: bool = False
    batch_size: int = 64
    options: dict[str, Any] = field(default_factory=dict)
    code: dict[str, str] | None = None
    chat_template: bool = False
    pre_tokenizer: str = ""
    images: bool = False

    def to_json(self) -> dict[str, Any]:
        """JSON form for ``job.json`` (``submission_dir`` is the container's business, left out)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "submission_dir"}
        out["path"] = None if self.path is None else str(self.path)
        out["options"] = dict(self.options)
        out["code"] = dict(self.code) if self.code is not None else None
        return out

    @classmethod
    def from_json(cls, obj: Any, *, models_dir: Path, submission_dir: Path) -> ModelConfig:
        """Parse ``job.model``; ``path`` is resolved under ``models_dir``."""
        names = [f.name for f in fields(cls) if f.name != "submission_dir"]
        _require_keys(obj, "job.model", ("adapter",), names)
        for key, kind in (
            ("adapter", str), ("architecture", str), ("pooling", str), ("max_length", int),
            ("prompt_prefix", str), ("trust_remote_code", bool), ("batch_size", int), ("options", dict),
            ("chat_template", bool), ("pre_tokenizer", str), ("images", bool),
        ):  # fmt: skip
            if key in obj:
                _typed(obj, key, kind, "job.model")
        code = obj.get("code")
        if code is not None and not (
            isinstance(code, dict) and all(isinstance(v, str) for v in code.values())
        ):
            raise SchemaError("job.model.code must be an object of strings or null")
        path = obj.get("path")
        if path is not None and (
            not isinstance(path, str) or Path(path).is_absolute() or ".." in Path(path).parts
        ):
            raise SchemaError("job.model.path must be a relative path inside the models folder, or null")
        kwargs = {k: obj[k] for k in names if k in obj and k != "path"}
        return cls(**kwargs, path=(models_dir / path) if path else None, submission_dir=submission_dir)


@dataclass(frozen=True, slots=True)
class DataView:
    """The label-free view of a data set a job gets instead of the set's files.

    Attributes
    ----------
    sha256 : str
        Hex sha256 of the view file (``/data/<set>/view.csv``) the host wrote.
    data_hash : str
        The content hash of the data set's real files, computed by the host (it keys the result).
    """

    sha256: str
    data_hash: str

    def to_json(self) -> dict[str, str]:
        """JSON form (the ``data_view`` object of ``job.json``)."""
        return {"sha256": self.sha256, "data_hash": self.data_hash}

    @classmethod
    def from_json(cls, obj: Any) -> DataView:
        """Parse ``job.data_view`` strictly: two 64-hex-digit strings."""
        _require_keys(obj, "job.data_view", ("sha256", "data_hash"))
        for key in ("sha256", "data_hash"):
            _typed(obj, key, str, "job.data_view")
            if not re.fullmatch(r"[0-9a-f]{64}", obj[key]):
                raise SchemaError(f"job.data_view.{key} must be 64 lowercase hex digits")
        return cls(sha256=obj["sha256"], data_hash=obj["data_hash"])


@dataclass(frozen=True, slots=True)
class Job:
    """One evaluation the host asks for: a submission's model on one track and one data set.

    Attributes
    ----------
    submission_id, track, dataset : str
        What is evaluated.
    benchmark_version : str
        The version the host computed from the data it prepared; the container recomputes it from the
        files it sees and refuses to run on a mismatch.
    options : TrackOptions
        Seed, limit and track settings.
    model : ModelConfig
        How to load the model (``path`` relative to the models folder).
    plugins : tuple of str
        Modules to import before looking the track up, for tracks registered outside
        ``evaluators.tracks`` (a plug-in package installed in the image, or test code in-process).
    data_view : DataView, optional
        Set when the track sees a label-free view of the data set rather than its files
        (:meth:`evaluators.tracks.Track.container_view`): the container checks the view against it and
        cannot recompute the benchmark version from files it never gets.
    """

    submission_id: str
    track: str
    dataset: str
    benchmark_version: str
    options: TrackOptions
    model: ModelConfig
    plugins: tuple[str, ...] = ()
    data_view: DataView | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON form of ``job.json``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "submission_id": self.submission_id,
            "track": self.track,
            "dataset": self.dataset,
            "benchmark_version": self.benchmark_version,
            "options": self.options.to_json(),
            "model": self.model.to_json(),
            "plugins": list(self.plugins),
            **({"data_view": self.data_view.to_json()} if self.data_view is not None else {}),
        }

    @classmethod
    def from_json(cls, obj: Any, *, models_dir: Path, submission_dir: Path) -> Job:
        """Parse ``job.json`` strictly; raise :class:`SchemaError` on any deviation."""
        keys = (
            "schema_version",
            "submission_id",
            "track",
            "dataset",
            "benchmark_version",
            "options",
            "model",
        )
        _require_keys(obj, "job", keys, ("plugins", "data_view"))
        if obj["schema_version"] != SCHEMA_VERSION:
            raise SchemaError(f"job schema_version {clip(obj['schema_version'])}, expected {SCHEMA_VERSION}")
        for key in keys[1:5]:
            _typed(obj, key, str, "job")
        plugins = obj.get("plugins", [])
        if not isinstance(plugins, list) or not all(
            isinstance(p, str) and re.fullmatch(r"[A-Za-z_][\w.]*", p) for p in plugins
        ):
            raise SchemaError("job.plugins must be a list of module names")
        return cls(
            submission_id=obj["submission_id"],
            track=obj["track"],
            dataset=obj["dataset"],
            benchmark_version=obj["benchmark_version"],
            options=TrackOptions.from_json(obj["options"]),
            model=ModelConfig.from_json(obj["model"], models_dir=models_dir, submission_dir=submission_dir),
            plugins=tuple(plugins),
            data_view=DataView.from_json(obj["data_view"]) if "data_view" in obj else None,
        )


# --------------------------------------------------------------------------------------------
# The result: what comes back
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetricKey:
    """Where a number lives: track, data set, the track's own dimensions, metric.

    Examples
    --------
    >>> key = MetricKey("amore", "chebi20", (("augmentation", "kekule"), ("layer", "-")), "n_pairs")
    >>> key.mlflow_name()
    'amore/n_pairs/kekule'
    """

    track: str
    dataset: str
    dims: tuple[tuple[str, str], ...]
    metric: str

    def mlflow_name(self) -> str:
        """MLflow metric name: ``track/metric/<dimension values>`` without ``-`` (the data set is a tag)."""
        return "/".join([self.track, self.metric, *(v for _, v in self.dims if v not in ("", "-"))])


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One number of a result: its dimension values (in the track's order), metric and value."""

    dims: tuple[tuple[str, str], ...]
    metric: str
    value: float

    def to_json(self) -> dict[str, Any]:
        """Flat JSON form: ``{<dimension>: value, …, "metric": …, "value": …}``."""
        return {**dict(self.dims), "metric": self.metric, "value": self.value}


@dataclass(frozen=True, slots=True)
class TrackResult:
    """What one run returns (``result.json``).

    Attributes
    ----------
    submission_id, track, dataset : str
        What was evaluated.
    track_version : int
        The track's code version.
    data_hash, benchmark_version : str
        Content hash of the data and the benchmark version the run computed (must equal the job's).
    seed : int
        The seed used.
    rows : tuple of MetricRow
        Every number, in long form, keyed by the track's dimensions.
    counts : dict
        Counts the track reports (molecules, pairs, truncations …), JSON.
    artifacts : tuple of str
        Files the run wrote in ``/out`` besides ``result.json``.
    details : dict
        Track-specific JSON blocks shown on the site (curves, excluded pairs, examples …).
    model, environment, timing : dict
        The adapter's self-description, package versions, seconds per stage.
    skipped_molecules : tuple of dict
        Input molecules skipped as invalid, with the reason.
    """

    submission_id: str
    track: str
    track_version: int
    dataset: str
    data_hash: str
    benchmark_version: str
    seed: int
    rows: tuple[MetricRow, ...]
    counts: dict[str, Any] = field(default_factory=dict)
    artifacts: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    timing: dict[str, Any] = field(default_factory=dict)
    skipped_molecules: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """JSON form of ``result.json``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "submission_id": self.submission_id,
            "track": self.track,
            "track_version": self.track_version,
            "dataset": self.dataset,
            "data_hash": self.data_hash,
            "benchmark_version": self.benchmark_version,
            "seed": self.seed,
            "rows": [r.to_json() for r in self.rows],
            "counts": self.counts,
            "artifacts": list(self.artifacts),
            "details": self.details,
            "model": self.model,
            "environment": self.environment,
            "timing": self.timing,
            "skipped_molecules": list(self.skipped_molecules),
        }

    def keys(self) -> list[MetricKey]:
        """Return the :class:`MetricKey` of every row, in row order."""
        return [MetricKey(self.track, self.dataset, r.dims, r.metric) for r in self.rows]

    @classmethod
    def from_json(
        cls,
        obj: Any,
        *,
        dimensions: Sequence[Dimension],
        metrics: Mapping[str, MetricSpec],
    ) -> TrackResult:
        """Parse and check a ``result.json`` document against a track's declarations.

        Parameters
        ----------
        obj : object
            The parsed JSON (from a possibly hostile run).
        dimensions : sequence of Dimension
            The track's result dimensions, in order: every row has exactly these keys plus ``metric``
            and ``value``.
        metrics : mapping of str to MetricSpec
            The metrics the track may report, with their bounds.

        Raises
        ------
        SchemaError
            On a missing or unknown key, a wrong type, a row with other dimensions, a label that is not
            a plain name or not an allowed value, an unknown metric, a repeated key, a non-finite value
            or one outside its metric's bounds, or more than :data:`MAX_ROWS` rows.
        """
        scalars = ("schema_version", "submission_id", "track", "track_version", "dataset", "data_hash",
                   "benchmark_version", "seed", "rows")  # fmt: skip
        blocks = ("counts", "artifacts", "details", "model", "environment", "timing", "skipped_molecules")
        _require_keys(obj, "result.json", scalars, blocks)
        if obj["schema_version"] != SCHEMA_VERSION:
            raise SchemaError(
                f"result.json has schema_version {clip(obj['schema_version'])}, expected {SCHEMA_VERSION}"
            )
        for key in ("submission_id", "track", "dataset", "data_hash", "benchmark_version"):
            if not isinstance(obj[key], str) or not LABEL.match(obj[key]):
                raise SchemaError(f"result.json: {key!r} must be a plain name, got {clip(obj[key])}")
        for key in ("track_version", "seed"):
            _typed(obj, key, int, "result.json")
        for key, kind in (("counts", dict), ("details", dict), ("model", dict), ("environment", dict),
                          ("timing", dict), ("artifacts", list), ("skipped_molecules", list)):  # fmt: skip
            if key in obj and not isinstance(obj[key], kind):
                raise SchemaError(f"result.json: {key!r} must be a {'mapping' if kind is dict else 'list'}")
        artifacts = obj.get("artifacts", [])
        if not all(isinstance(a, str) and LABEL.match(a) for a in artifacts):
            raise SchemaError("result.json: 'artifacts' must be a list of plain file names")
        skipped = obj.get("skipped_molecules", [])
        if not all(isinstance(s, dict) for s in skipped):
            raise SchemaError("result.json: 'skipped_molecules' must be a list of objects")
        rows = parse_rows(obj["rows"], dimensions=dimensions, metrics=metrics)
        return cls(
            submission_id=obj["submission_id"],
            track=obj["track"],
            track_version=obj["track_version"],
            dataset=obj["dataset"],
            data_hash=obj["data_hash"],
            benchmark_version=obj["benchmark_version"],
            seed=obj["seed"],
            rows=rows,
            counts=obj.get("counts", {}),
            artifacts=tuple(artifacts),
            details=obj.get("details", {}),
            model=obj.get("model", {}),
            environment=obj.get("environment", {}),
            timing=obj.get("timing", {}),
            skipped_molecules=tuple(skipped),
        )


def parse_rows(
    rows: Any, *, dimensions: Sequence[Dimension], metrics: Mapping[str, MetricSpec]
) -> tuple[MetricRow, ...]:
    """Check long-form metric rows against a track's dimensions and metrics (:meth:`TrackResult.from_json`).

    Examples
    --------
    >>> dims = [Dimension("subset", "which pairs", values=("all", "non_trivial"))]
    >>> acc = {"acc": MetricSpec("acc", True, "Acc", "accuracy", low=0.0, high=1.0)}
    >>> parse_rows([{"subset": "all", "metric": "acc", "value": 0.5}], dimensions=dims, metrics=acc)
    (MetricRow(dims=(('subset', 'all'),), metric='acc', value=0.5),)
    >>> parse_rows([{"subset": "all", "metric": "acc", "value": 2}], dimensions=dims, metrics=acc)
    Traceback (most recent call last):
    ...
    evaluators.declarations.SchemaError: row 1: acc must be a value in [0, 1], got 2
    """
    if not isinstance(rows, list):
        raise SchemaError("result.json: 'rows' must be a list")
    if len(rows) > MAX_ROWS:
        raise SchemaError(f"result.json holds {len(rows)} rows, more than the {MAX_ROWS} allowed")
    names = [d.name for d in dimensions]
    expected = {*names, "metric", "value"}
    seen: set[tuple[str, ...]] = set()
    out: list[MetricRow] = []
    for number, row in enumerate(rows, 1):
        where = f"row {number}"
        if not isinstance(row, dict) or set(row) != expected:
            got = sorted(map(clip, row)) if isinstance(row, dict) else type(row).__name__
            raise SchemaError(f"malformed metric {where}: expected keys {sorted(expected)}, got {got}")
        values = tuple(d.check(row[d.name], where) for d in dimensions)
        metric = row["metric"]
        spec = metrics.get(metric) if isinstance(metric, str) else None
        if spec is None:
            raise SchemaError(f"{where}: unknown metric {clip(metric)}; the track reports {sorted(metrics)}")
        key = (*values, metric)
        if key in seen:
            raise SchemaError(f"{where} repeats {'/'.join(key)}")
        seen.add(key)
        out.append(MetricRow(tuple(zip(names, values, strict=True)), metric, spec.check(row["value"], where)))
    return tuple(out)
