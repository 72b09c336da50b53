"""The methodology page (``methodology.md``): every track's declarations, the data sets, the ranking.

Each registered track's section is generated from its class — description, capability, dimensions with
their values, metrics with direction and range, headline criteria, per-item tables — followed by what its
site extension adds (a track's own definitions and formulas). The data sets come from
:data:`evaluators.datasets.DATASETS`, the ranking rules from :data:`leaderboard.ranking.rules.RULE_LABELS`.
"""

from __future__ import annotations

import math

from evaluators.datasets import DATASETS
from leaderboard.markdown import NO_VALUE, code, esc, table, url
from leaderboard.ranking.rules import RULE_LABELS
from leaderboard.site.blocks import SEEN_MARK, details
from leaderboard.site.extensions import extension
from leaderboard.site.robustness import methodology_lines
from leaderboard.site.schema import BOOTSTRAP
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import metric, track, track_names

__all__ = ["methodology_page"]


def _bound(value: float) -> str:
    return "∞" if math.isinf(value) and value > 0 else "−∞" if math.isinf(value) else f"{value:g}"


def _track_section(name: str) -> list[str]:
    cls = track(name)
    out = [f"### {esc(name)}", ""]
    if cls.description:
        out += [esc(cls.description), ""]
    out += [f"Needs the capability {code(cls.capability)}; track version {cls.version}.", ""]
    if cls.citation:
        out += [f"Reference: {esc(cls.citation)}", ""]
    dim_rows = [
        [
            code(d.name),
            esc(d.description),
            ", ".join(f"{code(v)}" + (f" ({esc(d.label(v))})" if d.label(v) != v else "") for v in d.values)
            or ("any label, ordered by its numbers" if d.numeric else "any label"),
        ]
        for d in cls.dimensions
    ]
    # The headline criteria stay open; the full definitions fold (issue 35: a page one can read).
    detail: list[str] = []
    if dim_rows:
        detail += ["Dimensions of its results (`-` where one does not apply):", ""]
        detail += [table(["Dimension", "What it is", "Values"], dim_rows), ""]
    metric_rows = []
    for m in cls.metrics:
        spec = metric(m)
        metric_rows.append(
            [
                f"{esc(spec.label)} ({code(m)})",
                esc(spec.description),
                "higher" if spec.higher_is_better else "lower",
                f"[{_bound(spec.low)}, {_bound(spec.high)}]" + (", counts" if spec.integral else ""),
            ]
        )
    if metric_rows:
        detail += ["Metrics:", ""]
        detail += [table(["Metric", "Meaning", "Better", "Range"], metric_rows), ""]
    if cls.headline:
        out += ["Headline criteria (one per data set and per value of the listed dimensions):", ""]
        for crit in cls.headline:
            where = ", ".join(f"{code(k)} = {code(v)}" for k, v in crit.where) or "every row"
            per = ", ".join(code(p) for p in crit.per) or "nothing else"
            out.append(f"- {esc(crit.label)}: {code(crit.metric)} where {where}; per data set and {per}.")
            for criterion, reason in crit.flat:
                out.append(f"  - not ranked on {code(criterion)} (flat): {esc(reason)}")
        out.append("")
    for spec in cls.tables:
        detail += [f"Per-item table `{spec.file}`: {esc(spec.description)}", ""]
    methodology = extension(name).methodology
    if methodology is not None:
        detail += methodology()
    if detail:
        out += details(f"{esc(name)}: dimensions, metrics, tables and definitions in full", detail)
    return out


def _protocol_section() -> list[str]:
    """Return the answer protocol of the generative tracks, from :mod:`evaluators.asking.protocol` itself."""
    from evaluators.asking import protocol
    from evaluators.asking.tasks import TASKS
    from evaluators.schema import TrackOptions
    from evaluators.tracks import TRACKS

    # Through the registry, from each track's own definition (the host never imports a track directly).
    T4_BUDGETS = TRACKS.get("prompt_robustness")(TrackOptions()).definition()["max_new_tokens"]  # noqa: N806
    T5_BUDGETS = TRACKS.get("identity_blinded")(TrackOptions()).definition()["max_new_tokens"]  # noqa: N806

    def chat(direct: int) -> str:
        return str(protocol.decoding(direct, chat=True)[0])

    budgets = [[esc("consistency"), esc(t.label), str(t.max_new_tokens), chat(t.max_new_tokens)]
               for t in TASKS]  # fmt: skip
    budgets += [[esc(name), f"answer kind {code(kind)}", str(n), chat(n)]
                for name, table_ in (("prompt_robustness", T4_BUDGETS), ("identity_blinded", T5_BUDGETS))
                for kind, n in table_.items()]  # fmt: skip
    kinds = [[code(kind), esc(what)] for kind, what in protocol.WHAT.items()]
    stop = ", ".join(code(repr(s)) for s in protocol.DIRECT_STOP)
    return [
        "## Answer protocol (generative tracks)",
        "",
        "Every question of the generative tracks ends with the same last line, for every model, so that a "
        "model may reason before it answers and is still read like a terse one:",
        "",
        f"> {esc(protocol.ANSWER_LINE)}",
        "",
        "where `{what}` names the answer the question asks for:",
        "",
        table(["Answer kind", "`{what}`"], kinds),
        "",
        "The host reads the **last** marked answer (an `Answer:` line, a `\\boxed{…}`, `<answer>` tags) and "
        "only where there is none falls back to the older rules (a code fence, the first line); each "
        "answer in the per-item tables records the rule that read it. A model is asked as a **chat** model "
        "when its manifest sets `tokenizer.chat_template` (the prompt goes through the tokenizer's chat "
        "template) or when it is an API endpoint; any other model is a **direct** model that continues the "
        f"prompt. A direct model's answer ends at its end of sequence or at {stop} after its first text — a "
        "leading blank line never ends an answer. A chat model has no stop string (reasoning may span "
        f"paragraphs) and at least {protocol.CHAT_BUDGET} new tokens. Budgets (new tokens per answer):",
        "",
        table(["Track", "Task", "Direct model", "Chat model or API"], budgets),
        "",
        "The protocol, the budgets and the stop rule are part of each generative track's definition, hence "
        "of its benchmark version.",
        "",
        *_conformance_lines(),
    ]


def _grading_section() -> list[str]:
    """Return how structure answers are graded (strict, lenient, classes, truths a name cannot carry)."""
    from evaluators.answers.match import CLASS_LABELS, LEVELS

    levels = {
        "exact": "RDKit canonical SMILES, stereo included",
        "stereo": "canonical SMILES without stereo (and isotopes)",
        "tautomer": "the standard InChIKey's first block (formula, connectivity, mobile H; protonation "
                    "is its own layer), or RDKit's canonical tautomer for the same formula",
    }  # fmt: skip
    return [
        "## Grading structure answers",
        "",
        "Every structure answer of the generative tracks (a SMILES, or a name read by OPSIN) is compared "
        "with the truth at one of three levels, finest first:",
        "",
        table(["Level", "Two structures are the same when they have the same …"],
              [[code(level), esc(levels[level])] for level in LEVELS]),  # fmt: skip
        "",
        "- **Strict accuracy** (the ranked one where a track ranks accuracy) is the `exact` match — except "
        "where the molecule was shown as a *name* that cannot carry what the data set's SMILES says: a name "
        "without the SMILES's stereo is graded at `stereo`, a name that writes another tautomer at "
        "`tautomer` (the finest level at which OPSIN's reading of the name and the SMILES agree). A model "
        "cannot be asked for stereo its question does not contain.",
        "- **Lenient accuracy** is the `tautomer` match for every item, reported beside it.",
        "- Items whose name OPSIN cannot read, or reads as another compound, **have no truth**: they are "
        "left out of every score of the questions that show the name, and counted (`n_truth_excluded`).",
        "- Every wrong answer gets one class: "
        + "; ".join(f"{code(c)} = {esc(CLASS_LABELS[c])}" for c in CLASS_LABELS if c != "exact")
        + ". The track pages and each model's page show the shares.",
        "",
    ]


def _conformance_lines() -> list[str]:
    """Return the reader's share of its conformance corpus, measured while the page is built."""
    from evaluators.answers.conformance import conformance

    try:
        report = conformance()
    except (OSError, RuntimeError) as exc:  # OPSIN needs Java: say so rather than print a stale figure
        return [f"The reader's conformance corpus could not be read here ({esc(type(exc).__name__)}).", ""]
    rows = [[code(kind), f"{right} / {total}", f"{100 * right / total:.1f} %"]
            for kind, (right, total) in report.by_kind.items()]  # fmt: skip
    share = 100 * report.right / report.total
    return [
        f"The reader is held to a **conformance corpus** of {report.total} completions "
        f"(`evaluators/answers/conformance.jsonl`: {report.tasks} tasks of T3–T5, {report.styles} writing "
        "styles — terse, sentence, Markdown, LaTeX, code fence, reasoning then `Answer:`, hedged, refusal, "
        "several candidates, units, Unicode dashes and sub- and superscripts), each with the answer a "
        f"careful grader records. Read as graded when this page was built: **{report.right} of "
        f"{report.total} ({share:.1f} %)**; the test suite fails below 100 %.",
        "",
        table(["Answer kind", "Read as graded", "Share"], rows),
        "",
    ]


def _seen_section(data: SiteData) -> list[str]:
    """Explain the "seen in training" flag: what sets it, the known corpora, every flagged cell."""
    from leaderboard.corpora import CORPORA
    from leaderboard.seen_in_training import HOW

    corpora = [[code(c.id), esc(c.label), esc(c.description),
                "by InChIKey" if c.molecules is not None else "declared sets only"]
               for c in CORPORA.values()]  # fmt: skip
    datasets = set(data.results["dataset"].astype(str))  # once, not once per model
    flagged = sorted({(s, d) for s in data.ids for d in datasets if data.seen_note(s, d) is not None})
    rows = [[esc(data.name(s)), esc(d), esc(str(data.seen_note(s, d)))] for s, d in flagged]
    out = [
        "## Seen in training",
        "",
        "A manifest's `training_data` may name a registered data set (`{dataset: freesolv}`) or a known "
        "corpus (`{corpus: uspto}`) besides free text. A model's cell of a data set — in every table, "
        f"the value or the model's name — carries {SEEN_MARK} (its tooltip says why) when:",
        "",
        *[f"- **{esc(k)}**: {esc(v)};" for k, v in HOW.items()],
        "",
        "Such numbers measure memory as much as generalisation; they stay on the board, flagged. Overlaps "
        "are computed by `python -m leaderboard seen-in-training`, which rebuilds every declared corpus "
        "the project can rebuild offline and matches it against every registered data set by standard "
        "InChIKey (the same molecule however it is written), into `site/data/seen_in_training.csv`.",
        "",
        *details("The known corpora", [table(["Corpus", "Name", "What it is", "Checked"], corpora)]),
    ]
    if rows:
        flagged_table = table(["Model", "Data set", "Why"], rows)
        out += details(f"Flagged cells on the board ({len(rows)})", [flagged_table])
    return out


def methodology_page(data: SiteData) -> str:
    """Markdown of the methodology page."""
    evaluated = set(data.results["dataset"])
    ds_rows = []
    for name in sorted(DATASETS.names()):
        spec = DATASETS.get(name)
        files = "<br>".join(f"{code(f.path)}: {code(f.sha256 or NO_VALUE)}" for f in spec.files)
        ds_rows.append(
            [
                f"**{esc(name)}**" + (" (on the board)" if name in evaluated else ""),
                esc(spec.description) or NO_VALUE,
                esc(spec.source) or NO_VALUE,
                esc(spec.license) or NO_VALUE,
                url(spec.citation) if spec.citation else NO_VALUE,
                files,
            ]
        )
    level = round(100 * BOOTSTRAP["level"])
    out = [
        "# Methodology",
        "",
        "## Tracks",
        "",
        "Each track declares, in its class, everything the host needs: the dimensions of its result rows, "
        "its metrics (with direction and range: a value outside the range invalidates the run), its "
        "headline criteria and its per-item tables. The sections below are generated from those "
        "declarations; the [track pages](tracks/index.md) show the results.",
        "",
    ]
    for name in track_names():
        out += _track_section(name)
    out += _protocol_section()
    out += _grading_section()
    out += [
        "## Datasets",
        "",
        "Every registered data set, with its public source, license and the sha256 of each file "
        "(checked on every download and before every run).",
        "",
        *details(
            f"All {len(ds_rows)} data sets: description, source, license, citation, files",
            [table(["Dataset", "Description", "Source", "License", "Citation", "Files (sha256)"], ds_rows)],
        ),
        "Invalid input SMILES are skipped with a count. Each track's benchmark version is a hash "
        "over its data files, its definition and code version and the seed; results are keyed by it.",
        "",
        *_seen_section(data),
        *methodology_lines(),
        "## Ranking: Copeland (Vote'n'Rank)",
        "",
        "The overall ranking follows Vote'n'Rank [1]. Every headline criterion (one per track, data set "
        "and value of the criterion's dimensions, e.g. an augmentation) is a weighted voter; weights split "
        "each track's total of 1 evenly over its criteria. For each pair of models, the weighted criteria "
        "each one wins are counted (criteria missing for either model are ignored — a model that lacks a "
        "track's capability is missing there, never scored zero — and equal scores count for neither); "
        "the pair's majority gives a win, a tie or a loss. The **Copeland score is wins − losses** over "
        "all other models; equal scores share a rank. A **Condorcet winner** beats every other model and "
        "is shown when one exists.",
        "",
        "## Ranking rules",
        "",
        "The overview shows, beside Copeland, how the other rules of Vote'n'Rank rank the same "
        "criteria with the same weights (W(a, b): the weight of the criteria on which a beats b; "
        "T(a, b): the weight of those where both are equal):",
        "",
        table(
            ["Rule", "Score of model a", "Notes"],
            [
                [
                    RULE_LABELS["copeland"],
                    "`#{b : W(a,b) > W(b,a)} − #{b : W(a,b) < W(b,a)}`",
                    "The ranking of record.",
                ],
                [
                    RULE_LABELS["copeland_half_ties"],
                    "`wins + ½ · ties`",
                    "Always the same order as wins − losses (in `rules.csv`, not shown).",
                ],
                [RULE_LABELS["borda"], "`Σ_b W(a,b) + ½ · T(a,b)`", "Points per criterion, summed."],
                [
                    RULE_LABELS["minimax"],
                    "`− max_b (W(b,a) − W(a,b))`",
                    "The model whose worst defeat is smallest wins.",
                ],
                [
                    RULE_LABELS["mean_rank"],
                    "`Σ_c w_c · rank_c(a) / Σ_c w_c`",
                    "Per-criterion ranks averaged (lower is better).",
                ],
                [
                    RULE_LABELS["mean"],
                    "`Σ_c w_c · x_c(a) / Σ_c w_c`",
                    "The usual benchmark average; mixes the criteria's scales.",
                ],
            ],
        ),  # fmt: skip
        "",
        "## Rank intervals and groups",
        "",
        f"Rank intervals come from a paired bootstrap over items [2]: {BOOTSTRAP['n_boot']:,} "
        f"times (seed {BOOTSTRAP['seed']}), each data set's items (molecules) are drawn with replacement, "
        "the same draw serving every model and criterion; each criterion's value is recomputed from the "
        "per-item results the track exports and the table re-ranked with Copeland. A model's interval is "
        f"the {level} % percentile interval of its bootstrap ranks. Two models are *separated* when one "
        f"ranks strictly above the other in at least {round(50 + level / 2)} % of the replicates; groups "
        "are consecutive tiers along the ranking (a model joins the current group unless it is separated "
        "from the group's leader). Intervals are shown only when every ranked track exports per-item "
        "results.",
        "",
        "## Provenance",
        "",
        "Each (submission, track, dataset) evaluation is one MLflow run, keyed by the "
        "submission, its revision, the Docker image id, the track and the benchmark version. "
        "Runs execute in a sandbox ([security model](security.md)) with weights fetched "
        "beforehand at the pinned revision. Every model page lists, per run, the MLflow run id, "
        "image, model revision, data hash, benchmark version, hardware, runner, git commit and "
        "the command that reproduces it.",
        "",
        "## References",
        "",
        "1. M. Rofin, V. Mikhailov, M. Florinsky, A. Kravchenko, T. Shavrina, E. Tutubalina, "
        "D. Karabekyan, E. Artemova. *Vote'n'Rank: Revision of Benchmarking with Social Choice "
        "Theory*. EACL 2023. <https://arxiv.org/abs/2210.05769>",
        "2. B. Efron, R. J. Tibshirani. *An Introduction to the Bootstrap*, ch. 13. Chapman & Hall, 1993.",
        "",
    ]
    return "\n".join(out)
