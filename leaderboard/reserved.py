"""The names the site's layout takes: submission ids that would collide with a page or a folder.

A submission's id is its folder name and the name of its page (``site/submissions/<id>.md``, published
as ``submissions/<id>/``). The ids below are the names the site itself uses, so a submission may not take
them: ``index`` would overwrite the models index page, and the others name the site's own pages and
folders (``site/<name>.md``, ``site/<name>/``) or what MkDocs and its Material theme write next to them in
``public/`` (``assets/``, ``search/``, ``404.html``, ``sitemap.xml``). Reserving them all keeps a
submission's name from ever shadowing a page of the site, whatever folder the model pages move to.

This is the one list: the manifest validation (:mod:`leaderboard.intake.manifest`, which may not import
the site) refuses these ids, and the site (:func:`leaderboard.site.normalise.check_slug`) refuses them in
its data. ``tests/site/test_site_failures.py`` checks the list against the layout a real build produces.

Side effects: none.
"""

from __future__ import annotations

__all__ = ["BUILD_NAMES", "RESERVED_IDS", "SITE_FOLDERS", "SITE_PAGES", "is_reserved"]

#: Pages of the site's docs folder (``site/<name>.md``), the overview first.
SITE_PAGES: tuple[str, ...] = ("index", "methodology", "how-to-submit", "security", "downloads")
#: Folders of the site's docs folder (``site/<name>/``).
SITE_FOLDERS: tuple[str, ...] = ("data", "javascripts", "stylesheets", "submissions", "tracks")
#: What ``mkdocs build`` with the Material theme adds to ``public/`` (``404.html``, ``sitemap.xml``).
BUILD_NAMES: tuple[str, ...] = ("404", "assets", "search", "sitemap")

#: Every id a submission may not take (lowercase; compare with :func:`is_reserved`).
RESERVED_IDS: frozenset[str] = frozenset(SITE_PAGES + SITE_FOLDERS + BUILD_NAMES)


def is_reserved(submission_id: str) -> bool:
    """Return whether ``submission_id`` names a page or folder of the site (case-insensitive).

    Parameters
    ----------
    submission_id : str
        A submission id (a folder name).

    Returns
    -------
    bool
        True for an id of :data:`RESERVED_IDS`, in any case (``Index`` too: case-insensitive file
        systems would collide).

    Examples
    --------
    >>> is_reserved("index"), is_reserved("Assets"), is_reserved("acme-chem")
    (True, True, False)
    """
    return submission_id.lower() in RESERVED_IDS
