"""Tests of one T5 edit (evaluators/tracks/identity_blinded/edits.py): fragmentation, applying, describing and
verifying an edit."""
# ruff: noqa: D103

from __future__ import annotations

import pytest
from rdkit import Chem
from rdkit.Chem import rdMMPA

from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.identity_blinded import edits as E

# --------------------------------------------------------------------------------------------------------
# Fragmentation


@pytest.mark.parametrize(
    "smiles", ["C[C@H](Cl)c1ccc(O)cc1", "CC(=O)Nc1ccc(O)cc1", "CCOC(=O)c1ccccc1N", "O=[N+]([O-])c1ccc(F)cc1"]
)
def test_bond_cuts_are_the_ones_rdmmpa_makes(smiles):
    canon = canonical_smiles(smiles)
    ours = {frozenset((c.core, c.chain)) for c in E.single_cuts(canon, max_changed=99, min_core_ratio=0.0)
            if c.root is not None}  # fmt: skip
    theirs = set()
    for _, chains in rdMMPA.FragmentMol(Chem.MolFromSmiles(canon), maxCuts=1, resultsAsMols=False):
        theirs.add(frozenset(Chem.MolToSmiles(Chem.MolFromSmiles(part)) for part in chains.split(".")))
    assert ours == theirs


def test_hydrogen_cuts_one_per_atom_with_hydrogens():
    canon = canonical_smiles("Clc1ccccc1")  # 5 aromatic CH
    cuts = [c for c in E.single_cuts(canon) if c.root is None]
    assert len(cuts) == 5 and {c.chain for c in cuts} == {E.HYDROGEN}
    assert all(c.chain_heavy == 0 and c.core_heavy == 7 for c in cuts)


def test_size_limits():
    canon = canonical_smiles("CCCCCCCCCCCCc1ccccc1")
    assert max(c.chain_heavy for c in E.single_cuts(canon, max_changed=4)) == 4
    cuts = E.single_cuts(canon, min_core_ratio=2.0)
    assert all(c.core_heavy >= 2 * c.chain_heavy for c in cuts)


# --------------------------------------------------------------------------------------------------------
# Edits


def test_apply_edit_replace_add_remove():
    assert E.apply_edit("Clc1ccccc1", "Cl[*:1]", "O[*:1]", 1, 0) == "Oc1ccccc1"
    assert E.apply_edit("Clc1ccccc1", E.HYDROGEN, "F[*:1]", 3, None) == canonical_smiles("Clc1cccc(F)c1")
    assert E.apply_edit("Clc1ccccc1", "Cl[*:1]", E.HYDROGEN, 1, 0) == "c1ccccc1"


def test_apply_edit_refuses_what_does_not_fit():
    assert E.apply_edit("Clc1ccccc1", "Br[*:1]", "O[*:1]", 1, 0) is None  # another group at that bond
    assert E.apply_edit("Clc1ccccc1", E.HYDROGEN, "F[*:1]", 0, None) is None  # chlorine has no H
    assert E.apply_edit("Clc1ccccc1", "Cl[*:1]", "O[*:1]", 1, 3) is None  # no such bond
    assert E.apply_edit("c1ccccc1", "[*:1]c1ccccc1", "O[*:1]", 0, 1) is None  # ring bond: not cut


def test_apply_edit_keeps_stereo():
    assert E.apply_edit(canonical_smiles("C[C@H](Cl)c1ccccc1"), "Cl[*:1]", "Br[*:1]", 1, 2) == (
        canonical_smiles("C[C@H](Br)c1ccccc1")
    )
    source = canonical_smiles("C/C=C/Cl")
    mol = Chem.MolFromSmiles(source)
    cl = next(a.GetIdx() for a in mol.GetAtoms() if a.GetSymbol() == "Cl")
    attach = mol.GetAtomWithIdx(cl).GetNeighbors()[0].GetIdx()
    assert E.apply_edit(source, "Cl[*:1]", "Br[*:1]", attach, cl) == canonical_smiles("C/C=C/Br")
    # An H put on a stereo double bond does not stay as an explicit [H]; the stereo goes with it.
    assert E.apply_edit(source, "Cl[*:1]", E.HYDROGEN, attach, cl) == "C=CC"


def test_group_phrases():
    assert E.group_phrase("O[*:1]") == "a hydroxyl group"
    assert E.group_phrase("Cl[*:1]", definite=True) == "the chloro group"
    assert E.group_phrase(canonical_smiles("[*:1]C(=O)O")) == "a carboxylic acid group"
    assert E.group_phrase(canonical_smiles("[*:1][N+](=O)[O-]")) == "a nitro group"
    assert E.group_phrase("OCC[*:1]").startswith("the group OCC* (SMILES")


def test_group_names_parse_and_are_distinct():
    names = E.group_names()
    assert len(names) == len(E.GROUP_NAMES)


def test_site_classes():
    mol = Chem.MolFromSmiles("CC(=O)c1ccncc1NC1CCCC1")
    assert [E.site_class(mol, i) for i in (0, 1, 3, 6, 9, 11)] == [
        "acyclic C", "carbonyl C", "aromatic C", "aromatic N", "acyclic N", "ring C"]  # fmt: skip


def test_description_of_replacement_removal_and_addition():
    replace = E.describe_edit("Clc1ccccc1", E.Edit("Cl[*:1]", "O[*:1]", 1, 0))
    assert replace.description == "Replace the chloro group on an aromatic carbon by a hydroxyl group."
    assert not replace.locant and replace.site == "aromatic C"
    remove = E.describe_edit("Clc1ccccc1", E.Edit("Cl[*:1]", E.HYDROGEN, 1, 0))
    assert remove.description == (
        "Remove the chloro group from an aromatic carbon, leaving a hydrogen atom in its place."
    )
    add = E.describe_edit("Clc1ccccc1", E.Edit(E.HYDROGEN, "F[*:1]", 3, None))
    assert add.locant  # ortho/meta/para are different products: the position is named
    assert add.description == (
        "Add a fluoro group to the aromatic carbon that is atom 4 of the source SMILES (heavy atoms "
        "counted from 1 in the order written)."
    )


def test_description_without_locant_when_sites_are_equivalent():
    # Both chlorines of 1,4-dichlorobenzene give the same product.
    source = canonical_smiles("Clc1ccc(Cl)cc1")
    edit = E.describe_edit(source, E.Edit("Cl[*:1]", "O[*:1]", 1, 0))
    assert not edit.locant
    assert E.description_outcomes(source, "Cl[*:1]", "O[*:1]", "aromatic C", None) == {
        canonical_smiles("Oc1ccc(Cl)cc1")
    }


def test_verify_pair_accepts_and_rejects():
    source = canonical_smiles("Clc1ccc(Cl)cc1C")
    mol = Chem.MolFromSmiles(source)
    cl = [a.GetIdx() for a in mol.GetAtoms() if a.GetSymbol() == "Cl"][0]
    attach = mol.GetAtomWithIdx(cl).GetNeighbors()[0].GetIdx()
    edit = E.describe_edit(source, E.Edit("Cl[*:1]", "O[*:1]", attach, cl))
    target = E.apply_edit(source, "Cl[*:1]", "O[*:1]", attach, cl)
    assert edit.locant  # the two chlorines are not equivalent
    assert E.verify_pair(E.EditPair("s", "t", source, target, edit)) is None
    unnamed = E.Edit(edit.removed, edit.added, attach, cl, edit.site, locant=False)
    vague = E.EditPair("s", "t", source, target, unnamed)
    assert E.verify_pair(vague) == "description not unique"
    wrong = E.EditPair("s", "t", source, "Oc1ccccc1", edit)
    assert E.verify_pair(wrong) == "reconstruction differs from target"
    ethyl = canonical_smiles("CCc1ccccc1")
    chiral = canonical_smiles("C[C@H](O)c1ccccc1")
    ch2 = next(a.GetIdx() for a in Chem.MolFromSmiles(ethyl).GetAtoms() if a.GetTotalNumHs() == 2)
    new_centre = E.describe_edit(ethyl, E.Edit(E.HYDROGEN, "O[*:1]", ch2, None))
    assert E.verify_pair(E.EditPair("s", "t", ethyl, chiral, new_centre)) == "stereo not reproduced"


def test_docstring_examples():
    import doctest

    assert doctest.testmod(E, optionflags=doctest.ELLIPSIS).failed == 0
