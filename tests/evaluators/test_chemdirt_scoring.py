"""Where ChemDIRT's released scoring differs from ours (T4), each difference shown on a hand-made case.

ChemDIRT's scorers are in ``utils/eval_utils.py`` of https://github.com/einae-nd/ChemDIRT (commit
8eff03a31e468c32805a1cd41bec0e9946ea0bc5), aggregated by ``main`` in ``run_tasks.py`` (the mean of every
metric over the items where it is not ``None``); their code was read, not copied. Every test asserts OUR
value, computed by hand in a comment; its docstring says what ChemDIRT's function gives, and why.

Differences (ours vs ``eval_utils.py``):

1. Structures: we score exact match (canonical isomeric SMILES, stereo included); ``eval_smiles`` and
   ``eval_iupac`` report only validity and MACCS / RDKit-path / Morgan similarity, which are blind to
   stereo: a wrong enantiomer scores 1.0 on all of them.
2. An empty answer, or a name OPSIN cannot read, is invalid for us; ``eval_smiles`` / ``eval_iupac`` count
   it valid with similarity 0 (RDKit parses ``""`` into a molecule with no atoms; ``py2opsin`` returns
   ``""`` for an unreadable name).
3. Prose around a SMILES: we extract the molecule; ``eval_smiles`` hands the raw text to RDKit, which reads
   ``"I think it is CCO"`` as iodine (hydrogen iodide) and the rest as the molecule's name.
4. One-atom molecules (methane, water) have no RDKit path bits; ``eval_smiles``' ``Chem.RDKFingerprint``
   Tanimoto of two empty vectors is 0, so a right answer scores 0; ours scores 1.0 when they are the same.
5. Morgan: ``eval_smiles`` uses ``AllChem.GetMorganFingerprint(m, 2)``, unfolded counts; our
   ``morgan2_counts`` folds the counts to 2048 (and ``morgan2_bits`` is the 2048-bit vector), so pairs
   whose environments collide on a bit score higher with us (methanol vs urea: 0 there, 0.1 here).
6. Formulas: ``parse_formula`` sums every ``[A-Z][a-z]?\\d*`` match anywhere in the text. So a condensed
   formula (``CH3CH2OH``) or a SMILES (``CCO``) is a valid formula there and invalid here (a molecular
   formula names each element once); ``"The formula is C2H6O"`` there holds thorium (``Th``), here the
   label is stripped; ``C₂H₆O`` there is CHO (``\\d`` does not match subscript digits), here C2H6O.
7. Element cosine: ``formula_vector`` keeps 25 elements only, so elements outside them (Sn, Ge, As …)
   vanish from the cosine there; ours uses every element.
8. Dotted formulas: ``parse_formula`` reads components and hydrates (``CuSO4.5H2O``) and ``eval_formula``
   compares the components; ours reads one formula (a dotted answer is invalid) and compares total element
   counts (a multi-component product's truth is its aggregate formula).
9. Numbers: ``regression`` scores an answer ``float()`` cannot read (``"unknown"``, ``"46.07 g/mol"``,
   ``"−5.0"`` with a Unicode minus) as the prediction 0.0, and reports squared errors only (MSE → RMSE);
   ours extracts the number, drops an unreadable answer from MAE / RMSE and reports it in validity.
10. Yes/no: ``binary_yes_no`` accepts only the whole answer ``yes``/``true``/``1`` or ``no``/``false``/
    ``0``/``2`` (``"Yes."`` and ``"**No**"`` are wrong); ours reads the first word, and ``"2"`` is invalid.
11. Reactions: ``eval_smiles`` has no check for an answer that repeats the reactants (it earns similarity);
    for us it is no answer.
12. A true answer RDKit cannot read is a data error for us (``ValueError``); ``eval_smiles`` counts the item
    invalid, blaming the model. ``eval_iupac`` parses the true *name* with OPSIN; our truth for naming is
    the record's SMILES.
13. Over templates: ``run_tasks.py`` scores one prompt (``--rand``) per run; the released code has no
    statistics over prompts. Ours: mean, population SD, min, max, worst and spread (best − worst).

No difference: MACCS keys (``MACCSkeys.GenMACCSKeys``, bit Tanimoto); the RDKit path fingerprint on
molecules with bonds (``Chem.RDKFingerprint`` and our ``GetRDKitFPGenerator`` defaults give the same bits);
the count Tanimoto formula, Σ min / Σ max (RDKit's sparse-vector Tanimoto); atom-level F1 (TP = Σ min of
the element counts over the totals); formula exact match for a single-component formula that both read;
invalid formulas counted wrong in exact match and left out of cosine / F1; the true molecular weight
(``Descriptors.MolWt``); similarities averaged over the valid answers only.
"""

from __future__ import annotations

import json
import math

import pytest
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator

import evaluators.datasets as datasets
from evaluators.answers import normalise
from evaluators.answers import similarity as sim
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.prompt_robustness import COMPLETIONS, TRUTHS, PromptRobustnessTrack
from evaluators.tracks.prompt_robustness.scores import item_scores, over_templates, template_metrics

FINGERPRINTS = ("maccs", "morgan2_bits", "morgan2_counts", "rdkit")


def _scores(kind: str, completions: list[str], truth, quantity: str | None = None) -> list[dict]:
    return [item_scores(kind, answer, truth, quantity) for answer in normalise(kind, completions)]


# --------------------------------------------------------------------------------------------------------
# Structures


def test_exact_match_sees_the_wrong_enantiomer_that_the_fingerprints_miss() -> None:
    """1. ChemDIRT (``eval_smiles``) has no exact match: validity 1, MACCS 1.0, RDKit 1.0, Morgan 1.0.

    None of its fingerprints encodes chirality, so D-alanine for L-alanine looks perfect. Ours compares
    canonical isomeric SMILES: accuracy 0 (the similarities agree with ChemDIRT's: 1.0).
    """
    l_alanine, d_alanine = "C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O"
    (scores,) = _scores("smiles", [d_alanine], Chem.CanonSmiles(l_alanine))
    assert scores["valid"] == 1.0 and scores["accuracy"] == 0.0
    assert all(scores[f"tanimoto_{fp}"] == 1.0 for fp in FINGERPRINTS)


def test_an_empty_answer_is_invalid_not_a_valid_molecule_with_similarity_zero() -> None:
    """2. ChemDIRT (``eval_smiles``): ``Chem.MolFromSmiles("")`` is a molecule with no atoms, not ``None``.

    So an empty answer is valid there, with MACCS = RDKit = Morgan = 0.0: for one right and one empty
    answer its template has validity 1.0 and mean MACCS (1 + 0)/2 = 0.5. Ours: the empty answer is
    invalid, wrong for accuracy and left out of the similarity mean: validity 1/2, accuracy 1/2, MACCS 1.0.
    """
    assert Chem.MolFromSmiles("").GetNumAtoms() == 0  # what ChemDIRT's scorer receives
    metrics = template_metrics("smiles", _scores("smiles", ["CCO", ""], "CCO"))
    assert metrics["validity"] == 0.5 and metrics["accuracy"] == 0.5
    assert metrics["tanimoto_maccs"] == 1.0 and metrics["tanimoto_rdkit"] == 1.0


def test_a_name_opsin_cannot_read_is_invalid() -> None:
    """2. ChemDIRT (``eval_iupac``): ``py2opsin`` returns ``""`` for an unreadable name, which RDKit parses
    into an empty molecule: validity 1, similarities 0. Ours: no structure, invalid (validity 0, accuracy 0,
    no similarity), beside a right name: validity 1/2, accuracy 1/2, MACCS over the valid one 1.0.
    """
    metrics = template_metrics("name", _scores("name", ["ethanol", "definitely not a chemical name"], "CCO"))
    assert metrics["validity"] == 0.5 and metrics["accuracy"] == 0.5 and metrics["tanimoto_maccs"] == 1.0


def test_prose_around_a_smiles_gives_the_molecule_not_the_first_letter() -> None:
    """3. ChemDIRT (``eval_smiles``) hands the completion to RDKit as is; RDKit stops at the first space and
    reads ``"I think it is CCO"`` as ``I`` (hydrogen iodide) named "think it is CCO": a valid, wrong molecule.
    (For its local models, ``query_llm`` in ``utils/llm_utils.py`` first asks GPT-4.1-nano to extract the
    answer; API models' replies are scored raw.) Ours extracts by fixed rules: ``CCO``, accuracy 1.
    """
    assert Chem.MolToSmiles(Chem.MolFromSmiles("I think it is CCO")) == "I"  # what ChemDIRT scores
    (scores,) = _scores("smiles", ["I think it is CCO"], "CCO")
    assert scores["accuracy"] == 1.0 and scores["tanimoto_morgan2_counts"] == 1.0


def test_a_one_atom_molecule_is_similar_to_itself() -> None:
    """4. ChemDIRT (``eval_smiles``): ``Chem.RDKFingerprint`` of methane or water sets no bit (paths need a
    bond), and the Tanimoto of two empty bit vectors is 0: a right "C" scores RDKit similarity 0.0.
    Ours: 1.0 when the canonical SMILES agree (``C`` vs ``C``), 0.0 when not (``C`` vs ``O``).
    """
    assert sim.tanimoto("C", "C", "rdkit") == 1.0 and sim.tanimoto("O", "O", "rdkit") == 1.0
    assert sim.tanimoto("C", "O", "rdkit") == 0.0


def test_morgan_counts_are_folded_to_2048_bits() -> None:
    """5. ChemDIRT (``eval_smiles``): ``AllChem.GetMorganFingerprint(m, 2)`` counts environments unfolded;
    methanol and urea share no environment, so its Morgan similarity is 0.0.

    Ours folds to 2048: methanol has 3 environment counts and urea 8 (two of them twice), and one methanol
    environment lands on the same of the 2048 bits as one urea environment. Counts: Σ min = 1,
    Σ max = 3 + 8 − 1 = 10 → 0.1. Bits: methanol sets 3, urea 6 distinct, 1 shared → 1/(3 + 6 − 1) = 0.125.
    """
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    methanol, urea = Chem.MolFromSmiles("CO"), Chem.MolFromSmiles("NC(=O)N")
    unfolded = [generator.GetSparseCountFingerprint(m).GetNonzeroElements() for m in (methanol, urea)]
    assert [sum(c.values()) for c in unfolded] == [3, 8] and not set(unfolded[0]) & set(unfolded[1])
    folded = [generator.GetCountFingerprint(m).GetNonzeroElements() for m in (methanol, urea)]
    assert len(set(folded[0]) & set(folded[1])) == 1 and [len(f) for f in folded] == [3, 6]
    assert sim.tanimoto("CO", "NC(=O)N", "morgan2_counts") == pytest.approx(0.1)
    assert sim.tanimoto("CO", "NC(=O)N", "morgan2_bits") == pytest.approx(0.125)


def test_a_true_answer_that_does_not_parse_is_a_data_error() -> None:
    """12. ChemDIRT (``eval_smiles``): a true SMILES RDKit cannot read makes the fingerprint call fail, and
    the item is scored invalid, as if the model had failed. Ours raises: the data set is wrong, not the model.
    ChemDIRT's ``eval_iupac`` compares against OPSIN's reading of the true *name*; our truth for naming is
    the record's SMILES, whatever the recorded name (here one OPSIN cannot read).
    """
    with pytest.raises(ValueError, match="true answer"):
        sim.tanimoto("CCO", "not a smiles", "maccs")
    assert TRUTHS["smiles_to_iupac"]({"smiles": "OCC", "iupac": "spirit of wine"}, "name") == "CCO"


# --------------------------------------------------------------------------------------------------------
# Formulas


def test_a_condensed_formula_sums_its_elements_but_a_smiles_is_no_formula() -> None:
    """6. ChemDIRT (``parse_formula``) sums every element match: ``CH3CH2OH`` reads as C2H6O (exact match 1)
    and the SMILES ``CCO`` as C2O (valid; cosine (2·2 + 1·1)/(√5·√41) = 0.349, F1 with TP = 3, P = 1,
    R = 3/9: 0.5). Ours: a condensed formula that writes its hydrogens sums them too (C2H6O, accuracy 1),
    but ``CCO`` (an element repeats, no hydrogen) is a SMILES, not a molecular formula: invalid.
    """
    (scores,) = _scores("formula", ["CH3CH2OH"], "C2H6O")
    assert scores["valid"] == 1.0 and scores["accuracy"] == 1.0
    (scores,) = _scores("formula", ["CCO"], "C2H6O")
    assert scores == {"valid": 0.0, "accuracy": 0.0, "element_cosine": None, "atom_f1": None}


def test_a_labelled_formula_is_not_read_as_thorium() -> None:
    """6. ChemDIRT (``parse_formula``) reads ``"The formula is C2H6O"`` as Th C2 H6 O: exact match 0, cosine
    1.0 (thorium is not one of ``FORMULA_ELEMENTS``), F1 with TP = 9, P = 9/10, R = 1: 0.947.
    Ours strips the label: C2H6O, accuracy 1, cosine 1, F1 1.
    """
    (scores,) = _scores("formula", ["The formula is C2H6O"], "C2H6O")
    assert scores == {"valid": 1.0, "accuracy": 1.0, "element_cosine": 1.0, "atom_f1": 1.0}


def test_subscript_digits_count() -> None:
    """6. ChemDIRT (``parse_formula``): ``\\d`` does not match ``₂``/``₆``, so ``C₂H₆O`` reads as C H O:
    exact match 0, cosine (2 + 6 + 1)/(√3·√41) = 0.811, F1 with TP = 3, P = 1, R = 3/9: 0.5.
    Ours reads C2H6O: accuracy 1.
    """
    (scores,) = _scores("formula", ["C₂H₆O"], "C2H6O")
    assert scores == {"valid": 1.0, "accuracy": 1.0, "element_cosine": 1.0, "atom_f1": 1.0}


def test_the_element_cosine_counts_every_element() -> None:
    """7. ChemDIRT (``formula_vector``) keeps 25 elements, without Sn or Ge: tetramethylgermane C4H12Ge for
    tetramethyltin C4H12Sn has the vectors (C4, H12) and (C4, H12), cosine 1.0.

    Ours: dot 4·4 + 12·12 = 160, norms √(16 + 144 + 1) = √161 each → 160/161 = 0.99379. Exact match 0 and
    F1 (TP = 16 of 17 atoms on each side: 16/17) agree with ChemDIRT's.
    """
    (scores,) = _scores("formula", ["C4H12Ge"], "C4H12Sn")
    assert scores["accuracy"] == 0.0
    assert scores["element_cosine"] == pytest.approx(160 / 161)
    assert scores["atom_f1"] == pytest.approx(16 / 17)


def test_a_formula_is_one_formula_compared_by_total_element_counts() -> None:
    """8. ChemDIRT (``parse_formula``, ``eval_formula``) splits ``C2H6O.H2O`` into components (and reads
    hydrates, ``5H2O``) and compares the sorted components: ``C2H8O2`` is not an exact match for
    ``C2H6O.H2O`` there. Ours: a dotted answer is not a molecular formula (invalid), and the truth of a
    two-component product (ethanol + water, CCO.O) is its total formula C2 H(6 + 2) O(1 + 1) = C2H8O2.
    """
    truth = TRUTHS["forward_reaction"]({"product_smiles": "CCO.O"}, "formula")
    assert truth == "C2H8O2"
    dotted, total = _scores("formula", ["C2H6O.H2O", "C2H8O2"], truth)
    assert dotted["valid"] == 0.0 and dotted["accuracy"] == 0.0
    assert total["accuracy"] == 1.0


# --------------------------------------------------------------------------------------------------------
# Numbers and labels


def test_an_unreadable_number_is_invalid_not_a_prediction_of_zero() -> None:
    """9. ChemDIRT (``regression``): ``float("unknown")`` fails and the prediction becomes 0.0; it reports
    squared errors only. Answers 9, 13, "unknown" to 10: squared errors 1, 9, 100, RMSE √(110/3) = 6.06.

    Ours drops the unreadable answer: validity 2/3, MAE (1 + 3)/2 = 2, RMSE √((1 + 9)/2) = √5 = 2.236.
    """
    scores = _scores("number", ["9", "13", "unknown"], 10.0, "hydration_free_energy")
    metrics = template_metrics("number", scores)
    assert metrics["validity"] == pytest.approx(2 / 3)
    assert metrics["mae"] == 2.0 and metrics["rmse"] == pytest.approx(math.sqrt(5))


def test_a_number_with_units_or_a_unicode_minus_is_read() -> None:
    """9. ChemDIRT (``regression``): ``float("46.07 g/mol")`` and ``float("−5.0 kcal/mol")`` fail, so both
    are scored as 0.0: squared errors 46.069² = 2122.4 and 5.0² = 25. Ours reads 46.07 and −5.0: absolute
    errors |46.07 − 46.069| = 0.001 and 0; "nan" (which ``float`` reads there, making the mean NaN) is
    invalid here.
    """
    (weight,) = _scores("number", ["46.07 g/mol"], 46.069, "molecular_weight")
    energy, nan = _scores("number", ["−5.0 kcal/mol", "nan"], -5.0, "hydration_free_energy")
    assert weight["abs_error"] == pytest.approx(0.001) and energy["abs_error"] == 0.0
    # Invalid: no error of its own, charged the worst plausible answer's, max(−5 − (−55), 33 − (−5)) = 50.
    assert nan == {"valid": 0.0, "abs_error": None, "error": 50.0}


def test_a_yes_no_answer_is_its_first_word() -> None:
    """10. ChemDIRT (``binary_yes_no``) accepts only the whole answer: ``"Yes."``, ``"**No**"`` and
    ``"Yes, it does."`` are neither yes nor no there (scored wrong), and ``"2"`` means no. Ours reads the
    first word: the three are right (accuracy 3/4 with "2" invalid: validity 3/4), ``"2"`` is no answer.
    """
    completions = ["Yes.", "**No**", "Yes, it does.", "2"]
    truths = [True, False, True, False]
    scores = [
        item_scores("label", a, t) for a, t in zip(normalise("label", completions), truths, strict=True)
    ]
    assert [s["accuracy"] for s in scores] == [1.0, 1.0, 1.0, 0.0]
    assert [s["valid"] for s in scores] == [1.0, 1.0, 1.0, 0.0]


def test_repeating_the_reactants_is_no_answer(tmp_path, monkeypatch) -> None:
    """11. ChemDIRT (``eval_smiles``) scores ``CC(=O)O.OCC`` (the reactants) against ethyl acetate as a
    valid answer with partial similarity. Ours: no answer (validity 0, no similarity), in every template.
    """
    record = {"id": "r1", "reactants_smiles": "CC(=O)O.OCC", "reactants_iupac": "acetic acid.ethanol",
              "product_smiles": "CCOC(C)=O"}  # fmt: skip
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: [dict(record)])
    track = PromptRobustnessTrack(TrackOptions())
    questions = [q for q in track.questions([record]) if q.kind == "smiles"]
    out = tmp_path / "out"
    out.mkdir()
    lines = [json.dumps({"id": q.request.id, "completion": "CC(=O)O.OCC"}) for q in questions]
    (out / COMPLETIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = TrackResult("m", "prompt_robustness", 1, "toy", "0" * 8, "0" * 8, 0, rows=(), counts={})
    rows = track.score(result, out_dir=out, data_dir=tmp_path).rows
    smiles_rows = [r for r in rows if dict(r.dims)["representation"] != "formula"]
    assert {r.value for r in smiles_rows if r.metric == "validity"} == {0.0}
    assert not [r for r in smiles_rows if r.metric.startswith("tanimoto")]


# --------------------------------------------------------------------------------------------------------
# Over templates


def test_statistics_over_templates_use_the_population_sd() -> None:
    """13. ChemDIRT's ``run_tasks.py`` (``main``) scores one prompt per run and has no statistic over
    prompts. Ours, for accuracies 0.5 and 1.0: mean 0.75, population SD √((0.25² + 0.25²)/2) = 0.25 (the
    sample SD would be 0.354), worst 0.5, spread 0.5; for MAEs 2 and 4 the worst is the larger, 4.
    """
    assert over_templates([0.5, 1.0], higher_is_better=True) == {
        "mean": 0.75, "sd": 0.25, "min": 0.5, "max": 1.0, "worst": 0.5, "spread": 0.5,
    }  # fmt: skip
    assert over_templates([2.0, 4.0], higher_is_better=False)["worst"] == 4.0
