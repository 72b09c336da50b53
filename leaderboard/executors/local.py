"""The ``local`` executor: every job in this process, one after another (the default; registers ``local``).

Exactly :meth:`leaderboard.execution.evaluate.Evaluator.run`: the state folder's lock, the sweep of what a
killed evaluation left behind, then each job in turn. Side effects: those of the evaluator.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from leaderboard.executors import EXECUTORS

if TYPE_CHECKING:
    from leaderboard.execution.evaluate import Evaluator, Summary
    from leaderboard.settings import Settings


@EXECUTORS.register("local")
class LocalExecutor:
    """Run the jobs here, sequentially."""

    name = "local"

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add nothing: the local executor has no options of its own."""

    @classmethod
    def from_arguments(cls, args: argparse.Namespace, settings: Settings) -> LocalExecutor:
        """Build it (no options)."""
        return cls()

    def run(self, evaluator: Evaluator, submission_ids: list[str] | None, datasets: list[str]) -> Summary:
        """Run every planned job in this process; return the summary."""
        return evaluator.run(submission_ids, datasets)
