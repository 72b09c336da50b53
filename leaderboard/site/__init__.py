"""The static site: export schema, exports, pages, plots, molecule drawings and the MkDocs build.

Reads only ``site/data/`` (and the committed ``submissions/``); never MLflow, never Docker.
"""
