"""Robust skill on the site: the number beside each board's rank, the invariance profile, the definition.

The science is :mod:`leaderboard.ranking.robustness`; this module computes it for each board of a
:class:`~leaderboard.site.sitedata.SiteData` (point values from ``results.csv.gz``, intervals from the same
per-item values the rank intervals resample) and renders it: a table cell, a model page's paragraph
and profile plot, and the methodology section.

Side effects: none (the figure is written by :class:`leaderboard.site.blocks.Figures`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from leaderboard.markdown import NO_VALUE, esc
from leaderboard.ranking.boards import Board, board_tracks
from leaderboard.ranking.robustness import invariance_profile, robust_skill, robust_skill_intervals
from leaderboard.site.blocks import Figures
from leaderboard.site.figures import single_panel
from leaderboard.site.intervals import stacked_items
from leaderboard.site.schema import BOOTSTRAP
from leaderboard.site.sitedata import SiteData

__all__ = ["board_robustness", "methodology_lines", "robust_cell", "robustness_section"]

#: Columns of :func:`board_robustness`'s frames.
COLUMNS = ("robust_skill", "lo", "hi")


def board_robustness(data: SiteData) -> dict[str, pd.DataFrame]:
    """Robust skill of every model on each board, with its bootstrap interval, by board name.

    Each frame is indexed by submission (ranked models and references alike) with :data:`COLUMNS`;
    ``lo``/``hi`` are NaN where the board's per-item values are missing for the model. An interval is
    widened, if needed, to contain the point value: the skill is clipped at 0, so a model at chance has
    a point value of 0 and replicates that can only be ≥ 0.
    """
    out: dict[str, pd.DataFrame] = {}
    for name, board in data.boards.items():
        tracks = board_tracks(board.spec)
        point = robust_skill(data.results, tracks)
        frame = pd.DataFrame(index=point.index, columns=list(COLUMNS), dtype=float)
        frame["robust_skill"] = point["robust_skill"] if "robust_skill" in point else np.nan
        items = stacked_items(data, list(tracks))
        if not items.empty and not point.empty:
            params = {k: BOOTSTRAP[k] for k in ("seed", "n_boot", "level")}
            iv = robust_skill_intervals(data.results, items, tracks, **params).reindex(frame.index)
            frame["lo"] = np.fmin(iv["lo"], frame["robust_skill"]).where(iv["lo"].notna())
            frame["hi"] = np.fmax(iv["hi"], frame["robust_skill"]).where(iv["hi"].notna())
        out[name] = frame.loc[frame["robust_skill"].notna()]
    return out


def robust_cell(data: SiteData, board: Board, sub_id: str) -> str:
    """Return the table cell ``0.27 [0.26, 0.29]`` (interval when there is one) or the no-value mark."""
    frame = data.board_robustness.get(board.spec.name)
    if frame is None or sub_id not in frame.index:
        return NO_VALUE
    row = frame.loc[sub_id]
    text = f"{float(row['robust_skill']):.2f}"
    if pd.notna(row["lo"]) and pd.notna(row["hi"]):
        # No-break spaces: the value and its interval stay on one line in a narrow column (a phone).
        text += f"\u00a0[{float(row['lo']):.2f},\u00a0{float(row['hi']):.2f}]"
    return text


def profile_figure(profile: pd.DataFrame) -> dict[str, Any] | None:
    """Return the bar chart of a model's skill per rewrite family (``invariance_profile``'s frame)."""
    if profile.empty:
        return None
    labels = [str(v) for v in profile["label"]]  # fixed labels (FAMILIES), never submission text
    bar = {
        "type": "bar",
        "x": labels,
        "y": [float(v) for v in profile["skill"]],
        "text": [f"{float(v):.2f}" for v in profile["skill"]],
        "textposition": "outside",
        "customdata": [str(t) for t in profile["tracks"]],
        "hovertemplate": "%{x}: %{y:.3f}<br>tracks: %{customdata}<extra></extra>",
        "marker": {"color": "#3f6fb5"},
        "showlegend": False,
    }
    fig = single_panel([bar], x_axis={"title": {"text": "rewrite family"}}, y_title="skill (0 = chance)")
    fig["layout"]["height"] = 320
    return fig


def robustness_section(data: SiteData, sub_id: str, figures: Figures) -> list[str]:
    """Model page lines: the robust skill on each board that shows the model, and its invariance profile."""
    out: list[str] = []
    level = round(100 * BOOTSTRAP["level"])
    for board, _ in data.board_places(sub_id):
        frame = data.board_robustness.get(board.spec.name)
        if frame is None or sub_id not in frame.index:
            continue
        cell = robust_cell(data, board, sub_id)
        out += [
            f"**Robust skill on the {esc(board.spec.name)} board: {cell}** ({level} % bootstrap interval, "
            "molecules resampled): the model's skill when the molecule or the question is rewritten, "
            "0 = what a constant or random answerer gets, 1 = perfect under every rewrite "
            "([definition](../methodology.md#robust-skill)).",
            "",
        ]
        rows = data.by_submission.get(sub_id, data.results.iloc[0:0])
        profile = invariance_profile(rows, sub_id, board_tracks(board.spec))
        out += figures.block(
            profile_figure(profile),
            "sub",
            sub_id,
            board.spec.name,
            "invariance-profile",
            caption=f"Invariance profile on the {esc(board.spec.name)} board: skill (0 = chance, 1 = "
            "perfect) per rewrite family, averaged over the tracks that apply it (hover for which).",
        )
    return out


def methodology_lines() -> list[str]:
    """Return the methodology page's definition of robust skill."""
    return [
        "## Robust skill",
        "",
        "One number per model and board, shown first beside the Copeland rank: the model's **skill under "
        "rewriting**, 0 = what a constant, random or abstaining answerer gets, 1 = perfect and unmoved by "
        "every rewrite. *The share of accuracy a model keeps* would be won by a constant answer (it keeps "
        "all of nothing) and is undefined at chance, so the board quotes the skill that survives instead.",
        "",
        "Each headline criterion of a track that rewrites the molecule or the question becomes a skill "
        "`s`, clipped to [0, 1] (worse than chance is no skill):",
        "",
        "- AMORE: Acc@1 of finding the molecule from each rewrite (`s = Acc@1`, chance 1/N);",
        "- downstream: the worst rewritten test set — ROC-AUC `s = 2·AUC − 1`, RMSE `s = 1 − RMSE / RMSE₀` "
        "with `RMSE₀` the RMSE of predicting the training mean (Murphy's skill score);",
        "- consistency: κ consistency and numeric agreement between the answers to two writings "
        "(already chance-corrected, `s = κ`);",
        "- prompt robustness: the worst template — exact-match accuracy of structures and formulas "
        "(`s = accuracy`), balanced accuracy of yes/no questions (`s = 2·BA − 1`). Counts (chance 1/K) and "
        "numbers (MAE) are left out: they have no chance level of 0 or ½ to measure from;",
        "- identity-blinded edits do not rewrite the molecule's writing and are not in it.",
        "",
        "A track's robust skill is the mean of its criteria's; the board's the mean over its tracks the "
        "model has: `R = mean_t mean_{c∈t} clip(s_c, 0, 1)` — each track weighs the same, as in the "
        "ranking. The interval is a percentile bootstrap "
        f"({round(100 * BOOTSTRAP['level'])} %, {BOOTSTRAP['n_boot']} replicates) over the same per-item "
        "values as the rank intervals, `RMSE₀` held fixed, widened to contain the point value. The "
        "*invariance profile* on each model page splits the same skills by rewrite family: AMORE's "
        "augmentations, downstream's rewritten test sets and the original one, T3's second writing, "
        "T4's notations (mean over templates) and its worst template.",
        "",
    ]

