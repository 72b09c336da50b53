"""The AMORE track's site extension: layer-wise and Recall@K figures, the failure explorer, its methodology.

Registered as ``EXTENSIONS["amore"]``. Beyond the generic track and model pages, AMORE shows per data
set the layer-wise Acc@1 and the Recall@K curves (its :mod:`plots <leaderboard.site.extensions.amore.plots>`),
on a model's page its own curves and the molecules it misses most
(:class:`leaderboard.site.pages.explorer.Explorer`, from the
``item_ranks`` table, which carries the strings the model saw), and resamples the per-molecule ranks of
``item_ranks`` for the rank intervals (:func:`leaderboard.ranking.uncertainty.item_values_from_ranks`).

References
----------
.. [1] Ganeeva, V., Khrabrov, K., Kadurin, A. and Tutubalina, E. (2024). "Measuring chemical LLM
   robustness to molecular representations: a SMILES variation-based framework" (AMORE).
   Journal of Cheminformatics.
"""

from __future__ import annotations

import pandas as pd

from evaluators.notations.augmentations import AUGMENTATIONS
from leaderboard.markdown import code, table
from leaderboard.ranking.uncertainty import item_values_from_ranks
from leaderboard.site.blocks import Figures
from leaderboard.site.extensions import EXTENSIONS, Extension
from leaderboard.site.extensions.amore.captioning_link import DATASET as LINKED
from leaderboard.site.extensions.amore.captioning_link import link_lines
from leaderboard.site.extensions.amore.finding import finding_lines
from leaderboard.site.extensions.amore.plots import (
    AUGMENTATION_ORDER,
    SETTING,
    layerwise_figure,
    n_pairs_by_augmentation,
    recall_figure,
)
from leaderboard.site.format import select
from leaderboard.site.molecule_ids import molecule_names
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.sitedata import SiteData, split_by_submission
from leaderboard.tracks import parse_layer

TRACK = "amore"
#: The per-item tables of the track (``TableSpec.name``).
RANKS, CURVES = "item_ranks", "recall_at_k"

_LAYERWISE_CAPTION = (
    "Acc@1 on non-trivial pairs (L2 distance, original → augmented) at every layer (x: layer "
    "index, 0 = embedding output), one panel per augmentation; a model with a single embedding "
    "is a dashed line marked (single layer)."
)
_RECALL_CAPTION = (
    "Recall@K (share of molecules whose augmented SMILES is among the K nearest; K = 1 … 100, log "
    "scale) on non-trivial pairs, last layer, L2 distance, original → augmented; dotted: chance K/N."
)


def _split(data: SiteData, name: str, **equal: str) -> dict[tuple[str, str], pd.DataFrame]:
    """Split the track's rows with ``equal`` per (submission, dataset), once per generation."""
    key = f"amore/{name}"
    if key not in data.cache:
        rows = select(data.track_results(TRACK), **equal)
        data.cache[key] = {
            (str(s), str(d)): g
            for (s, d), g in rows.groupby(["submission", "dataset"], sort=True, observed=True)
        }
    return data.cache[key]


def _acc_rows(data: SiteData) -> dict[tuple[str, str], pd.DataFrame]:
    """Return the Acc@1 rows of the plotted setting (every layer), per (submission, dataset)."""
    return _split(data, "acc", metric="acc_at_1", **SETTING)


def _pair_counts(data: SiteData) -> dict[tuple[str, str], pd.DataFrame]:
    """Return the ``n_pairs`` rows (gallery size N of the chance line), per (submission, dataset)."""
    return _split(data, "n_pairs", metric="n_pairs", subset="all")


def _concat(frames: list[pd.DataFrame], like: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(frames) if frames else like.iloc[0:0]


def _curves(data: SiteData) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Return the plotted Recall@K curves (last layer, plotted setting) and their split per model."""
    if "amore/curves" not in data.cache:
        curves = data.tables.get(CURVES, pd.DataFrame())
        if not curves.empty:
            curves = select(curves, layer="last", **SETTING)
            curves = curves.assign(
                **{c: curves[c].astype(str) for c in curves.columns if c not in ("k", "recall")}
            )
        data.cache["amore/curves"] = (curves, split_by_submission(curves))
    return data.cache["amore/curves"]


def _has_layers(acc: pd.DataFrame) -> bool:
    """Whether any of these Acc@1 rows is layer-wise (``encoder.K`` …), not only ``last``."""
    return any(parse_layer(str(layer)) is not None for layer in acc["layer"].unique())


def track_sections(data: SiteData, dataset: str, figures: Figures) -> list[str]:
    """Return the layer-wise Acc@1 and Recall@K figures of one data set."""
    empty = data.track_results(TRACK)
    acc = _concat([g for (_, d), g in _acc_rows(data).items() if d == dataset], empty)
    counts = _concat([g for (_, d), g in _pair_counts(data).items() if d == dataset], empty)
    names = {s: data.name(s) for s in data.ids}
    out = ["### Layer-wise Acc@1", ""]
    if _has_layers(acc):
        fig = layerwise_figure(acc, dataset, names=names)
        out += figures.block(fig, "amore", dataset, "layers", caption=_LAYERWISE_CAPTION)
    else:
        out += [
            "No model with per-layer embeddings has results on this dataset yet (the tables "
            "use the last layer).",
            "",
        ]
    out += ["### Recall@K", ""]
    plotted, _ = _curves(data)
    recall = (
        recall_figure(plotted, dataset, n_pairs=n_pairs_by_augmentation(counts, dataset), names=names)
        if not plotted.empty
        else None
    )
    if recall is not None:
        out += figures.block(recall, "amore", dataset, "recall", caption=_RECALL_CAPTION)
    else:
        out += ["No Recall@K curves exported for this dataset yet.", ""]
    return out


def submission_sections(
    data: SiteData, sub_id: str, dataset: str, figures: Figures, explorer: Explorer
) -> list[str]:
    """One model's layer-wise curve, Recall@K curves and failure explorer on one data set."""
    empty = data.track_results(TRACK).iloc[0:0]
    acc = _acc_rows(data).get((sub_id, dataset), empty)
    out: list[str] = []
    if _has_layers(acc):
        out += ["#### Acc@1 across layers", ""]
        out += figures.block(
            layerwise_figure(acc, dataset, submission=sub_id),
            "sub",
            sub_id,
            dataset,
            "layers",
            caption="Acc@1 on non-trivial pairs (L2, original → augmented) per layer, one line per "
            "augmentation.",
        )
    elif not acc.empty:
        out += [
            "Only the last layer is reported for this model (a single embedding, or a run without "
            "per-layer hidden states), so there is no layer-wise curve.",
            "",
        ]
    _, by_sub = _curves(data)
    curves = by_sub.get(sub_id)
    counts = _pair_counts(data).get((sub_id, dataset), empty)
    n_pairs = n_pairs_by_augmentation(counts, dataset, submission=sub_id)
    recall = (
        recall_figure(curves, dataset, submission=sub_id, n_pairs=n_pairs) if curves is not None else None
    )
    if recall is not None:
        out += ["#### Recall@K", ""]
        out += figures.block(
            recall,
            "sub",
            sub_id,
            dataset,
            "recall",
            caption="Recall@K on non-trivial pairs (last layer, L2, original → augmented; K log scale), "
            "one line per augmentation; dotted: chance K/N.",
        )
    if dataset == LINKED:
        out += link_lines(data, sub_id)
    items = data.tables.get(RANKS)
    if items is not None and not items.empty:
        out += explorer.section(
            items,
            (sub_id, TRACK, dataset),
            table_name=RANKS,
            variant="augmentation",
            setting="last layer, L2, original → augmented",
            names=molecule_names(data, dataset),
        )
    return out


def track_summary(data: SiteData, figures: Figures) -> list[str]:
    """Return the paper's claims checked on the board, once, before the sets.

    The published models against the paper (:mod:`.finding`), and whether AMORE predicts captioning
    (:mod:`.captioning_link`).
    """
    return [*finding_lines(data, AUGMENTATION_ORDER), *link_lines(data)]


def item_values(data: SiteData) -> pd.DataFrame | None:
    """Per-molecule Acc@1 values of the headline criteria, from the ``item_ranks`` table."""
    items = data.tables.get(RANKS)
    if items is None or items.empty:
        return None
    return item_values_from_ranks(items.loc[(items["track"] == TRACK).to_numpy()])


def methodology() -> list[str]:
    """AMORE's retrieval task, its metrics' formulas, the augmentations and the failure explorer."""
    return [
        "AMORE [A] asks whether a model's embedding of a molecule stays closest to the "
        "embedding of the *same* molecule written differently. For N molecules with original "
        "SMILES x₁ … x_N and augmented SMILES x′₁ … x′_N, every string is embedded once (hidden "
        "states of every layer, mean-pooled over the attention mask by default) and, per layer "
        "and distance d (L2, cosine, …), the original x_i is the query and all augmented x′_j "
        "form the gallery. The rank of the true partner counts ties explicitly:",
        "",
        "```text",
        "rank_i = 1 + #{ j : d(x_i, x'_j) < d(x_i, x'_i) } + ½ · #{ j ≠ i : d(x_i, x'_j) = d(x_i, x'_i) }",
        "```",
        "",
        table(
            ["Metric", "Formula", "Meaning"],
            [
                [
                    "Acc@1 (`acc_at_1`)",
                    "`(1/N) · Σ_i [rank_i ≤ 1]`",
                    "Share of molecules whose augmented string is the nearest neighbour of the original "
                    "(a tie "
                    "at rank 1.5 is a miss). The headline metric; chance level 1/N.",
                ],
                ["Acc@5 (`acc_at_5`)", "`(1/N) · Σ_i [rank_i ≤ 5]`", "Share retrieved among the 5 nearest."],
                ["MRR (`mrr`)", "`(1/N) · Σ_i 1 / rank_i`", "Mean reciprocal rank, in (0, 1]."],
                [
                    "Recall@K",
                    "`(1/N) · Σ_i [rank_i ≤ K]`, K = 1 … 100",
                    "The curve of Acc@K over K; chance K/N.",
                ],
                [
                    "Pair counts",
                    "`n_pairs`, `n_identical`, `n_non_trivial`, `n_excluded`",
                    "Pairs scored, pairs whose augmented string equals the original, the others, and "
                    "pairs left "
                    "out because the augmentation failed its identity check.",
                ],
            ],
        ),  # fmt: skip
        "",
        "Distances are exact (dense matrix products computed in blocks), not an approximate "
        "search, except the `hnsw` rows (an HNSW index, reported for comparison). The reverse "
        "direction (augmented query, original gallery) is computed and stored too.",
        "",
        "**All pairs vs non-trivial pairs.** Some augmentations leave a string unchanged "
        "(augmented = original); such pairs are retrieved trivially. Every metric is reported on "
        "*all pairs* (comparable with the paper) and on *non-trivial pairs* (only the pairs whose "
        "augmented string differs from the original); the leaderboard headline uses non-trivial "
        "pairs. Every augmented string must parse and encode the same molecule as the original (same "
        "canonical isomeric SMILES); pairs that fail this check are excluded and counted.",
        "",
        'Augmentations are applied per molecule with RDKit, seeded per molecule (`random.Random(f"{seed}:'
        '{name}:{id}")`, seed 0) and recorded with the results:',
        "",
        table(
            ["Augmentation", "What it does"],
            [[code(a), AUGMENTATIONS.get(a).summary] for a in AUGMENTATION_ORDER],
        ),
        "",
        "**Failure explorer.** Each model page lists the molecules the model misses most (non-trivial "
        "pairs whose true partner is not ranked first, most augmentations first) with the rank it gave "
        "on each augmentation, and draws the worst ones in 2D with RDKit from the original string and "
        "from each missed augmented string. The strings are the ones the model saw, written by the run "
        "into its per-molecule table; a table exported before it carried them shows ids and ranks only.",
        "",
        "[A] V. Ganeeva, K. Khrabrov, A. Kadurin, E. Tutubalina. *Measuring Chemical LLM robustness "
        "to molecular representations: a SMILES variation-based framework* (AMORE). Journal of "
        "Cheminformatics, 2024.",
        "",
    ]


EXTENSIONS.register(TRACK)(
    Extension(
        track_summary=track_summary,
        track_sections=track_sections,
        submission_sections=submission_sections,
        item_values=item_values,
        methodology=methodology,
    )
)
