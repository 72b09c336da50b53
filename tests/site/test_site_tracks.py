"""The site is generic over tracks: a second track registered from test code, and hostile strings.

A tiny generation track (its own dimensions, a lower-is-better metric and a headline criterion) is
registered into ``evaluators.tracks.TRACKS`` for the module and removed afterwards. The pages must show it
from its declarations alone (it has no site extension), rank its criteria on the generative board (AMORE's
on the embedding board), leave an embedding-only model off that board, and treat a model missing one of
its criteria as missing there — not as last.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from evaluators.metrics import METRICS, register_metric
from evaluators.schema import Criterion, Dimension, MetricSpec
from evaluators.tracks import TRACKS, Track
from leaderboard.site.build import build_site, generate_pages, write_exports
from tests.site import _builders as b

TOY = "toy_caption"


class ToyTrack(Track):
    """A generation track that exists only in these tests."""

    name = TOY
    version = 1
    capability = "generate"
    main_metric = "toy_error"
    description = "A toy captioning track registered by the site tests."
    citation = "Nobody, N. A toy track. 2025."
    dimensions = (
        Dimension("prompt", "Prompt style.", values=("plain", "fancy"), labels=(("plain", "plain prompt"),)),
        Dimension("decoding", "Decoding strategy.", values=("greedy", "beam")),
    )
    metrics = ("toy_error",)
    headline = (
        Criterion(
            metric="toy_error", where=(("decoding", "greedy"),), per=("prompt",), label="Toy error (greedy)"
        ),
    )

    def definition(self) -> dict:  # noqa: D102
        return {}

    def run(self, adapter, dataset, *, out_dir, log, progress=None) -> dict:  # noqa: D102
        raise NotImplementedError


@pytest.fixture(scope="module")
def toy_track() -> Iterator[type[Track]]:
    TRACKS.names()  # discover the real tracks first
    register_metric(MetricSpec("toy_error", False, "Toy error", "Share of wrong toy captions.", 0.0, 1.0))
    TRACKS.register(TOY)(ToyTrack)
    try:
        yield ToyTrack
    finally:
        TRACKS._items.pop(TOY)
        METRICS._items.pop("toy_error")


def _toy_rows(sub: str, plain: float, fancy: float) -> list[dict]:
    rows = []
    for decoding, shift in (("greedy", 0.0), ("beam", 0.05)):
        for prompt, value in (("plain", plain), ("fancy", fancy)):
            rows.append({"submission": sub, "track": TOY, "dataset": "chebi20", "prompt": prompt,
                         "decoding": decoding, "metric": "toy_error", "value": value + shift})  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def two_tracks(toy_track, tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("two-tracks"))
    amore = b.results(b.BASE_SCORE)  # zeta best, then alpha, then mu (datamol-default only)
    # nu, generative only, has no value on the fancy prompt (and none on AMORE): missing, not last.
    nu = [row for row in _toy_rows("nu", 0.05, 0.0) if row["prompt"] == "plain"]
    results = pd.concat(
        [
            b.frame(amore.to_dict(orient="records")),
            b.frame(_toy_rows("alpha", 0.2, 0.3) + _toy_rows("mu", 0.1, 0.15) + nu),
        ]
    )
    caps = {"zeta": ["embed"], "nu": ["generate"]} | {s: ["embed", "generate"] for s in ("alpha", "mu")}
    runs = b.runs()
    write_exports(results, runs, b.submissions(["zeta", "alpha", "mu", "nu"], caps), site)
    pages = generate_pages(site)
    public = build_site(root, strict=True)
    return {"root": root, "site": site, "public": public, "pages": pages}


def test_second_track_gets_complete_pages(two_tracks: dict) -> None:
    site, public = two_tracks["site"], two_tracks["public"]
    assert (site / "tracks" / f"{TOY}.md") in two_tracks["pages"]
    index = b.text(public / "tracks" / "index.html")
    assert TOY in index and "A toy captioning track" in index and "Nobody, N." in index
    text = b.text(public / "tracks" / TOY / "index.html")
    assert "Toy error (greedy)" in text and "plain prompt" in text and "Lower is better" in text
    assert "Toy error by decoding" in text and "greedy (headline)" in text
    # Lower is better: mu (0.1) ranks above alpha (0.2) on the criterion.
    grid = text[text.index("Ranking per criterion") :]
    assert grid.index("Mu-BERT") < grid.index("Alpha-BERT")
    assert "Zeta-BERT" not in text  # no toy rows: not listed on the track's page at all
    method = b.text(public / "methodology" / "index.html")
    assert "Toy error (greedy)" in method and "Decoding strategy." in method


def _board_section(text: str, title: str, end: str) -> str:
    return text[text.index(f"{title}¶") : text.index(f"{end}¶")]


def test_overview_ranks_each_track_on_its_board_and_missing_is_not_last(two_tracks: dict) -> None:
    """Each board ranks its own track; a model missing a criterion of its board is not last there.

    Before the boards, one "Overall ranking" ranked AMORE and the toy track together, and zeta (no
    "generate") was missing on the toy criteria, not last. Now an embedding-only model is not on the
    generative board at all (not ranked last there), and the missing-is-not-last property holds within a
    board: nu has no value on the fancy prompt and still ranks first, beating both models on the criterion
    it has.
    """
    md = (two_tracks["site"] / "index.md").read_text(encoding="utf-8")
    text = b.text(two_tracks["public"] / "index.html")
    embedding = _board_section(text, "Embedding models", "Generative models")
    generative = _board_section(text, "Generative models", "How to read the boards")
    assert "[toy\\_caption](tracks/toy_caption.md) — Toy error (greedy): 2 columns" in md
    # Each board has its own track's criteria and weights, and none of the other's.
    assert "weight 1 in all (0.1 each)" in embedding and "toy_caption" not in embedding
    assert "weight 1 in all (0.5 each)" in generative and "amore" not in generative
    assert "10 criteria of 1 track" in embedding and "2 criteria of 1 track" in generative
    # Embedding board: the three embedding models, by AMORE alone (zeta beats both, alpha beats mu).
    skill = r"\s+(?:\d\.\d\d(?:\s\[\d\.\d\d,\s\d\.\d\d\])?|—)"  # the robust-skill column (— off its rules)
    assert re.search(r"1\s+Zeta-BERT \| v1" + skill + r"\s+\+2\s+2 / 0 / 0", embedding)
    assert re.search(r"2\s+Alpha-BERT \| v1" + skill + r"\s+0\s+1 / 1 / 0", embedding)
    assert "Nu-BERT" not in embedding  # generative only: not on this board, rather than last on it
    # Generative board: nu misses the fancy prompt yet beats both on the plain one; mu beats alpha.
    assert re.search(r"1\s+Nu-BERT \| v1" + skill + r"\s+\+2\s+2 / 0 / 0", generative)
    assert re.search(r"2\s+Mu-BERT \| v1" + skill + r"\s+0\s+1 / 1 / 0", generative)
    assert re.search(r"3\s+Alpha-BERT \| v1" + skill + r"\s+-2\s+0 / 2 / 0", generative)
    assert "Zeta-BERT" not in generative  # lacks "generate": not on the generative board at all
    nu_row = next(line for line in md.splitlines() if line.startswith("| 1 | [Nu-BERT"))
    assert nu_row.count('<span title="no value">—</span>') == 1  # fancy: a titled dash, never a zero
    headers = [line for line in md.splitlines() if line.startswith("| Rank | Model")]
    assert len(headers) == 2
    assert "amore · chebi20 · canonical" not in headers[0]  # one track per board: no track prefix
    assert "chebi20 · canonical" in headers[0] and "toy_caption" not in headers[0]
    assert "plain" in headers[1] and "fancy" in headers[1] and "amore" not in headers[1]


def test_submission_page_per_track_and_not_applicable(two_tracks: dict) -> None:
    zeta = (two_tracks["site"] / "submissions" / "zeta.md").read_text(encoding="utf-8")
    line = next(ln for ln in zeta.splitlines() if ln.startswith("Not applicable: "))
    assert "[toy\\_caption](../tracks/toy_caption.md) (needs <code>generate</code>)" in line
    mu = b.text(two_tracks["public"] / "submissions" / "mu" / "index.html")
    assert f"{TOY} · chebi20" in mu and "amore · datamol-default" in mu
    assert "Toy error by decoding" in mu and "Not applicable" not in mu


# --------------------------------------------------------------------------------------------
# Hostile strings: everything a submission controls is escaped
# --------------------------------------------------------------------------------------------

EVIL_NAME = "Evil <img src=x onerror=alert(1)> | **bold** [link](javascript:alert(1))"
EVIL_LAYER = "<img src=x onerror=alert(2)>|`x`"
EVIL_REASON = "<script>alert(3)</script> *x* [y](javascript:alert(3)) {: onclick=alert(3)}"
EVIL_ID = "<img src=x onerror=alert(4)>|`y`"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root, site = b.repo(tmp_path_factory.mktemp("hostile"))
    results = b.results({"zeta": 0.9, "evil": 0.6})
    setting = ("l2", "original_to_augmented", "non_trivial")
    extra = [b.amore_row("evil", "chebi20", "kekule", EVIL_LAYER, *setting, "acc_at_1", 0.42)]
    results = pd.concat([results, b.frame(extra)])
    ranks = b.item_ranks({"datamol-default": ["m1", EVIL_ID], "chebi20": ["c1", "c2"]}, 2, 1)
    ranks = ranks.loc[ranks["submission"] == "zeta"].assign(submission="evil")
    ranks.loc[ranks["id"] == EVIL_ID, "original"] = "<b>CCO</b>"
    runs = pd.DataFrame(
        [b.run("evil", "chebi20", "FAILED", EVIL_REASON), b.run("evil", "bad`set\n```", "FAILED", "x")]
    )
    subs = b.submissions(["zeta", "evil"])
    subs[1].update(name=EVIL_NAME, description=EVIL_NAME, license=EVIL_REASON)
    write_exports(results, runs, subs, site, tables={"item_ranks": ranks})
    generate_pages(site)
    public = build_site(root, strict=True)
    return {"site": site, "public": public}


def _html_files(public: Path) -> list[Path]:
    return [p for p in public.rglob("*.html") if "search" not in p.parts]


class _Tags(HTMLParser):
    """Every start tag with its attributes, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_hostile_strings_render_as_text(hostile: dict) -> None:
    public = hostile["public"]
    for path in _html_files(public):
        parser = _Tags()
        parser.feed(path.read_text(encoding="utf-8"))
        for tag, attrs in parser.tags:
            assert not any(name.startswith("on") for name in attrs), (path, tag, attrs)
            assert not (tag == "img" and attrs.get("src") == "x"), (path, attrs)
            assert not str(attrs.get("href") or "").startswith("javascript:"), (path, attrs)
            assert tag != "b", (path, tag)  # "<b>CCO</b>" from a table cell stays text
        raw = path.read_text(encoding="utf-8")
        assert "<script>alert" not in raw, path
    overview = b.text(public / "index.html")
    assert "Evil <img src=x onerror=alert(1)> | **bold** [link](javascript:alert(1))" in overview
    assert "<script>alert(3)</script> *x* [y](javascript:alert(3)) {: onclick=alert(3)}" in overview
    page = b.text(public / "submissions" / "evil" / "index.html")
    assert EVIL_LAYER in page  # the result row's layer label, in the "by layer" table
    assert "Reproduce: the recorded data set name is not a plain name" in page
    track = b.text(public / "tracks" / "amore" / "index.html")
    assert EVIL_LAYER in track  # as a column header of the layer table


def test_hostile_table_cell_in_the_failure_explorer(hostile: dict) -> None:
    md = (hostile["site"] / "submissions" / "evil.md").read_text(encoding="utf-8")
    assert "<code>&lt;img src=x onerror=alert(4)&gt;\\|\\`y\\`</code>" in md
    text = b.text(hostile["public"] / "submissions" / "evil" / "index.html")
    assert EVIL_ID in text and "<b>CCO</b>" in text
