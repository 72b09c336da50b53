"""ChemRobust evaluators: everything that runs inside the submission's image.

Data loading, augmentations, model adapters, tracks and metrics. This package never imports docker,
mlflow or ``leaderboard``; heavy libraries (torch, transformers, faiss) are imported lazily inside the
functions that need them, so the host's light commands can import the registries cheaply.
"""

__version__ = "0.1.0"
