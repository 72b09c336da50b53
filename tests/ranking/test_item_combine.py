"""The ``root``, ``worst_drop`` and ``worst_drop_root`` combine methods (RMSE, ROC-AUC, worst degradation)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking.item_table import (
    COMBINE_METHODS,
    PartLayout,
    combine_parts,
    point_table,
    point_values,
    prepare_items,
)
from leaderboard.ranking.uncertainty import rank_intervals

COLUMNS = ["submission", "criterion", "item", "value", "part", "combine"]
RMSE = "T2/d/probe/rmse"
RMSE_DROP = "T2/d/probe/rmse_drop"
AUC_DROP = "T2/d/probe/auc_drop"
VARIANTS = ("canonical", "kekule", "original")

try:  # the independent references; sklearn is not a dependency of the project
    from sklearn.metrics import mean_squared_error, roc_auc_score
except ImportError:  # pragma: no cover - depends on the environment

    def mean_squared_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
        """Mean squared error."""
        return float(np.mean((np.asarray(y_true) - np.asarray(y_pred)) ** 2))

    def roc_auc_score(y_true: np.ndarray, y_score: np.ndarray) -> float:
        """ROC-AUC as the Mann-Whitney statistic from mid-ranks (ties count one half)."""
        y_true = np.asarray(y_true, dtype=bool)
        ranks = pd.Series(y_score).rank(method="average").to_numpy()
        n_pos, n_neg = int(y_true.sum()), int((~y_true).sum())
        return float((ranks[y_true].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _rmse(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.sqrt(mean_squared_error(y_true, y_pred)))


def _placements(y_true: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong placement values: per positive, the share of negatives scored lower (ties 1/2); per
    negative, the share of positives scored higher (ties 1/2). Both means equal the AUC."""
    pos, neg = score[y_true == 1], score[y_true == 0]
    pos_place = ((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean(axis=1)
    neg_place = ((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])).mean(axis=0)
    return pos_place, neg_place


def _regression(rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    """Targets and the predictions of two systems on each variant (``good`` degrades less)."""
    y = rng.normal(size=n)
    noise = {"good": {"original": 0.3, "kekule": 0.35, "canonical": 0.32},
             "bad": {"original": 0.5, "kekule": 0.9, "canonical": 0.6}}  # fmt: skip
    preds = {s: {v: y + rng.normal(scale=sd, size=n) for v, sd in by_v.items()} for s, by_v in noise.items()}
    return y, preds


def _classification(rng: np.random.Generator, n: int) -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    """Labels and the scores of two systems on each variant, rounded so that some scores tie."""
    y = np.arange(n) % 3 == 0
    shift = {"good": {"original": 1.5, "kekule": 1.4, "canonical": 1.45},
             "bad": {"original": 1.0, "kekule": 0.2, "canonical": 0.8}}  # fmt: skip
    scores = {
        s: {v: np.round(rng.normal(size=n) + d * y, 1) for v, d in by_v.items()} for s, by_v in shift.items()
    }
    return y.astype(int), scores


def _squared_error_rows(
    system: str, criterion: str, how: str, y: np.ndarray, pred: dict[str, np.ndarray], variants=VARIANTS
) -> list[tuple]:
    """Rows of ``-(squared error)`` per item, one part per variant (the same item ids in each)."""
    return [
        (system, criterion, f"m{i:03d}", -float((pred[v][i] - y[i]) ** 2), v, how)
        for v in variants
        for i in range(len(y))
    ]


def _placement_rows(system: str, y: np.ndarray, scores: dict[str, np.ndarray]) -> list[tuple]:
    """Rows of DeLong placement values, parts ``"<variant>|pos"`` and ``"<variant>|neg"``."""
    rows = []
    ids = np.array([f"m{i:03d}" for i in range(len(y))])
    for v, score in scores.items():
        pos_place, neg_place = _placements(y, score)
        rows += [
            (system, AUC_DROP, i, float(p), f"{v}|pos", "worst_drop")
            for i, p in zip(ids[y == 1], pos_place, strict=True)
        ]
        rows += [
            (system, AUC_DROP, i, float(p), f"{v}|neg", "worst_drop")
            for i, p in zip(ids[y == 0], neg_place, strict=True)
        ]
    return rows


# --------------------------------------------------------------------------- point values


def test_methods_are_listed() -> None:
    assert set(COMBINE_METHODS) >= {"mean", "range", "root", "worst_drop", "worst_drop_root"}


def test_root_is_minus_rmse() -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=40)
    pred = {"a": y + rng.normal(scale=0.4, size=40), "b": y + rng.normal(scale=0.7, size=40)}
    rows = []
    for s, p in pred.items():
        # One part, and the same errors split over two parts of 20 items each: with parts of equal size
        # the mean of the part means is the mean over all items, so both are the RMSE.
        rows += [(s, RMSE, f"m{i:02d}", -float((p[i] - y[i]) ** 2), "all", "root") for i in range(40)]
        rows += [
            (s, "T2/d/probe/rmse_split", f"m{i:02d}", -float((p[i] - y[i]) ** 2), f"half{i // 20}", "root")
            for i in range(40)
        ]
    items = pd.DataFrame(rows, columns=COLUMNS)
    table = point_table(items)
    prep = prepare_items(items, None)
    np.testing.assert_array_equal(point_values(prep), table.to_numpy())
    for s, p in pred.items():
        expected = -_rmse(y, p)
        assert table.loc[s, RMSE] == pytest.approx(expected, abs=1e-11)
        assert table.loc[s, "T2/d/probe/rmse_split"] == pytest.approx(expected, abs=1e-11)
    assert table.loc["a", RMSE] > table.loc["b", RMSE]  # smaller error ranks higher


def test_worst_drop_root_is_minus_the_worst_rmse_increase() -> None:
    rng = np.random.default_rng(1)
    y, preds = _regression(rng, 50)
    rows = [r for s, p in preds.items() for r in _squared_error_rows(s, RMSE_DROP, "worst_drop_root", y, p)]
    table = point_table(pd.DataFrame(rows, columns=COLUMNS))
    for s, p in preds.items():
        rmse = {v: _rmse(y, p[v]) for v in VARIANTS}
        expected = -max(rmse[v] - rmse["original"] for v in ("kekule", "canonical"))
        assert table.loc[s, RMSE_DROP] == pytest.approx(expected, abs=1e-11)
    assert table.loc["good", RMSE_DROP] > table.loc["bad", RMSE_DROP]


def test_worst_drop_of_delong_placements_is_the_worst_auc_drop() -> None:
    rng = np.random.default_rng(2)
    y, scores = _classification(rng, 60)
    rows = [r for s, by_v in scores.items() for r in _placement_rows(s, y, by_v)]
    table = point_table(pd.DataFrame(rows, columns=COLUMNS))
    for s, by_v in scores.items():
        auc = {v: roc_auc_score(y, by_v[v]) for v in VARIANTS}
        # The placements are right: both of their means are the AUC.
        pos_place, neg_place = _placements(y, by_v["kekule"])
        assert pos_place.mean() == pytest.approx(auc["kekule"]) == neg_place.mean()
        expected = min(auc[v] - auc["original"] for v in ("kekule", "canonical"))
        assert expected != 0.0
        assert table.loc[s, AUC_DROP] == pytest.approx(expected, abs=1e-11)
    assert table.loc["good", AUC_DROP] > table.loc["bad", AUC_DROP]


def test_a_system_invariant_across_variants_drops_exactly_zero() -> None:
    rng = np.random.default_rng(3)
    y, preds = _regression(rng, 30)
    yc, scores = _classification(rng, 30)
    same_pred = {v: preds["good"]["original"] for v in VARIANTS}
    same_score = {v: scores["good"]["original"] for v in VARIANTS}
    rows = _squared_error_rows("same", RMSE_DROP, "worst_drop_root", y, same_pred)
    rows += _squared_error_rows("other", RMSE_DROP, "worst_drop_root", y, preds["bad"])
    rows += _placement_rows("same", yc, same_score) + _placement_rows("other", yc, scores["bad"])
    table = point_table(pd.DataFrame(rows, columns=COLUMNS))
    for criterion in (RMSE_DROP, AUC_DROP):
        value = table.loc["same", criterion]
        assert value == 0.0 and not np.signbit(value)
        assert table.loc["other", criterion] < 0.0


def test_combine_parts_edge_cases() -> None:
    nan = np.nan
    layout = PartLayout(
        criterion=np.array([0, 0, 1, 1, 1, 1, 2, 2, 2]),
        part=("t1", "t2", "kekule|neg", "kekule|pos", "original|neg", "original|pos", "a", "original", "z"),
        combine=("root", "worst_drop", "worst_drop_root"),
    )
    raw = np.array(
        [
            [
                # root of mean(-1, -3) = -2; kekule (0.5 + 0.7) / 2 vs original (0.8 + 0.8) / 2;
                # worst_drop_root: -sqrt(4) - -sqrt(1) = -1 and -sqrt(0.25) - -sqrt(1) = +0.5.
                [-1.0, -3.0, 0.5, 0.7, 0.8, 0.8, -4.0, -1.0, -0.25],
                # A positive mean counts as 0; a sub-part that is NaN is skipped; a variant that is NaN
                # does not count.
                [0.5, nan, nan, 0.7, 0.8, 0.6, nan, -1.0, -0.25],
                # NaN stays NaN; an original that is NaN gives NaN; no other variant with a value: NaN.
                [nan, nan, 0.5, 0.7, nan, nan, nan, -1.0, nan],
                # Every variant better than the original: a positive value.
                [-4.0, nan, 0.9, 0.9, 0.8, 0.8, -0.25, -1.0, -0.25],
            ]
        ]
    )
    out = combine_parts(raw, layout)[0]
    expected = [
        [-np.sqrt(2.0), -0.2, -1.0],
        [0.0, 0.0, 0.5],
        [nan, nan, nan],
        [-2.0, 0.1, 0.5],
    ]
    np.testing.assert_allclose(out, expected, atol=1e-12)
    assert not np.signbit(out[1, 0])  # the clipped root is +0.0
    np.testing.assert_array_equal(out, np.round(out, 12))


def test_variants_need_not_be_adjacent_in_sorted_part_order() -> None:
    # "kekule" < "kekule2|x" < "kekule|y" in sorted order: the variant "kekule" is split by "kekule2".
    layout = PartLayout(
        criterion=np.zeros(4, dtype=np.int64),
        part=("kekule", "kekule2|x", "kekule|y", "original"),
        combine=("worst_drop",),
    )
    out = combine_parts(np.array([[[0.2, 0.9, 0.4, 0.5]]]), layout)
    # kekule = mean(0.2, 0.4) = 0.3, kekule2 = 0.9: min(0.3, 0.9) - 0.5.
    assert out[0, 0, 0] == pytest.approx(-0.2)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("how", ["worst_drop", "worst_drop_root"])
@pytest.mark.parametrize(
    "parts", [("kekule", "canonical"), ("orig|pos", "kekule|pos"), ("originals", "kekule")]
)
def test_worst_drop_needs_an_original_part(how: str, parts: tuple[str, str]) -> None:
    items = pd.DataFrame(
        [("a", RMSE_DROP, "m1", -1.0, p, how) for p in parts] + [("a", RMSE, "m1", -1.0, "all", "root")],
        columns=COLUMNS,
    )
    with pytest.raises(ValueError, match=rf"{RMSE_DROP!r}.*reference part must be called 'original'"):
        prepare_items(items, None)
    with pytest.raises(ValueError, match="'original'"):
        PartLayout(criterion=np.zeros(2, dtype=np.int64), part=parts, combine=(how,))


@pytest.mark.parametrize("how", ["root", "worst_drop", "worst_drop_root"])
def test_new_methods_need_parts(how: str) -> None:
    items = pd.DataFrame([("a", RMSE, "m1", -1.0, None, how)], columns=COLUMNS)
    with pytest.raises(ValueError, match="have no 'part'"):
        prepare_items(items, None)


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_rank_intervals_with_probe_criteria() -> None:
    rng = np.random.default_rng(4)
    y, preds = _regression(rng, 60)
    yc, scores = _classification(rng, 60)
    rows = []
    for s in ("good", "bad"):
        rows += [
            (s, RMSE, f"m{i:03d}", -float((preds[s]["original"][i] - y[i]) ** 2), "original", "root")
            for i in range(len(y))
        ]
        rows += _squared_error_rows(s, RMSE_DROP, "worst_drop_root", y, preds[s])
        rows += _placement_rows(s, yc, scores[s])
    items = pd.DataFrame(rows, columns=COLUMNS)
    table = point_table(items)
    assert (table.loc["good"] > table.loc["bad"]).all()
    out = rank_intervals(items, seed=0, n_boot=50)
    assert list(out.index) == ["good", "bad"]
    assert out.loc["good", "rank"] == 1 and out.loc["bad", "rank"] == 2
    assert out.loc["good", "rank_hi"] <= out.loc["bad", "rank_lo"]
