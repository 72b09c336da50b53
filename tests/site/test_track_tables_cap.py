"""A track page's tables of every metric by dimension list the best-ranked models, and say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.site.blocks import Figures
from leaderboard.site.exports import write_exports
from leaderboard.site.pages import track as track_pages
from leaderboard.site.sitedata import load_site_data
from tests.site import _builders as b


def _by_dimension(page: str) -> str:
    """The datamol-default section's tables of every metric by dimension."""
    start = page.index("## datamol-default")
    start = page.index("Every metric by dimension", start)
    end = page.find("\n## ", start)
    return page[start : end if end > 0 else len(page)]


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory):
    site = tmp_path_factory.mktemp("cap") / "site"
    write_exports(b.results(b.BASE_SCORE), b.runs(), b.submissions(list(b.BASE_SCORE)), site)
    return load_site_data(site), site


def test_every_model_when_the_board_is_small(board) -> None:
    data, site = board
    section = _by_dimension(track_pages.track_page(data, "amore", Figures(Path(site))))
    for sub in data.ids:
        assert data.name(sub).split(" |")[0] in section
    assert "best-ranked" not in section


def test_the_best_ranked_models_on_a_large_board(board, monkeypatch: pytest.MonkeyPatch) -> None:
    data, site = board
    monkeypatch.setattr(track_pages, "DIMENSION_TABLE_MODELS", 2)
    section = _by_dimension(track_pages.track_page(data, "amore", Figures(Path(site))))
    ranked = data.order(data.ids)
    shown, left_out = ranked[:2], ranked[2:]
    assert left_out
    for sub in shown:
        assert data.name(sub).split(" |")[0] in section
    for sub in left_out:
        assert data.name(sub).split(" |")[0] not in section
    assert f"The 2 best-ranked of {len(ranked)} models" in section
