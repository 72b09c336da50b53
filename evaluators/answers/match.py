"""Strict and lenient structure matching, the class of a wrong structure, and the truth a name can carry.

Two structures are compared at one of three **levels**, finest first (issue 31 item 4):

=========  ================================================================================================
level      the two are the same when
=========  ================================================================================================
exact      their RDKit canonical SMILES are equal, stereo included (the strict match)
stereo     they are equal with stereo (and isotopes) removed: RDKit canonical SMILES, ``isomericSmiles=False``
tautomer   their standard InChIKeys share the first block — the main layer: formula, connectivity and mobile
           hydrogens, so tautomers that standard InChI normalises and (de)protonated forms (its ``/p``
           layer) are one compound, with stereo left out — or, with the same formula, RDKit's canonical
           tautomers agree (keto–enol forms InChI keeps apart): the lenient match
=========  ================================================================================================

A wrong structure answer has one :data:`CLASSES` entry (:func:`classify`): ``stereo`` (only stereo differs),
``tautomer`` (tautomer or protonation state, stereo aside), ``isomer`` (another constitution, the same
formula), ``formula`` (another formula) or ``none`` (no structure was read: no answer, not a molecule).

**The truth a name carries.** A data set pairs a name with a SMILES; when the name is what the model is
shown, the truth can be had only at the layers both carry (FreeSolv's SMILES have stereo its names lack).
:func:`name_levels` parses the names with OPSIN and gives each item the finest level at which its name and
its SMILES agree; an item whose name OPSIN cannot read, or names another compound, has no level: its truth
cannot be had from its name, and it is left out of the scores and counted.

Invariants: pure (RDKit's and OPSIN's versions aside); never raise on odd input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

__all__ = ["CLASSES", "CLASS_LABELS", "LEVELS", "classify", "coarsest", "key", "matches", "name_levels"]

#: Comparison levels, finest first (module docstring).
LEVELS = ("exact", "stereo", "tautomer")
#: The class of an answer against the truth: the levels, then the wrong kinds.
CLASSES = ("exact", "stereo", "tautomer", "isomer", "formula", "none")
CLASS_LABELS = {
    "exact": "correct",
    "stereo": "stereo only",
    "tautomer": "tautomer / protonation",
    "isomer": "constitutional isomer (same formula)",
    "formula": "different formula",
    "none": "not a molecule / no answer",
}
_RANK = {c: i for i, c in enumerate(CLASSES)}


@lru_cache(maxsize=65536)
def _forms(smiles: str) -> tuple[str, str, str, str] | None:
    """Canonical SMILES, stereo-free SMILES, InChIKey first block and Hill formula, or ``None``."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem import rdMolDescriptors

    from evaluators.answers import normalise_formula

    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles(smiles) if isinstance(smiles, str) and 0 < len(smiles) <= 2000 else None
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    try:
        inchikey = Chem.MolToInchiKey(mol) or ""
    except Exception:  # noqa: BLE001 - the InChI library rejects some valence states; no skeleton then
        inchikey = ""
    formula = normalise_formula(rdMolDescriptors.CalcMolFormula(mol)) or ""
    return Chem.MolToSmiles(mol), Chem.MolToSmiles(mol, isomericSmiles=False), inchikey[:14], formula


@lru_cache(maxsize=16384)
def _tautomer(smiles: str) -> str | None:
    """RDKit's canonical tautomer of a stereo-free SMILES (``None``: too large or it fails)."""
    from rdkit import Chem
    from rdkit.Chem.MolStandardize import rdMolStandardize

    mol = Chem.MolFromSmiles(smiles)
    if mol is None or mol.GetNumHeavyAtoms() > 100:
        return None
    try:
        enumerator = rdMolStandardize.TautomerEnumerator()
        enumerator.SetMaxTautomers(200)
        return Chem.MolToSmiles(enumerator.Canonicalize(mol), isomericSmiles=False)
    except Exception:  # noqa: BLE001 - RDKit raises on some valence states; no tautomer then
        return None


def key(smiles: str | None, level: str) -> str | None:
    """Return the comparison key of a structure at ``level`` (:data:`LEVELS`); ``None``: it does not read.

    >>> key("C[C@H](N)O", "exact"), key("C[C@H](N)O", "stereo")
    ('C[C@H](N)O', 'CC(N)O')
    >>> key("CC(=O)[O-]", "tautomer") == key("CC(=O)O", "tautomer")
    True
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; known: {', '.join(LEVELS)}")
    forms = _forms(smiles) if smiles else None
    if forms is None:
        return None
    value = forms[LEVELS.index(level)]
    return value or None


def classify(answer: str | None, truth: str | None) -> str:
    """Return the class of a structure answer against the truth (:data:`CLASSES`).

    Both are SMILES (canonical or not); ``answer=None`` (no structure read) is ``none``. A truth that does
    not read makes every answer ``none``-comparable only: the caller leaves such items out.

    >>> [classify(a, "C[C@H](N)O") for a in ("O[C@@H](N)C", "C[C@@H](N)O", "CC(N)O", None)]
    ['exact', 'stereo', 'stereo', 'none']
    >>> classify("O=c1cccc[nH]1", "Oc1ccccn1"), classify("CCCO", "CC(C)O"), classify("CCO", "CC")
    ('tautomer', 'isomer', 'formula')
    """
    a = _forms(answer) if answer else None
    t = _forms(truth) if truth else None
    if a is None or t is None:
        return "none"
    if a[0] == t[0]:
        return "exact"
    if a[1] == t[1]:
        return "stereo"
    if a[2] and a[2] == t[2]:
        return "tautomer"
    if a[3] != t[3]:
        return "formula"
    # Standard InChI's mobile hydrogens miss keto–enol and some ring tautomers; RDKit's canonical
    # tautomer catches them (bounded: only same-formula answers, molecules up to 100 heavy atoms).
    return "tautomer" if _tautomer(a[1]) is not None and _tautomer(a[1]) == _tautomer(t[1]) else "isomer"


def matches(answer: str | None, truth: str | None, level: str = "exact") -> bool:
    """Whether ``answer`` is ``truth`` at ``level`` (``exact``: strict; ``tautomer``: lenient).

    >>> matches("C[C@@H](N)O", "C[C@H](N)O"), matches("C[C@@H](N)O", "C[C@H](N)O", "stereo")
    (False, True)
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; known: {', '.join(LEVELS)}")
    return _RANK[classify(answer, truth)] <= _RANK[level]


def coarsest(levels: Sequence[str | None]) -> str | None:
    """Return the coarsest of several levels (``None``, no truth, wins): the level of a multi-part input.

    >>> coarsest(["exact", "stereo"]), coarsest(["exact", None]), coarsest([])
    ('stereo', None, 'exact')
    """
    if any(level is None for level in levels):
        return None
    return max(levels, key=LEVELS.index, default="exact")


def name_levels(
    names: Sequence[str],
    smiles: Sequence[str],
    *,
    components: bool = False,
    names_to_smiles: Callable[[list[str]], Sequence[Any]] | None = None,
) -> list[str | None]:
    """Return, per item, the finest level at which its name and its SMILES agree (``None``: no truth).

    With ``components``, a name and a SMILES of several ``.``-separated components (reactants) are compared
    component by component in order; the item's level is the :func:`coarsest` of theirs, and a different
    number of components is no truth. OPSIN parses every name in one batch.

    Parameters
    ----------
    names, smiles : sequence of str
        The data set's two representations of each item, in the same order.
    components : bool
        Compare ``.``-separated components one by one (reactions) instead of whole names.
    names_to_smiles : callable, optional
        Name parser (default :func:`evaluators.answers.opsin.names_to_smiles`).

    Examples
    --------
    >>> parse = {"ethanol": "CCO", "butan-2-ol": "CCC(C)O", "ethanal": "CC=O"}
    >>> name_levels(["ethanol", "butan-2-ol", "ethanal", "x"], ["OCC", "CC[C@H](C)O", "CCO", "C"],
    ...             names_to_smiles=lambda ns: [parse.get(n) for n in ns])
    ['exact', 'stereo', None, None]
    """
    if len(names) != len(smiles):
        raise ValueError(f"{len(names)} names for {len(smiles)} SMILES")
    if names_to_smiles is None:
        from evaluators.answers.opsin import names_to_smiles
    parts = [
        (str(n).split("."), str(s).split(".")) if components else ([str(n)], [str(s)])
        for n, s in zip(names, smiles, strict=True)
    ]
    flat = list(dict.fromkeys(p for ns, ss in parts if len(ns) == len(ss) for p in ns if p.strip()))
    parsed = dict(zip(flat, names_to_smiles(flat), strict=True)) if flat else {}
    out: list[str | None] = []
    for ns, ss in parts:
        if len(ns) != len(ss):
            out.append(None)
            continue
        levels = []
        for n, s in zip(ns, ss, strict=True):
            found = classify(parsed.get(n), s)
            levels.append(found if found in LEVELS else None)
        out.append(coarsest(levels))
    return out
