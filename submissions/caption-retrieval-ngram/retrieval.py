"""A retrieval captioner by string similarity: the nearest validation SMILES by character 3-gram TF-IDF.

The same gallery as ``caption-retrieval-morgan`` (ChEBI-20's validation split, mounted at ``/models`` by the
host: the manifest's ``model.source: dataset``), but the molecule is compared *as written*: each SMILES is a
bag of its character 3-grams weighted by TF-IDF (smoothed idf, as scikit-learn's ``TfidfVectorizer``), and
the answer is the description of the gallery string of highest cosine similarity, ties to the first in file
order. Not invariant: another writing of the molecule has other 3-grams and may retrieve another
description — the surface-string reference the captioning track's drops can be read against. Any other
question (none is asked: the manifest runs only the captioning track) gets an empty answer (abstain).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

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


def grams(text: str, n: int) -> Counter[str]:
    """Return the counts of ``text``'s character ``n``-grams (the whole string when shorter than ``n``)."""
    return Counter(text[i : i + n] for i in range(max(1, len(text) - n + 1)))


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


class NgramRetrievalCaptioner(GenerativeAdapter):
    """Answers with the description of the validation string nearest by character n-gram TF-IDF cosine."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__(config)
        self.n = int(config.options.get("n", 3))
        smiles, self._captions = read_gallery(Path(config.path or "/models"))
        counts = [grams(s, self.n) for s in smiles]
        self._vocab: dict[str, int] = {}
        for bag in counts:
            for gram in bag:
                self._vocab.setdefault(gram, len(self._vocab))
        df = np.zeros(len(self._vocab))
        for bag in counts:
            df[[self._vocab[g] for g in bag]] += 1
        self._idf = np.log((1 + len(counts)) / (1 + df)) + 1  # smoothed, as scikit-learn's default
        matrix = np.zeros((len(counts), len(self._vocab)))  # 3 301 × ~1 600 for ChEBI-20: dense is fine
        for row, bag in enumerate(counts):
            for gram, count in bag.items():
                matrix[row, self._vocab[gram]] = count
        matrix *= self._idf
        # Unit rows: the query's own norm does not change which row is nearest, so it is never computed.
        self._gallery = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)

    def caption(self, smiles: str) -> str:
        """Return the nearest gallery string's description (3-grams the gallery never has weigh nothing)."""
        vector = np.zeros(len(self._vocab))
        for gram, count in grams(smiles, self.n).items():
            index = self._vocab.get(gram)
            if index is not None:
                vector[index] = count * self._idf[index]
        if not self._captions:
            return ""
        scores = self._gallery @ vector
        return self._captions[int(np.argmax(scores))]  # argmax: the first of equal maxima, file order

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
        return {"gallery": len(self._captions), "n": self.n, "weighting": "TF-IDF (smoothed idf)",
                "similarity": "cosine", "ties": "first in file order",
                "vocabulary": len(self._vocab)}  # fmt: skip
