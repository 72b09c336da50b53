"""Robust skill: one number per model and board for how much chemistry survives a change of writing.

A visitor wants one figure to quote besides a rank. The obvious one, "the share of its accuracy a model
keeps when the molecule is rewritten", is won by a constant answerer (it keeps 100 % of nothing) and is
0/0 for a model at chance. So the board's number is the **robust skill**: the model's skill *under*
rewriting, on a scale where 0 is what a constant, random or abstaining answerer gets and 1 is perfect and
unmoved by any rewrite. Per criterion (a headline criterion of a track that rewrites the molecule or the
prompt, selected by :data:`RULES`), the value ``v`` becomes a skill ``s`` by its transform:

- ``identity``: ``s = v`` for scores whose chance level is 0 — AMORE's Acc@1 of finding the molecule from
  its rewrite among the others (chance 1/N), exact-match accuracy of structures and formulas under the
  worst prompt template, and T3's chance-corrected agreements (κ consistency ``(C − P_v)/(1 − P_v)``,
  numeric agreement) between the answers to two writings;
- ``two_class``: ``s = 2v − 1`` for scores whose chance level is 1/2 — ROC-AUC and the balanced accuracy
  of a yes/no question (Youden's J);
- ``rmse``: ``s = 1 − RMSE / RMSE₀`` with ``RMSE₀`` the RMSE of predicting the training mean (the skill
  score of regression, Murphy 1988), for the RMSE on the worst rewrite of a downstream test set;

then ``s`` is clipped to [0, 1] (worse than chance is no skill, not negative skill that would offset
another criterion). A track's robust skill is the mean of its criteria's; the board's is the mean over
the board's tracks the model has (each track weighs the same, as in the ranking, SPEC §5):

    R = (1/|T|) Σ_{t∈T} (1/|C_t|) Σ_{c∈C_t} clip(f_c(v_c), 0, 1)

Criteria without a chance level of 0 or 1/2 (counts, MAEs) and tracks that do not rewrite the molecule's
writing (identity-blinded edits) are not in ``R``. The interval resamples the same per-item values as
the rank intervals (:func:`robust_skill_intervals`). :func:`invariance_profile` splits the same
transforms by rewrite family (one bar per family on a model page).

Side effects: none (pure functions of their inputs).

References
----------
.. [1] Murphy, A. H. (1988). "Skill scores based on the mean square error and their relationships to the
   correlation coefficient". Monthly Weather Review 116, 2417–2424.
.. [2] Youden, W. J. (1950). "Index for rating diagnostic tests". Cancer 3, 32–35.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from evaluators.metrics import higher_is_better
from evaluators.schema import TrackOptions
from leaderboard.ranking.headline import headline_rows
from leaderboard.ranking.item_table import prepare_items
from leaderboard.ranking.uncertainty import replicate_values
from leaderboard.tracks import track

__all__ = [
    "FAMILIES",
    "RULES",
    "Rule",
    "invariance_profile",
    "robust_skill",
    "robust_skill_intervals",
    "skill",
]

#: Transforms from a criterion's value to a skill (before clipping to [0, 1]); ``base`` is ``RMSE₀``.
TRANSFORMS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "identity": lambda v, base: v,
    "two_class": lambda v, base: 2.0 * v - 1.0,
    "rmse": lambda v, base: 1.0 - v / base,
}

#: Rewrite families in display order, with their labels (the invariance profile's bars).
FAMILIES: dict[str, str] = {
    "original": "original writing",
    "canonical": "canonical SMILES",
    "explicit_h": "explicit H",
    "kekule": "Kekulé",
    "ring_renumber": "ring renumbering",
    "random_order": "random atom order",
    "worst": "worst rewrite",
    "smiles": "SMILES",
    "iupac": "IUPAC name",
    "selfies": "SELFIES",
    "inchi": "InChI",
    "formula": "formula",
    "wording": "worst wording",
}


@dataclass(frozen=True)
class Rule:
    """How one criterion (or result row) counts: its skill transform and its rewrite family."""

    transform: str
    family: str


#: A track's rule: ``(parts, metric) -> Rule | None``, ``parts`` the criterion's ``dataset/per…`` split on
#: ``/`` (headline criteria) or, for :func:`invariance_profile`, the result row's dimension values.
RuleFn = Callable[[tuple[str, ...], str], "Rule | None"]


def _amore(parts: tuple[str, ...], metric: str) -> Rule | None:
    return Rule("identity", parts[1]) if metric == "acc_at_1" and len(parts) == 2 else None


def _downstream(parts: tuple[str, ...], metric: str) -> Rule | None:
    # Headline criteria: ``<set>`` (original) and ``<set>/worst``; only the worst rewrite is robust skill.
    if len(parts) != 2 or metric not in ("rmse", "roc_auc"):
        return None
    return Rule("rmse" if metric == "rmse" else "two_class", parts[1])


#: T3's pairs → the family of their second writing (:data:`FAMILIES`).
_PAIRS = {"smiles-iupac": "iupac", "smiles-randomized": "random_order", "smiles-selfies": "selfies",
          "smiles-inchi": "inchi"}  # fmt: skip


def _consistency(parts: tuple[str, ...], metric: str) -> Rule | None:
    if metric not in ("kappa_consistency", "numeric_agreement") or len(parts) != 3:
        return None
    return Rule("identity", _PAIRS.get(parts[2], parts[2]))


@lru_cache(maxsize=1)
def _answer_kinds() -> dict[str, frozenset[str]]:
    """Answer kinds of each prompt-robustness task, from the track's published definition (registry)."""
    definition = track("prompt_robustness")(TrackOptions()).definition()
    return {str(t["task"]): frozenset(str(k) for k in t["answer"].values()) for t in definition["tasks"]}


def _prompt_robustness(parts: tuple[str, ...], metric: str) -> Rule | None:
    if len(parts) != 3:
        return None
    kinds = _answer_kinds().get(parts[1], frozenset())
    stat = metric.rsplit("_", 1)[-1]
    base = metric[: -len(stat) - 1]
    family = "wording" if stat == "worst" else parts[2]
    if stat not in ("worst", "mean"):
        return None
    # Exact match of a structure, name or formula: chance 0. Yes/no: balanced accuracy, chance 1/2.
    # Counts (chance 1/K with K unknown here) and numbers (MAE, no chance scale) are left out.
    if base == "accuracy" and kinds and not kinds & {"count", "number", "label"}:
        return Rule("identity", family)
    if base == "balanced_accuracy" and kinds == {"label"}:
        return Rule("two_class", family)
    return None


#: Tracks in robust skill, by name (a track not here, such as identity_blinded, does not rewrite the writing).
RULES: dict[str, RuleFn] = {
    "amore": _amore,
    "downstream": _downstream,
    "consistency": _consistency,
    "prompt_robustness": _prompt_robustness,
}


#: Families counted in robust skill where a track's headline has more than the rewritten score: the worst
#: rewritten test set (not the original one) downstream, the worst template (not the mean one) in T4.
_IN_R: dict[str, set[str]] = {"downstream": {"worst"}, "prompt_robustness": {"wording"}}


def skill(values: np.ndarray, transform: str, base: np.ndarray | float = np.nan) -> np.ndarray:
    """Return ``clip(f(values), 0, 1)`` for the transform named (NaN stays NaN)."""
    out = TRANSFORMS[transform](np.asarray(values, dtype=float), np.asarray(base, dtype=float))
    return np.clip(out, 0.0, 1.0)


def _baselines(results: pd.DataFrame) -> pd.Series:
    """``RMSE₀`` per downstream data set: RMSE of predicting the training mean on the original test set."""
    rows = results.loc[
        (results["track"] == "downstream")
        & (results["metric"] == "baseline_rmse")
        & (results.get("variant", pd.Series("original", index=results.index)) == "original")
    ]
    if rows.empty:
        return pd.Series(dtype=float)
    return pd.to_numeric(rows["value"]).groupby(rows["dataset"].astype(str)).median()


def _skill_columns(results: pd.DataFrame, tracks: Collection[str]) -> pd.DataFrame:
    """One row per robust-skill criterion of ``tracks``: column, track, dataset, transform, family, base."""
    rows = headline_rows(results.loc[results["track"].isin(list(tracks))])
    base = _baselines(results)
    out = []
    for key in rows.drop_duplicates(["track", "criterion", "metric"]).itertuples(index=False):
        rule_fn = RULES.get(str(key.track))
        rule = rule_fn(tuple(str(key.criterion).split("/")), str(key.metric)) if rule_fn else None
        if rule is None or rule.family not in _IN_R.get(str(key.track), {rule.family}):
            continue
        out.append(
            {
                "column": f"{key.track}/{key.criterion}/{key.metric}",
                "track": str(key.track),
                "dataset": str(key.dataset),
                "metric": str(key.metric),
                "transform": rule.transform,
                "family": rule.family,
                "base": float(base.get(str(key.dataset), np.nan)) if rule.transform == "rmse" else np.nan,
            }
        )
    return pd.DataFrame(out, columns=["column", "track", "dataset", "metric", "transform", "family", "base"])


def _combine(values: np.ndarray, columns: pd.DataFrame) -> np.ndarray:
    """Robust skill from raw criterion values ``(..., n_columns)`` laid out as ``columns``: ``(...)``."""
    skills = np.stack(
        [skill(values[..., i], str(c.transform), c.base) for i, c in enumerate(columns.itertuples())], axis=-1
    )
    per_track = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a model without any criterion of a track: NaN
        for name in dict.fromkeys(columns["track"]):
            per_track.append(np.nanmean(skills[..., (columns["track"] == name).to_numpy()], axis=-1))
        return np.nanmean(np.stack(per_track, axis=-1), axis=-1)


def robust_skill(results: pd.DataFrame, tracks: Collection[str]) -> pd.DataFrame:
    """Robust skill of every submission with a value on ``tracks`` (a board's tracks).

    Parameters
    ----------
    results : pandas.DataFrame
        Long results (``submission, track, dataset``, dimensions, ``metric, value``).
    tracks : collection of str
        The board's tracks.

    Returns
    -------
    pandas.DataFrame
        Indexed by submission: ``robust_skill`` (the board's number) and one column per track in
        :data:`RULES` that has criteria (that track's robust skill), NaN where a model has none.
    """
    columns = _skill_columns(results, tracks)
    if columns.empty:
        return pd.DataFrame(columns=["robust_skill"], dtype=float)
    rows = headline_rows(results.loc[results["track"].isin(list(tracks))])
    rows = rows.assign(column=rows["track"] + "/" + rows["criterion"] + "/" + rows["metric"])
    wide = rows.pivot_table(index="submission", columns="column", values="value", aggfunc="first")
    wide = wide.reindex(columns=list(columns["column"]))
    out = pd.DataFrame(index=wide.index)
    out["robust_skill"] = _combine(wide.to_numpy(dtype=float), columns)
    for name in dict.fromkeys(columns["track"]):
        mine = columns.loc[columns["track"] == name].reset_index(drop=True)
        out[name] = _combine(wide[list(mine["column"])].to_numpy(dtype=float), mine)
    out.index.name = "submission"
    return out


def robust_skill_intervals(
    results: pd.DataFrame,
    items: pd.DataFrame,
    tracks: Collection[str],
    *,
    seed: int,
    n_boot: int,
    level: float = 0.9,
) -> pd.DataFrame:
    """Percentile bootstrap interval of :func:`robust_skill`, resampling the criteria's per-item values.

    ``items`` are the per-item values of the headline criteria (the rank bootstrap's input,
    :mod:`leaderboard.ranking.item_table`, oriented higher-is-better); each data set's items are drawn
    with replacement as for the rank intervals, and ``RMSE₀`` is held fixed. Returns ``lo`` and ``hi``
    per submission that has items for every robust-skill criterion it has a value on (others: none).
    """
    columns = _skill_columns(results, tracks)
    if columns.empty or items.empty:
        return pd.DataFrame(columns=["lo", "hi"], dtype=float)
    mine = items.loc[items["criterion"].isin(list(columns["column"]))]
    if mine.empty:
        return pd.DataFrame(columns=["lo", "hi"], dtype=float)
    prep = prepare_items(mine, None)
    layout = columns.set_index("column").loc[list(prep.criteria)].reset_index()
    # Items are oriented higher-is-better (an RMSE criterion is -RMSE): back to the raw values.
    up = higher_is_better()
    sign = np.array([1.0 if up[str(m)] else -1.0 for m in layout["metric"]])
    draws = [_combine(block * sign, layout) for block in replicate_values(prep, seed=seed, n_boot=n_boot)]
    reps = np.concatenate(draws, axis=0)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        lo, hi = np.nanquantile(reps, tail, axis=0), np.nanquantile(reps, 1.0 - tail, axis=0)
    return pd.DataFrame({"lo": lo, "hi": hi}, index=pd.Index(prep.systems, name="submission"))


def invariance_profile(results: pd.DataFrame, submission: str, tracks: Collection[str]) -> pd.DataFrame:
    """Skill per rewrite family of one submission on a board's tracks (point values, for the profile plot).

    Families (:data:`FAMILIES`): AMORE's augmentations (Acc@1, headline setting), downstream's test-set
    rewrites and the original test set (ROC-AUC, RMSE skill), T3's pairs (the second writing), T4's
    notations (mean over templates) and its worst template (*worst wording*). Each value is the mean of
    the clipped skills of that family within a track, then the mean over the tracks that have the family.

    ``results`` may be every model's rows or the submission's own (the site passes its slice).

    Returns
    -------
    pandas.DataFrame
        Columns ``family, label, skill, tracks`` in :data:`FAMILIES` order; empty when nothing applies.
    """
    mine = results.loc[(results["submission"] == submission) & results["track"].isin(list(tracks))]
    base = _baselines(mine)  # the model's own downstream rows carry RMSE₀ of each test set
    found: dict[str, dict[str, list[float]]] = {}
    for name, rule_fn in RULES.items():
        rows = mine.loc[mine["track"] == name]
        if rows.empty:
            continue
        for parts, metric, value in PROFILE_ROWS[name](rows):
            rule = rule_fn(parts, metric)
            if rule is None or not np.isfinite(value):
                continue
            b = float(base.get(parts[0], np.nan)) if rule.transform == "rmse" else np.nan
            value = float(skill(value, rule.transform, b))
            found.setdefault(rule.family, {}).setdefault(name, []).append(value)
    out = [
        {
            "family": fam,
            "label": FAMILIES.get(fam, fam),
            "skill": float(np.mean([np.nanmean(v) for v in found[fam].values()])),
            "tracks": ", ".join(found[fam]),
        }
        for fam in [*FAMILIES, *sorted(set(found) - set(FAMILIES))]
        if fam in found
    ]
    return pd.DataFrame(out, columns=["family", "label", "skill", "tracks"])


def _headline_parts(rows: pd.DataFrame) -> list[tuple[tuple[str, ...], str, float]]:
    """AMORE and T3: the headline criteria, as the rules read them (``dataset/per…`` split on ``/``)."""
    head = headline_rows(rows)
    return [(tuple(str(r.criterion).split("/")), str(r.metric), float(r.value)) for r in head.itertuples()]


def _downstream_parts(rows: pd.DataFrame) -> list[tuple[tuple[str, ...], str, float]]:
    """Downstream: every test set the model was scored on (the original and each rewrite), not the worst."""
    keep = rows.loc[rows["metric"].isin(["rmse", "roc_auc"]) & (rows["variant"] != "worst")]
    return [((str(r.dataset), str(r.variant)), str(r.metric), float(r.value)) for r in keep.itertuples()]


def _prompt_parts(rows: pd.DataFrame) -> list[tuple[tuple[str, ...], str, float]]:
    """T4: the rows over all templates (mean and worst), per task and notation."""
    keep = rows.loc[rows["template"] == "-"] if "template" in rows else rows
    return [
        ((str(r.dataset), str(r.task), str(r.representation)), str(r.metric), float(r.value))
        for r in keep.itertuples()
    ]


#: Result rows of a track read by :func:`invariance_profile`, as ``(parts, metric, value)`` for its rule.
PROFILE_ROWS: dict[str, Callable[[pd.DataFrame], list[tuple[tuple[str, ...], str, float]]]] = {
    "amore": _headline_parts,
    "downstream": _downstream_parts,
    "consistency": _headline_parts,
    "prompt_robustness": _prompt_parts,
}
