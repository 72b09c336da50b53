"""No degenerate answerer may win a headline criterion (issue 28, deliverable 1): shared checks over T3–T5.

Like scikit-learn's shared estimator checks, every generative track is run with the same synthetic
answerers (:mod:`tests.validity.answerers`) through its **real host scoring** (``Track.score`` on a
``completions.jsonl``) on small fixed samples of real data sets (:data:`tests.validity.harness.SAMPLES`, plus
:data:`~tests.validity.harness.MORE_SAMPLES`: T3 also on smiles-iupac-pairs and reactions-smiles-iupac),
and its rows become criteria through the board's own code (``headline_rows`` → ``criteria_table``, the
direction of each metric applied): exactly what the board ranks.

Answerers. Honest: ``oracle`` (the truth written as an answer), ``noisy_oracle`` (right on 70 %,
random-valid otherwise) and ``biased_oracle`` (right on SMILES, random-valid on IUPAC; measured, not
asserted). Degenerate: constants (``yes``, ``no``, ``0``, ``CCO``, and one per answer kind), the input
echoed, abstaining (``""``, ``I don't know``), unparseable (``%%%``), absurd numbers (``1e14``, ``-1e9``),
random-valid (a molecule or formula of the set, a label, a number in the truths' range; drawn per question)
and, on T5, the source-label copier. Random draws are seeded per (answerer, question id).

Asserted, for every headline criterion (test id ``track-criterion-answerer``): oracle ≥ noisy oracle, and
noisy oracle strictly better than every degenerate answerer (a missing value counts as not beaten: the board
ignores the pair). And Copeland, over each track's criteria and over all generative criteria together
(``ranking-<scope>-<answerer>``), puts every degenerate answerer below the noisy oracle.

Today's criteria fail many cases. Each failure measured is listed, with its values, in
``known_failures.json`` and runs as ``xfail(strict=True)``: a listed case that starts passing fails
(XPASS), and so does a failing case that is not listed (a new regression), or a case that appears or
disappears. When a session fixes a criterion, it reruns ``python -m tests.validity.harness`` (rewrites the
file from the measurement), checks in the diff that only the fixed cases left ``failures``, and commits.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from tests.validity import harness

KNOWN = json.loads(harness.KNOWN.read_text(encoding="utf-8"))
FAILURES: dict[str, str] = KNOWN["failures"]


def _param(case: str):
    if case in FAILURES:
        return pytest.param(case, id=case, marks=pytest.mark.xfail(strict=True, reason=f"issue 28: "
                                                                   f"{FAILURES[case]}"))  # fmt: skip
    return pytest.param(case, id=case)


@pytest.fixture(scope="module")
def measured(benchmark_data) -> dict[str, pd.DataFrame]:
    """Oriented criteria table per track, every answerer scored once (module-scoped: the costly part)."""
    sizes = {(t, d): n for t in harness.SAMPLES for d, n in harness.samples(t)}
    tables = {}
    with tempfile.TemporaryDirectory() as tmp:
        for track in harness.SAMPLES:
            def root(dataset: str, track: str = track):
                return benchmark_data(dataset) if sizes[(track, dataset)] else None

            tables[track] = harness.measure_track(track, root, Path(tmp))
    print("\n" + harness.summary(tables))
    return tables


@pytest.fixture(scope="module")
def verdicts(measured) -> dict[str, str | None]:
    """Case id → ``None`` (passes) or the measured reason it fails."""
    out = {}
    for table in measured.values():
        out.update(harness.criterion_verdicts(table))
    out.update(harness.ranking_verdicts(measured))
    return out


def test_the_measured_cases_are_the_known_cases(verdicts) -> None:
    """A criterion or answerer added or dropped changes the cases: re-measure and commit the table."""
    assert sorted(verdicts) == KNOWN["cases"], "rerun `python -m tests.validity.harness` and commit the diff"


def test_only_known_cases_fail(verdicts) -> None:
    """A failing case that is not in known_failures.json is a new regression."""
    new = {k: v for k, v in verdicts.items() if v is not None and k not in FAILURES}
    assert not new, new


@pytest.mark.parametrize("case", [_param(c) for c in KNOWN["cases"] if not c.startswith("ranking-")])
def test_noisy_oracle_beats_every_degenerate_answerer(case, verdicts) -> None:
    assert verdicts.get(case, "not measured") is None, verdicts.get(case, "not measured")


@pytest.mark.parametrize("case", [_param(c) for c in KNOWN["cases"] if c.startswith("ranking-")])
def test_copeland_ranks_every_degenerate_answerer_below_the_noisy_oracle(case, verdicts) -> None:
    assert verdicts.get(case, "not measured") is None, verdicts.get(case, "not measured")
