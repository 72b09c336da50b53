"""The downloads page (``downloads.md``) and the download links of the overview.

Every file of ``site/data/`` with what it holds (:func:`leaderboard.site.schema.data_files`): the long
results, the runs and manifests, every per-item table the tracks declare, and the derived files. The
columns are read from the declarations, so the page cannot drift from the files.
"""

from __future__ import annotations

from leaderboard.markdown import table
from leaderboard.site.normalise import table_columns
from leaderboard.site.schema import (
    RESULTS_FILE,
    RUN_KEYS,
    RUNS_FILE,
    SUBMISSION_KEYS,
    SUBMISSIONS_FILE,
    data_files,
)
from leaderboard.site.sitedata import SiteData
from leaderboard.tracks import KEY_COLUMNS, dimensions, result_columns, table_specs

__all__ = ["download_links", "downloads_page"]


def _names(items: list[str] | tuple[str, ...]) -> str:
    return ", ".join(f"`{c}`" for c in items)


def download_links(data: SiteData, *, prefix: str, as_table: bool = False) -> str:
    """Links to the data files present (a table with descriptions, or one line)."""
    if not data.files:
        return "No data exported yet."
    described = data_files()
    if as_table:
        rows = [[f"[{name}]({prefix}data/{name})", described[name]] for name in data.files]
        return table(["File", "Content"], rows)
    return (
        "Download: "
        + " · ".join(f"[{name}]({prefix}data/{name})" for name in data.files)
        + f" ([what they contain]({prefix}downloads.md))."
    )


def downloads_page(data: SiteData) -> str:
    """Markdown of the downloads page."""
    dims = [d.name for d in dimensions()]
    out = [
        "# Downloads",
        "",
        "The site is generated from these files alone; they are the leaderboard's data.",
        "",
        download_links(data, prefix="", as_table=True),
        "",
        "## Long format",
        "",
        f"`{RESULTS_FILE}` has one row per number with the columns {_names(result_columns())}: the "
        f"key columns {_names(KEY_COLUMNS)}, the dimensions of every registered track ({_names(dims)}; "
        "`-` where a dimension does not apply to the row, e.g. another track's dimensions or the layer of "
        "a pair count), the metric's name and its value (empty when missing). Each track's dimensions, "
        "their values and its metrics are listed in the [methodology](methodology.md#tracks).",
        "",
        f"`{RUNS_FILE}` keys: {_names(RUN_KEYS)}.",
        "",
        f"`{SUBMISSIONS_FILE}` keys: {_names(SUBMISSION_KEYS)}.",
        "",
        "## Per-item tables",
        "",
        "Each track may declare tables of per-item results; they are written by the run inside the "
        "container, the host adds the key columns.",
        "",
    ]
    for name, (track_name, spec) in table_specs().items():
        where = ", ".join(f"`{k}` = `{v}`" for k, v in spec.where)
        out += [
            f"`{spec.file}` (`{name}`, track [{track_name}](tracks/{track_name}.md)) has the columns "
            f"{_names(table_columns(spec))}. {spec.description}" + (f" Rows kept: {where}." if where else ""),
            "",
        ]
    out += [
        "## Derived files",
        "",
        "`rank_intervals.json`, `rules.csv` and `pairwise.csv` are computed from the files above "
        "when the site is generated (deterministic: same data, same files). `rules.csv` has, per "
        "model, `score_<rule>` and `rank_<rule>` for every rule, `change_<rule>` (rank under Copeland "
        "minus rank under the rule: positive means the rule places the model higher) and "
        "`condorcet_winner`. `pairwise.csv` is a models × models matrix in Copeland order. "
        "`rank_intervals.json` names the ranked setting under `setting`: one object "
        "(`track`, the fixed dimensions, `metric`) when one family of criteria is ranked, a list of them "
        "when several are.",
        "",
    ]
    return "\n".join(out)
