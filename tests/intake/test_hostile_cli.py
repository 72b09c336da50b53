"""Hostile input to the command line: folder names with terminal escapes, paths outside ``submissions/``,
ids the site reserves. ``python -m leaderboard`` answers each with one printable line, never a traceback.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from leaderboard.__main__ import main
from leaderboard.intake.arguments import ArgumentError, manifest_argument
from leaderboard.intake.manifest import ManifestError, load_submission
from leaderboard.intake.scaffold import ScaffoldError, write_submission
from leaderboard.reserved import RESERVED_IDS, is_reserved

REPO = Path(__file__).resolve().parents[2]
MORGAN = "morgan-fingerprint-reference"
# A folder name an attacker would choose: clear the screen, forge a line, reverse the text that follows.
HOSTILE_NAME = "evil\x1b[2J\x1b[1;32mALL OK\x1b[0m\nok   fake\u202edrow\x07"
# Anything but a printable character or the line break that ends each printed line.
_CONTROL = re.compile(r"[^\n\S ]|[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _clean(text: str) -> None:
    """Assert ``text`` holds only printable lines (no escape, bell, carriage return, bidi override)."""
    bad = sorted({f"U+{ord(c):04X}" for c in text if c != "\n" and not c.isprintable()})
    assert not bad, f"control characters printed: {bad}\n{text!r}"
    assert not _CONTROL.search(text), text


def _repo(tmp_path: Path) -> Path:
    """A repository root with ``submissions/`` holding a valid copy of the Morgan reference."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "submissions" / MORGAN, root / "submissions" / MORGAN)
    return root


def _copy_as(root: Path, folder: str, sub_id: str) -> Path:
    """Copy the Morgan reference into ``submissions/<folder>/`` with ``id: <sub_id>``; return the manifest."""
    target = root / "submissions" / folder
    shutil.copytree(REPO / "submissions" / MORGAN, target)
    data = yaml.safe_load((target / "submission.yaml").read_text(encoding="utf-8"))
    data["id"] = sub_id
    (target / "submission.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target / "submission.yaml"


# --------------------------------------------------------------------------------------------------------
# Reserved ids


def test_reserved_ids_cover_the_site_names_a_submission_could_take() -> None:
    site = {"index", "tracks", "submissions", "data", "assets", "javascripts", "stylesheets", "search"}
    assert site | {"404", "sitemap", "methodology", "how-to-submit", "security", "downloads"} <= RESERVED_IDS
    assert is_reserved("INDEX") and not is_reserved("acme-chem")


@pytest.mark.parametrize("sub_id", sorted(RESERVED_IDS))
def test_a_reserved_id_is_refused_by_validation(tmp_path: Path, sub_id: str) -> None:
    path = _copy_as(_repo(tmp_path), sub_id, sub_id)
    with pytest.raises(ManifestError) as info:
        load_submission(path)
    (problem,) = info.value.problems
    assert (problem.field, problem.value, problem.check) == ("id", repr(sub_id), "schema")
    assert "reserved" in problem.message and "Choose another id" in problem.fix


def test_validate_reports_a_reserved_id_and_exits_1(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path)
    _copy_as(root, "index", "index")
    assert main(["validate", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "'id' 'index' is reserved" in out and "1 valid, 1 invalid" in out


@pytest.mark.parametrize("sub_id", ["index", "assets", "404"])
def test_new_submission_refuses_a_reserved_id(tmp_path: Path, capsys, sub_id: str) -> None:
    with pytest.raises(ScaffoldError, match="reserved"):
        write_submission(sub_id, root=tmp_path)
    assert main(["new-submission", sub_id, "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "reserved" in err
    assert not (tmp_path / "submissions").exists()


# --------------------------------------------------------------------------------------------------------
# Path arguments stay inside submissions/


def _refused(argv: list[str], capsys) -> str:
    """Run ``main(argv)``; assert exit 2, nothing on stdout, one clean ``error:`` line; return it."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    _clean(captured.err)
    assert captured.err.count("\n") == 1 and captured.err.startswith("error: "), captured.err
    assert "Traceback" not in captured.err
    assert "Give a submission folder (submissions/<id>) or its submission.yaml." in captured.err
    return captured.err


def test_a_relative_path_outside_submissions_is_refused(tmp_path: Path, capsys, monkeypatch) -> None:
    root = _repo(tmp_path)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "submission.yaml").write_text("id: x\n", encoding="utf-8")
    monkeypatch.chdir(root)
    for arg in ("../x", "submissions/../../x", "submissions/../../x/submission.yaml"):
        err = _refused(["validate", "--root", str(root), arg], capsys)
        assert f"'{arg}' is outside" in err
    assert "is the submissions folder itself" in _refused(
        ["validate", "--root", str(root), "submissions"], capsys
    )


def test_an_absolute_path_elsewhere_is_refused(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path)
    for arg in ("/etc/passwd", "/etc", str(REPO / "submissions" / MORGAN)):
        assert "is outside" in _refused(["validate", "--root", str(root), arg], capsys)
    # The markdown report reads its arguments through the same check.
    _refused(["validate", "--root", str(root), "--format", "markdown", "/etc/passwd"], capsys)


def test_a_symbolic_link_out_of_submissions_is_refused(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path)
    outside = tmp_path / "outside" / MORGAN
    shutil.copytree(REPO / "submissions" / MORGAN, outside)
    (root / "submissions" / "linked").symlink_to(outside, target_is_directory=True)
    (root / "submissions" / MORGAN / "other.yaml").symlink_to(outside / "submission.yaml")
    for arg in ("linked", "linked/submission.yaml", f"{MORGAN}/other.yaml"):
        err = _refused(["validate", "--root", str(root), str(root / "submissions" / arg)], capsys)
        assert "through a symbolic link" in err
    # Checking every submission (no arguments) finds the link too, and reads nothing through it.
    assert "through a symbolic link" in _refused(["validate", "--root", str(root)], capsys)


def test_other_malformed_arguments_are_refused(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path)
    deep = root / "submissions" / MORGAN / "sub" / "submission.yaml"
    assert "directly in one" in _refused(["validate", "--root", str(root), str(deep)], capsys)
    readme = root / "submissions" / "README.md"
    readme.write_text("x", encoding="utf-8")
    assert "is a file, not a submission folder" in _refused(
        ["validate", "--root", str(root), str(readme)], capsys
    )
    with pytest.raises(ArgumentError, match="is not a path"):
        manifest_argument("a\0b", submissions_dir=root / "submissions")


def test_an_argument_inside_submissions_is_kept_as_given(tmp_path: Path, monkeypatch) -> None:
    root = _repo(tmp_path)
    monkeypatch.chdir(root)
    subs = root / "submissions"
    assert manifest_argument(f"submissions/{MORGAN}", submissions_dir=subs) == Path(
        f"submissions/{MORGAN}/submission.yaml"
    )
    assert manifest_argument(f"submissions/{MORGAN}/submission.yaml", submissions_dir=subs) == Path(
        f"submissions/{MORGAN}/submission.yaml"
    )
    assert manifest_argument("submissions/not-yet", submissions_dir=subs).name == "submission.yaml"


def test_a_hostile_path_argument_is_printed_sanitised(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path)
    err = _refused(["validate", "--root", str(root), f"../{HOSTILE_NAME}"], capsys)
    assert "'../evil\\x1b[2J\\x1b[1;32mALL OK\\x1b[0m\\x0aok   fake\\u202edrow\\x07' is outside" in err


# --------------------------------------------------------------------------------------------------------
# Everything printed is printable


def test_validate_prints_a_hostile_folder_name_sanitised(tmp_path: Path, capsys) -> None:
    root = _repo(tmp_path)
    _copy_as(root, HOSTILE_NAME, MORGAN)
    for argv in (
        ["validate", "--root", str(root)],
        ["validate", "--root", str(root), str(root / "submissions" / HOSTILE_NAME)],
        ["validate", "--root", str(root), "--format", "markdown"],
    ):
        assert main(argv) == 1, argv
        captured = capsys.readouterr()
        _clean(captured.out + captured.err)
        assert "Traceback" not in captured.err
    # The text report names the folder (sanitised) and the mismatch.
    main(["validate", "--root", str(root)])
    out = capsys.readouterr().out
    assert "FAIL " in out and "evil\\x1b[2J\\x1b[1;32mALL OK\\x1b[0m\\x0aok   fake\\u202edrow\\x07" in out
    assert not any(line.startswith("ok   fake") for line in out.splitlines())  # no forged line


def test_new_submission_prints_a_hostile_id_sanitised(tmp_path: Path, capsys) -> None:
    assert main(["new-submission", HOSTILE_NAME, "--root", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    _clean(captured.out + captured.err)
    assert captured.err.count("\n") == 1 and "is not a valid submission id" in captured.err
    for arg in ("../x", "/etc/x", "a/b"):
        assert main(["new-submission", arg, "--root", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"'{arg}' is not a valid submission id" in err
    assert not (tmp_path / "submissions").exists()


def test_new_submission_output_is_printable(tmp_path: Path, capsys) -> None:
    assert main(["new-submission", "acme-chem", "--root", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    _clean(captured.out)
    assert "wrote " in captured.out and "Next steps for acme-chem:" in captured.out


def test_evaluate_summary_lines_are_printable(tmp_path: Path, capsys, monkeypatch) -> None:
    """The evaluate summary prints failure reasons (a run's own stderr line) through the sanitiser."""
    import leaderboard.__main__ as cli
    import leaderboard.execution.evaluate as evaluate

    class FakeEvaluator:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def run(self, ids: object, datasets: object) -> evaluate.Summary:
            return evaluate.Summary(
                failed=[f"[1/1] {HOSTILE_NAME} × amore × datamol-default: \x1b]0;pwned\x07boom\r\nforged"],
                invalid=[f"submissions/{HOSTILE_NAME}/submission.yaml: 1 problem(s)"],
                runner="in\x1b[31mprocess",
            )

    monkeypatch.setattr(evaluate, "Evaluator", FakeEvaluator)
    monkeypatch.setattr(cli, "_store", lambda state_dir: None)
    monkeypatch.setenv("CHEMROBUST_ALLOW_REMOTE_CODE", "")
    argv = ["--state-dir", str(tmp_path / "state"), "evaluate", "--no-site", "--runner", "in-process"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    _clean(captured.out + captured.err)
    lines = captured.out.splitlines()
    assert sum(line.startswith("  FAILED ") for line in lines) == 2
    assert not any(line.startswith("forged") for line in lines)


@pytest.mark.skipif(os.name != "posix", reason="folder names with control characters need POSIX")
def test_hostile_name_really_is_a_folder(tmp_path: Path) -> None:
    # Guard for the tests above: the file system accepted the hostile name as it is.
    root = _repo(tmp_path)
    _copy_as(root, HOSTILE_NAME, MORGAN)
    assert HOSTILE_NAME in os.listdir(root / "submissions")
