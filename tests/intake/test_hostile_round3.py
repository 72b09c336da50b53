"""Round 3 of hostile inputs to the command line and the manifest (issue 30, item 4)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from leaderboard.__main__ import main
from leaderboard.intake.schema import HuggingFaceModel

SHA = "0" * 40


def hub(hub_id: str) -> HuggingFaceModel:
    return HuggingFaceModel(source="huggingface", architecture="encoder", capabilities=["embed"], id=hub_id,
                            revision=SHA)  # fmt: skip


@pytest.mark.parametrize("hub_id", ["a/..", "a/.", "org/../x", "../b"])
def test_the_hub_id_refuses_dot_segments(hub_id):
    with pytest.raises(ValidationError):
        hub(hub_id)


@pytest.mark.parametrize("hub_id", ["org/model", "org/model.v1", "org/.hidden", "org/..x"])
def test_the_hub_id_keeps_real_names(hub_id):
    assert hub(hub_id).id == hub_id


@pytest.mark.parametrize("bad", ["../x", "no-such-submission", "a/b", "../../etc\x1b[2J"])
def test_an_unknown_or_outside_submission_is_one_line_not_a_traceback(bad, capsys, tmp_path):
    code = main(["--state-dir", str(tmp_path), "evaluate", "--submission", bad, "--runner", "in-process"])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err
    (line,) = err.splitlines()
    assert line.startswith("error: no submission ") and "in submissions/" in line and line.isprintable()
