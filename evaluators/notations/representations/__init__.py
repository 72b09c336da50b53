"""Ways of writing one molecule — the representations a question can use — and their registry.

One module per notation (issue 33 item 2): ``smiles`` (RDKit canonical SMILES), ``randomized`` (a seeded
random-atom-order SMILES), ``iupac`` (the record's systematic name), ``formula`` (the Hill formula: a
summary, not a structure), ``selfies`` (the ``selfies`` package), ``inchi`` (standard InChI, RDKit) and
``image`` (an RDKit depiction at a fixed size, a PNG data URI with a content hash). Each says how a question
introduces a molecule written its way (:attr:`Representation.phrase`), writes a molecule
(:meth:`Representation.write`) and reads an answer written its way back to a structure
(:meth:`Representation.read_batch`), so that answers in any notation are compared as structures.

Invariants: deterministic given ``(seed, key)`` (the randomized writing seeds a private RNG per key, as the
augmentations do); a molecule that cannot be written raises :class:`NotWritable` with the reason (the caller
counts it, nothing is passed through unchecked); reading never raises and gives RDKit canonical SMILES or
``None``; :func:`round_trip` says at which level (:data:`evaluators.answers.match.CLASSES`) a written molecule
reads back to itself.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from evaluators.registry import Registry

__all__ = [
    "REPRESENTATIONS", "NotWritable", "Representation", "RoundTrip", "get_representation", "round_trip",
]  # fmt: skip

REPRESENTATIONS: Registry[type[Representation]] = Registry("representation", __name__)


class NotWritable(ValueError):
    """A molecule this notation cannot express (the message says why: no name on record, a charge …)."""


class Representation(ABC):
    """Base class: one notation for one molecule.

    Subclasses set the class attributes and implement :meth:`write` (and :meth:`read` where
    :attr:`readable`).

    Parameters
    ----------
    seed : int, default=0
        Benchmark seed, for notations that draw (``randomized``).
    """

    name: ClassVar[str]
    #: Display label ("SELFIES").
    label: ClassVar[str]
    #: How a question introduces a molecule written this way; ``{text}`` is the written molecule.
    phrase: ClassVar[str]
    #: What it is, in one sentence for the methodology page (Markdown, written by us).
    summary: ClassVar[str] = ""
    #: ``image``: the written form is a data URI sent as an image part, not as text in the prompt.
    modality: ClassVar[Literal["text", "image"]] = "text"
    #: Whether an answer written this way can be read back to a structure (a formula cannot).
    readable: ClassVar[bool] = True
    #: The record field the notation is taken from; ``""``: computed from the SMILES.
    field: ClassVar[str] = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def rng(self, key: str) -> random.Random:
        """Return the private RNG of one molecule (order-independent, HELM's per-instance seeding)."""
        return random.Random(f"{self.seed}:{self.name}:{key}")

    @abstractmethod
    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:
        """Return the molecule written as ``smiles`` in this notation.

        Parameters
        ----------
        smiles : str
            The molecule, as a SMILES string.
        record : mapping, optional
            The data-set record, for notations taken from a field (:attr:`field`).
        key : str
            Stable id of the molecule (seeds drawing notations).

        Raises
        ------
        NotWritable
            If the molecule cannot be written this way; the message says why.
        """

    def read(self, text: str) -> str | None:
        """Read one answer written in this notation to RDKit canonical SMILES, or ``None``."""
        return None

    def read_batch(self, texts: Sequence[str | None]) -> list[str | None]:
        """Read many answers (notations with an external reader override this to batch it)."""
        return [self.read(t) if isinstance(t, str) else None for t in texts]


def get_representation(name: str, seed: int = 0) -> Representation:
    """Instantiate the representation registered as ``name``."""
    return REPRESENTATIONS.get(name)(seed=seed)


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """How one molecule fared written in a notation and read back.

    ``status``: ``same`` (read back at ``level``), ``changed`` (read back as another structure: ``level`` is
    its class, e.g. ``stereo``), ``unwritable`` or ``unreadable``; ``reason`` for the last two.
    """

    status: Literal["same", "changed", "unwritable", "unreadable"]
    level: str = ""
    reason: str = ""


def round_trip(
    representation: Representation,
    smiles: Sequence[str],
    records: Sequence[Mapping[str, str] | None] | None = None,
    *,
    level: str = "exact",
) -> list[RoundTrip]:
    """Write each molecule and read it back; ``same`` when it returns at ``level`` (or finer).

    The truth is the SMILES itself (:func:`evaluators.answers.match.classify`), so a notation that drops a
    layer (a name without stereo) shows as ``changed`` with the class of what was lost.
    """
    from evaluators.answers.match import CLASSES, classify

    if not representation.readable:
        raise ValueError(f"{representation.name} cannot be read back to a structure")
    records = list(records) if records is not None else [None] * len(smiles)
    written: list[str | None] = []
    reasons: list[str] = []
    for k, (s, record) in enumerate(zip(smiles, records, strict=True)):
        try:
            written.append(representation.write(s, record=record, key=str(k)))
            reasons.append("")
        except NotWritable as exc:
            written.append(None)
            reasons.append(str(exc))
    read = representation.read_batch(written)
    out = []
    for s, w, r, why in zip(smiles, written, read, reasons, strict=True):
        if w is None:
            out.append(RoundTrip("unwritable", reason=why))
        elif r is None:
            out.append(RoundTrip("unreadable", reason="the written form does not read back"))
        else:
            found = classify(r, s)
            same = CLASSES.index(found) <= CLASSES.index(level)
            out.append(RoundTrip("same" if same else "changed", found))
    return out
