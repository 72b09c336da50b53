"""2D drawings of the strings the failure explorer shows: named at page generation, drawn at site build.

The strings come from the tracks' per-item tables (what the model saw); nothing is read from data set
files or recomputed here. Page generation (:class:`Drawings`) checks that RDKit can draw a string, links
``data/molecules/<hash>.svg`` and records ``{file name: string}`` in the committed index
``site/data/molecules.json``. The SVG files themselves are never written to the source tree: the MkDocs
hook :mod:`leaderboard.site.mkdocs_hooks` draws them from that index (:func:`draw_svg`) while the site is
built, so ``mkdocs build --strict`` on a bare clone has every drawing (issue 18) and the record holds
33 kB of strings instead of 4.3 MB of drawings.

Invariants
----------
- Light to import: RDKit is imported only when a string is drawn.
- Never fails on odd data: a string RDKit cannot parse or lay out gives ``None``, and the page shows the
  string without a drawing.
- Deterministic: the file name depends only on the string and the size (not on the RDKit version, so
  committed pages never change with the drawing library); the same string gives the same SVG bytes for
  one RDKit version.

Side effects
------------
- :meth:`Drawings.write_index` rewrites ``<site_dir>/data/molecules.json`` when its content changes and
  deletes the legacy ``<site_dir>/data/molecules/`` folder that older versions wrote drawings to.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from pathlib import Path

from leaderboard.files import write_text

__all__ = ["DRAWINGS_DIR", "DRAWING_SIZE", "MOLECULES_INDEX", "Drawings", "draw_svg", "drawing_name",
           "read_index"]  # fmt: skip

#: Folder of the drawings in the built site, relative to the MkDocs ``docs_dir`` (and to the site root).
DRAWINGS_DIR = "data/molecules"
#: The committed index of the drawings (file name → string), relative to the ``docs_dir``.
MOLECULES_INDEX = "data/molecules.json"
#: Size of a drawing in pixels (width, height).
DRAWING_SIZE = (260, 190)


def drawing_name(smiles: str) -> str:
    """File name of the drawing of ``smiles``: sha256 of the size and the string, 24 hex digits."""
    width, height = DRAWING_SIZE
    return hashlib.sha256(f"{width}x{height}\0{smiles}".encode()).hexdigest()[:24] + ".svg"


@functools.lru_cache(maxsize=4096)
def draw_svg(smiles: str) -> str | None:
    """Draw ``smiles`` as written (its atom order sets the 2D layout) as an RDKit SVG.

    Parameters
    ----------
    smiles : str
        The string to draw.

    Returns
    -------
    str or None
        The SVG document, or ``None`` when RDKit cannot parse or lay out the string.
    """
    from rdkit import Chem, RDLogger
    from rdkit.Chem import rdDepictor
    from rdkit.Chem.Draw import rdMolDraw2D

    RDLogger.DisableLog("rdApp.*")
    mol = Chem.MolFromSmiles(smiles) if smiles else None
    if mol is None:
        return None
    # RDKit's layout engine is a process-wide switch that other code may flip: pin the default layout for
    # this drawing so that the same string always gives the same SVG.
    preferred = rdDepictor.GetPreferCoordGen()
    rdDepictor.SetPreferCoordGen(False)
    try:
        rdDepictor.Compute2DCoords(mol)
        drawer = rdMolDraw2D.MolDraw2DSVG(*DRAWING_SIZE)
        rdMolDraw2D.PrepareAndDrawMolecule(drawer, mol)
        drawer.FinishDrawing()
    except (RuntimeError, ValueError):  # RDKit raises these on molecules it cannot lay out or kekulize
        return None
    finally:
        rdDepictor.SetPreferCoordGen(preferred)
    return drawer.GetDrawingText()


def read_index(site_dir: Path) -> dict[str, str]:
    """Read the committed drawings index of ``site_dir`` (file name → string); empty when absent.

    Raises
    ------
    ValueError
        If the index is not a JSON object of ``<24 hex>.svg`` names to the strings they are named after.
    """
    path = Path(site_dir) / MOLECULES_INDEX
    if not path.is_file():
        return {}
    index = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(index, dict) or any(
        not isinstance(v, str) or drawing_name(v) != k for k, v in index.items()
    ):
        raise ValueError(
            f"{path}: every entry must map a drawing's file name to the string it is named after; "
            "regenerate it with `python -m leaderboard site`."
        )
    return index


class Drawings:
    """The drawings the pages being generated link to.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir`` (``site/``).
    """

    def __init__(self, site_dir: Path) -> None:
        self.site_dir = Path(site_dir)
        self.used: dict[str, str] = {}

    def path(self, smiles: str) -> str | None:
        """Return the drawing's path relative to the ``docs_dir`` (and record it), or ``None``.

        Parameters
        ----------
        smiles : str
            The string to draw, as written.

        Returns
        -------
        str or None
            ``data/molecules/<hash>.svg``, or ``None`` when RDKit cannot draw the string.
        """
        if draw_svg(smiles) is None:
            return None
        name = drawing_name(smiles)
        self.used[name] = smiles
        return f"{DRAWINGS_DIR}/{name}"

    def write_index(self) -> Path:
        """Write ``data/molecules.json`` with the drawings this generation linked (sorted, one per line)."""
        path = self.site_dir / MOLECULES_INDEX
        text = json.dumps(dict(sorted(self.used.items())), indent=0) + "\n"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_text(path, text)
        legacy = self.site_dir / DRAWINGS_DIR
        if legacy.is_dir():  # drawings written into the source tree by versions before issue 18
            shutil.rmtree(legacy)
        return path
