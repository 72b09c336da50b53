"""What T4 asks: the tasks a model is asked, the molecule written per representation, the fixed sample.

Split from :mod:`evaluators.tracks.prompt_robustness` (the track) so that the question side stays one room:
which tasks a model is asked (:func:`asked_sets`: a text-only model is never asked an image question, and
its tasks are then exactly the text tasks), how a record's molecule is written in each representation
(:func:`written`; an image is the notation registry's RDKit drawing, sent as an image part), the seeded
sample of records (:func:`sample`) and the composed items (:func:`composed`: relational questions and
functional groups).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from evaluators.asking.reuse import records_digest, reused
from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks.prompt_robustness.groups import functional_group  # noqa: F401 - registers its composer
from evaluators.tracks.prompt_robustness.relational import COMPOSERS, Posed
from evaluators.tracks.prompt_robustness.retro import retrosynthesis  # noqa: F401 - registers its composer
from evaluators.tracks.prompt_robustness.templates import IMAGES, TemplateSet, load_template_sets

__all__ = [
    "ITEMS_PER_DATASET", "SETS", "applicable", "asked_sets", "balance_field", "composed", "sample", "written",
    "written_all",
]  # fmt: skip

#: Records asked per data set: a fixed sample (every question is asked |templates| × |representations|
#: times, so the sample, not the data set, sets the cost).
ITEMS_PER_DATASET = 200
#: Every task, in every representation (images included).
SETS: tuple[TemplateSet, ...] = load_template_sets()
#: Representations written by the notation registry (:func:`written`).
_REGISTERED = ("selfies", "inchi", "image")


def asked_sets(images: bool) -> tuple[TemplateSet, ...]:
    """Return the tasks asked of a model that takes images (``images``) or text only.

    Text only: every task without its image representations (:meth:`TemplateSet.without_images`).
    """
    return SETS if images else tuple(t for s in SETS if (t := s.without_images()) is not None)



def _mol(smiles: str):
    from rdkit import Chem

    return Chem.MolFromSmiles(smiles)


def written(template_set: TemplateSet, representation: str, record: dict[str, str]) -> str:
    """Write the molecule (or the reactants) of ``record`` in ``representation``.

    SMILES: RDKit canonical per ``.``-separated component; IUPAC: the record's name(s) as given; formula:
    the molecular formula of each component, joined by `` + ``. A component RDKit cannot read stays as
    written (the model sees what the data set holds). SELFIES and InChI: the notation registry's writing
    (:mod:`evaluators.notations.representations`), only where it reads back as the same molecule
    (stereo and tautomer included), so the truth computed from the SMILES is the truth of what is shown.
    Image: the registry's drawing of the record's SMILES, a PNG data URI (pixels only); the prompt shows
    :data:`~.templates.IMAGE_SLOT` instead (:meth:`TemplateSet.prompt`).

    Raises
    ------
    NotWritable
        The molecule cannot be written in that notation (the question is not asked).
    """
    text = str(record[template_set.inputs[representation]])
    if representation == "iupac":
        return text
    if representation in _REGISTERED:
        from evaluators.notations.representations import NotWritable, get_representation

        notation = get_representation(representation)
        out = notation.write(text)
        if representation in IMAGES:  # drawn from the structure: nothing to read back
            return out
        if notation.read(out) != canonical_smiles(text):
            raise NotWritable(f"the {notation.label} of {text[:80]!r} reads back as another molecule")
        return out
    if representation == "formula":
        from rdkit.Chem import rdMolDescriptors

        parts = [(_mol(p), p) for p in text.split(".")]
        return " + ".join(rdMolDescriptors.CalcMolFormula(m) if m is not None else p for m, p in parts)
    return ".".join(canonical_smiles(p) or p for p in text.split("."))


def written_all(template_set: TemplateSet, representation: str, chosen: Sequence[dict[str, str]]
                 ) -> dict[str, str]:  # fmt: skip
    """:func:`written` for every record that can be written so (the others are not asked in it)."""
    from evaluators.notations.representations import NotWritable

    out = {}
    for r in chosen:
        try:
            out[r["id"]] = written(template_set, representation, r)
        except NotWritable:
            continue
    return out


def sample(
    records: Sequence[dict[str, str]], seed: int, n: int = ITEMS_PER_DATASET, by: str | None = None
) -> list[dict[str, str]]:
    """Return the fixed sample asked: the first ``n`` records in ``sha256(seed|id)`` order.

    They keep their file order. The choice does not depend on the file's order, and a record added later
    displaces at most one (every id keeps its place in the hash order). With ``by`` (a binary label field,
    as in ClinTox where 7 % are toxic), the first ``n // 2`` of each class: balanced accuracy on 15
    positives would be noise.
    """
    def key(record: dict[str, str]) -> str:
        return hashlib.sha256(f"{seed}|{record['id']}".encode()).hexdigest()

    ordered = sorted(records, key=key)
    if by is None:
        chosen = {r["id"] for r in ordered[:n]}
    else:
        classes: dict[str, list[str]] = {}
        for r in ordered:
            classes.setdefault(str(r[by]), []).append(r["id"])
        chosen = {i for ids in classes.values() for i in ids[: n // max(1, len(classes))]}
    return [r for r in records if r["id"] in chosen]


def balance_field(records: Sequence[dict[str, str]]) -> str | None:
    """Return the binary label field a classification set's sample is balanced on (:func:`sample`), if any."""
    return next((s.balance for s in applicable(records) if s.balance), None)


def applicable(
    records: Sequence[dict[str, str]], sets: Sequence[TemplateSet] | None = None
) -> list[TemplateSet]:
    """Tasks of ``sets`` (default: all) every record can pose (all the fields it reads present, non-empty)."""
    if not records:
        return []
    return [s for s in (SETS if sets is None else sets)
            if all(all(str(r.get(f) or "").strip() for f in s.fields) for r in records)]  # fmt: skip


def composed(
    template_set: TemplateSet, records: Sequence[dict[str, str]], chosen: Sequence[dict[str, str]], seed: int
) -> dict[str, Posed] | None:
    """Return a composed task's items (:mod:`.relational`, :mod:`.groups`, :mod:`.retro`); else ``None``."""
    compose = COMPOSERS.get(template_set.task)
    if compose is None:
        return None
    # The questions and, at scoring, the truths compose the same items: once per evaluation.
    key = ("composed", template_set.task, seed, records_digest(records), tuple(str(r["id"]) for r in chosen))
    return reused(key, lambda: compose(records, chosen, seed))
