"""SMILES augmentations of the AMORE track (SPEC §4 T1) and their registry.

Registers (one module each): ``canonical``, ``explicit_h``, ``kekule``, ``ring_renumber``,
``random_order``. Invariants: deterministic given ``(seed, example id)`` — every example gets its own
``random.Random(f"{seed}:{name}:{id}")``, so results do not depend on order or on the other examples
(HELM's per-instance seeding); an unparsable input is an explicit failure, never passed through; every
output is checked to encode the same molecule as its input (same canonical isomeric SMILES).

Reference: Ganeeva et al., "Chemical Language Models Have Problems with Chemistry: A Case Study on Molecule
Captioning Task" (AMORE), ICLR 2024 Tiny Papers — ``shared/papers/amore-smiles-augmentation-robustness.txt``.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from evaluators.notations.smiles import canonical_smiles, parse_smiles
from evaluators.registry import Registry

AUGMENTATIONS: Registry[type[Augmentation]] = Registry("augmentation", __name__)

PairStatus = Literal["changed", "identical", "excluded"]


@dataclass(frozen=True, slots=True)
class AugmentationDescription:
    """What was applied, recorded with every result (name, parameters, seed)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0


@dataclass(frozen=True, slots=True)
class AugmentedPair:
    """One original string and its augmented variant.

    ``status`` is ``"changed"`` (a non-trivial pair), ``"identical"`` (the variant equals the original
    string: trivially retrieved) or ``"excluded"`` (the augmentation failed or changed the molecule;
    ``reason`` says why and the pair is left out of every metric).
    """

    id: str
    original: str
    augmented: str | None
    status: PairStatus
    reason: str = ""


class Augmentation(ABC):
    """Base class: a seeded, per-instance transformation of a SMILES string.

    Subclasses set ``name`` (equal to their module name) and implement :meth:`transform`.

    Parameters
    ----------
    seed : int, default=0
        Benchmark seed; combined with each example id into a private RNG.
    """

    name: ClassVar[str]
    params: ClassVar[dict[str, Any]] = {}
    #: What it does, in one sentence for the methodology page (Markdown, written by us).
    summary: ClassVar[str] = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    @property
    def description(self) -> AugmentationDescription:
        """The recorded description of this augmentation."""
        return AugmentationDescription(self.name, dict(self.params), self.seed)

    def rng(self, example_id: str) -> random.Random:
        """Return the private RNG of one example (order-independent)."""
        return random.Random(f"{self.seed}:{self.name}:{example_id}")

    @abstractmethod
    def transform(self, smiles: str, rng: random.Random) -> str:
        """Return another SMILES string of the molecule written as ``smiles``.

        Raises
        ------
        evaluators.notations.smiles.InvalidSmilesError
            If ``smiles`` cannot be parsed.
        """

    def apply(self, example_id: str, smiles: str, reference: str | None = None) -> AugmentedPair:
        """Transform one example and check that the output encodes the same molecule.

        Parameters
        ----------
        example_id : str
            Stable identifier of the molecule; seeds the RNG.
        smiles : str
            The original string.
        reference : str, optional
            Canonical isomeric SMILES of ``smiles`` when the caller already has it.

        Returns
        -------
        AugmentedPair
            With status ``"changed"``, ``"identical"`` or ``"excluded"`` (never raises for bad input).
        """
        reference = reference or canonical_smiles(smiles)
        if reference is None:
            return AugmentedPair(example_id, smiles, None, "excluded", "original does not parse")
        try:
            augmented = self.transform(smiles, self.rng(example_id))
        except Exception as exc:  # noqa: BLE001 - RDKit raises many types; the pair is reported, not lost
            return AugmentedPair(example_id, smiles, None, "excluded", f"{type(exc).__name__}: {exc}")
        if augmented == smiles:  # the original string again: the same molecule, nothing to check
            return AugmentedPair(example_id, smiles, augmented, "identical")
        if canonical_smiles(augmented) != reference:
            return AugmentedPair(example_id, smiles, augmented, "excluded", "identity check failed")
        return AugmentedPair(example_id, smiles, augmented, "changed")


def get_augmentation(name: str, seed: int = 0) -> Augmentation:
    """Instantiate the augmentation registered as ``name``."""
    return AUGMENTATIONS.get(name)(seed=seed)


__all__ = [
    "AUGMENTATIONS",
    "Augmentation",
    "AugmentationDescription",
    "AugmentedPair",
    "get_augmentation",
    "parse_smiles",
]
