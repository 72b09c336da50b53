"""``amore``: embedding retrieval under SMILES augmentation (SPEC §4 T1).

For each augmentation f, the model embeds every original x_i and every variant f(x_i); retrieval asks,
for each original, where its own variant ranks among all variants (and, in reverse, where the original
ranks among all originals for each variant). Every unique string is embedded once per evaluation: the
originals are shared by all augmentations, and a variant identical to its original reuses that embedding.

Pairs whose augmentation failed the identity check are excluded and counted; identical pairs are kept in
the ``all`` subset (comparable with the paper) and left out of ``non_trivial`` (the headline). The gallery
is the same for both subsets — only the queries scored differ.

Reference: Ganeeva et al., AMORE (``shared/papers/amore-smiles-augmentation-robustness.txt``), §3.
"""

from __future__ import annotations

import csv
import gzip
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.adapters import Adapter, EmbeddingAdapter
from evaluators.augmentations import AUGMENTATIONS, AugmentedPair, get_augmentation
from evaluators.datasets import LoadedDataset
from evaluators.metrics import METRICS
from evaluators.retrieval import retrieval_ranks_and_ties
from evaluators.tracks import TRACKS, Track

DIRECTIONS = ("original_to_augmented", "augmented_to_original")


class EmbeddingError(RuntimeError):
    """The model returned embeddings of the wrong shape or with NaN/inf values."""


def _check_embeddings(layers: dict[str, np.ndarray], n: int) -> None:
    if "last" not in layers:
        raise EmbeddingError(f"the adapter returned layers {sorted(layers)} without 'last'")
    for label, array in layers.items():
        if not isinstance(array, np.ndarray) or array.ndim != 2 or array.shape[0] != n or array.shape[1] < 1:
            shape = getattr(array, "shape", type(array).__name__)
            raise EmbeddingError(f"layer {label!r}: expected an array of shape ({n}, d), got {shape}")
        bad = ~np.isfinite(array).all(axis=1)
        if bad.any():
            raise EmbeddingError(f"layer {label!r}: {int(bad.sum())} of {n} embeddings contain NaN or inf")


@TRACKS.register("amore")
class AmoreTrack(Track):
    """AMORE retrieval accuracy of original ↔ augmented SMILES embeddings."""

    name = "amore"
    version = 1
    capability = "embed"
    main_metric = "acc_at_1"
    description = "Embedding retrieval of a molecule's augmented SMILES given its original (AMORE)."
    citation = (
        "Ganeeva, V. et al. Chemical Language Models Have Problems with Chemistry: A Case Study on "
        "Molecule Captioning Task. ICLR 2024 Tiny Papers."
    )

    def definition(self) -> dict[str, Any]:  # noqa: D102
        return {
            "augmentations": [
                asdict(get_augmentation(n, self.options.seed).description) for n in AUGMENTATIONS
            ],
            "distances": list(self.options.distances),
            "directions": list(DIRECTIONS),
            "metrics": METRICS.names(),
            "subsets": ["all", "non_trivial"],
        }

    def run(  # noqa: D102
        self, adapter: Adapter, dataset: LoadedDataset, *, out_dir: Path, log: Callable[[str], None]
    ) -> dict[str, Any]:
        if not isinstance(adapter, EmbeddingAdapter):
            raise TypeError("track 'amore' needs an adapter with the 'embed' capability")
        timing: dict[str, float] = {}
        molecules = dataset.molecules

        t0 = time.perf_counter()
        pairs: dict[str, list[AugmentedPair]] = {}
        for name in AUGMENTATIONS:
            augmentation = get_augmentation(name, self.options.seed)
            pairs[name] = [augmentation.apply(m.id, m.smiles) for m in molecules]
        timing["augment_s"] = time.perf_counter() - t0

        # Every unique string once: originals first, then variants that differ from them.
        strings: dict[str, int] = {}
        for m in molecules:
            strings.setdefault(m.smiles, len(strings))
        for name in pairs:
            for p in pairs[name]:
                if p.status == "changed":
                    strings.setdefault(p.augmented, len(strings))
        log(f"amore: embedding {len(strings)} unique strings ({len(molecules)} molecules)")
        t0 = time.perf_counter()
        embedded = adapter.embed(list(strings))
        timing["embed_s"] = time.perf_counter() - t0
        _check_embeddings(embedded.layers, len(strings))

        t0 = time.perf_counter()
        metrics: list[dict[str, Any]] = []
        counts: dict[str, dict[str, int]] = {}
        excluded: list[dict[str, str]] = []
        ties: list[dict[str, Any]] = []
        rank_rows: list[tuple] = []
        for name, plist in pairs.items():
            kept = [p for p in plist if p.status != "excluded"]
            excluded += [
                {"id": p.id, "augmentation": name, "reason": p.reason}
                for p in plist
                if p.status == "excluded"
            ]
            non_trivial = np.array([p.status == "changed" for p in kept], dtype=bool)
            counts[name] = {
                "n_pairs": len(kept),
                "n_identical": int((~non_trivial).sum()),
                "n_non_trivial": int(non_trivial.sum()),
                "n_excluded": len(plist) - len(kept),
            }
            metrics += [
                {
                    "augmentation": name,
                    "layer": "-",
                    "distance": "-",
                    "direction": "-",
                    "subset": "all",
                    "metric": count,
                    "value": float(value),
                }
                for count, value in counts[name].items()
            ]
            if len(kept) < 2:
                log(f"amore: {name}: fewer than 2 valid pairs, no retrieval")
                continue
            q_idx = np.array([strings[p.original] for p in kept])
            g_idx = np.array([strings[p.augmented] for p in kept])
            for layer, emb in embedded.layers.items():
                for distance in self.options.distances:
                    for direction in DIRECTIONS:
                        q, g = (q_idx, g_idx) if direction == DIRECTIONS[0] else (g_idx, q_idx)
                        ranks, n_tie = retrieval_ranks_and_ties(emb[q], emb[g], distance=distance)
                        key = {
                            "augmentation": name,
                            "layer": layer,
                            "distance": distance,
                            "direction": direction,
                        }
                        for subset, mask in (("all", slice(None)), ("non_trivial", non_trivial)):
                            r = ranks[mask]
                            if r.size == 0:
                                continue
                            for metric in METRICS.names():
                                metrics.append(
                                    {
                                        **key,
                                        "subset": subset,
                                        "metric": metric,
                                        "value": METRICS.get(metric).fn(r),
                                    }
                                )
                            metrics.append(
                                {
                                    **key,
                                    "subset": subset,
                                    "metric": "n_ties",
                                    "value": float((n_tie[mask] > 0).sum()),
                                }
                            )
                        if layer == "last" and direction == DIRECTIONS[0]:
                            ties += [
                                {
                                    "id": kept[i].id,
                                    "augmentation": name,
                                    "distance": distance,
                                    "n_tied": int(n_tie[i]),
                                }
                                for i in np.flatnonzero(n_tie)
                            ]
                        rank_rows += [
                            (name, layer, distance, direction, p.id, p.status, float(rk))
                            for p, rk in zip(kept, ranks, strict=True)
                        ]
        timing["retrieval_s"] = time.perf_counter() - t0

        with gzip.open(out_dir / "ranks.csv.gz", "wt", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["augmentation", "layer", "distance", "direction", "id", "status", "rank"])
            writer.writerows(rank_rows)
        n = len(molecules)
        return {
            "metrics": metrics,
            "counts": {
                "per_augmentation": counts,
                "n_truncated": embedded.n_truncated,
                "n_unique_strings": len(strings),
                "n_molecules": n,
            },
            "chance_level": {"acc_at_1": 1.0 / n if n else None},
            "excluded_pairs": excluded,
            "tied_pairs": ties,
            "augmentations": {
                name: asdict(get_augmentation(name, self.options.seed).description) for name in pairs
            },
            "examples": {name: [p.augmented for p in plist[:3]] for name, plist in pairs.items()},
            "timing": timing,
            "artifacts": ["ranks.csv.gz"],
        }
