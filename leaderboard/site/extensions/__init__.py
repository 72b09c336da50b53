"""Per-track extensions of the site: what a track shows beyond what its declarations give.

The generic pages (:mod:`leaderboard.site.pages`) render every registered track from its declarations
alone — headline criteria, metrics over its dimensions, counts, every number — so a track without an
extension still gets complete pages. A track that wants more (figures, a failure explorer, per-item values
for the rank bootstrap, methodology text) registers an :class:`Extension` under its track name in a module
of this package; modules are found with ``pkgutil`` on first lookup, so an extension is one file.

Side effects: none (an extension's functions may write figure files through the ``figures`` they get).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from evaluators.registry import Registry
from leaderboard.site.blocks import Figures
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.sitedata import SiteData

__all__ = ["EXTENSIONS", "Extension", "extension"]


@dataclass(frozen=True)
class Extension:
    """What a track adds to the generic pages; every part is optional.

    Attributes
    ----------
    track_sections : callable, optional
        ``track_sections(data, dataset, figures) -> list[str]``: Markdown lines added to the track's page
        for one data set, after its tables.
    submission_sections : callable, optional
        ``submission_sections(data, sub_id, dataset, figures, explorer) -> list[str]``: Markdown lines
        added to a model's page for one data set of the track.
    item_values : callable, optional
        ``item_values(data) -> DataFrame | None``: per-item values of the track's headline criteria
        (columns ``submission, criterion, dataset, item, value``, see
        :mod:`leaderboard.ranking.item_table`), which the rank bootstrap resamples.
    methodology : callable, optional
        ``methodology() -> list[str]``: Markdown lines for the track's section of the methodology page.
    track_summary : callable, optional
        ``track_summary(data, figures) -> list[str]``: Markdown lines added once to the track's page, after
        the list of headline criteria and before the per-data-set sections, for views across the track's
        data sets (a ranking per test set …); called only when the track has results.
    """

    track_sections: Callable[[SiteData, str, Figures], list[str]] | None = None
    submission_sections: Callable[[SiteData, str, str, Figures, Explorer], list[str]] | None = None
    item_values: Callable[[SiteData], pd.DataFrame | None] | None = None
    methodology: Callable[[], list[str]] | None = None
    track_summary: Callable[[SiteData, Figures], list[str]] | None = None


#: Extensions by track name.
EXTENSIONS: Registry[Extension] = Registry("site extension", __name__)
_NONE = Extension()


def extension(track: str) -> Extension:
    """Return the extension registered for ``track``, or an empty one (the generic pages alone)."""
    return EXTENSIONS.get(track) if track in EXTENSIONS else _NONE
