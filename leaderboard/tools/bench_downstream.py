"""Speed of the downstream track (``nox -s bench-downstream``): what T2 adds to an evaluation, and where.

For one submission on one data set (default ``minilm-l6-text`` on ``esol``), in-process so that only our code
is timed (image build and model loading excluded), prints:

- the model's own work: one ``embed`` call over the run's unique strings (train originals, test originals,
  five rewritten test sets) — the floor;
- the container side of T2 (:meth:`evaluators.tracks.downstream.DownstreamTrack.run`: rewrite, embed, write
  the embeddings) and its ratio to the floor;
- the host side (:meth:`~evaluators.tracks.downstream.DownstreamTrack.score`: probe fitted with
  cross-validation on the training molecules, six test sets predicted, the paired bootstrap, the tables),
  which no model time hides;
- the total, and the same set's AMORE (T1) run for comparison: the extra time T2 adds per data set.

Side effects: none beyond CPU time (the run's files go to a temporary folder).
"""

from __future__ import annotations

import argparse
import csv
import gzip
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_downstream", description=__doc__)
    parser.add_argument("--submission", default="minilm-l6-text")
    parser.add_argument("--dataset", default="esol")
    parser.add_argument("--skip-amore", action="store_true", help="do not time the T1 run for comparison")
    parser.add_argument("--limit", type=int, help="first N molecules only (a smoke run; figures are noise)")
    parser.add_argument("--state-dir", type=Path, default=REPO_ROOT / ".state",
                        help="weights and data cache (default .state/)")  # fmt: skip
    args = parser.parse_args(argv)

    from evaluators.adapters import load_adapter
    from evaluators.datasets import dataset_hash, load_dataset, load_records
    from evaluators.datasets.views import view_dataset
    from evaluators.schema import Job, TrackOptions, TrackResult
    from evaluators.tracks import benchmark_version
    from evaluators.tracks.amore import AmoreTrack
    from evaluators.tracks.downstream import DownstreamTrack
    from leaderboard.data.prepare import prepare_dataset
    from leaderboard.execution.evaluate import job_document
    from leaderboard.execution.weights import fetch_weights
    from leaderboard.intake.manifest import load_submission
    from leaderboard.settings import Settings

    state = args.state_dir
    state.mkdir(parents=True, exist_ok=True)
    folder = REPO_ROOT / "submissions" / args.submission
    sub = load_submission(folder)
    weights = fetch_weights(sub, folder, state)
    settings = Settings.from_environment(repo_root=REPO_ROOT, state_dir=state)
    data_root = prepare_dataset(args.dataset, state, mirror=settings.data_mirror)
    options = TrackOptions(limit=args.limit)
    job = job_document(sub, track="downstream", dataset=args.dataset, options=options, version="",
                       has_weights=True)  # fmt: skip
    # The model configuration exactly as the container parses it from job.json.
    config = Job.from_json(job.to_json(), models_dir=weights or state, submission_dir=folder).model
    adapter = load_adapter(config)
    track = DownstreamTrack(options)
    records = load_records(args.dataset, data_root, limit=args.limit)
    view = track.container_view(args.dataset, records, options)
    dataset = view_dataset(view or [])

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        payload = track.run(adapter, dataset, out_dir=out, log=lambda _m: None)
        container = time.perf_counter() - t0
        # The floor: the same unique strings embedded once more (warm, as the run was after its first batch).
        with gzip.open(out / "strings.csv.gz", "rt", newline="") as handle:
            unique = dict.fromkeys(row["string"] for row in csv.DictReader(handle))
        strings = list(unique)
        t0 = time.perf_counter()
        adapter.embed(strings)
        floor = time.perf_counter() - t0
        data_hash = dataset_hash(args.dataset, data_root)
        result = TrackResult(
            submission_id=sub.id, track="downstream", track_version=track.version, dataset=args.dataset,
            data_hash=data_hash, benchmark_version=benchmark_version("downstream", options, data_hash),
            seed=options.seed, rows=(), counts=payload["counts"], artifacts=tuple(payload["artifacts"]),
            details=payload["details"], model={}, environment={}, timing={}, skipped_molecules=(),
        )  # fmt: skip
        t0 = time.perf_counter()
        track.score(result, out_dir=out, data_dir=data_root)
        host = time.perf_counter() - t0
    amore = None
    if not args.skip_amore:
        with tempfile.TemporaryDirectory() as tmp:
            molecules = load_dataset(args.dataset, data_root, limit=args.limit)
            t0 = time.perf_counter()
            AmoreTrack(options).run(adapter, molecules, out_dir=Path(tmp), log=lambda _m: None)
            amore = time.perf_counter() - t0

    timing = payload["timing"]
    rows = [
        ("unique strings embedded", f"{len(strings)}"),
        ("model's embed call (floor)", f"{floor:.2f} s  ({len(strings) / floor:.0f} strings/s)"),
        ("container side (rewrite + embed + write)",
         f"{container:.2f} s  (ratio to floor {container / floor:.2f})"),
        ("  of which augment / embed / artifacts",
         f"{timing['augment_s']:.2f} / {timing['embed_s']:.2f} / {timing['artifacts_s']:.2f} s"),
        ("host side (probe CV + fit, 6 test sets, bootstrap, tables)", f"{host:.2f} s"),
        ("T2 total per data set",
         f"{container + host:.2f} s  (ratio to floor {(container + host) / floor:.2f})"),
    ]  # fmt: skip
    if amore is not None:
        rows.append(("T1 (AMORE) on the same set, for comparison", f"{amore:.2f} s"))
    print(f"bench-downstream: {sub.id} on {args.dataset} ({len(dataset.molecules)} molecules)")
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
