"""Execution: turning a valid submission into a stored result.

Data preparation, weight prefetch, image build, the sandboxed runners and the orchestrator that ties them
together (:mod:`leaderboard.execution.evaluate`). The only sub-package that talks to Docker.
"""
