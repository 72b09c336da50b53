"""The prompt-robustness templates (T4, issue 13 item 1): many wordings of one question, checked as data."""

from __future__ import annotations

import json
import re

import pytest

from evaluators.asking.protocol import ANSWER_LINE, WHAT
from evaluators.tracks.prompt_robustness.templates import (
    IMAGE_SLOT,
    IMAGES,
    MIN_TEMPLATES,
    TEMPLATES_FILE,
    load_template_sets,
)
from evaluators.tracks.prompt_robustness.templates import WHAT as T4_WHAT

SETS = load_template_sets()


def test_every_task_has_enough_distinct_templates_with_ids() -> None:
    assert {s.task for s in SETS} >= {"formula", "molecular_weight", "lipinski", "hydration_free_energy",
                                      "aqueous_solubility", "iupac_to_smiles", "smiles_to_iupac",
                                      "forward_reaction"}  # fmt: skip
    for s in SETS:
        assert len(s.templates) >= MIN_TEMPLATES, s.task
        assert len({t.id for t in s.templates}) == len(s.templates)


@pytest.mark.parametrize("template_set", SETS, ids=lambda s: s.task)
def test_every_template_asks_the_same_question_with_the_same_inputs_and_answer_format(template_set) -> None:
    s = template_set
    fill = tuple((slot, slot.upper()) for slot in s.slots)  # a functional group's name, per item
    for rep in s.representations:
        prompts = [s.prompt(t, rep, "MOLECULE", fill) for t in s.templates]
        for prompt in prompts:
            assert all(prompt.count(value) == 1 for _, value in fill)
            # The same required input (the molecule, once, named in its notation) and the same output request.
            # A drawing is never text: the prompt holds the image marker, the molecule goes as an image part.
            shown = IMAGE_SLOT if rep in IMAGES else "MOLECULE"
            assert prompt.count(shown) == 1 and "{" not in prompt
            assert rep not in IMAGES or "MOLECULE" not in prompt
            question, protocol_line = prompt.rsplit("\n", 1)
            assert question.endswith(" " + s.instruction[rep])
            what = s.what or {**WHAT, **T4_WHAT}[s.answer[rep]]
            assert protocol_line == ANSWER_LINE.format(what=what)  # the same for every model
            assert all(k.lower() in prompt.lower() for k in s.keywords)
            if len(s.representations) > 1:
                assert s.notation[rep] in prompt
        # Only the wording differs: every prompt is distinct.
        assert len(set(prompts)) == len(prompts)
    if len(s.representations) > 1:
        # The versions of one template in two writings differ only in the notation's name.
        t = s.templates[0]
        one, two = s.representations[:2]
        a, b = (s.prompt(t, rep, "X", fill).rsplit("\n", 1)[0] for rep in (one, two))  # protocol line off
        a, b = a.removesuffix(s.instruction[one]), b.removesuffix(s.instruction[two])
        assert a.replace(s.notation[one], s.notation[two]) == b


def test_a_template_that_drifts_is_refused_naming_the_task_and_template(tmp_path) -> None:
    doc = json.loads(TEMPLATES_FILE.read_text(encoding="utf-8"))
    formula = doc["tasks"][0]
    formula["templates"][2]["text"] = "What is the boiling point of {molecule}? Answer with a number only."
    formula["templates"] = formula["templates"][:5] + formula["templates"][2:3]
    path = tmp_path / "templates.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_template_sets(path)
    message = str(info.value)
    assert "task 'formula'" in message and str(path) in message
    assert re.search(
        r"template t3: slots \['molecule'\], expected each of \['molecule', 'notation'\]", message
    )
    assert "template t3 does not mention ['formula']" in message
    assert "template t3 states an answer format" in message
    assert "two templates have the same text" in message


def test_a_slot_left_unfilled_is_refused() -> None:
    """A functional-group question without its group would ask nothing: the prompt refuses to be written."""
    s = next(s for s in SETS if s.task == "functional_group")
    with pytest.raises(ValueError, match="functional_group.*'group'"):
        s.prompt(s.templates[0], "smiles", "CCO")
    assert "an ester group?" in s.prompt(s.templates[0], "smiles", "CCO", (("group", "an ester group"),))


def test_the_answer_asked_for_follows_the_representation_only_where_the_task_says() -> None:
    by_task = {s.task: s for s in SETS}
    reaction = by_task["forward_reaction"]
    # Reactants given as formulas can only be answered with a formula (ChemDIRT's formula-based reactions).
    assert reaction.answer == {"smiles": "smiles", "iupac": "smiles", "formula": "formula", "image": "smiles"}
    assert "molecular formula" in reaction.instruction["formula"]
    assert reaction.inputs["formula"] == "reactants_smiles" and "product_smiles" in reaction.fields
    # Every other task asks for one kind of answer in every representation.
    for s in SETS:
        if s is not reaction:
            assert len(set(s.answer.values())) == 1 and len(set(s.instruction.values())) == 1, s.task


def test_a_per_representation_field_must_name_every_representation(tmp_path) -> None:
    doc = json.loads(TEMPLATES_FILE.read_text(encoding="utf-8"))
    reaction = next(t for t in doc["tasks"] if t["task"] == "forward_reaction")
    del reaction["instruction"]["formula"]
    path = tmp_path / "templates.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"task 'forward_reaction'.*instruction must be a string or a "
                       r"mapping with exactly the keys \['smiles', 'iupac', 'formula', 'image'\]"):
        load_template_sets(path)


def test_the_solubility_task_is_numeric_without_names_and_naming_needs_a_named_set() -> None:
    by_task = {s.task: s for s in SETS}
    solubility = by_task["aqueous_solubility"]
    assert solubility.numeric and solubility.representations == ("smiles", "selfies", "inchi", "image")
    assert solubility.fields == ("smiles", "log_solubility")
    assert "log10" in solubility.instruction["smiles"] and "mol/L" in solubility.instruction["smiles"]
    # Naming is posed where the set names its molecules: not on reaction products or the solubility set.
    assert by_task["smiles_to_iupac"].fields == ("smiles", "iupac")
