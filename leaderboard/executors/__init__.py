"""Executors: what runs the jobs an evaluation plans, behind one interface, found by name.

The orchestrator (:class:`leaderboard.execution.evaluate.Evaluator`) decides the jobs and their result keys;
an executor runs them and returns the :class:`~leaderboard.execution.evaluate.Summary`. Registered (one file
each, found by ``pkgutil``): ``local`` (:mod:`.local`: sequentially, in this process — the default) and
``slurm`` (:mod:`.slurm`: one Slurm job per (submission, track, data set), each running the same sandboxed
container). Every executor writes through the same store under the same keys, so results do not depend
on which one ran them. Executor modules import the evaluation machinery only when they run, since every
command's parser lists them. Nothing here runs at import time.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Protocol

from evaluators.registry import Registry

if TYPE_CHECKING:  # the command line builds its parser from the registry: no heavy imports here
    from leaderboard.execution.evaluate import Evaluator, Summary
    from leaderboard.settings import Settings


class ExecutorError(RuntimeError):
    """An executor cannot run the evaluation (its scheduler fails, the store does not suit it)."""


class Executor(Protocol):
    """Runs an evaluation's jobs."""

    name: str

    def run(self, evaluator: Evaluator, submission_ids: list[str] | None, datasets: list[str]) -> Summary:
        """Plan with ``evaluator``, run every job, return the summary."""
        ...


class ExecutorFactory(Protocol):
    """What is registered: adds an executor's command-line options and builds it from them."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add this executor's options to ``evaluate``'s parser."""
        ...

    @classmethod
    def from_arguments(cls, args: argparse.Namespace, settings: Settings) -> Executor:
        """Build the executor from the parsed options and the maintainer settings."""
        ...


EXECUTORS: Registry[ExecutorFactory] = Registry("executor", package="leaderboard.executors")
