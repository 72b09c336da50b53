"""T3's "what this board shows": the KL reference against the cross-entropy one, computed from the answers."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from evaluators.tracks.consistency.metrics import kappa_consistency, kappa_resampled
from leaderboard.site.extensions import consistency_finding


def finding_lines(data, dataset: str) -> list[str]:
    return consistency_finding.finding_lines(data, dataset, kappa=kappa_resampled)


def _answers(sub: str, task: str, smiles: list[str], iupac: list[str], truth: list[str]) -> list[dict]:
    rows = []
    for rep, answers in (("smiles", smiles), ("iupac", iupac)):
        for i, (answer, true) in enumerate(zip(answers, truth, strict=True)):
            rows.append({"submission": sub, "track": "consistency", "dataset": "d", "task": task,
                         "representation": rep, "id": str(i), "answer": answer,
                         "correct": "1" if answer == true else "0"})  # fmt: skip
    return rows


def _data(rows: list[dict]) -> SimpleNamespace:
    frame = pd.DataFrame(rows)
    for column in frame.columns:  # as the site reads the exported table: text columns categorical, "" kept
        frame[column] = frame[column].astype(str).astype("category")
    return SimpleNamespace(tables={"answers": frame}, name=lambda s: s.upper())


def test_the_kl_model_that_agrees_with_itself_but_is_no_more_right_is_called_so() -> None:
    n = 60
    truth = ["yes"] * n
    # Cross-entropy: right on the SMILES half the time, on the name the other half: never consistent.
    ce = _answers("chem-t5-ce", "lipinski", ["yes", "no"] * (n // 2), ["no", "yes"] * (n // 2), truth)
    # KL: the same answer to both questions (consistent everywhere), right half the time.
    kl = _answers("chem-t5-kl", "lipinski", ["yes", "no"] * (n // 2), ["yes", "no"] * (n // 2), truth)
    text = "\n".join(finding_lines(_data(ce + kl), "d"))
    # κ: the cross-entropy model disagrees everywhere on balanced answers (−1), the KL one agrees (1).
    assert "| lipinski | κ consistency SMILES ↔ IUPAC (ranked) | -1.000 | 1.000 | +2.000 [+2.000, +2.000]" \
        in text
    assert "| lipinski | raw consistency SMILES ↔ IUPAC (paper) | 0.000 | 1.000 | +1.000 [+1.000, +1.000]" \
        in text
    assert "| lipinski | accuracy, SMILES | 0.500 | 0.500 | +0.000" in text
    assert "the KL-regularised model is more consistent than `chem-t5-ce` by κ (higher on 1, lower on 0" \
        in text
    assert "no more and no less accurate" in text


def test_one_answer_to_everything_is_not_called_more_consistent() -> None:
    """Issue 28: raw consistency rewards a constant; the verdict is taken on κ, where a constant scores 0."""
    n = 60
    truth = (["yes"] * 3 + ["no"]) * (n // 4)
    # Cross-entropy: right on both sides for three items in four, one side wrong on the fourth.
    smiles = list(truth)
    iupac = [t if i % 4 else ("no" if t == "yes" else "yes") for i, t in enumerate(truth)]
    ce = _answers("chem-t5-ce", "lipinski", smiles, iupac, truth)
    # KL: "yes" to everything: consistent everywhere, raw consistency 1, κ 0.
    kl = _answers("chem-t5-kl", "lipinski", ["yes"] * n, ["yes"] * n, truth)
    text = "\n".join(finding_lines(_data(ce + kl), "d"))
    assert "| lipinski | raw consistency SMILES ↔ IUPAC (paper) | 0.750 | 1.000 |" in text
    assert "| lipinski | κ consistency SMILES ↔ IUPAC (ranked) | 0." in text and "| 0.000 | -0." in text
    assert "the KL-regularised model is less consistent than `chem-t5-ce` by κ (higher on 0, lower on 1" \
        in text


def test_the_text_says_how_many_training_seeds_back_it() -> None:
    from leaderboard.site.extensions.consistency_finding import seeds

    # The committed references: one seed each (submissions/chem-t5-*/training.json, config.seed).
    assert [seeds(s) for s in ("chem-t5-ce", "chem-t5-kl", "chem-t5-randomized")] == [1, 1, 1]
    rows = _answers("chem-t5-ce", "formula", ["C2H6O"] * 4, ["C2H6O"] * 4, ["C2H6O"] * 4)
    rows += _answers("chem-t5-kl", "formula", ["C2H6O"] * 4, ["C2H6O"] * 4, ["C2H6O"] * 4)
    text = "\n".join(finding_lines(_data(rows), "d"))
    assert "Each model here is one training seed" in text


def test_nothing_is_said_without_both_references() -> None:
    rows = _answers("chem-t5-ce", "formula", ["C2H6O"], ["C2H6O"], ["C2H6O"])
    assert finding_lines(_data(rows), "d") == []
    assert finding_lines(_data(rows), "other") == []


def test_no_answer_is_missing_as_in_the_ranked_criterion() -> None:
    """An empty answer is no answer (None), not one more answer: the page's κ is the ranked one."""
    truth = ["C2H6O", "CH4O", "C3H8O", "C2H4O"] * 10
    smiles = [t if i % 3 else "" for i, t in enumerate(truth)]
    iupac = [t if i % 5 else "" for i, t in enumerate(truth)]
    ce = _answers("chem-t5-ce", "formula", smiles, iupac, truth)
    kl = _answers("chem-t5-kl", "formula", [""] * len(truth), [""] * len(truth), truth)
    text = "\n".join(finding_lines(_data(ce + kl), "d"))
    want = kappa_consistency([x or None for x in smiles], [x or None for x in iupac])
    assert f"| formula | κ consistency SMILES ↔ IUPAC (ranked) | {want:.3f} | -1.000 |" in text
    assert round(want, 3) == 0.366  # counting "" as one more answer (never agreeing) gives 0.401 here
