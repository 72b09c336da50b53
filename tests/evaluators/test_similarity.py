"""T4 scorers: hand-computed values, independent re-computation from RDKit bit/count sets, invalid → None."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import MACCSkeys, rdFingerprintGenerator

from evaluators.answers import similarity
from evaluators.answers.similarity import (
    FINGERPRINTS,
    absolute_error,
    atom_f1,
    element_cosine,
    element_counts,
    exact_match,
    formula_exact,
    mae,
    rmse,
    tanimoto,
    validity,
)

MORGAN = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)


def test_doctests():
    result = doctest.testmod(similarity)
    assert result.attempted > 10 and result.failed == 0


def test_registry_has_the_four_fingerprints():
    assert set(FINGERPRINTS) == {"maccs", "morgan2_bits", "morgan2_counts", "rdkit"}


@pytest.mark.parametrize("fingerprint", sorted(FINGERPRINTS))
@pytest.mark.parametrize("smiles", ["CCO", "c1ccccc1O", "C[C@H](N)C(=O)O"])
def test_identical_molecules_score_one(fingerprint, smiles):
    noncanonical = Chem.MolToSmiles(Chem.MolFromSmiles(smiles), doRandom=True, canonical=False)
    assert tanimoto(noncanonical, smiles, fingerprint) == 1.0


# Ethanol (CCO) vs methanol (CO), bit sets printed once from RDKit 2024+:
#   MACCS   ethanol {82,109,114,139,153,155,157,160,164}, methanol {93,139,157,160,164}
#           ∩ = {139,157,160,164} = 4, ∪ = 9 + 5 − 4 = 10 → 0.4
#   Morgan2 ethanol {80,222,294,807,1057,1410}, methanol {807,1057,1155}: ∩ = 2, ∪ = 7 → 2/7
#   RDKit   ethanol {562,1183,1308,1339,1728,1772}, methanol {562,1339}: ∩ = 2, ∪ = 6 → 1/3
#   Morgan2 counts are all 1 here, so Σmin/Σmax = 2/7 as well.
@pytest.mark.parametrize(
    ("fingerprint", "expected"),
    [("maccs", 0.4), ("morgan2_bits", 2 / 7), ("morgan2_counts", 2 / 7), ("rdkit", 1 / 3)],
)
def test_ethanol_vs_methanol_by_hand(fingerprint, expected):
    assert tanimoto("CO", "CCO", fingerprint) == pytest.approx(expected)
    assert tanimoto("CCO", "CO", fingerprint) == pytest.approx(expected)  # symmetric


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b)


def _count_tanimoto(a: dict, b: dict) -> float:
    keys = set(a) | set(b)
    return sum(min(a.get(k, 0), b.get(k, 0)) for k in keys) / sum(max(a.get(k, 0), b.get(k, 0)) for k in keys)


PAIRS = [
    ("CCO", "CO"),
    ("CCCCCC", "CCC"),
    ("c1ccccc1", "Cc1ccccc1"),
    ("CC(=O)Oc1ccccc1C(=O)O", "Oc1ccccc1C(=O)O"),
]


@pytest.mark.parametrize(("pred", "true"), PAIRS)
def test_bit_tanimoto_equals_jaccard_of_on_bits(pred, true):
    p, t = Chem.MolFromSmiles(pred), Chem.MolFromSmiles(true)
    for name, make in [
        ("morgan2_bits", MORGAN.GetFingerprint),
        ("maccs", MACCSkeys.GenMACCSKeys),
        ("rdkit", rdFingerprintGenerator.GetRDKitFPGenerator().GetFingerprint),
    ]:
        expected = _jaccard(set(make(p).GetOnBits()), set(make(t).GetOnBits()))
        assert tanimoto(pred, true, name) == pytest.approx(expected), name


@pytest.mark.parametrize(("pred", "true"), PAIRS)
def test_count_tanimoto_equals_sum_min_over_sum_max(pred, true):
    p = MORGAN.GetCountFingerprint(Chem.MolFromSmiles(pred)).GetNonzeroElements()
    t = MORGAN.GetCountFingerprint(Chem.MolFromSmiles(true)).GetNonzeroElements()
    assert tanimoto(pred, true, "morgan2_counts") == pytest.approx(_count_tanimoto(p, t))


def test_counts_and_bits_differ_on_repeated_substructures():
    # Hexane vs propane, Morgan r=2 / 2048 (printed once):
    #   hexane  {80: 4, 294: 2, 591: 2, 794: 2, 1057: 2, 1444: 2, 1911: 2}   (Σ = 16)
    #   propane {80: 1, 294: 2, 1057: 2, 1344: 1}                             (Σ = 6)
    # bits:   ∩ = {80, 294, 1057} = 3, ∪ = 8                        → 3/8 = 0.375
    # counts: Σmin = 1 + 2 + 2 = 5, Σmax = 4+2+2+2+2+2+2 + 1 = 17     → 5/17 ≈ 0.294
    assert tanimoto("CCCCCC", "CCC", "morgan2_bits") == pytest.approx(3 / 8)
    assert tanimoto("CCCCCC", "CCC", "morgan2_counts") == pytest.approx(5 / 17)


def test_empty_fingerprints_compare_by_identity():
    # single atoms have no bond paths: the RDKit path fingerprint is empty for both
    assert tanimoto("[Na+]", "[Na+]", "rdkit") == 1.0
    assert tanimoto("[K+]", "[Na+]", "rdkit") == 0.0


@pytest.mark.parametrize("bad", [None, "", "   ", "C1CC", "not a molecule", "CC O", 42])
@pytest.mark.parametrize("fingerprint", sorted(FINGERPRINTS))
def test_invalid_prediction_is_none_not_zero(bad, fingerprint):
    assert tanimoto(bad, "CCO", fingerprint) is None


def test_invalid_truth_or_unknown_fingerprint_raises():
    with pytest.raises(ValueError, match="true answer"):
        tanimoto("CCO", "C1CC", "maccs")
    with pytest.raises(ValueError, match="unknown fingerprint"):
        tanimoto("CCO", "CCO", "ecfp4")
    with pytest.raises(ValueError, match="true answer"):
        exact_match("CCO", "")


def test_exact_match_canonical_with_stereo():
    assert exact_match("OCC", "CCO") == 1.0
    assert exact_match("C1=CC=CC=C1", "c1ccccc1") == 1.0
    assert exact_match("CO", "CCO") == 0.0
    assert exact_match("C[C@H](N)O", "C[C@H](N)O") == 1.0
    assert exact_match("C[C@H](N)O", "C[C@@H](N)O") == 0.0  # enantiomers differ
    assert exact_match("CC(N)O", "C[C@H](N)O") == 0.0  # missing stereo differs
    assert exact_match("F/C=C/F", "F/C=C\\F") == 0.0  # E vs Z
    assert exact_match(None, "CCO") is None
    assert exact_match("xyz", "CCO") is None


# --------------------------------------------------------------------------------------------------------
# Formulas


def test_element_counts_reuse_answers_parser():
    assert element_counts("C2H6O") == {"C": 2, "H": 6, "O": 1}
    assert element_counts("H6 C2 O") == {"C": 2, "H": 6, "O": 1}
    assert element_counts("C₆H₁₂O₆") == {"C": 6, "H": 12, "O": 6}
    assert element_counts("NaCl") == {"Na": 1, "Cl": 1}
    for bad in ["", None, "ethanol", "CCO", "C2Xx3"]:
        assert element_counts(bad) is None


def test_formula_metrics_by_hand():
    # pred C2H4O2 (acetic acid) vs true C2H6O (ethanol): vectors over (C, H, O)
    #   p = (2, 4, 2), t = (2, 6, 1)
    #   cosine = (2·2 + 4·6 + 2·1) / (sqrt(4+16+4) · sqrt(4+36+1)) = 30 / sqrt(24·41) = 30 / sqrt(984)
    #   TP = min(2,2) + min(4,6) + min(2,1) = 7; P = 7/8, R = 7/9; F1 = 2·7 / (8 + 9) = 14/17
    assert formula_exact("C2H4O2", "C2H6O") == 0.0
    assert element_cosine("C2H4O2", "C2H6O") == pytest.approx(30 / math.sqrt(984))
    assert atom_f1("C2H4O2", "C2H6O") == pytest.approx(14 / 17)
    # cross-check with numpy
    p, t = np.array([2, 4, 2]), np.array([2, 6, 1])
    assert element_cosine("C2H4O2", "C2H6O") == pytest.approx(p @ t / np.linalg.norm(p) / np.linalg.norm(t))


def test_formula_metrics_disjoint_and_partial_elements():
    # NaCl vs H2O: no element in common → cosine 0, F1 0
    assert element_cosine("NaCl", "H2O") == 0.0
    assert atom_f1("NaCl", "H2O") == 0.0
    # CH4 vs CH3Cl: p = (C1, H4, Cl0), t = (C1, H3, Cl1)
    #   cosine = (1 + 12) / (sqrt(17) · sqrt(11)); TP = 1 + 3 = 4, P = 4/5, R = 4/5 → F1 = 0.8
    assert element_cosine("CH4", "CH3Cl") == pytest.approx(13 / math.sqrt(17 * 11))
    assert atom_f1("CH4", "CH3Cl") == pytest.approx(0.8)


def test_formula_identity_and_invalid():
    for f in (formula_exact, element_cosine, atom_f1):
        assert f("H6C2O", "C2H6O") == 1.0
        assert f("C₂H₆O", "C2H6O") == 1.0
        assert f(None, "C2H6O") is None
        assert f("", "C2H6O") is None
        assert f("ethanol", "C2H6O") is None
        with pytest.raises(ValueError, match="true answer"):
            f("C2H6O", "ethanol")


# --------------------------------------------------------------------------------------------------------
# Numbers


def test_absolute_error_and_invalid_numbers():
    assert absolute_error(1.5, 2.0) == 0.5
    assert absolute_error(-1, 2) == 3.0
    for bad in (None, float("nan"), float("inf"), "1.0", True):
        assert absolute_error(bad, 2.0) is None
    with pytest.raises(ValueError):
        absolute_error(1.0, float("nan"))


def test_mae_rmse_match_numpy_over_valid_items():
    rng = np.random.default_rng(0)
    pred, true = rng.normal(size=50), rng.normal(size=50)
    errors = [absolute_error(float(p), float(t)) for p, t in zip(pred, true, strict=True)]
    with_invalid = errors + [absolute_error(None, 1.0), None]
    assert mae(with_invalid) == pytest.approx(np.mean(np.abs(pred - true)))
    assert rmse(with_invalid) == pytest.approx(np.sqrt(np.mean((pred - true) ** 2)))
    assert validity(with_invalid) == pytest.approx(50 / 52)


def test_invalid_is_not_zero_error():
    # one perfect answer and one unparseable one: MAE is 1.0 over the valid item, not 0.5
    errors = [absolute_error(3.0, 2.0), absolute_error(None, 2.0)]
    assert mae(errors) == 1.0 and rmse(errors) == 1.0
    assert validity(errors) == 0.5


def test_aggregates_of_nothing_valid():
    assert mae([None, None]) is None and rmse([]) is None
    assert validity([]) is None
    assert validity([None]) == 0.0
    assert validity([0.0, 0.0]) == 1.0  # a zero score is valid


@pytest.fixture
def fresh_caches():
    """Empty the kept molecules and fingerprints before and after (a patched fingerprint is never kept)."""
    caches = (similarity._parsed, similarity._fingerprint, similarity._canonical)
    for cache in caches:
        cache.cache_clear()
    yield
    for cache in caches:
        cache.cache_clear()


def test_each_string_is_parsed_and_fingerprinted_once(fresh_caches, monkeypatch) -> None:
    parsed, made = [], []
    real_parse, (real_make, bits) = Chem.MolFromSmiles, FINGERPRINTS["maccs"]
    monkeypatch.setattr(Chem, "MolFromSmiles", lambda s: parsed.append(s) or real_parse(s))
    monkeypatch.setitem(FINGERPRINTS, "maccs", (lambda mol: made.append(1) or real_make(mol), bits))
    scores = [tanimoto(p, "CCO", "maccs") for p in ("OCC", "CO", "OCC", "CO", "OCC")]
    assert scores == [1.0, 0.4, 1.0, 0.4, 1.0]  # the same as each pair computed alone (doctests)
    assert sorted(parsed) == ["CCO", "CO", "OCC"] and len(made) == 3
    # The kept molecule is only read: exact match and the other fingerprints agree with fresh parses.
    assert [exact_match(p, "CCO") for p in ("OCC", "C[C@H](N)O")] == [1.0, 0.0]
    for name in ("morgan2_bits", "rdkit"):
        make, similar = FINGERPRINTS[name]
        assert tanimoto("CO", "CCO", name) == similar(make(real_parse("CO")), make(real_parse("CCO")))
