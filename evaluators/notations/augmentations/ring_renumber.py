"""``ring_renumber``: the original string with its ring-closure labels replaced by other valid labels.

The AMORE "cycles" variant. Unlike the other augmentations it edits the *original* string rather than
writing a new one, so only the ring-closure labels differ. Open/close state is tracked exactly: a label
that closes a ring gets the same replacement as the one that opened it; a replacement is never a label
that is open at that point; labels may be reused after they close (as in the original); ``%nn`` and
``%(nnn)`` labels are read, and replacements above 9 are written as ``%nn``. Digits inside brackets
(isotopes, charges, hydrogen counts) are not ring closures and are left alone. Every opened label changes,
so a string with any ring closure always changes, and the molecule never does (the AMORE reference code
turned 6/3300 ChEBI-20 molecules into other molecules).
"""

from __future__ import annotations

import random
import re

from evaluators.notations.augmentations import AUGMENTATIONS, Augmentation, parse_smiles

# A bracket atom, a %(nnn) or %nn label, or a single-digit label (outside brackets by construction).
_TOKEN = re.compile(r"\[[^\]]*\]|%\((\d+)\)|%(\d\d)|(\d)")
_MAX_LABEL = 99


def _format_label(label: int) -> str:
    return str(label) if label < 10 else f"%{label:02d}"


def renumber_ring_closures(smiles: str, rng: random.Random) -> str:
    """Replace every ring-closure label of ``smiles`` by a different label that is free at that point.

    Parameters
    ----------
    smiles : str
        A SMILES string (not modified otherwise).
    rng : random.Random
        Source of randomness for the choice of labels.

    Returns
    -------
    str
        The renumbered string; equal to ``smiles`` only if it has no ring closure.

    Raises
    ------
    ValueError
        If a ring-closure label is left open at the end, or more than 99 rings are open at once.

    Examples
    --------
    >>> renumber_ring_closures("c1ccccc1", random.Random(0)) != "c1ccccc1"
    True
    """
    open_labels: dict[int, int] = {}  # original label -> replacement, while the ring is open
    pieces: list[str] = []
    last = 0
    for match in _TOKEN.finditer(smiles):
        if match.group(0).startswith("["):
            continue
        original = int(next(g for g in match.groups() if g is not None))
        if original in open_labels:
            replacement = open_labels.pop(original)
        else:
            in_use = set(open_labels.values())
            # Prefer single digits (the common case); fall back to %nn only when they are exhausted.
            free = [lab for lab in range(1, 10) if lab not in in_use and lab != original]
            if not free:
                free = [lab for lab in range(10, _MAX_LABEL + 1) if lab not in in_use and lab != original]
            if not free:
                raise ValueError(f"more than {_MAX_LABEL} rings open at once in {smiles!r}")
            replacement = rng.choice(free)
            open_labels[original] = replacement
        pieces.append(smiles[last : match.start()])
        pieces.append(_format_label(replacement))
        last = match.end()
    if open_labels:
        raise ValueError(f"unclosed ring-closure label(s) {sorted(open_labels)} in {smiles!r}")
    pieces.append(smiles[last:])
    return "".join(pieces)


@AUGMENTATIONS.register("ring_renumber")
class RingRenumberAugmentation(Augmentation):
    """Seeded replacement of the original string's ring-closure labels (see module docstring)."""

    name = "ring_renumber"
    summary = (
        "Ring-closure labels of the original string replaced by other valid labels (open/close state "
        "tracked exactly, `%nn` supported, never a label that is open; seeded)."
    )
    params = {"max_label": _MAX_LABEL}

    def transform(self, smiles: str, rng: random.Random) -> str:  # noqa: D102
        parse_smiles(smiles)  # an unparsable original is a failure, never passed through
        return renumber_ring_closures(smiles, rng)
