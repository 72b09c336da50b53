"""Services a cluster evaluation needs, brought up on one machine: Slurm, PostgreSQL and an MLflow server.

:mod:`leaderboard.cluster.local_slurm` starts a single-node Slurm (munge, slurmctld, slurmd) with fake GPUs
declared as gres; :mod:`leaderboard.cluster.tracking_server` starts PostgreSQL and ``mlflow server`` on it.
The tests and CI use both for real; ``nox -s tracking-server`` uses the second. A real cluster has its own
Slurm: nothing here is needed there. Nothing runs at import time.
"""
