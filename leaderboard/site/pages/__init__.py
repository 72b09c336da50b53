"""The site's Markdown pages, one module per page (or family of pages), generated from :class:`SiteData`.

Each module returns page bodies as strings; :func:`leaderboard.site.build.generate_pages` writes them.
Text a submission controls reaches a page only through :mod:`leaderboard.markdown`.
"""
