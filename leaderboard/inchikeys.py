"""Standard InChIKeys of SMILES: the identity the board uses to say two sets share a molecule.

InChI merges what SMILES keys keep apart (tautomers, some charge placements), so a corpus that must not hold
an evaluation molecule is checked by these as well (``leaderboard.seen_in_training``,
``leaderboard.tools.caption_training``).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["inchikeys"]


def inchikeys(smiles: Iterable[str]) -> set[str]:
    """Return the standard InChIKeys of the SMILES that RDKit reads (others are left out).

    >>> sorted(inchikeys(["OCC", "CCO", "C1CC"]))
    ['LFQSCWFLJHTTHZ-UHFFFAOYSA-N']
    """
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    out: set[str] = set()
    for s in smiles:
        mol = Chem.MolFromSmiles(s) if s else None
        if mol is not None and mol.GetNumAtoms():
            key = Chem.MolToInchiKey(mol)
            if key:
                out.add(key)
    return out
