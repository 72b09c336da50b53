"""Whether the site must be built again: a digest of everything the pages and ``public/`` are made from.

An unchanged rerun of ``nox -s evaluate`` reuses every result and then spent most of its time regenerating
pages and building ``public/`` that came out the same (issue 36: 55 of 61 s). After each build the digest
of the build's inputs is stored beside the bootstrap cache; the next build with the same digest and a
``public/index.html`` present keeps both. The inputs are taken wide on purpose: the board's record and
pages (``site/``), the manifests and model folders (``submissions/``), the code that writes the pages
(``leaderboard/``, ``evaluators/``: registries, track definitions), ``mkdocs.yml``, and the versions of the
packages that draw and render (a new RDKit draws molecules differently). Anything else that changes the
output (a hand-edited file in ``public/``) is not seen; deleting ``public/`` forces the next build.
"""

from __future__ import annotations

import hashlib
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["INPUT_FOLDERS", "RENDER_PACKAGES", "inputs_digest", "is_current", "record"]

#: Folders of the repository whose files the pages and the built site are made from.
INPUT_FOLDERS = ("site", "submissions", "leaderboard", "evaluators")
#: Packages whose version changes the pages or the built site.
RENDER_PACKAGES = ("mkdocs", "mkdocs-material", "pymdown-extensions", "rdkit", "plotly", "pandas", "numpy",
                   "scipy")  # fmt: skip
STAMP = "site-build.sha256"


def inputs_digest(repo_root: Path) -> str:
    """Return the sha256 of the build's inputs: every file of :data:`INPUT_FOLDERS`, ``mkdocs.yml``, versions.

    Byte caches (``__pycache__``) are left out: they follow the sources.
    """
    digest = hashlib.sha256()
    files = [repo_root / "mkdocs.yml"]
    for folder in INPUT_FOLDERS:
        found = (repo_root / folder).rglob("*")
        files.extend(p for p in found if p.is_file() and "__pycache__" not in p.parts)
    for path in sorted(files):
        digest.update(path.relative_to(repo_root).as_posix().encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"(missing)")
    for package in RENDER_PACKAGES:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "(not installed)"
        digest.update(f"{package}=={version}\n".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def is_current(repo_root: Path, cache_dir: Path) -> str | None:
    """Return the digest if the last build's inputs are today's and ``public/`` is there, else ``None``."""
    stamp = cache_dir / STAMP
    if not stamp.is_file() or not (repo_root / "public" / "index.html").is_file():
        return None
    digest = inputs_digest(repo_root)
    return digest if stamp.read_text(encoding="utf-8").strip() == digest else None


def record(repo_root: Path, cache_dir: Path) -> str:
    """Store the digest of the inputs of the build just finished (after its pages were written)."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    digest = inputs_digest(repo_root)
    (cache_dir / STAMP).write_text(digest + "\n", encoding="utf-8")
    return digest
