"""Molecule notations and their rewrites, shared by every track (RDKit only).

:mod:`~evaluators.notations.smiles` parses SMILES and gives the canonical form every identity check
compares; :mod:`~evaluators.notations.augmentations` is the registry of checked rewrites (one module
each: canonical, explicit hydrogens, Kekulé form, renumbered ring closures, random atom order). Imports no
track.
"""
