"""ChemRobust evaluators: everything that runs inside the submission's image.

This package never imports docker, mlflow or ``leaderboard``; heavy libraries (torch, transformers,
faiss) are imported lazily inside the functions that need them, so the host's light commands can import
the registries cheaply. The map (who may import whom is enforced by ``tests/test_layering.py``):

- core — :mod:`~evaluators.schema` and :mod:`~evaluators.declarations` (the contract with the host),
  :mod:`~evaluators.registry`, :mod:`~evaluators.metrics` (the metric registry), :mod:`~evaluators.job`
  and :mod:`~evaluators.progress` (the container's entry point);
- :mod:`evaluators.adapters` — the submission API: model adapters and their registry;
- shared science, importing no track: :mod:`evaluators.notations` (SMILES and its checked rewrites),
  :mod:`evaluators.answers` (reading and normalising answers; OPSIN; answer similarity),
  :mod:`evaluators.asking` (asking a generative model; the tasks T3 and T4 share),
  :mod:`evaluators.datasets` (the data-set registry, every set's declaration and reader, label-free views);
- :mod:`evaluators.tracks` — the Track base class and registry, and one package per track (``amore``,
  ``downstream``, ``consistency``, ``prompt_robustness``, ``identity_blinded``) holding its whole science;
  a track imports shared packages and the core, never another track.
"""

__version__ = "0.1.0"
