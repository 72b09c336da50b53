"""The model pages (``submissions/index.md`` and ``submissions/<id>.md``).

A model's page holds its place in the ranking (first), its card and provenance
(:mod:`leaderboard.site.pages.model_card`), a section per track it has results for (per
data set: its headline values, the headline metric over each dimension, the track extension's sections,
and every number), the tracks it cannot run ("not applicable": it lacks their capability), and the
provenance of every run with the command that reproduces it. Everything from a manifest, a run record or
a result row is escaped with :mod:`leaderboard.markdown`; a failure shows its category and public reason
(:mod:`leaderboard.scrub`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evaluators.schema import Dimension
from leaderboard.markdown import NO_VALUE, cell, code, esc, json_script, table
from leaderboard.ranking.rules import RULE_LABELS
from leaderboard.scrub import failure_category, public_reason
from leaderboard.site.blocks import Figures, fold, submission_link, track_link
from leaderboard.site.extensions import extension
from leaderboard.site.figures import scatter_trace
from leaderboard.site.format import change, duration, fmt, metric_label, text, value_label
from leaderboard.site.grading import grading_lines
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.pages.model_card import card_rows, provenance_section
from leaderboard.site.pages.overview import OTHER_RULES, criterion_label
from leaderboard.site.pages.track import per_dimensions, where_of
from leaderboard.site.robustness import robustness_section
from leaderboard.site.schema import BOOTSTRAP, SLUG
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import dimensions, ordered, track, track_names, value_sort_key

__all__ = [
    "all_numbers_html",
    "board_rank_cell",
    "reproduce_command",
    "submission_page",
    "submissions_index_page",
]

_SHA = re.compile(r"[0-9a-f]{40}")


def reproduce_command(submission: str, dataset: str) -> str:
    """Return the command that reproduces one submission's run on one dataset.

    Examples
    --------
    >>> reproduce_command("chemberta", "chebi20")
    'nox -s evaluate -- --submission chemberta --dataset chebi20'
    """
    return f"nox -s evaluate -- --submission {submission} --dataset {dataset}"


def submissions_index_page(data: SiteData) -> str:
    """Markdown of the list of models, in overall ranking order."""
    out = ["# Submissions", ""]
    if not data.ids:
        out += ['!!! info "No submissions yet"', "    No submission has been exported yet.", ""]
        return "\n".join(out)
    out += [
        "Every submitted model; the rank is its Copeland rank on each board that ranks it (embedding, "
        "generative), *reference* where it is shown but never ranked. Each page holds the model card, every "
        "number, the molecules the model misses most, the provenance of every run and the command "
        "that reproduces it.",
        "",
    ]
    rows = []
    for sub_id in data.order(data.ids):
        meta = data.submissions.get(sub_id, {})
        runs = data.runs_by_submission.get(sub_id, [])
        n_ok = sum(r["status"] == "FINISHED" for r in runs)
        n_fail = sum(r["status"] == "FAILED" for r in runs)
        rows.append(
            [
                board_rank_cell(data, sub_id),
                submission_link(data, sub_id),
                cell(text(meta.get("authors"))),
                cell(text(meta.get("architecture"))),
                cell(text(meta.get("license"))),
                f"{n_ok} finished, {n_fail} failed",
            ]
        )
    out += [table(["Rank", "Model", "Authors", "Architecture", "License", "Runs"], rows), ""]
    return "\n".join(out)


def submission_page(data: SiteData, sub_id: str, figures: Figures, explorer: Explorer) -> str:
    """Markdown of one model's page: title, ranking, model card and provenance, results, runs.

    The title is the manifest's display name (its id when it has none); the build writes it into the
    page's front matter too (:func:`leaderboard.site.build.write_page`). The ranking comes first: it is
    what a reader comes for; the card and the provenance table follow.
    """
    meta = data.submissions.get(sub_id, {})
    out = [f"# {esc(data.name(sub_id))}", "", f"Submission {code(sub_id)}.", ""]
    out += ["## Ranking", "", *_ranking(data, sub_id), *robustness_section(data, sub_id, figures)]
    out += ["## Model card", ""]
    if meta:
        if meta.get("description"):
            out += [esc(text(meta["description"])), ""]
        out += [table(["Field", "Value"], card_rows(data, sub_id)), ""]
    else:
        out += ["No manifest metadata exported for this submission.", ""]
    out += ["### Provenance", "", *provenance_section(data, sub_id)]
    out += _training(meta.get("training"), sub_id, figures)
    out += ["## Results", "", *_results(data, sub_id, figures, explorer)]
    # One folded block per run, its track, data set and status in the title (issue 35: page heights).
    out += ["## Runs and provenance", "", *fold(_runs(data, sub_id), level=3)]
    out += ["[Download all data](../downloads.md)", ""]
    return "\n".join(out)


def _training(record: Any, sub_id: str, figures: Figures) -> list[str]:
    """Write the training record of a model the project trained (``training.json``), with its loss curve."""
    if not isinstance(record, dict):
        return []

    def number(key: str, form: str = "{:,}") -> str:
        value = record.get(key)
        return form.format(value) if isinstance(value, int | float) and not isinstance(value, bool) else "—"

    rows = [
        ["Training time", number("seconds", "{:,.0f} s")],
        ["Passes over the corpus", number("epochs", "{:.2f}")],
        ["Parameters", number("parameters")],
        ["Corpus", f"{number('corpus_size')} molecules, sha256 {code(str(record.get('corpus_sha256', '')))}"],
        ["Weights", f"{number('weights_bytes')} bytes, sha256 {code(str(record.get('weights_sha256', '')))}"],
        ["Rebuild", code(str(record.get("rebuild", "")))],
    ]
    intro = ("Trained by the project from scratch; the submission folder holds `training.json` and "
             "`TRAINING.md` (configuration, environment, the whole loss history).")  # fmt: skip
    out = ["## Training record", "", intro, "", table(["Field", "Value"], rows), ""]
    loss = [p for p in record.get("loss") or [] if isinstance(p, list) and len(p) == 2]
    if loss:
        fig = {
            "data": [scatter_trace(x=[p[0] for p in loss], y=[p[1] for p in loss], mode="lines",
                                   name="loss", hovertemplate="step %{x}<br>loss %{y:.4f}")],
            "layout": {"xaxis": {"title": {"text": "step"}}, "yaxis": {"title": {"text": "training loss"}},
                       "showlegend": False, "margin": {"t": 20}, "height": 320},
        }  # fmt: skip
        out += figures.block(fig, "sub", sub_id, "training-loss",
                             caption="Training loss (mean over the logging window) against the step.")
    return out


def _ranking(data: SiteData, sub_id: str) -> list[str]:
    """Return the model's place on each board that shows it: its rank there, or *reference (not ranked)*."""
    places = data.board_places(sub_id)
    if not places:
        return ["Not ranked: no headline results yet.", ""]
    out: list[str] = []
    for board, is_reference in places:
        where = f"on the {esc(board.spec.name)} board"
        cop = board.ranking.copeland
        if is_reference:
            place = board.references.loc[sub_id]
            note = " ".join(str(data.references.get(sub_id, "")).split())
            out += [
                f"**Reference (not ranked)** {where}: shown after {int(place['after'])} of its "
                f"{len(cop)} ranked models, where its Copeland score against them would place it (score "
                f"{int(place['score']):+d}: {int(place['wins'])} wins, {int(place['losses'])} losses, "
                f"{int(place['ties'])} ties); it moves no model's rank. See the [overview](../index.md)."
                + (f" Why a reference: {esc(note)}" if note else ""),
                "",
            ]
            continue
        row = cop.loc[sub_id]
        out += [
            f"Rank **{int(row['rank'])}** of {len(cop)} {where} (Copeland score {int(row['score']):+d}: "
            f"{int(row['wins'])} wins, {int(row['losses'])} losses, {int(row['ties'])} ties). "
            "See the [overview](../index.md).",
            "",
        ]
        intervals = data.board_intervals.get(board.spec.name, (None, ""))[0]
        if intervals is not None and sub_id in intervals.index:
            iv = intervals.loc[sub_id]
            level = round(100 * BOOTSTRAP["level"])
            out += [
                f"Bootstrap rank interval {where} ({level} %, molecules resampled): **[{int(iv['rank_lo'])}, "
                f"{int(iv['rank_hi'])}]**, median rank {float(iv['rank_median']):g}; group "
                f"{int(iv['group'])} of {int(intervals['group'].max())}.",
                "",
            ]
        rules = board.ranking.rules
        if rules is not None and len(rules) > 1:
            r = rules.loc[sub_id]
            parts = [
                f"{esc(RULE_LABELS[rule])} {int(r[f'rank_{rule}'])} ({change(int(r[f'change_{rule}']))})"
                for rule in OTHER_RULES
            ]
            out += [f"Rank {where} under the other rules (change against Copeland): {'; '.join(parts)}.", ""]
    return out


def board_rank_cell(data: SiteData, sub_id: str) -> str:
    """Return the submission's rank on each board that shows it (``2 (embedding)``), or ``reference``."""
    parts = []
    for board, is_reference in data.board_places(sub_id):
        rank = "reference" if is_reference else str(int(board.ranking.copeland.at[sub_id, "rank"]))
        parts.append(f"{rank} ({board.spec.name})")
    return "; ".join(parts) or NO_VALUE


def _results(data: SiteData, sub_id: str, figures: Figures, explorer: Explorer) -> list[str]:
    res = data.by_submission.get(sub_id)
    out: list[str] = []
    if res is None or res.empty:
        out += ["No results yet.", ""]
    else:
        for name in data.tracks_of(sub_id):
            rows = res.loc[res["track"] == name]
            ext = extension(name)
            for dataset, grp in rows.groupby("dataset", sort=True):
                dataset = str(dataset)
                out += [f"### {esc(name)} · {esc(dataset)}", ""]
                note = data.seen_note(sub_id, dataset)
                if note is not None:
                    out += ['!!! warning "Seen in training"', f"    {esc(note[0].upper() + note[1:])}: these "
                            "numbers measure memory as much as generalisation "
                            "([methodology](../methodology.md#seen-in-training)).", ""]  # fmt: skip
                out += _headline_values(data, sub_id, name, dataset)
                # The headline values show; the breakdowns, figures and failures fold (issue 35).
                detail = [*_headline_by_dimension(grp, name), *grading_lines(data, name, dataset, sub_id)]
                if ext.submission_sections is not None:
                    detail += ext.submission_sections(data, sub_id, dataset, figures, explorer)
                out += fold(detail, level=4)
                out += [all_numbers_html(grp, list(track(name).dimensions)), ""]
        known = set(track_names())
        for (name, dataset), grp in res.loc[~res["track"].isin(list(known))].groupby(["track", "dataset"]):
            out += [f"### {esc(name)} · {esc(dataset)}", "", "A track that is no longer registered.", ""]
            out += [all_numbers_html(grp, dimensions()), ""]
    lacking = [(t, data.lacks(sub_id, t)) for t in track_names()]
    lacking = [(t, c) for t, c in lacking if c is not None and t not in data.tracks_of(sub_id)]
    if lacking:
        items = ", ".join(f"{track_link(t, '../')} (needs {code(c)})" for t, c in lacking)
        out += [f"Not applicable: {items}; this model lacks the capability.", ""]
    return out


def _headline_values(data: SiteData, sub_id: str, name: str, dataset: str) -> list[str]:
    values = data.headline_of(sub_id, name, dataset)
    if values.empty:
        return []
    crit = data.ranking.criteria
    labels = [criterion_label(str(crit.at[c, "criterion"]), with_dataset=False) for c in values.index]
    cells = [fmt(v, str(crit.at[c, "metric"])) for c, v in values.items()]
    spec = track(name).headline
    if len({c.metric for c in spec}) > 1:  # several criteria per setting: say which one a column is
        labels = [
            f"{esc(metric_label(str(crit.at[c, 'metric'])))} · {lab}"
            for c, lab in zip(values.index, labels, strict=True)
        ]
    return [
        f"Headline: {'; '.join(esc(c.label) for c in spec)}.",
        "",
        table(labels, [cells], align=["r"] * len(cells)),
        "",
    ]


def _headline_by_dimension(grp: pd.DataFrame, name: str) -> list[str]:
    """Return the headline metric over each dimension the criteria fix (rows) and per-values (columns)."""
    cls = track(name)
    if not cls.headline:
        return []
    crit = cls.headline[0]
    dims = {d.name: d for d in cls.dimensions}
    per = [p for p in per_dimensions(name) if p in dims]
    where = {k: v for k, v in where_of(name).items() if k in dims}
    rows = grp.loc[(grp["metric"] == crit.metric).to_numpy(dtype=bool)]
    # One pass in plain Python over this model's rows of the metric (a few hundred): much faster than
    # filtering the frame once per dimension.
    names = [*where, *per]
    records = [
        (tuple(map(str, key[: len(where)])), tuple(map(str, key[len(where) :])), value)
        for *key, value in rows[[*names, "value"]].itertuples(index=False, name=None)
    ]
    fixed_values = tuple(where.values())
    label = metric_label(crit.metric)
    out: list[str] = []
    for i, d in enumerate(where):
        cells: dict[tuple[str, tuple[str, ...]], float] = {}
        for setting, group, value in records:
            others = setting[:i] + setting[i + 1 :]
            if setting[i] != "-" and others == fixed_values[:i] + fixed_values[i + 1 :]:
                cells[(setting[i], group)] = value
        if not cells:
            continue
        columns = sorted(
            {g for _, g in cells},
            key=lambda g: [value_sort_key(dims[p], v) for p, v in zip(per, g, strict=True)],
        )
        body = []
        for v in ordered(dims[d], [v for v, _ in cells]):
            head = esc(value_label(dims[d], v)) + (" (headline)" if where[d] == v else "")
            body.append([head] + [fmt(cells.get((v, g)), crit.metric) for g in columns])
        fixed = ", ".join(f"{esc(o)} {esc(value_label(dims[o], v))}" for o, v in where.items() if o != d)
        headers = [esc(d.capitalize())]
        headers += [
            esc(" · ".join(value_label(dims[p], v) for p, v in zip(per, g, strict=True))) for g in columns
        ]
        out += [f"#### {esc(label)} by {esc(d)}", "", f"Other dimensions: {fixed}." if fixed else "", ""]
        out += [table(headers, body, align=["l"] + ["r"] * len(columns)), ""]
    return out


def all_numbers_html(grp: pd.DataFrame, dims: Sequence[Dimension]) -> str:
    """Every number of one (track, dataset): a collapsed block whose table ``tables.js`` draws.

    The rows are embedded in the page as JSON (``<script type="application/json">``, already formatted
    text) rather than as an HTML table: MkDocs then neither parses nor indexes thousands of cells, which
    made 100 submission pages take most of the build. ``site/javascripts/tables.js`` renders the table
    (sortable, as text: nothing in a cell is parsed as HTML) inside the block; ``results.csv.gz`` holds the
    same numbers. The JSON comes from :func:`leaderboard.markdown.json_script`, so no value can end the
    script element.
    """
    names = [d.name for d in dims if d.name in grp.columns]
    by_name = {d.name: d for d in dims}
    cells: dict[tuple[str, ...], dict[str, float]] = {}
    # Columns as lists, not itertuples: iterating pyarrow-backed strings element by element was most of it.
    columns = [grp[c].tolist() for c in (*names, "metric", "value")]
    for *key, metric_name, value in zip(*columns, strict=True):
        cells.setdefault(tuple(map(str, key)), {})[str(metric_name)] = float(value)
    present = {m for row in cells.values() for m in row}
    declared = [m for t in track_names() for m in track(t).metrics]
    metrics = [m for m in dict.fromkeys(declared) if m in present] + sorted(present - set(declared))
    keys = sorted(cells, key=lambda k: [value_sort_key(by_name[n], v) for n, v in zip(names, k, strict=True)])
    rows = [
        [value_label(by_name[n], v) for n, v in zip(names, k, strict=True)]
        + [fmt(cells[k].get(m, float("nan")), m) for m in metrics]
        for k in keys
    ]
    spec = {
        "columns": [n.replace("_", " ").capitalize() for n in names] + [metric_label(m) for m in metrics],
        "align": ["left"] * len(names) + ["right"] * len(metrics),
        "rows": rows,
    }
    return "\n".join(
        [
            f'<details class="note chemrobust-numbers" data-search-exclude><summary>All {len(grp)} numbers '
            "(also in results.csv.gz)</summary>",
            f'<script type="application/json" class="chemrobust-table">{json_script(spec)}</script>',
            "</details>",
        ]
    )


def _runs(data: SiteData, sub_id: str) -> list[str]:
    runs = data.runs_by_submission.get(sub_id, [])
    if not runs:
        return ["No runs recorded yet.", ""]
    out: list[str] = []
    for run in runs:
        trk = run.get("track") or NO_VALUE
        dataset = run.get("dataset") or NO_VALUE
        out += [f"### {esc(trk)} · {esc(dataset)} · {esc(run['status'].lower())}", ""]
        if run["status"] == "FAILED":
            reason = run.get("reason")  # public: category and scrubbed reason; the full one is in MLflow
            out += [
                f'!!! failure "Failed: {esc(failure_category(reason))}"',
                f"    {esc(public_reason(reason))}",
                "",
                "    Host details (paths, addresses, ids) are replaced by placeholders; the maintainers "
                "keep the full reason and log with the MLflow run below.",
                "",
            ]
        prov = [
            ("MLflow run id", code(run.get("run_id"))),
            ("Image tag", code(run.get("image_tag"))),
            ("Image id", code(run.get("image_id"))),
            ("Model revision", code(run.get("model_revision"))),
            ("Data hash", code(run.get("data_hash"))),
            ("Benchmark version", code(run.get("benchmark_version"))),
            ("Hardware", cell(text(run.get("hardware")))),
            ("Runner", cell(text(run.get("runner")))),
            ("Git commit", code(run.get("git_commit"))),
            ("Started", cell(text(run.get("started_at")))),
            ("Duration", duration(run.get("duration_s"))),
        ]
        out += [table(["Field", "Value"], [list(p) for p in prov]), ""]
        if run.get("dataset"):
            out += _reproduce(sub_id, run)
    return out


def _reproduce(sub_id: str, run: Mapping[str, Any]) -> list[str]:
    """Return the shell lines that reproduce one run: check out its commit (if recorded), then evaluate."""
    dataset = str(run["dataset"])
    if not SLUG.fullmatch(dataset):
        return ["Reproduce: the recorded data set name is not a plain name; see the run's record.", ""]
    lines = []
    commit = str(run.get("git_commit") or "")
    sha = commit.removesuffix("-dirty")
    if _SHA.fullmatch(sha):
        if commit.endswith("-dirty"):
            lines.append(f"# recorded at commit {sha} with uncommitted changes")
        lines.append(f"git checkout {sha}")
    lines.append(reproduce_command(sub_id, dataset))
    return ["Reproduce:", "", "```bash", *lines, "```", ""]
