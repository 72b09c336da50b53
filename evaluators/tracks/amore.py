"""``amore``: embedding retrieval under SMILES augmentation (SPEC §4 T1).

For each augmentation f, the model embeds every original x_i and every variant f(x_i); retrieval asks,
for each original, where its own variant ranks among all variants (``original_to_augmented``, the paper's
direction) and, in reverse, where the original ranks among all originals for each variant. Every unique
string is embedded once per evaluation: the originals are shared by all augmentations, and a variant
identical to its original reuses that embedding. All layers the adapter returns are scored.

Pairs whose augmentation failed the identity check are excluded and counted; identical pairs are kept in
the ``all`` subset (comparable with the paper) and left out of ``non_trivial`` (the headline). The gallery
is the same for both subsets — only the queries scored differ. Distances: exact ``l2``, ``cosine`` and
``inner_product`` (one blocked product per layer and distance serves both directions), plus the approximate
FAISS ``hnsw`` index on the last layer, original → augmented only (the paper's Table 6).

Artifacts: ``ranks.csv.gz`` (per-molecule ranks, last layer, every distance and direction) and
``ranks_all_layers.npz`` (every layer). ``result.json`` also carries Recall@K curves (K = 1..100) for the
last layer and the chance level 1/N.

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
from evaluators.chem import canonical_smiles
from evaluators.datasets import LoadedDataset
from evaluators.metrics import METRICS, recall_at_k_curve
from evaluators.retrieval import DISTANCES, bidirectional_ranks_many, hnsw_ranks
from evaluators.tracks import TRACKS, Track

DIRECTIONS = ("original_to_augmented", "augmented_to_original")
APPROXIMATE = ("hnsw",)
RECALL_KS = np.arange(1, 101)


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


def _row(
    augmentation: str, layer: str, distance: str, direction: str, subset: str, metric: str, value: float
) -> dict[str, Any]:
    return {
        "augmentation": augmentation,
        "layer": layer,
        "distance": distance,
        "direction": direction,
        "subset": subset,
        "metric": metric,
        "value": float(value),
    }


@TRACKS.register("amore")
class AmoreTrack(Track):
    """AMORE retrieval accuracy of original ↔ augmented SMILES embeddings."""

    name = "amore"
    version = 2
    capability = "embed"
    main_metric = "acc_at_1"
    description = "Embedding retrieval of a molecule's augmented SMILES given its original (AMORE)."
    citation = (
        "Ganeeva, V. et al. Chemical Language Models Have Problems with Chemistry: A Case Study on "
        "Molecule Captioning Task. ICLR 2024 Tiny Papers."
    )

    def definition(self) -> dict[str, Any]:  # noqa: D102
        unknown = set(self.options.distances) - set(DISTANCES) - set(APPROXIMATE)
        if unknown:
            raise ValueError(f"unknown distance(s) {sorted(unknown)}; choose from {DISTANCES + APPROXIMATE}")
        return {
            "augmentations": [
                asdict(get_augmentation(n, self.options.seed).description) for n in AUGMENTATIONS
            ],
            "distances": list(self.options.distances),
            "directions": list(DIRECTIONS),
            "metrics": METRICS.names(),
            "subsets": ["all", "non_trivial"],
            "recall_ks": [int(RECALL_KS[0]), int(RECALL_KS[-1])],
        }

    def run(  # noqa: D102
        self, adapter: Adapter, dataset: LoadedDataset, *, out_dir: Path, log: Callable[[str], None]
    ) -> dict[str, Any]:
        if not isinstance(adapter, EmbeddingAdapter):
            raise TypeError("track 'amore' needs an adapter with the 'embed' capability")
        self.definition()
        timing: dict[str, float] = {}
        molecules = dataset.molecules

        t0 = time.perf_counter()
        pairs: dict[str, list[AugmentedPair]] = {}
        references = [canonical_smiles(m.smiles) for m in molecules]  # shared by every augmentation
        for name in AUGMENTATIONS:
            augmentation = get_augmentation(name, self.options.seed)
            pairs[name] = [
                augmentation.apply(m.id, m.smiles, ref) for m, ref in zip(molecules, references, strict=True)
            ]
        timing["augment_s"] = time.perf_counter() - t0

        # Every unique string once: originals first, then variants that differ from them.
        strings: dict[str, int] = {}
        for m in molecules:
            strings.setdefault(m.smiles, len(strings))
        for plist in pairs.values():
            for p in plist:
                if p.status == "changed":
                    strings.setdefault(p.augmented, len(strings))
        log(f"amore: embedding {len(strings)} unique strings ({len(molecules)} molecules × 5 augmentations)")
        t0 = time.perf_counter()
        embedded = adapter.embed(list(strings))
        timing["embed_s"] = time.perf_counter() - t0
        _check_embeddings(embedded.layers, len(strings))

        t0 = time.perf_counter()
        self._metrics: list[dict[str, Any]] = []
        self._curves: list[dict[str, Any]] = []
        self._ranks: dict[str, np.ndarray] = {}
        self._ties: list[dict[str, Any]] = []
        counts: dict[str, dict[str, int]] = {}
        excluded: list[dict[str, str]] = []
        csv_rows: list[tuple] = []
        exact = [d for d in self.options.distances if d in DISTANCES]
        for name, plist in pairs.items():
            kept = [p for p in plist if p.status != "excluded"]
            excluded += [
                {"id": p.id, "augmentation": name, "reason": p.reason}
                for p in plist
                if p.status == "excluded"
            ]
            non_trivial = np.array([p.status == "changed" for p in kept], dtype=bool)
            q_idx = np.array([strings[p.original] for p in kept], dtype=np.int64)
            g_idx = np.array([strings[p.augmented] for p in kept], dtype=np.int64)
            truncated = embedded.truncated
            counts[name] = {
                "n_pairs": len(kept),
                "n_identical": int((~non_trivial).sum()),
                "n_non_trivial": int(non_trivial.sum()),
                "n_excluded": len(plist) - len(kept),
                # Pairs where the model saw only part of either string (the reference cut explicit H at 128).
                "n_truncated": 0 if truncated is None else int((truncated[q_idx] | truncated[g_idx]).sum()),
            }
            self._metrics += [_row(name, "-", "-", "-", "all", k, v) for k, v in counts[name].items()]
            if len(kept) < 2:
                log(f"amore: {name}: fewer than 2 valid pairs, no retrieval")
                continue
            self._metrics.append(_row(name, "-", "-", "-", "all", "chance_acc_at_1", 1.0 / len(kept)))
            ids = [p.id for p in kept]
            for layer, emb in embedded.layers.items():
                queries, gallery = emb[q_idx], emb[g_idx]
                ranked = bidirectional_ranks_many(queries, gallery, distances=tuple(exact)) if exact else {}
                for distance, both in ranked.items():
                    self._score(
                        name,
                        layer,
                        distance,
                        DIRECTIONS[0],
                        both.forward,
                        both.forward_ties,
                        non_trivial,
                        ids,
                    )
                    self._score(
                        name,
                        layer,
                        distance,
                        DIRECTIONS[1],
                        both.reverse,
                        both.reverse_ties,
                        non_trivial,
                        ids,
                    )
                if layer == "last" and "hnsw" in self.options.distances:
                    # The paper's direction only (its Table 6): an index per direction would double the cost.
                    zeros = np.zeros(len(kept), dtype=np.int64)
                    self._score(
                        name,
                        layer,
                        "hnsw",
                        DIRECTIONS[0],
                        hnsw_ranks(queries, gallery),
                        zeros,
                        non_trivial,
                        ids,
                    )
            for key, ranks in self._ranks.items():
                aug, layer, distance, direction = key.split("|")
                if aug == name and layer == "last":
                    csv_rows += [
                        (aug, distance, direction, p.id, p.status, float(r))
                        for p, r in zip(kept, ranks, strict=True)
                    ]
        timing["retrieval_s"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        with gzip.open(out_dir / "ranks.csv.gz", "wt", newline="", compresslevel=5) as handle:
            writer = csv.writer(handle)
            writer.writerow(["augmentation", "distance", "direction", "id", "status", "rank"])
            writer.writerows(csv_rows)
        np.savez_compressed(
            out_dir / "ranks_all_layers.npz", **{k: v.astype(np.float32) for k, v in self._ranks.items()}
        )
        timing["artifacts_s"] = time.perf_counter() - t0
        n = len(molecules)
        return {
            "metrics": self._metrics,
            "recall_at_k": {"k": RECALL_KS.tolist(), "curves": self._curves},
            "counts": {
                "per_augmentation": counts,
                "n_truncated": embedded.n_truncated,
                "n_unique_strings": len(strings),
                "n_molecules": n,
                "layers": list(embedded.layers),
            },
            "chance_level": {"acc_at_1": 1.0 / n if n else None},
            "excluded_pairs": excluded,
            "tied_pairs": self._ties,
            "augmentations": {
                name: asdict(get_augmentation(name, self.options.seed).description) for name in pairs
            },
            "examples": {name: [p.augmented for p in plist[:3]] for name, plist in pairs.items()},
            "timing": timing,
            "artifacts": ["ranks.csv.gz", "ranks_all_layers.npz"],
        }

    def _score(
        self,
        aug: str,
        layer: str,
        distance: str,
        direction: str,
        ranks: np.ndarray,
        ties: np.ndarray,
        non_trivial: np.ndarray,
        ids: list[str],
    ) -> None:
        """Metrics, Recall@K curves (last layer) and tie reports for one set of ranks."""
        self._ranks[f"{aug}|{layer}|{distance}|{direction}"] = ranks
        for subset, mask in (("all", slice(None)), ("non_trivial", non_trivial)):
            r = ranks[mask]
            if r.size == 0:
                continue
            for metric in METRICS.names():
                self._metrics.append(
                    _row(aug, layer, distance, direction, subset, metric, METRICS.get(metric).fn(r))
                )
            self._metrics.append(
                _row(aug, layer, distance, direction, subset, "n_ties", (ties[mask] > 0).sum())
            )
            if layer == "last":
                curve = recall_at_k_curve(r, RECALL_KS)
                self._curves.append(
                    {
                        "augmentation": aug,
                        "layer": layer,
                        "distance": distance,
                        "direction": direction,
                        "subset": subset,
                        "recall": [round(float(v), 6) for v in curve],
                    }
                )
        if layer == "last" and direction == DIRECTIONS[0]:
            self._ties += [
                {"id": ids[i], "augmentation": aug, "distance": distance, "n_tied": int(ties[i])}
                for i in np.flatnonzero(ties)
            ]
