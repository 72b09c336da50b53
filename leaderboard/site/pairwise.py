"""The pairwise heatmap of the overview: which model beats which on a weighted majority of the criteria.

Returns plotly figure JSON (plain dicts), drawn in the browser by ``site/javascripts/plots.js``; writes no
files. A pure function of the ranking's pairwise tables (:mod:`leaderboard.ranking.copeland`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from leaderboard.site.figures import display_name, round_floats

__all__ = ["pairwise_figure"]


def pairwise_figure(
    majority: pd.DataFrame,
    *,
    wins: pd.DataFrame | None = None,
    names: Mapping[str, str] | None = None,
) -> dict[str, Any] | None:
    """Heatmap of pairwise majorities: +1 where the row model beats the column model, -1 where it loses.

    Parameters
    ----------
    majority : pandas.DataFrame
        Systems x systems matrix of +1 / 0 / -1, as :func:`leaderboard.ranking.copeland.pairwise_majority`,
        with rows and columns in the order to show (the ranking's, best first).
    wins : pandas.DataFrame, optional
        Systems x systems weighted criteria won by the row system against the column system
        (:func:`leaderboard.ranking.copeland.pairwise_wins`), shown on hover.
    names : mapping of str to str, optional
        Display name per submission id (default: the id).

    Returns
    -------
    dict or None
        The figure (a ``heatmap`` trace, no template), or ``None`` for fewer than two systems. Green is
        a win, grey a tie, red a loss; the diagonal is empty. Rows run top to bottom in the given order;
        axis labels are hidden above 40 models (hover shows them).
    """
    systems = [str(s) for s in majority.index]
    if len(systems) < 2:
        return None
    names = dict(names or {})
    labels = [display_name(names, s) for s in systems]
    values = majority.reindex(index=systems, columns=systems).to_numpy(dtype=float)
    z: list[list[float | None]] = [
        [None if i == j else float(values[i, j]) for j in range(len(systems))] for i in range(len(systems))
    ]
    word = {1.0: "wins against", 0.0: "ties with", -1.0: "loses against"}
    if wins is not None:
        w = wins.reindex(index=systems, columns=systems).to_numpy(dtype=float)
        text = [
            [
                ""
                if i == j
                else f"{word[values[i, j]]}<br>criteria weight won {w[i, j]:.3g} vs {w[j, i]:.3g}"
                for j in range(len(systems))
            ]
            for i in range(len(systems))
        ]
    else:
        text = [
            ["" if i == j else word[values[i, j]] for j in range(len(systems))] for i in range(len(systems))
        ]
    lose, tie, win = "#d62728", "#bdbdbd", "#2ca02c"
    trace = {
        "type": "heatmap",
        "z": z,
        "x": labels,
        "y": labels,
        "text": text,
        "zmin": -1,
        "zmax": 1,
        "xgap": 1,
        "ygap": 1,
        "colorscale": [[0.0, lose], [1 / 3, lose], [1 / 3, tie], [2 / 3, tie], [2 / 3, win], [1.0, win]],
        "colorbar": {
            "tickvals": [-2 / 3, 0, 2 / 3],
            "ticktext": ["loss", "tie", "win"],
            "thickness": 12,
            "len": 0.6,
        },
        "hovertemplate": "%{y} %{text} %{x}<extra></extra>",
    }
    n = len(systems)
    show = n <= 40
    # The rows get 24 px each on top of the room the opponents' names take under the plot (at -45°, about
    # 5 px of height per character): sized for the rows alone, automargin squeezed them until plotly
    # dropped every other row's label.
    longest = max((len(label) for label in labels), default=0) if show else 0
    size = min(max(320, 24 * n + 140 + 5 * min(longest, 80)), 1600)
    # dtick 1: every row and column named, never thinned out by plotly's automatic ticks.
    axis = {"showticklabels": show, "automargin": True, **({"dtick": 1} if show else {})}
    layout = {
        "height": size,
        "margin": {"l": 40, "r": 20, "t": 20, "b": 40},
        "xaxis": {**axis, "tickangle": -45, "title": {"text": "opponent"}, "side": "bottom"},
        "yaxis": {**axis, "autorange": "reversed", "title": {"text": "model"}},
    }
    return round_floats({"data": [trace], "layout": layout})
