"""A retrieval captioner by Morgan fingerprint: the classic ChEBI-20 baseline (MolT5's "nearest neighbour").

Each captioning question's molecule is read from its ``SMILES: …`` line; the answer is the description of
the most similar molecule of ChEBI-20's *validation* split (mounted at ``/models`` by the host: the
manifest's ``model.source: dataset``), by Tanimoto similarity of RDKit Morgan fingerprints (radius 2, 2048
bits), ties to the first in file order. The fingerprint is computed from the molecular graph, so every
writing of a molecule gets the same caption: invariant to rewrites by construction, the captioning
track's structure-aware ceiling of robustness. Any other question (none is asked: the manifest runs only
the captioning track), and a molecule RDKit cannot read, get an empty answer (abstain).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path

from evaluators.adapters import Completion, GenerationRequest, GenerativeAdapter, ModelConfig
from evaluators.tracks.captioning import INSTRUCTION

#: The gallery file the host mounts (the training split's only file, ``evaluators/datasets``).
GALLERY = "validation.tsv"
# The track writes the molecule on a line of its own after the instruction.
_SMILES_LINE = re.compile(r"^SMILES: (?P<smiles>\S+)[ \t]*$", re.M)


def query(prompt: str) -> str | None:
    """Return the SMILES a captioning question asks about, or ``None`` for any other question.

    Examples
    --------
    >>> query(INSTRUCTION + "\\nSMILES: CCO\\nEnd your reply with …")
    'CCO'
    >>> query("Is CCO soluble? Answer yes or no.") is None
    True
    """
    if INSTRUCTION not in prompt:
        return None
    match = _SMILES_LINE.search(prompt.split(INSTRUCTION, 1)[1])
    return match["smiles"] if match else None


def read_gallery(folder: Path) -> tuple[list[str], list[str]]:
    """Return the gallery's SMILES and descriptions in file order (``CID``, ``SMILES``, ``description``).

    Raises
    ------
    ValueError
        If the folder holds no gallery file or a column is missing (a manifest without the split).
    """
    path = folder / GALLERY
    if not path.is_file():
        raise ValueError(f"{path} not found: the manifest must declare 'model.source: dataset' with split "
                         "'validation'")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        if not {"SMILES", "description"} <= set(reader.fieldnames or []):
            raise ValueError(f"{path}: expected columns SMILES and description, found {reader.fieldnames}")
        rows = [(str(r["SMILES"]).strip(), " ".join(str(r["description"] or "").split())) for r in reader]
    return [s for s, _ in rows], [d for _, d in rows]


class MorganRetrievalCaptioner(GenerativeAdapter):
    """Answers with the description of the validation molecule nearest by Morgan-fingerprint Tanimoto."""

    def __init__(self, config: ModelConfig) -> None:
        from rdkit import Chem, RDLogger
        from rdkit.Chem import rdFingerprintGenerator

        super().__init__(config)
        RDLogger.DisableLog("rdApp.*")  # unreadable inputs are counted as abstentions, not logged one by one
        self.radius = int(config.options.get("radius", 2))
        self.n_bits = int(config.options.get("n_bits", 2048))
        self._generator = rdFingerprintGenerator.GetMorganGenerator(radius=self.radius, fpSize=self.n_bits)
        smiles, descriptions = read_gallery(Path(config.path or "/models"))
        self._fingerprints, self._captions = [], []
        for text, description in zip(smiles, descriptions, strict=True):
            mol = Chem.MolFromSmiles(text)
            if mol is not None:  # every ChEBI-20 validation molecule parses; kept in file order
                self._fingerprints.append(self._generator.GetFingerprint(mol))
                self._captions.append(description)

    def caption(self, smiles: str) -> str:
        """Return the nearest gallery molecule's description, ``""`` when RDKit cannot read ``smiles``."""
        from rdkit import Chem, DataStructs

        mol = Chem.MolFromSmiles(smiles)
        if mol is None or not self._fingerprints:
            return ""
        scores = DataStructs.BulkTanimotoSimilarity(self._generator.GetFingerprint(mol), self._fingerprints)
        best = max(range(len(scores)), key=scores.__getitem__)  # the first of equal maxima: file order
        return self._captions[best]

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:  # noqa: D102
        out = []
        for done, request in enumerate(requests, 1):
            smiles = query(request.prompt)
            caption = self.caption(smiles) if smiles is not None else ""
            out.append(Completion(request.id, f"Answer: {caption}" if caption else "", "stop"))
            if done % 200 == 0:
                self.report("generate", done, len(requests))
        self.report("generate", len(requests), len(requests))
        return out

    def describe(self) -> dict:  # noqa: D102
        return {"gallery": len(self._captions), "radius": self.radius, "n_bits": self.n_bits,
                "similarity": "Tanimoto", "ties": "first in file order"}  # fmt: skip
