"""2D drawings of the strings the failure explorer shows, as SVG files under ``site/data/molecules/``.

The strings come from the tracks' per-item tables (what the model saw); nothing is read from data set
files or recomputed here. :class:`Drawings` renders a SMILES string as an RDKit 2D SVG (file name = hash of
the string, the size and the RDKit version, so a file is drawn once and reused).

Invariants
----------
- Light to import: RDKit is imported only when a string is drawn.
- Never fails on odd data: an unparsable string gives ``None``, and the page shows the string without a
  drawing.
- Deterministic: the same string gives the same SVG bytes and file name (for one RDKit version).

Side effects
------------
- :meth:`Drawings.path` writes ``<site_dir>/data/molecules/<hash>.svg`` when absent;
  :meth:`Drawings.remove_stale` deletes the SVGs there that this generation did not use.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from leaderboard.files import write_text

__all__ = ["DRAWINGS_DIR", "DRAWING_SIZE", "Drawings"]

#: Folder of the drawings, relative to the MkDocs ``docs_dir`` (and to the site root).
DRAWINGS_DIR = "data/molecules"
#: Size of a drawing in pixels (width, height).
DRAWING_SIZE = (260, 190)


class Drawings:
    """RDKit 2D drawings (SVG files) of the strings shown on the pages being generated.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``); drawings go to ``<site_dir>/data/molecules/``.
    """

    def __init__(self, site_dir: Path) -> None:
        self.folder = Path(site_dir) / DRAWINGS_DIR
        self.used: set[str] = set()
        self._paths: dict[str, str | None] = {}

    def path(self, smiles: str) -> str | None:
        """Draw ``smiles`` (once) with RDKit and return its path relative to the ``docs_dir``.

        Parameters
        ----------
        smiles : str
            The string to draw, as written (its atom order sets the 2D layout).

        Returns
        -------
        str or None
            ``data/molecules/<hash>.svg``, or ``None`` when RDKit cannot parse the string.
        """
        if smiles not in self._paths:
            self._paths[smiles] = self._draw(smiles)
        name = self._paths[smiles]
        if name is not None:
            self.used.add(name)
            return f"{DRAWINGS_DIR}/{name}"
        return None

    def _draw(self, smiles: str) -> str | None:
        import rdkit
        from rdkit import Chem, RDLogger
        from rdkit.Chem import rdDepictor
        from rdkit.Chem.Draw import rdMolDraw2D

        width, height = DRAWING_SIZE
        digest = hashlib.sha256(f"{rdkit.__version__}\0{width}x{height}\0{smiles}".encode()).hexdigest()
        name = f"{digest[:24]}.svg"
        target = self.folder / name
        if target.is_file():
            return name
        RDLogger.DisableLog("rdApp.*")
        mol = Chem.MolFromSmiles(smiles) if smiles else None
        if mol is None:
            return None
        try:
            rdDepictor.Compute2DCoords(mol)
            drawer = rdMolDraw2D.MolDraw2DSVG(width, height)
            rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
            drawer.FinishDrawing()
        except (RuntimeError, ValueError):  # RDKit raises these on molecules it cannot lay out or kekulize
            return None
        write_text(target, drawer.GetDrawingText())
        return name

    def remove_stale(self) -> None:
        """Delete the SVG files in the drawings folder that this generation did not use."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.svg")):
            if path.name not in self.used:
                path.unlink()
