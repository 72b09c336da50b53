"""Issue 34 point 2: does AMORE predict captioning? Spearman across rewrites, checked independently.

ρ against SciPy's ``spearmanr``; the exact p-value against SciPy's exact permutation test (every pairing);
the points read from the board's long results (only the headline AMORE setting, only ChEBI-20, only models
with both tracks); the finding sentence follows the numbers; a hostile model name is escaped.
"""

from __future__ import annotations

import itertools
import math
import random

import pandas as pd
import pytest
from scipy import stats

from leaderboard.site.extensions.amore.captioning_link import (
    DATASET,
    PAPER_RHO,
    USABLE_ROUGE1,
    link_lines,
    linked_points,
    spearman,
)
from leaderboard.site.sitedata import SiteData
from tests.site import _builders as b

REWRITES = ("canonical", "explicit_h", "kekule", "random_order", "ring_renumber")


@pytest.mark.parametrize("seed", range(12))
def test_rho_and_its_exact_p_are_scipys(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(3, 7)
    x = [rng.choice([0.1, 0.2, 0.5, 0.9, rng.random()]) for _ in range(n)]  # ties on purpose
    y = [rng.random() for _ in range(n)]
    mine = spearman(x, y)
    assert mine.exact and mine.n == n
    if len(set(x)) < 2:
        assert math.isnan(mine.rho)
        return
    assert mine.rho == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    # The exact p by brute force with SciPy's ρ: every pairing of y with x.
    observed = abs(stats.spearmanr(x, y).statistic)
    pairings = list(itertools.permutations(y))
    hits = sum(abs(stats.spearmanr(x, list(p)).statistic) >= observed - 1e-12 for p in pairings)
    assert mine.p == pytest.approx(hits / len(pairings), abs=1e-12)


def test_a_perfect_order_of_five_has_the_smallest_exact_p() -> None:
    found = spearman([0.9, 0.7, 0.5, 0.3, 0.1], [5, 4, 3, 2, 1])
    assert found.rho == pytest.approx(1.0) and found.p == pytest.approx(2 / 120)  # ±1 of 5! pairings
    pooled = spearman(list(range(15)), [v + 0.1 * (-1) ** v for v in range(15)])
    assert not pooled.exact and pooled.rho > 0.99 and 0 < pooled.p < 0.001


Points = dict[str, tuple[list[float], list[float], list[float]]]


def _results(models: Points, extra: list[dict], original: dict[str, float] | None = None) -> pd.DataFrame:
    rows = list(extra)
    for sub, (acc, rouge, meteor) in models.items():
        for i, aug in enumerate(REWRITES):
            rows.append(b.amore_row(sub, DATASET, aug, "last", "l2", "original_to_augmented", "non_trivial",
                                    "acc_at_1", acc[i]))  # fmt: skip
            # Another AMORE setting and another data set: never read.
            rows.append(b.amore_row(sub, DATASET, aug, "last", "cosine", "original_to_augmented",
                                    "non_trivial", "acc_at_1", 1 - acc[i]))  # fmt: skip
            rows.append(b.amore_row(sub, "datamol-default", aug, "last", "l2", "original_to_augmented",
                                    "non_trivial", "acc_at_1", 0.0))  # fmt: skip
            for metric, values in (("rouge1", rouge), ("meteor", meteor), ("rouge1_drop", rouge)):
                rows.append({"submission": sub, "track": "captioning", "dataset": DATASET,
                             "augmentation": aug, "metric": metric, "value": values[i]})  # fmt: skip
        rows.append({"submission": sub, "track": "captioning", "dataset": DATASET, "augmentation": "original",
                     "metric": "rouge1", "value": (original or {}).get(sub, 0.5)})  # fmt: skip
    return b.frame(rows)


def test_the_points_are_the_headline_acc_and_the_caption_scores_of_models_with_both() -> None:
    acc, rouge = [0.9, 0.2, 0.8, 0.5, 0.95], [0.40, 0.10, 0.35, 0.30, 0.41]
    meteor = [0.3, 0.1, 0.2, 0.25, 0.31]
    only_amore = b.amore_row("embedder", DATASET, "kekule", "last", "l2", "original_to_augmented",
                             "non_trivial", "acc_at_1", 0.5)  # fmt: skip
    data = SiteData(_results({"both": (acc, rouge, meteor)}, [only_amore]), [], {}, {})
    points = linked_points(data)
    assert list(points) == ["both"]
    assert [(r, a, s["rouge1"], s["meteor"]) for r, a, s in points["both"]] == sorted(
        zip(REWRITES, acc, rouge, meteor, strict=True))


def test_the_page_gives_each_model_the_pool_and_a_finding_that_follows_the_numbers() -> None:
    up = [0.9, 0.2, 0.8, 0.5, 0.95]
    models = {"agrees": (up, [0.4, 0.1, 0.35, 0.3, 0.41], [0.3, 0.05, 0.2, 0.25, 0.31]),
              "<b>x</b>|": (up, [0.4, 0.1, 0.35, 0.3, 0.41], [0.3, 0.05, 0.2, 0.25, 0.31])}  # fmt: skip
    data = SiteData(_results(models, []), [], {}, {})
    text = "\n".join(link_lines(data))
    assert "<b>x</b>" not in text and "pooled: the 2 models with usable captions" in text
    assert "reproduces the paper's claim" in text and f"ρ > {PAPER_RHO}" in text
    against = {"disagrees": (up, [0.1, 0.4, 0.2, 0.3, 0.05], [0.1, 0.4, 0.2, 0.3, 0.05])}
    text = "\n".join(link_lines(SiteData(_results(against, []), [], {}, {})))
    assert "does not reproduce" in text and "-1.00" in text
    # One model's page: its own row, no pool, no finding.
    mine = "\n".join(link_lines(data, "agrees"))
    assert "pooled" not in mine and "Finding" not in mine and "+1.00" in mine
    assert link_lines(data, "nobody") == []
    empty = "\n".join(link_lines(SiteData(b.frame([]), [], {}, {})))
    assert "No model has both" in empty


def test_models_that_write_no_caption_leave_the_claim_unchecked_and_say_why() -> None:
    # The T3-trained Chem-T5 references on the board: no usable caption, ROUGE-1 0 on every rewrite.
    silent = {"silent": ([0.9, 0.2, 0.8, 0.5, 0.95], [0.0] * 5, [0.0] * 5)}
    text = "\n".join(link_lines(SiteData(_results(silent, [], {"silent": 0.0}), [], {}, {})))
    assert "cannot check the paper's claim yet" in text and "1 other model with both results" in text
    assert "reproduces" not in text and "(none usable)" in text


def test_only_models_with_usable_captions_enter_the_pool() -> None:
    """One captioner that agrees with AMORE, three that write noise (as the board's Chem-T5 answerers of T3):
    the pool is the captioner's five points; pooled with the noise, the claim would fail."""
    up = [0.9, 0.2, 0.8, 0.5, 0.95]
    models = {"captioner": (up, [0.4, 0.1, 0.35, 0.3, 0.41], [0.3, 0.05, 0.28, 0.25, 0.31])}
    for k, noise in enumerate(([0.004, 0.0, 0.001, 0.0, 0.003], [0.0, 0.002, 0.0, 0.004, 0.001],
                               [0.003, 0.004, 0.0, 0.0, 0.002])):  # fmt: skip
        models[f"silent{k}"] = ([0.95, 0.1, 0.85, 0.4, 0.9], noise, noise)
    original = {"captioner": 0.43, **{f"silent{k}": 0.001 for k in range(3)}}
    text = "\n".join(link_lines(SiteData(_results(models, [], original), [], {}, {})))
    pooled = next(line for line in text.splitlines() if "pooled" in line)
    assert "1 model with usable captions" in pooled and "| 5 |" in pooled and "+1.00" in pooled
    assert "reproduces the paper's claim" in text and "3 other models with both results" in text
    assert f"{USABLE_ROUGE1}" in text
    # Without the gate (every model usable), the same board pools 20 points and does not reproduce it.
    everyone = {sub: 0.5 for sub in original}
    ungated = "\n".join(link_lines(SiteData(_results(models, [], everyone), [], {}, {})))
    assert "pooled: the 4 models" in ungated and "does not reproduce" in ungated
