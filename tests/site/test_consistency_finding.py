"""T3's "what this board shows": the KL reference against the cross-entropy one, computed from the answers."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from leaderboard.site.extensions.consistency_finding import finding_lines


def _answers(sub: str, task: str, smiles: list[str], iupac: list[str], truth: list[str]) -> list[dict]:
    rows = []
    for rep, answers in (("smiles", smiles), ("iupac", iupac)):
        for i, (answer, true) in enumerate(zip(answers, truth, strict=True)):
            rows.append({"submission": sub, "track": "consistency", "dataset": "d", "task": task,
                         "representation": rep, "id": str(i), "answer": answer,
                         "correct": "1" if answer == true else "0"})  # fmt: skip
    return rows


def _data(rows: list[dict]) -> SimpleNamespace:
    return SimpleNamespace(tables={"answers": pd.DataFrame(rows)}, name=lambda s: s.upper())


def test_the_kl_model_that_agrees_with_itself_but_is_no_more_right_is_called_so() -> None:
    n = 60
    truth = ["yes"] * n
    # Cross-entropy: right on the SMILES half the time, on the name the other half: never consistent.
    ce = _answers("chem-t5-ce", "lipinski", ["yes", "no"] * (n // 2), ["no", "yes"] * (n // 2), truth)
    # KL: the same answer to both questions (consistent everywhere), right half the time.
    kl = _answers("chem-t5-kl", "lipinski", ["yes", "no"] * (n // 2), ["yes", "no"] * (n // 2), truth)
    text = "\n".join(finding_lines(_data(ce + kl), "d"))
    assert "| lipinski | consistency SMILES ↔ IUPAC | 0.000 | 1.000 | +1.000 [+1.000, +1.000]" in text
    assert "| lipinski | accuracy, SMILES | 0.500 | 0.500 | +0.000" in text
    assert "the KL-regularised model is more consistent than `chem-t5-ce` (higher on 1, lower on 0" in text
    assert "no more and no less accurate" in text


def test_nothing_is_said_without_both_references() -> None:
    rows = _answers("chem-t5-ce", "formula", ["C2H6O"], ["C2H6O"], ["C2H6O"])
    assert finding_lines(_data(rows), "d") == []
    assert finding_lines(_data(rows), "other") == []
