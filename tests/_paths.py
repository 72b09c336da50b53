"""Paths to data shared beside the repository, for the tests.

The repository is checked out either at ``X/main`` (with ``X/shared`` beside it) or as a CI
clone with ``../shared`` beside it. ``CHEMROBUST_SHARED`` overrides the location.
"""

from __future__ import annotations

import os
from pathlib import Path


def shared_dir() -> Path:
    """Return the shared data folder (``SPEC.md``, ``data/``) that sits beside the repository.

    Returns
    -------
    pathlib.Path
        ``$CHEMROBUST_SHARED`` when set, otherwise ``<repo>/../shared``.
    """
    return Path(os.environ.get("CHEMROBUST_SHARED", Path(__file__).resolve().parents[2] / "shared"))
