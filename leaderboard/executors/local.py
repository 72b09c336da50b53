"""The ``local`` executor: every job on this machine, ``--jobs`` at a time (the default; registers ``local``).

Exactly :meth:`leaderboard.execution.evaluate.Evaluator.run`: the state folder's lock, the sweep of what a
killed evaluation left behind, then the jobs — the Docker ones side by side (``--jobs``, default ``auto``:
:func:`leaderboard.execution.parallel.auto_workers`), the others one after another. Side effects: those of
the evaluator.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from leaderboard.executors import EXECUTORS

if TYPE_CHECKING:
    from leaderboard.execution.evaluate import Evaluator, Summary
    from leaderboard.settings import Settings


def jobs_value(text: str) -> int:
    """Parse ``--jobs``: ``auto`` (0: decided when the engine is known) or a positive integer.

    Examples
    --------
    >>> jobs_value("auto"), jobs_value("3")
    (0, 3)
    """
    if text.strip().lower() == "auto":
        return 0
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--jobs {text!r}: 'auto' or a positive integer (1: one by one)")
    return int(text)


@EXECUTORS.register("local")
class LocalExecutor:
    """Run the jobs here: Docker jobs ``jobs`` at a time (0: as many as the cores and memory allow)."""

    name = "local"

    def __init__(self, jobs: int = 0) -> None:
        self.jobs = jobs

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add ``--jobs``."""
        group = parser.add_argument_group("--executor local")
        group.add_argument(
            "--jobs",
            type=jobs_value,
            default=0,
            metavar="N",
            help="local executor: Docker jobs run at once, each with its share of the cores (default auto: "
            "one per core while memory allows at the sandbox's limit; 1 without Docker or with a GPU)",
        )

    @classmethod
    def from_arguments(cls, args: argparse.Namespace, settings: Settings) -> LocalExecutor:
        """Build it from ``--jobs``."""
        return cls(jobs=int(getattr(args, "jobs", 0) or 0))

    def run(self, evaluator: Evaluator, submission_ids: list[str] | None, datasets: list[str]) -> Summary:
        """Run every planned job on this machine; return the summary."""
        from leaderboard.execution.parallel import auto_workers

        evaluator.jobs = self.jobs or auto_workers(evaluator)
        return evaluator.run(submission_ids, datasets)
