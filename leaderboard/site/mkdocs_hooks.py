"""MkDocs hook (``hooks:`` in ``mkdocs.yml``): the build-time files the source tree does not hold.

Loaded by MkDocs itself (``mkdocs build``, ``mkdocs serve``, :func:`leaderboard.site.build.build_site`),
so that ``mkdocs build --strict`` on a bare clone builds the complete site from git alone (issue 18):

- ``data/molecules/<hash>.svg``: every drawing the committed index ``site/data/molecules.json`` names,
  drawn from its string by :func:`leaderboard.site.molecules.draw_svg`;
- ``javascripts/vendor/plotly.min.js``: the plotly.js of the pinned plotly package
  (:func:`leaderboard.site.figures.plotly_js_source`).

The files are generated in memory (``File.generated``) and written only to the built site, never to
``site/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

# MkDocs imports a hook by file path; when it is started as the ``mkdocs`` script the repository is not on
# sys.path, and this file's package is needed for the drawing and plotly helpers.
_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

from mkdocs.structure.files import File, Files  # noqa: E402

from leaderboard.site.figures import PLOTLY_JS, plotly_js_source  # noqa: E402
from leaderboard.site.molecules import DRAWINGS_DIR, draw_svg, read_index  # noqa: E402


def _add(files: Files, file: File) -> None:
    old = files.get_file_from_path(file.src_uri)
    if old is not None:  # a leftover copy in the source tree (older versions wrote one there)
        files.remove(old)
    files.append(file)


def on_files(files: Files, config) -> Files:
    """Add the drawings of the committed index and plotly.js to the files of the build."""
    for name, smiles in read_index(Path(config["docs_dir"])).items():
        svg = draw_svg(smiles)
        if svg is not None:  # pages link only drawable strings; were this RDKit to differ, --strict says so
            _add(files, File.generated(config, f"{DRAWINGS_DIR}/{name}", content=svg))
    _add(files, File.generated(config, PLOTLY_JS, abs_src_path=str(plotly_js_source())))
    return files
