"""No label hides in how a T2 set is written or kept (issue 29): the leak test of every ranked set.

Shortcut classifiers that see only the writing (Kekulé form, explicit hydrogens, stereo marks) or the
bookkeeping (the id, the row position) of the rows the container gets must not predict the label on the
test part (:mod:`evaluators.datasets.leaks`). The files as DeepChem distributes them fail it (measured here,
so the detector is shown to work on the real leaks); the track's view passes it, and the track refuses a
view that would not.
"""

from __future__ import annotations

import pytest

from evaluators.datasets import load_records
from evaluators.datasets.leaks import ShortcutError, ShortcutReport, check_no_shortcut, shortcut_aucs
from evaluators.schema import TrackOptions
from evaluators.tracks.downstream import DOWNSTREAM_TASKS, DownstreamTrack
from evaluators.tracks.downstream.splits import scaffold_split
from evaluators.tracks.downstream.view import leak_report

#: The shortcut each file as written carries (measured: test ROC-AUC of that shortcut alone).
RAW_LEAKS = {"bbbp": ("position", 0.9), "bace": ("position", 0.9), "clintox": ("kekule", 0.9)}


@pytest.mark.parametrize("dataset", sorted(DOWNSTREAM_TASKS))
def test_no_writing_or_bookkeeping_shortcut_predicts_the_label_in_the_view(benchmark_data, dataset) -> None:
    field, kind = DOWNSTREAM_TASKS[dataset]
    rows = DownstreamTrack.view_rows(dataset, load_records(dataset, benchmark_data(dataset)), TrackOptions())
    report = leak_report(rows, field, kind)
    check_no_shortcut(dataset, report)  # raises with the figure
    assert report.bound <= 0.70 and report.n_test > 100, report


@pytest.mark.parametrize("dataset", sorted(RAW_LEAKS))
def test_the_files_as_written_leak_and_are_refused(benchmark_data, dataset) -> None:
    """The files' own strings, row ids and order (what the view was before the fix) are refused."""
    field, kind = DOWNSTREAM_TASKS[dataset]
    records = load_records(dataset, benchmark_data(dataset))
    splits = scaffold_split([r["smiles"] for r in records], fractions=(0.8, 0.0, 0.2))
    report = shortcut_aucs(records, [float(r[field]) for r in records], splits, kind=kind)
    name, floor = RAW_LEAKS[dataset]
    assert report.aucs[name] > floor, report
    with pytest.raises(ShortcutError, match=rf"data set '{dataset}'.*test ROC-AUC"):
        check_no_shortcut(dataset, report)


def test_the_track_refuses_a_view_written_as_the_file_is(benchmark_data, monkeypatch) -> None:
    """Without the one-notation rewrite ClinTox's Kekulé leak reaches the container: the view is refused."""
    import evaluators.tracks.downstream.view as view

    records = load_records("clintox", benchmark_data("clintox"))
    monkeypatch.setattr(view, "one_notation", lambda smiles: smiles)
    view._cached.cache_clear()
    try:
        with pytest.raises(ShortcutError, match="kekule alone predicts the label"):
            DownstreamTrack.container_view("clintox", records, TrackOptions(seed=1))
    finally:
        view._cached.cache_clear()


def test_a_small_test_set_is_held_to_chances_band_not_to_the_bare_bound() -> None:
    check_no_shortcut("toy", ShortcutReport({"id": 0.65}, 0.70, 40))
    with pytest.raises(ShortcutError):
        check_no_shortcut("toy", ShortcutReport({"id": 0.75}, 0.70, 40))
