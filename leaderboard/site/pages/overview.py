"""The overview page (``index.md``): the headline ranking, the other rules, pairwise wins, failed runs.

A failed run shows its category and its public reason (:mod:`leaderboard.scrub`: scrubbed of host
details, clipped); the full reason and log tail stay in MLflow for the maintainers.

The ranking is :func:`leaderboard.ranking.headline.rank_headline`'s: every registered track's headline
criteria, grouped by track on the page, each track weighing 1 split evenly over its criteria. A model
that lacks a track's capability has no value on its criteria ("—", with the reason in the cell's title
and in a note): it is missing there, never scored zero. So is a model not evaluated on a data set, or
whose latest run there failed (the cell's title and a note say which), and the criteria legend flags every
data set not all ranked models have ("Partial coverage — qm9-isomers: 5 of 6 models").
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import pandas as pd

from leaderboard.markdown import NO_VALUE, cell, code, esc, link, table
from leaderboard.ranking.headline import headline_rows
from leaderboard.ranking.rules import RULE_LABELS, mean_rank
from leaderboard.scrub import failure_category, public_reason
from leaderboard.site.blocks import Figures, seen_mark, submission_link
from leaderboard.site.format import change, fmt, is_num, metric_label, plural
from leaderboard.site.pages.downloads import download_links
from leaderboard.site.pairwise import pairwise_figure
from leaderboard.site.schema import BOOTSTRAP
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import track

__all__ = [
    "OTHER_RULES",
    "criterion_label",
    "index_page",
    "lacks_cell",
    "missing_cell",
    "ranking_block",
    "ranking_table",
    "rule_ties",
    "track_mean_ranks",
]

#: Rules shown beside Copeland on the overview (Copeland with half ties always ranks as Copeland does).
OTHER_RULES = ("borda", "minimax", "mean_rank", "mean")


def criterion_label(criterion: str, *, with_dataset: bool, with_track: str = "") -> str:
    """Column label of one criterion (``dataset/value…``): ``chebi20 · kekule``, escaped."""
    parts = criterion.split("/")
    if not with_dataset:
        parts = parts[1:] or parts
    label = " · ".join(parts)
    return esc(f"{with_track} · {label}" if with_track else label)


def lacks_cell(capability: str) -> str:
    """Return the cell of a criterion a model cannot run: a dash titled with the missing capability."""
    return f'<span title="not run: lacks capability {html.escape(capability)}">{NO_VALUE}</span>'


def missing_cell(reason: str, dataset: str) -> str:
    """Return the cell of a criterion a model has no value on: a dash titled with why (``not evaluated``).

    ``reason`` is :meth:`leaderboard.site.sitedata.SiteData.missing_reason`'s; the title names the data set.
    """
    title = reason if reason == "no value" else f"{reason} on {dataset}"
    return f'<span title="{html.escape(title)}">{NO_VALUE}</span>'


def index_page(data: SiteData, figures: Figures) -> str:
    """Markdown of the overview page."""
    rk = data.ranking
    out = [
        "# ChemRobust",
        "",
        "A model that understands molecules should not change its mind when only the *writing* of a "
        "molecule changes. ChemRobust measures exactly that: every model is evaluated, in a sandbox, "
        "on how well it recognises the same molecule written in another valid way.",
        "",
        "## Overall ranking",
        "",
    ]
    if rk.copeland.empty:
        out += [
            '!!! info "No results yet"',
            "    No submission has finished an evaluation yet. Runs appear here after "
            "`nox -s evaluate` has been run and the site regenerated.",
            "",
        ]
    else:
        # The table comes first on every screen size: on a phone the criteria legend alone fills several
        # screens, and a reader comes for the ranking (issue 19).
        out += ranking_block(data, link_prefix="submissions/")
        out += [
            "Models ranked by Copeland over every track's headline criteria; each track column is the "
            "model's mean rank on that track's criteria (1 = best on all of them).",
            "",
        ]
        out += ["### How to read the ranking", ""]
        out += _criteria_legend(data)
        out += [
            "For every pair of models, the one better on the weighted majority of criteria wins the pair "
            "(criteria missing for either model are ignored). The Copeland score is wins − losses over "
            "all pairs ([Vote'n'Rank](methodology.md)); equal scores share a rank. Best value per column "
            "in bold.",
            "",
        ]
        if data.intervals is not None:
            level = round(100 * BOOTSTRAP["level"])
            out += [
                f"**Rank interval** is the {level} % range of the model's rank when the molecules are "
                f"resampled ({BOOTSTRAP['n_boot']:,} bootstrap replicates, re-ranked with Copeland); "
                "models that share a **group** cannot be told apart: neither ranks above the other in "
                f"{round(50 + level / 2)} % of the replicates.",
                "",
            ]
        out += _lacking_note(data)
        if data.interval_note:
            out += [data.interval_note, ""]
        n_sys = len(rk.copeland)
        if rk.condorcet is not None:
            out.append(
                f"**Condorcet winner:** {submission_link(data, rk.condorcet, 'submissions/')} "
                "beats every other model on a weighted majority of the criteria."
            )
        elif n_sys > 1:
            out.append(
                "**No Condorcet winner:** no model beats every other one on a majority of the criteria."
            )
        tracks = list(dict.fromkeys(str(t) for t in rk.criteria["track"]))
        out += [
            "",
            f"{plural(n_sys, 'model')} ranked on {plural(rk.n_criteria, 'criterion', 'criteria')} of "
            f"{plural(len(tracks), 'track')}; each track weighs 1, split evenly over its criteria.",
            "",
        ]
        unranked = [s for s in data.ids if s not in rk.copeland.index]
        if unranked:
            links = ", ".join(submission_link(data, s, "submissions/") for s in unranked)
            out += [f"Not ranked (no headline results yet): {links}.", ""]
        out += _rules_section(data)
        out += _pairwise_section(data, figures)

    failures = data.failures()
    out += ["## Failed runs", ""]
    if failures:
        rows = [
            [
                submission_link(data, r["submission"], "submissions/"),
                cell(r.get("track") or NO_VALUE),
                cell(r.get("dataset") or NO_VALUE),
                cell(failure_category(r.get("reason"))),
                cell(public_reason(r.get("reason"))),
            ]
            for r in failures
        ]
        out += [
            "The latest attempt of these runs failed; they never block the others and are retried "
            "on the next evaluation. Reasons are shortened and host details (paths, addresses, ids) "
            "replaced by placeholders; the maintainers keep the full reason and log.",
            "",
            table(["Model", "Track", "Dataset", "Failure", "Reason"], rows),
            "",
        ]
    else:
        out += ["None.", ""]

    out += ["## Data", "", download_links(data, prefix=""), ""]
    return "\n".join(out)


def _criteria_legend(data: SiteData) -> list[str]:
    """One line per ranked criteria family: its track, label, columns and weight (the column groups)."""
    crit = data.ranking.criteria
    families = _families(data)
    lines = [
        "**Criteria columns.** After the track means, each number column is one criterion (all of them "
        "show with the table's *all columns* button), grouped by track:",
        "",
    ]
    for name, group in crit.groupby("track", sort=False):
        cls = track(str(name))
        for family, rows in group.groupby(group.index.map(lambda c: families.get(c, 0)), sort=True):
            spec = cls.headline[int(family)]
            per = " · ".join(["data set", *spec.per])
            lines.append(
                f"- {link(str(name), f'tracks/{name}.md')} — {esc(spec.label)}: "
                f"{plural(len(rows), 'column')} ({esc(per)}), weight {rows['weight'].sum():.3g} in all "
                f"({rows['weight'].iloc[0]:.3g} each).{_coverage(data, str(name), rows['dataset'])}"
            )
    return [*lines, ""]


def _coverage(data: SiteData, name: str, datasets: Iterable[str]) -> str:
    """Return `` Partial coverage: qm9-isomers 5 of 6 models.`` for the data sets not every model has."""
    partial = []
    for dataset in dict.fromkeys(str(d) for d in datasets):
        have, lack = data.coverage(name, dataset)
        if lack:
            partial.append(f"{esc(dataset)}: {len(have)} of {plural(len(have) + len(lack), 'model')}")
    return f" **Partial coverage** — {'; '.join(partial)}." if partial else ""


def _families(data: SiteData) -> dict[str, int]:
    """Criteria family (index into the track's ``headline``) of every ranking column."""
    if "families" not in data.cache:
        rows = headline_rows(data.results)
        columns = rows["track"] + "/" + rows["criterion"] + "/" + rows["metric"]
        data.cache["families"] = dict(zip(columns, rows["family"].astype(int), strict=True))
    return data.cache["families"]


def track_mean_ranks(data: SiteData) -> pd.DataFrame:
    """Mean rank of every ranked model on each track's headline criteria (models × tracks, lower is better).

    The same rule as the overview's "Mean rank" (:func:`leaderboard.ranking.rules.mean_rank`) restricted
    to one track's columns of the oriented criteria table: on each criterion the models with a value are
    ranked 1 (best) to n, ties sharing the average position. Raw values cannot be averaged instead: a
    track mixes metrics of both directions and of different units (accuracy, RMSE). NaN where a model has
    no value on any criterion of the track. Columns are the tracks in display order, rows in Copeland
    order.
    """
    rk = data.ranking
    tracks = rk.criteria["track"].astype(str)
    means = {}
    for name in dict.fromkeys(tracks):
        columns = list(tracks.index[tracks == name])
        means[name] = mean_rank(rk.table.loc[:, columns], rk.weights.loc[columns])["score"]
    return pd.DataFrame(means).reindex(rk.copeland.index)


def ranking_table(data: SiteData, *, link_prefix: str) -> tuple[str, list[int]]:
    """Return the ranking table and the (0-based) columns of its compact view.

    Columns: rank, model, Copeland score, W/L/T, rank interval and group (with intervals), the mean rank
    per track (:func:`track_mean_ranks`), then every criterion. The compact view keeps rank, model,
    Copeland, interval, group and the track means; ``javascripts/tables.js`` hides the other columns
    behind a toggle (without scripts the whole table shows).
    """
    rk = data.ranking
    crit = list(rk.headline.columns)
    tracks = rk.criteria["track"].astype(str)
    many_tracks = tracks.nunique() > 1
    many_datasets = rk.criteria["dataset"].nunique() > 1 or many_tracks
    labels = [
        criterion_label(
            str(rk.criteria.at[c, "criterion"]),
            with_dataset=many_datasets,
            with_track=str(tracks[c]) if many_tracks else "",
        )
        for c in crit
    ]
    # A track ranking several criteria per setting (a score and its degradation) would show two identical
    # labels: say which metric each column is.
    labels = [
        f"{lab} · {esc(metric_label(str(rk.criteria.at[c, 'metric'])))}"
        if len({x.metric for x in track(str(tracks[c])).headline}) > 1
        else lab
        for c, lab in zip(crit, labels, strict=True)
    ]
    # Best by the criterion's direction: the oriented table (higher is better), not the raw values (RMSE).
    oriented = rk.table.reindex(rk.copeland.index)
    best = {c: oriented[c].max() for c in crit}
    intervals = data.intervals
    extra = ["Rank interval", "Group"] if intervals is not None else []
    means = track_mean_ranks(data)
    mean_labels = [esc(f"{name} mean rank") for name in means.columns]
    best_mean = means.min()
    headers = ["Rank", "Model", "Copeland", "W / L / T", *extra, *mean_labels, *labels]
    headline = rk.headline.reindex(rk.copeland.index)
    rows = []
    for sub_id, row in rk.copeland.iterrows():
        sub_id = str(sub_id)
        cells = [
            str(int(row["rank"])),
            submission_link(data, sub_id, link_prefix),
            f"{int(row['score']):+d}" if row["score"] else "0",
            f"{int(row['wins'])} / {int(row['losses'])} / {int(row['ties'])}",
        ]
        if intervals is not None:
            lo, hi = int(intervals.at[sub_id, "rank_lo"]), int(intervals.at[sub_id, "rank_hi"])
            cells += [f"[{lo}, {hi}]", str(int(intervals.at[sub_id, "group"]))]
        for name in means.columns:
            score = means.at[sub_id, name]
            if not is_num(score):
                title = html.escape(f"no value on any criterion of {name}")
                cells.append(f'<span title="{title}">{NO_VALUE}</span>')
                continue
            txt = f"{score:.1f}"
            cells.append(f"**{txt}**" if score == best_mean[name] and len(rk.copeland) > 1 else txt)
        values = headline.loc[sub_id]
        for c in crit:
            val = values[c]
            if not is_num(val):
                dataset = str(rk.criteria.at[c, "dataset"])
                lacking = data.lacks(sub_id, str(tracks[c]))
                reason = data.missing_reason(sub_id, str(tracks[c]), dataset)
                cells.append(lacks_cell(lacking) if lacking is not None else missing_cell(reason, dataset))
                continue
            txt = fmt(val, str(rk.criteria.at[c, "metric"]))
            top = oriented.at[sub_id, c] == best[c] and len(rk.copeland) > 1
            mark = seen_mark(data, sub_id, str(rk.criteria.at[c, "dataset"]))
            cells.append((f"**{txt}**" if top else txt) + mark)
        rows.append(cells)
    align = ["r", "l", "r", "c"] + ["c"] * len(extra) + ["r"] * len(mean_labels) + ["r"] * len(crit)
    compact = [0, 1, 2, *range(4, 4 + len(extra) + len(mean_labels))]
    return table(headers, rows, align=align), compact


def ranking_block(data: SiteData, *, link_prefix: str) -> list[str]:
    """Markdown lines of the ranking table inside its ``div.chemrobust-ranking`` wrapper.

    The wrapper's class makes the rank and model columns sticky while the table scrolls sideways
    (``stylesheets/chemrobust.css``); ``data-compact`` names the columns of the compact view, which
    ``javascripts/tables.js`` shows first with a button for the rest. Kept as a class on a wrapper, not
    on the table: Material styles and Tablesort only pick up tables without a class.
    """
    text, compact = ranking_table(data, link_prefix=link_prefix)
    keep = ",".join(str(i) for i in compact)
    opening = f'<div class="chemrobust-ranking" data-compact="{keep}" markdown="1">'
    return [opening, "", text, "", "</div>", ""]


def _lacking_note(data: SiteData) -> list[str]:
    rk = data.ranking
    notes = []
    for name in dict.fromkeys(str(t) for t in rk.criteria["track"]):
        lacking = [s for s in rk.copeland.index if data.lacks(str(s), name) is not None]
        if lacking:
            capability = track(name).capability
            names = ", ".join(esc(data.name(str(s))) for s in lacking)
            notes.append(
                f"— in the {esc(name)} columns of {names}: not run, the model lacks the capability "
                f"{code(capability)} the track needs; missing criteria are ignored pairwise, never scored "
                "zero."
            )
        datasets = rk.criteria.loc[rk.criteria["track"] == name, "dataset"]
        for dataset in dict.fromkeys(str(d) for d in datasets):
            by_reason: dict[str, list[str]] = {}
            for sub_id in data.coverage(name, dataset)[1]:
                reason = data.missing_reason(sub_id, name, dataset)
                if data.lacks(sub_id, name) is None:
                    by_reason.setdefault(reason, []).append(esc(data.name(sub_id)))
            for reason, names in by_reason.items():
                why = _MISSING.get(reason, "no value")
                notes.append(
                    f"— in the {esc(name)} · {esc(dataset)} columns of {', '.join(names)}: {why}; missing "
                    "criteria are ignored pairwise, never scored zero."
                )
    return [*notes, ""] if notes else []


#: What the overview's note says of a data set a ranked model has no value on, by missing reason.
_MISSING = {
    "not evaluated": "not evaluated on this data set",
    "run failed": "the latest run failed ([listed below](#failed-runs))",
}


def rule_ties(ranks: pd.Series) -> set[str]:
    """Return the models a rule cannot tell apart when it is degenerate, else an empty set.

    A rule is degenerate on this board when its largest group of models sharing one rank holds at least
    half of the ranked models and at least three of them, or when it gives three or more models at most
    two distinct ranks. Minimax, for one, ties every model whose worst pairwise defeat is equally
    large. A rank change against Copeland of a model in that group (``↓5``) only reflects where the tie
    happens to sit, so the page shows it as a tie. An ordinary tie (two models of five) keeps its arrows.

    Examples
    --------
    >>> sorted(rule_ties(pd.Series([1, 2, 2, 2], index=list("abcd"))))
    ['b', 'c', 'd']
    >>> rule_ties(pd.Series([1, 2, 3, 3], index=list("abcd")))
    set()
    >>> sorted(rule_ties(pd.Series([1, 1, 3], index=list("abc"))))
    ['a', 'b']
    """
    counts = ranks.value_counts()
    if counts.empty or counts.iloc[0] < 2:
        return set()
    n = len(ranks)
    most = int(counts.iloc[0])
    if not ((most >= 3 and 2 * most >= n) or (n >= 3 and len(counts) <= 2)):
        return set()
    shared = counts.index[counts == most]
    return {str(s) for s in ranks.index[ranks.isin(shared)]}


def _rules_section(data: SiteData) -> list[str]:
    rules = data.ranking.rules
    if rules is None or len(rules) < 2:
        return []
    headers = ["Model", "Copeland"]
    for rule in OTHER_RULES:
        headers += [esc(RULE_LABELS[rule]), "Δ"]
    ties = {rule: rule_ties(rules[f"rank_{rule}"]) for rule in OTHER_RULES}
    rows = []
    for sub_id, row in rules.iterrows():
        cells = [submission_link(data, str(sub_id), "submissions/"), str(int(row["rank_copeland"]))]
        for rule in OTHER_RULES:
            rank = str(int(row[f"rank_{rule}"]))
            if str(sub_id) in ties[rule]:
                # A degenerate rule's shared rank: no arrow, which would read as a real move.
                n = len(ties[rule])
                title = html.escape(f"{RULE_LABELS[rule]} ties {n} of {len(rules)} models here")
                cells += [f"{rank}=", f'<span title="{title}">tied</span>']
            else:
                cells += [rank, change(int(row[f"change_{rule}"]))]
        rows.append(cells)
    moved = sum(
        any(int(row[f"change_{r}"]) != 0 and str(sub_id) not in ties[r] for r in OTHER_RULES)
        for sub_id, row in rules.iterrows()
    )
    degenerate = [
        f"{esc(RULE_LABELS[r])} ties {len(ties[r])} of {len(rules)} models" for r in OTHER_RULES if ties[r]
    ]
    note = (
        f" {'; '.join(degenerate)}: it cannot tell them apart on these criteria, so their Δ reads "
        "*tied* (rank marked =) instead of an arrow."
        if degenerate
        else ""
    )
    return [
        "## Other ranking rules",
        "",
        "The same criteria and weights ranked by the other rules of Vote'n'Rank "
        "([definitions](methodology.md#ranking-rules)); Δ is the change against Copeland (↑2: this rule "
        f"places the model two ranks higher). {moved} of {len(rules)} models "
        f"{'moves' if moved == 1 else 'move'} under at least one rule.{note}",
        "",
        table(headers, rows, align=["l", "r"] + ["r", "c"] * len(OTHER_RULES)),
        "",
    ]


def _pairwise_section(data: SiteData, figures: Figures) -> list[str]:
    pair = data.ranking.pairwise
    if pair is None:
        return []
    majority, wins = pair
    fig = pairwise_figure(majority, wins=wins, names={s: data.name(s) for s in data.ids})
    return [
        "## Pairwise wins and losses",
        "",
        "Each cell is one pair of models: green when the row model beats the column model on the "
        "weighted majority of criteria, red when it loses, grey for a tie; rows and columns are in "
        "Copeland order, so a row's Copeland score is its green cells minus its red cells.",
        "",
        *figures.block(
            fig,
            "overview",
            "pairwise",
            caption="Pairwise majorities over the headline criteria (hover: the criteria weight each model "
            "wins). Data: [pairwise.csv](data/pairwise.csv).",
        ),
    ]
