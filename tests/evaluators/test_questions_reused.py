"""An evaluation builds each run's questions once: the container's view and the scoring share them.

Building T4's questions takes ~19 s per data set and the host did it twice per run, for every model
(issue 36: 5 × 2 × 19 s of a first run's 26 minutes).
"""

from __future__ import annotations

from evaluators.asking.reuse import questions_reused
from evaluators.schema import TrackOptions
from evaluators.tracks.consistency import ConsistencyTrack
from leaderboard.execution.limits import ScoringLimits, call_limited

RECORDS = [{"id": "1", "smiles": "CCO", "iupac": "ethanol"}]


def _counted(track: ConsistencyTrack, builds: list[int]) -> ConsistencyTrack:
    def keyed_questions(records):
        builds.append(len(records))
        return []

    track.keyed_questions = keyed_questions  # the count, not the content, is under test
    return track


def _builds_in_child(track: ConsistencyTrack, builds: list[int]) -> int:
    track.questions(RECORDS)
    return len(builds)


def test_outside_an_evaluation_every_call_builds():
    builds: list[int] = []
    track = _counted(ConsistencyTrack(TrackOptions()), builds)
    track.questions(RECORDS)
    track.questions(RECORDS)
    assert len(builds) == 2


def test_inside_one_evaluation_the_same_run_is_built_once_and_the_scoring_child_reuses_it():
    builds: list[int] = []
    track = _counted(ConsistencyTrack(TrackOptions()), builds)
    with questions_reused():
        first = track.questions(RECORDS)
        again = track.questions(RECORDS)
        assert len(builds) == 1 and first == again and first is not again
        # The scoring runs in a forked child under limits: it sees what the view built.
        assert call_limited(_builds_in_child, track, builds, limits=ScoringLimits(wall_s=60)) == 1
        # Another model's run of the same track and records: the same questions, not built again.
        other = _counted(ConsistencyTrack(TrackOptions()), builds)
        other.questions(RECORDS)
        assert len(builds) == 1
    track.questions(RECORDS)  # the evaluation is over: nothing is held
    assert len(builds) == 2


def test_anything_the_questions_depend_on_builds_them_anew():
    builds: list[int] = []
    with questions_reused():
        _counted(ConsistencyTrack(TrackOptions()), builds).questions(RECORDS)
        _counted(ConsistencyTrack(TrackOptions(seed=1)), builds).questions(RECORDS)  # another seed
        _counted(ConsistencyTrack.for_model(TrackOptions(), chat=True), builds).questions(RECORDS)  # chat
        _counted(ConsistencyTrack(TrackOptions()), builds).questions([{**RECORDS[0], "iupac": "x"}])
        assert len(builds) == 4
