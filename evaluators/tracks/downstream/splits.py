"""Scaffold splits for the downstream track (T2): whole Bemis–Murcko scaffold groups per split.

A random split puts close analogues of the test molecules into training and flatters every model; grouping by
scaffold (Bemis & Murcko 1996) keeps each ring system on one side, as MoleculeNet recommends for these sets
(Wu et al. 2018) and the AMORE paper's downstream experiment uses. :func:`scaffold_split` is DeepChem's
``ScaffoldSplitter`` rule made seed-stable: scaffold groups largest first (ties broken by a seeded hash of the
scaffold, not by file order), each group assigned whole to train until train is full, then to validation,
then test. So the test set gets the rare scaffolds — the hard, out-of-distribution part.

For the regression sets and ClinTox MoleculeNet recommends a random split (their scaffolds are few and
uneven: FreeSolv's scaffold split left 5 scaffolds in training against 58 in test, train mean −3.29 against
test mean −5.83 kcal/mol): :func:`random_split` draws it from a seeded hash of each item's key, so neither
file order nor position decides.

Pure and deterministic: the same SMILES, fractions and seed give the same split on every machine (RDKit's
canonical scaffold SMILES are the group keys); a molecule RDKit cannot parse goes into its own group.

References
----------
Bemis, G. W. & Murcko, M. A. (1996). The properties of known drugs. 1. Molecular frameworks. J. Med. Chem.
39, 2887–2893. Wu, Z. et al. (2018). MoleculeNet: a benchmark for molecular machine learning. Chem. Sci. 9,
513–530.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["SPLITS", "murcko_scaffold", "random_split", "scaffold_split"]

#: Split names, in assignment order.
SPLITS: tuple[str, ...] = ("train", "valid", "test")


def murcko_scaffold(smiles: str) -> str | None:
    """Return the canonical Bemis–Murcko scaffold SMILES of ``smiles`` (``""`` for acyclic), or ``None``.

    Examples
    --------
    >>> murcko_scaffold("CCOc1ccc(CC(=O)O)cc1")
    'c1ccccc1'
    >>> murcko_scaffold("CCO"), murcko_scaffold("not a molecule")
    ('', None)
    """
    from rdkit import Chem, RDLogger
    from rdkit.Chem.Scaffolds import MurckoScaffold

    RDLogger.DisableLog("rdApp.*")
    try:
        mol = Chem.MolFromSmiles(smiles)
    finally:
        RDLogger.EnableLog("rdApp.*")
    if mol is None:
        return None
    return MurckoScaffold.MurckoScaffoldSmiles(mol=mol, includeChirality=False)


def scaffold_split(
    smiles: Sequence[str], *, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1), seed: int = 0
) -> list[str]:
    """Assign each molecule to ``train``, ``valid`` or ``test`` by scaffold group.

    Parameters
    ----------
    smiles : sequence of str
        The molecules, in data-set order.
    fractions : tuple of float
        Target shares of train, validation and test; they must sum to 1.
    seed : int
        Breaks ties between groups of equal size (a hash of seed and scaffold), so that file order does
        not decide.

    Returns
    -------
    list of str
        The split of each molecule, aligned with ``smiles``.

    Raises
    ------
    ValueError
        If the fractions are negative or do not sum to 1.

    Examples
    --------
    >>> smiles = ["c1ccccc1O", "c1ccccc1N", "c1ccccc1C", "C1CCCCC1O", "CCO", "CCN", "c1ccncc1"]
    >>> scaffold_split(smiles, fractions=(0.5, 0.25, 0.25))
    ['train', 'train', 'train', 'test', 'valid', 'valid', 'test']
    """
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"scaffold_split: fractions must be non-negative and sum to 1, got {fractions}")
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(smiles):
        scaffold = murcko_scaffold(s)
        key = f"\x00unparsed:{i}" if scaffold is None else scaffold
        groups.setdefault(key, []).append(i)

    def tie(key: str) -> str:
        return hashlib.sha256(f"{seed}\x00{key}".encode()).hexdigest()

    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), tie(kv[0])))
    n = len(smiles)
    train_cut, valid_cut = fractions[0] * n, (fractions[0] + fractions[1]) * n
    out = [""] * n
    n_train = n_valid = 0
    for _, members in ordered:
        # DeepChem's rule: a group goes to train if train stays within its share, else to validation if
        # train + validation stay within theirs, else to test; a later, smaller group may still fit in train.
        if n_train + len(members) <= train_cut:
            split, n_train = "train", n_train + len(members)
        elif n_train + n_valid + len(members) <= valid_cut:
            split, n_valid = "valid", n_valid + len(members)
        else:
            split = "test"
        for i in members:
            out[i] = split
    return out


def random_split(
    keys: Sequence[str], *, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1), seed: int = 0
) -> list[str]:
    """Assign each item to ``train``, ``valid`` or ``test`` at random, by a seeded hash of its key.

    The items are ordered by ``sha256(seed, key)`` and cut at the shares, so the split depends on the keys
    and the seed only, never on the order they come in.

    Parameters
    ----------
    keys : sequence of str
        One distinct key per item (an opaque id).
    fractions : tuple of float
        Target shares of train, validation and test; they must sum to 1.
    seed : int
        Seed of the hash.

    Raises
    ------
    ValueError
        If the fractions are negative or do not sum to 1, or keys repeat.

    Examples
    --------
    >>> random_split(["a", "b", "c", "d"], fractions=(0.5, 0.0, 0.5))
    ['test', 'test', 'train', 'train']
    """
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"random_split: fractions must be non-negative and sum to 1, got {fractions}")
    if len(set(keys)) != len(keys):
        raise ValueError("random_split: keys must be distinct")
    order = sorted(
        range(len(keys)), key=lambda i: hashlib.sha256(f"{seed}\x00{keys[i]}".encode()).hexdigest()
    )
    n = len(keys)
    train_cut, valid_cut = round(fractions[0] * n), round((fractions[0] + fractions[1]) * n)
    out = [""] * n
    for rank, i in enumerate(order):
        out[i] = "train" if rank < train_cut else "valid" if rank < valid_cut else "test"
    return out
