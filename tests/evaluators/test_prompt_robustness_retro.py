"""T4's retrosynthesis (issue 33 item 1): reactants known only where a named reaction rule proves them.

The truth is cross-checked by brute force (the named rule, run again on the truth's components, gives the
recorded product; the truth is a subset of what the record lists), measured on the consistency study's 300
reactions, and scored as a set: the reactants in another order are right, the product given back is no
answer, a constant is wrong.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path

import pytest
from rdkit import Chem

from evaluators.datasets import load_records
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks.prompt_robustness import COMPLETIONS, PromptRobustnessTrack, retro
from evaluators.tracks.prompt_robustness.retro import known_reactants, templates

TRACK = PromptRobustnessTrack(TrackOptions())


@pytest.fixture(scope="module")
def reactions(benchmark_data) -> list[dict[str, str]]:
    return load_records("reactions-smiles-iupac", benchmark_data("reactions-smiles-iupac"))


def _flat(smiles: str) -> str:
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles), isomericSmiles=False)


def test_the_reactants_are_proved_by_a_named_rule_and_only_they_are_the_truth(reactions) -> None:
    rules = dict(templates())
    proved = {}
    for r in reactions:
        found = known_reactants(r["reactants_smiles"], r["product_smiles"])
        if found is None:
            continue
        proved[r["id"]] = found
        truth, name = found
        parts = truth.split(".")
        # Every reactant is one of the recorded components; reagents and solvents are left out.
        recorded = {Chem.MolToSmiles(Chem.MolFromSmiles(p)) for p in r["reactants_smiles"].split(".")}
        rxn, wanted = rules[name], _flat(r["product_smiles"])
        # Only the components the rule consumes: never more molecules than the rule has reactant templates.
        assert set(parts) <= recorded and len(parts) <= rxn.GetNumReactantTemplates(), (r["id"], name)
        # Brute force: the rule, run again on the truth's components in some order, gives the product.
        mols = [Chem.MolFromSmiles(p) for p in parts]
        made = set()
        for order in itertools.permutations(mols, rxn.GetNumReactantTemplates()):
            for outcome in rxn.RunReactants(order, 20):
                for m in outcome:
                    try:
                        Chem.SanitizeMol(m)
                        made.add(Chem.MolToSmiles(m, isomericSmiles=False))
                    except Exception:  # noqa: BLE001
                        continue
        assert wanted in made, (r["id"], name)
    # Measured on the consistency study's 300 test reactions: 69 have a rule that reproduces the product,
    # one of them with two different reactant sets (not asked): 68 proved.
    assert len(reactions) == 300 and len(proved) == 68, len(proved)
    assert sum(len(t.split(".")) for t, _ in proved.values()) < sum(
        len(r["reactants_smiles"].split(".")) for r in reactions if r["id"] in proved)  # reagents left out


def test_reagents_and_solvents_are_left_out_and_an_unproved_reaction_is_not_asked() -> None:
    # Ester hydrolysis in THF / methanol / water: the ester alone is the reactant.
    ester = "COC(=O)c1ccccc1"
    found = known_reactants(f"C1CCOC1.CO.O.[Li+].[OH-].{ester}", "O=C(O)c1ccccc1")
    assert found is not None and found[0] == ester and "hydrolysis" in found[1], found
    assert known_reactants("CCO.CC(=O)O", "c1ccccc1") is None  # no rule makes benzene from these
    assert known_reactants("not a smiles.CCO", "CCO") is None


def test_the_rules_are_pinned_to_datamols_file(tmp_path, monkeypatch) -> None:
    from importlib.machinery import ModuleSpec

    real = Path(retro.find_spec("datamol").submodule_search_locations[0]) / "data" / "reactions.json"
    assert hashlib.sha256(real.read_bytes()).hexdigest() == retro.TEMPLATES_SHA256
    fake = tmp_path / "datamol"
    (fake / "data").mkdir(parents=True)
    shutil.copy2(real, fake / "data" / "reactions.json")
    with (fake / "data" / "reactions.json").open("a", encoding="utf-8") as handle:
        handle.write("\n")  # one byte more: other rules, other truths
    spec = ModuleSpec("datamol", None, is_package=True)
    spec.submodule_search_locations = [str(fake)]
    monkeypatch.setattr(retro, "find_spec", lambda name: spec)
    retro.templates.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="pinned"):
            retro.templates()
    finally:
        retro.templates.cache_clear()


def _scores(tmp_path: Path, monkeypatch, records, answer, name: str) -> dict[tuple[str, str, str], float]:
    import evaluators.datasets as datasets

    monkeypatch.setattr(datasets, "load_records", lambda *a, **k: [dict(r) for r in records])
    questions = [q for q in TRACK.questions(records) if q.task.task == "retrosynthesis"]
    truths = TRACK.truths(questions, records)
    out = tmp_path / name
    out.mkdir()
    lines = [json.dumps({"id": q.request.id, "completion": answer(q, truths[q.request.id])})
             for q in questions]  # fmt: skip
    (out / COMPLETIONS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = TrackResult("model", "prompt_robustness", 1, "toy", "0" * 8, "0" * 8, 0, rows=(), counts={})
    rows = TRACK.score(result, out_dir=out, data_dir=tmp_path).rows
    return {(dict(r.dims)["representation"], dict(r.dims)["template"], r.metric): r.value
            for r in rows if dict(r.dims)["task"] == "retrosynthesis"}  # fmt: skip


def test_answers_are_sets_the_product_back_is_no_answer_and_a_constant_loses(tmp_path, monkeypatch) -> None:
    records = [
        {"id": "a", "reactants_smiles": "CN(C)C=O.CC(=O)Cl.Nc1ccccc1", "product_smiles": "CC(=O)Nc1ccccc1",
         "product_iupac": "N-phenylacetamide",
         "reactants_iupac": "N,N-dimethylformamide.acetyl chloride.aniline"},
        {"id": "b", "reactants_smiles": "C1CCOC1.O.[Li+].[OH-].COC(=O)c1ccccc1",
         "product_smiles": "OC(=O)c1ccccc1", "product_iupac": "benzoic acid",
         "reactants_iupac": "oxolane.water.lithium.hydroxide.methyl benzoate"},
        {"id": "c", "reactants_smiles": "CCO.CC(=O)O", "product_smiles": "c1ccccc1",
         "product_iupac": "benzene", "reactants_iupac": "ethanol.acetic acid"},
    ]  # fmt: skip
    asked = {q.item for q in TRACK.questions(records) if q.task.task == "retrosynthesis"}
    assert asked == {"a", "b"}  # 'c': no rule proves its reactants
    flipped = _scores(tmp_path, monkeypatch, records, lambda q, t: ".".join(reversed(t.split("."))), "flip")
    echo = _scores(tmp_path, monkeypatch, records, lambda q, t: q.shown if q.representation == "smiles"
                   else t, "echo")  # fmt: skip
    constant = _scores(tmp_path, monkeypatch, records, lambda q, t: "CCO", "constant")
    for rep in ("smiles", "iupac", "selfies", "inchi"):
        assert flipped[(rep, "-", "accuracy_mean")] == 1.0, rep  # a set: the order does not matter
        assert constant[(rep, "-", "accuracy_mean")] == 0.0
    assert flipped[("smiles", "t1", "tanimoto_morgan2_bits")] == 1.0
    assert constant[("smiles", "t1", "tanimoto_morgan2_bits")] < 0.2
    assert echo[("smiles", "t1", "validity")] == 0.0  # the product given back: no prediction
