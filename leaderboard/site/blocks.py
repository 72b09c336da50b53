"""Markdown blocks shared by the pages: figures with their files, and links to model and track pages.

:class:`Figures` writes each figure of the pages being generated to ``site/data/plots/<id>.json``
(:func:`leaderboard.site.figures.figure_html`) and remembers it, so that :meth:`Figures.remove_stale`
can delete the files of figures no page shows any more. Link text a submission controls goes through
:func:`leaderboard.markdown.link`.

Side effects: :meth:`Figures.block` writes one JSON file; :meth:`Figures.remove_stale` deletes files.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from leaderboard.markdown import link
from leaderboard.site.figures import PLOTS_DIR, figure_html
from leaderboard.site.sitedata import SiteData

__all__ = ["SEEN_MARK", "Figures", "seen_mark", "submission_link", "track_link"]

#: The mark of a (model, data set) cell the model has seen in training (its title says how).
SEEN_MARK = "⚑"

_ID_PART = re.compile(r"[^A-Za-z0-9._-]+")


class Figures:
    """Writes the figure files of the pages being generated and remembers them.

    Parameters
    ----------
    site_dir : pathlib.Path
        The MkDocs ``docs_dir``; figures go to ``<site_dir>/data/plots/``.
    """

    def __init__(self, site_dir: Path) -> None:
        self.site_dir = Path(site_dir)
        self.written: set[str] = set()

    def block(self, fig: dict[str, Any] | None, *parts: str, caption: str) -> list[str]:
        """Markdown lines of one figure (placeholder div and caption); none when ``fig`` is None.

        Parameters
        ----------
        fig : dict or None
            The figure (``{"data": ..., "layout": ...}``).
        *parts : str
            Pieces of the figure's id (``"sub", sub_id, dataset, "layers"``); characters outside
            ``[A-Za-z0-9._-]`` become ``-``.
        caption : str
            Markdown caption, already escaped by the caller.

        Raises
        ------
        ValueError
            If the same id is used twice in one generation.
        """
        if fig is None:
            return []
        element_id = "-".join(_ID_PART.sub("-", p).strip("-") or "x" for p in parts)
        if element_id in self.written:
            raise ValueError(f"figure id {element_id!r} is used twice; figure ids must be unique.")
        self.written.add(element_id)
        return [figure_html(fig, element_id, site_dir=self.site_dir), "", f"*{caption}*", ""]

    def remove_stale(self) -> None:
        """Delete figure files in ``site/data/plots/`` that this generation did not write."""
        folder = self.site_dir / PLOTS_DIR
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("*.json")):
            if path.stem not in self.written:
                path.unlink()


def submission_link(data: SiteData, sub_id: str, prefix: str = "") -> str:
    """Return a link to a model's page with its (escaped) name; ``prefix`` leads to ``submissions/``."""
    return link(data.name(sub_id), f"{prefix}{sub_id}.md")


def seen_mark(data: SiteData, sub_id: str, dataset: str) -> str:
    """Return `` ⚑`` titled with why, when the model has seen ``dataset`` in training, else ``""``.

    Put after the value or the model's name in every table cell of that (model, data set).
    """
    note = data.seen_note(sub_id, dataset)
    if note is None:
        return ""
    title = html.escape(note)
    return f' <span class="chemrobust-seen" title="{title}" aria-label="{title}">{SEEN_MARK}</span>'


def track_link(name: str, prefix: str = "") -> str:
    """Return a link to a track's page; ``prefix`` leads from the page to the site root (``../``)."""
    return link(name, f"{prefix}tracks/{name}.md")
