"""Relational questions of T4 (ChemDIRT's relational category): two or three molecules in one question.

- **equivalence** — "are these two SMILES (or two SELFIES) strings the same molecule?" (and, across
  notations, **name_equivalence**: "are this name (or this InChI) and this SMILES the same molecule?", A
  written as the record's IUPAC name or as its InChI, asked only for molecules without stereo marks, whose
  stratum stays balanced; InChI only where it reads back as A exactly and does not also write the
  negative — its mobile hydrogens can make two tautomers one string). Two InChIs are never asked: one
  molecule has one InChI, so string equality would answer it. Molecule A is written as
  RDKit's canonical SMILES, molecule B always as a random-atom-order SMILES (the ``random_order``
  augmentation, seeded per item), for the same molecule (yes) or for a hard negative (no): the molecule with
  one stereocentre or stereo bond inverted (``stereo``), another molecule of the data set with the same
  formula (``isomer``), or the molecule with one heavy atom changed to another element (``edit``). Balanced
  within two strata — molecules with and without stereo marks — so neither the marks nor the class balance
  predict the answer: in each stratum, in ``sha256(seed|id)`` order, every other item is a negative; a stereo
  molecule's negative is its stereoisomer, any other's an isomer of the set where one exists, else an edit.
- **similarity** — "is B more similar to A than C is?". A is the sample's molecule; by Morgan Tanimoto
  similarity to A (radius 2, 2048 bits) the closer molecule is one of A's ten nearest neighbours in the
  data set (near-duplicates from 0.95 left out) and the farther one any molecule at least :data:`MARGIN`
  less similar, each picked in ``sha256(seed|A|candidate)`` order: the truth is never a coin flip. The
  closer one is shown as B on every other item (again in hash order): yes and no are balanced, and the
  position of a molecule carries no label. Names (the ``iupac`` writing) are the data set's own; the
  track verifies all three against their SMILES (OPSIN), as it does the name of every named question.
  SELFIES and InChI writings are the notation registry's, asked only where all three read back as the
  molecules shown in SMILES.

Each composer returns, per record id of the sample, the text that fills the template's ``{molecule}`` slot
in each representation, the truth (a bool) and what kind of item it is; items it cannot pose (RDKit cannot
read the molecule, no negative or no pair with the margin exists) are left out, and counted by the track.
Pure functions of (records, sample, seed): the container never sees a truth, only the texts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["COMPOSERS", "MARGIN", "Posed", "equivalence", "name_equivalence", "similarity"]

#: Least difference of Tanimoto similarity to A between B and C (the similarity question's margin).
MARGIN = 0.2
#: The closer molecule is one of A's this many nearest neighbours in the data set (by Tanimoto).
_NEIGHBOURS = 10
#: Tanimoto similarity from which another record counts as the same compound (salt form, stereoisomer).
_DUPLICATE = 0.95
#: Element changes of the one-atom edit, tried in this order on each atom.
_EDITS = {"C": "N", "N": "C", "O": "S", "S": "O", "F": "Cl", "Cl": "Br", "Br": "Cl", "I": "Br", "P": "N"}


@dataclass(frozen=True, slots=True)
class Posed:
    """One composed item: its texts, its truth, how it was built and the other records it shows.

    ``texts``: the ``{molecule}`` slot per representation (empty: the record's molecule, written as in any
    single-molecule question, :func:`~.asked.written`); ``members``: ids of the data set's other records
    shown (their names, too, must be the compounds: the track checks them); ``slots``: the item's values of
    the task's further template slots (the functional group named, :mod:`.groups`).
    """

    texts: dict[str, str]
    truth: Any  # yes/no (a bool), or a structure (retrosynthesis: the reactants' canonical SMILES)
    kind: str
    members: tuple[str, ...] = ()
    slots: tuple[tuple[str, str], ...] = ()


def _order(seed: int, salt: str, ids: Sequence[str]) -> list[str]:
    return sorted(ids, key=lambda i: hashlib.sha256(f"{seed}|{salt}|{i}".encode()).hexdigest())


def _mol(smiles: str):
    from rdkit import Chem

    return Chem.MolFromSmiles(smiles) if smiles else None


def _canonical(mol) -> str:
    from rdkit import Chem

    return Chem.MolToSmiles(mol)


def _randomized(smiles: str, seed: int, key: str) -> str | None:
    from evaluators.notations.representations import NotWritable, get_representation

    try:
        return get_representation("randomized", seed).write(smiles, key=key)
    except NotWritable:
        return None


def _has_stereo(mol) -> bool:
    from rdkit import Chem

    return any(a.GetChiralTag() != Chem.ChiralType.CHI_UNSPECIFIED for a in mol.GetAtoms()) or any(
        b.GetStereo() != Chem.BondStereo.STEREONONE for b in mol.GetBonds()
    )


def stereoisomer(mol) -> str | None:
    """Canonical SMILES of ``mol`` with its first stereocentre (else its first stereo bond) inverted."""
    from rdkit import Chem

    rw = Chem.RWMol(mol)
    for atom in rw.GetAtoms():
        tag = atom.GetChiralTag()
        if tag in (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW):
            atom.InvertChirality()
            break
    else:
        for bond in rw.GetBonds():
            flip = {Chem.BondStereo.STEREOE: Chem.BondStereo.STEREOZ, Chem.BondStereo.STEREOZ:
                    Chem.BondStereo.STEREOE, Chem.BondStereo.STEREOCIS: Chem.BondStereo.STEREOTRANS,
                    Chem.BondStereo.STEREOTRANS: Chem.BondStereo.STEREOCIS}.get(bond.GetStereo())  # fmt: skip
            if flip is not None:
                bond.SetStereo(flip)
                break
        else:
            return None
    out = Chem.MolToSmiles(rw)
    return out if out != _canonical(mol) and _mol(out) is not None else None


def one_atom_edit(mol, seed: int, key: str) -> str | None:
    """Canonical SMILES of ``mol`` with one heavy atom changed to another element (:data:`_EDITS`).

    Atoms are tried from a seeded start; the first change RDKit sanitises gives a different molecule.
    """
    from rdkit import Chem

    n = mol.GetNumAtoms()
    if not n:
        return None
    start = int(hashlib.sha256(f"{seed}|edit|{key}".encode()).hexdigest(), 16) % n
    before = _canonical(mol)
    for step in range(n):
        index = (start + step) % n
        symbol = mol.GetAtomWithIdx(index).GetSymbol()
        if symbol not in _EDITS:
            continue
        rw = Chem.RWMol(mol)
        atom = rw.GetAtomWithIdx(index)
        atom.SetAtomicNum(Chem.GetPeriodicTable().GetAtomicNumber(_EDITS[symbol]))
        atom.SetNoImplicit(False)
        atom.SetNumExplicitHs(0)
        try:
            Chem.SanitizeMol(rw)
        except Exception:  # noqa: BLE001 - RDKit raises several kinds for an impossible valence
            continue
        out = Chem.MolToSmiles(rw)
        if out != before and _mol(out) is not None:
            return out
    return None


def _formula(mol) -> str:
    from rdkit.Chem import rdMolDescriptors

    return rdMolDescriptors.CalcMolFormula(mol)


def equivalence(records: Sequence[dict[str, str]], chosen: Sequence[dict[str, str]], seed: int
                ) -> dict[str, Posed]:  # fmt: skip
    """Pose the equivalence question on ``chosen`` (module docstring); ``records``: the whole data set."""
    from rdkit import Chem

    by_formula: dict[str, list[tuple[str, str]]] = {}
    for r in records:
        mol = _mol(str(r.get("smiles") or ""))
        if mol is not None:
            flat = Chem.MolToSmiles(mol, isomericSmiles=False)
            by_formula.setdefault(_formula(mol), []).append((str(r["id"]), flat))
    mols = {str(r["id"]): _mol(str(r.get("smiles") or "")) for r in chosen}
    named = {str(r["id"]): r.get("iupac") for r in chosen}
    strata = {True: [], False: []}
    for item, mol in mols.items():
        if mol is not None:
            strata[_has_stereo(mol)].append(item)
    out: dict[str, Posed] = {}
    for stereo, items in strata.items():
        for position, item in enumerate(_order(seed, "equivalence", items)):
            mol = mols[item]
            a = _canonical(mol)
            if position % 2 == 0:
                other, kind = a, "same"
            else:
                other, kind = None, ""
                if stereo:
                    other, kind = stereoisomer(mol), "stereo"
                if other is None:
                    flat = Chem.MolToSmiles(mol, isomericSmiles=False)
                    isomers = [i for i, s in by_formula.get(_formula(mol), []) if s != flat and i != item]
                    if isomers:
                        pick = _order(seed, f"isomer|{item}", isomers)[0]
                        smiles = next(str(r["smiles"]) for r in records if str(r["id"]) == pick)
                        other, kind = _canonical(_mol(smiles)), "isomer"
                if other is None:
                    other, kind = one_atom_edit(mol, seed, item), "edit"
            b = _randomized(other, seed, f"equivalence|{item}") if other else None
            if b is None:
                continue
            texts = {"smiles": f"{a} and {b}"}
            # SELFIES: A's canonical one, B's encoded from its random-order SMILES as written, so that the
            # two strings differ for the same molecule as the SMILES pair's do (never one string twice).
            pair = _written("selfies", a), _selfies_as_written(b)
            if None not in pair:
                texts["selfies"] = "{} and {}".format(*pair)
            # Across notations (the record's name or A's InChI, then B's SMILES): only without stereo marks,
            # so that a name silent on stereo cannot make "same molecule?" ambiguous; the track also keeps
            # only names that OPSIN reads as exactly the record's molecule (no tautomer or stereo slack).
            name = str(named.get(item) or "").strip()
            if not stereo and name:
                texts["iupac"] = f"{name} and {b}"
            inchi = _written("inchi", a) if not stereo else None
            # Not where InChI's normalisation (mobile hydrogens) writes the negative as A: no truth then.
            if inchi and (kind == "same" or _inchi(other) != inchi):
                texts["inchi"] = f"{inchi} and {b}"
            out[item] = Posed(texts, kind == "same", kind)
    return out


def _selfies_as_written(smiles: str) -> str | None:
    """SELFIES of ``smiles`` in its own atom order; ``None`` unless it decodes to the same molecule."""
    import selfies as sf

    from evaluators.notations.smiles import canonical_smiles

    try:
        out = sf.encoder(smiles)
    except sf.EncoderError:
        return None
    return out if out and canonical_smiles(sf.decoder(out)) == canonical_smiles(smiles) else None


def _inchi(smiles: str) -> str:
    """Return the standard InChI of ``smiles`` (RDKit's, as the notation registry writes it), or ``""``."""
    from rdkit import Chem

    return Chem.MolToInchi(_mol(smiles)) or ""


#: Further notations the similarity question is written in, each only where all three molecules read back.
_REGISTERED = ("selfies", "inchi")


def _written(notation: str, smiles: str) -> str | None:
    """``smiles`` in the registry's ``notation``; ``None`` if it does not read back as the same molecule."""
    from evaluators.notations.representations import NotWritable, get_representation

    writer = get_representation(notation)
    try:
        out = writer.write(smiles)
    except NotWritable:
        return None
    return out if writer.read(out) == smiles else None


def _fingerprint(mol):
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048).GetFingerprint(mol)


def similarity(records: Sequence[dict[str, str]], chosen: Sequence[dict[str, str]], seed: int
               ) -> dict[str, Posed]:  # fmt: skip
    """Pose the similarity question on ``chosen`` (module docstring); ``records``: the whole data set."""
    from rdkit import DataStructs

    pool = {}
    for r in records:
        mol = _mol(str(r.get("smiles") or ""))
        if mol is not None:
            pool[str(r["id"])] = (r, mol, _fingerprint(mol))
    ids = list(pool)
    out: dict[str, Posed] = {}
    items = [str(r["id"]) for r in chosen if str(r["id"]) in pool]
    for position, item in enumerate(_order(seed, "similarity", items)):
        similar = DataStructs.BulkTanimotoSimilarity(pool[item][2], [pool[i][2] for i in ids])
        # Another molecule, not a near-duplicate (a stereoisomer or salt form is not an "analogue").
        others = {i: s for i, s in zip(ids, similar, strict=True) if i != item and s < _DUPLICATE}
        near = sorted(others, key=lambda i: (-others[i], i))[:_NEIGHBOURS]
        if not near:
            continue
        closer = _order(seed, f"similarity|{item}", near)[0]
        far = [i for i in others if others[i] <= others[closer] - MARGIN]
        if not far:
            continue
        farther = _order(seed, f"similarity|{item}|far", far)[0]
        b, c = (closer, farther) if position % 2 == 0 else (farther, closer)
        trio = (pool[item], pool[b], pool[c])
        texts = {"smiles": "A: {}, B: {}, C: {}".format(*(_canonical(mol) for _, mol, _ in trio))}
        if all(str(r.get("iupac") or "").strip() for r, _, _ in trio):
            texts["iupac"] = "A: {}, B: {}, C: {}".format(*(str(r["iupac"]).strip() for r, _, _ in trio))
        for notation in _REGISTERED:
            written = [_written(notation, _canonical(mol)) for _, mol, _ in trio]
            if None not in written:
                texts[notation] = "A: {}, B: {}, C: {}".format(*written)
        out[item] = Posed(texts, position % 2 == 0, "b-closer" if position % 2 == 0 else "c-closer", (b, c))
    return out


def name_equivalence(records: Sequence[dict[str, str]], chosen: Sequence[dict[str, str]], seed: int
                     ) -> dict[str, Posed]:  # fmt: skip
    """Pose "are this name (or InChI) and this SMILES the same molecule?" on molecules without stereo.

    :func:`equivalence`'s items without stereo marks: A is the record's IUPAC name or A's InChI, B the
    same random-order SMILES (of the molecule or its negative) that the SMILES version shows; within that
    stratum every other item is a negative, so the answers stay balanced.
    """
    across = ("iupac", "inchi")
    return {item: Posed({r: p.texts[r] for r in across if r in p.texts}, p.truth, p.kind)
            for item, p in equivalence(records, chosen, seed).items()
            if any(r in p.texts for r in across)}  # fmt: skip


#: Task → composer(records, sample, seed): the tasks of ``prompt_templates.json`` whose items are composed
#: (the relational ones here; functional groups register from :mod:`.groups`).
Composer = Callable[[Sequence[dict[str, str]], Sequence[dict[str, str]], int], dict[str, Posed]]
COMPOSERS: dict[str, Composer] = {
    "equivalence": equivalence,
    "name_equivalence": name_equivalence,
    "similarity": similarity,
}
