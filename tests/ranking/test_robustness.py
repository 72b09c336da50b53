"""Tests for leaderboard/ranking/robustness.py: robust skill, its interval and the invariance profile.

The number must mean what its label says: no degenerate answerer (constant, random, absurd) has robust
skill, a model's value is recomputed here by brute force from ``results.csv.gz`` with code of its own, and
the interval resamples the same per-item values as the rank intervals.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leaderboard.ranking.boards import BOARDS, board_tracks
from leaderboard.ranking.robustness import (
    RULES,
    invariance_profile,
    robust_skill,
    robust_skill_intervals,
    skill,
)
from leaderboard.site.exports import read_results

REPO_ROOT = Path(__file__).resolve().parents[2]
EMBEDDING = board_tracks(next(s for s in BOARDS if s.name == "embedding"))
GENERATIVE = board_tracks(next(s for s in BOARDS if s.name == "generative"))


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    frame = read_results(REPO_ROOT / "site")
    frame["value"] = pd.to_numeric(frame["value"])
    return frame


def _as(results: pd.DataFrame, source: str, new_id: str, values: dict[str, float]) -> pd.DataFrame:
    """``source``'s rows renamed ``new_id``, each metric of ``values`` set to the value given."""
    rows = results.loc[results["submission"] == source].copy()
    rows["submission"] = new_id
    for metric, value in values.items():
        rows.loc[rows["metric"] == metric, "value"] = value
    return rows


def _constant_embedding(results: pd.DataFrame, value: float = 0.5) -> pd.DataFrame:
    """What a constant embedding gets: every match tied (a miss), chance ROC-AUC, the training mean's RMSE."""
    rows = _as(results, "minilm-l6-text", "constant", {"acc_at_1": 0.0, "roc_auc": value})
    base = rows.loc[rows["metric"] == "baseline_rmse"].set_index("dataset")["value"]
    rmse = rows["metric"] == "rmse"
    rows.loc[rmse, "value"] = rows.loc[rmse, "dataset"].map(base).to_numpy()
    return rows


def test_a_constant_embedding_has_no_robust_skill(committed: pd.DataFrame) -> None:
    results = pd.concat([committed, _constant_embedding(committed)], ignore_index=True)
    got = robust_skill(results, EMBEDDING)
    assert got.at["constant", "robust_skill"] == 0.0
    # Without the chance correction (ROC-AUC taken as a skill) the constant would keep half a point.
    assert got.at["minilm-l6-text", "robust_skill"] > 0.2


def test_an_absurd_answerer_is_not_below_zero_and_offsets_nothing(committed: pd.DataFrame) -> None:
    # Worse than chance everywhere: inverted ROC-AUC, RMSE far above the training mean's.
    absurd = _as(committed, "minilm-l6-text", "absurd", {"acc_at_1": 0.0, "roc_auc": 0.1, "rmse": 1e6})
    got = robust_skill(pd.concat([committed, absurd], ignore_index=True), EMBEDDING)
    assert got.at["absurd", "robust_skill"] == 0.0  # clipped: no skill, never negative
    # Anti-correlated downstream answers cannot pull a track with skill below what its AMORE part has.
    mixed = _as(committed, "minilm-l6-text", "mixed", {"roc_auc": 0.0, "rmse": 1e6})
    got = robust_skill(pd.concat([committed, mixed], ignore_index=True), EMBEDDING)
    assert got.at["mixed", "downstream"] == 0.0
    assert got.at["mixed", "robust_skill"] == pytest.approx(got.at["minilm-l6-text", "amore"] / 2)


def test_the_committed_degenerate_references_have_none_and_the_tool_user_most(committed) -> None:
    gen = robust_skill(committed, GENERATIVE)
    assert gen.at["constant-baseline", "robust_skill"] == 0.0
    assert gen["robust_skill"].idxmax() == "rdkit-opsin-tools"
    # The label copier answers no rewritten question (T5 only): it has no robust skill to show, not 0.
    assert "copy-source-label" not in gen.dropna().index
    emb = robust_skill(committed, EMBEDDING)
    assert emb["robust_skill"].idxmax() == "morgan-fingerprint-reference"


def _brute_force(results: pd.DataFrame, sub: str) -> float:
    """The embedding board's robust skill of ``sub`` from the definition, row by row."""
    rows = results.loc[results["submission"] == sub]
    amore = [
        max(0.0, min(1.0, float(r.value)))
        for r in rows.itertuples()
        if r.track == "amore" and r.metric == "acc_at_1" and r.layer == "last" and r.distance == "l2"
        and r.direction == "original_to_augmented" and r.subset == "non_trivial"
    ]  # fmt: skip
    base = {
        r.dataset: float(r.value)
        for r in results.itertuples()
        if r.track == "downstream" and r.metric == "baseline_rmse" and r.variant == "original"
    }
    down = []
    for r in rows.itertuples():
        if r.track == "downstream" and r.variant == "worst" and r.metric in ("rmse", "roc_auc"):
            s = 2 * float(r.value) - 1 if r.metric == "roc_auc" else 1 - float(r.value) / base[r.dataset]
            down.append(max(0.0, min(1.0, s)))
    return (sum(amore) / len(amore) + sum(down) / len(down)) / 2


def test_robust_skill_equals_a_brute_force_recomputation(committed: pd.DataFrame) -> None:
    got = robust_skill(committed, EMBEDDING)
    for sub in ("minilm-l6-text", "rxnfp-bert-ft", "char-ngram-baseline", "morgan-fingerprint-reference"):
        assert got.at[sub, "robust_skill"] == pytest.approx(_brute_force(committed, sub), abs=1e-12)


def test_skill_transforms_are_the_definitions() -> None:
    assert skill(np.array([0.5, 0.75, 1.0, 0.2]), "two_class").tolist() == [0.0, 0.5, 1.0, 0.0]
    assert skill(np.array([1.0, 0.5, 3.0]), "rmse", 2.0).tolist() == [0.5, 0.75, 0.0]
    assert np.isnan(skill(np.array([np.nan]), "identity")).all()
    assert set(RULES) == {"amore", "downstream", "consistency", "prompt_robustness"}


def _amore_results(values: dict[str, float]) -> pd.DataFrame:
    rows = []
    for sub, v in values.items():
        for aug in ("kekule", "random_order"):
            rows.append({"submission": sub, "track": "amore", "dataset": "toy", "augmentation": aug,
                         "layer": "last", "distance": "l2", "direction": "original_to_augmented",
                         "subset": "non_trivial", "metric": "acc_at_1", "value": v})  # fmt: skip
    return pd.DataFrame(rows)


def _amore_items(hits: dict[str, list[float]]) -> pd.DataFrame:
    rows = [
        {"submission": sub, "criterion": f"amore/toy/{aug}/acc_at_1", "item": f"m{i}", "value": v}
        for sub, vs in hits.items()
        for aug in ("kekule", "random_order")
        for i, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_the_interval_resamples_molecules_and_is_seeded() -> None:
    hits = {"steady": [1.0] * 40, "coin": [1.0, 0.0] * 20}
    results = _amore_results({"steady": 1.0, "coin": 0.5})
    iv = robust_skill_intervals(results, _amore_items(hits), ["amore"], seed=3, n_boot=400)
    assert iv.at["steady", "lo"] == iv.at["steady", "hi"] == 1.0  # nothing to resample
    lo, hi = iv.at["coin", "lo"], iv.at["coin", "hi"]
    assert lo < 0.5 < hi and hi - lo > 0.1  # a 20-of-40 proportion is uncertain by about ±0.13
    again = robust_skill_intervals(results, _amore_items(hits), ["amore"], seed=3, n_boot=400)
    pd.testing.assert_frame_equal(iv, again)


def test_invariance_profile_has_one_bar_per_family(committed: pd.DataFrame) -> None:
    prof = invariance_profile(committed, "minilm-l6-text", EMBEDDING).set_index("family")
    families = ["original", "canonical", "explicit_h", "kekule", "ring_renumber", "random_order"]
    assert list(prof.index) == families
    assert prof.at["canonical", "tracks"] == "amore"  # downstream has no canonical test set
    assert prof.at["kekule", "tracks"] == "amore, downstream"
    # The canonical bar is the mean of AMORE's canonical Acc@1 over its data sets, by hand.
    rows = committed.loc[
        (committed["submission"] == "minilm-l6-text") & (committed["track"] == "amore")
        & (committed["metric"] == "acc_at_1") & (committed["augmentation"] == "canonical")
        & (committed["layer"] == "last") & (committed["distance"] == "l2")
        & (committed["direction"] == "original_to_augmented") & (committed["subset"] == "non_trivial")
    ]  # fmt: skip
    assert prof.at["canonical", "skill"] == pytest.approx(rows["value"].mean())
    gen = invariance_profile(committed, "rdkit-opsin-tools", GENERATIVE).set_index("family")
    assert {"iupac", "random_order", "smiles", "wording"} <= set(gen.index)
    assert gen["skill"].between(0, 1).all()


def test_every_consistency_pair_counts_for_the_family_of_its_second_writing() -> None:
    """T3's pairs (SMILES ↔ name, randomized SMILES, SELFIES, InChI) feed the profile's notation bars."""
    from leaderboard.ranking.robustness import FAMILIES
    from leaderboard.tracks import track

    pairs = track("consistency").dimension("pair").values
    expected = {"smiles-iupac": "iupac", "smiles-randomized": "random_order", "smiles-selfies": "selfies",
                "smiles-inchi": "inchi"}  # fmt: skip
    assert set(pairs) == set(expected)
    for pair in pairs:
        for metric in ("kappa_consistency", "numeric_agreement"):
            rule = RULES["consistency"](("freesolv", "formula", pair), metric)
            assert rule is not None and rule.family == expected[pair] and rule.family in FAMILIES
