"""Hard cases of the answer reader (evaluators/answers: spans, numbers, labels, structures) and its bounds."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluators.answers import READING_RULES, Reading, extract, normalise, read, read_batch
from evaluators.answers.spans import find_span


@pytest.mark.parametrize(
    ("text", "span", "rule"),
    [
        ("Reasoning.\nAnswer: CCO", "CCO", "answer-line"),
        ("Answer: CCN\nNo wait.\nFinal answer: CCO", "CCO", "answer-line"),  # the last marked answer
        ("**Answer:** CCO", "CCO", "answer-line"),
        ("- **Final answer**: CCO", "CCO", "answer-line"),
        ("### Answer\nCCO", "CCO", "answer-line"),
        ("Answer:\n\nCCO", "CCO", "answer-line"),
        ("so \\boxed{CCO} is it", "CCO", "boxed"),
        ("\\boxed{CCN} then \\boxed{CCO}", "CCO", "boxed"),
        ("<answer>CCN</answer> <answer>CCO</answer>", "CCO", "tag"),
        ("Answer: CCN\n<answer>CCO</answer>", "CCO", "tag"),  # whichever marker ends last
        ("```\nCCO\n```", "CCO", "fence"),
        ("\n\n  CCO  \nmore", "CCO", "first-line"),
        ("Answer： CCO", "CCO", "answer-line"),  # full-width colon
        ("", "", "none"),
    ],
)
def test_spans_take_the_last_marked_answer(text: str, span: str, rule: str) -> None:
    assert find_span(text) == (span, rule)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("–1.2", -1.2), ("- 1.2", -1.2), ("−1.2", -1.2), ("‒1.2", -1.2), ("—1.2", -1.2), ("‐1.2", -1.2),
        ("‑1.2", -1.2), ("1.2 × 10^-3", 0.0012), ("1.2x10^-3", 0.0012), ("1.2·10⁻³", 0.0012),
        ("1.2e-3", 0.0012), ("1.2 × 10<sup>-3</sup>", 0.0012), ("$1.2 \\times 10^{-3}$", 0.0012),
        ("2-(2-hydroxyethoxy)ethanol: -8.2", -8.2), ("ΔG(298 K) = -3.2", -3.2), ("-3.2 kcal/mol", -3.2),
        ("-3.2 kcal mol⁻¹", -3.2), ("180.16 g/mol", 180.16), ("logS = -2.1", -2.1),
        ("At 25 °C, log S = -2.1", -2.1), ("C6H12O6: 180.16", 180.16),
        ("It might be about -3.2 kcal/mol", -3.2),
        ("-5.0 (experimental: -5.01)", -5.0), ("MW: 1,234.56 g/mol", 1234.56), ("－３.２", -3.2),
        ("I cannot determine this", None), ("N/A", None), ("unknown", None), ("-3.2 or -4.5", None),
        ("between -3 and -4", None), ("-3 to -4", None), ("4,2", None), ("pH 7", None), ("298 K", None),
    ],
)  # fmt: skip
def test_numbers_are_the_value_never_a_locant_or_condition(text: str, expected: float | None) -> None:
    assert read("number", text).value == expected


@pytest.mark.parametrize(
    ("text", "task", "expected"),
    [
        ("No violations.", "lipinski", True), ("0 violations", "lipinski", True),
        ("One violation (logP 5.3), so it passes.", "lipinski", True), ("2 violations", "lipinski", False),
        ("It violates two rules.", "lipinski", False),
        ("No, it does not satisfy the rule.", "lipinski", False),
        ("Yes, it satisfies the rule of five.", "lipinski", True), ("N/A", "lipinski", None),
        ("No violations", None, False),  # without the task, "No" is a plain no
        ("yes or no", None, None), ("Yes. Actually no.", None, None), ("yes/no", None, None),
        ("maybe", None, None), ("Y", None, True), ("n", None, False), ("true", None, True),
        ("Answer: no\n", None, False), ("I think yes\nreasoning...\nAnswer: no", None, False),
        ("Yes — TPSA is 90, greater than 75.", None, True), ("\\boxed{\\text{No}}", None, False),
    ],
)  # fmt: skip
def test_labels_agree_or_give_no_answer(text: str, task: str | None, expected: bool | None) -> None:
    assert read("label", text, task=task).value is expected


@pytest.mark.parametrize(
    ("kind", "text", "value", "rule"),
    [
        ("smiles", "CC=O is reduced by NaBH4 to give CCO", "CCO", "after-arrow"),
        ("smiles", "CC(=O)O.OCC>>CC(=O)OCC", "CCOC(C)=O", "after-arrow"),
        ("smiles", "CC(=O)O + OCC → CC(=O)OCC + O", "CCOC(C)=O", "after-arrow"),
        ("smiles", "From CC(=O)Cl and N: CC(N)=O", "CC(N)=O", "last-molecule"),
        ("smiles", "CCO, formed when CC=O is reduced", "CCO", "first-line"),
        ("smiles", "CCO or CCN", None, "none"),
        ("smiles", "\\boxed{CCO}", "CCO", "boxed"),
        ("formula", "$C_2H_6O$", "C2H6O", "first-line"),
        ("formula", "C_{2}H_{6}O", "C2H6O", "first-line"),
        ("formula", "C2H5OH", "C2H6O", "first-line"),
        ("formula", "CH3CH2OH", "C2H6O", "first-line"),
        ("formula", "CH3COOH", "C2H4O2", "first-line"),
        ("formula", "(CH3)2CHOH", "C3H8O", "first-line"),
        ("formula", "\\ce{C2H6O}", "C2H6O", "first-line"),
        ("formula", "C2H4O2 + C2H6O → C4H8O2 + H2O", "C4H8O2", "after-arrow"),
        ("formula", "CCO", None, "none"),  # a SMILES: an element repeats without hydrogens
        ("formula", "C2H6O or C2H4O", None, "none"),
    ],
)
def test_structures(kind: str, text: str, value: str | None, rule: str) -> None:
    assert read(kind, text) == Reading(value, rule, read(kind, text).span)


def test_names_try_the_whole_name_then_without_the_aside_in_two_batches_at_most() -> None:
    calls: list[list[str]] = []
    known = {"ethanol": "CCO", "2-(2-hydroxyethoxy)ethanol": "OCCOCCO", "ethyl acetate": "CCOC(C)=O",
             "ethyl acetate (ethyl ethanoate)": "CCCC(=O)O.CCOC(C)=O"}  # fmt: skip

    def parser(names):
        calls.append(list(names))
        return [known.get(n.lower()) for n in names]

    texts = ["Ethanol (ethyl alcohol)", "2-(2-hydroxyethoxy)ethanol", "Ethyl acetate (ethyl ethanoate)",
             "ethanol or methanol", "I cannot name it", "Answer: ethanol"]  # fmt: skip
    got = read_batch("name", texts, names_to_smiles=parser)
    assert [r.value for r in got] == ["CCO", "OCCOCCO", "CCOC(C)=O", None, None, "CCO"]
    assert [r.rule for r in got] == [
        "without-aside",
        "first-line",
        "without-aside",
        "none",
        "none",
        "answer-line",
    ]
    assert len(calls) == 2 and calls[1] == ["Ethanol", "Ethyl acetate"]
    assert normalise("name", texts, names_to_smiles=parser) == [r.value for r in got]


def test_odd_text_is_no_answer_never_an_error_and_stays_fast() -> None:
    odd = [
        "\x00" * 1000,
        "\ud800yes",
        "1" * 100_000,
        "(" * 50_000,
        "\\boxed{" * 20_000,
        "Answer: " * 20_000,
        "1 or " * 20_000,
        "×10^-" * 20_000,
        "C(C(C(" * 5000,
        "$" * 50_000,
        "CH3" * 20_000,
        "<answer>" * 20_000,
    ]
    for text in odd:
        for kind in ("smiles", "formula", "label", "number"):
            start = time.perf_counter()
            reading = read(kind, text, task="lipinski")
            assert time.perf_counter() - start < 2.0, (kind, text[:20])
            assert reading.rule in READING_RULES
    assert read("label", "\ud800yes\x00").value is True
    assert extract(None) == ""  # type: ignore[arg-type]


@given(st.text(max_size=300), st.sampled_from(["smiles", "formula", "label", "number"]))
@settings(max_examples=300, deadline=None)
def test_any_text_reads_without_raising(text: str, kind: str) -> None:
    reading = read(kind, text, task="lipinski")
    assert reading.rule in READING_RULES and (reading.rule == "none") == (reading.value is None)


def test_normalise_answers_reads_labels_per_task_and_reports_rules() -> None:
    from types import SimpleNamespace

    from evaluators.asking import normalise_answers

    def q(qid, kind, task):
        return SimpleNamespace(request=SimpleNamespace(id=qid), kind=kind, task=task)

    questions = [q("a", "label", SimpleNamespace(name="lipinski")), q("b", "label", "logp_gt_3"),
                 q("c", "number", {"task": "hydration_free_energy"}), q("d", "smiles", None)]  # fmt: skip
    texts = {"a": "No violations.", "b": "No violations.", "c": "Reasoning\nAnswer: –3.2"}
    rules: dict[str, str] = {}
    out = normalise_answers(questions, texts, rules=rules)
    assert out == {"a": True, "b": False, "c": -3.2, "d": None}
    assert rules == {"a": "first-line", "b": "first-line", "c": "answer-line"}
