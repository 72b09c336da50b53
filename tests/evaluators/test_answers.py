"""Answer extraction and normalisation (evaluators/answers/__init__.py): deterministic rules, never a judge
model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdkit import Chem
from rdkit.Chem import rdMolDescriptors

from evaluators.answers import (
    extract,
    normalise,
    normalise_formula,
    normalise_label,
    normalise_number,
    normalise_smiles,
)


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("CCO", "CCO"),
        ("Answer: CCO\nThe reason is ...", "CCO"),
        ("\n\n  SMILES: `c1ccccc1`", "c1ccccc1"),
        ("```smiles\nCC(=O)O\n```", "CC(=O)O"),
        ("**IUPAC name:** propan-2-ol.", "propan-2-ol"),
        ("The product is: CCN", "CCN"),
        ("", ""),
    ],
)
def test_extract_keeps_the_answer_span(text: str, span: str) -> None:
    assert extract(text) == span


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OCC", "CCO"),
        ("C(O)C", "CCO"),
        ("The product is C1=CC=CC=C1.", "c1ccccc1"),
        ("I think it is CCO", "CCO"),  # "I" parses as iodine; the longest token wins
        ("c1ccccc1 (benzene)", "c1ccccc1"),
        ("not a molecule", None),
        ("C1CC", None),  # unclosed ring
        ("", None),
    ],
)
def test_smiles_answers_normalise_to_rdkit_canonical(text: str, expected: str | None) -> None:
    assert normalise_smiles(text) == expected


@given(
    st.sampled_from(["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C[C@H](N)C(=O)O", "O=C=O"]),
    st.integers(0, 50),
)
@settings(max_examples=60, deadline=None)
def test_every_way_of_writing_a_molecule_normalises_to_one_answer(smiles: str, seed: int) -> None:
    mol = Chem.MolFromSmiles(smiles)
    randomized = Chem.MolToRandomSmilesVect(mol, 1, randomSeed=seed + 1)[0]
    assert normalise_smiles(f"Answer: {randomized}") == Chem.MolToSmiles(mol)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("C2H6O", "C2H6O"),
        ("Molecular formula: C₂H₆O", "C2H6O"),
        ("H6C2O", "C2H6O"),
        ("C6 H12 O6", "C6H12O6"),
        ("NH4+", "H4N"),  # no carbon: alphabetical (Hill); the charge is not compared
        ("C2H3O2-", "C2H3O2"),
        ("CH4.", "CH4"),
        ("ethanol", None),
        ("CCO", None),  # a SMILES (or a condensed formula) names carbon twice: not a molecular formula
        ("C2Xx", None),  # not an element
        ("", None),
    ],
)
def test_formula_answers_normalise_to_hill_order(text: str, expected: str | None) -> None:
    assert normalise_formula(text) == expected


@pytest.mark.parametrize("smiles", ["CCO", "c1ccncc1", "OC(=O)CCl", "[NH4+]", "CC(C)(C)Br", "O=S(=O)(O)O"])
def test_rdkit_formulas_read_back_as_themselves(smiles: str) -> None:
    formula = rdMolDescriptors.CalcMolFormula(Chem.MolFromSmiles(smiles))
    # What RDKit writes is what a correct model answer looks like: it must read back, labelled or not.
    assert normalise_formula(formula) is not None
    assert normalise_formula(f"Formula: {formula}") == normalise_formula(formula)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Yes", True), ("yes.", True), ("True", True), ("1", True), ("Answer: no", False),
     ("NO, it does not", False), ("false", False), ("0", False), ("maybe", None), ("", None),
     ("Yesterday", None)],
)  # fmt: skip
def test_labels_read_robustly(text: str, expected: bool | None) -> None:
    assert normalise_label(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("-3.2", -3.2), ("ΔG = −3.2 kcal/mol", -3.2), ("+4", 4.0), ("1e-2", 0.01), ("about .5", 0.5),
     ("4,2", None), ("unknown", None), ("nan", None)],
)  # fmt: skip
def test_numbers_read_robustly(text: str, expected: float | None) -> None:
    assert normalise_number(text) == expected


def test_names_are_parsed_in_one_batch_and_missing_stays_missing() -> None:
    calls: list[list[str]] = []

    def parser(names):
        calls.append(list(names))
        return ["CCO" if n == "ethanol" else None for n in names]

    out = normalise("name", ["Answer: ethanol.", "gibberish", ""], names_to_smiles=parser)
    assert out == ["CCO", None, None]
    assert calls == [["ethanol", "gibberish", ""]]  # one call for the whole batch, spans extracted


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown answer kind 'colour'"):
        normalise("colour", ["red"])


@pytest.mark.parametrize(
    ("kind", "task", "texts"),
    [
        ("smiles", None, ["CCO", "Answer: OCC", "CCO", "", "I cannot answer.", "OCC", "CCO", "c1ccccc1"]),
        ("label", "lipinski", ["Yes", "No violations.", "Yes", "3 violations", "Yes", ""]),
        ("number", None, ["-3.2 kcal/mol", "ΔG = –3.2", "-3.2 kcal/mol", "none", "1e3"]),
        ("formula", None, ["CH3CH2OH", "C2H6O", "CH3CH2OH", "H2O"]),
    ],
)
def test_a_batch_reads_each_text_as_it_is_read_alone(kind, task, texts):
    """Repeated completions are read once per batch: every position still gets its own text's reading."""
    from evaluators.answers import read, read_batch

    assert read_batch(kind, texts, task=task) == [read(kind, t, task=task) for t in texts]
