r"""Label-free views of a data set: what a container sees when the labels must stay on the host.

The downstream track (T2) fits probes on the host with the data set's labels; the model only has to embed
strings. The generative tracks (T3, T4, T5) score on the host too; the model only has to answer prompts.
The host therefore writes a *view* — the rows a track's :meth:`~evaluators.tracks.Track.container_view`
returns: ``id, split, smiles`` for T2, the requests only (opaque id, prompt, decoding parameters:
:data:`evaluators.asking.REQUEST_COLUMNS`) for the generative tracks — to ``<job data>/<set>/view.csv``
and mounts that folder at ``/data`` instead of the data set's files, and ``job.json`` carries the view's
sha256 (:class:`evaluators.schema.DataView`). Inside the container :func:`read_view` refuses a view whose
bytes do not hash to it, and :func:`view_dataset` turns it into the :class:`LoadedDataset` a track runs on.

The file format is fixed (UTF-8 CSV, ``\n`` line ends, header = the columns in the order given), so the
same rows always give the same bytes and the same hash.

Images (a generative track's ``images`` column: a JSON list of ``data:image/png;base64,…`` URIs per
request) are not written into the CSV — one molecule's drawing is asked under many templates and tasks, and
inline it would make a view of tens of megabytes. :func:`write_view` stores each distinct PNG once as
``<set>/images/<sha256>.png`` and writes its digest in the cell; :func:`read_view` checks that every file
named hashes to its name (so the view's own hash covers the images too) and puts the data URIs back.
"""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import io
import json
import re
from collections.abc import Sequence
from pathlib import Path

from evaluators.datasets.specs import LoadedDataset, Molecule, SkippedMolecule
from evaluators.notations.smiles import canonical_smiles

__all__ = ["VIEW_FILE", "ViewError", "read_view", "view_bytes", "view_dataset", "write_view"]

#: The view's file name inside ``/data/<set>/``.
VIEW_FILE = "view.csv"
#: The column holding a request's images, and the folder (beside ``view.csv``) holding them as files.
IMAGE_COLUMN = "images"
IMAGES_DIR = "images"
_PNG_URI = "data:image/png;base64,"
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class ViewError(ValueError):
    """A view is missing, malformed, or does not hash to what the job says."""


def view_bytes(rows: Sequence[dict[str, str]], columns: Sequence[str]) -> bytes:
    r"""Serialise ``rows`` (only ``columns``, in that order) in the view's fixed CSV form.

    Examples
    --------
    >>> view_bytes([{"id": "1", "smiles": "CCO", "label": "3.1"}], ["id", "smiles"])
    b'id,smiles\n1,CCO\n'
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([str(row[c]) for c in columns] for row in rows)
    return buffer.getvalue().encode("utf-8")


def write_view(rows: Sequence[dict[str, str]], columns: Sequence[str], folder: Path, dataset: str) -> str:
    """Write the view of ``dataset`` to ``folder/<dataset>/view.csv`` (world-readable); return its sha256.

    The folder is what the host mounts at ``/data``; the container runs as another user, hence the modes.
    """
    rows, images = _externalise(rows, columns)
    blob = view_bytes(rows, columns)
    target = Path(folder) / dataset
    target.mkdir(parents=True, exist_ok=True)
    for path in (Path(folder), target):
        path.chmod(0o755)
    (target / VIEW_FILE).write_bytes(blob)
    (target / VIEW_FILE).chmod(0o644)
    if images:
        (target / IMAGES_DIR).mkdir(exist_ok=True)
        (target / IMAGES_DIR).chmod(0o755)
        for digest, data in sorted(images.items()):
            (target / IMAGES_DIR / f"{digest}.png").write_bytes(data)
            (target / IMAGES_DIR / f"{digest}.png").chmod(0o644)
    return hashlib.sha256(blob).hexdigest()


def _externalise(
    rows: Sequence[dict[str, str]], columns: Sequence[str]
) -> tuple[Sequence[dict[str, str]], dict[str, bytes]]:
    """Replace each image data URI of the ``images`` column by its PNG's sha256; return the PNGs by digest."""
    if IMAGE_COLUMN not in columns:
        return rows, {}
    files: dict[str, bytes] = {}
    out = []
    for row in rows:
        digests = []
        for uri in json.loads(row[IMAGE_COLUMN]):
            if not (isinstance(uri, str) and uri.startswith(_PNG_URI)):
                raise ViewError(f"request {row.get('id')!r}: an image is not a PNG data URI")
            try:
                data = base64.b64decode(uri[len(_PNG_URI):], validate=True)
            except binascii.Error:
                raise ViewError(f"request {row.get('id')!r}: an image is not base64") from None
            digest = hashlib.sha256(data).hexdigest()
            files[digest] = data
            digests.append(digest)
        out.append({**row, IMAGE_COLUMN: json.dumps(digests)})
    return out, files


def _resolve(rows: list[dict[str, str]], folder: Path) -> list[dict[str, str]]:
    """Put each image back as a data URI, after checking that its file hashes to the digest named."""
    uris: dict[str, str] = {}
    for number, row in enumerate(rows, start=1):
        try:
            digests = json.loads(row[IMAGE_COLUMN])
        except (ValueError, RecursionError):
            raise ViewError(f"data view row {number}: 'images' is not a JSON list") from None
        if not (isinstance(digests, list) and all(isinstance(d, str) and _DIGEST.match(d) for d in digests)):
            raise ViewError(f"data view row {number}: 'images' must list sha256 digests")
        for digest in digests:
            if digest not in uris:
                path = folder / IMAGES_DIR / f"{digest}.png"
                if path.is_symlink() or not path.is_file():
                    raise ViewError(f"data view row {number}: image {path} not found")
                data = path.read_bytes()
                if hashlib.sha256(data).hexdigest() != digest:
                    raise ViewError(f"data view row {number}: image {path} does not hash to its name")
                uris[digest] = _PNG_URI + base64.b64encode(data).decode("ascii")
        # One string object per image however many questions show it.
        row[IMAGE_COLUMN] = json.dumps([uris[d] for d in digests])
    return rows


def read_view(
    data_dir: Path, dataset: str, sha256: str, columns: Sequence[str] = ("id", "smiles")
) -> list[dict[str, str]]:
    """Read ``data_dir/<dataset>/view.csv`` after checking that it hashes to ``sha256``.

    ``columns`` are the track's view columns (:attr:`evaluators.tracks.Track.view_columns`).

    Raises
    ------
    ViewError
        If the file is missing, hashes otherwise, or its header is not ``columns``.
    """
    path = Path(data_dir) / dataset / VIEW_FILE
    if not path.is_file():
        raise ViewError(f"data view {path} not found: the host writes it for this job")
    blob = path.read_bytes()
    actual = hashlib.sha256(blob).hexdigest()
    if actual != sha256:
        raise ViewError(f"data view {path} has sha256 {actual}, the job expects {sha256}")
    reader = csv.DictReader(io.StringIO(blob.decode("utf-8")))
    if list(reader.fieldnames or []) != list(columns):
        raise ViewError(f"data view {path}: columns {reader.fieldnames}, the track's are {list(columns)}")
    rows = list(reader)
    return _resolve(rows, path.parent) if IMAGE_COLUMN in columns else rows


def view_dataset(rows: Sequence[dict[str, str]]) -> LoadedDataset:
    """Return the :class:`LoadedDataset` of a view.

    Its molecules (unparsable ones skipped, with the reason; none for a view without ``smiles``: the
    generative tracks' requests) and the rows as records.
    """
    molecules, skipped = [], []
    for row in rows:
        if "smiles" not in row:
            continue
        if canonical_smiles(row["smiles"]) is None:
            skipped.append(SkippedMolecule(row["id"], row["smiles"], "RDKit cannot parse the SMILES"))
        else:
            molecules.append(Molecule(row["id"], row["smiles"]))
    return LoadedDataset(molecules, skipped, [dict(r) for r in rows])
