"""``formula``: the Hill molecular formula — a summary of a molecule, for the tasks a formula can pose."""

from __future__ import annotations

from collections.abc import Mapping

from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation
from evaluators.notations.smiles import parse_smiles


@REPRESENTATIONS.register("formula")
class FormulaRepresentation(Representation):
    """RDKit's ``CalcMolFormula`` (charges kept); isomers share it: not read back."""

    name = "formula"
    label = "molecular formula"
    phrase = "the molecule with the molecular formula {text}"
    summary = "The Hill formula (`CalcMolFormula`): only for tasks whose truth the formula determines."
    readable = False

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        from rdkit.Chem import rdMolDescriptors

        from evaluators.notations.smiles import InvalidSmilesError

        try:
            return rdMolDescriptors.CalcMolFormula(parse_smiles(smiles))
        except InvalidSmilesError as exc:
            raise NotWritable(str(exc)) from None
