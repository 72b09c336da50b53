"""Registry-wide checks (as mteb does for its models and tasks): every registered track, metric, data set,
augmentation and adapter declares what the rest of the system relies on, so a new plug-in that forgets a
declaration fails here rather than on the site or in a ranking."""

from __future__ import annotations

import re

import pytest

from evaluators.adapters import ADAPTERS
from evaluators.datasets import DATASETS
from evaluators.metrics import METRICS
from evaluators.notations.augmentations import AUGMENTATIONS
from evaluators.schema import LABEL, NAME
from evaluators.tracks import TRACKS, Track, TrackOptions, benchmark_version

CAPABILITIES = {"embed", "generate"}


@pytest.mark.parametrize("name", TRACKS.names())
def test_track_declares_its_whole_path(name: str) -> None:
    cls = TRACKS.get(name)
    assert issubclass(cls, Track) and cls.name == name and NAME.match(name)
    assert isinstance(cls.version, int) and cls.version >= 1
    assert cls.capability in CAPABILITIES
    assert cls.description and cls.citation
    assert cls.main_metric in cls.metrics
    dims = [d.name for d in cls.dimensions]
    assert dims and len(set(dims)) == len(dims), "dimension names must be unique"
    assert not {"submission", "track", "dataset", "metric", "value"} & set(dims), "reserved column names"
    for dim in cls.dimensions:
        assert NAME.match(dim.name) and dim.description
        assert all(LABEL.match(v) and v != "-" for v in dim.values)
        assert {v for v, _ in dim.labels} <= set(dim.values) or not dim.values
    for metric in cls.metrics:
        assert metric in METRICS, f"{name} reports unregistered metric {metric!r}"
    # A track without headline criteria is never ranked; it must say so to visitors (captioning, until
    # references calibrate its scores against a constant caption).
    assert cls.headline or "not ranked" in cls.description.lower(), "a track without criteria says so"
    for crit in cls.headline:
        assert crit.metric in cls.metrics and crit.label
        fixed = dict(crit.where)
        assert set(fixed) | set(crit.per) <= set(dims)
        # A fixed dimension may be named in ``per`` only to put its value into the criterion's name: when
        # several families of one metric differ only by their fixed setting (T5's conditions).
        same_metric = [c for c in cls.headline if c.metric == crit.metric]
        assert not set(fixed) & set(crit.per) or len(same_metric) > 1, (crit.metric, crit.per)
        for column, value in fixed.items():
            cls.dimension(column).check(value, "headline")
    names, files = set(), set()
    for table in cls.tables:
        assert NAME.match(table.name) and table.name not in names and table.file not in files
        assert re.fullmatch(r"[a-z0-9_]+\.csv(\.gz)?", table.file)
        assert re.fullmatch(r"[a-z0-9_]+\.csv(\.gz)?", table.artifact)
        assert set(dict(table.where)) <= set(table.columns) and set(table.numeric) <= set(table.columns)
        assert table.description
        names.add(table.name)
        files.add(table.file)


@pytest.mark.parametrize("name", TRACKS.names())
def test_track_definition_is_deterministic_and_versions_the_results(name: str) -> None:
    cls = TRACKS.get(name)
    first = benchmark_version(name, TrackOptions(), "0" * 64)
    assert first == benchmark_version(name, TrackOptions(), "0" * 64)
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert first != benchmark_version(name, TrackOptions(seed=1), "0" * 64)
    assert first != benchmark_version(name, TrackOptions(), "1" * 64)
    assert cls(TrackOptions()).definition() == cls(TrackOptions()).definition()


def test_amore_dimension_lists_every_registered_augmentation() -> None:
    # One home for the augmentation names: the registry; the track's dimension must cover it exactly.
    assert set(TRACKS.get("amore").dimension("augmentation").values) == set(AUGMENTATIONS.names())


@pytest.mark.parametrize("name", DATASETS.names())
def test_dataset_is_pinned_and_described(name: str) -> None:
    spec = DATASETS.get(name)
    assert spec.name == name and spec.files
    for f in spec.files:
        assert f.sha256 is not None and re.fullmatch(r"[0-9a-f]{64}", f.sha256), (
            f"{name}/{f.path} is not pinned"
        )
        assert f.url is None or f.url.startswith("https://")
    assert spec.description and spec.source and spec.license
    assert spec.tracks and set(spec.tracks) <= set(TRACKS.names())


@pytest.mark.parametrize("name", ADAPTERS.names())
def test_adapter_declares_capabilities(name: str) -> None:
    cls = ADAPTERS.get(name)
    assert cls.capabilities and set(cls.capabilities) <= CAPABILITIES
    assert cls.__doc__


@pytest.mark.parametrize("name", AUGMENTATIONS.names())
def test_augmentation_describes_itself(name: str) -> None:
    cls = AUGMENTATIONS.get(name)
    description = cls(seed=3).description
    assert description.name == name and description.seed == 3
    assert cls.summary.endswith("."), "the methodology page shows what the augmentation does"
