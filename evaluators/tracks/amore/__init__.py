"""``amore``: embedding retrieval under SMILES augmentation (SPEC §4 T1).

For each augmentation f, the model embeds every original x_i and every variant f(x_i); retrieval asks,
for each original, where its own variant ranks among all variants (``original_to_augmented``, the paper's
direction) and, in reverse, where the original ranks among all originals for each variant. Every unique
string is embedded once per evaluation: the originals are shared by all augmentations, and a variant
identical to its original reuses that embedding. All layers the adapter returns are scored.

Pairs whose augmentation failed the identity check are excluded and counted; identical pairs are kept in
the ``all`` subset (comparable with the paper) and left out of ``non_trivial`` (the headline). The gallery
is the same for both subsets — only the queries scored differ. Distances: exact ``l2``, ``cosine`` and
``inner_product`` (one blocked product per layer serves every distance and both directions), plus the
approximate FAISS ``hnsw`` index on the last layer, original → augmented only (the paper's Table 6).

Artifacts: ``ranks.csv.gz`` (per-molecule ranks, last layer, every distance and direction, with the
original and the augmented string of each pair, so the site shows exactly what the model saw),
``recall_at_k.csv.gz`` (Recall@K curves, K = 1..100, last layer) and ``ranks_all_layers.npz`` (every
layer). ``result.json`` ``details`` carries the chance level 1/N, excluded and tied pairs, the
augmentation descriptions and examples.

Reference: Ganeeva et al., AMORE (``shared/papers/amore-smiles-augmentation-robustness.txt``), §3.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from evaluators.adapters import Adapter, EmbeddingAdapter
from evaluators.datasets import LoadedDataset
from evaluators.notations.augmentations import AUGMENTATIONS, get_augmentation
from evaluators.schema import Criterion, Dimension, TableSpec
from evaluators.tracks import TRACKS, Progress, Track, check_embeddings, no_progress
from evaluators.tracks.amore.metrics import RANK_METRICS, recall_at_k_curve
from evaluators.tracks.amore.pairs import rewrite_pairs
from evaluators.tracks.amore.retrieval import DISTANCES, bidirectional_ranks_many, hnsw_ranks

DIRECTIONS = ("original_to_augmented", "augmented_to_original")
APPROXIMATE = ("hnsw",)
RECALL_KS = np.arange(1, 101)
COUNT_METRICS = ("n_pairs", "n_identical", "n_non_trivial", "n_excluded", "n_truncated")
#: The headline setting: the paper's direction, L2, last layer, pairs whose strings differ.
HEADLINE_SETTING = (
    ("layer", "last"),
    ("distance", "l2"),
    ("direction", "original_to_augmented"),
    ("subset", "non_trivial"),
)


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


def same_layers(layers: dict[str, np.ndarray]) -> dict[str, str]:
    """Map each layer to the first layer (in order) holding exactly the same embeddings.

    A stack's top layer is the headline ``last`` again (the adapters copy it, 1/8 of MiniLM's layers):
    its exact retrieval, 1/8 of the retrieval time, is then done once.

    Examples
    --------
    >>> a, b = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    >>> same_layers({"last": a, "encoder.0": b, "encoder.1": a.copy()})
    {'last': 'last', 'encoder.0': 'encoder.0', 'encoder.1': 'last'}
    """
    firsts: dict[tuple, list[str]] = {}
    out: dict[str, str] = {}
    for label, emb in layers.items():
        key = (emb.shape, emb.dtype.str, hashlib.blake2b(np.ascontiguousarray(emb).data).digest())
        candidates = firsts.setdefault(key, [])
        out[label] = next((c for c in candidates if np.array_equal(layers[c], emb)), label)
        if out[label] == label:
            candidates.append(label)
    return out


def _chosen(plist: list, strings: dict[str, int]) -> tuple[list, np.ndarray, np.ndarray]:
    """Return the pairs scored (identity check passed) and the rows of their two strings."""
    kept = [p for p in plist if p.status != "excluded"]
    q_idx = np.array([strings[p.original] for p in kept], dtype=np.int64)
    g_idx = np.array([strings[p.augmented] for p in kept], dtype=np.int64)
    return kept, q_idx, g_idx


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
    dimensions = (
        Dimension(
            "augmentation",
            "How the SMILES was rewritten (RDKit, seeded per molecule; every rewrite checked to encode the "
            "same molecule).",
            values=("canonical", "explicit_h", "kekule", "ring_renumber", "random_order"),
        ),
        Dimension("layer", "Hidden layer pooled (`last` is the headline; `-` for counts).", numeric=True),
        Dimension(
            "distance",
            "Distance between embeddings (exact, except the approximate FAISS HNSW index).",
            values=("l2", "cosine", "inner_product", "hnsw"),
            labels=(("l2", "L2"), ("inner_product", "inner product"), ("hnsw", "HNSW (approximate)")),
        ),
        Dimension(
            "direction",
            "Query → gallery: the paper's direction first.",
            values=DIRECTIONS,
            labels=(
                ("original_to_augmented", "original → augmented"),
                ("augmented_to_original", "augmented → original"),
            ),
        ),
        Dimension(
            "subset",
            "Pairs scored: those whose rewrite differs from the original (headline), or all (the paper's).",
            values=("non_trivial", "all"),
            labels=(("non_trivial", "non-trivial pairs"), ("all", "all pairs")),
        ),
    )
    metrics = (*RANK_METRICS, "chance_acc_at_1", *COUNT_METRICS, "n_ties")
    headline = (
        Criterion(
            metric="acc_at_1",
            where=HEADLINE_SETTING,
            per=("augmentation",),
            label="Acc@1 on non-trivial pairs (last layer, L2, original → augmented)",
        ),
    )
    tables = (
        TableSpec(
            name="item_ranks",
            file="item_ranks.csv.gz",
            columns=(
                "augmentation",
                "distance",
                "direction",
                "id",
                "status",
                "rank",
                "original",
                "augmented",
            ),
            description=(
                "Per-molecule rank of the true partner in the headline setting (last layer, L2, original → "
                "augmented; the run's artifact holds every distance and direction), with both strings: "
                "what the bootstrap resamples and the failure explorer shows."
            ),
            artifact="ranks.csv.gz",
            where=(("distance", "l2"), ("direction", "original_to_augmented")),
            numeric=("rank",),
        ),
        TableSpec(
            name="recall_at_k",
            file="recall_at_k.csv.gz",
            columns=("augmentation", "layer", "distance", "direction", "subset", "k", "recall"),
            description="Recall@K curves (K = 1…100, last layer), long format (one row per K).",
            artifact="recall_at_k.csv.gz",
            numeric=("k", "recall"),
        ),
    )
    artifacts = ("ranks.csv.gz", "recall_at_k.csv.gz", "ranks_all_layers.npz")

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
            "metrics": list(RANK_METRICS),
            "subsets": ["all", "non_trivial"],
            "recall_ks": [int(RECALL_KS[0]), int(RECALL_KS[-1])],
        }

    def run(  # noqa: D102
        self,
        adapter: Adapter,
        dataset: LoadedDataset,
        *,
        out_dir: Path,
        log: Callable[[str], None],
        progress: Progress = no_progress,
    ) -> dict[str, Any]:
        if not isinstance(adapter, EmbeddingAdapter):
            raise TypeError("track 'amore' needs an adapter with the 'embed' capability")
        self.definition()
        timing: dict[str, float] = {}
        molecules = dataset.molecules

        t0 = time.perf_counter()
        # On every core the job has, before the model runs (evaluators.tracks.amore.pairs).
        pairs = rewrite_pairs(molecules, self.options.seed, progress=progress)
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
        progress("embed", 0, len(strings))
        embedded = adapter.embed(list(strings))
        progress("embed", len(strings), len(strings))
        timing["embed_s"] = time.perf_counter() - t0
        check_embeddings(embedded.layers, len(strings))

        t0 = time.perf_counter()
        self._metrics: list[dict[str, Any]] = []
        self._curves: list[dict[str, Any]] = []
        self._ranks: dict[str, np.ndarray] = {}
        self._ties: list[dict[str, Any]] = []
        counts: dict[str, dict[str, int]] = {}
        excluded: list[dict[str, str]] = []
        csv_rows: list[tuple] = []
        exact = [d for d in self.options.distances if d in DISTANCES]
        twins = same_layers(embedded.layers)
        # The approximate index is built on one core beside the exact ranks of the layers: FAISS works
        # without the GIL, and its single-threaded build and per-query search give the same ranks.
        # Each augmentation's scored pairs and their rows in the embeddings, for both kinds of retrieval.
        chosen = {name: _chosen(plist, strings) for name, plist in pairs.items()}
        with ThreadPoolExecutor(1, thread_name_prefix="amore-hnsw") as approximate:
            hnsw = self._submit_hnsw(approximate, chosen, embedded.layers)
            for number, (name, plist) in enumerate(pairs.items()):
                progress("retrieval", number, len(pairs))
                kept, q_idx, g_idx = chosen[name]
                excluded += [
                    {"id": p.id, "augmentation": name, "reason": p.reason}
                    for p in plist
                    if p.status == "excluded"
                ]
                non_trivial = np.array([p.status == "changed" for p in kept], dtype=bool)
                truncated = embedded.truncated
                counts[name] = {
                    "n_pairs": len(kept),
                    "n_identical": int((~non_trivial).sum()),
                    "n_non_trivial": int(non_trivial.sum()),
                    "n_excluded": len(plist) - len(kept),
                    # Pairs where the model saw only part of either string (the reference cut explicit H at
                    # 128).
                    "n_truncated": 0
                    if truncated is None
                    else int((truncated[q_idx] | truncated[g_idx]).sum()),
                }
                self._metrics += [_row(name, "-", "-", "-", "all", k, v) for k, v in counts[name].items()]
                if len(kept) < 2:
                    log(f"amore: {name}: fewer than 2 valid pairs, no retrieval")
                    continue
                self._metrics.append(_row(name, "-", "-", "-", "all", "chance_acc_at_1", 1.0 / len(kept)))
                ids = [p.id for p in kept]
                ranked_by_layer: dict[str, dict] = {}
                for layer, emb in embedded.layers.items():
                    queries, gallery = emb[q_idx], emb[g_idx]
                    if twins[layer] in ranked_by_layer:  # the same numbers: the same ranks
                        ranked = ranked_by_layer[twins[layer]]
                    else:
                        ranked = {}
                        if exact:
                            ranked = bidirectional_ranks_many(queries, gallery, distances=tuple(exact))
                        ranked_by_layer[layer] = ranked
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
                        # The paper's direction only (its Table 6): an index per direction would double the
                        # cost.
                        zeros = np.zeros(len(kept), dtype=np.int64)
                        self._score(
                            name,
                            layer,
                            "hnsw",
                            DIRECTIONS[0],
                            hnsw[name].result(),
                            zeros,
                            non_trivial,
                            ids,
                        )
                for key, ranks in self._ranks.items():
                    aug, layer, distance, direction = key.split("|")
                    if aug == name and layer == "last":
                        csv_rows += [
                            (aug, distance, direction, p.id, p.status, float(r), p.original, p.augmented)
                            for p, r in zip(kept, ranks, strict=True)
                        ]
        progress("retrieval", len(pairs), len(pairs))
        timing["retrieval_s"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        with gzip.open(out_dir / "ranks.csv.gz", "wt", newline="", compresslevel=5) as handle:
            writer = csv.writer(handle)
            writer.writerow(self.tables[0].columns)
            writer.writerows(csv_rows)
        with gzip.open(out_dir / "recall_at_k.csv.gz", "wt", newline="", compresslevel=5) as handle:
            writer = csv.writer(handle)
            writer.writerow(self.tables[1].columns)
            for curve in self._curves:
                dims = [curve[d] for d in ("augmentation", "layer", "distance", "direction", "subset")]
                writer.writerows([*dims, int(k), v] for k, v in zip(RECALL_KS, curve["recall"], strict=True))
        np.savez_compressed(
            out_dir / "ranks_all_layers.npz", **{k: v.astype(np.float32) for k, v in self._ranks.items()}
        )
        timing["artifacts_s"] = time.perf_counter() - t0
        n = len(molecules)
        return {
            "rows": self._metrics,
            "counts": {
                "per_augmentation": counts,
                "n_truncated": embedded.n_truncated,
                "n_unique_strings": len(strings),
                "n_molecules": n,
                "layers": list(embedded.layers),
            },
            "details": {
                "chance_level": {"acc_at_1": 1.0 / n if n else None},
                "excluded_pairs": excluded,
                "tied_pairs": self._ties,
                "augmentations": {
                    name: asdict(get_augmentation(name, self.options.seed).description) for name in pairs
                },
                "examples": {name: [p.augmented for p in plist[:3]] for name, plist in pairs.items()},
            },
            "timing": timing,
            "artifacts": ["ranks.csv.gz", "recall_at_k.csv.gz", "ranks_all_layers.npz"],
        }

    def _submit_hnsw(
        self, pool: ThreadPoolExecutor, chosen: dict[str, tuple], layers: dict[str, np.ndarray]
    ) -> dict[str, Future]:
        """Queue the approximate index of every augmentation with two pairs or more (last layer)."""
        if "hnsw" not in self.options.distances:
            return {}
        last = layers["last"]
        return {
            name: pool.submit(hnsw_ranks, last[q_idx], last[g_idx], search_threads=1)
            for name, (kept, q_idx, g_idx) in chosen.items()
            if len(kept) >= 2
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
            for metric, fn in RANK_METRICS.items():
                self._metrics.append(_row(aug, layer, distance, direction, subset, metric, fn(r)))
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
