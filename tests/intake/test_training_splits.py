"""``model.source: dataset`` (issue 34 point 3): a training split instead of weights, and nothing more.

The manifest may name only a split the data registry declares a training split; the host mounts a folder
holding exactly that split's files, sha256-checked, never the set's folder (which holds the test split
and its gold descriptions).
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from evaluators.datasets import DATASETS, file_sha256
from leaderboard.data.prepare import DataError, prepare_training_split
from leaderboard.execution.weights import WeightsError, fetch_weights, model_revision
from leaderboard.intake.manifest import check_submission, load_submission

REPO = Path(__file__).resolve().parents[2]
MORGAN = REPO / "submissions" / "caption-retrieval-morgan"


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    """A mirror like the shared data's: the set's folder holds the test split beside the validation one."""
    from leaderboard.settings import Settings

    found = Settings.from_environment(repo_root=REPO, state_dir=tmp_path).data_mirror
    source = found / "chebi20" if found and (found / "chebi20" / "validation.tsv").is_file() else None
    if source is None:
        pytest.skip("no data mirror with chebi20/validation.tsv (CHEMROBUST_DATA_DIR)")
    copy = tmp_path / "mirror" / "chebi20"
    copy.mkdir(parents=True)
    for name in ("validation.tsv", "test_original.tsv"):
        shutil.copyfile(source / name, copy / name)
    return copy.parent


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "subs" / MORGAN.name
    folder.mkdir(parents=True)
    shutil.copy(MORGAN / "retrieval.py", folder)
    text = (MORGAN / "submission.yaml").read_text()
    assert old in text
    (folder / "submission.yaml").write_text(text.replace(old, new, 1))
    return folder


def test_the_mount_holds_only_the_training_split_checked_and_readable(tmp_path: Path, mirror: Path) -> None:
    sub = load_submission(MORGAN)
    folder = fetch_weights(sub, MORGAN, tmp_path / "state", data_mirror=mirror)
    assert folder is not None and mirror not in folder.parents
    assert sorted(p.name for p in folder.rglob("*")) == ["validation.tsv"]  # no test split, no marker
    pinned = DATASETS.get("chebi20").training_split("validation").files[0].sha256
    assert file_sha256(folder / "validation.tsv") == pinned
    assert stat.S_IMODE((folder / "validation.tsv").stat().st_mode) == 0o644  # the sandbox user reads it
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert model_revision(sub).startswith("dataset:chebi20/validation@")
    # Prepared again: reused as it is; a file added there (by anyone) is swept when it is rebuilt.
    (folder / "stray.txt").write_text("x")
    again = fetch_weights(sub, MORGAN, tmp_path / "state", data_mirror=mirror)
    assert again == folder and sorted(p.name for p in again.iterdir()) == ["validation.tsv"]


def test_a_mirror_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path, mirror: Path) -> None:
    path = mirror / "chebi20" / "validation.tsv"
    path.write_bytes(path.read_bytes() + b"1\tC\tThe molecule is a leak.\n")
    with pytest.raises(WeightsError, match="sha256 does not match"):
        fetch_weights(load_submission(MORGAN), MORGAN, tmp_path / "state", data_mirror=mirror)


def test_an_undeclared_split_is_refused_on_the_host_too(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="declares no training split 'test'"):
        prepare_training_split("chebi20", "test", tmp_path, mirror=None)


def test_the_references_manifests_are_valid_and_run_only_captioning() -> None:
    for name in ("caption-retrieval-morgan", "caption-retrieval-ngram"):
        sub = load_submission(REPO / "submissions" / name)
        assert sub.model.source == "dataset"
        assert (sub.model.dataset, sub.model.split) == ("chebi20", "validation")
        assert sub.selected_tracks() == ["captioning"] and sub.reference and sub.reference_note


@pytest.mark.parametrize(
    ("old", "new", "field", "says"),
    [
        ("split: validation", "split: test", "model.split", "'test' is not a training split of data set"),
        ("dataset: chebi20", "dataset: freesolv", "model.dataset", "not a registered data set with a"),
        ("tracks: [captioning]", "tracks: [captioning, consistency]", "tracks", "not on 'consistency'"),
        ("tracks: [captioning]\n", "", "tracks", "may be given only to a model run on 'captioning'"),
        ("code:\n  file: retrieval.py\n  object: MorganRetrievalCaptioner\n", "", "model.source",
         "'model.source' is 'dataset', but adapter 'transformers'"),
    ],
)
def test_intake_refuses_what_is_not_a_declared_training_split_use(
    tmp_path: Path, old: str, new: str, field: str, says: str
) -> None:
    folder = _variant(tmp_path, old, new)
    if old.startswith("code"):  # the built-in transformers adapter: it would load weights from the split
        text = (folder / "submission.yaml").read_text().replace("adapter: custom\n", "")
        (folder / "submission.yaml").write_text(text.replace("non-neural", "decoder"))
    problems = check_submission(folder).problems
    hits = [p for p in problems if p.field == field and says in p.message]
    assert hits, [(p.field, p.message) for p in problems]
    assert hits[0].fix  # every refusal says what to do
