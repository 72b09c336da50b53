"""Command line inside the image: ``python -m evaluators run --job … --data … --models … --out …``.

Exit status 0 on success; on failure 1, with a one-line reason as the last line of stderr (the host
shows it in the terminal, in MLflow and on the site).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run a job; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m evaluators", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one evaluation job")
    run.add_argument("--job", type=Path, default=Path("/job/job.json"))
    run.add_argument("--data", type=Path, default=Path("/data"))
    run.add_argument("--models", type=Path, default=Path("/models"))
    run.add_argument("--out", type=Path, default=Path("/out"))
    run.add_argument("--submission", type=Path, default=Path("/submission"))
    args = parser.parse_args(argv)

    from evaluators.job import run_job

    try:
        run_job(
            args.job,
            data_dir=args.data,
            models_dir=args.models,
            out_dir=args.out,
            submission_dir=args.submission,
            log=lambda msg: print(msg, flush=True),
        )
    except Exception as exc:  # noqa: BLE001 - the process boundary: every failure becomes a reason line
        traceback.print_exc()
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        print(f"chemrobust: error: {reason}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
