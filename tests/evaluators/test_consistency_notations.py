"""T3's SELFIES and InChI pairs (issue 33 item 2) on real FreeSolv records.

The formula, Lipinski and hydration-free-energy questions are asked with the molecule as SELFIES and as
standard InChI, only where the string reads back as the record's molecule (stereo and tautomer included);
the other molecules are not asked so, are counted (``n_not_written``) and never scored as a disagreement.
The questions of the older representations (SMILES, name, randomized SMILES) are pinned word for word to
what track version 6 asked, and the two reference submissions answer the new phrases.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

import evaluators.datasets as datasets
from evaluators.asking import Question
from evaluators.asking.tasks import truth
from evaluators.datasets import load_records
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.consistency import COMPLETIONS, ConsistencyTrack

ROOT = Path(__file__).resolve().parents[2]
#: The tasks asked from SELFIES and InChI (translation and reaction are not: see evaluators.asking.tasks).
NEW_TASKS = ("formula", "lipinski", "hydration_free_energy")
OLD = ("smiles", "iupac", "randomized")
#: sha256 of the sorted ``key NUL prompt NUL budget NUL stops`` lines of the SMILES, name and randomized
#: questions on all 642 FreeSolv records (direct and chat model), measured with track version 6 before the
#: SELFIES and InChI pairs were added: those questions must stay word for word the same.
PINNED = {
    False: (7704, "55263b12b1f5fc1442fd03241ec336d05d577895d95cb7c8509104f54e80a239"),
    True: (7704, "209e5980c9fd932e0fca180d5146109398dee61b23cec954456fa331c48606af"),
}
#: FreeSolv molecules whose standard InChI reads back as another molecule (mobile-H tautomers …), measured
#: (tests/evaluators/test_representations.py: 617 of 642 read back exactly); every SELFIES reads back.
FREESOLV_NOT_INCHI = 25


@pytest.fixture(scope="module")
def freesolv(benchmark_data) -> list[dict[str, str]]:
    """Every FreeSolv record, from the data root the product prepares."""
    return load_records("freesolv", benchmark_data("freesolv"))


def _reads_back_by_inchi(smiles: str) -> bool:
    """Whether RDKit's standard InChI of ``smiles`` reads back as the same canonical SMILES (own code)."""
    mol = Chem.MolFromSmiles(smiles)
    back = Chem.MolFromInchi(Chem.MolToInchi(mol), logLevel=None)
    return back is not None and Chem.MolToSmiles(back) == Chem.MolToSmiles(mol)


@pytest.fixture(scope="module")
def sample(freesolv) -> list[dict[str, str]]:
    """30 FreeSolv records and every record whose InChI does not read back (small, and both kinds)."""
    keep = {r["id"] for r in freesolv[:30]} | {
        r["id"] for r in freesolv if not _reads_back_by_inchi(r["smiles"])
    }
    return [r for r in freesolv if r["id"] in keep]


def _digest(questions: list[Question]) -> tuple[int, str]:
    lines = sorted(
        f"{q.key}\x00{q.request.prompt}\x00{q.request.max_new_tokens}\x00{'|'.join(q.request.stop)}"
        for q in questions
        if q.representation in OLD
    )
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.mark.parametrize("chat", [False, True])
def test_the_older_representations_are_asked_word_for_word_as_before(freesolv, chat: bool) -> None:
    track = ConsistencyTrack.for_model(TrackOptions(), chat=chat)
    assert _digest(track.questions(freesolv)) == PINNED[chat]


def test_selfies_and_inchi_are_asked_where_they_read_back_as_the_molecule(freesolv) -> None:
    from evaluators.notations.representations import get_representation

    questions = ConsistencyTrack(TrackOptions()).questions(freesolv)
    by_record = {r["id"]: r for r in freesolv}
    asked: dict[tuple[str, str], set[str]] = {}
    for q in questions:
        asked.setdefault((q.task.name, q.representation), set()).add(q.item)
    everyone = set(by_record)
    not_inchi = {i for i, r in by_record.items() if not _reads_back_by_inchi(r["smiles"])}
    assert len(not_inchi) == FREESOLV_NOT_INCHI
    for task in NEW_TASKS:
        assert asked[(task, "selfies")] == everyone
        assert asked[(task, "inchi")] == everyone - not_inchi
    assert ("translation", "selfies") not in asked and ("translation", "inchi") not in asked
    for q in questions:
        if q.representation in ("selfies", "inchi"):
            shown = get_representation(q.representation).read(q.shown)
            assert shown == canonical_smiles(by_record[q.item]["smiles"]), q.key
            assert q.kind == q.task.answer["smiles"]  # the same kind of answer as from a SMILES
    assert next(q for q in questions if q.representation == "inchi").shown.startswith("InChI=1S/")


# ----------------------------------------------------------------------------------------- scoring


def _result() -> TrackResult:
    return TrackResult("m", "consistency", 1, "freesolv", "0" * 8, "0" * 8, 0, rows=(), counts={})


def _score(tmp_path: Path, monkeypatch, records, answers: Callable[[list[Question]], list[str]]) -> dict:
    """Write ``answers(questions)`` as the completions, score them on the host, return rows by key."""
    monkeypatch.setattr(
        datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in records]
    )
    track = ConsistencyTrack(TrackOptions())
    questions = track.questions(records)
    out = tmp_path / "out"
    out.mkdir(parents=True)
    lines = [json.dumps({"id": q.request.id, "completion": text, "finish_reason": "stop"})
             for q, text in zip(questions, answers(questions), strict=True)]  # fmt: skip
    (out / COMPLETIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    scored = track.score(_result(), out_dir=out, data_dir=tmp_path)
    return {(dict(r.dims)["task"], dict(r.dims)["pair"], dict(r.dims)["representation"], r.metric): r.value
            for r in scored.rows}  # fmt: skip


def _oracle(records) -> Callable[[list[Question]], list[str]]:
    by_record = {r["id"]: r for r in records}

    def answer(q: Question) -> str:
        record = by_record[q.item]
        if q.task.name == "translation":
            return record["iupac"] if q.representation != "iupac" else canonical_smiles(record["smiles"])
        if q.task.name == "formula":
            return rdMolDescriptors.CalcMolFormula(Chem.MolFromSmiles(record["smiles"]))
        if q.task.name == "lipinski":
            return "yes" if truth(q.task, record) else "no"
        return record["value"]

    return lambda questions: [answer(q) for q in questions]


def test_an_oracle_is_consistent_on_the_new_pairs_and_the_unwritten_are_left_out(
    tmp_path, monkeypatch, sample
) -> None:
    rows = _score(tmp_path, monkeypatch, sample, _oracle(sample))
    n_not = sum(not _reads_back_by_inchi(r["smiles"]) for r in sample)
    assert n_not == FREESOLV_NOT_INCHI
    for task in NEW_TASKS:
        assert rows[(task, "-", "selfies", "n_not_written")] == 0
        assert rows[(task, "-", "selfies", "n_items")] == len(sample)
        assert rows[(task, "-", "inchi", "n_not_written")] == n_not
        assert rows[(task, "-", "inchi", "n_items")] == len(sample) - n_not
        assert (task, "-", "smiles", "n_not_written") not in rows
    for pair in ("smiles-selfies", "smiles-inchi"):
        # A molecule not written as InChI is no item of the pair: a disagreement would bring this below 1.
        assert rows[("formula", pair, "-", "consistency")] == 1.0
        assert rows[("formula", pair, "-", "kappa_consistency")] == 1.0
        assert rows[("lipinski", pair, "-", "consistency")] == 1.0
        assert rows[("hydration_free_energy", pair, "-", "numeric_agreement")] == 1.0
        assert ("translation", pair, "-", "consistency") not in rows
    for rep in ("selfies", "inchi"):
        assert rows[("formula", "-", rep, "accuracy")] == 1.0
        assert rows[("lipinski", "-", rep, "accuracy")] == 1.0
        assert rows[("hydration_free_energy", "-", rep, "mse_error")] == 0.0
    # The older pairs are scored as before: every molecule, less the names OPSIN cannot verify.
    assert rows[("formula", "smiles-iupac", "-", "kappa_consistency")] == 1.0
    named = rows[("formula", "-", "iupac", "n_items")] + rows[("formula", "-", "iupac", "n_truth_excluded")]
    assert named == len(sample) and ("formula", "-", "iupac", "n_not_written") not in rows


def _submission(monkeypatch, folder: str, module: str):
    """Load a reference submission's module from its folder (as its container would)."""
    path = ROOT / "submissions" / folder / module
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(f"{folder.replace('-', '_')}_under_test", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def test_the_constant_reference_is_at_chance_on_the_new_pairs(tmp_path, monkeypatch, sample) -> None:
    constant = _submission(monkeypatch, "constant-baseline", "constant.py").ConstantAnswerer(None)
    asked: dict[str, str] = {}

    def answers(questions: list[Question]) -> list[str]:
        texts = [c.text for c in constant.generate([q.request for q in questions])]
        asked.update({q.key: t for q, t in zip(questions, texts, strict=True)})
        return texts

    rows = _score(tmp_path, monkeypatch, sample, answers)
    # Its constant answers, and the molecule copied (a SELFIES or an InChI is no formula: unusable).
    assert {asked[k] for k in asked if k.startswith("lipinski|")} == {"yes"}
    assert {asked[k] for k in asked if k.startswith("hydration_free_energy|")} == {"0"}
    assert {asked[k][:9] for k in asked if k.startswith("formula|inchi|")} == {"InChI=1S/"}
    assert all(asked[k].startswith("[") for k in asked if k.startswith("formula|selfies|"))
    for pair in ("smiles-selfies", "smiles-inchi"):
        assert rows[("lipinski", pair, "-", "consistency")] == 1.0
        assert rows[("lipinski", pair, "-", "kappa_consistency")] == 0.0
        assert rows[("hydration_free_energy", pair, "-", "numeric_agreement")] == 0.0
        assert rows[("formula", pair, "-", "consistency")] == 0.0
    for rep in ("selfies", "inchi"):
        assert rows[("formula", "-", rep, "missing_share")] == 1.0


def test_the_tool_reference_answers_the_selfies_and_inchi_questions(tmp_path, monkeypatch, sample) -> None:
    tools = _submission(monkeypatch, "rdkit-opsin-tools", "tools.py")
    from evaluators.answers.opsin import names_to_smiles

    # Its OPSIN call on the host's Java (the image bundles its own JRE).
    monkeypatch.setattr(
        tools,
        "_names_to_mols",
        lambda names: [Chem.MolFromSmiles(s) if s else None for s in names_to_smiles(names)],
    )
    adapter = tools.ToolAnswerer(None)
    for q in ConsistencyTrack(TrackOptions()).questions(sample[:5]):
        if q.representation in ("selfies", "inchi") and q.task.name != "hydration_free_energy":
            task, how, text = tools._parse(q.request.prompt)
            assert (task, how, text) == (q.task.name, q.representation, q.shown)

    rows = _score(tmp_path, monkeypatch, sample,
                  lambda qs: [c.text for c in adapter.generate([q.request for q in qs])])  # fmt: skip
    for rep in ("smiles", "selfies", "inchi"):
        assert rows[("formula", "-", rep, "accuracy")] == 1.0, rep
        assert rows[("lipinski", "-", rep, "accuracy")] == 1.0, rep
        assert rows[("hydration_free_energy", "-", rep, "missing_share")] == 1.0  # no tool: abstains
    for pair in ("smiles-selfies", "smiles-inchi"):
        assert rows[("formula", pair, "-", "kappa_consistency")] == 1.0
        assert rows[("lipinski", pair, "-", "consistency")] == 1.0


def test_a_set_none_of_whose_inchis_reads_back_has_no_inchi_pair_only_the_count(
    tmp_path, monkeypatch, sample
) -> None:
    unwritten = [r for r in sample if not _reads_back_by_inchi(r["smiles"])]
    rows = _score(tmp_path, monkeypatch, unwritten, _oracle(unwritten))
    for task in NEW_TASKS:
        assert rows[(task, "-", "inchi", "n_not_written")] == len(unwritten)
        assert (task, "-", "inchi", "n_items") not in rows
        assert not [k for k in rows if k[0] == task and k[1] == "smiles-inchi"]
        assert rows[(task, "-", "selfies", "n_items")] == len(unwritten)
