"""Issue 31 item 4 on the site: strict and lenient accuracy and the error breakdown, per track and per model.

Rows come from the real host scoring of T3 (a reader that writes one stereo-free answer, one wrong formula and
no answer), so the table is checked against what the track computed, not against numbers typed here.
"""

from __future__ import annotations

import json

import pandas as pd

import evaluators.datasets as datasets
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.consistency import COMPLETIONS, ConsistencyTrack
from leaderboard.site.blocks import Figures
from leaderboard.site.grading import grading_frame, grading_lines
from leaderboard.site.molecules import Drawings
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.pages.submission import submission_page
from leaderboard.site.pages.track import track_page
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import result_columns
from tests.site import _builders as b

RECORDS = [
    {"id": "1", "smiles": "C[C@H](N)C(=O)O", "iupac": "(2S)-2-aminopropanoic acid", "value": "-1"},
    {"id": "2", "smiles": "CCO", "iupac": "ethanol", "value": "-5"},
    {"id": "3", "smiles": "CC(C)O", "iupac": "propan-2-ol", "value": "-4.7"},
    {"id": "4", "smiles": "CCCC", "iupac": "not a name anyone can read", "value": "2"},
]
ANSWERS = {"1": "CC(N)C(=O)O", "2": "CCO", "3": "CCCO", "4": "CCCC"}


def _rows(tmp_path, monkeypatch) -> pd.DataFrame:
    monkeypatch.setattr(
        datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in RECORDS]
    )
    track = ConsistencyTrack(TrackOptions())
    out = tmp_path / "out"
    out.mkdir()
    with (out / COMPLETIONS).open("w", encoding="utf-8") as handle:
        for q in track.questions(RECORDS):
            text = ANSWERS[q.item] if q.task.name == "translation" and q.representation == "iupac" else ""
            handle.write(json.dumps({"id": q.request.id, "completion": text}) + "\n")
    result = TrackResult("zeta", "consistency", 1, "freesolv", "0" * 8, "0" * 8, 0, rows=(), counts={})
    scored = track.score(result, out_dir=out, data_dir=tmp_path)
    columns = result_columns()
    rows = [{"submission": "zeta", "track": "consistency", "dataset": "freesolv", **dict(r.dims),
             "metric": r.metric, "value": r.value} for r in scored.rows]  # fmt: skip
    return pd.DataFrame([{c: row.get(c, "-") for c in columns} for row in rows], columns=columns)


def test_the_track_page_and_the_model_page_show_strict_lenient_and_the_classes(tmp_path, monkeypatch) -> None:
    rows = _rows(tmp_path, monkeypatch)
    cards = {c["id"]: c for c in b.submissions(["zeta"], {"zeta": ["generate"]})}
    data = SiteData(rows, [], cards, {})
    frame = grading_frame(data, "consistency", "freesolv").set_index(["task", "representation"])
    # Item 4's name cannot be read: left out. Item 1 is shown with its stereo: the stereo-free answer is wrong
    # (stereo only); item 3 is the wrong isomer; item 2 right.
    iupac = frame.loc[("translation", "iupac")]
    assert iupac["no truth"] == 1
    assert (iupac["strict"], iupac["lenient"]) == (1 / 3, 2 / 3)
    assert (iupac["stereo"], iupac["isomer"], iupac["none"], iupac["formula"]) == (1 / 3, 1 / 3, 0.0, 0.0)
    assert frame.loc[("translation", "smiles"), "none"] == 1.0  # no answers to the SMILES questions
    assert "formula" not in set(frame.index.get_level_values("task"))  # only structure answers are graded

    page = track_page(data, "consistency", Figures(tmp_path))
    assert "Structure answers: strict, lenient" in page
    line = next(x for x in page.splitlines() if "Zeta" in x and "IUPAC name" in x and "Name ↔ structure" in x)
    assert [c.strip() for c in line.strip().strip("|").split("|")][-8:] == [
        "0.333", "0.667", "0.333", "0.000", "0.333", "0.000", "0.000", "1"
    ]
    model = submission_page(data, "zeta", Figures(tmp_path), Explorer(Drawings(tmp_path)))
    assert "How its structure answers are wrong" in model


def test_a_track_without_grading_rows_shows_no_section() -> None:
    data = SiteData(b.results(b.BASE_SCORE), [], {}, {})
    assert grading_lines(data, "amore", "chebi20") == [] and grading_lines(data, "consistency", "x") == []
