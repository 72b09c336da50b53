"""The embedded ``pubchem-names`` set (leaderboard/data/pubchem_names.py): deterministic, pinned, consistent.

Builds run OPSIN (Java): about 10 s each. Without Java they skip, except in CI, where they fail.
"""

from __future__ import annotations

import csv
import json
import os
import shutil

import pytest

from evaluators.answers.opsin import names_to_smiles
from evaluators.datasets import DATASETS, file_sha256, load_dataset, load_records
from evaluators.notations.smiles import canonical_smiles
from leaderboard.data.prepare import DataError, prepare_dataset
from leaderboard.data.pubchem_names import HEAVY_ATOMS, REASONS, build_pubchem_names

NAME = "pubchem-names"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(data root, build_report.json)`` of one build through the product's path (prepare_dataset)."""
    if shutil.which("java") is None:
        message = "no `java` on PATH: OPSIN cannot run (Debian: openjdk-17-jre-headless)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    root = prepare_dataset(NAME, tmp_path_factory.mktemp("state"), log=lambda _line: None)
    return root, json.loads((root / NAME / "build_report.json").read_text())


def test_the_build_is_deterministic_and_matches_the_pinned_hash(built, tmp_path) -> None:
    root, _report = built
    first = root / NAME / "molecules.csv"
    assert file_sha256(first) == DATASETS.get(NAME).files[0].sha256
    again = tmp_path / "molecules.csv"
    assert build_pubchem_names(again) == DATASETS.get(NAME).files[0].sha256
    assert again.read_bytes() == first.read_bytes()
    assert (tmp_path / "build_report.json").read_bytes() == (root / NAME / "build_report.json").read_bytes()


def test_the_report_adds_up_and_matches_the_file(built) -> None:
    root, report = built
    records = load_records(NAME, root)
    assert report["kept"] == len(records) == report["target_size"] == 1000
    assert report["drawn"] == report["kept"] + sum(report["rejected"].values())
    assert set(report["rejected"]) == set(REASONS)
    assert report["molecules_sha256"] == file_sha256(root / NAME / "molecules.csv")
    assert report["acceptance"] == round(1000 / report["drawn"], 4)
    assert report["opsin_round_trip_rate"] > 0.95  # restored names: OPSIN reads ~99 % back
    assert report["source"]["rows"] == 71347 and report["versions"]["opsin"] == "2.9.0"


def test_every_kept_molecule_is_organic_single_and_its_name_parses_back(built) -> None:
    from rdkit import Chem

    root, _report = built
    records = load_records(NAME, root)
    assert [int(r["id"]) for r in records] == sorted(int(r["id"]) for r in records)  # by CID
    canonical = [canonical_smiles(r["smiles"]) for r in records]
    assert None not in canonical and len(set(canonical)) == len(records)
    for record in records:
        mol = Chem.MolFromSmiles(record["smiles"])
        assert "." not in record["smiles"] and HEAVY_ATOMS[0] <= mol.GetNumHeavyAtoms() <= HEAVY_ATOMS[1]
        assert "C" in {a.GetSymbol() for a in mol.GetAtoms()}
    # The pair is consistent by construction: OPSIN gives back the same structure, stereo included.
    assert names_to_smiles([r["iupac"] for r in records]) == canonical


def test_the_loader_reads_the_built_set(built) -> None:
    root, _report = built
    loaded = load_dataset(NAME, root)
    assert (len(loaded.molecules), len(loaded.skipped), len(loaded.records)) == (1000, 0, 1000)
    with (root / NAME / "molecules.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows[0].keys() == {"id", "smiles", "iupac", "formula"}
    first = loaded.records[0]
    assert first == {"id": "129", "smiles": "CC(C)CCC=O", "iupac": "4-methylpentanal"}
    assert rows[0]["formula"] == "C6H12O"


def test_without_java_the_build_is_a_data_error_naming_the_package(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no java
    with pytest.raises(DataError, match=r"^data set 'pubchem-names': cannot build.*openjdk-17-jre-headless"):
        prepare_dataset(NAME, tmp_path / "state", log=lambda _line: None)
    assert not (tmp_path / "state" / "data" / NAME / "molecules.csv").exists()
