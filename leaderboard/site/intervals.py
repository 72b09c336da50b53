"""Bootstrap rank intervals of the headline ranking, and the derived data files.

:func:`headline_intervals` resamples the items behind the headline criteria
(:mod:`leaderboard.ranking.uncertainty`): each track whose criteria are ranked hands over its per-item
values through its site extension (:attr:`leaderboard.site.extensions.Extension.item_values`). Intervals
are shown only when every ranked value has its items (a bootstrap over part of the criteria or models
would rank something else). :func:`write_derived` writes ``rank_intervals.json``, ``rules.csv`` and
``pairwise.csv`` (or deletes them when there is nothing to rank).

Side effects: :func:`write_derived` writes and deletes files in ``site/data/``; with a cache folder
:func:`headline_intervals` reads and writes the bootstrap cache there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from leaderboard.files import atomic_open, write_json
from leaderboard.frames import text_codes
from leaderboard.markdown import esc
from leaderboard.ranking.headline import Ranking
from leaderboard.ranking.uncertainty import cached_rank_intervals, rank_intervals
from leaderboard.site.extensions import extension
from leaderboard.site.schema import BOOTSTRAP, DERIVED_FILES
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import track

__all__ = [
    "board_intervals",
    "headline_intervals",
    "headline_setting",
    "ranking_intervals",
    "stacked_items",
    "track_items",
    "write_derived",
]


def track_items(data: SiteData, name: str) -> pd.DataFrame | None:
    """Per-item values of a track's headline criteria (its extension's ``item_values``), once per build.

    Both boards' rank intervals and the robust-skill intervals resample them; reading a track's per-item
    tables is the slow part, so the frame is kept in :attr:`SiteData.cache`.
    """
    key = f"item_values:{name}"
    if key not in data.cache:
        values = extension(name).item_values
        data.cache[key] = values(data) if values is not None else None
    return data.cache[key]


def stacked_items(data: SiteData, names: list[str]) -> pd.DataFrame:
    """Return the per-item values of these tracks in one frame (:func:`concat_items`), once per build.

    The overall ranking, both boards and the robust skill resample the same stacks.
    """
    key = ("stacked items", tuple(names))
    if key not in data.cache:
        frames = [f for f in (track_items(data, name) for name in names) if f is not None and not f.empty]
        data.cache[key] = concat_items(frames) if frames else pd.DataFrame()
    return data.cache[key]


def headline_intervals(data: SiteData, cache_dir: Path | None) -> tuple[pd.DataFrame | None, str]:
    """Bootstrap rank intervals of the ranking over every track (:attr:`SiteData.ranking`), or why none.

    See :func:`ranking_intervals`.
    """
    return ranking_intervals(data, data.ranking, cache_dir)


def board_intervals(data: SiteData, cache_dir: Path | None) -> dict[str, tuple[pd.DataFrame | None, str]]:
    """Bootstrap rank intervals of each board's ranking (:attr:`SiteData.boards`), by board name.

    Each board is resampled on its own: its ranked models (never its references) and its own criteria
    and weights, so an interval says how sure the board's own rank is (:func:`ranking_intervals`).
    """
    return {name: ranking_intervals(data, board.ranking, cache_dir) for name, board in data.boards.items()}


def ranking_intervals(
    data: SiteData, rk: Ranking, cache_dir: Path | None
) -> tuple[pd.DataFrame | None, str]:
    """Bootstrap rank intervals of a Copeland ranking of the board's results, or why there are none.

    The items are the headline criteria's, restricted to the ranked models and criteria, with the
    ranking's weights. Each interval is widened, if needed, to contain the rank shown on the overview
    (computed from ``results.csv.gz``; the two agree unless the files are out of step).

    Returns
    -------
    intervals : pandas.DataFrame or None
        :func:`leaderboard.ranking.uncertainty.rank_intervals` per ranked model, in ranking order.
    note : str
        Markdown saying why there are no intervals (empty when there are, or nothing is ranked).
    """
    if rk.copeland.empty:
        return None, ""
    ranked_tracks = list(dict.fromkeys(str(t) for t in rk.criteria["track"]))
    for name in ranked_tracks:
        items = track_items(data, name)
        if items is None or items.empty:
            return None, (
                f"Rank intervals need the per-item results of every ranked track; track "
                f"`{esc(name)}` has none exported."
            )
    items = stacked_items(data, ranked_tracks)
    ranked = [str(s) for s in rk.copeland.index]
    columns = list(rk.table.columns)
    items = items.loc[(items["submission"].isin(ranked) & items["criterion"].isin(columns)).to_numpy()]
    pairs = items[["submission", "criterion"]].drop_duplicates()
    have = set(zip(pairs["submission"].astype(str), pairs["criterion"].astype(str), strict=True))
    headline = rk.headline.reindex(index=ranked, columns=columns)
    lacking = sorted(
        {s for s in ranked for c in columns if pd.notna(headline.at[s, c]) and (s, c) not in have}
    )
    if lacking:
        names = ", ".join(esc(data.name(s)) for s in lacking)
        return None, f"Rank intervals need per-item results of every ranked model; missing for {names}."
    criteria = sorted({str(c) for c in items["criterion"].unique()})
    weights = rk.weights.reindex(criteria)
    params = {k: BOOTSTRAP[k] for k in ("seed", "n_boot", "level")}
    if cache_dir is not None:
        frame = cached_rank_intervals(items, weights=weights, cache_dir=Path(cache_dir), **params)
    else:
        frame = rank_intervals(items, weights=weights, **params)
    frame = frame.reindex(rk.copeland.index)
    shown = rk.copeland["rank"].astype(int)
    frame["rank_lo"] = np.minimum(frame["rank_lo"].astype(int), shown)
    frame["rank_hi"] = np.maximum(frame["rank_hi"].astype(int), shown)
    return frame, ""


def concat_items(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Stack per-item tables of several tracks, their text columns as categoricals over every track's values.

    ``pandas.concat`` of categoricals with different categories falls back to Python strings, millions of
    them on a large board; the union keeps integer codes. A column one table lacks (``part``, ``combine``)
    is ``""`` on its rows, as :func:`leaderboard.ranking.item_table.prepare_items` reads a missing value.
    """
    if len(frames) == 1:
        return frames[0]
    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    out: dict[str, Any] = {}
    for col in columns:
        parts = [f[col] if col in f.columns else None for f in frames]
        if col == "value":
            out[col] = np.concatenate(
                [p.to_numpy(dtype=float) if p is not None else np.full(len(f), np.nan)
                 for p, f in zip(parts, frames, strict=True)]  # fmt: skip
            )
            continue
        out[col] = union_categoricals(
            [_text_categorical(p, len(f)) for p, f in zip(parts, frames, strict=True)]
        )
    return pd.DataFrame(out)


def _text_categorical(column: pd.Series | None, n: int) -> pd.Categorical:
    """``column`` as a categorical of strings, ``""`` where missing (all ``""`` when the table lacks it)."""
    if column is None:
        return pd.Categorical.from_codes(np.zeros(n, dtype=np.int64), [""])
    codes, names = text_codes(column)
    return pd.Categorical.from_codes(codes, names)


def headline_setting(data: SiteData) -> dict[str, Any] | list[dict[str, Any]]:
    """Return the ranked criteria families as ``{"track": …, <fixed dimensions>…, "metric": …}``.

    One family gives one mapping (as ``rank_intervals.json`` has always held), several a list of them.
    """
    families = []
    seen = set()
    for name in dict.fromkeys(str(t) for t in data.ranking.criteria["track"]):
        for crit in track(name).headline:
            if (name, crit) not in seen:
                seen.add((name, crit))
                families.append({"track": name, **dict(crit.where), "metric": crit.metric})
    return families[0] if len(families) == 1 else families


def write_derived(data: SiteData, site_dir: Path) -> None:
    """Write (or delete) ``rank_intervals.json``, ``rules.csv`` and ``pairwise.csv`` in ``site/data/``."""
    data_dir = Path(site_dir) / "data"
    rk = data.ranking
    written: set[str] = set()
    if not rk.copeland.empty:
        data_dir.mkdir(parents=True, exist_ok=True)
        rules = rk.rules
        if rules is not None:
            out = rules.copy()
            out.insert(0, "name", [data.name(str(s)) for s in out.index])
            out.index.name = "submission"
            _write_frame(out, data_dir / "rules.csv", float_format="%.9g")
            written.add("rules.csv")
        pair = rk.pairwise
        if pair is not None:
            majority = pair[0].copy()
            majority.index.name = "submission"
            _write_frame(majority, data_dir / "pairwise.csv")
            written.add("pairwise.csv")
    if data.intervals is not None:
        systems = [
            {
                "submission": str(s),
                "name": data.name(str(s)),
                **{c: (float(v) if c == "rank_median" else int(v)) for c, v in row.items()},
            }
            for s, row in data.intervals.iterrows()
        ]
        payload = {
            "method": (
                "Paired bootstrap over molecules within each data set, re-ranked with Copeland; "
                "percentile interval of the bootstrap ranks; groups are tiers of models that cannot be "
                "separated (leaderboard/ranking/uncertainty.py)."
            ),
            "setting": headline_setting(data),
            **{k: BOOTSTRAP[k] for k in ("seed", "n_boot", "level")},
            "systems": systems,
        }
        write_json(data_dir / "rank_intervals.json", payload)
        written.add("rank_intervals.json")
    for name in DERIVED_FILES:
        if name not in written and (data_dir / name).is_file():
            (data_dir / name).unlink()


def _write_frame(frame: pd.DataFrame, path: Path, **kwargs: Any) -> None:
    with atomic_open(path) as handle:
        handle.write(frame.to_csv(lineterminator="\n", **kwargs).encode("utf-8"))
