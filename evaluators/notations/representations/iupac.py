"""``iupac``: the record's systematic name; answers are read by OPSIN (in batches)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation


@REPRESENTATIONS.register("iupac")
class IupacRepresentation(Representation):
    """Taken from the record (no offline tool writes IUPAC names); read back with OPSIN.

    A name need not carry every layer of the record's SMILES (FreeSolv's names omit stereo): the round trip
    reports what it loses (:func:`evaluators.notations.representations.round_trip`), and the tracks grade
    at the level the name carries (:func:`evaluators.answers.match.name_levels`).
    """

    name = "iupac"
    label = "IUPAC name"
    phrase = "the molecule named {text}"
    summary = "The data set's IUPAC name; answers are parsed by OPSIN."
    field = "iupac"

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        name = str((record or {}).get(self.field) or "").strip()
        if not name:
            raise NotWritable(f"the record of {smiles[:80]!r} has no {self.field!r} to take a name from")
        return name

    def read(self, text: str) -> str | None:  # noqa: D102
        return self.read_batch([text])[0]

    def read_batch(self, texts: Sequence[str | None]) -> list[str | None]:  # noqa: D102
        from evaluators.answers.opsin import names_to_smiles

        return names_to_smiles(list(texts))
