"""Execution: turning a valid submission into a stored result.

Weight prefetch, image build, the sandboxed runners and the orchestrator that ties them together
(:mod:`leaderboard.execution.evaluate`); the data sets it needs come from :mod:`leaderboard.data`. The only
sub-package that talks to Docker.
"""
