"""The track pages (``tracks/index.md`` and ``tracks/<track>.md``), generated from declarations alone.

Every registered track gets a complete page from what its class declares (:class:`evaluators.tracks.Track`):
per data set, its headline table (models × criteria), the ranking per criterion, then for each metric a
table over each of its dimensions (the other dimensions fixed at the headline setting; values in the
order :func:`leaderboard.tracks.ordered` gives, so ``encoder.10`` follows ``encoder.2``), and the counts.
Labels come from the registries (:class:`~evaluators.schema.Dimension` labels, metric labels). A track's
site extension (:mod:`leaderboard.site.extensions`) may add a section across its data sets, before them,
and sections per data set (figures …).
Values from result rows are escaped with :mod:`leaderboard.markdown`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from evaluators.datasets import DATASETS, DEFAULT_DATASETS
from evaluators.schema import Dimension
from leaderboard.markdown import NO_VALUE, cell, esc, link, table
from leaderboard.site.blocks import Figures, fold, seen_mark, split_figure
from leaderboard.site.extensions import extension
from leaderboard.site.format import fmt, fmt_range, metric_label, value_label
from leaderboard.site.grading import grading_lines
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import metric, ordered, track, track_names, value_sort_key

#: The tables of every metric by dimension list at most this many models, the best-ranked first: they
#: have a row per model and setting, so a board of hundreds of models made pages of tens of thousands of
#: rows (a 15 MB page at 300 models, most of the site's build). Every number stays in results.csv.gz.
DIMENSION_TABLE_MODELS = 50

__all__ = [
    "coverage_note",
    "dataset_note",
    "main_first",
    "per_dimensions",
    "track_page",
    "tracks_index_page",
    "where_of",
]


def per_dimensions(name: str) -> tuple[str, ...]:
    """Return the dimensions a track's first headline family varies across criteria (``augmentation``)."""
    cls = track(name)
    return tuple(cls.headline[0].per) if cls.headline else ()


def where_of(name: str) -> dict[str, str]:
    """Return the fixed setting of a track's first headline family (``{"layer": "last", …}``)."""
    cls = track(name)
    return dict(cls.headline[0].where) if cls.headline else {}


def dataset_note(dataset: str) -> str:
    """Return the registered description of a data set (escaped), or an empty string."""
    return esc(DATASETS.get(dataset).description) if dataset in DATASETS else ""


def coverage_note(data: SiteData, name: str, dataset: str) -> list[str]:
    """Flag a data set not every ranked model has: ``qm9-isomers: 5 of 6 models`` and why the others lack it.

    Empty when every ranked model has a headline value on the track's criteria of ``dataset``.
    """
    have, lack = data.coverage(name, dataset)
    if not lack:
        return []
    why = ", ".join(
        f"{link(data.name(s), f'../submissions/{s}.md')} ({esc(data.missing_reason(s, name, dataset))})"
        for s in lack
    )
    title = f"Partial coverage — {esc(dataset)}: {len(have)} of {len(have) + len(lack)} models"
    return [
        f'!!! warning "{title.replace(chr(34), "&quot;")}"',
        f"    No headline result for {why}: missing here, ignored pairwise in the ranking, never "
        "scored zero.",
        "",
    ]


def tracks_index_page(data: SiteData) -> str:
    """Markdown of the tracks index: every registered track with its description and citation."""
    out = [
        "# Tracks",
        "",
        "A track is one way of asking whether a model recognises a molecule written differently. Each "
        "track declares its dimensions, metrics and headline criteria; the [overview](../index.md) ranks "
        "the models over every track's headline criteria, each track weighing 1.",
        "",
    ]
    rows = []
    for name in track_names():
        cls = track(name)
        n_models = data.track_results(name)["submission"].nunique()
        rows.append(
            [
                link(name, f"{name}.md"),
                esc(cls.description) or NO_VALUE,
                f"`{cls.capability}`",
                str(n_models),
                esc(cls.citation) or NO_VALUE,
            ]
        )
    out += [table(["Track", "What it measures", "Needs", "Models", "Reference"], rows), ""]
    return "\n".join(out)


def track_page(data: SiteData, name: str, figures: Figures) -> str:
    """Markdown of one track's page."""
    cls = track(name)
    out = [f"# {esc(name)}", ""]
    if cls.description:
        out += [esc(cls.description), ""]
    if cls.citation:
        out += [f"Reference: {esc(cls.citation)}", ""]
    out += [
        f"Models need the capability `{cls.capability}`. Definitions of its dimensions and metrics: "
        f"[methodology](../methodology.md#{name}); every number: [downloads](../downloads.md).",
        "",
    ]
    if cls.headline:
        out += ["Headline criteria (ranked on the [overview](../index.md)):", ""]
        out += [
            f"- {esc(c.label)} (per data set and {esc(', '.join(c.per) or 'nothing else')})"
            for c in cls.headline
        ]
        out.append("")
    res = data.track_results(name)
    if res.empty:
        out += ['!!! info "No results yet"', f"    No {esc(name)} run has finished yet.", ""]
        return "\n".join(out)
    ext = extension(name)
    datasets = main_first(res)
    if len(datasets) > 1:
        out += [
            f"Data sets: {', '.join(esc(d) for d in datasets)} — the main one first. Each opens with its "
            "headline table; the rankings per criterion, the breakdowns and the counts are folded "
            "(click a title to open it).",
            "",
        ]
    if ext.track_summary is not None:
        out += fold(ext.track_summary(data, figures), level=2)
    for i, dataset in enumerate(datasets):
        dres = res.loc[res["dataset"] == dataset]
        out += [f"## {esc(dataset)}", ""]
        note = dataset_note(dataset)
        if note:
            out += [note, ""]
        out += coverage_note(data, name, dataset)
        headline, grid = _headline_section(data, name, dataset)
        out += headline
        sections = ext.track_sections(data, dataset, figures) if ext.track_sections is not None else []
        if i == 0:  # the main data set shows one plot open
            plot, sections = split_figure(sections)
            out += plot
        counts, detail = metric_sections(data, name, dres)
        out += fold([*grid, *sections, *grading_lines(data, name, dataset), *counts])
        if detail:  # one fold around the metrics' folds: a data set adds a few titles to the page, not 20
            out += fold(["### Every metric by dimension", "", *fold(detail)])
    return "\n".join(out)


def main_first(res: pd.DataFrame) -> list[str]:
    """Return the data sets of a track's results, the main one first.

    Main: the first of :data:`evaluators.datasets.DEFAULT_DATASETS` (what ``evaluate`` runs by default) the
    track has results on; without one, the data set with the most models. The others follow by number of
    models (most first), then by name.
    """
    counts = res.groupby("dataset")["submission"].nunique()
    default = {d: i for i, d in enumerate(DEFAULT_DATASETS)}
    return sorted(
        (str(d) for d in counts.index), key=lambda d: (default.get(d, len(default)), -int(counts[d]), d)
    )


def _headline_section(data: SiteData, name: str, dataset: str) -> tuple[list[str], list[str]]:
    """Return the headline table, and the ranking per criterion apart (the page folds it)."""
    rk = data.ranking
    crit = rk.criteria
    if crit.empty:
        return [], []
    columns = list(crit.index[(crit["track"] == name) & (crit["dataset"] == dataset)])
    if not columns:
        return [], []
    cls = track(name)
    piv = rk.headline.loc[:, columns].dropna(how="all")
    subs = data.order([str(s) for s in piv.index])
    labels = [_criterion_label(cls, str(crit.at[c, "criterion"]), str(crit.at[c, "metric"])) for c in columns]
    if len({c.metric for c in cls.headline}) > 1:  # several criteria per setting: say which one a column is
        labels = [
            f"{esc(metric(str(crit.at[c, 'metric'])).label)} · {lab}"
            for c, lab in zip(columns, labels, strict=True)
        ]
    out = [
        "### Headline",
        "",
        "; ".join(esc(c.label) for c in cls.headline) + ". Models in overall Copeland order.",
    ]
    rows = [
        [link(data.name(s), f"../submissions/{s}.md") + seen_mark(data, s, dataset)]
        + [fmt(piv.at[s, c], str(crit.at[c, "metric"])) for c in columns]
        for s in subs
    ]
    out += ["", table(["Model", *labels], rows, align=["l"] + ["r"] * len(columns)), ""]
    grid = [
        "### Ranking per criterion",
        "",
        "For each criterion, the models ranked by their value (best first).",
        "",
        _rank_grid(data, piv, columns, labels, [str(crit.at[c, "metric"]) for c in columns]),
        "",
    ]
    return out, grid


def _criterion_label(cls: type, criterion: str, metric_name: str | None = None) -> str:
    """``chebi20/kekule`` → the per-values' labels (``kekule``), escaped.

    The values are named by the ``per`` of the criterion's own family (the one of its metric whose ``per``
    has as many dimensions as the name has values): families of one track may vary over different
    dimensions (T5: task and representation, or also condition and group).
    """
    values = criterion.split("/")[1:]
    families = [c for c in cls.headline if len(c.per) == len(values)]
    families = [c for c in families if c.metric == metric_name] or families or list(cls.headline[:1])
    per = families[0].per if families else ()
    dims = {d.name: d for d in cls.dimensions}
    parts = [value_label(dims.get(p), v) for p, v in zip(per, values, strict=False)]
    return esc(" · ".join(parts) or criterion)


def _rank_grid(
    data: SiteData, piv: pd.DataFrame, columns: Sequence[str], labels: Sequence[str], metrics: Sequence[str]
) -> str:
    ranked_columns = []
    for c, m in zip(columns, metrics, strict=True):
        col = piv[c].dropna()
        sign = -1.0 if metric(m).higher_is_better else 1.0
        ranked = sorted(col.index, key=lambda s: (sign * col[s], s))
        ranked_columns.append([f"{esc(data.name(str(s)))} ({fmt(col[s], m)})" for s in ranked])
    depth = max((len(c) for c in ranked_columns), default=0)
    rows = [[str(i + 1)] + [c[i] if i < len(c) else "" for c in ranked_columns] for i in range(depth)]
    return table(["Rank", *labels], rows, align=["r"] + ["l"] * len(ranked_columns))


def _varying(rows: pd.DataFrame, dims: Sequence[str]) -> list[str]:
    return [d for d in dims if d in rows.columns and rows[d].nunique() > 1]


def _fixed_value(dim: Dimension, values: Sequence[str], where: dict[str, str]) -> str:
    present = ordered(dim, list(values))
    return where[dim.name] if where.get(dim.name) in present else present[0]


def metric_sections(data: SiteData, name: str, dres: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Return the counts section, and per metric a section with a table over each dimension it varies."""
    cls = track(name)
    dims = {d.name: d for d in cls.dimensions}
    per = [p for p in per_dimensions(name) if p in dims]
    free = [d for d in dims if d not in per]
    where = where_of(name)
    by_metric = {str(m): rows for m, rows in dres.groupby("metric", sort=False, observed=True)}
    summary, detailed = [], []
    for m in [m for m in cls.metrics if m in by_metric]:
        (summary if metric(m).integral or not _varying(by_metric[m], free) else detailed).append(m)
    counts = _counts_section(data, dres, summary, per, free, dims, where)
    out: list[str] = []
    for m in detailed:
        rows = by_metric[m]
        spec = metric(m)
        out += [f"### {esc(spec.label)}", "", f"{esc(spec.description)} "
                f"{'Higher' if spec.higher_is_better else 'Lower'} is better.", ""]  # fmt: skip
        varying = _varying(rows, free)
        for d in varying:
            fixed = {o: _fixed_value(dims[o], rows[o].unique(), where) for o in varying if o != d}
            sel = rows
            for o, v in fixed.items():
                sel = sel.loc[sel[o] == v]
            if sel.empty:
                continue
            setting = ", ".join(f"{esc(o)} {esc(value_label(dims[o], v))}" for o, v in fixed.items())
            out += [f"#### {esc(spec.label)} by {esc(d)}", ""]
            if setting:
                out += [f"Other dimensions fixed at: {setting}.", ""]
            out += [_dimension_table(data, sel, m, d, per, dims, where), ""]
    return counts, out


def _dimension_table(
    data: SiteData,
    sel: pd.DataFrame,
    metric_name: str,
    dim: str,
    per: Sequence[str],
    dims: dict[str, Dimension],
    where: dict[str, str],
) -> str:
    """Rows: the per-values × models (Copeland order); columns: the values of ``dim``."""
    values = ordered(dims[dim], list(sel[dim].unique()))
    dataset = str(sel["dataset"].iloc[0])  # one data set's section
    # Columns as lists, zipped: row dicts (``to_dict("records")``) were most of a large board's track page.
    columns = [sel[c].tolist() for c in (*per, "submission", dim, "value")]
    cells = {
        (tuple(str(v) for v in key[: len(per)]), str(key[-3]), str(key[-2])): float(key[-1])
        for key in zip(*columns, strict=True)
    }
    groups = sorted({k[0] for k in cells}, key=lambda g: _group_key(per, dims, g))
    everyone = data.order({k[1] for k in cells})
    subs = everyone[:DIMENSION_TABLE_MODELS]
    headers = [*(esc(p) for p in per), "Model"]
    headers += [
        esc(value_label(dims[dim], v)) + (" (headline)" if where.get(dim) == v else "") for v in values
    ]
    rows = []
    for g in groups:
        for s in subs:
            if not any((g, s, v) in cells for v in values):
                continue
            row = [cell(value_label(dims[p], v)) for p, v in zip(per, g, strict=True)]
            row.append(link(data.name(s), f"../submissions/{s}.md") + seen_mark(data, s, dataset))
            row += [fmt(cells.get((g, s, v)), metric_name) for v in values]
            rows.append(row)
    out = table(headers, rows, align=["l"] * (len(per) + 1) + ["r"] * len(values))
    if len(everyone) > len(subs):
        out += (f"\n\nThe {len(subs)} best-ranked of {len(everyone)} models (overall ranking); every model's "
                "numbers are in `results.csv.gz` ([downloads](../downloads.md)) and on its own page.")
    return out


def _group_key(per: Sequence[str], dims: dict[str, Dimension], group: Sequence[str]) -> list[tuple]:
    """Sort key of a tuple of per-values: each in its dimension's display order."""
    return [value_sort_key(dims[p], v) for p, v in zip(per, group, strict=True)]


def _counts_section(
    data: SiteData,
    dres: pd.DataFrame,
    metrics: Sequence[str],
    per: Sequence[str],
    free: Sequence[str],
    dims: dict[str, Dimension],
    where: dict[str, str],
) -> list[str]:
    """One row per per-value, one column per count (range over the models: lo–hi)."""
    if not metrics:
        return []
    picked: dict[str, pd.DataFrame] = {}
    for m in metrics:
        rows = dres.loc[dres["metric"] == m]
        for d in _varying(rows, free):
            rows = rows.loc[rows[d] == _fixed_value(dims[d], rows[d].unique(), where)]
        picked[m] = rows
    groups = sorted(
        {tuple(map(str, key)) for rows in picked.values() for key in rows[list(per)].itertuples(index=False)},
        key=lambda g: _group_key(per, dims, g),
    )
    # Each metric's values split by per-value once (a mask per cell made this quadratic in the models).
    split: dict[str, dict[tuple[str, ...], pd.Series]] = {}
    for m, rows in picked.items():
        if not per:
            split[m] = {(): rows["value"]}
        else:
            by = rows.groupby(list(per), sort=False, observed=True)["value"]  # a list: tuple keys
            split[m] = {tuple(map(str, key)): grp for key, grp in by}
    table_rows = []
    for g in groups:
        row = [cell(value_label(dims[p], v)) for p, v in zip(per, g, strict=True)]
        for m in metrics:
            values = split[m].get(g, picked[m]["value"].iloc[:0])
            row.append(fmt_range(values, m, digits=4))
        table_rows.append(row)
    headers = [*(esc(p) for p in per), *(esc(metric_label(m)) for m in metrics)]
    return [
        "### Counts",
        "",
        "Per-setting counts and constants of the runs (range over the models where they differ; "
        "definitions in the [methodology](../methodology.md)).",
        "",
        table(headers or ["—"], table_rows or [[NO_VALUE]], align=["l"] * len(per) + ["r"] * len(metrics)),
        "",
    ]
