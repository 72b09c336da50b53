"""``selfies``: SELFIES strings (Krenn et al. 2020) written and read by the ``selfies`` package.

SELFIES has no canonical form of its own: the board writes the SELFIES of RDKit's canonical SMILES, so one
molecule has one string. The package's default semantic constraints cap valences (e.g. hypervalent sulfur or
phosphorus in some charged forms) and can change a molecule; :func:`~evaluators.notations.representations.
round_trip` finds those, and a molecule whose SELFIES does not decode to itself is not written.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation
from evaluators.notations.smiles import canonical_smiles

#: Longest answer decoded: the decoder's work grows with the string.
MAX_CHARS = 4000


@REPRESENTATIONS.register("selfies")
class SelfiesRepresentation(Representation):
    """``selfies.encoder`` of the canonical SMILES, kept only if it decodes to the same molecule."""

    name = "selfies"
    label = "SELFIES"
    phrase = "the molecule with the SELFIES {text}"
    summary = "SELFIES (`selfies` package) of the canonical SMILES, checked to decode to the same molecule."

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        import selfies as sf

        reference = canonical_smiles(smiles)
        if reference is None:
            raise NotWritable(f"RDKit cannot parse SMILES {smiles[:80]!r}")
        try:
            written = sf.encoder(reference)
        except sf.EncoderError as exc:
            # The package's message repeats the SMILES over lines; keep its reason and the bracketed errors.
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            why = "; ".join([lines[0].split(": ", 1)[-1], *(x for x in lines if x.startswith("["))])
            raise NotWritable(f"SELFIES cannot encode {reference[:80]!r}: {why}") from None
        if written is None or self.read(written) != reference:
            raise NotWritable(f"the SELFIES of {reference[:80]!r} does not decode to the same molecule")
        return written

    def read(self, text: str) -> str | None:  # noqa: D102
        import selfies as sf

        text = text.strip()
        # A SELFIES is a run of bracketed symbols; anything else would decode to a fragment of nothing.
        if not text.startswith("[") or len(text) > MAX_CHARS or any(c.isspace() for c in text):
            return None
        try:
            decoded = sf.decoder(text)
        except Exception:  # noqa: BLE001 - the decoder raises its own and plain errors on junk: no answer
            return None
        return canonical_smiles(decoded) if decoded else None
