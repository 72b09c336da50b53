"""The prompt-robustness track (T4): what it asks, and how the host scores a model across wordings.

Every test runs the host half on small real molecules (RDKit; OPSIN through Java for names): an oracle
must score perfectly under every template, a model that only understands some wordings must get exactly
the hand-computed statistics over templates, messy but right completions must be read as right, and a
hostile ``completions.jsonl`` must neither crash the scoring nor reach outside ``out_dir``.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import math
import random
from pathlib import Path

import pytest
from rdkit import Chem
from rdkit.Chem import Descriptors, rdMolDescriptors

import evaluators.datasets as datasets
from evaluators.adapters import GenerativeAdapter
from evaluators.answers.ranges import invalid_error
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.prompt_robustness import (
    ANSWERS,
    COMPLETIONS,
    ITEMS_PER_DATASET,
    PromptRobustnessTrack,
    sample,
)
from evaluators.tracks.prompt_robustness.scores import over_templates
from evaluators.tracks.prompt_robustness.templates import load_template_sets

MOLECULES = [
    {"id": "1", "smiles": "CCO", "iupac": "ethanol", "value": "-5.0"},
    {"id": "2", "smiles": "CC(=O)O", "iupac": "acetic acid", "value": "-6.7"},
    {"id": "3", "smiles": "c1ccccc1", "iupac": "benzene", "value": "-0.9"},
    {"id": "4", "smiles": "CC(=O)Oc1ccccc1C(=O)O", "iupac": "2-acetyloxybenzoic acid", "value": "-9.9"},
    {"id": "5", "smiles": "C" * 40, "iupac": "tetracontane", "value": "-4.0"},  # MW > 500, logP > 5: no
]
REACTIONS = [
    {"id": "r1", "reactants_smiles": "CC(=O)O.OCC", "reactants_iupac": "acetic acid.ethanol",
     "product_smiles": "CC(=O)OCC"},
    {"id": "r2", "reactants_smiles": "CCO.CC(=O)Cl", "reactants_iupac": "ethanol.acetyl chloride",
     "product_smiles": "CCOC(C)=O"},
    {"id": "r3", "reactants_smiles": "c1ccccc1.O=[N+]([O-])O", "reactants_iupac": "benzene.nitric acid",
     "product_smiles": "O=[N+]([O-])c1ccccc1"},
]  # fmt: skip
TRACK = PromptRobustnessTrack(TrackOptions())
TEMPLATES = ("t1", "t2", "t3", "t4", "t5", "t6")
#: (task, representation) pairs each data set poses.
MOLECULE_CELLS = {
    ("formula", "smiles"), ("formula", "iupac"), ("formula", "selfies"), ("formula", "inchi"),
    ("molecular_weight", "smiles"), ("molecular_weight", "iupac"), ("molecular_weight", "selfies"),
    ("molecular_weight", "inchi"), ("lipinski", "smiles"), ("lipinski", "iupac"), ("lipinski", "selfies"),
    ("lipinski", "inchi"),
    ("hydration_free_energy", "smiles"), ("hydration_free_energy", "iupac"),
    ("hydration_free_energy", "selfies"), ("hydration_free_energy", "inchi"), ("iupac_to_smiles", "iupac"),
    ("smiles_to_iupac", "smiles"),
}  # fmt: skip
REACTION_CELLS = {("forward_reaction", rep) for rep in ("smiles", "iupac", "formula")}
NUMERIC = {"molecular_weight", "hydration_free_energy"}
#: Cells whose answers are structures (Tanimoto similarities).
STRUCTURES = {("iupac_to_smiles", "iupac"), ("smiles_to_iupac", "smiles"), ("forward_reaction", "smiles"),
              ("forward_reaction", "iupac")}  # fmt: skip


#: The tasks this file's hand-computed cases are written for (the first ten of issue 13); the recognition,
#: classification and relational tasks added for issue 33 have their own cases in
#: test_prompt_robustness_tasks.py.
FIRST_TASKS = ("formula", "molecular_weight", "lipinski", "hydration_free_energy", "aqueous_solubility",
               "iupac_to_smiles", "smiles_to_iupac", "forward_reaction")  # fmt: skip


@pytest.fixture(autouse=True)
def _first_tasks(monkeypatch):
    """Pose only :data:`FIRST_TASKS` (the track asks every task a data set can pose)."""
    import evaluators.tracks.prompt_robustness.asked as asked

    monkeypatch.setattr(asked, "SETS", tuple(s for s in asked.SETS if s.task in FIRST_TASKS))


def _result() -> TrackResult:
    return TrackResult("model", "prompt_robustness", 1, "toy", "0" * 8, "0" * 8, 0, rows=(), counts={})


def _record(records, item: str) -> dict[str, str]:
    return next(r for r in records if r["id"] == item)


def _write(out: Path, lines) -> None:
    out.mkdir(exist_ok=True)
    (out / COMPLETIONS).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _serve(monkeypatch, records) -> None:
    """Make ``load_records`` return (copies of) ``records``, whatever the data set."""
    monkeypatch.setattr(
        datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in records]
    )


def _score(tmp_path: Path, monkeypatch, records, answer, *, out: Path | None = None):
    """Write ``answer(question)`` for every question, score on the host; return (rows by key, out, result)."""
    _serve(monkeypatch, records)
    out = out or tmp_path / "out"
    _write(out, [json.dumps({"id": q.request.id, "completion": answer(q), "finish_reason": "stop"})
                 for q in TRACK.questions(records)])  # fmt: skip
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    return _by_key(scored), out, scored


def _by_key(scored: TrackResult) -> dict[tuple[str, str, str, str], float]:
    rows = {}
    for r in scored.rows:
        dims = dict(r.dims)
        rows[(dims["task"], dims["representation"], dims["template"], r.metric)] = r.value
    return rows


def _table(out: Path) -> list[dict[str, str]]:
    with gzip.open(out / ANSWERS, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _truth(task: str, record: dict[str, str]) -> float:
    """The true number of a numeric task (RDKit average-mass MolWt; the record's measured value)."""
    if task == "molecular_weight":
        return float(Descriptors.MolWt(Chem.MolFromSmiles(record["smiles"])))
    return float(record["value"])


def _truth_text(q, records) -> str:
    """The right answer to ``q``, written as a model would (kind per representation)."""
    record = _record(records, q.item)
    task = q.task.task
    if task == "forward_reaction":
        product = Chem.MolFromSmiles(record["product_smiles"])
        return rdMolDescriptors.CalcMolFormula(product) if q.kind == "formula" else record["product_smiles"]
    mol = Chem.MolFromSmiles(record["smiles"])
    if task == "formula":
        return rdMolDescriptors.CalcMolFormula(mol)
    if task == "molecular_weight":
        return repr(Descriptors.MolWt(mol))
    if task == "lipinski":
        return "yes" if record["id"] != "5" else "no"
    if task == "hydration_free_energy":
        return record["value"]
    if task == "iupac_to_smiles":
        return record["smiles"]
    if task == "smiles_to_iupac":
        return record["iupac"]
    raise AssertionError(task)


def _wrong_text(q) -> str:
    """A valid structure or formula answer that is wrong for every record."""
    return {"formula": "C99", "smiles": "ClCCl", "name": "methane"}[q.kind]


# --------------------------------------------------------------------------------------------------------
# Scores


@pytest.mark.parametrize(("records", "cells"), [(MOLECULES, MOLECULE_CELLS), (REACTIONS, REACTION_CELLS)],
                         ids=["molecules", "reactions"])  # fmt: skip
def test_an_oracle_scores_perfectly_under_every_template(tmp_path, monkeypatch, records, cells) -> None:
    rows, _, scored = _score(tmp_path, monkeypatch, records, lambda q: _truth_text(q, records))
    assert {(task, rep) for task, rep, _, _ in rows} == cells
    for r in scored.rows:
        assert tuple(name for name, _ in r.dims) == ("task", "representation", "template")
        if r.metric != "n_items":  # per template and over templates
            summary = r.metric.endswith(("_mean", "_sd", "_min", "_max", "_worst", "_spread"))
            assert (dict(r.dims)["template"] == "-") == summary, r
    for task, rep in cells:
        for t in TEMPLATES:
            assert rows[(task, rep, t, "validity")] == 1.0, (task, rep, t)
            assert rows[(task, rep, t, "n_items")] == len(records)
        assert rows[(task, rep, "-", "validity_mean")] == 1.0
        assert rows[(task, rep, "-", "n_items")] == len(records)
        if task in NUMERIC:
            assert rows[(task, rep, "-", "mae_charged_mean")] == pytest.approx(0.0, abs=1e-9)
            assert rows[(task, rep, "-", "mae_charged_worst")] == pytest.approx(0.0, abs=1e-9)
            assert (task, rep, "-", "accuracy_mean") not in rows
            for t in TEMPLATES:
                assert rows[(task, rep, t, "rmse")] == pytest.approx(0.0, abs=1e-9)
            continue
        for stat, value in (("mean", 1.0), ("sd", 0.0), ("min", 1.0), ("max", 1.0), ("worst", 1.0),
                            ("spread", 0.0)):  # fmt: skip
            primary = "balanced_accuracy" if task == "lipinski" else "accuracy"
            assert rows[(task, rep, "-", f"{primary}_{stat}")] == value, (task, rep, stat)
        for t in TEMPLATES:
            assert rows[(task, rep, t, "accuracy")] == 1.0
            if (task, rep) in STRUCTURES:
                for fp in ("maccs", "morgan2_bits", "morgan2_counts", "rdkit"):
                    assert rows[(task, rep, t, f"tanimoto_{fp}")] == pytest.approx(1.0)
            elif task == "formula" or rep == "formula":
                assert rows[(task, rep, t, "element_cosine")] == pytest.approx(1.0)
                assert rows[(task, rep, t, "atom_f1")] == pytest.approx(1.0)
    assert scored.counts["n_malformed_lines"] == 0 and scored.counts["n_missing_completions"] == 0


def _sensitive(q) -> str:
    """Right under t1-t3; wrong under t4; empty under t5; under t6 right on items 1 and 2, else no answer."""
    right = _truth_text(q, MOLECULES)
    if q.template in ("t1", "t2", "t3"):
        return right
    if q.template == "t5":
        return ""
    if q.kind == "number":
        if q.template == "t4":
            return repr(float(right) + 1.0)  # every answer off by 1
        return repr(float(right) - 3.0) if q.item in ("1", "2") else "unknown"  # off by 3, or no number
    if q.template == "t4":
        if q.kind == "label":
            return "no" if right == "yes" else "yes"
        return _wrong_text(q)
    return right if q.item in ("1", "2") else "I don't know"


def test_a_template_sensitive_model_gets_the_hand_computed_statistics(tmp_path, monkeypatch) -> None:
    rows, _, _ = _score(tmp_path, monkeypatch, MOLECULES, _sensitive)
    for task, rep in MOLECULE_CELLS:
        # Validity per template: 1, 1, 1, 1 (wrong but valid), 0 (empty), 2/5 (t6: items 1 and 2 only).
        validity = [rows[(task, rep, t, "validity")] for t in TEMPLATES]
        assert validity == pytest.approx([1, 1, 1, 1, 0, 0.4]), (task, rep)
        assert rows[(task, rep, "-", "validity_mean")] == pytest.approx(4.4 / 6)
        if task in NUMERIC:
            # The paper's MAE, over the valid answers only: t1-t3 0, t4 1, t6 3; t5 has no valid answer.
            mae = [rows.get((task, rep, t, "mae")) for t in TEMPLATES]
            assert mae == pytest.approx([0, 0, 0, 1, None, 3])
            assert rows[(task, rep, "t6", "rmse")] == pytest.approx(3.0)
            # The ranked MAE charges every invalid answer the worst plausible answer's error: t5 (all five
            # invalid) is the mean penalty — not dropped — and t6 adds the penalties of items 3-5.
            truth = {r["id"]: _truth(task, r) for r in MOLECULES}
            penalty = {i: invalid_error(task, y) for i, y in truth.items()}
            t5 = sum(penalty.values()) / 5
            t6 = (3 + 3 + penalty["3"] + penalty["4"] + penalty["5"]) / 5
            charged = [rows[(task, rep, t, "mae_charged")] for t in TEMPLATES]
            assert charged == pytest.approx([0, 0, 0, 1, t5, t6])
            expected = over_templates([0, 0, 0, 1, t5, t6], higher_is_better=False)
            assert expected["worst"] == pytest.approx(max(t5, t6))
            for stat, value in expected.items():
                assert rows[(task, rep, "-", f"mae_charged_{stat}")] == pytest.approx(value), (rep, stat)
            continue
        if task == "lipinski":
            # Truth: yes on items 1-4, no on item 5. Balanced accuracy = (recall_yes + recall_no) / 2:
            # t1-t3 1; t4 (all flipped) 0; t5 0; t6 right on items 1, 2 (both "yes"): (2/4 + 0)/2 = 1/4,
            # where plain accuracy gives 2/5.
            ba = [rows[(task, rep, t, "balanced_accuracy")] for t in TEMPLATES]
            assert ba == pytest.approx([1, 1, 1, 0, 0, 0.25]), (task, rep)
            assert rows[(task, rep, "-", "balanced_accuracy_worst")] == 0.0
            assert rows[(task, rep, "-", "balanced_accuracy_mean")] == pytest.approx(3.25 / 6)
            plain = [rows[(task, rep, t, "accuracy")] for t in TEMPLATES]  # reported beside it
            assert plain == pytest.approx([1, 1, 1, 0, 0, 0.4])
            assert (task, rep, "-", "accuracy_mean") not in rows
            continue
        # Accuracy per template (invalid = wrong): 1, 1, 1, 0, 0, 2/5.
        accuracy = [rows[(task, rep, t, "accuracy")] for t in TEMPLATES]
        assert accuracy == pytest.approx([1, 1, 1, 0, 0, 0.4]), (task, rep)
        # Mean 3.4/6 = 17/30; deviations 13/30 (×3), -17/30 (×2), -5/30: Σ² = (507 + 578 + 25)/900 = 1110/900;
        # population variance 1110/5400 = 37/180.
        expected = {"mean": 17 / 30, "sd": math.sqrt(37 / 180), "min": 0.0, "max": 1.0, "worst": 0.0,
                    "spread": 1.0}  # fmt: skip
        for stat, value in expected.items():
            assert rows[(task, rep, "-", f"accuracy_{stat}")] == pytest.approx(value), (task, rep, stat)


def test_invalid_answers_lower_validity_count_as_wrong_and_are_no_zero_error(tmp_path, monkeypatch) -> None:
    def answer(q) -> str:
        right = _truth_text(q, MOLECULES)
        if q.item in ("1", "2"):
            return right
        if q.item == "3":
            return ""  # empty
        if q.kind == "number":
            return repr(float(right) + 2.0) if q.item == "4" else "a lot"  # off by 2, unparseable
        return right if q.item == "4" else "§§ unclear §§"  # right, unparseable

    rows, out, _ = _score(tmp_path, monkeypatch, MOLECULES, answer)
    for task, rep in MOLECULE_CELLS:
        for t in TEMPLATES:
            assert rows[(task, rep, t, "validity")] == pytest.approx(3 / 5)
            if task in NUMERIC:
                # Errors 0, 0, 2 over the valid answers: MAE 2/3, RMSE sqrt(4/3). Scoring the two invalid
                # answers as errors of 0 would give 2/5; the ranked MAE charges them the bounded penalty.
                assert rows[(task, rep, t, "mae")] == pytest.approx(2 / 3)
                penalties = sum(invalid_error(task, _truth(task, _record(MOLECULES, i))) for i in ("3", "5"))
                assert rows[(task, rep, t, "mae_charged")] == pytest.approx((2 + penalties) / 5)
                assert rows[(task, rep, t, "rmse")] == pytest.approx(math.sqrt(4 / 3))
            else:
                assert rows[(task, rep, t, "accuracy")] == pytest.approx(3 / 5)
                if task == "formula":
                    # Similarities average the valid answers only.
                    assert rows[(task, rep, t, "atom_f1")] == pytest.approx(1.0)
    table = {(r["task"], r["representation"], r["template"], r["id"]): r for r in _table(out)}
    for task in NUMERIC:
        for key in ((task, "smiles", "t1", "3"), (task, "iupac", "t2", "5")):  # empty, unparseable
            truth = _truth(task, _record(MOLECULES, key[3]))
            assert table[key]["answer"] == "" and float(table[key]["truth"]) == pytest.approx(truth)
            assert float(table[key]["score"]) == pytest.approx(invalid_error(task, truth))  # charged, not 0
        assert float(table[(task, "smiles", "t1", "4")]["score"]) == pytest.approx(2.0)


#: (task, representation, template, item, completion, normalised answer cell, score; None: not checked)
MESSY = [
    ("iupac_to_smiles", "iupac", "t1", "1", "```smiles\nOCC\n```", "CCO", 1.0),
    ("iupac_to_smiles", "iupac", "t2", "4",
     "Sure. The SMILES of aspirin is CC(=O)Oc1ccccc1C(=O)O, as requested.", "CC(=O)Oc1ccccc1C(=O)O", 1.0),
    ("iupac_to_smiles", "iupac", "t3", "3", "SMILES: `C1=CC=CC=C1`", "c1ccccc1", 1.0),
    ("iupac_to_smiles", "iupac", "t4", "2", "I am not sure.", "", None),  # no answer
    ("smiles_to_iupac", "smiles", "t1", "1", "IUPAC name: **ethanol**", "CCO", 1.0),
    ("smiles_to_iupac", "smiles", "t2", "2", "The IUPAC name is acetic acid.\nIt is a weak acid.", "CC(=O)O",
     1.0),
    ("formula", "smiles", "t1", "1", "Answer: C2H6O.", "C2H6O", 1.0),
    ("formula", "iupac", "t2", "4", "C₉H₈O₄", "C9H8O4", 1.0),
    ("formula", "smiles", "t3", "2", "**C2H4O2**", "C2H4O2", 1.0),
    ("formula", "iupac", "t4", "3", "```\nC6H6\n```", "C6H6", 1.0),
    ("molecular_weight", "smiles", "t1", "1", "46.07 g/mol", "46.07", 0.00116),
    ("molecular_weight", "iupac", "t2", "4",
     "2-acetyloxybenzoic acid has a molecular weight of 180.16 g/mol.", "180.16", 0.00116),
    ("hydration_free_energy", "smiles", "t1", "1", "−5.0 kcal/mol", "-5.0", 0.0),
    ("hydration_free_energy", "iupac", "t5", "2", "ΔG_hyd ≈ −6.2 kcal/mol", "-6.2", 0.5),
    ("lipinski", "smiles", "t1", "1", "Yes.", "yes", 1.0),
    ("lipinski", "iupac", "t2", "5", "**No**", "no", 1.0),
    ("lipinski", "smiles", "t3", "3", "No, it does not.", "no", 0.0),
]  # fmt: skip


def test_messy_completions_are_read_right_through_the_whole_scoring_path(tmp_path, monkeypatch) -> None:
    messy = {(task, rep, t, item): text for task, rep, t, item, text, _, _ in MESSY}

    def answer(q) -> str:
        return messy.get((q.task.task, q.representation, q.template, q.item), "")

    _, out, _ = _score(tmp_path, monkeypatch, MOLECULES, answer)
    table = {(r["task"], r["representation"], r["template"], r["id"]): r for r in _table(out)}
    for task, rep, t, item, text, answer, score in MESSY:
        row = table[(task, rep, t, item)]
        assert row["answer"] == answer, (text, row)
        if task in NUMERIC:
            assert float(row["answer"]) == float(answer)
            assert float(row["score"]) == pytest.approx(score, abs=1e-3), (text, row)
        elif score is not None:
            assert float(row["score"]) == score, (text, row)
        assert row["completion"] == " ".join(text.split())


def test_a_reaction_answer_that_repeats_the_reactants_is_no_answer(tmp_path, monkeypatch) -> None:
    def answer(q) -> str:
        if q.kind == "formula":
            return _truth_text(q, REACTIONS)
        if q.item == "r1":
            return "OC(C)=O.CCO"  # all reactants, rewritten
        if q.item == "r2":
            return "The product is OCC."  # one reactant
        return _truth_text(q, REACTIONS)  # r3: right

    rows, out, _ = _score(tmp_path, monkeypatch, REACTIONS, answer)
    for rep in ("smiles", "iupac"):
        for t in TEMPLATES:
            assert rows[("forward_reaction", rep, t, "validity")] == pytest.approx(1 / 3)
            assert rows[("forward_reaction", rep, t, "accuracy")] == pytest.approx(1 / 3)
            # The echoes earn no similarity either: only r3's right answer is averaged.
            assert rows[("forward_reaction", rep, t, "tanimoto_maccs")] == pytest.approx(1.0)
    table = _table(out)
    echoes = [r for r in table if r["representation"] != "formula" and r["id"] in ("r1", "r2")]
    assert len(echoes) == 2 * 2 * 6 and all(r["answer"] == "" for r in echoes)


def test_a_reactant_formula_given_back_is_no_answer_either(tmp_path, monkeypatch) -> None:
    def answer(q) -> str:
        if q.kind == "formula" and q.item == "r3":
            return "C6H6"  # benzene, a reactant: no prediction of the product
        return _truth_text(q, REACTIONS)

    rows, _, _ = _score(tmp_path, monkeypatch, REACTIONS, answer)
    for t in TEMPLATES:
        assert rows[("forward_reaction", "formula", t, "validity")] == pytest.approx(2 / 3)
        assert rows[("forward_reaction", "formula", t, "atom_f1")] == pytest.approx(1.0)  # r1, r2 only


def test_a_record_without_a_computable_truth_is_left_out_and_counted(tmp_path, monkeypatch) -> None:
    records = [*MOLECULES[:2], {"id": "bad", "smiles": "not_a_smiles", "iupac": "nothing", "value": "1.0"}]
    rows, out, scored = _score(tmp_path, monkeypatch, records, lambda q: "")
    # Formula, weight and Lipinski (SMILES and IUPAC) and both translations need RDKit's reading of the
    # SMILES: 8 cells x 6 templates of 'bad' are not scored; the measured hydration free energy still is
    # from its SMILES, not from its name, which OPSIN cannot verify as the compound (6 more questions).
    assert scored.counts["n_unscored_questions"] == 8 * 6 + 6
    assert rows[("formula", "smiles", "t1", "n_items")] == 2
    assert rows[("hydration_free_energy", "smiles", "t1", "n_items")] == 3
    assert rows[("hydration_free_energy", "iupac", "t1", "n_items")] == 2
    assert rows[("hydration_free_energy", "iupac", "t1", "n_truth_excluded")] == 1
    table = _table(out)
    assert not any(r["id"] == "bad" and r["task"] == "formula" for r in table)
    # The questions whose name cannot be verified stay in the table, marked and unscored.
    kept = [r for r in table if r["id"] == "bad" and r["representation"] == "iupac"]
    assert len(kept) == 6 and {(r["task"], r["level"], r["score"]) for r in kept} == {
        ("hydration_free_energy", "excluded", "")
    }


# --------------------------------------------------------------------------------------------------------
# What is asked


def test_the_sample_is_fixed_order_free_and_stable_when_a_record_is_added() -> None:
    records = [{"id": f"m{i}", "smiles": "C" * (1 + i % 7)} for i in range(60)]
    chosen = sample(records, seed=0, n=20)
    assert len(chosen) == 20 and chosen == sample(records, seed=0, n=20)
    # File order kept in the output, and the choice does not depend on it.
    assert [r["id"] for r in chosen] == [r["id"] for r in records if r in chosen]
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    assert {r["id"] for r in sample(shuffled, seed=0, n=20)} == {r["id"] for r in chosen}
    # A record added later displaces at most one record.
    before = {r["id"] for r in chosen}
    for i in range(60, 90):
        after = {r["id"] for r in sample([*records, {"id": f"m{i}", "smiles": "CC"}], seed=0, n=20)}
        assert len(after) == 20 and len(after - before) <= 1 and len(before - after) <= 1
    assert {r["id"] for r in sample(records, seed=1, n=20)} != before  # the seed matters
    many = [{"id": str(i), "smiles": "C"} for i in range(ITEMS_PER_DATASET + 50)]
    assert len(sample(many, seed=0)) == ITEMS_PER_DATASET
    assert len(sample(records, seed=0)) == len(records)  # fewer than the sample size: all of them


def test_the_answer_table_has_one_row_per_question_with_the_declared_columns(tmp_path, monkeypatch) -> None:
    _, out, _ = _score(tmp_path, monkeypatch, MOLECULES, lambda q: _truth_text(q, MOLECULES))
    with gzip.open(out / ANSWERS, "rt", encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle))
    assert tuple(header) == TRACK.tables[0].columns
    table = _table(out)
    questions = TRACK.questions(MOLECULES)
    # formula, weight, Lipinski and HFE in 4 representations, 2 tasks in 1: 18 cells × 6 templates
    assert len(table) == len(questions) == len(MOLECULES) * 108
    assert [(r["task"], r["representation"], r["template"], r["id"]) for r in table] == [
        (q.task.task, q.representation, q.template, q.item) for q in questions
    ]


def test_a_hostile_completions_file_neither_crashes_scoring_nor_writes_through_a_link(
    tmp_path, monkeypatch
) -> None:
    _serve(monkeypatch, MOLECULES)
    questions = TRACK.questions(MOLECULES)
    ids = [q.request.id for q in questions]
    out = tmp_path / "out"
    lines = [
        "{not json",
        json.dumps({"id": "formula|smiles|t1|999", "completion": "C2H6O"}),  # not asked
        json.dumps({"id": ids[0], "completion": "C" * 1_000_000}),  # a 1 MB line: cut, unreadable
        json.dumps({"id": ids[1], "completion": 42}),
        json.dumps([1, 2, 3]),
        "\x00\xff garbage",
        *(json.dumps({"id": q.request.id, "completion": _truth_text(q, MOLECULES)}) for q in questions[2:]),
    ]  # fmt: skip
    _write(out, lines)
    victim = tmp_path / "host-file.txt"
    victim.write_text("precious", encoding="utf-8")
    (out / ANSWERS).symlink_to(victim)  # left by a hostile run
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (out / ANSWERS).is_symlink() and len(_table(out)) == len(questions)
    assert scored.counts["n_malformed_lines"] == 6
    assert scored.counts["n_missing_completions"] == 2
    rows = _by_key(scored)
    # The two lost completions are items 1 and 2 of the first template: no answer, 3 of 5 valid and right.
    first = questions[0]
    assert {questions[0].item, questions[1].item} == {"1", "2"} and questions[1].template == first.template
    key = (first.task.task, first.representation, first.template)
    assert rows[(*key, "validity")] == rows[(*key, "accuracy")] == pytest.approx(3 / 5)


class _Counting(GenerativeAdapter):
    """Answers every prompt with a digest of it, and records every request it is sent."""

    def __init__(self) -> None:
        super().__init__(None)
        self.requests = []

    def generate(self, requests):  # noqa: D102
        self.requests.extend(requests)
        return [f"answer to {hash(r.prompt)}" for r in requests]


def test_ask_generates_each_distinct_prompt_once_and_answers_every_id(tmp_path) -> None:
    records = [
        {"id": "a", "smiles": "CCO", "iupac": "ethanol", "value": "-5.0"},
        # The same molecule as "a", written otherwise: every prompt about it is one about "a".
        {"id": "b", "smiles": "OCC", "iupac": "ethanol", "value": "-5.0"},
        {"id": "c", "smiles": "CC(=O)O", "iupac": "acetic acid", "value": "-6.7"},
    ]
    adapter = _Counting()
    out = tmp_path / "out"
    out.mkdir()
    result = TRACK.run(adapter, TRACK.container_dataset(records), out_dir=out, log=lambda _: None)
    questions = TRACK.questions(records)
    prompts = [r.prompt for r in adapter.requests]
    assert len(prompts) == len(set(prompts)) == len({q.request.prompt for q in questions}) == 2 * 108
    assert result["counts"]["n_requests"] == 3 * 108 and result["counts"]["n_generated"] == 2 * 108
    lines = [json.loads(line) for line in (out / COMPLETIONS).read_text(encoding="utf-8").splitlines()]
    by_id = {line["id"]: line["completion"] for line in lines}
    assert len(lines) == len(by_id) == len(questions)
    for q in questions:
        assert by_id[q.request.id] == f"answer to {hash(q.request.prompt)}"


# --------------------------------------------------------------------------------------------------------
# The tool reference answers every wording of the questions it has a tool for


@pytest.fixture
def tools(monkeypatch):
    """The rdkit-opsin-tools submission's module, its OPSIN call run on the host's Java."""
    path = Path(__file__).resolve().parents[2] / "submissions" / "rdkit-opsin-tools" / "tools.py"
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location("rdkit_opsin_tools_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from evaluators.answers.opsin import names_to_smiles

    def names_to_mols(names):
        return [Chem.MolFromSmiles(s) if s else None for s in names_to_smiles(names)]

    monkeypatch.setattr(module, "_names_to_mols", names_to_mols)
    return module


def test_the_tool_reference_reads_every_template_and_abstains_elsewhere(tmp_path, monkeypatch, tools) -> None:
    answered = {"formula", "molecular_weight", "lipinski", "iupac_to_smiles"}
    # The tool reads text: it declares no image input, so it is asked the tasks as a text-only model.
    sets = {t.task: t for s in load_template_sets() if (t := s.without_images()) is not None}
    questions = TRACK.questions(MOLECULES) + TRACK.questions(REACTIONS)
    # Every template of every task it answers, in every representation, is among the questions.
    asked = {(q.task.task, q.representation, q.template) for q in questions}
    for task in answered:
        for rep in sets[task].representations:
            assert {(task, rep, t.id) for t in sets[task].templates} <= asked
    for q in questions:
        task, _, text = tools._parse(q.request.prompt)
        if q.task.task in (*answered, "smiles_to_iupac"):  # naming: read, then abstained on (no tool)
            assert text == q.shown, (q.request.id, q.request.prompt)
        else:
            assert task is None, q.request.id

    adapter = tools.ToolAnswerer(None)
    for records, cells in ((MOLECULES, MOLECULE_CELLS), (REACTIONS, REACTION_CELLS)):
        out = tmp_path / records[0]["id"]
        out.mkdir()
        TRACK.run(adapter, TRACK.container_dataset(records), out_dir=out, log=lambda _: None)
        _serve(monkeypatch, records)
        rows = _by_key(TRACK.score(_result(), out_dir=out, data_dir=tmp_path))
        for task, rep in cells:
            for t in TEMPLATES:
                if task not in answered:
                    assert rows[(task, rep, t, "validity")] == 0.0, (task, rep, t)  # abstained
                elif task == "molecular_weight":
                    assert rows[(task, rep, t, "validity")] == 1.0
                    assert rows[(task, rep, t, "mae")] < 0.005, (rep, t)  # two decimals
                else:
                    assert rows[(task, rep, t, "accuracy")] == 1.0, (task, rep, t)


def test_the_tool_reference_starts_opsin_once_per_run_and_answers_as_chunk_by_chunk(
    tmp_path, monkeypatch, tools
) -> None:
    """Issue 36: the run's names are parsed in one OPSIN process (``prepare``), not one per chunk of
    questions — 150 Java starts, 295 s, on pubchem-names — and every answer is the same."""
    import evaluators.asking as asking
    from evaluators.adapters import GenerativeAdapter

    monkeypatch.setattr(asking, "CHUNK", 16)
    inner, starts = tools._names_to_mols, []

    def counted(names):
        starts.extend([len(names)] if names else [])
        return inner(names)

    monkeypatch.setattr(tools, "_names_to_mols", counted)
    files = {}
    for how in ("prepared", "chunk by chunk"):
        if how == "chunk by chunk":  # the base class's prepare: nothing before the chunks
            monkeypatch.setattr(tools.ToolAnswerer, "prepare", GenerativeAdapter.prepare)
        starts.clear()
        out = tmp_path / how.replace(" ", "-")
        out.mkdir()
        view = TRACK.container_dataset(MOLECULES)
        TRACK.run(tools.ToolAnswerer(None), view, out_dir=out, log=lambda _: None)
        files[how] = ((out / "completions.jsonl").read_bytes(), list(starts))
    (prepared, once), (chunked, each) = files["prepared"], files["chunk by chunk"]
    assert prepared == chunked and prepared.count(b"\n") > 16
    assert len(once) == 1 and len(each) > 1, (once, each)


def test_a_number_outside_the_plausible_range_is_invalid_and_charged(tmp_path, monkeypatch) -> None:
    """Issue 28: 1e14 g/mol was an answer (MAEs of 6·10¹⁴); now it is invalid, with a bounded charge."""

    def answer(q) -> str:
        return "1e14" if q.kind == "number" and q.item == "1" else _truth_text(q, MOLECULES)

    rows, out, _ = _score(tmp_path, monkeypatch, MOLECULES, answer)
    table = {(r["task"], r["representation"], r["template"], r["id"]): r for r in _table(out)}
    for task in NUMERIC:
        charge = invalid_error(task, _truth(task, _record(MOLECULES, "1")))
        assert rows[(task, "smiles", "t1", "validity")] == pytest.approx(4 / 5)
        assert rows[(task, "smiles", "t1", "mae")] == pytest.approx(0.0, abs=1e-9)  # the paper's: valid only
        assert rows[(task, "smiles", "t1", "mae_charged")] == pytest.approx(charge / 5)
        assert charge < 6000  # bounded by the range, of the data's scale
        assert table[(task, "smiles", "t1", "1")]["answer"] == ""


def test_few_valid_answers_no_longer_beat_a_constant_answer(tmp_path, monkeypatch) -> None:
    """Issue 28: 2 valid answers of 1 200 gave a smaller (valid-only) MAE than a constant answering all."""

    def sparse(q) -> str:  # right on item 1 only, no answer elsewhere
        return _truth_text(q, MOLECULES) if q.item == "1" else ""

    def constant(q) -> str:
        return "1" if q.kind == "number" else "yes"  # 1: plausible for both quantities

    sparse_rows, _, _ = _score(tmp_path, monkeypatch, MOLECULES, sparse, out=tmp_path / "sparse")
    constant_rows, _, _ = _score(tmp_path, monkeypatch, MOLECULES, constant, out=tmp_path / "constant")
    for task in NUMERIC:
        for rep in ("smiles", "iupac"):
            old = (task, rep, "t1", "mae")  # the paper's valid-only MAE: the trap
            assert sparse_rows[old] < constant_rows[old]
            for stat in ("mean", "worst"):
                key = (task, rep, "-", f"mae_charged_{stat}")
                assert sparse_rows[key] > constant_rows[key], key


def test_a_constant_yes_gets_half_the_balanced_accuracy_on_a_mostly_yes_set(tmp_path, monkeypatch) -> None:
    """4 of the 5 molecules pass Lipinski: "yes" has plain accuracy 0.8 but balanced accuracy 0.5."""

    def noisy(q) -> str:  # right on four molecules, "no" for aspirin (item 4): one miss in the "yes" class
        right = _truth_text(q, MOLECULES)
        return ("no" if q.item == "4" else right) if q.kind == "label" else right

    yes_rows, _, _ = _score(tmp_path, monkeypatch, MOLECULES, lambda q: "yes", out=tmp_path / "yes")
    noisy_rows, _, _ = _score(tmp_path, monkeypatch, MOLECULES, noisy, out=tmp_path / "noisy")
    for rep in ("smiles", "iupac"):
        plain = ("lipinski", rep, "t1", "accuracy")
        assert yes_rows[plain] == noisy_rows[plain] == pytest.approx(0.8)
        assert yes_rows[("lipinski", rep, "-", "balanced_accuracy_worst")] == pytest.approx(0.5)
        assert noisy_rows[("lipinski", rep, "-", "balanced_accuracy_worst")] == pytest.approx((3 / 4 + 1) / 2)


def test_the_headline_ranks_mean_and_worst_template_never_the_spread() -> None:
    """A constant answer has spread 0 on every criterion: the spread is reported, never ranked."""
    ranked = {c.metric for c in PromptRobustnessTrack.headline}
    assert ranked == {"accuracy_mean", "accuracy_worst", "balanced_accuracy_mean", "balanced_accuracy_worst",
                      "mae_charged_mean", "mae_charged_worst"}  # fmt: skip
    assert not any(m.endswith(("_spread", "_sd")) for m in ranked)
    assert {"accuracy_spread", "mae_charged_spread"} <= set(PromptRobustnessTrack.metrics)


def test_freesolv_lipinski_is_declared_flat_because_every_molecule_passes(benchmark_data) -> None:
    """The measured reason: FreeSolv's Lipinski truth has one class, so a constant "yes" scores 1.0."""
    from evaluators.datasets import load_records
    from evaluators.tracks.prompt_robustness import TRUTHS

    records = load_records("freesolv", benchmark_data("freesolv"))
    assert {TRUTHS["lipinski"](r, "label") for r in records} == {True} and len(records) == 642
    for crit in PromptRobustnessTrack.headline:
        names = {name for name, _ in crit.flat}
        if crit.metric.startswith("balanced_accuracy"):
            reps = ("smiles", "iupac", "selfies", "inchi", "image")
            assert names == {f"freesolv/lipinski/{r}" for r in reps}
            assert all("642" in reason for _, reason in crit.flat)
        else:
            assert not names
