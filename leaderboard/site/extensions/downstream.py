"""The downstream track's (T2) site extension: test-set tables, degradation plots, rankings per test set.

Registered as ``EXTENSIONS["downstream"]``. A linear probe fitted on frozen embeddings of a data set's
training molecules is scored on the original test set and on five rewritten ones
(:mod:`evaluators.tracks.downstream`). The page shows:

- once, before the data sets (:func:`track_summary`): the frozen-probe note, and AMORE's Table 9 view —
  for each test set (original and every rewrite) the Copeland ranking of the models over the data sets,
  with the Kendall τ-b of each rewritten test set's ranking against the original one;
- per data set (:func:`track_sections`): each model's score per test set (the original with its bootstrap
  interval), the worst rewrite and its degradation with the paired interval, the degradation per rewrite,
  and a plot of it (> 0 = worse);
- per model and data set (:func:`submission_sections`): its scores per test set and the test molecules
  whose prediction a rewrite moved the most.

:func:`item_values` gives the rank bootstrap the per-molecule terms of the headline criteria from the
``predictions`` table (:mod:`leaderboard.ranking.item_table`, criteria made of parts); :func:`methodology`
states the design. Everything a submission or a data file controls is escaped (:mod:`leaderboard.markdown`).

References
----------
.. [1] Ganeeva et al., AMORE: SMILES augmentation robustness of chemical language models, MoleculeNet
   experiment and Table 9 (``../shared/papers/amore-smiles-augmentation-robustness.txt``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evaluators.tracks.downstream import DOWNSTREAM_TASKS, N_BOOT, ORIGINAL, SPLIT_FRACTIONS, WORST
from evaluators.tracks.downstream.probes import N_FOLDS
from leaderboard.markdown import NO_VALUE, code, esc, link, table
from leaderboard.ranking.copeland import copeland_ranking
from leaderboard.ranking.stability import kendall_tau_b
from leaderboard.site.blocks import Figures, seen_mark
from leaderboard.site.extensions import EXTENSIONS, Extension
from leaderboard.site.figures import display_name, legend, round_floats, submission_colours
from leaderboard.site.molecule_ids import molecule_cell, molecule_names
from leaderboard.site.pages.explorer import Explorer
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import metric as metric_spec
from leaderboard.tracks import track

TRACK = "downstream"
PREDICTIONS = "predictions"
#: The score metric per task kind (MoleculeNet's recommendation).
SCORE = {"regression": "rmse", "classification": "roc_auc"}
#: The rewritten test sets, in display order (every value of ``variant`` but the original and worst).
REWRITES: tuple[str, ...] = tuple(
    v for v in track(TRACK).dimension("variant").values if v not in (ORIGINAL, WORST)
)
#: Test molecules listed per model and data set as the ones a rewrite moved the most.
MOVED_SHOWN = 5
#: Longest string shown in the moved-molecules table (a longer one is cut, with an ellipsis).
MAX_SHOWN = 80
FROZEN_NOTE = (
    "The paper fine-tunes whole models; a frozen-embedding probe is our CPU-feasible default. A linear "
    "probe (ridge regression or L2 logistic regression) is fitted on the frozen embeddings of the original "
    "training molecules, so the scores measure what the embeddings hold, not what fine-tuning can recover."
)


def _label(variant: str) -> str:
    return track(TRACK).dimension("variant").label(variant)


def _num(value: Any, digits: int = 3, *, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return NO_VALUE
    v = round(float(value), digits)
    # A zero change shows as 0.000, not as +0.000 or as the -0.000 of a float difference.
    return f"{v + 0.0:{'+' if sign and v != 0 else ''}.{digits}f}"


def _interval(value: Any, low: Any, high: Any, *, sign: bool = False) -> str:
    """``0.812 [0.780, 0.840]``; the value alone when a bound is missing, a dash without a value."""
    text = _num(value, sign=sign)
    if text == NO_VALUE or NO_VALUE in (_num(low), _num(high)):
        return text
    return f"{text} [{_num(low, sign=sign)}, {_num(high, sign=sign)}]"


def _frame(data: SiteData, dataset: str | None = None) -> pd.DataFrame:
    rows = data.track_results(TRACK)
    return rows if dataset is None else rows.loc[rows["dataset"] == dataset]


def _values(rows: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """``{(submission, variant, metric): value}`` of result rows."""
    return {(str(s), str(v), str(m)): float(x) for s, v, m, x in zip(
        rows["submission"], rows["variant"], rows["metric"], rows["value"], strict=True)}  # fmt: skip


def _score_metric(rows: pd.DataFrame) -> str | None:
    """Return the score metric a data set's rows carry (``rmse`` or ``roc_auc``), or ``None``."""
    present = set(rows["metric"].astype(str))
    return next((m for m in SCORE.values() if m in present), None)


def _kinds(data: SiteData) -> dict[str, str]:
    """Task kind per data set: from the metric its result rows carry (what the ranking ranks)."""
    rows = _frame(data)
    out = {}
    for dataset, grp in rows.groupby("dataset", sort=True, observed=True):
        metric = _score_metric(grp)
        if metric is None:
            metric = SCORE.get(DOWNSTREAM_TASKS.get(str(dataset), ("", ""))[1])
        if metric is not None:
            out[str(dataset)] = "regression" if metric == "rmse" else "classification"
    return out


def _worst_rewrite(values: dict[tuple[str, str, str], float], sub: str) -> str | None:
    """Return the rewrite the ``worst`` rows stand for: the first whose degradation equals the worst one."""
    worst = values.get((sub, WORST, "degradation"))
    if worst is None or not math.isfinite(worst):
        return None
    for v in REWRITES:
        d = values.get((sub, v, "degradation"))
        # The scorer picks the first rewrite of the largest degradation; the exports keep floats exactly.
        if d is not None and math.isclose(d, worst, rel_tol=0.0, abs_tol=1e-12):
            return v
    return None


def _baseline(values: dict[tuple[str, str, str], float], subs: list[str], metric: str) -> float | None:
    """Return the score of a model that reads nothing: the training mean's RMSE (its rows), or AUC 0.5."""
    if metric == "roc_auc":
        return 0.5
    found = [values[(s, ORIGINAL, "baseline_rmse")] for s in subs if (s, ORIGINAL, "baseline_rmse") in values]
    return found[0] if found else None


def _no_better(value: float | None, baseline: float | None, metric: str) -> bool:
    if value is None or baseline is None or not math.isfinite(value):
        return False
    return value >= baseline if metric == "rmse" else value <= baseline


def _direction(metric: str) -> str:
    spec = metric_spec(metric)
    return f"{spec.label}, {'higher' if spec.higher_is_better else 'lower'} is better"


def track_sections(data: SiteData, dataset: str, figures: Figures) -> list[str]:
    """Scores per test set, degradation per rewrite (table and plot) of one data set."""
    rows = _frame(data, dataset)
    metric = _score_metric(rows) if not rows.empty else None
    if metric is None:
        return []
    values = _values(rows)
    subs = data.order({str(s) for s in rows["submission"].unique()})
    rewrites = [v for v in REWRITES if any((s, v, metric) in values for s in subs)]
    out = ["### Scores per test set", "",
           f"The probe's score ({esc(_direction(metric))}) on the original test set, with its 95 % bootstrap "
           "interval over test molecules, and on each rewritten test set (every test molecule rewritten one "
           "way; the probe is the same). The *worst rewrite* costs the most; its degradation is the score "
           "lost against the original test set (> 0 = worse, 0 = robust), with its paired 95 % bootstrap "
           "interval. Frozen-embedding probe: see the note at the top of the page.", ""]  # fmt: skip
    header = ["Model", "original [95 %]", *(esc(_label(v)) for v in rewrites), "worst rewrite",
              "degradation [95 %]"]  # fmt: skip
    baseline = _baseline(values, subs, metric)
    body = []
    for s in subs:
        worst = _worst_rewrite(values, s)
        mark = (
            " †"
            if _no_better(values.get((s, ORIGINAL, metric)), baseline, metric)
            or _no_better(values.get((s, WORST, metric)), baseline, metric)
            else ""
        )
        body.append([
            link(data.name(s), f"../submissions/{s}.md") + mark + seen_mark(data, s, dataset),
            _interval(values.get((s, ORIGINAL, metric)), values.get((s, ORIGINAL, "score_low")),
                      values.get((s, ORIGINAL, "score_high"))),
            *(_num(values.get((s, v, metric))) for v in rewrites),
            esc(_label(worst)) if worst is not None else NO_VALUE,
            _interval(values.get((s, WORST, "degradation")), values.get((s, WORST, "degradation_low")),
                      values.get((s, WORST, "degradation_high")), sign=True),
        ])  # fmt: skip
    if baseline is not None:
        what = "predict the training mean" if metric == "rmse" else "predict the majority class"
        body.append([f"*{what}*", _num(baseline), *(_num(baseline) for _ in rewrites), NO_VALUE, _num(0.0)])
    out += [table(header, body, align=["l", "r", *["r"] * len(rewrites), "l", "r"]), ""]
    if baseline is not None:
        out += [
            "The last row reads nothing: "
            + (
                f"every test molecule predicted as the training molecules' mean label (RMSE {_num(baseline)})"
                if metric == "rmse"
                else "one class for every molecule (ROC-AUC 0.500)"
            )
            + ". † = no better than it on the original test set or on the worst rewrite.",
            "",
        ]
    out += ["### Degradation per rewrite", "",
            "Score lost on each rewritten test set against the original one, in the score's units (RMSE "
            "gained or ROC-AUC lost): > 0 = worse, 0 = robust, < 0 = the rewrite helped. In brackets the "
            "paired 95 % bootstrap interval (the same test molecules drawn for both sets); an interval that "
            "excludes 0 is a change beyond resampling noise.", ""]  # fmt: skip
    rows_deg = [[link(data.name(s), f"../submissions/{s}.md") + seen_mark(data, s, dataset)]
                + [_interval(values.get((s, v, "degradation")), values.get((s, v, "degradation_low")),
                             values.get((s, v, "degradation_high")), sign=True) for v in rewrites]
                for s in subs]  # fmt: skip
    out += [table(["Model", *(esc(_label(v)) for v in rewrites)], rows_deg,
                  align=["l", *["r"] * len(rewrites)]), ""]  # fmt: skip
    out += figures.block(
        _degradation_figure(values, subs, rewrites, data),
        TRACK,
        dataset,
        "degradation",
        caption="Degradation per rewrite and model, with the paired 95 % bootstrap interval: > 0 = worse "
        "than on the original test set, 0 (dashed line) = robust. An invariant model (the Morgan "
        "fingerprint reference) sits on the line by construction.",
    )
    return out


def _degradation_figure(values: dict[tuple[str, str, str], float], subs: list[str], rewrites: list[str],
                        data: SiteData) -> dict[str, Any] | None:  # fmt: skip
    """Return grouped bars: x the rewrites, one bar per model, error bars the paired interval."""
    colours = submission_colours(subs)
    names = {s: data.name(s) for s in subs}
    traces = []
    for s in subs:
        y, plus, minus, bounds = [], [], [], []
        for v in rewrites:
            d, lo, hi = (values.get((s, v, f"degradation{e}")) for e in ("", "_low", "_high"))
            y.append(d)
            # A percentile interval need not contain the point estimate; a bar's whisker is never negative.
            plus.append(max(0.0, hi - d) if d is not None and hi is not None else 0.0)
            minus.append(max(0.0, d - lo) if d is not None and lo is not None else 0.0)
            bounds.append([lo, hi])
        if all(v is None for v in y):
            continue
        traces.append({
            "type": "bar", "name": display_name(names, s), "x": [_label(v) for v in rewrites], "y": y,
            "marker": {"color": colours[s]}, "customdata": bounds,
            "error_y": {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus,
                        "visible": True},
            "hovertemplate": "%{x}: %{y:+.3f} [%{customdata[0]:+.3f}, %{customdata[1]:+.3f}]"
                             "<extra>%{fullData.name}</extra>",
        })  # fmt: skip
    if not traces:
        return None
    layout = {
        "barmode": "group", "height": 420, "hovermode": "closest", "legend": legend(-0.2),
        "margin": {"l": 60, "r": 20, "t": 20, "b": 40},
        "xaxis": {"type": "category", "title": {"text": "rewritten test set"}},
        "yaxis": {"title": {"text": "degradation (> 0 = worse)"}, "zeroline": True},
        "shapes": [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": 0, "y1": 0,
                    "line": {"dash": "dash", "width": 1.5, "color": "#888888"}}],
    }  # fmt: skip
    return round_floats({"data": traces, "layout": layout})


def rankings_per_test_set(data: SiteData) -> dict[str, pd.DataFrame]:
    """Copeland ranking of the models over the data sets, per test set (AMORE's Table 9).

    Parameters
    ----------
    data : SiteData
        The board.

    Returns
    -------
    dict of str to pandas.DataFrame
        Per test set (``original``, then the rewrites present), the
        :func:`leaderboard.ranking.copeland.copeland_ranking` of the models whose criteria are that test
        set's score on each data set, oriented higher-is-better (RMSE negated), each data set weighing 1.
    """
    rows = _frame(data)
    rows = rows.loc[rows["metric"].astype(str).isin(list(SCORE.values()))]
    out: dict[str, pd.DataFrame] = {}
    for v in (ORIGINAL, *REWRITES):
        sel = rows.loc[rows["variant"].astype(str) == v]
        if sel.empty:
            continue
        metric = sel["metric"].astype(str)
        value = sel["value"].astype(float).where(metric != "rmse", -sel["value"].astype(float))
        wide = pd.DataFrame(
            {
                "submission": sel["submission"].astype(str),
                "criterion": sel["dataset"].astype(str) + "/" + metric,
                "value": value,
            }
        ).pivot(index="submission", columns="criterion", values="value")
        out[v] = copeland_ranking(wide)  # fmt: skip
    return out


def track_summary(data: SiteData, figures: Figures) -> list[str]:
    """Return the frozen-probe note and the Copeland ranking of the models per test set, with Kendall τ-b."""
    del figures
    out = ['!!! note "Frozen-embedding probe, not fine-tuning"', f"    {FROZEN_NOTE}", ""]
    rankings = rankings_per_test_set(data)
    if ORIGINAL not in rankings:
        return out
    subs = data.order(set().union(*(set(r.index.astype(str)) for r in rankings.values())))
    original_rank = rankings[ORIGINAL]["rank"]
    subs = sorted(subs, key=lambda s: original_rank.get(s, len(subs) + 1))  # stable: ties keep board order
    sets = list(rankings)
    out += ["## Ranking per test set", "",
            "As in AMORE's Table 9: for each test set, the models ranked by Copeland's rule over the data "
            "sets (each data set a criterion of weight 1; RMSE lower is better, ROC-AUC higher). A robust "
            "model keeps its place whichever way the test molecules are written. Rank 1 = best; a data set "
            "a model lacks is left out of its pairs.", ""]  # fmt: skip
    body = [[link(data.name(s), f"../submissions/{s}.md")]
            + [str(int(rankings[v].at[s, "rank"])) if s in rankings[v].index else NO_VALUE for v in sets]
            for s in subs]  # fmt: skip
    out += [table(["Model", *(esc(_label(v)) for v in sets)], body, align=["l", *["r"] * len(sets)]), ""]
    taus = []
    base = rankings[ORIGINAL]["score"].astype(float)
    for v in sets[1:]:
        other = rankings[v]["score"].astype(float)
        common = [s for s in subs if s in base.index and s in other.index]
        tau = kendall_tau_b(base.reindex(common).to_numpy(), other.reindex(common).to_numpy())
        moved = sum(int(rankings[v].at[s, "rank"] != rankings[ORIGINAL].at[s, "rank"]) for s in common)
        taus.append([esc(_label(v)), _num(tau), str(moved), str(len(common))])
    if taus:
        out += ["Kendall τ-b between each rewritten test set's ranking (Copeland scores) and the original "
                "one: 1 = the same order, −1 = reversed; a dash when fewer than two models are ranked or "
                "every model ties.", "",
                table(["Test set", "τ-b vs original", "models whose rank changes", "models"], taus,
                      align=["l", "r", "r", "r"]), ""]  # fmt: skip
    return out


def submission_sections(
    data: SiteData, sub_id: str, dataset: str, figures: Figures, explorer: Explorer
) -> list[str]:
    """One model's score and degradation per test set, and the molecules a rewrite moved the most."""
    del figures, explorer
    rows = data.submission_results(sub_id, TRACK, dataset)
    metric = _score_metric(rows) if not rows.empty else None
    if metric is None:
        return []
    values = _values(rows)
    worst = _worst_rewrite(values, sub_id)
    body = []
    for v in (ORIGINAL, *REWRITES, WORST):
        if (sub_id, v, metric) not in values:
            continue
        name = _label(v) + (f" ({_label(worst)})" if v == WORST and worst is not None else "")
        got = {m: values.get((sub_id, v, m)) for m in (metric, "score_low", "score_high", "degradation",
                                                       "degradation_low", "degradation_high", "n_changed",
                                                       "n_excluded")}  # fmt: skip
        drop = _interval(got["degradation"], got["degradation_low"], got["degradation_high"], sign=True)
        body.append([esc(name), _interval(got[metric], got["score_low"], got["score_high"]), drop,
                     _num(got["n_changed"], 0), _num(got["n_excluded"], 0)])  # fmt: skip
    out = ["#### Downstream probe per test set", "",
           f"{esc(_direction(metric))}; degradation > 0 = worse than on the original test set. Rewritten: "
           "test molecules whose rewrite differs from the original string; kept: rewrites that failed the "
           "identity check, scored with the original string.", "",
           table(["Test set", "score [95 %]", "degradation [95 %]", "rewritten", "kept"], body,
                 align=["l", "r", "r", "r", "r"]), ""]  # fmt: skip
    return out + _moved(data, sub_id, dataset)


def _by_key(data: SiteData) -> dict[tuple[str, str], pd.DataFrame]:
    """Return the ``predictions`` rows of this track per (submission, data set), split once per generation."""
    key = f"{TRACK}/predictions-by-key"
    if key not in data.cache:
        frame = data.tables.get(PREDICTIONS)
        split: dict[tuple[str, str], pd.DataFrame] = {}
        if frame is not None and not frame.empty:
            mine = frame.loc[frame["track"].astype(str) == TRACK]
            for (s, d), grp in mine.groupby(["submission", "dataset"], sort=True, observed=True):
                split[(str(s), str(d))] = grp
        data.cache[key] = split
    return data.cache[key]


def _short(text: Any) -> str:
    s = str(text)
    return s if len(s) <= MAX_SHOWN else s[: MAX_SHOWN - 1] + "…"


def _moved(data: SiteData, sub_id: str, dataset: str) -> list[str]:
    """Return a table of the test molecules a rewrite moved the most (ties by molecule id, then rewrite)."""
    grp = _by_key(data).get((sub_id, dataset))
    if grp is None or grp.empty:
        return []
    frame = pd.DataFrame(
        {
            "variant": grp["variant"].astype(str),
            "id": grp["id"].astype(str),
            "status": grp["status"].astype(str),
            "string": grp["string"].astype(str),
            "label": grp["label"].astype(float),
            "prediction": grp["prediction"].astype(float),
        }
    )
    base = frame.loc[frame["variant"] == ORIGINAL].drop_duplicates("id").set_index("id")
    moved = frame.loc[frame["variant"].isin(list(REWRITES)) & (frame["status"] == "changed")
                      & frame["id"].isin(base.index)].copy()  # fmt: skip
    if moved.empty:
        return []
    moved["before"] = base["prediction"].reindex(moved["id"]).to_numpy()
    moved["shift"] = (moved["prediction"] - moved["before"]).abs()
    moved = moved.loc[moved["shift"] > 0]
    moved = moved.sort_values(["shift", "id", "variant"], ascending=[False, True, True])
    if moved.empty:
        return ["No rewrite changed any of this model's predictions on this data set.", ""]
    names = molecule_names(data, dataset)  # FreeSolv's IUPAC names, from the consistency track's answers
    body = [[molecule_cell(dataset, _short(r.id), names.get(r.id)), esc(_label(r.variant)),
             code(_short(base.at[r.id, "string"])), code(_short(r.string)), _num(r.label), _num(r.before),
             _num(r.prediction)]
            for r in moved.head(MOVED_SHOWN).itertuples(index=False)]  # fmt: skip
    return ["Test molecules whose prediction a rewrite moved the most (probability of the positive class, "
            "or the predicted value):", "",
            table(["Molecule", "Rewrite", "Original string", "Rewritten string", "Label", "Prediction",
                   "After rewrite"], body, align=["l", "l", "l", "l", "r", "r", "r"]), ""]  # fmt: skip


def _placements(label: np.ndarray, prediction: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """DeLong placement values: per positive the share of negatives below it, per negative of positives above.

    Ties count one half. Both means equal the ROC-AUC; ``None`` when a class is absent.
    """
    pos = label == 1
    p, n = prediction[pos], prediction[~pos]
    if not len(p) or not len(n):
        return None
    sn, sp = np.sort(n), np.sort(p)
    lo, hi = np.searchsorted(sn, p, "left"), np.searchsorted(sn, p, "right")
    v = np.empty(len(label))
    v[pos] = (lo + 0.5 * (hi - lo)) / len(n)
    lo, hi = np.searchsorted(sp, n, "left"), np.searchsorted(sp, n, "right")
    v[~pos] = (len(p) - hi + 0.5 * (hi - lo)) / len(p)
    return v, np.where(pos, "pos", "neg")


def _items(sub: str, dataset: str, kind: str, grp: pd.DataFrame) -> list[pd.DataFrame]:
    """Item rows of one model and data set: its score on the original test set and on the worst rewrite."""
    base = f"{TRACK}/{dataset}/"
    variant = grp["variant"].astype(str).to_numpy()
    ids = grp["id"].astype(str).to_numpy()
    label = grp["label"].astype(float).to_numpy()
    pred = grp["prediction"].astype(float).to_numpy()
    # Only the declared test sets: a part named after anything else could not be the reference's peer.
    keep = np.isin(variant, [ORIGINAL, *REWRITES]) & np.isfinite(label) & np.isfinite(pred)
    variant, ids, label, pred = variant[keep], ids[keep], label[keep], pred[keep]

    def rows(criterion: str, mask: np.ndarray, part: np.ndarray, combine: str, value: np.ndarray):
        return pd.DataFrame({"submission": sub, "criterion": base + criterion, "dataset": dataset,
                             "item": ids[mask], "part": part, "combine": combine,
                             "value": value})  # fmt: skip

    orig = variant == ORIGINAL
    if kind == "regression":
        # -(squared error): the part mean is -MSE; "root" makes it -RMSE, "worst_variant_root" the worst
        # rewrite's -RMSE.
        value = -((pred - label) ** 2)
        return [rows("rmse", orig, np.full(orig.sum(), ORIGINAL), "root", value[orig]),
                rows(f"{WORST}/rmse", ~orig, variant[~orig], "worst_variant_root", value[~orig])]  # fmt: skip
    out = []
    for v in dict.fromkeys(variant.tolist()):
        mask = variant == v
        placed = _placements(label[mask], pred[mask])
        if placed is None:
            continue
        value, sub_part = placed
        part = np.char.add(f"{v}|", sub_part.astype(str))
        if v == ORIGINAL:
            out.append(rows("roc_auc", mask, part, "mean", value))
        else:
            out.append(rows(f"{WORST}/roc_auc", mask, part, "worst_variant", value))
    return out


def item_values(data: SiteData) -> pd.DataFrame | None:
    """Per-molecule terms of the headline criteria, for the rank bootstrap (oriented higher-is-better).

    Criteria ``downstream/<data set>/<metric>`` as the headline ranking names them, one resampling pool per
    data set (items: test molecule ids, paired across test sets):

    - ``rmse`` (original test set): items ``-(prediction - label)²``, part ``original``, combine ``root``
      (``-sqrt(MSE)`` = minus the RMSE);
    - ``roc_auc`` (original test set): DeLong placement values — per positive the share of negatives
      predicted lower, per negative the share of positives predicted higher, ties one half — in parts
      ``original|pos`` and ``original|neg``, combine ``mean`` (both part means equal the AUC);
    - ``worst/rmse`` and ``worst/roc_auc`` (the worst rewrite): the same items for every rewritten test
      set, parts named after the test set (``kekule`` or ``kekule|pos`` …), combine ``worst_variant_root``
      (regression: minus the largest RMSE) or ``worst_variant`` (classification: the least AUC).

    Returns
    -------
    pandas.DataFrame or None
        Columns ``submission, criterion, dataset, item, part, combine, value``; ``None`` without
        predictions.
    """
    groups = _by_key(data)
    kinds = _kinds(data)
    frames = []
    for (sub, dataset), grp in groups.items():
        kind = kinds.get(dataset)
        if kind is not None:
            frames += _items(sub, dataset, kind, grp)
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else None


def methodology() -> list[str]:
    """T2's design: split, probe, what the container sees, metrics, intervals, criteria, the reference."""
    train, _, test = (round(100 * f) for f in SPLIT_FRACTIONS)
    return [
        "The downstream track follows AMORE's MoleculeNet experiment [1]. Each data set (regression: ESOL, "
        "Lipophilicity, FreeSolv, solubility; classification: BBBP, BACE, ClinTox) is split as MoleculeNet "
        "recommends: by Bemis–Murcko scaffold for BBBP and BACE (the rare scaffolds in test), at random "
        f"(seeded) for the others, {train} % train, {test} % test. Every molecule is first written in one "
        "notation — RDKit's canonical SMILES without stereo marks — because the files as distributed carry "
        "the label in their writing: ClinTox writes every toxic aromatic molecule in Kekulé form and no "
        "non-toxic one (that flag alone: test ROC-AUC 0.98), BBBP's stereo marks reach 0.75; and ids are "
        "opaque and the rows shuffled, because bace.csv and BBBP.csv are sorted by class (a row number: "
        "0.99 and 0.96). A set whose view still lets a writing or bookkeeping shortcut (Kekulé form, "
        "explicit hydrogens, stereo marks, the id, the row position; not the length, which is the "
        "molecule's size) reach a test ROC-AUC above 0.60 — or above chance's 3-σ band on a small test "
        "set — is refused. Every test molecule is rewritten with four augmentations of the AMORE track "
        "(explicit hydrogens, Kekulé, ring renumbering, random atom order), seeded per molecule and checked "
        "to be the same molecule; a rewrite that fails the check keeps the original string (counted as "
        "*kept*), so every test set scores the same molecules.",
        "",
        "Labels never enter the container: it gets a label-free view of the set (id, split, SMILES), embeds "
        "every string once (last layer) and writes the embeddings. The host fits the probe — standardised "
        "features, then ridge regression (penalty chosen by leave-one-out cross-validation) or L2 logistic "
        f"regression (penalty chosen by stratified {N_FOLDS}-fold cross-validation on ROC-AUC), the "
        "cross-validation on the training molecules only — and predicts the original and every rewritten "
        "test set with that same probe.",
        "",
        f"{FROZEN_NOTE} The Morgan fingerprint reference maps every rewrite of a molecule to the same "
        "features, so its degradation is exactly 0 by construction: the floor a robust model reaches.",
        "",
        table(
            ["Metric", "Definition"],
            [
                ["RMSE (regression, ↓)", "root mean squared error of the predictions on a test set"],
                ["ROC-AUC (classification, ↑)", "area under the ROC curve of the positive-class probability"],
                ["score interval", f"95 % percentile bootstrap over test molecules ({N_BOOT} draws)"],
                [
                    "degradation (↓)",
                    "score lost against the original test set in the score's units (RMSE "
                    "gained, ROC-AUC lost); > 0 = worse, 0 = robust; relative: over the original score",
                ],
                ["degradation interval", "paired bootstrap: the same test molecules drawn for both sets"],
                ["worst rewrite", "the rewrite with the largest degradation (the first on a tie)"],
            ],
        ),  # fmt: skip
        "",
        "Ranked criteria, per data set: RMSE or ROC-AUC on the original test set, and on the worst "
        "rewritten test set. A model that reads nothing scores the training mean's RMSE or ROC-AUC 0.5 on "
        "both (shown as the last row of each table; † marks a model no better than it). The degradation "
        "is shown, not ranked: a model that ignores its input cannot degrade, so a constant embedder would "
        "win it (version 1 ranked it). The rank bootstrap resamples test molecules: squared errors (RMSE, "
        "the root taken after averaging) or DeLong placement values (ROC-AUC), paired across the test sets.",
        "",
        "The track page also shows AMORE's Table 9: per test set, the Copeland ranking of the models over "
        "the data sets, and the Kendall τ-b of each rewritten test set's ranking against the original one.",
        "",
        "References: [1] Ganeeva et al., AMORE (MoleculeNet experiment, Table 9).",
        "",
    ]


EXTENSIONS.register(TRACK)(
    Extension(
        track_sections=track_sections,
        submission_sections=submission_sections,
        item_values=item_values,
        methodology=methodology,
        track_summary=track_summary,
    )
)
