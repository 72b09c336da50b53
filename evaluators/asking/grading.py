"""Strict and lenient grading of structure answers, shared by the asking tracks (T3, T4, T5; issue 31).

Every structure answer (a SMILES, or a name read by OPSIN, both normalised to canonical SMILES) is graded
three ways against the truth (:mod:`evaluators.answers.match`):

- **strict** (``accuracy``): the canonical SMILES match, at the layers the question's input carries — when
  the molecule was shown as a name that lacks the stereo of the data set's SMILES (or writes another
  tautomer of it), the comparison drops what the name cannot say (:func:`item_level`);
- **lenient** (``accuracy_lenient``): the same compound up to stereo, tautomer and protonation;
- its **class** when wrong (``wrong_<class>``: stereo only, tautomer / protonation, constitutional isomer,
  different formula, not a molecule).

An item whose input name cannot be verified as the compound (OPSIN cannot read it, or it names another
one) has no truth: it is left out of every score of the questions that show the name and counted as
``n_truth_excluded``. A perfect translator therefore scores 1.0, not the share of the data set's own
name–SMILES pairs that agree.

Formulas: ``accuracy = (1/n) Σ_i [class(a_i, t_i) ≤ ℓ_i]``, ``accuracy_lenient = (1/n) Σ_i [class(a_i,
t_i) ≤ tautomer]``, ``wrong_c = (1/n) Σ_i [class(a_i, t_i) = c > ℓ_i]``, over the ``n`` items with a truth,
classes ordered exact < stereo < tautomer < the wrong ones, ``ℓ_i`` the item's level; a missing answer is
wrong (class ``none``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluators.answers.match import CLASSES, LEVELS, classify, coarsest, name_levels

__all__ = ["GRADING_METRICS", "WRONG", "Graded", "align", "coarsest", "grade", "item_level", "levels_of",
           "summary"]

#: The classes of a wrong answer, in display order (``wrong_<class>`` metrics).
WRONG = tuple(c for c in CLASSES if c != "exact")
#: Metrics :func:`summary` gives, besides ``accuracy``.
GRADING_METRICS = ("accuracy_lenient", *(f"wrong_{c}" for c in WRONG))


@dataclass(frozen=True, slots=True)
class Graded:
    """One structure answer, graded.

    Attributes
    ----------
    strict : bool
        Right at the item's level (the strict match where the input carries every layer).
    lenient : bool
        The same compound up to stereo, tautomer and protonation.
    kind : str
        Its class (:data:`evaluators.answers.match.CLASSES`): ``exact`` when strictly identical.
    """

    strict: bool
    lenient: bool
    kind: str


def grade(answer: str | None, truth: str | None, level: str = "exact") -> Graded:
    """Grade one structure answer against the truth at the item's ``level`` (module docstring).

    >>> grade("C[C@@H](N)O", "C[C@H](N)O")
    Graded(strict=False, lenient=True, kind='stereo')
    >>> grade("C[C@@H](N)O", "C[C@H](N)O", "stereo").strict
    True
    """
    kind = classify(answer, truth)
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; known: {', '.join(LEVELS)}")
    strict = kind in LEVELS and LEVELS.index(kind) <= LEVELS.index(level)
    return Graded(strict=strict, lenient=kind in LEVELS, kind=kind)


def summary(graded: Sequence[Graded]) -> dict[str, float]:
    """``accuracy``, ``accuracy_lenient`` and the ``wrong_<class>`` shares of graded items (empty: none).

    >>> s = summary([grade("CCO", "OCC"), grade("CC", "CCO"), grade(None, "CCO")])
    >>> round(s["accuracy"], 3), round(s["wrong_formula"], 3), s["wrong_stereo"]
    (0.333, 0.333, 0.0)
    """
    n = len(graded)
    if n == 0:
        return {}
    out = {"accuracy": sum(g.strict for g in graded) / n,
           "accuracy_lenient": sum(g.lenient for g in graded) / n}
    for c in WRONG:
        out[f"wrong_{c}"] = sum(g.kind == c and not g.strict for g in graded) / n
    return out


def levels_of(
    items: Iterable[tuple[str, str, str]], *, components: bool = False
) -> dict[str, str | None]:
    """Level of each item from its ``(item id, name, SMILES)``: :func:`~evaluators.answers.match.name_levels`.

    One OPSIN batch for all the names; ``components`` compares reactants one by one.
    """
    rows = list(dict.fromkeys(items))
    found = name_levels([n for _, n, _ in rows], [s for _, _, s in rows], components=components)
    return {item: level for (item, _, _), level in zip(rows, found, strict=True)}


def item_level(representation: str, levels: dict[str, str | None], item: str) -> str | None:
    """Return the level a question is graded at: its item's when the input is a name, else ``exact``."""
    return levels.get(item) if representation == "iupac" else "exact"


def align(a: Sequence[str | None], b: Sequence[str | None], levels: Sequence[str]) -> list[str | None]:
    """Return ``b`` with each answer that equals ``a``'s at the item's level replaced by ``a``'s.

    Consistency compares two representations' answers at the layers both inputs carry: where the name
    shown lacks the SMILES's stereo, a stereo-free answer to the name agrees with a stereo answer to the
    SMILES. Items at level ``exact`` are left as they are.

    >>> align(["C[C@H](N)O", "CCO"], ["CC(N)O", "CC"], ["stereo", "stereo"])
    ['C[C@H](N)O', 'CC']
    """
    if not len(a) == len(b) == len(levels):
        raise ValueError(f"{len(a)}, {len(b)} answers and {len(levels)} levels")
    out = list(b)
    for i, (x, y, level) in enumerate(zip(a, b, levels, strict=True)):
        if level != "exact" and x is not None and y is not None and x != y and grade(y, x, level).strict:
            out[i] = x
    return out
