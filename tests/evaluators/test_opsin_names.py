"""OPSIN on the host (evaluators/answers/opsin.py): batches stay aligned, bad names are None, nothing lands in
cwd."""

from __future__ import annotations

import os
import shutil

import pytest

from evaluators.answers.opsin import MAX_NAME_LENGTH, OpsinError, names_to_smiles, restore_locant_case
from evaluators.notations.smiles import canonical_smiles


@pytest.fixture(scope="module")
def java() -> None:
    """Skip without a Java runtime, except in CI (``CI`` set), where its absence is a broken pipeline."""
    if shutil.which("java") is None:
        message = "no `java` on PATH (OPSIN needs it; Debian: openjdk-17-jre-headless)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


def test_known_names_give_their_structures(java) -> None:
    names = ["ethanol", "benzene", "N,N-dimethylformamide", "(2S)-2-aminopropanoic acid", "1H-indole"]
    expected = ["CCO", "c1ccccc1", "CN(C)C=O", "C[C@H](N)C(=O)O", "c1ccc2[nH]ccc2c1"]
    assert names_to_smiles(names) == [canonical_smiles(s) for s in expected]


def test_bad_names_are_none_and_the_rest_stays_aligned(java) -> None:
    names = [
        "ethanol",
        "not a chemical at all",  # OPSIN fails on it: an empty output line
        "",
        "   ",
        None,
        "meth\nane",  # would be two input lines: must not shift the answers after it
        "prop\ran-1-ol",  # Java reads "\r" as a line break too
        "eth\u2028anol",  # a Unicode line separator
        "x" * (MAX_NAME_LENGTH + 1),
        "  benzene  ",  # stripped
        "propan-2-ol",
    ]
    expected = ["CCO", None, None, None, None, None, None, None, None, "c1ccccc1", "CC(C)O"]
    assert names_to_smiles(names) == expected
    # One Java process per chunk: small chunks give the same, aligned answers.
    assert names_to_smiles(names, chunk_size=2) == expected


def test_nothing_is_written_to_the_working_directory(java, tmp_path, monkeypatch) -> None:
    cwd, scratch = tmp_path / "cwd", tmp_path / "scratch"
    cwd.mkdir()
    scratch.mkdir()
    monkeypatch.chdir(cwd)
    assert names_to_smiles(["methane", "ethane"]) == ["C", "CC"]
    assert names_to_smiles(["methane"], tmp_dir=scratch) == ["C"]
    assert list(cwd.iterdir()) == [] and list(scratch.iterdir()) == []  # private folder removed too


def test_missing_java_is_a_clear_error_and_empty_input_needs_no_java(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no java
    assert names_to_smiles(["", "  ", None]) == [None, None, None]
    with pytest.raises(OpsinError, match=r"`java` is not on PATH.*openjdk-17-jre-headless"):
        names_to_smiles(["ethanol"])


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        names_to_smiles(["ethanol"], chunk_size=0)


@pytest.mark.parametrize(
    ("lower", "restored"),
    [
        ("n,n-dimethylformamide", "N,N-dimethylformamide"),
        ("o-methylhydroxylamine", "O-methylhydroxylamine"),
        ("s-methyl ethanethioate", "S-methyl ethanethioate"),
        ("n1,n1'-dibutylethane-1,1-diamine", "N1,N1'-dibutylethane-1,1-diamine"),
        ("(3e)-hexa-1,3-diene", "(3E)-hexa-1,3-diene"),
        ("(2s)-2-aminopropanoic acid", "(2S)-2-aminopropanoic acid"),
        ("(2r,3s)-2,3-dibromobutane", "(2R,3S)-2,3-dibromobutane"),
        ("(4ar,8as)-decahydronaphthalene", "(4aR,8aS)-decahydronaphthalene"),
        ("(3s,3'as)-x", "(3S,3'aS)-x"),
        ("(2rs)-butan-2-ol", "(2RS)-butan-2-ol"),
        ("(1r*,2s*)-x", "(1R*,2S*)-x"),
        ("(e)-but-2-ene", "(E)-but-2-ene"),
        ("methyl [(s)-methylsulfinyl]acetate", "methyl [(S)-methylsulfinyl]acetate"),
        ("(ne)-n-benzylidenehydroxylamine", "(NE)-N-benzylidenehydroxylamine"),
        ("(z)-c-methyl-n-oxidanyl-carbonimidoyl", "(Z)-C-methyl-N-oxidanyl-carbonimidoyl"),
        ("1h-indole", "1H-indole"),
        ("9-ethyl-9h-purin-6-amine", "9-ethyl-9H-purin-6-amine"),
        ("4ah-carbazole", "4aH-carbazole"),
        ("1,3-dihydroindol-2(3h)-one", "1,3-dihydroindol-2(3H)-one"),
        # Left alone: ortho/para before a retained name, fusion letters, words, plain names.
        ("2,3-bis(chloranyl)dibenzo-p-dioxin", "2,3-bis(chloranyl)dibenzo-p-dioxin"),
        ("o-xylene", "o-xylene"),
        ("thieno[3,4-c]thiophene", "thieno[3,4-c]thiophene"),
        ("pyrrolo[2,3-b]pyridine", "pyrrolo[2,3-b]pyridine"),
        ("2-oxidanylidenebutanedioic acid", "2-oxidanylidenebutanedioic acid"),
        ("tris(2-hydroxyethyl)amine", "tris(2-hydroxyethyl)amine"),
        ("benzenesulfonic acid", "benzenesulfonic acid"),
    ],
)
def test_restore_locant_case(lower: str, restored: str) -> None:
    assert restore_locant_case(lower) == restored
    assert restore_locant_case(restored) == restored  # idempotent


def test_restored_names_parse_where_lower_case_ones_do_not(java) -> None:
    # Lower-cased names as the chemicals package stores them. OPSIN 2.9.0 reads lower-case R/S/E/Z and
    # indicated hydrogen, but not element locants (n,n-…; (ne) is the oxime's N with E).
    lower = [
        "n,n-dimethylformamide",
        "(ne)-n-[(2-methylphenyl)methylidene]hydroxylamine",
        "(2s)-2-aminopropanoic acid",
        "1h-indole",
    ]
    expected = ["CN(C)C=O", "Cc1ccccc1/C=N/O", "C[C@H](N)C(=O)O", "c1ccc2[nH]ccc2c1"]
    restored = names_to_smiles([restore_locant_case(name) for name in lower])
    assert restored == [canonical_smiles(s) for s in expected]
    assert names_to_smiles(lower)[:2] == [None, None]
