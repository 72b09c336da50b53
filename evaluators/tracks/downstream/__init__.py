"""``downstream``: does a property model on the embeddings survive a rewritten test set? (SPEC §4 T2).

AMORE's second experiment (``shared/papers/amore-smiles-augmentation-robustness.txt``, MoleculeNet section)
fits a model on embeddings of the original training molecules and tests it on augmented test sets; a
robust encoder loses little. The paper fine-tunes whole models; the CPU-feasible default here is a
**frozen-embedding probe** (:mod:`evaluators.tracks.downstream.probes`), which the site says.

The work is split across the sandbox so that the labels never enter the container:

- the host writes a label-free view of the set (:meth:`DownstreamTrack.container_view`, built by
  :func:`evaluators.tracks.downstream.view.build_view`: ``id, split, smiles``): every molecule in one
  notation (RDKit canonical SMILES without stereo marks), opaque ids, a seeded order, and MoleculeNet's
  recommended split — scaffold for BBBP and BACE, random for the regression sets and ClinTox — 80 % train
  / 20 % test. A view in which the writing or the bookkeeping still predicts the label
  (:mod:`evaluators.datasets.leaks`) is refused: the set cannot be ranked;
- inside the container, :meth:`DownstreamTrack.run` rewrites every test molecule with four augmentations
  of T1 (explicit H, Kekulé, ring renumbering, random atom order; the canonical rewrite of a canonical
  string is the string itself), seeded per molecule and identity-checked, and embeds every unique string
  once — train originals, test originals, test variants — writing ``embeddings.npy`` (the last layer,
  float32) and ``strings.csv.gz`` (which row is which molecule and variant);
- on the host, :meth:`DownstreamTrack.score` fits ridge / logistic regression on the training embeddings
  (regularisation by cross-validation on the training molecules only), predicts the original test set and
  each rewritten one with that same probe, and scores them: RMSE (regression) or ROC-AUC (classification),
  the degradation against the original test set (absolute and relative, positive = worse), the worst
  rewrite, paired bootstrap intervals over test molecules, and the score of predicting the training mean
  (regression) — the row every model must beat.

A test molecule whose rewrite failed the identity check keeps its original string in that variant (counted
as ``n_excluded``): every variant scores the same molecules, so a model that maps every rewrite to the same
embedding (the Morgan fingerprint reference) has exactly zero degradation.

Ranked (version 2): the score on the original test set and the score on the worst rewrite. Version 1
ranked the worst-case *degradation*, which a model that ignores its input wins: a constant embedder cannot
degrade (0, the best value, on every set). Degradation is reported beside the scores, not ranked.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from evaluators.adapters import Adapter, EmbeddingAdapter
from evaluators.asking import cell, write_table
from evaluators.datasets import LoadedDataset
from evaluators.metrics import register_metric
from evaluators.notations.augmentations import AUGMENTATIONS, get_augmentation
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import (
    Criterion,
    Dimension,
    MetricSpec,
    TableSpec,
    TrackOptions,
    TrackResult,
    parse_rows,
)
from evaluators.tracks import TRACKS, Progress, Track, check_embeddings, no_progress
from evaluators.tracks.downstream.scoring import STRING_COLUMNS, score_probe
from evaluators.tracks.downstream.view import SPLIT_METHODS, ViewRow, build_view, leak_report

__all__ = [
    "DOWNSTREAM_TASKS",
    "DownstreamTrack",
    "REWRITES",
    "SPLIT_FRACTIONS",
    "SPLIT_SHA256",
    "split_sha256",
]

#: Data set → (record field holding the label, task kind). MoleculeNet's recommended metric per kind:
#: RMSE for regression, ROC-AUC for classification.
DOWNSTREAM_TASKS: dict[str, tuple[str, str]] = {
    "bbbp": ("label", "classification"),
    "bace": ("label", "classification"),
    "clintox": ("label", "classification"),
    "esol": ("label", "regression"),
    "lipophilicity": ("label", "regression"),
    "freesolv": ("value", "regression"),
    "solubility": ("log_solubility", "regression"),
}
#: Train / validation / test shares of the split; no validation split: the probe's regularisation
#: is chosen by cross-validation within train, and a larger test set gives tighter intervals.
SPLIT_FRACTIONS = (0.8, 0.0, 0.2)
#: sha256 of each whole set's split (:func:`split_sha256`) under seed 0: the fixed splits of the board.
SPLIT_SHA256: dict[str, str] = {
    "bbbp": "42b65c2895035b52fb7f0ae818d50f8433e3d9f44007d9912c05eaaad800968c",
    "bace": "be6e5171cb2c6230f083f7e7b81c9d0a82bce6a8008b85a39c2e2700cef0f87b",
    "clintox": "aaa86dfa8e75a9686b89aeab77727714269497a6417d37aee8ec9360e159709c",
    "esol": "c78d3534a80ed2886ea4a88410147a28450c2f3d1d568049767af9a82b9051eb",
    "lipophilicity": "ac32903a7de5f21404d24315f88a2b153a6db44a539b9713ec3259d1db6f1c2e",
    "freesolv": "ae2a1a3badc2183717eab4abc972f1f904119aef7fbef36805db7304924ff898",
    "solubility": "4fb5bddbbd649178866ce693937c8cf02d4e6310b83b122ca151e1a1ffe7cf8c",
}
ORIGINAL = "original"
WORST = "worst"
#: The augmentations applied to the test set: every T1 augmentation but ``canonical`` (the originals are
#: canonical already, so that rewrite would change no string).
REWRITES: tuple[str, ...] = tuple(n for n in AUGMENTATIONS.names() if n != "canonical")
#: Version 1's canonical rewrite: declared so that the record's version-1 rows still parse; never run now.
LEGACY_CANONICAL = "canonical"
EMBEDDINGS = "embeddings.npy"
STRINGS = "strings.csv.gz"
PREDICTIONS = "downstream_predictions.csv.gz"
SPLIT = "downstream_split.csv.gz"
N_BOOT = 1000

_NEW = (
    MetricSpec("roc_auc", True, "ROC-AUC", "Area under the ROC curve of the probe's positive-class "
               "probability on the test molecules.", 0.0, 1.0),
    MetricSpec("score_low", True, "score 2.5 %", "Lower end of the 95 % bootstrap interval of the score "
               "(RMSE or ROC-AUC) over test molecules."),
    MetricSpec("score_high", True, "score 97.5 %", "Upper end of the 95 % bootstrap interval of the score."),
    MetricSpec("degradation", False, "degradation", "Score lost on the rewritten test set against the "
               "original one, in the score's units (RMSE gained, or ROC-AUC lost); > 0 = worse, 0 = robust."),
    MetricSpec("degradation_low", False, "degradation 2.5 %", "Lower end of the paired 95 % bootstrap "
               "interval of the degradation (the same test molecules drawn for both sets)."),
    MetricSpec("degradation_high", False, "degradation 97.5 %", "Upper end of the paired 95 % bootstrap "
               "interval of the degradation."),
    MetricSpec("relative_degradation", False, "relative degradation", "Degradation over the original "
               "score."),
    MetricSpec("baseline_rmse", False, "RMSE of the training mean", "RMSE on the test molecules of "
               "predicting the training molecules' mean label for every one: the score a model that reads "
               "nothing gets."),
    MetricSpec("n_train", True, "n train", "Training molecules the probe was fitted on.", 0.0,
               integral=True),
    MetricSpec("n_test", True, "n test", "Test molecules scored (the same in every variant).", 0.0,
               integral=True),
    MetricSpec("n_changed", True, "n rewritten", "Test molecules whose rewrite differs from the original "
               "string.", 0.0, integral=True),
)  # fmt: skip
for _spec in _NEW:
    register_metric(_spec)


def split_sha256(ids: list[str], splits: list[str]) -> str:
    r"""Hash of a split: sha256 over ``"<record id>\t<split>\n"`` lines in data-set (file) order.

    Examples
    --------
    >>> split_sha256(["0", "1"], ["train", "test"])[:12]
    'b58f875fcbf8'
    """
    blob = "".join(f"{i}\t{s}\n" for i, s in zip(ids, splits, strict=True)).encode()
    return hashlib.sha256(blob).hexdigest()


def _row(variant: str, metric: str, value: float) -> dict[str, Any]:
    return {"variant": variant, "metric": metric, "value": float(value)}


@TRACKS.register("downstream")
class DownstreamTrack(Track):
    """Frozen-embedding probes scored on the original test set and on five rewritten ones (AMORE §4)."""

    name = "downstream"
    version = 2
    capability = "embed"
    main_metric = "roc_auc"
    description = (
        "A linear probe fitted on the embeddings of the original training molecules, scored on the "
        "original test set and on test sets rewritten five ways (downstream robustness, AMORE)."
    )
    citation = (
        "Ganeeva, V. et al. Chemical Language Models Have Problems with Chemistry: A Case Study on "
        "Molecule Captioning Task. ICLR 2024 Tiny Papers (MoleculeNet experiment)."
    )
    withholds_labels: ClassVar[bool] = True
    view_columns: ClassVar[tuple[str, ...]] = ("id", "split", "smiles")
    dimensions = (
        Dimension(
            "variant",
            "The test set scored: the original strings (canonical SMILES), one rewrite of every test "
            "molecule (the T1 augmentations), or the worst rewrite. ``canonical`` is a rewrite of version 1 "
            "only (its originals were the files' own strings): the record keeps those results.",
            values=(ORIGINAL, *REWRITES, LEGACY_CANONICAL, WORST),
            labels=((ORIGINAL, "original"), (WORST, "worst rewrite")),
        ),
    )
    # rmse: T4's declaration; n_excluded: T1's (here: rewrites that failed the check keep the original).
    metrics = ("rmse", *(s.name for s in _NEW), "n_excluded")
    headline = (
        Criterion(metric="rmse", where=(("variant", ORIGINAL),), per=(),
                  label="RMSE on the original test set"),
        Criterion(metric="roc_auc", where=(("variant", ORIGINAL),), per=(),
                  label="ROC-AUC on the original test set"),
        Criterion(metric="rmse", where=(("variant", WORST),), per=("variant",),
                  label="RMSE on the worst rewrite of the test set"),
        Criterion(metric="roc_auc", where=(("variant", WORST),), per=("variant",),
                  label="ROC-AUC on the worst rewrite of the test set"),
    )  # fmt: skip
    tables = (
        TableSpec(
            name="predictions",
            file=PREDICTIONS,
            columns=("variant", "id", "status", "string", "label", "prediction"),
            description="Per test molecule and test set: the string the model embedded, the label and the "
            "probe's prediction (regression) or positive-class probability (classification).",
            artifact=PREDICTIONS,
            numeric=("label", "prediction"),
        ),
        TableSpec(
            name="split",
            file=SPLIT,
            columns=("id", "smiles", "split"),
            description="The split (scaffold or random, per set): every molecule of the set with its "
            "record id, the string the container saw and its split (train / test).",
            artifact=SPLIT,
        ),
    )
    artifacts = (EMBEDDINGS, STRINGS)

    @classmethod
    def view_rows(cls, dataset: str, records: list[dict[str, str]], options: TrackOptions) -> list[ViewRow]:
        """Return the view with its records (host side), built by :func:`.view.build_view`.

        Raises
        ------
        ValueError
            If the whole set's split under the default seed is not the pinned one (:data:`SPLIT_SHA256`):
            RDKit changed, and results would no longer be comparable with the board's.
        """
        from evaluators.datasets import DATASETS

        spec = DATASETS.get(dataset)
        version = ",".join(f.sha256 or "" for f in spec.files) if spec is not None else ""
        rows = build_view(dataset, version, records, fractions=SPLIT_FRACTIONS, seed=options.seed)
        pinned = SPLIT_SHA256.get(dataset)
        if pinned is not None and options.limit is None and options.seed == 0:
            split_of = {r.record["id"]: r.split for r in rows}
            actual = split_sha256([r["id"] for r in records], [split_of[r["id"]] for r in records])
            if actual != pinned:
                raise ValueError(
                    f"data set {dataset!r}: the {SPLIT_METHODS.get(dataset, 'scaffold')} split hashes to "
                    f"{actual}, not the pinned {pinned}; RDKit's canonical SMILES or scaffolds changed (new "
                    "RDKit?) — pin the new split deliberately"
                )
        return rows

    @classmethod
    def container_view(
        cls,
        dataset: str,
        records: list[dict[str, str]],
        options: TrackOptions,
        *,
        chat: bool = False,
        images: bool = False,
    ) -> list[dict[str, str]] | None:
        """Return ``id, split, smiles`` per record: one notation, opaque ids, a seeded order, no shortcut.

        ``chat`` and ``images`` are a generative track's concern
        (:meth:`evaluators.tracks.Track.container_view`): ignored.

        Raises
        ------
        evaluators.datasets.leaks.ShortcutError
            If the view's writing or bookkeeping predicts the label (a :class:`ValueError`).
        ValueError
            If the pinned split changed (:meth:`view_rows`).
        """
        from evaluators.datasets.leaks import check_no_shortcut

        del chat, images
        rows = cls.view_rows(dataset, records, options)
        if dataset in DOWNSTREAM_TASKS:
            field, kind = DOWNSTREAM_TASKS[dataset]
            check_no_shortcut(dataset, leak_report(rows, field, kind))
        return [r.shown() for r in rows]

    def definition(self) -> dict[str, Any]:  # noqa: D102
        from evaluators.tracks.downstream.probes import ALPHAS, CS, N_FOLDS

        return {
            "augmentations": list(REWRITES),
            "notation": "rdkit canonical smiles, no stereo",
            "split": {"method": dict(SPLIT_METHODS), "fractions": list(SPLIT_FRACTIONS)},
            "ids": "sha256(set, file hashes, row)[:16], seeded order",
            "probe": {"regression": "ridge", "classification": "logistic l2", "alphas": list(ALPHAS),
                      "Cs": list(CS), "standardised": True, "layer": "last",
                      "cv": {"regression": "leave-one-out", "classification": f"{N_FOLDS}-fold stratified"}},
            "tasks": {k: list(v) for k, v in DOWNSTREAM_TASKS.items()},
            "bootstrap": {"n_boot": N_BOOT, "level": 0.95},
        }  # fmt: skip

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
            raise TypeError("track 'downstream' needs an adapter with the 'embed' capability")
        timing: dict[str, float] = {}
        split_of = {r["id"]: r.get("split", "") for r in dataset.records}
        molecules = [m for m in dataset.molecules if split_of.get(m.id) in ("train", "test")]
        test = [m for m in molecules if split_of[m.id] == "test"]
        t0 = time.perf_counter()
        strings: dict[str, int] = {}
        index: list[tuple[str, str, str, str, str]] = []  # id, split, variant, status, string
        for m in molecules:
            strings.setdefault(m.smiles, len(strings))
            index.append((m.id, split_of[m.id], ORIGINAL, "original", m.smiles))
        names = REWRITES
        counts: dict[str, dict[str, int]] = {}
        for number, name in enumerate(names):
            progress("augment", number, len(names))
            augmentation = get_augmentation(name, self.options.seed)
            tally = {"changed": 0, "identical": 0, "excluded": 0}
            for m in test:
                pair = augmentation.apply(m.id, m.smiles, canonical_smiles(m.smiles))
                tally[pair.status] += 1
                # A failed rewrite keeps the original string: every variant scores the same molecules.
                text = pair.augmented if pair.status == "changed" else m.smiles
                strings.setdefault(text, len(strings))
                index.append((m.id, "test", name, pair.status, text))
            counts[name] = tally
        progress("augment", len(names), len(names))
        timing["augment_s"] = time.perf_counter() - t0
        log(f"downstream: embedding {len(strings)} unique strings ({len(molecules) - len(test)} train, "
            f"{len(test)} test molecules × {1 + len(names)} test sets)")  # fmt: skip
        t0 = time.perf_counter()
        progress("embed", 0, len(strings))
        embedded = adapter.embed(list(strings))
        progress("embed", len(strings), len(strings))
        timing["embed_s"] = time.perf_counter() - t0
        check_embeddings(embedded.layers, len(strings))
        t0 = time.perf_counter()
        with (out_dir / EMBEDDINGS).open("wb") as handle:
            last = np.ascontiguousarray(embedded.layers["last"], dtype=np.float32)
            np.save(handle, last, allow_pickle=False)
        with gzip.open(out_dir / STRINGS, "wt", newline="", compresslevel=5) as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(STRING_COLUMNS)
            writer.writerows((i, s, v, st, strings[text], text) for i, s, v, st, text in index)
        timing["artifacts_s"] = time.perf_counter() - t0
        rows = [_row(ORIGINAL, "n_train", len(molecules) - len(test)), _row(ORIGINAL, "n_test", len(test))]
        for name, tally in counts.items():
            rows += [_row(name, "n_changed", tally["changed"]), _row(name, "n_excluded", tally["excluded"])]
        return {
            "rows": rows,
            "counts": {"n_unique_strings": len(strings), "n_truncated": embedded.n_truncated,
                       "per_augmentation": counts, "embedding_dim": int(embedded.layers["last"].shape[1])},
            "details": {"examples": {v: [t for _, _, vv, st, t in index if vv == v and st == "changed"][:3]
                                     for v in names}},
            "timing": timing,
            "artifacts": [EMBEDDINGS, STRINGS],
        }  # fmt: skip

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Fit the probe on the training embeddings and score every test set (module docstring)."""
        from evaluators.datasets import load_records

        if result.dataset not in DOWNSTREAM_TASKS:
            raise ValueError(f"track 'downstream' has no task for data set {result.dataset!r}")
        field, kind = DOWNSTREAM_TASKS[result.dataset]
        records = load_records(result.dataset, data_dir, limit=self.options.limit)
        view = self.view_rows(result.dataset, records, self.options)
        scored = score_probe(
            records=[r.record for r in view], view=[r.shown() for r in view], label_field=field, kind=kind,
            out_dir=out_dir, variants=(ORIGINAL, *REWRITES), seed=self.options.seed, n_boot=N_BOOT,
        )  # fmt: skip
        write_table(out_dir / PREDICTIONS, self.tables[0].columns,
                    ((p["variant"], p["id"], p["status"], cell(p["string"]), repr(p["label"]),
                      repr(p["prediction"])) for p in scored.predictions))  # fmt: skip
        write_table(out_dir / SPLIT, self.tables[1].columns,
                    ((r.record["id"], cell(r.smiles), r.split) for r in view))  # fmt: skip
        kept = [r.to_json() for r in result.rows if r.metric in ("n_changed", "n_excluded")]
        rows = parse_rows(kept + scored.rows, dimensions=self.dimensions, metrics=self.metric_specs())
        return replace(
            result,
            rows=rows,
            details={**result.details, "kind": kind, "label": field, **scored.details},
            artifacts=(EMBEDDINGS, STRINGS, PREDICTIONS, SPLIT),
        )
