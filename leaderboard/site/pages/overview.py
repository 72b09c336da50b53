"""The overview page (``index.md``): one board per kind of model, the other rules, pairwise wins, failed runs.

The boards are :attr:`leaderboard.site.sitedata.SiteData.boards` (:mod:`leaderboard.ranking.boards`): the
embedding models ranked over the embedding tracks' criteria, the generative models over the generative
tracks', each with its own bootstrap intervals. References are shown as reference rows at the place their
Copeland score against the ranked models would give them
(:func:`leaderboard.ranking.boards.place_references`), italic, with a *reference* badge and no rank; they are
not ranked and move no model.

A failed run shows its category and its public reason (:mod:`leaderboard.scrub`: scrubbed of host
details, clipped); the full reason and log tail stay in MLflow for the maintainers.

Each board's ranking is :func:`leaderboard.ranking.headline.rank_headline`'s over its tracks: their headline
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
from leaderboard.ranking.boards import Board
from leaderboard.ranking.headline import Ranking, headline_rows
from leaderboard.ranking.rules import RULE_LABELS, mean_rank
from leaderboard.scrub import failure_category, public_reason
from leaderboard.site.blocks import Figures, seen_mark, submission_link
from leaderboard.site.format import change, fmt, is_num, metric_label, plural
from leaderboard.site.pages.downloads import download_links
from leaderboard.site.pairwise import pairwise_figure
from leaderboard.site.robustness import robust_cell
from leaderboard.site.schema import BOOTSTRAP
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import track

__all__ = [
    "OTHER_RULES",
    "boards_section",
    "criterion_label",
    "index_page",
    "lacks_cell",
    "missing_cell",
    "ranking_block",
    "ranking_table",
    "reference_badge",
    "reference_notes",
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
    out = [
        "# ChemRobust",
        "",
        "A model that understands molecules should not change its mind when only the *writing* of a "
        "molecule changes. ChemRobust measures exactly that: every model is evaluated, in a sandbox, "
        "on how well it recognises the same molecule written in another valid way.",
        "",
        "## Boards",
        "",
    ]
    if all(board.empty for board in data.boards.values()):
        out += [
            '!!! info "No results yet"',
            "    No submission has finished an evaluation yet. Runs appear here after "
            "`nox -s evaluate` has been run and the site regenerated.",
            "",
        ]
    else:
        out += boards_section(data, figures)
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


def _criteria_legend(data: SiteData, rk: Ranking) -> list[str]:
    """One line per ranked criteria family: its track, label, columns and weight (the column groups)."""
    crit = rk.criteria
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
                f"({rows['weight'].iloc[0]:.3g} each).{_coverage(data, str(name), rows['dataset'], rk)}"
            )
    return [*lines, ""]


def _coverage(data: SiteData, name: str, datasets: Iterable[str], rk: Ranking) -> str:
    """Return `` Partial coverage: qm9-isomers 5 of 6 models.`` for the data sets not every model has."""
    partial = []
    for dataset in dict.fromkeys(str(d) for d in datasets):
        have, lack = data.coverage(name, dataset, ranking=rk)
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


def track_mean_ranks(data: SiteData, rk: Ranking | None = None) -> pd.DataFrame:
    """Mean rank of every ranked model on each track's headline criteria (models × tracks, lower is better).

    The same rule as the overview's "Mean rank" (:func:`leaderboard.ranking.rules.mean_rank`) restricted
    to one track's columns of the oriented criteria table: on each criterion the models with a value are
    ranked 1 (best) to n, ties sharing the average position. Raw values cannot be averaged instead: a
    track mixes metrics of both directions and of different units (accuracy, RMSE). NaN where a model has
    no value on any criterion of the track. Columns are the tracks in display order, rows in Copeland
    order. ``rk``: a board's ranking (default: :attr:`SiteData.ranking`).
    """
    rk = data.ranking if rk is None else rk
    tracks = rk.criteria["track"].astype(str)
    means = {}
    for name in dict.fromkeys(tracks):
        columns = list(tracks.index[tracks == name])
        means[name] = mean_rank(rk.table.loc[:, columns], rk.weights.loc[columns])["score"]
    return pd.DataFrame(means).reindex(rk.copeland.index)


def ranking_table(data: SiteData, *, link_prefix: str, board: Board | None = None) -> tuple[str, list[int]]:
    """Return the ranking table and the (0-based) columns of its compact view.

    Columns: rank, model, Copeland score, W/L/T, rank interval and group (with intervals), the mean rank
    per track (:func:`track_mean_ranks`), then every criterion. The compact view keeps rank, model,
    Copeland, interval, group and the track means; ``javascripts/tables.js`` hides the other columns
    behind a toggle (without scripts the whole table shows).

    With a ``board`` the table is that board's: its ranking, its intervals
    (:attr:`SiteData.board_intervals`) and its references as reference rows (:func:`_reference_cells`)
    at their place; bold marks the best *ranked* value. Without one, :attr:`SiteData.ranking`.
    """
    rk = data.ranking if board is None else board.ranking
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
    intervals = data.intervals if board is None else data.board_intervals.get(board.spec.name, (None, ""))[0]
    extra = ["Rank interval", "Group"] if intervals is not None else []
    means = track_mean_ranks(data, rk)
    # A break opportunity after each underscore: "identity_blinded" would otherwise set a column's width.
    mean_labels = [esc(f"{name} mean rank").replace("\\_", "\\_<wbr>") for name in means.columns]
    best_mean = means.min()
    # With a board, its robust skill stands beside the rank (leaderboard.site.robustness).
    skill = ["Robust skill"] if board is not None else []
    headers = ["Rank", "Model", *skill, "Copeland", "W / L / T", *extra, *mean_labels, *labels]
    robust = data.board_robustness.get(board.spec.name) if board is not None else None
    best_skill = (
        robust["robust_skill"].reindex(rk.copeland.index).max() if robust is not None else float("nan")
    )
    headline = rk.headline.reindex(rk.copeland.index)
    rows = []
    order = board.rows() if board is not None else [(str(s), False) for s in rk.copeland.index]
    for sub_id, is_reference in order:
        if is_reference and board is not None:
            rows.append(_reference_cells(data, board, sub_id, link_prefix, len(extra), list(means.columns)))
            continue
        row = rk.copeland.loc[sub_id]
        top_skill = robust is not None and sub_id in robust.index
        top_skill = top_skill and robust.at[sub_id, "robust_skill"] == best_skill
        cells = [
            str(int(row["rank"])),
            submission_link(data, sub_id, link_prefix),
            *([_bold(robust_cell(data, board, sub_id), top_skill and len(rk.copeland) > 1)] if skill else []),
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
    align = ["r", "l", *(["c"] * len(skill)), "r", "c"] + ["c"] * len(extra)
    align += ["r"] * len(mean_labels) + ["r"] * len(crit)
    first = 2 + len(skill)  # the Copeland column
    compact = [*range(first + 1), *range(first + 2, first + 2 + len(extra) + len(mean_labels))]
    return table(headers, rows, align=align), compact


def ranking_block(data: SiteData, *, link_prefix: str, board: Board | None = None) -> list[str]:
    """Markdown lines of the ranking table inside its ``div.chemrobust-ranking`` wrapper.

    The wrapper's class makes the rank and model columns sticky while the table scrolls sideways
    (``stylesheets/chemrobust.css``); ``data-compact`` names the columns of the compact view, which
    ``javascripts/tables.js`` shows first with a button for the rest. Kept as a class on a wrapper, not
    on the table: Material styles and Tablesort only pick up tables without a class.
    """
    text, compact = ranking_table(data, link_prefix=link_prefix, board=board)
    keep = ",".join(str(i) for i in compact)
    opening = f'<div class="chemrobust-ranking" data-compact="{keep}" markdown="1">'
    return [opening, "", text, "", "</div>", ""]


def _lacking_note(data: SiteData, rk: Ranking) -> list[str]:
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
            for sub_id in data.coverage(name, dataset, ranking=rk)[1]:
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


def _rules_section(data: SiteData, rk: Ranking, title: str) -> list[str]:
    """Return the other rules' ranks of one board's ranked models (none below two), under ``### title``."""
    rules = rk.rules
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
                tip = html.escape(f"{RULE_LABELS[rule]} ties {n} of {len(rules)} models here")
                cells += [f"{rank}=", f'<span title="{tip}">tied</span>']
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
        f"### {esc(title)}",
        "",
        f"{moved} of {len(rules)} models {'moves' if moved == 1 else 'move'} under at least one rule.{note}",
        "",
        table(headers, rows, align=["l", "r"] + ["r", "c"] * len(OTHER_RULES)),
        "",
    ]


def _pairwise_section(data: SiteData, figures: Figures, board: Board) -> list[str]:
    """One board's pairwise-majority heatmap of its ranked models, under ``### <board title>``."""
    pair = board.ranking.pairwise
    if pair is None:
        return []
    majority, wins = pair
    fig = pairwise_figure(majority, wins=wins, names={s: data.name(s) for s in data.ids})
    return [
        f"### {esc(board.spec.title)}",
        "",
        *figures.block(
            fig,
            "overview",
            "pairwise",
            board.spec.name,
            caption=f"Pairwise majorities over the {esc(board.spec.title.lower())} board's headline "
            "criteria (hover: the criteria weight each model wins).",
        ),
    ]


def reference_badge() -> str:
    """Return the *reference* badge of a reference row (no manifest text in it: :func:`reference_notes`)."""
    return '<span class="chemrobust-reference" title="reference: not ranked">reference</span>'


def reference_notes(data: SiteData, board: Board) -> list[str]:
    """Return one line per reference of the board: its name and why it is a reference, as escaped text.

    The note may come from a manifest: it is shown as text under the table, never in an attribute.
    """
    if board.references.empty:
        return []
    items = []
    for sub_id in board.references.index:
        note = " ".join(str(data.references.get(str(sub_id), "")).split())
        name = f"*{submission_link(data, str(sub_id), 'submissions/')}*"
        items.append(f"{name} — {esc(note)}" if note else name)
    return [f"**References** (not ranked): {'; '.join(items)}.", ""]


def _reference_cells(
    data: SiteData, board: Board, sub_id: str, link_prefix: str, n_extra: int, tracks: list[str]
) -> list[str]:
    """Return the cells of one reference row.

    No rank, the name in italics with a badge, its score against the ranked models in parentheses, no
    interval, group or mean rank, then its raw values (never bold: it is not ranked).
    """
    rk, place = board.ranking, board.references.loc[sub_id]
    title = html.escape(f"Copeland score against the {len(rk.copeland)} ranked models; not ranked")
    score = int(place["score"])
    cells = [
        '<span title="reference: not ranked">–</span>',
        f"*{submission_link(data, sub_id, link_prefix)}* {reference_badge()}",
        f"*{robust_cell(data, board, sub_id)}*",
        f'<span title="{title}">({score:+d})</span>' if score else f'<span title="{title}">(0)</span>',
        f"{int(place['wins'])} / {int(place['losses'])} / {int(place['ties'])}",
        *([NO_VALUE] * n_extra),
        *([NO_VALUE] * len(tracks)),
    ]
    values = board.reference_values.loc[sub_id] if sub_id in board.reference_values.index else None
    for c in rk.headline.columns:
        val = None if values is None else values[c]
        if not is_num(val):
            dataset = str(rk.criteria.at[c, "dataset"])
            reason = data.missing_reason(sub_id, str(rk.criteria.at[c, "track"]), dataset)
            cells.append(missing_cell(reason, dataset))
            continue
        txt = f"*{fmt(val, str(rk.criteria.at[c, 'metric']))}*"
        cells.append(txt + seen_mark(data, sub_id, str(rk.criteria.at[c, "dataset"])))
    return cells


def _bold(text: str, bold: bool) -> str:
    return f"**{text}**" if bold else text


def boards_section(data: SiteData, figures: Figures) -> list[str]:
    """Return the Markdown of the boards.

    Per board its sentence, table and notes; then how to read them, the other rules and the pairwise
    heatmaps, each per board.
    """
    out: list[str] = []
    shown = [board for board in data.boards.values() if not board.ranking.copeland.empty]
    for board in shown:
        rk, spec = board.ranking, board.spec
        intervals, why = data.board_intervals.get(spec.name, (None, ""))
        del intervals
        out += [f"### {esc(spec.title)}", "", f"**What it measures.** {spec.measures}", ""]
        out += ranking_block(data, link_prefix="submissions/", board=board)
        tracks = list(dict.fromkeys(str(t) for t in rk.criteria["track"]))
        refs = len(board.references)
        out += [
            f"{plural(len(rk.copeland), 'model')} ranked on {plural(rk.n_criteria, 'criterion', 'criteria')} "
            f"of {plural(len(tracks), 'track')} ({', '.join(link(t, f'tracks/{t}.md') for t in tracks)}); "
            "each track weighs 1, split evenly over its criteria."
            + (f" {plural(refs, 'reference')} shown in italics, not ranked." if refs else ""),
            "",
            "**Robust skill** (the number to quote): the model's skill when the molecule or the question is "
            "rewritten, 0 = a constant or random answerer, 1 = perfect under every rewrite, with its "
            f"{round(100 * BOOTSTRAP['level'])} % "
            "bootstrap interval ([definition](methodology.md#robust-skill)).",
            "",
        ]
        out += reference_notes(data, board)
        if rk.condorcet is not None:
            out += [
                f"**Condorcet winner:** {submission_link(data, rk.condorcet, 'submissions/')} beats every "
                "other ranked model of this board on a weighted majority of its criteria.",
                "",
            ]
        out += _criteria_legend(data, rk)
        out += _lacking_note(data, rk)
        if why:
            out += [why, ""]
    out += _how_to_read(data)
    on_board = {str(s) for b in data.boards.values() for s in b.ranking.copeland.index}
    unranked = [s for s in data.ids if s not in on_board and s not in data.references]
    if unranked:
        links = ", ".join(submission_link(data, s, "submissions/") for s in unranked)
        out += [f"Not ranked (no headline results yet): {links}.", ""]
    rules = [line for board in shown for line in _rules_section(data, board.ranking, board.spec.title)]
    if rules:
        out += [
            "## Other ranking rules",
            "",
            "Each board's criteria and weights ranked by the other rules of Vote'n'Rank "
            "([definitions](methodology.md#ranking-rules)); Δ is the change against Copeland (↑2: this rule "
            "places the model two ranks higher). References are not ranked by any rule.",
            "",
            *rules,
        ]
    pairs = [line for board in shown for line in _pairwise_section(data, figures, board)]
    if pairs:
        out += [
            "## Pairwise wins and losses",
            "",
            "Each cell is one pair of ranked models of a board: green when the row model beats the column "
            "model on the weighted majority of the board's criteria, red when it loses, grey for a tie; rows "
            "and columns are in Copeland order, so a row's Copeland score is its green cells minus its red "
            "cells.",
            "",
            *pairs,
        ]
    return out


def _how_to_read(data: SiteData) -> list[str]:
    """Return the text both boards share: Copeland, intervals, references."""
    out = [
        "### How to read the boards",
        "",
        "An embedding model and a generative model share no criterion, so each kind has its own board; a "
        "model with both capabilities appears on both. Each track column is the model's mean rank on that "
        "track's criteria (1 = best on all of them); after them, each number column is one criterion (all "
        "of them show with the table's *all columns* button). For every pair of ranked models, the one "
        "better on the weighted majority of the board's criteria wins the pair (criteria missing for "
        "either model are ignored). The Copeland score is wins − losses over all pairs "
        "([Vote'n'Rank](methodology.md)); equal scores share a rank. Best ranked value per column in bold.",
        "",
        "**References** (italic, marked *reference*, no rank) are not models of the board's kind — a "
        "fingerprint computed from the structure, a tool user, constant answers — and are never ranked: "
        "they are left out of Copeland, so they move no model. Each is shown where its Copeland score "
        "against the ranked models, in parentheses, would place it: after every model whose score, counting "
        "its duel with the reference, is at least the reference's.",
        "",
    ]
    if any(iv is not None for iv, _ in data.board_intervals.values()):
        level = round(100 * BOOTSTRAP["level"])
        out += [
            f"**Rank interval** is the {level} % range of the model's rank on its board when the molecules "
            f"are resampled ({BOOTSTRAP['n_boot']:,} bootstrap replicates, re-ranked with Copeland over the "
            "board's criteria); models that share a **group** cannot be told apart: neither ranks above the "
            f"other in {round(50 + level / 2)} % of the replicates.",
            "",
        ]
    return out
