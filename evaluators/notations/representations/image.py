"""``image``: a depiction of the molecule — an RDKit 2D drawing at a fixed size, as a PNG data URI.

For multimodal models (image → SMILES / name). The drawing is deterministic for one RDKit version (fixed
size, fixed options, coordinates computed by RDKit's own deterministic layout), and its content hash
(:func:`png_sha256`) goes into the records so that a changed depiction is a changed question. No offline
reader turns an image back into a structure, so answers to image questions are written in another notation.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

from evaluators.notations.representations import REPRESENTATIONS, NotWritable, Representation
from evaluators.notations.smiles import InvalidSmilesError, canonical_smiles, parse_smiles

#: Pixels, width and height.
SIZE = 300
PREFIX = "data:image/png;base64,"


def png(smiles: str, size: int = SIZE) -> bytes:
    """Return the PNG bytes of the molecule's depiction (raises :class:`NotWritable`)."""
    from rdkit.Chem import rdDepictor
    from rdkit.Chem.Draw import rdMolDraw2D

    try:
        # From the canonical SMILES: the layout follows atom order, and the image is of the molecule, not
        # of the string it was given as.
        mol = parse_smiles(canonical_smiles(smiles) or smiles)
    except InvalidSmilesError as exc:
        raise NotWritable(str(exc)) from None
    # CoordGen is a process-wide RDKit switch: set it for this layout only, so that other drawings in the
    # process (the site's molecule SVGs) keep the layout they were committed with.
    preferred = rdDepictor.GetPreferCoordGen()
    rdDepictor.SetPreferCoordGen(True)
    try:
        rdDepictor.Compute2DCoords(mol)
    finally:
        rdDepictor.SetPreferCoordGen(preferred)
    drawer = rdMolDraw2D.MolDraw2DCairo(size, size)
    drawer.drawOptions().clearBackground = True
    # RDKit writes the molecule into the PNG by default (zTXt chunks: SMILES, MOL block, pickle): the answer
    # to "what is this molecule?" would travel inside the question. The image must carry pixels only.
    drawer.drawOptions().includeMetadata = False
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
    drawer.FinishDrawing()
    return pixels_only(drawer.GetDrawingText())


#: PNG chunks a depiction may carry: header, pixels, palette/background/transparency, end. Anything else
#: (text, time, ICC, private chunks) is dropped: no text reaches the box alongside the pixels.
CHUNKS = frozenset({b"IHDR", b"PLTE", b"IDAT", b"IEND", b"bKGD", b"tRNS"})
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Return the ``(type, payload)`` chunks of a PNG (raises ``ValueError`` if it is not one)."""
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG")
    chunks, at = [], len(SIGNATURE)
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        kind = data[at + 4:at + 8]
        chunks.append((kind, data[at + 8:at + 8 + length]))
        at += 12 + length  # length, type, payload, CRC
    return chunks


def pixels_only(data: bytes) -> bytes:
    """Return the PNG with every chunk outside :data:`CHUNKS` removed (CRCs kept: chunks are copied whole)."""
    out, at = [SIGNATURE], len(SIGNATURE)
    while at + 8 <= len(data):
        length = int.from_bytes(data[at:at + 4], "big")
        if data[at + 4:at + 8] in CHUNKS:
            out.append(data[at:at + 12 + length])
        at += 12 + length
    return b"".join(out)


def png_sha256(data_uri: str) -> str:
    """Return the sha256 of the PNG inside a data URI written by :class:`ImageRepresentation`."""
    if not data_uri.startswith(PREFIX):
        raise ValueError("not a PNG data URI")
    return hashlib.sha256(base64.b64decode(data_uri[len(PREFIX):])).hexdigest()


@REPRESENTATIONS.register("image")
class ImageRepresentation(Representation):
    """A ``SIZE``×``SIZE`` RDKit depiction (CoordGen layout), as ``data:image/png;base64,…``."""

    name = "image"
    label = "image"
    phrase = "the molecule shown in the image"
    summary = f"An RDKit depiction, {SIZE}×{SIZE} px PNG (CoordGen layout), sent as an image part."
    modality = "image"
    readable = False

    def write(self, smiles: str, *, record: Mapping[str, str] | None = None, key: str = "") -> str:  # noqa: D102
        return PREFIX + base64.b64encode(png(smiles)).decode("ascii")
