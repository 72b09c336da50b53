"""Functional-group recognition of T4 (ChemDIRT's recognition category): "does this molecule contain …?".

Each item asks about one named functional group of :data:`GROUPS`, a chemist's name with a SMARTS pattern
that says exactly what counts (an ester's alkoxy oxygen is not an ether, an amide's NH2 not an amine, a
carbamate or urea not an amide). The truth is whether RDKit finds the pattern in the record's molecule.

Which group an item asks about is chosen so that the group named carries no label: for every group, as many
molecules that contain it as molecules that lack it are asked about it. Rounds over the groups (in
``sha256(seed|group)`` order) each give one group a molecule of the sample that contains it and one that
lacks it, both the first still unasked in ``sha256(seed|functional_group|id)`` order; a group drops out once
no unasked molecule of the sample contains it (or lacks it). Every group is then exactly balanced, and so is
the whole task: a constant "yes" or "no" scores a balanced accuracy of exactly 0.5, as does any answer that
depends only on the group named.

The question shows the molecule as every single-molecule question does (:func:`~.asked.written`, in each of
the task's representations) and fills the template's ``{group}`` slot with the group's name
(:attr:`~.relational.Posed.slots`). Pure functions of (records, sample, seed).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from evaluators.tracks.prompt_robustness.relational import COMPOSERS, Posed

__all__ = ["GROUPS", "Group", "functional_group", "groups_in"]


@dataclass(frozen=True, slots=True)
class Group:
    """A named functional group: ``name`` fills the question (article included), ``smarts`` decides it."""

    id: str
    name: str
    smarts: str


#: The groups asked, each with the SMARTS that defines it (documented on the methodology page).
GROUPS: tuple[Group, ...] = (
    Group("carboxylic_acid", "a carboxylic acid group", "[CX3](=O)[OX2H1,OX1H0-]"),
    Group("ester", "an ester group", "[#6][CX3](=O)[OX2H0][#6]"),
    Group("amide", "an amide group", "[#6][CX3](=[OX1])[NX3]"),
    Group("ketone", "a ketone group", "[#6][CX3](=O)[#6]"),
    Group("aldehyde", "an aldehyde group", "[CX3H1](=O)[#6,#1]"),
    Group("alcohol", "an alcohol (hydroxyl on an sp3 carbon)", "[OX2H1][CX4]"),
    Group("phenol", "a phenol (hydroxyl on an aromatic ring)", "[OX2H1]c"),
    Group("ether", "an ether group", "[OD2;!$(O[#6]=[O,S,N])]([#6])[#6;!$([#6]=[O,S,N])]"),
    Group("primary_amine", "a primary amine (NH2 not on a carbonyl)",
          "[NX3;H2;!$(N[#6,#7,#15,#16]=[#7,#8,#16]);!$(N[#7,#8])]"),
    Group("nitrile", "a nitrile group", "[CX2]#[NX1]"),
    Group("nitro", "a nitro group", "[$([NX3](=O)=O),$([NX3+](=O)[O-])]"),
    Group("halogen", "a halogen atom (F, Cl, Br or I)", "[F,Cl,Br,I]"),
    Group("alkene", "a carbon-carbon double bond outside an aromatic ring", "[C]=[C]"),
    Group("benzene_ring", "a benzene ring", "c1ccccc1"),
    Group("sulfonamide", "a sulfonamide group", "[SX4](=O)(=O)[NX3]"),
)  # fmt: skip


@cache
def _patterns() -> tuple[tuple[Group, object], ...]:
    from rdkit import Chem

    return tuple((g, Chem.MolFromSmarts(g.smarts)) for g in GROUPS)


def groups_in(smiles: str) -> frozenset[str] | None:
    """Ids of the groups of :data:`GROUPS` that RDKit finds in ``smiles`` (``None``: RDKit cannot read it)."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles) if smiles else None
    if mol is None:
        return None
    return frozenset(g.id for g, pattern in _patterns() if mol.HasSubstructMatch(pattern))


def _key(seed: int, salt: str) -> str:
    return hashlib.sha256(f"{seed}|{salt}".encode()).hexdigest()


def functional_group(records: Sequence[dict[str, str]], chosen: Sequence[dict[str, str]], seed: int
                     ) -> dict[str, Posed]:  # fmt: skip
    """Pose the functional-group question on ``chosen`` (module docstring); ``records`` is not read.

    Returns, per record id asked, a :class:`~.relational.Posed` with no texts of its own (the molecule is
    written as in any single-molecule question), the truth, the group's id as its ``kind`` and the group's
    name as the ``group`` slot.
    """
    found = {str(r["id"]): groups_in(str(r.get("smiles") or "")) for r in chosen}
    readable = [i for i, g in found.items() if g is not None]
    order = sorted(readable, key=lambda i: _key(seed, f"functional_group|{i}"))
    by_id = {g.id: g for g in GROUPS}
    active = sorted(by_id, key=lambda g: _key(seed, f"group|{g}"))
    unasked = list(order)
    out: dict[str, Posed] = {}
    while active:
        still = []
        for group in active:
            has = next((i for i in unasked if group in found[i]), None)
            lacks = next((i for i in unasked if group not in found[i]), None)
            if has is None or lacks is None:
                continue
            for item, truth in ((has, True), (lacks, False)):
                unasked.remove(item)
                out[item] = Posed({}, truth, group, slots=(("group", by_id[group].name),))
            still.append(group)
        active = still
    return out


COMPOSERS["functional_group"] = functional_group
