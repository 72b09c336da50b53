"""A track is a plug-in across the whole stack: a toy track registered from test code runs through the real
pipeline — manifest selection, job, in-process run, host-side scoring, MLflow store, exports, headline
ranking, page generation and ``mkdocs build --strict`` — with no file under ``leaderboard/`` naming it.

Three submissions: the Morgan fingerprint reference (``embed`` only: AMORE, never the toy track), an echo
generator (``generate`` only: the toy track, never AMORE) and one with both capabilities. A model that
lacks a track's capability is *missing* on that track's criteria, not last.
"""

from __future__ import annotations

import importlib
import math
import re
import shutil
from pathlib import Path

import pytest

from evaluators.schema import TrackOptions
from leaderboard.execution.evaluate import Evaluator
from leaderboard.intake.manifest import load_submission
from leaderboard.ranking.headline import rank_headline
from leaderboard.site.build import build_site, generate_pages
from leaderboard.site.exports import write_exports
from leaderboard.store import ResultStore
from tests._mkdocs import copy_mkdocs_config

ROOT = Path(__file__).resolve().parents[1]

MANIFEST = """\
id: {id}
name: {name}
description: A test submission for the plug-in track test.
authors: [ChemRobust tests]
contact: https://github.com/chemrobust/chemrobust/issues
license: MIT
model:
  source: none
  architecture: non-neural
  capabilities: [{capabilities}]
adapter: custom
code:
  file: adapter.py
  object: {object}
training_data: []
"""

ADAPTERS = '''\
"""Answers with the molecule from the prompt: unchanged (Echo) or upper-cased (Shout, also embeds)."""

import numpy as np

from evaluators.adapters import EmbeddingAdapter, Embeddings, GenerativeAdapter


class Echo(GenerativeAdapter):
    def generate(self, requests):
        return [r.prompt.rsplit(" ", 1)[-1] for r in requests]


class Shout(EmbeddingAdapter, GenerativeAdapter):
    capabilities = frozenset({"embed", "generate"})

    def generate(self, requests):
        # Upper case turns aromatic atoms aliphatic: a different molecule, or no molecule at all.
        return [r.prompt.rsplit(" ", 1)[-1].upper() for r in requests]

    def embed(self, strings):
        vectors = [[len(s), s.count("c") + 1.0, s.count("(") + 1.0] for s in strings]
        return Embeddings({"last": np.array(vectors, dtype=np.float32)})
'''


@pytest.fixture()
def toy_track():
    """Register the toy track (as a plug-in module would) for one test, then remove it again."""
    module = importlib.import_module("tests.toy_track")
    module.register()
    yield module
    module.unregister()


def _submission(folder: Path, sub_id: str, name: str, capabilities: str, obj: str) -> None:
    folder.mkdir(parents=True)
    (folder / "submission.yaml").write_text(
        MANIFEST.format(id=sub_id, name=name, capabilities=capabilities, object=obj)
    )
    (folder / "adapter.py").write_text(ADAPTERS)


@pytest.mark.slow
def test_a_track_defined_in_test_code_reaches_the_ranking_and_the_built_site(toy_track, tmp_path):
    # A repository of our own: the site's static parts and three submissions.
    repo = tmp_path / "repo"
    shutil.copytree(
        ROOT / "site", repo / "site", ignore=shutil.ignore_patterns("data", "submissions", "tracks")
    )
    copy_mkdocs_config(repo)
    subs = repo / "submissions"
    shutil.copytree(
        ROOT / "submissions" / "morgan-fingerprint-reference", subs / "morgan-fingerprint-reference"
    )
    _submission(subs / "echo-generator", "echo-generator", "Echo generator", "generate", "Echo")
    _submission(subs / "shout-both", "shout-both", "Shouting embedder", "embed, generate", "Shout")

    state = tmp_path / "state"
    store = ResultStore(f"sqlite:///{tmp_path}/mlflow.db", artifact_root=tmp_path / "artifacts")
    lines: list[str] = []
    summary = Evaluator(
        ROOT, state, store, runner="in-process", options=TrackOptions(limit=25, distances=("l2",)),
        submissions_dir=subs, log=lines.append,
    ).run(None, ["datamol-default"])  # fmt: skip
    # Capabilities decide the jobs: Morgan × AMORE, echo × toy, shout × both.
    assert summary.computed == 4 and not summary.failed and not summary.invalid, "\n".join(lines[-40:])
    assert any("echo-generator × toy_echo × datamol-default" in line for line in lines)
    assert not any(
        "echo-generator × amore" in line or "morgan-fingerprint-reference × toy_echo" in line
        for line in lines
    )

    results, runs = store.export()
    toy = results.loc[results["track"] == "toy_echo"]
    # The toy track's own dimension is a column of the export; AMORE rows hold '-' there and vice versa.
    assert set(toy["view"]) == {"as_written", "canonical", "-"}
    assert set(results.loc[results["track"] == "amore", "view"]) == {"-"}
    assert set(toy["augmentation"]) == {"-"}

    def value(sub: str, metric: str, view: str) -> float:
        rows = toy.loc[
            (toy["submission"] == sub) & (toy["metric"] == metric) & (toy["view"] == view), "value"
        ]
        return float(rows.iloc[0])

    # Scored on the host: the container wrote only raw answers and counts, the host added these.
    assert value("echo-generator", "echo_accuracy", "as_written") == 1.0
    assert value("echo-generator", "echo_accuracy", "canonical") == 1.0
    assert value("echo-generator", "echo_consistency", "-") == 1.0
    assert value("shout-both", "echo_consistency", "-") < 1.0
    assert value("echo-generator", "n_answers", "as_written") == 25

    ranking = rank_headline(results)
    toy_column = "toy_echo/datamol-default/echo_consistency"
    assert toy_column in ranking.table.columns and ranking.criteria.loc[toy_column, "weight"] == 1.0
    amore_columns = [c for c in ranking.table.columns if c.startswith("amore/")]
    assert len(amore_columns) == 5 and math.isclose(ranking.weights[amore_columns].sum(), 1.0)
    # Morgan cannot run the toy track: missing there (NaN, ignored pairwise), not scored as the worst.
    assert math.isnan(ranking.table.loc["morgan-fingerprint-reference", toy_column])
    majority, _ = ranking.pairwise
    assert majority.loc["morgan-fingerprint-reference", "shout-both"] == 1  # wins on AMORE, toy ignored
    assert majority.loc["morgan-fingerprint-reference", "echo-generator"] == 0  # nothing in common: a tie
    assert ranking.copeland.loc["morgan-fingerprint-reference", "rank"] == 1

    # Exports, pages and a strict MkDocs build, all from the tracks' declarations.
    submissions = [load_submission(p / "submission.yaml").card() for p in sorted(subs.iterdir())]
    write_exports(results, runs, submissions, repo / "site", tables=store.export_tables())
    generate_pages(repo / "site", repo_root=repo)
    public = build_site(repo, strict=True)
    overview = (public / "index.html").read_text(encoding="utf-8")
    assert "Echo consistency across views" in overview and "toy_echo" in overview
    page = (public / "tracks" / "toy_echo" / "index.html").read_text(encoding="utf-8")
    assert "as_written" in page and "canonical" in page and "echo consistency" in page.lower()
    methodology = (public / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "How the molecule was written in the prompt." in methodology  # the Dimension's description
    shout = (public / "submissions" / "shout-both" / "index.html").read_text(encoding="utf-8")
    assert "toy_echo" in shout and "amore" in shout

    # Nothing under leaderboard/ knows this track exists.
    named = [p for p in (ROOT / "leaderboard").rglob("*.py") if re.search(r"toy_echo|ToyEcho", p.read_text())]
    assert not named, named
