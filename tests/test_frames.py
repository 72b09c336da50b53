"""Text columns as codes: each distinct value once, the same strings as a per-row conversion."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leaderboard.frames import recode, text_codes, text_values

rng = np.random.default_rng(7)
VALUES = ["b", "a", "", "c", "a", None, "b", 1, "1", float("nan")]


def _columns() -> list[pd.Series]:
    rows = [VALUES[i] for i in rng.integers(0, len(VALUES), 400)]
    objects = pd.Series(rows, dtype=object)
    strings = pd.Series([r for r in rows if isinstance(r, str)], dtype=object)
    unsorted = pd.Series(pd.Categorical(["z", "y", "x", "y"], categories=["z", "q", "y", "x"]))
    with_missing = pd.Series(pd.Categorical(["", None, "k", ""], categories=["k", ""]))
    return [objects, strings, strings.astype("category"), unsorted, with_missing,
            strings.astype("string"), pd.Series([], dtype=object)]  # fmt: skip


def _reference(column: pd.Series, missing: str) -> list[str]:
    return [missing if pd.isna(v) else str(v) for v in column.tolist()]


@pytest.mark.parametrize("sort", [False, True])
@pytest.mark.parametrize("missing", ["", "mean"])
@pytest.mark.parametrize("case", range(7))
def test_codes_stand_for_each_rows_string(case: int, missing: str, sort: bool) -> None:
    column = _columns()[case]
    codes, names = text_codes(column, missing=missing, sort=sort)
    assert [names[c] for c in codes.tolist()] == _reference(column, missing)
    assert len(set(names)) == len(names)  # 1 and "1", or a "" category and a missing "": one code
    if sort:  # the codes of factorizing the strings, sorted
        strings = pd.Series(_reference(column, missing), dtype=object)
        expected_codes, expected = pd.factorize(strings, sort=True)
        assert names == list(expected)
        assert codes.tolist() == expected_codes.tolist()


def test_recode_merges_equal_names_and_keeps_distinct_ones() -> None:
    codes, names = recode(np.array([0, 1, 2, 1]), ["x", "y", "x"])
    assert names == ["x", "y"] and codes.tolist() == [0, 1, 0, 1]
    same = np.array([2, 0])
    assert recode(same, ["a", "b", "c"])[0] is same
    codes, names = recode(np.array([2, 2, 0]), ["b", "unused", "a"], sort=True)
    assert names == ["a", "b"] and codes.tolist() == [0, 0, 1]


def test_values_convert_each_distinct_value_once() -> None:
    seen: list[str] = []

    def convert(value: str) -> str | None:
        seen.append(value)
        return None if value == "" else value.upper()

    column = pd.Series(["a", None, "b", "a"] * 50, dtype=object)
    out = text_values(column, convert)
    assert out.tolist() == ["A", None, "B", "A"] * 50
    assert sorted(seen) == ["", "a", "b"]
    assert text_values(pd.Series([], dtype=object)).tolist() == []
