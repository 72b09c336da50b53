"""Helper (not a test module): give a throw-away repository this checkout's MkDocs configuration."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def copy_mkdocs_config(root: Path) -> Path:
    """Copy ``mkdocs.yml`` into ``root`` and link the hook it names (``leaderboard/``); return the copy.

    ``mkdocs.yml`` loads its hook by a path relative to itself (``leaderboard/site/mkdocs_hooks.py``), so a
    repository copy needs that path too; a link keeps the copy on this checkout's code.
    """
    root.mkdir(parents=True, exist_ok=True)
    config = root / "mkdocs.yml"
    shutil.copy(REPO_ROOT / "mkdocs.yml", config)
    link = root / "leaderboard"
    if not link.exists():
        link.symlink_to(REPO_ROOT / "leaderboard", target_is_directory=True)
    return config
