"""No degenerate answerer may win a headline criterion (issue 28, deliverable 1): shared checks over T3–T5.

Like scikit-learn's shared estimator checks, every generative track is run with the same synthetic
answerers (:mod:`tests.validity.answerers`) through its **real host scoring** (``Track.score`` on a
``completions.jsonl``) on small fixed samples of real data sets (:data:`tests.validity.harness.SAMPLES`, plus
:data:`~tests.validity.harness.MORE_SAMPLES`: T3 also on smiles-iupac-pairs and reactions-smiles-iupac, T4
on ClinTox, BBBP and the reactions, drawings included),
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


# ------------------------------------------------------------------------------ captioning (issue 34)

#: Molecules of ChEBI-20 the captioning check scores (six writings each; METEOR is the costly part).
CAPTIONING_MOLECULES = 40
CAPTION_SCORES = ("bleu2", "bleu4", "rouge1", "rouge2", "rouge_l", "meteor")


@pytest.fixture(scope="module")
def captioning(benchmark_data) -> pd.DataFrame:
    """Every answerer's captioning rows on the track's first molecules of its real ChEBI-20 sample."""
    from evaluators.datasets import load_records
    from evaluators.schema import TrackOptions
    from evaluators.tracks.captioning import sample

    root = benchmark_data("chebi20")
    records = sample(load_records("chebi20", root), TrackOptions().seed, CAPTIONING_MOLECULES)
    with tempfile.TemporaryDirectory() as tmp:
        return harness.score_track("captioning", records, Path(tmp), "chebi20")


def _caption_value(rows: pd.DataFrame, answerer: str, writing: str, metric: str) -> float:
    hit = rows[(rows.submission == answerer) & (rows.augmentation == writing) & (rows.metric == metric)]
    return float(hit.value.iloc[0])


def test_no_degenerate_captioner_reaches_the_noisy_oracle_on_any_score_of_any_writing(captioning) -> None:
    """A constant "The molecule is a …", the SMILES echoed, abstaining, another molecule's gold description:
    each below the noisy oracle on every score of every writing (fails were a score blind to the caption)."""
    from evaluators.tracks.captioning import WRITINGS

    degenerate = [name for name in harness.answerers("captioning") if name not in harness.HONEST]
    for writing in WRITINGS:
        for metric in CAPTION_SCORES:
            ref = _caption_value(captioning, harness.REFERENCE, writing, metric)
            assert _caption_value(captioning, "oracle", writing, metric) >= ref
            for name in degenerate:
                value = _caption_value(captioning, name, writing, metric)
                assert value < ref, f"{name} {writing} {metric}: {value:.3f} vs noisy oracle {ref:.3f}"


def test_a_caption_drop_is_descriptive_never_a_headline(captioning) -> None:
    """A constant caption does not depend on the writing, so its drops are exactly 0 — better than any honest
    captioner's: the drops cannot be a headline criterion, and the board takes none from the track."""
    from evaluators.tracks.captioning import REWRITES
    from leaderboard.ranking.headline import headline_rows

    for writing in REWRITES:
        for metric in CAPTION_SCORES:
            assert _caption_value(captioning, "constant_per_kind", writing, f"{metric}_drop") == 0.0
    assert headline_rows(captioning).empty
