"""Text a submission controls is shown, never obeyed, wherever it is published (issue 30, item 3).

After one hostile run, 737 rows of ``site/data/answers.csv.gz`` held raw ESC bytes: harmless in a browser,
but they act on the terminal of whoever greps or prints the record. Every export goes through one
sanitiser (:func:`leaderboard.text.visible`): control characters and bidirectional overrides are written
as escapes; honest text is unchanged.
"""

from __future__ import annotations

import gzip

import pandas as pd

from leaderboard.site.exports import write_exports
from leaderboard.text import visible
from leaderboard.tracks import result_columns, table_specs

HOSTILE = "CCO\x1b[2J\x1b]0;pwned\x07 \u202eevil\u2066 \x9b31m\r"
UNSAFE = ("\x1b", "\x07", "\u202e", "\u2066", "\x9b", "\r")


def test_visible_escapes_what_acts_on_a_terminal_and_keeps_honest_text():
    assert visible(HOSTILE) == "CCO\\x1b[2J\\x1b]0;pwned\\x07 \\u202eevil\\u2066 \\x9b31m\\x0d"
    honest = "2-methylpropan-1-ol\tC(C)O\nβ-D-glucose, 1H-indole [3,4-b] ∆"
    assert visible(honest) == honest


def test_exports_hold_no_raw_control_character(tmp_path):
    (name, spec) = [(n, s) for n, (_, s) in table_specs().items() if s.file == "answers.csv.gz"][0]
    row = {c: "0" for c in spec.numeric}
    row.update({c: "x" for c in spec.columns if c not in spec.numeric})
    row.update(submission="attack-escapes", track="consistency", dataset="freesolv", completion=HOSTILE,
               answer=HOSTILE)  # fmt: skip
    honest = {**row, "submission": "honest", "completion": "CCO", "answer": "CCO"}
    columns = ["submission", "track", "dataset", *spec.columns]
    table = pd.DataFrame([row, honest])[list(dict.fromkeys(columns))]
    runs = pd.DataFrame([{"run_id": "r1", "submission": "attack-escapes", "track": "consistency",
                          "dataset": "freesolv", "status": "FAILED", "reason": HOSTILE,
                          "model_revision": HOSTILE}])  # fmt: skip
    results = pd.DataFrame(columns=result_columns())
    subs = [{"id": "attack-escapes", "name": HOSTILE}, {"id": "honest", "name": "Honest"}]
    write_exports(results, runs, subs, tmp_path, tables={name: table})
    texts = {p.name: (gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()).decode()
             for p in (tmp_path / "data").iterdir() if p.is_file()}  # fmt: skip
    assert "answers.csv.gz" in texts and "runs.json" in texts and "submissions.json" in texts
    for name, text in texts.items():
        assert not any(ch in text for ch in UNSAFE), f"{name} holds a raw control character"
    assert "CCO\\x1b[2J" in texts["answers.csv.gz"] and "\\u202eevil" in texts["answers.csv.gz"]
    assert "\\u202eevil" in texts["submissions.json"].replace("\\\\", "\\")
