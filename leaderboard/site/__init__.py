"""The static site: data files, pages (generic over tracks, with per-track extensions), plots and the build.

Reads only ``site/data/`` (and the committed ``submissions/``); never MLflow, never Docker.
"""
