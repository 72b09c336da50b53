"""``smiles``: RDKit's canonical isomeric SMILES — the board's reference writing."""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation
from evaluators.notations.smiles import canonical_smiles


@REPRESENTATIONS.register("smiles")
class SmilesRepresentation(Representation):
    """Canonical isomeric SMILES; answers are read by RDKit."""

    name = "smiles"
    label = "SMILES"
    phrase = "the molecule with the SMILES {text}"
    summary = "RDKit canonical isomeric SMILES."

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        written = canonical_smiles(smiles)
        if written is None:
            raise NotWritable(f"RDKit cannot parse SMILES {smiles[:80]!r}")
        return written

    def read(self, text: str) -> str | None:  # noqa: D102
        return canonical_smiles(text.strip())
