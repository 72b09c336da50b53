"""``inchi``: standard InChI, written and read by RDKit (the IUPAC identifier, canonical by design).

Standard InChI normalises mobile hydrogens and protonation, so a tautomer or a salt form reads back as the
InChI's own form: the round trip reports those as ``tautomer`` (the lenient level), and the strict match
of an InChI question is made at that level by the tracks that ask one.
"""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation
from evaluators.notations.smiles import canonical_smiles, parse_smiles

MAX_CHARS = 4000


@REPRESENTATIONS.register("inchi")
class InchiRepresentation(Representation):
    """``Chem.MolToInchi`` (standard InChI); answers read by ``Chem.MolFromInchi``."""

    name = "inchi"
    label = "InChI"
    phrase = "the molecule with the InChI {text}"
    summary = "Standard InChI (RDKit); mobile hydrogens and protonation are normalised by InChI itself."

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        from rdkit import Chem

        from evaluators.notations.smiles import InvalidSmilesError

        try:
            written = Chem.MolToInchi(parse_smiles(smiles))
        except InvalidSmilesError as exc:
            raise NotWritable(str(exc)) from None
        if not written:
            raise NotWritable(f"RDKit writes no InChI for {smiles[:80]!r}")
        return written

    def read(self, text: str) -> str | None:  # noqa: D102
        from rdkit import Chem, RDLogger

        RDLogger.DisableLog("rdApp.*")
        text = text.strip()
        if not text.startswith("InChI=") or len(text) > MAX_CHARS or any(c.isspace() for c in text):
            return None
        mol = Chem.MolFromInchi(text, logLevel=None)
        return canonical_smiles(Chem.MolToSmiles(mol)) if mol is not None and mol.GetNumAtoms() else None
