"""Issue 32 part 3: the AMORE page says whether the published models behave as the paper reports.

The finding's Acc@1 comes from the per-molecule ranks; it must equal the track's own Acc@1 on the board
(computed in the container, an independent path), and its verdict must follow the paired intervals: a
model as good as Morgan is not "below Morgan", a model that retrieves nothing is below it and not robust.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from leaderboard.site.extensions.amore import finding
from leaderboard.site.extensions.amore.finding import REFERENCE, agrees_with_paper, compare, finding_lines
from leaderboard.site.sitedata import SiteData, load_site_data
from tests.site import _builders as b

ROOT = Path(__file__).resolve().parents[2]


def test_the_finding_uses_the_boards_own_acc_at_1() -> None:
    data = load_site_data(ROOT / "site")
    found = compare(data)
    assert {s for s, _ in found} == set(finding.published_models(data)) & {s for s, _ in found}
    assert "minilm-l6-text" in {s for s, _ in found}
    res = data.results
    sel = res.loc[(res["track"] == "amore") & (res["metric"] == "acc_at_1") & (res["layer"] == "last")
                  & (res["distance"] == "l2") & (res["direction"] == "original_to_augmented")
                  & (res["subset"] == "non_trivial")]  # fmt: skip
    board = {(str(r.submission), str(r.dataset), str(r.augmentation)): float(r.value)
             for r in sel.itertuples()}  # fmt: skip
    checked = 0
    for (sub, dataset), diffs in found.items():
        for aug, d in diffs.items():
            assert d.mean_b == pytest.approx(board[(sub, dataset, aug)], abs=1e-9)
            assert d.mean_a == pytest.approx(board[(REFERENCE, dataset, aug)], abs=1e-9)
            checked += 1
    assert checked >= 15


def test_wilson_interval_by_hand() -> None:
    # The closed form (Wilson 1927), checked against values computed by hand for 0, n and a middle case.
    assert finding.wilson(0, 10)[0] == 0.0 and finding.wilson(10, 10)[1] == pytest.approx(1.0)
    lo, hi = finding.wilson(5, 10)
    assert lo == pytest.approx(0.236593, abs=1e-6) and hi == pytest.approx(0.763407, abs=1e-6)


def _ranks(sub: str, hits: list[bool]) -> list[dict]:
    return [{"submission": sub, "track": "amore", "dataset": "datamol-default", "augmentation": aug,
             "distance": "l2", "direction": "original_to_augmented", "id": str(i), "status": "changed",
             "rank": 1.0 if hit else 7.0, "original": "C", "augmented": "C"}
            for aug in ("kekule", "random_order") for i, hit in enumerate(hits)]  # fmt: skip


def _board(models: dict[str, list[bool]]) -> SiteData:
    rows = _ranks(REFERENCE, [True] * 200)
    for sub, hits in models.items():
        rows += _ranks(sub, hits)
    cards = {s: {"id": s, "name": s, "source": {"source": "pip"}, "training": None} for s in models}
    cards[REFERENCE] = {"id": REFERENCE, "name": "Morgan", "source": {"source": "none"}}
    trained = {"id": "ours", "name": "ours", "source": {"source": "local"}, "training": {"seed": 1}}
    return SiteData(b.frame([]), [], {**cards, "ours": trained}, {"item_ranks": pd.DataFrame(rows)})


def test_the_verdict_follows_the_paired_intervals() -> None:
    data = _board({"as-good": [True] * 200, "blind": [False] * 200, "half": [i % 2 == 0 for i in range(200)]})
    assert set(finding.published_models(data)) == {"as-good", "blind", "half"}  # not the reference, not ours
    found = compare(data)
    assert not agrees_with_paper(found[("as-good", "datamol-default")])
    assert agrees_with_paper(found[("blind", "datamol-default")])
    assert agrees_with_paper(found[("half", "datamol-default")])  # 0.5, upper bound 0.57 < 0.9
    text = "\n".join(finding_lines(data))
    assert "on 2 of 3 (model, data set) pairs only" in text
    assert "as-good is below Morgan on 0 of 2 augmentations" in text
    assert "blind is below Morgan on 2 of 2 augmentations" in text and "not robust" in text
    agreeing = "\n".join(finding_lines(_board({"blind": [False] * 200})))
    assert "every one is below Morgan on every augmentation and not robust" in agreeing
