"""Tests of leaderboard.site.intervals.concat_items: tracks' per-item tables stacked without string copies."""

from __future__ import annotations

import numpy as np
import pandas as pd

from leaderboard.ranking.uncertainty import rank_intervals
from leaderboard.site.intervals import concat_items


def _track(name: str, systems: list[str], n: int, *, seed: int, parts: bool) -> pd.DataFrame:
    """A track's per-item table: categorical text columns in reverse order, optional template parts."""
    rng = np.random.default_rng(seed)
    rows = []
    for s, skill in zip(systems, np.linspace(0.8, 0.3, len(systems)), strict=True):
        for t in ("t1", "t2") if parts else ("",):
            for i in range(n):
                value = float(rng.random() < skill)
                rows.append((s, f"{name}/set-{name}/task/x", f"set-{name}", f"mol{i:03d}", t, value))
    frame = pd.DataFrame(rows, columns=["submission", "criterion", "dataset", "item", "part", "value"])
    if parts:
        frame["combine"] = "min"
    else:
        frame = frame.drop(columns="part")
    for col in frame.columns.drop("value"):
        values = sorted(frame[col].unique(), reverse=True)  # categories not in string order
        frame[col] = pd.Categorical(frame[col], categories=values)
    return frame


def test_stacked_tables_rank_as_the_plain_concatenation() -> None:
    """Categoricals over the union of values (not Python strings), missing columns read as "", and the
    same rank intervals as ``pandas.concat`` of the tables as text."""
    systems = ["m1", "m2", "m3", "m4"]
    frames = [_track("a", systems, 30, seed=1, parts=False), _track("b", systems[1:], 25, seed=2, parts=True)]
    stacked = concat_items(frames)
    assert len(stacked) == sum(len(f) for f in frames)
    for col in ("submission", "criterion", "dataset", "item", "part", "combine"):
        assert isinstance(stacked[col].dtype, pd.CategoricalDtype), col
    assert set(stacked["part"].iloc[: len(frames[0])]) == {""}  # track a has no parts
    text = [f.astype({c: str for c in f.columns.drop("value")}) for f in frames]
    plain = pd.concat(text, ignore_index=True)
    plain[["part", "combine"]] = plain[["part", "combine"]].fillna("")
    for col in plain.columns.drop("value"):
        assert stacked[col].astype(str).tolist() == plain[col].tolist(), col
    pd.testing.assert_frame_equal(
        rank_intervals(stacked, seed=3, n_boot=200), rank_intervals(plain, seed=3, n_boot=200)
    )


def test_one_table_is_returned_as_it_is() -> None:
    frame = _track("a", ["m1", "m2"], 5, seed=0, parts=False)
    assert concat_items([frame]) is frame
