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
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
    drawer.FinishDrawing()
    return drawer.GetDrawingText()


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
