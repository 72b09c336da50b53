"""The consistency track (T3): what it asks inside the box, and how the host scores what comes back.

The host half is exercised on small real molecules with OPSIN and RDKit: an oracle that answers every
question with the ground truth must score perfectly, constant answers must sit exactly at chance, and a
hostile ``completions.jsonl`` must never crash the scoring or reach outside ``/out``.
"""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

import evaluators.datasets as datasets
from evaluators.asking.tasks import TASKS, truth
from evaluators.notations.representations import get_representation
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.consistency import COMPLETIONS, ConsistencyTrack, read_completions

RECORDS = [
    {"id": "1", "smiles": "CCO", "iupac": "ethanol", "value": "-5.0"},
    {"id": "2", "smiles": "CC(=O)O", "iupac": "acetic acid", "value": "-6.7"},
    {"id": "3", "smiles": "c1ccccc1", "iupac": "benzene", "value": "-0.9"},
    {"id": "4", "smiles": "CC(=O)Oc1ccccc1C(=O)O", "iupac": "2-acetyloxybenzoic acid", "value": "-9.9"},
    {"id": "5", "smiles": "C" * 40, "iupac": "tetracontane", "value": "-4.0"},  # MW > 500, logP > 5
]
TRACK = ConsistencyTrack(TrackOptions())


def _result() -> TrackResult:
    return TrackResult("oracle", "consistency", 1, "toy", "0" * 8, "0" * 8, 0, rows=(), counts={"n_items": 5})


def _score(tmp_path: Path, monkeypatch, answer) -> tuple[dict, Path]:
    """Write one completion per question (``answer(question) -> str``), score, return rows by key."""
    monkeypatch.setattr(
        datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in RECORDS]
    )
    out = tmp_path / "out"
    out.mkdir(parents=True, exist_ok=True)
    with (out / COMPLETIONS).open("w", encoding="utf-8") as handle:
        for q in TRACK.questions(RECORDS):
            handle.write(
                json.dumps({"id": q.request.id, "completion": answer(q), "finish_reason": "stop"}) + "\n"
            )
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    rows = {(dict(r.dims)["task"], dict(r.dims)["pair"], dict(r.dims)["representation"], r.metric): r.value
            for r in scored.rows}  # fmt: skip
    return rows, out


def _oracle(q) -> str:
    record = next(r for r in RECORDS if r["id"] == q.item)
    mol = Chem.MolFromSmiles(record["smiles"])
    if q.task.name == "translation":
        return record["iupac"] if q.representation != "iupac" else Chem.MolToSmiles(mol)
    if q.task.name == "formula":
        return f"The formula is {rdMolDescriptors.CalcMolFormula(mol)}"
    if q.task.name == "lipinski":
        return "Yes." if truth(q.task, record) else "No."
    return f"{record['value']} kcal/mol"


def test_questions_differ_only_in_how_the_molecule_is_written() -> None:
    questions = TRACK.questions(RECORDS)
    tasks = {q.task.name for q in questions}
    assert tasks == {
        "translation",
        "formula",
        "lipinski",
        "hydration_free_energy",
    }  # no reactants: no reaction
    # Four tasks in SMILES, name and randomized SMILES; three of them also in SELFIES and InChI (translation
    # asks for "the other notation", name ↔ SMILES).
    assert len(questions) == (4 * 3 + 3 * 2) * len(RECORDS)
    by = {(q.task.name, q.representation, q.item): q for q in questions}
    for task in tasks - {"translation"}:
        for rep, phrase in (("selfies", "SELFIES"), ("inchi", "InChI")):
            other = by[(task, rep, "4")]
            assert by[(task, "smiles", "4")].request.prompt.replace(
                f"with the SMILES {by[(task, 'smiles', '4')].shown}", "X"
            ) == other.request.prompt.replace(f"with the {phrase} {other.shown}", "X")
    for task in tasks:
        for item in ("1", "4"):
            smiles, iupac = by[(task, "smiles", item)], by[(task, "iupac", item)]
            assert smiles.request.prompt.replace(f"with the SMILES {smiles.shown}", "X") == (
                iupac.request.prompt.replace(f"named {iupac.shown}", "X")
            )
            assert smiles.request.max_new_tokens == iupac.request.max_new_tokens
    # The randomized SMILES is another string of the same molecule, the same one on every run.
    for item in ("1", "2", "4", "5"):
        randomized = by[("formula", "randomized", item)].shown
        assert Chem.MolToSmiles(Chem.MolFromSmiles(randomized)) == by[("formula", "smiles", item)].shown
    assert [q.shown for q in questions] == [
        q.shown for q in ConsistencyTrack(TrackOptions()).questions(RECORDS)
    ]
    assert by[("formula", "randomized", "4")].shown != by[("formula", "smiles", "4")].shown


def test_an_oracle_is_right_and_consistent_everywhere(tmp_path, monkeypatch) -> None:
    rows, out = _score(tmp_path, monkeypatch, _oracle)
    for task in ("translation", "formula", "lipinski"):
        for rep in ("smiles", "iupac", "randomized"):
            assert rows[(task, "-", rep, "accuracy")] == 1.0, (task, rep)
            assert rows[(task, "-", rep, "missing_share")] == 0.0
        for pair in ("smiles-iupac", "smiles-randomized"):
            assert rows[(task, pair, "-", "consistency")] == 1.0
            # Nothing is wrong on both sides: false consistency is undefined, so it is not reported.
            assert (task, pair, "-", "false_consistency") not in rows
    # Lipinski: 4 of 5 pass, so two random answers agree with probability (4/5)² + (1/5)².
    assert rows[("lipinski", "smiles-iupac", "-", "chance_consistency")] == pytest.approx(0.68)
    assert rows[("lipinski", "smiles-iupac", "-", "adjusted_consistency")] == pytest.approx(0.32)
    # The headlines: perfect agreement is 1 whatever the label balance or the numbers' scale.
    assert rows[("lipinski", "smiles-iupac", "-", "kappa_consistency")] == 1.0
    assert rows[("hydration_free_energy", "smiles-iupac", "-", "numeric_agreement")] == 1.0
    assert rows[("hydration_free_energy", "-", "iupac", "mse_error")] == 0.0
    assert rows[("hydration_free_energy", "smiles-iupac", "-", "mse_consistency")] == 0.0
    # The raw strings of a name and of a SMILES answer differ: the paper's string match says 0.
    assert rows[("translation", "smiles-iupac", "-", "raw_agreement")] == 0.0
    with gzip.open(out / "answers.csv.gz", "rt", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == 90 and {r["correct"] for r in table if r["task"] != "hydration_free_energy"} == {"1"}


def test_a_reasoning_oracle_scores_as_the_terse_one_and_the_table_names_the_rule(
    tmp_path, monkeypatch
) -> None:
    """The answer protocol: reasoning first, then the marked last line, reads exactly as a terse answer."""
    terse, _ = _score(tmp_path / "terse", monkeypatch, _oracle)

    def reasoning(q) -> str:
        plain = _oracle(q).removeprefix("The formula is ").removesuffix(" kcal/mol").rstrip(".")
        return f"\n\nLet me work through this: 2 rings, 3 atoms, -1.0 is not it.\n\nAnswer: {plain}"

    rows, out = _score(tmp_path / "reasoning", monkeypatch, reasoning)
    assert rows == terse
    with gzip.open(out / "answers.csv.gz", "rt", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert {r["rule"] for r in table} == {"answer-line"}
    refusing = lambda q: "I cannot tell." if q.item == "1" else _oracle(q)  # noqa: E731
    _, out = _score(tmp_path / "mixed", monkeypatch, refusing)
    with gzip.open(out / "answers.csv.gz", "rt", encoding="utf-8") as handle:
        rules = {(r["id"], r["rule"]) for r in csv.DictReader(handle)}
    assert ("1", "none") in rules and not any(i == "1" and rule != "none" for i, rule in rules)


def test_constant_answers_are_consistent_but_at_chance(tmp_path, monkeypatch) -> None:
    rows, _ = _score(tmp_path, monkeypatch, lambda q: "yes" if q.task.name == "lipinski" else "0")
    assert rows[("lipinski", "smiles-iupac", "-", "consistency")] == 1.0
    assert rows[("lipinski", "smiles-iupac", "-", "adjusted_consistency")] == 0.0
    assert rows[("hydration_free_energy", "smiles-iupac", "-", "mse_adjusted")] == 0.0
    assert rows[("lipinski", "smiles-iupac", "-", "kappa_consistency")] == 0.0
    assert rows[("hydration_free_energy", "smiles-iupac", "-", "numeric_agreement")] == 0.0
    # "0" is no formula and no molecule: unusable everywhere, and never consistent with itself.
    assert rows[("formula", "-", "smiles", "missing_share")] == 1.0
    assert rows[("formula", "smiles-iupac", "-", "consistency")] == 0.0


def test_a_hostile_completions_file_is_read_as_data(tmp_path, monkeypatch) -> None:
    questions = TRACK.questions(RECORDS)
    ids = [q.request.id for q in questions]
    path = tmp_path / COMPLETIONS
    lines = [
        "{not json",
        json.dumps({"id": ids[0], "completion": "first"}),
        json.dumps({"id": ids[0], "completion": "second"}),  # a repeated id: the first one counts
        json.dumps({"id": "translation|smiles|999", "completion": "x"}),  # not asked
        json.dumps({"id": ids[1], "completion": 42}),
        json.dumps([1, 2, 3]),
        "[" * 100_000,  # deep nesting, and far longer than any real line
        json.dumps({"id": ids[2], "completion": "y" * 50_000}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts, malformed = read_completions(path, set(ids))
    assert texts[ids[0]] == "first" and len(texts[ids[2]]) == 4000 and ids[1] not in texts
    assert malformed == 5  # the repeated id is not malformed, only ignored


def test_the_answer_table_never_writes_through_a_link(tmp_path, monkeypatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "host-file.txt"
    victim.write_text("precious", encoding="utf-8")
    (out / "answers.csv.gz").symlink_to(victim)  # left by a hostile run
    _score(tmp_path, monkeypatch, _oracle)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (out / "answers.csv.gz").is_symlink()


def test_tasks_declare_their_truth() -> None:
    record = RECORDS[3]
    truths = {t.name: truth(t, record) for t in TASKS if set(t.needs) <= set(record)}
    assert truths == {
        "translation": "CC(=O)Oc1ccccc1C(=O)O",
        "formula": "C9H8O4",
        "lipinski": True,
        "hydration_free_energy": -9.9,
    }


def test_a_reaction_answer_that_repeats_the_question_is_no_prediction(tmp_path, monkeypatch) -> None:
    reactions = [
        {"id": "r1", "smiles": "CC(=O)OCC", "reactants_smiles": "CC(=O)O.OCC", "reactants_iupac":
         "acetic acid.ethanol", "product_smiles": "CC(=O)OCC", "product_iupac": "ethyl acetate"},
        {"id": "r2", "smiles": "CCOC(C)=O", "reactants_smiles": "CCO.CC(=O)Cl", "reactants_iupac":
         "ethanol.acetyl chloride", "product_smiles": "CCOC(C)=O", "product_iupac": "ethyl acetate"},
    ]  # fmt: skip
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: reactions)
    out = tmp_path / "out"
    out.mkdir()
    questions = TRACK.questions(reactions)
    assert {q.task.name for q in questions} == {"reaction", "reaction_own_notation", "retrosynthesis",
                                                "retrosynthesis_own_notation"}
    echo = {q.request.id: q.shown if q.item == "r1" else q.shown.split(".")[0] for q in questions}
    lines = [json.dumps({"id": i, "completion": text}) for i, text in echo.items()]
    (out / COMPLETIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = {(dict(r.dims)["task"], dict(r.dims)["pair"], dict(r.dims)["representation"], r.metric): r.value
            for r in TRACK.score(_result(), out_dir=out, data_dir=tmp_path).rows}  # fmt: skip
    # Copying the reactants (all of them, or one) back is invariant under any SMILES rewriting; it must
    # not count as a consistent prediction — nor, in the reactants' own notation, a reactant's name.
    for task in ("reaction", "reaction_own_notation", "retrosynthesis", "retrosynthesis_own_notation"):
        assert rows[(task, "-", "smiles", "missing_share")] == 1.0  # retrosynthesis: the product back
        assert rows[(task, "smiles-randomized", "-", "consistency")] == 0.0
    assert rows[("reaction_own_notation", "-", "iupac", "missing_share")] == 1.0
    assert rows[("retrosynthesis_own_notation", "-", "iupac", "missing_share")] == 1.0  # the product's name


#: Two small reactions with names (issue 33's reaction questions).
REACTIONS = [
    {"id": "r1", "smiles": "CC(=O)OCC", "reactants_smiles": "CC(=O)O.OCC", "reactants_iupac":
     "acetic acid.ethanol", "product_smiles": "CC(=O)OCC", "product_iupac": "ethyl acetate"},
    {"id": "r2", "smiles": "CC(=O)Nc1ccccc1", "reactants_smiles": "CC(=O)Cl.Nc1ccccc1",
     "reactants_iupac": "acetyl chloride.aniline", "product_smiles": "CC(=O)Nc1ccccc1",
     "product_iupac": "N-phenylacetamide"},
]  # fmt: skip


def _scored_reactions(tmp_path: Path, answer) -> dict:
    """Score ``answer(question)`` for every question on :data:`REACTIONS` (``load_records`` patched)."""
    out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
    out.mkdir()
    lines = [json.dumps({"id": q.request.id, "completion": answer(q)}) for q in TRACK.questions(REACTIONS)]
    (out / COMPLETIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = TRACK.score(_result(), out_dir=out, data_dir=tmp_path).rows
    return {(*(v for _, v in r.dims), r.metric): r.value for r in rows}


def test_the_product_in_the_reactants_notation_is_read_back_to_a_structure(tmp_path, monkeypatch) -> None:
    """Issue 33 item 4 (the study's eq. 4): names in → a name out, SMILES in → a SMILES out, compared as
    structures; a SMILES given where the name was asked is not what was asked (unreadable as a name)."""
    reactions = REACTIONS
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: reactions)
    by_id = {r["id"]: r for r in reactions}
    questions = [q for q in TRACK.questions(reactions) if q.task.name == "reaction_own_notation"]
    assert {q.representation: q.kind for q in questions} == {"smiles": "smiles", "iupac": "name",
                                                             "randomized": "smiles"}  # fmt: skip
    assert all("IUPAC name if they are given as IUPAC names" in q.request.prompt for q in questions)

    def scored(answer) -> dict:
        return _scored_reactions(tmp_path, answer)

    own = scored(lambda q: by_id[q.item]["product_iupac" if q.kind == "name" else "product_smiles"])
    assert own[("reaction_own_notation", "-", "iupac", "accuracy")] == 1.0
    assert own[("reaction_own_notation", "smiles-iupac", "-", "consistency")] == 1.0
    smiles_only = scored(lambda q: by_id[q.item]["product_smiles"])
    assert smiles_only[("reaction_own_notation", "-", "iupac", "missing_share")] == 1.0
    assert smiles_only[("reaction_own_notation", "smiles-iupac", "-", "consistency")] == 0.0
    assert smiles_only[("reaction", "smiles-iupac", "-", "consistency")] == 1.0  # asked for SMILES there


@pytest.mark.parametrize("absurd", ["1e14", "-1e9", "34"])
def test_a_number_outside_the_plausible_range_is_invalid_inconsistent_and_wrong(
    tmp_path, monkeypatch, absurd
) -> None:
    """Issue 28: ``1e14`` kcal/mol is no answer (−55 … 33): κ_num −1, charged in MSE, empty in the table."""
    rows, out = _score(tmp_path, monkeypatch, lambda q: absurd if q.task.numeric else _oracle(q))
    assert rows[("hydration_free_energy", "-", "smiles", "missing_share")] == 1.0
    assert rows[("hydration_free_energy", "smiles-iupac", "-", "numeric_agreement")] == -1.0
    # Nothing valid to compare: the paper's MSE forms are absent, not a huge number.
    assert ("hydration_free_energy", "smiles-iupac", "-", "mse_adjusted") not in rows
    # Charged the worst plausible error: truth −5.0 → 50 kcal/mol, etc.; bounded, never dropped.
    charged = rows[("hydration_free_energy", "-", "smiles", "mse_error_charged")]
    worst = [max(v + 55.0, 33.0 - v) ** 2 for v in (-5.0, -6.7, -0.9, -9.9, -4.0)]
    assert charged == pytest.approx(sum(worst) / 5)
    with gzip.open(out / "answers.csv.gz", "rt", encoding="utf-8") as handle:
        table = [r for r in csv.DictReader(handle) if r["task"] == "hydration_free_energy"]
    assert {r["answer"] for r in table} == {""}


def test_one_invalid_side_makes_the_pair_maximally_inconsistent(tmp_path, monkeypatch) -> None:
    """The oracle on SMILES, an absurd number on the name: below the constant's 0, not ignored."""
    def answer(q):
        return "1e14" if q.task.numeric and q.representation == "iupac" else _oracle(q)

    rows, _ = _score(tmp_path, monkeypatch, answer)
    assert rows[("hydration_free_energy", "smiles-iupac", "-", "numeric_agreement")] == -1.0
    assert rows[("hydration_free_energy", "smiles-randomized", "-", "numeric_agreement")] == 1.0


def test_freesolv_lipinski_is_declared_flat_and_not_ranked() -> None:
    """Every FreeSolv molecule passes the rule of five: the oracle equals the constant "yes" there."""
    import pandas as pd

    from leaderboard.ranking.headline import headline_rows

    flat = dict(ConsistencyTrack.headline[0].flat)
    assert set(flat) == {f"freesolv/lipinski/smiles-{b}" for b in ("iupac", "randomized", "selfies", "inchi")}
    assert "642 of 642" in flat["freesolv/lipinski/smiles-iupac"]
    rows = pd.DataFrame([
        {"submission": "m", "track": "consistency", "dataset": ds, "task": task, "pair": "smiles-iupac",
         "representation": "-", "metric": "kappa_consistency", "value": 0.5}
        for ds, task in (("freesolv", "lipinski"), ("freesolv", "formula"),
                         ("smiles-iupac-pairs", "lipinski"))
    ])  # fmt: skip
    ranked = set(headline_rows(rows)["criterion"])
    assert ranked == {"freesolv/formula/smiles-iupac", "smiles-iupac-pairs/lipinski/smiles-iupac"}


def test_retrosynthesis_asks_from_the_product_and_compares_sets_of_molecules(tmp_path, monkeypatch) -> None:
    """Issue 33 (T3 retrosynthesis): the product shown (SMILES, its name, a randomized SMILES), the answers
    compared as sets — the same reactants in another order and writing agree — and accuracy against what
    the record lists as going in (reactants and reagents together)."""
    reactions = REACTIONS
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: reactions)
    by_id = {r["id"]: r for r in reactions}
    retro = [q for q in TRACK.questions(reactions) if q.task.name == "retrosynthesis"]
    assert {q.representation for q in retro} == {"smiles", "iupac", "randomized", "selfies", "inchi"}
    for q in retro:  # the product, never the reactants, is shown
        record = by_id[q.item]
        shown = record["product_iupac"] if q.representation == "iupac" else q.shown
        assert shown in q.request.prompt and record["reactants_smiles"] not in q.request.prompt
        if q.representation in ("smiles", "selfies", "inchi"):
            read = get_representation(q.representation).read(q.shown)
            assert read == Chem.MolToSmiles(Chem.MolFromSmiles(record["product_smiles"]))

    def scored(answer) -> dict:
        return _scored_reactions(tmp_path, answer)

    # The recorded set, written in the other order from the name: still the same answer, and right.
    def recorded(q) -> str:
        parts = by_id[q.item]["reactants_smiles"].split(".")
        return ".".join(reversed(parts) if q.representation == "iupac" else parts)

    right = scored(recorded)
    assert right[("retrosynthesis", "-", "iupac", "accuracy")] == 1.0
    for pair in ("smiles-iupac", "smiles-randomized", "smiles-selfies", "smiles-inchi"):
        assert right[("retrosynthesis", pair, "-", "consistency")] == 1.0
    # One reactant only: consistent when the same from both writings, but not the recorded set.
    first = scored(lambda q: by_id[q.item]["reactants_smiles"].split(".")[0])
    assert first[("retrosynthesis", "smiles-iupac", "-", "consistency")] == 1.0
    assert first[("retrosynthesis", "-", "smiles", "accuracy")] == 0.0


def test_retrosynthesis_in_the_products_notation_reads_every_name_back(tmp_path, monkeypatch) -> None:
    """Issue 33 item 4: from a name, the reactants and reagents as IUPAC names (any order, '.'-joined, in a
    list or a sentence), each read back by OPSIN and compared as a set; SMILES where names were asked are not
    what was asked (unreadable as names)."""
    reactions = REACTIONS
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: reactions)
    by_id = {r["id"]: r for r in reactions}
    questions = [q for q in TRACK.questions(reactions) if q.task.name == "retrosynthesis_own_notation"]
    assert {q.representation: q.kind for q in questions} == {"smiles": "smiles", "iupac": "names",
                                                             "randomized": "smiles"}  # fmt: skip
    assert all("their IUPAC names if it is given as an IUPAC name" in q.request.prompt for q in questions)

    def own(q) -> str:
        record = by_id[q.item]
        if q.representation != "iupac":
            return record["reactants_smiles"]
        names = list(reversed(record["reactants_iupac"].split(".")))
        return "\n".join(f"- {n}" for n in names) if q.item == "r1" else f"Answer: {' and '.join(names)}"

    right = _scored_reactions(tmp_path, own)
    assert right[("retrosynthesis_own_notation", "-", "iupac", "accuracy")] == 1.0
    assert right[("retrosynthesis_own_notation", "smiles-iupac", "-", "consistency")] == 1.0
    smiles_only = _scored_reactions(tmp_path, lambda q: by_id[q.item]["reactants_smiles"])
    assert smiles_only[("retrosynthesis_own_notation", "-", "iupac", "missing_share")] == 1.0
    assert smiles_only[("retrosynthesis_own_notation", "smiles-iupac", "-", "consistency")] == 0.0
    # One name fewer is another set: consistent with nothing the SMILES side said, and not right.
    short = _scored_reactions(tmp_path, lambda q: own(q) if q.representation != "iupac"
                              else by_id[q.item]["reactants_iupac"].split(".")[0])  # fmt: skip
    assert short[("retrosynthesis_own_notation", "-", "iupac", "accuracy")] == 0.0
    assert short[("retrosynthesis_own_notation", "smiles-iupac", "-", "consistency")] == 0.0
