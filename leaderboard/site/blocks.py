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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leaderboard.markdown import link
from leaderboard.site.figures import PLOTS_DIR, figure_html
from leaderboard.site.sitedata import SiteData

__all__ = [
    "SEEN_MARK",
    "Figures",
    "details",
    "fold",
    "seen_mark",
    "split_figure",
    "submission_link",
    "track_link",
]

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


def fold(lines: Sequence[str], level: int = 3, *, kind: str = "note") -> list[str]:
    """Fold every section of ``lines`` that starts with a heading of ``level`` into a collapsible block.

    Each ``### Title`` (for ``level`` 3) and what follows it up to the next heading of that level becomes
    ``??? note "Title"`` (pymdownx.details: closed until clicked) with the section indented beneath it;
    deeper headings stay inside their section. Lines before the first such heading stay as they are, and
    so does everything inside a fenced code block. Elements of ``lines`` may hold several lines (a table).
    The heading text is already escaped Markdown (the page wrote it); only its double quotes are replaced,
    since they would end the block's title.
    """
    prefix = "#" * level + " "
    out: list[str] = []
    title: str | None = None
    body: list[str] = []

    def flush() -> None:
        out.extend(body if title is None else details(title, body, kind=kind))

    fence = False
    for line in "\n".join(lines).split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith(prefix):
            flush()
            title, body = line[len(prefix) :].strip(), []
        else:
            body.append(line)
    flush()
    return out


def details(title: str, lines: Sequence[str], *, kind: str = "note") -> list[str]:
    """Return ``lines`` as one collapsible block titled ``title`` (pymdownx.details, closed until clicked).

    ``title`` is already escaped Markdown; only its double quotes are replaced (they would end the title).
    Elements of ``lines`` may hold several lines; each is indented beneath the block's opening line.
    """
    flat = "\n".join(lines).split("\n")
    out = [f'??? {kind} "{title.replace(chr(34), "&quot;")}"', ""]
    out.extend(f"    {line}" if line.strip() else "" for line in flat)
    out.append("")
    return out


def split_figure(lines: Sequence[str]) -> tuple[list[str], list[str]]:
    """Take the first figure (its placeholder div and the caption after it) out of ``lines``.

    Returns ``(figure, rest)``: the figure's lines (empty when ``lines`` holds none) and the other lines in
    their order. Used to show one plot of a track page open while the section it came from is folded.
    """
    flat = "\n".join(lines).split("\n")
    start = next((i for i, line in enumerate(flat) if line.startswith('<div class="chemrobust-plot"')), None)
    if start is None:
        return [], flat
    end = start + 1
    while end < len(flat) and not flat[end].strip():
        end += 1
    if end < len(flat) and flat[end].startswith("*") and flat[end].endswith("*"):
        end += 1  # the caption Figures.block writes right after the div
    return [*flat[start:end], ""], flat[:start] + flat[end:]
