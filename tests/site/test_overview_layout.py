"""The overview's phone-friendly ranking (issue 19): compact columns, per-track mean ranks, rule ties.

The browser side (sticky model column, the toggle, plots at phone width) is in ``test_browser_layout.py``;
these tests check the generated Markdown: which columns the compact view keeps, the per-track mean rank, and
that a rule tying most models shows *tied* instead of an arrow.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pandas as pd
import pytest

from leaderboard.site.build import generate_pages, write_exports
from leaderboard.site.pages.overview import OTHER_RULES, _rules_section, rule_ties
from tests.site import _builders as b


@pytest.mark.parametrize(
    ("ranks", "tied"),
    [
        ([1, 2, 2, 2], {"b", "c", "d"}),  # three of four share rank 2
        ([1, 1, 3, 3], {"a", "b", "c", "d"}),  # two ranks only: nothing told apart
        ([1, 1, 3], {"a", "b"}),  # three models, two distinct ranks
        ([1, 2, 3, 3], set()),  # one pair tied: an ordinary tie, arrows stay
        ([1, 2, 3, 4], set()),
        ([1, 2], set()),  # two models: ranks 1 and 2 are a real order
        ([1, 1], set()),  # two models tied: the arrow of the second one is a real move
        ([1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6, 6], {str(i) for i in range(6, 13)}),
    ],
)
def test_rule_ties(ranks: list[int], tied: set[str]) -> None:
    index = list("abcd")[: len(ranks)] if len(ranks) <= 4 else [str(i + 1) for i in range(len(ranks))]
    assert rule_ties(pd.Series(ranks, index=index)) == tied


def _rules_frame(minimax: list[int]) -> pd.DataFrame:
    """A rules table of five models: Copeland 1..5, every other rule the same except Minimax."""
    ids = [f"m{i}" for i in range(1, 6)]
    copeland = [1, 2, 3, 4, 5]
    frame = {"rank_copeland": copeland}
    for rule in OTHER_RULES:
        ranks = minimax if rule == "minimax" else copeland
        frame[f"rank_{rule}"] = ranks
        frame[f"change_{rule}"] = [c - r for c, r in zip(copeland, ranks, strict=True)]
    return pd.DataFrame(frame, index=ids)


def _section(rules: pd.DataFrame, title: str = "Embedding models") -> list[str]:
    """The other rules' section of one board whose ranking has ``rules`` (a stub of the site data)."""
    data = SimpleNamespace(name=lambda sub: sub.upper())
    return _rules_section(data, SimpleNamespace(rules=rules), title)


def test_degenerate_rule_is_shown_as_a_tie_not_as_arrows() -> None:
    lines = _section(_rules_frame([1, 2, 2, 2, 2]))
    assert lines[0] == "### Embedding models"  # under its board's heading
    text = "\n".join(lines)
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| [M")}
    rows = {re.sub(r"\(.*\)", "", key): line for key, line in rows.items()}  # "[M2]" for its link
    headers = next(line for line in text.splitlines() if line.startswith("| Model"))
    minimax = [h.strip() for h in headers.split("|")].index("Minimax")
    for sub in ("M2", "M3", "M4", "M5"):
        cells = [c.strip() for c in rows[f"[{sub}]"].split("|")]
        assert cells[minimax] == "2=" and "tied" in cells[minimax + 1], cells
        assert not re.search("[↑↓]", cells[minimax + 1])
    first = [c.strip() for c in rows["[M1]"].split("|")]
    assert first[minimax] == "1" and first[minimax + 1] == "="
    assert "Minimax ties 4 of 5 models" in text
    # Only Minimax moved models, and only by its tie: nobody moves.
    assert "0 of 5 models move under at least one rule" in text


def test_ordinary_rule_keeps_its_arrows() -> None:
    lines = _section(_rules_frame([2, 1, 3, 5, 4]), "Generative models")
    assert lines[0] == "### Generative models"
    text = "\n".join(lines)
    assert "tied" not in text and "↑1" in text and "↓1" in text
    assert "4 of 5 models move under at least one rule" in text


def test_ranking_table_is_compact_first_with_a_mean_rank_per_track(tmp_path) -> None:
    _, site = b.repo(tmp_path)
    write_exports(b.results(b.BASE_SCORE), b.runs(), b.submissions(["mu", "alpha", "zeta"]), site)
    generate_pages(site)
    index = (site / "index.md").read_text(encoding="utf-8")
    opening = re.search(r'<div class="chemrobust-ranking" data-compact="([0-9,]+)" markdown="1">', index)
    assert opening is not None
    header = next(line for line in index.splitlines() if line.startswith("| Rank | Model"))
    columns = [h.strip() for h in header.strip("|").split("|")]
    compact = [columns[int(i)] for i in opening.group(1).split(",")]
    assert compact == ["Rank", "Model", "Robust skill", "Copeland", "amore mean rank"]
    assert "W / L / T" in columns and len(columns) == 5 + 1 + 10  # and the ten criteria
    # The table comes first on its board, before the prose that explains it: the board's criteria legend,
    # then the text both boards share.
    table, legend = index.index("| Rank | Model"), index.index("weight 1 in all")
    assert index.index("### Embedding models") < table < legend < index.index("### How to read the boards")
    # zeta beats both on every criterion: mean rank 1.0 on the track, the best (bold).
    zeta = next(line for line in index.splitlines() if line.startswith("| 1 | [Zeta-BERT"))
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", zeta)]  # the name holds an escaped "\|"
    assert cells[6] == "**1.0**", cells


def test_best_value_in_bold_follows_the_criterions_direction(tmp_path) -> None:
    """RMSE: the lowest value is the best one, and the bold one (it was the highest)."""
    _, site = b.repo(tmp_path)
    rmse = {"alpha": 1.9, "mu": 0.7, "zeta": 1.2}
    rows = [{"submission": sub, "track": "downstream", "dataset": "esol", "variant": variant,
             "metric": metric, "value": value}
            for sub, r in rmse.items()
            for variant, metric, value in (("original", "rmse", r),
                                           ("worst", "rmse", r + 0.5))]  # fmt: skip
    write_exports(b.frame(rows), b.runs(), b.submissions(list(rmse)), site)
    generate_pages(site)
    index = (site / "index.md").read_text(encoding="utf-8")
    header = next(line for line in index.splitlines() if line.startswith("| Rank | Model"))
    columns = [h.strip() for h in header.strip("|").split("|")]
    body = [line for line in index.splitlines() if re.match(r"\| \d+ \| \[", line)]
    bold = {}
    for line in body:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        bold.update({(columns[i], cells[i]) for i in range(len(cells)) if cells[i].startswith("**")})
    # Two criteria on one data set: each column says which metric it is.
    # One data set: the second criterion's label is its setting and metric.
    assert [c for c in columns if "RMSE" in c] == ["esol · RMSE", "worst · RMSE"], columns
    assert bold["esol · RMSE"] == "**0.700**" and bold["worst · RMSE"] == "**1.200**", bold
