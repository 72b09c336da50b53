"""Hostile submission folders: test fixtures, never imported on the host.

Each ``<id>/attack.py`` is code that must only ever run inside the sandbox (through
``tests/test_adversarial.py``). ``collect_ignore_glob`` keeps pytest, including ``--doctest-modules``,
from importing it on the host.
"""

collect_ignore_glob = ["*/*.py"]
