"""One edit of the identity-blinded diagnostic (T5): cut a molecule, apply, describe and verify an edit.

Su et al., *Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction*
(``../shared/papers/identity-blinded-reasoning-diagnostic.txt``). A target molecule is shown to the model
only as a *source* molecule plus a structural edit in words. This module holds one edit's life; the search
for pairs, their labels and the sampled groups are in :mod:`evaluators.tracks.identity_blinded.pairs`, the
group names in :mod:`evaluators.tracks.identity_blinded.edit_groups`.

- :func:`single_cuts` — single-cut fragmentations (Hussain & Rea): every acyclic single bond matched by
  rdMMPA's default cut pattern :data:`CUT_SMARTS` (what ``rdMMPA.FragmentMol(maxCuts=1)`` cuts), plus one
  hydrogen per heavy atom that has one (so H → X edits are found). The constant part (core) keeps the
  attachment point as ``[*:1]``; the variable part (chain) too (``[*:1][H]`` for hydrogen).
- :func:`describe_edit` — the edit in words from the structures: the removed and the added group
  (:data:`evaluators.tracks.identity_blinded.edit_groups.GROUP_NAMES`, else the chain's SMILES), and where it
  sits (:func:`site_class`: aromatic / ring / acyclic / carbonyl atom and its element). When that reading has
  several non-equivalent outcomes on the source, the attachment atom's position in the source SMILES is added
  (heavy atoms counted from 1 in the order written: the prompt shows :attr:`EditPair.source`, the canonical
  SMILES the position refers to).
- :func:`verify_pair` — re-applies the edit with RDKit (cut the source at the stored bond, check the removed
  part, ``Chem.molzip`` the added part) and checks the canonical SMILES (stereo included) equals the
  target's; then re-reads the *description* (every site of the source it fits) and checks that its only
  outcome is the target.

Canonical SMILES are :func:`evaluators.notations.smiles.canonical_smiles` (RDKit, isomeric);
:func:`flat_smiles` is the same without stereo, to tell a stereo-only difference from another molecule.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

from rdkit import Chem
from rdkit.Chem import rdqueries

from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.identity_blinded.edit_groups import ELEMENTS, GROUP_NAMES

__all__ = [
    "CUT_SMARTS",
    "HYDROGEN",
    "Cut",
    "Edit",
    "EditPair",
    "all_cuts",
    "apply_edit",
    "describe_edit",
    "description_outcomes",
    "flat_smiles",
    "group_names",
    "group_phrase",
    "single_cuts",
    "site_class",
    "verify_pair",
]

#: rdMMPA's default single-bond cut pattern: an acyclic single bond from an uncharged carbon that is not
#: double/triple bonded to a heteroatom (so C(=O)–X bonds of amides and esters stay whole) to any atom.
CUT_SMARTS = "[#6+0;!$(*=,#[!#6])]!@!=!#[*]"
#: The chain that stands for one hydrogen atom.
HYDROGEN = "[*:1][H]"
_MAP = 1


# --------------------------------------------------------------------------------------------------------
# RDKit helpers


@functools.lru_cache(maxsize=2048)
def _molecule(smiles: str) -> Any:
    """Return the sanitised molecule of a source or chain SMILES, parsed once while in use.

    Shared, so never edited: the cuts (``FragmentOnBonds``, ``AddHs``) and ``molzip`` make new molecules.
    The pair search re-applies ~80 000 edits, source after source, with a few hundred chains: a small cache
    holds them (a molecule is tens of kB).
    """
    return Chem.MolFromSmiles(smiles)


@functools.lru_cache(maxsize=65536)
def flat_smiles(smiles: str) -> str | None:
    """Return RDKit's canonical SMILES of ``smiles`` without stereo, or ``None`` if it does not parse.

    Examples
    --------
    >>> flat_smiles("C[C@H](O)c1ccccc1"), flat_smiles("not a smiles")
    ('CC(O)c1ccccc1', None)
    """
    mol = Chem.MolFromSmiles(smiles) if smiles else None
    return None if mol is None else Chem.MolToSmiles(mol, isomericSmiles=False)


@functools.lru_cache(maxsize=1)
def _dummy_query() -> Any:
    return rdqueries.AtomNumEqualsQueryAtom(0)


def _mark_dummies(mol: Any) -> None:
    """Give the dummy atoms of ``mol`` map number 1 and no isotope (in place).

    The dummies are found by RDKit's own query: a Python loop over ``GetAtoms()`` goes through RDKit's
    Python sequence wrapper, which cost 80 of the 280 s of building the ``edit-pairs`` set.
    """
    for atom in mol.GetAtomsMatchingQuery(_dummy_query()):
        atom.SetIsotope(0)
        atom.SetAtomMapNum(_MAP)


def _fragment_smiles(mol: Any, *, isomeric: bool = True, marked: bool = False) -> str:
    """Canonical SMILES of a fragment whose dummy atoms carry map number 1 (no isotope).

    ``marked``: the fragment's dummies carry them already (the pieces of :func:`_cut_bond` and
    :func:`_cut_hydrogen`), so it is written as it is, without a marked copy.
    """
    if not marked:
        mol = Chem.Mol(mol)
        _mark_dummies(mol)
    return Chem.MolToSmiles(mol, isomericSmiles=isomeric)


def _heavy(mol: Any) -> int:
    """Heavy atoms of a fragment, dummies left out (RDKit counts atomic numbers above 1)."""
    return mol.GetNumHeavyAtoms()


def _cut_bond(mol: Any, attach: int, root: int) -> tuple[Any, Any] | None:
    """Cut the acyclic single bond ``attach``–``root``; return (core with ``attach``, chain with ``root``)."""
    bond = mol.GetBondBetweenAtoms(attach, root)
    if bond is None or bond.IsInRing() or bond.GetBondType() != Chem.BondType.SINGLE:
        return None
    broken = Chem.FragmentOnBonds(mol, [bond.GetIdx()], addDummies=True, dummyLabels=[(_MAP, _MAP)])
    mapping: list[tuple[int, ...]] = []
    pieces = Chem.GetMolFrags(broken, asMols=True, fragsMolAtomMapping=mapping, sanitizeFrags=False)
    if len(pieces) != 2:
        return None
    core_index = 0 if attach in mapping[0] else 1
    core, chain = pieces[core_index], pieces[1 - core_index]
    for piece in (core, chain):
        _mark_dummies(piece)
    return core, chain


def _cut_hydrogen(mol: Any, attach: int) -> Any | None:
    """Replace one hydrogen of atom ``attach`` by ``[*:1]`` (in place, so its stereo parity is kept)."""
    if mol.GetAtomWithIdx(attach).GetTotalNumHs() < 1:
        return None
    with_h = Chem.RWMol(Chem.AddHs(mol, onlyOnAtoms=(attach,)))
    hydrogens = [n.GetIdx() for n in with_h.GetAtomWithIdx(attach).GetNeighbors() if n.GetAtomicNum() == 1]
    dummy = with_h.GetAtomWithIdx(hydrogens[0])
    dummy.SetAtomicNum(0)
    dummy.SetAtomMapNum(_MAP)
    dummy.SetNoImplicit(True)
    return Chem.RemoveHs(with_h.GetMol(), sanitize=False)


def _zip(core: Any, chain_smiles: str) -> str | None:
    """Join ``core`` and the chain at ``[*:1]`` (``Chem.molzip``); canonical SMILES or ``None``."""
    chain = _molecule(chain_smiles)  # sanitised: double-bond stereo is perceived only then
    if chain is None:
        return None
    try:
        joined = Chem.molzip(core, chain)
        params = Chem.RemoveHsParameters()
        params.removeDefiningBondStereo = True  # an H put on a stereo double bond would stay explicit
        joined = Chem.RemoveHs(joined, params)
        return canonical_smiles(Chem.MolToSmiles(joined))
    except (RuntimeError, ValueError):  # valence errors and the like: the edit does not apply
        return None


# --------------------------------------------------------------------------------------------------------
# Fragmentation


@dataclass(frozen=True, slots=True)
class Cut:
    """One single cut of a molecule (atom indices in the order of its canonical SMILES).

    Attributes
    ----------
    key : str
        Canonical SMILES of the core without stereo: the index key.
    core : str
        Canonical SMILES of the core (constant part), attachment point ``[*:1]``.
    chain : str
        Canonical SMILES of the variable part with ``[*:1]``; :data:`HYDROGEN` for a hydrogen.
    attach : int
        The core atom at the cut.
    root : int or None
        The chain atom bonded to ``attach``; ``None`` for a hydrogen.
    core_heavy, chain_heavy : int
        Heavy atoms of the core and the chain (dummies and hydrogens left out).
    """

    key: str
    core: str
    chain: str
    attach: int
    root: int | None
    core_heavy: int
    chain_heavy: int


@functools.lru_cache(maxsize=8192)
def all_cuts(smiles: str) -> tuple[Cut, ...]:
    """Every single cut of a canonical SMILES: each acyclic single bond both ways and each H-bearing atom."""
    mol = Chem.MolFromSmiles(smiles)
    out: list[Cut] = []
    for bond in mol.GetBonds():
        if bond.IsInRing() or bond.GetBondType() != Chem.BondType.SINGLE:
            continue
        ends = (bond.GetBeginAtomIdx(), bond.GetEndAtomIdx())
        for attach, root in (ends, ends[::-1]):
            if mol.GetAtomWithIdx(root).GetAtomicNum() <= 1 or mol.GetAtomWithIdx(attach).GetAtomicNum() <= 1:
                continue
            cut = _cut_bond(mol, attach, root)
            if cut is None:
                continue
            core, chain = cut
            key = _fragment_smiles(core, isomeric=False, marked=True)
            out.append(
                Cut(key, _fragment_smiles(core, marked=True), _fragment_smiles(chain, marked=True), attach,
                    root, _heavy(core), _heavy(chain))  # fmt: skip
            )
    for atom in mol.GetAtoms():
        core = _cut_hydrogen(mol, atom.GetIdx()) if atom.GetAtomicNum() > 1 else None
        if core is not None:
            out.append(
                Cut(_fragment_smiles(core, isomeric=False, marked=True), _fragment_smiles(core, marked=True),
                    HYDROGEN, atom.GetIdx(), None, _heavy(core), 0)  # fmt: skip
            )
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _cut_pattern() -> Any:
    return Chem.MolFromSmarts(CUT_SMARTS)


def single_cuts(smiles: str, *, max_changed: int = 10, min_core_ratio: float = 1.0) -> list[Cut]:
    """Single cuts of one molecule that may index a matched pair.

    The bonds are those rdMMPA's default pattern (:data:`CUT_SMARTS`) cuts, each read both ways (either side
    may be the constant part), plus one hydrogen per heavy atom that has one. Cuts whose chain has more than
    ``max_changed`` heavy atoms, or more than ``1 / min_core_ratio`` of the core's, are left out.

    Parameters
    ----------
    smiles : str
        A canonical SMILES (:func:`evaluators.notations.smiles.canonical_smiles`); atom indices refer to its
        atom order.
    max_changed : int
        The largest chain (heavy atoms) kept.
    min_core_ratio : float
        The core must have at least this many times the chain's heavy atoms.

    Returns
    -------
    list of Cut

    Examples
    --------
    >>> sorted({c.chain for c in single_cuts("Clc1ccccc1")})
    ['Cl[*:1]', '[*:1][H]']
    """
    mol = Chem.MolFromSmiles(smiles)
    allowed = {frozenset(m) for m in mol.GetSubstructMatches(_cut_pattern())}
    return [
        c
        for c in all_cuts(smiles)
        if (c.root is None or frozenset((c.attach, c.root)) in allowed)
        and c.chain_heavy <= max_changed
        and c.core_heavy >= min_core_ratio * c.chain_heavy
    ]


# --------------------------------------------------------------------------------------------------------
# Names of groups and sites


@functools.lru_cache(maxsize=1)
def group_names() -> dict[str, tuple[str, str]]:
    """Return :data:`~evaluators.tracks.identity_blinded.edit_groups.GROUP_NAMES` keyed by chain SMILES.

    Keys are canonical chain SMILES (``[*:1]``).

    Raises
    ------
    ValueError
        If two keys of the table are the same chain.
    """
    out = {}
    for smiles, name in GROUP_NAMES.items():
        key = HYDROGEN if smiles == "[*][H]" else _fragment_smiles(Chem.MolFromSmiles(smiles))
        if key in out:
            raise ValueError(f"GROUP_NAMES: {smiles!r} duplicates another key")
        out[key] = name
    return out


def group_phrase(chain: str, *, definite: bool = False) -> str:
    """Name a chain in words: ``a hydroxyl group`` / ``the hydroxyl group``, or its SMILES when unnamed.

    Examples
    --------
    >>> group_phrase("O[*:1]"), group_phrase("[*:1][H]", definite=True)
    ('a hydroxyl group', 'the hydrogen atom')
    >>> group_phrase("OCC[*:1]")
    'the group OCC* (SMILES; * marks the attachment point)'
    """
    named = group_names().get(chain)
    if named is None:
        return f"the group {chain.replace(f'[*:{_MAP}]', '*')} (SMILES; * marks the attachment point)"
    article, noun = named
    return f"{'the' if definite else article} {noun}"


def site_class(mol: Any, index: int) -> str:
    """Return the class of an attachment atom, e.g. ``aromatic C``, ``carbonyl C``, ``acyclic N``.

    The kind is ``aromatic``, ``carbonyl`` (a carbon double bonded to O or S), ``ring`` (non-aromatic) or
    ``acyclic``, followed by the element symbol.

    Examples
    --------
    >>> from rdkit import Chem
    >>> m = Chem.MolFromSmiles("CC(=O)c1ccncc1N")
    >>> [site_class(m, i) for i in (0, 1, 3, 9)]
    ['acyclic C', 'carbonyl C', 'aromatic C', 'acyclic N']
    """
    atom = mol.GetAtomWithIdx(index)
    symbol = atom.GetSymbol()
    if atom.GetIsAromatic():
        return f"aromatic {symbol}"
    double = [b.GetOtherAtom(atom).GetSymbol() for b in atom.GetBonds() if b.GetBondTypeAsDouble() == 2.0]
    if symbol == "C" and any(other in ("O", "S") for other in double):
        return "carbonyl C"
    return f"{'ring' if atom.IsInRing() else 'acyclic'} {symbol}"


def _site_phrase(site: str, locant: int | None) -> str:
    """Name a site: ``an aromatic carbon``, or with a locant ``the aromatic carbon that is atom 5 of …``."""
    kind, symbol = site.split(" ")
    element = ELEMENTS.get(symbol, symbol)
    words = {"aromatic": f"aromatic {element}", "carbonyl": "carbonyl carbon",
             "ring": f"non-aromatic ring {element}", "acyclic": f"acyclic {element}"}[kind]  # fmt: skip
    if locant is None:
        return f"{'an' if words[0] in 'aeiou' else 'a'} {words}"
    return (f"the {words} that is atom {locant + 1} of the source SMILES (heavy atoms counted from 1 "
            "in the order written)")  # fmt: skip


# --------------------------------------------------------------------------------------------------------
# Edits and their verification


@dataclass(frozen=True, slots=True)
class Edit:
    """A single-cut edit of a source molecule (atom indices in the order of the source's canonical SMILES).

    Attributes
    ----------
    removed, added : str
        The chain taken off and the chain put on, canonical SMILES with ``[*:1]`` (:data:`HYDROGEN` for H).
    attach : int
        The source atom that keeps its place and carries the change.
    root : int or None
        The first atom of the removed chain; ``None`` when a hydrogen is replaced.
    site : str
        :func:`site_class` of ``attach``.
    locant : bool
        Whether the description names ``attach`` by its position (the reading without it is ambiguous).
    description : str
        The edit in words.
    """

    removed: str
    added: str
    attach: int
    root: int | None
    site: str = ""
    locant: bool = False
    description: str = ""


@dataclass(frozen=True, slots=True)
class EditPair:
    """An ordered matched pair: ``target`` is ``source`` after ``edit`` (canonical SMILES)."""

    source_id: str
    target_id: str
    source: str
    target: str
    edit: Edit


def apply_edit(source: str, removed: str, added: str, attach: int, root: int | None) -> str | None:
    """Re-apply an edit to a source molecule and return the product's canonical SMILES.

    Cut ``source`` at ``attach``–``root`` (or replace one H of ``attach``), check that the removed part is
    ``removed``, and join ``added`` there (``Chem.molzip``).

    Parameters
    ----------
    source : str
        Canonical SMILES; ``attach`` and ``root`` index its atoms in the order written.
    removed, added : str
        Chains with ``[*:1]`` (:data:`HYDROGEN` for a hydrogen).
    attach : int
        The atom that carries the change.
    root : int or None
        The removed chain's first atom; ``None`` when ``removed`` is a hydrogen.

    Returns
    -------
    str or None
        Canonical SMILES (stereo included) of the product; ``None`` when the edit does not apply there (no
        such bond or hydrogen, another group at that bond, an impossible valence).

    Examples
    --------
    >>> apply_edit("Clc1ccccc1", "Cl[*:1]", "O[*:1]", 1, 0)
    'Oc1ccccc1'
    >>> apply_edit("Clc1ccccc1", "[*:1][H]", "F[*:1]", 2, None)
    'Fc1ccccc1Cl'
    >>> apply_edit("Clc1ccccc1", "C[*:1]", "O[*:1]", 1, 0) is None
    True
    """
    mol = _molecule(source)
    if mol is None or not 0 <= attach < mol.GetNumAtoms():
        return None
    if root is None:
        if removed != HYDROGEN:
            return None
        core = _cut_hydrogen(mol, attach)
    else:
        if not 0 <= root < mol.GetNumAtoms():
            return None
        cut = _cut_bond(mol, attach, root)
        if cut is None or _fragment_smiles(cut[1], marked=True) != removed:
            return None
        core = cut[0]
    return None if core is None else _zip(core, added)


@functools.lru_cache(maxsize=65536)
def description_outcomes(
    source: str, removed: str, added: str, site: str, locant: int | None
) -> frozenset[str]:
    """Return every product a reader of an edit's description can make from ``source``.

    The reader replaces ``removed`` at any atom of class ``site`` (only at ``locant`` when given) by
    ``added``. The description is unambiguous when exactly one product results.

    Examples
    --------
    >>> sorted(description_outcomes("Clc1ccc(Cl)cc1C", "Cl[*:1]", "O[*:1]", "aromatic C", None))
    ['Cc1cc(Cl)ccc1O', 'Cc1cc(O)ccc1Cl']
    """
    mol = _molecule(source)
    out: set[str] = set()
    for cut in all_cuts(source):
        if cut.chain != removed or (locant is not None and cut.attach != locant):
            continue
        if site_class(mol, cut.attach) != site:
            continue
        product = apply_edit(source, removed, added, cut.attach, cut.root)
        if product is not None:
            out.add(product)
    return frozenset(out)


def describe_edit(source: str, edit: Edit) -> Edit:
    """Return ``edit`` with its site class and description, generated from the structures.

    Wording: *Add {added} to {site}* (a hydrogen is replaced), *Remove {removed} from {site}, leaving a
    hydrogen atom in its place*, or *Replace {removed} on {site} by {added}*. The site is named by class
    (``an aromatic carbon``); when that reading yields more than one product on the source, by position too.

    Examples
    --------
    >>> e = describe_edit("Clc1ccccc1", Edit("Cl[*:1]", "O[*:1]", 1, 0))
    >>> e.description
    'Replace the chloro group on an aromatic carbon by a hydroxyl group.'
    >>> describe_edit("Clc1ccccc1", Edit("[*:1][H]", "F[*:1]", 2, None)).locant
    True
    """
    site = site_class(_molecule(source), edit.attach)
    locant = len(description_outcomes(source, edit.removed, edit.added, site, None)) > 1
    where = _site_phrase(site, edit.attach if locant else None)
    if edit.removed == HYDROGEN:
        text = f"Add {group_phrase(edit.added)} to {where}."
    elif edit.added == HYDROGEN:
        removed = group_phrase(edit.removed, definite=True)
        text = f"Remove {removed} from {where}, leaving a hydrogen atom in its place."
    else:
        removed, added = group_phrase(edit.removed, definite=True), group_phrase(edit.added)
        text = f"Replace {removed} on {where} by {added}."
    return replace(edit, site=site, locant=locant, description=text)


def verify_pair(pair: EditPair) -> str | None:
    """Check a pair; return ``None`` when it passes, else the reason.

    Reasons: ``stereo not reproduced`` (re-applying the stored edit to the source gives the target's
    constitution but not its stereo: the edit would have to create, remove or invert a stereo element, which
    the description does not say), ``reconstruction differs from target`` (any other mismatch of the
    canonical SMILES) and ``description not unique`` (the description read on the source has another or a
    further outcome than the target).

    Examples
    --------
    >>> edit = describe_edit("Clc1ccccc1", Edit("Cl[*:1]", "O[*:1]", 1, 0))
    >>> verify_pair(EditPair("a", "b", "Clc1ccccc1", "Oc1ccccc1", edit)) is None
    True
    """
    edit = pair.edit
    product = apply_edit(pair.source, edit.removed, edit.added, edit.attach, edit.root)
    if product != pair.target:
        if product is not None and flat_smiles(product) == flat_smiles(pair.target):
            return "stereo not reproduced"
        return "reconstruction differs from target"
    locant = edit.attach if edit.locant else None
    if description_outcomes(pair.source, edit.removed, edit.added, edit.site, locant) != {pair.target}:
        return "description not unique"
    return None
