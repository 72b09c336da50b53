"""How far a rewrite moves the string: its length and its Levenshtein ratio (AMORE Table 7).

AMORE relates the captioning drop under a rewrite to how much the rewrite changes the string: the mean
length of the rewritten SMILES and, per molecule, the *Levenshtein ratio* as the paper defines it — the
Levenshtein distance between the original and the rewritten string over the original's length:

    ratio(original, rewrite) = d_Lev(original, rewrite) / |original|,

``d_Lev`` the unit-cost edit distance (insertions, deletions, substitutions). 0: the same string; the
paper measured 0.47 for canonicalisation and 1.49 for explicit hydrogens on ChEBI-20 (Table 7). Not
python-Levenshtein's ``ratio`` (a similarity). The distance is computed bit-parallel (Myers 1999, in
Hyyrö's formulation for the global edit distance): one big-integer step per character of the rewrite, exact.
"""

from __future__ import annotations

__all__ = ["levenshtein_distance", "levenshtein_ratio"]


def levenshtein_distance(a: str, b: str) -> int:
    """Return the unit-cost edit distance between ``a`` and ``b``.

    Examples
    --------
    >>> levenshtein_distance("kitten", "sitting")
    3
    >>> levenshtein_distance("", "CCO")
    3
    """
    if not a or not b:
        return len(a) + len(b)
    m = len(a)
    full = (1 << m) - 1
    last = 1 << (m - 1)
    peq: dict[str, int] = {}
    for i, char in enumerate(a):
        peq[char] = peq.get(char, 0) | (1 << i)
    pv, mv, score = full, 0, m
    for char in b:
        eq = peq.get(char, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & full
        mh = pv & xh
        if ph & last:
            score += 1
        elif mh & last:
            score -= 1
        # The first row of the edit-distance table grows by one per character: a carry of +1 shifts in.
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = (mh | ~(xv | ph)) & full
        mv = ph & xv
    return score


def levenshtein_ratio(original: str, rewrite: str) -> float:
    """Return AMORE's Levenshtein ratio: ``d_Lev(original, rewrite) / |original|`` (0 for two empty strings).

    Examples
    --------
    >>> levenshtein_ratio("CCO", "OCC")
    0.6666666666666666
    >>> levenshtein_ratio("CCO", "CCO")
    0.0
    """
    if not original:
        return 0.0 if not rewrite else float("inf")
    return levenshtein_distance(original, rewrite) / len(original)
