"""Molecule ids on the pages: linked to their public database entry and named, where the data set allows.

A data set declares what its ids are (:attr:`evaluators.datasets.specs.DatasetSpec.id_source`: PubChem
CIDs, ChEBI ids, or its own row numbers) and which record field names a molecule
(:attr:`~evaluators.datasets.specs.DatasetSpec.name_field`, e.g. ``iupac``). This module turns that
declaration into a table cell: the id as code, a link to the database entry when the id is one that the
database's pattern accepts (a CID is digits only: anything else stays plain text, whatever the
declaration says), and the molecule's name when a per-item table holds it.

Names come from the committed per-item tables, never from data set files (the site builds from
``site/data/`` alone): the text an item was asked in the data set's name representation is its name (the
``input`` of a row whose ``representation`` is the name field, as the consistency track's ``answers``
table has them).

Invariants
----------
- Every id and name is hostile: the id is rendered with :func:`leaderboard.markdown.code`, the name with
  :func:`leaderboard.markdown.cell`; a link target is built from the validated digits only.
- Unknown data sets (a track that is no longer registered, a hostile dataset name) get no link and no name.

Side effects: none (names are memoised in the :class:`~leaderboard.site.sitedata.SiteData` cache).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from evaluators.datasets import DATASETS  # importing it registers every set
from evaluators.datasets.specs import DatasetSpec
from leaderboard.markdown import cell, code, is_missing
from leaderboard.site.sitedata import SiteData

__all__ = ["ID_LINKS", "IdLink", "id_source", "molecule_cell", "molecule_names", "molecule_url"]

#: Longest name shown beside an id (IUPAC names of large molecules run to hundreds of characters).
NAME_LIMIT = 120


@dataclass(frozen=True)
class IdLink:
    """How ids of one public database are recognised and linked.

    Attributes
    ----------
    label : str
        The database's name, for the link's title.
    pattern : re.Pattern
        What a valid id is (matched in full); group 1 is the number the URL takes.
    url : str
        The entry's address, ``{n}`` standing for that number.
    """

    label: str
    pattern: re.Pattern[str]
    url: str


#: Each database of :data:`evaluators.datasets.specs.ID_SOURCES`, by name.
ID_LINKS: Mapping[str, IdLink] = MappingProxyType(
    {
        "pubchem": IdLink(
            "PubChem compound",
            re.compile(r"([1-9][0-9]{0,11})"),
            "https://pubchem.ncbi.nlm.nih.gov/compound/{n}",
        ),
        "chebi": IdLink(
            "ChEBI entry",
            re.compile(r"(?:CHEBI:)?([1-9][0-9]{0,8})"),
            "https://www.ebi.ac.uk/chebi/searchId.do?chebiId=CHEBI:{n}",
        ),
    }
)


def _spec(dataset: str) -> DatasetSpec | None:
    """Return the registered set of that name; ``None`` for a name the registry lacks (hostile data)."""
    return DATASETS.get(dataset) if dataset in DATASETS else None


def id_source(dataset: str) -> str:
    """Return the database ``dataset``'s ids belong to (``pubchem``, ``chebi``), ``""`` when none."""
    spec = _spec(str(dataset))
    return spec.id_source if spec is not None else ""


def molecule_url(dataset: str, mol_id: object) -> str | None:
    """Return the database entry of one id of ``dataset``, or ``None`` (no database, or not a valid id).

    Examples
    --------
    >>> molecule_url("chebi20", "5354212")
    'https://pubchem.ncbi.nlm.nih.gov/compound/5354212'
    >>> molecule_url("chebi20", "53542x") is None, molecule_url("freesolv", "12") is None
    (True, True)
    """
    source = ID_LINKS.get(id_source(dataset))
    if source is None or is_missing(mol_id):
        return None
    found = source.pattern.fullmatch(str(mol_id))
    return source.url.format(n=found.group(1)) if found else None


def molecule_names(data: SiteData, dataset: str) -> dict[str, str]:
    """Return ``{item id: name}`` of ``dataset`` from the per-item tables (memoised; empty when none).

    A name is the ``input`` of a row asked in the set's name representation (``representation`` equal to
    the set's ``name_field``); the first such row of an id wins, in table order.
    """
    key = f"molecule-names/{dataset}"
    if key in data.cache:
        return data.cache[key]
    spec = _spec(str(dataset))
    names: dict[str, str] = {}
    field = spec.name_field if spec is not None else ""
    for frame in data.tables.values() if field else ():
        if not {"dataset", "id", "representation", "input"} <= set(frame.columns):
            continue
        rows = frame.loc[
            (frame["dataset"].astype(str) == dataset).to_numpy(dtype=bool)
            & (frame["representation"].astype(str) == field).to_numpy(dtype=bool),
            ["id", "input"],
        ]
        for mol_id, name in rows.drop_duplicates("id").itertuples(index=False, name=None):
            if not pd.isna(name) and str(name).strip():
                names.setdefault(str(mol_id), str(name))
    data.cache[key] = names
    return names


def molecule_cell(dataset: str, mol_id: object, name: str | None = None) -> str:
    """Return a table cell for one molecule id: the id as code, linked and named where possible.

    Parameters
    ----------
    dataset : str
        The data set the id belongs to (its declaration says which database, if any).
    mol_id : object
        The id, as the per-item table holds it (hostile).
    name : str, optional
        The molecule's name (hostile), shown after the id, clipped to :data:`NAME_LIMIT` characters.

    Examples
    --------
    >>> molecule_cell("chebi20", "5354212", "a <b>steroid</b>")  # doctest: +NORMALIZE_WHITESPACE
    '[<code>5354212</code>](https://pubchem.ncbi.nlm.nih.gov/compound/5354212 "PubChem compound 5354212")
     · a &lt;b&gt;steroid&lt;/b&gt;'
    >>> molecule_cell("chebi20", "x<y")
    '<code>x&lt;y</code>'
    """
    target = molecule_url(dataset, mol_id)
    text = code(mol_id)
    if target is not None:
        source = ID_LINKS[id_source(dataset)]
        number = source.pattern.fullmatch(str(mol_id)).group(1)  # type: ignore[union-attr]  # validated
        text = f'[{text}]({target} "{source.label} {number}")'
    if name is not None and str(name).strip():
        clipped = str(name) if len(str(name)) <= NAME_LIMIT else str(name)[: NAME_LIMIT - 1] + "…"
        text += f" · {cell(clipped)}"
    return text
