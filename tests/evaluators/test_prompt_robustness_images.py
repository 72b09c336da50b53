"""T4's image questions (issue 33 item 3): asked only of models that take images, the drawing never as text.

A text-only model is asked exactly what it was asked before the image settings existed (same questions,
same benchmark version: its results stay valid and its image cells are *not applicable*, never zero); a
model that takes images gets each image question with one PNG data URI and a prompt that names no writing
of the molecule; the view file stores each drawing once, hashed, and a tampered drawing stops the job.
"""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from rdkit import Chem
from rdkit.Chem import Descriptors, rdMolDescriptors

import evaluators.datasets as datasets
from evaluators.datasets.views import IMAGES_DIR, VIEW_FILE, ViewError, read_view, write_view
from evaluators.notations.representations.image import PREFIX
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks import benchmark_version
from evaluators.tracks.prompt_robustness import COMPLETIONS, PromptRobustnessTrack
from evaluators.tracks.prompt_robustness.groups import GROUPS, groups_in
from evaluators.tracks.prompt_robustness.templates import IMAGE_SLOT, TEMPLATES_FILE, load_template_sets

RECORDS = [
    {"id": "1", "smiles": "CCO", "iupac": "ethanol", "value": "-5.0"},
    {"id": "2", "smiles": "c1ccccc1O", "iupac": "phenol", "value": "-6.6"},
    {"id": "3", "smiles": "C1CCC2CCCCC2C1", "iupac": "decalin", "value": "0.8"},
    {"id": "4", "smiles": "C[C@H](N)C(=O)O", "iupac": "(2S)-2-aminopropanoic acid", "value": "-10.0"},
]
IMAGE_CELLS = {("formula", "image"), ("molecular_weight", "image"), ("lipinski", "image"),
               ("ring_count", "image"), ("aromatic_ring_count", "image"), ("image_to_smiles", "image"),
               ("image_to_iupac", "image"), ("functional_group", "image"),
               ("hydration_free_energy", "image")}  # fmt: skip


def _track(images: bool) -> PromptRobustnessTrack:
    return PromptRobustnessTrack.for_model(TrackOptions(), images=images)


def _digest(definition: dict) -> str:
    return hashlib.sha256(json.dumps(definition, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_a_text_only_model_is_asked_what_it_was_asked_before_and_keeps_its_version(tmp_path) -> None:
    # The template file with every image setting deleted (image-only tasks, and "image" from every other
    # task): what T4 was before drawings. A text-only model's definition — hence its benchmark version —
    # is exactly that one's, so adding an image setting never invalidates a text-only model's results.
    doc = json.loads(TEMPLATES_FILE.read_text(encoding="utf-8"))
    tasks = []
    for entry in doc["tasks"]:
        reps = [r for r in entry["representations"] if r != "image"]
        if reps:
            for key in ("inputs", "answer", "instruction", "notation"):
                if isinstance(entry.get(key), dict):
                    entry[key] = {r: v for r, v in entry[key].items() if r != "image"}
            tasks.append({**entry, "representations": reps})
    assert len(tasks) < len(doc["tasks"])
    (tmp_path / "text.json").write_text(json.dumps({**doc, "tasks": tasks}), encoding="utf-8")
    before = [s.definition() for s in load_template_sets(tmp_path / "text.json")]
    text, both = _track(False), _track(True)
    assert text.definition()["tasks"] == before
    assert _digest(text.definition()) == _digest(PromptRobustnessTrack(TrackOptions()).definition())
    assert _digest(both.definition()) != _digest(text.definition())
    data = "0" * 64
    assert benchmark_version("prompt_robustness", TrackOptions(), data) != benchmark_version(
        "prompt_robustness", TrackOptions(), data, images=True
    )
    # Another track without image questions: one version whatever the model reads.
    assert benchmark_version("consistency", TrackOptions(), data) == benchmark_version(
        "consistency", TrackOptions(), data, images=True
    )
    asked = {q.request.id: q for q in text.questions(RECORDS)}
    shown = {q.request.id: q for q in both.questions(RECORDS)}
    assert not [q for q in asked.values() if q.request.images or q.representation == "image"]
    # The text questions are the same requests (ids, prompts, budgets) in both runs.
    assert {i: q.request for i, q in shown.items() if not q.request.images} == {
        i: q.request for i, q in asked.items()
    }
    assert {(q.task.task, q.representation) for q in shown.values() if q.request.images} == IMAGE_CELLS


def test_an_image_question_shows_the_drawing_and_no_writing_of_the_molecule() -> None:
    by_record = {r["id"]: r for r in RECORDS}
    drawings: dict[str, set[str]] = {}
    for q in _track(True).questions(RECORDS):
        if q.representation != "image":
            assert not q.request.images
            continue
        (uri,) = q.request.images
        assert uri.startswith(PREFIX) and IMAGE_SLOT in q.request.prompt
        assert q.shown == "sha256:" + hashlib.sha256(base64.b64decode(uri[len(PREFIX):])).hexdigest()
        mol = Chem.MolFromSmiles(by_record[q.item]["smiles"])
        writings = {by_record[q.item]["smiles"], Chem.MolToSmiles(mol), by_record[q.item]["iupac"],
                    Chem.MolToInchi(mol), rdMolDescriptors.CalcMolFormula(mol)}  # fmt: skip
        assert not [w for w in writings if w in q.request.prompt], q.request.prompt
        drawings.setdefault(q.item, set()).add(uri)
    # One drawing per molecule, whatever the task or the template; another molecule, another drawing.
    assert all(len(uris) == 1 for uris in drawings.values())
    assert len({next(iter(uris)) for uris in drawings.values()}) == len(RECORDS)


def test_the_view_stores_each_drawing_once_hashed_and_refuses_a_tampered_one(tmp_path) -> None:
    track = _track(True)
    rows = PromptRobustnessTrack.container_view("toy", RECORDS, TrackOptions(), images=True)
    sha = write_view(rows, track.view_columns, tmp_path, "toy")
    files = sorted((tmp_path / "toy" / IMAGES_DIR).iterdir())
    assert len(files) == len(RECORDS)
    blob = (tmp_path / "toy" / VIEW_FILE).read_bytes()
    assert b"base64" not in blob and len(blob) < 2 * sum(len(r["prompt"]) + 200 for r in rows)
    assert read_view(tmp_path, "toy", sha, track.view_columns) == rows  # the data URIs come back
    text_rows = PromptRobustnessTrack.container_view("toy", RECORDS, TrackOptions())
    assert all(json.loads(r["images"]) == [] for r in text_rows)
    files[0].write_bytes(files[0].read_bytes() + b"\0")
    with pytest.raises(ViewError, match="does not hash to its name"):
        read_view(tmp_path, "toy", sha, track.view_columns)
    files[0].unlink()
    with pytest.raises(ViewError, match="not found"):
        read_view(tmp_path, "toy", sha, track.view_columns)
    files[0].symlink_to(files[1])
    with pytest.raises(ViewError, match="not found"):
        read_view(tmp_path, "toy", sha, track.view_columns)


def _right(q, by_record) -> str:
    mol = Chem.MolFromSmiles(by_record[q.item]["smiles"])
    task = q.task.task
    if task == "formula":
        return rdMolDescriptors.CalcMolFormula(mol)
    if task in ("ring_count", "aromatic_ring_count"):
        return str(rdMolDescriptors.CalcNumAromaticRings(mol) if task.startswith("aromatic")
                   else rdMolDescriptors.CalcNumRings(mol))  # fmt: skip
    if task == "molecular_weight":
        return f"{Descriptors.MolWt(mol):.2f}"
    if task == "lipinski":
        return "yes"  # four small molecules: no violation
    if task == "image_to_iupac":
        return by_record[q.item]["iupac"]
    if task == "hydration_free_energy":
        return by_record[q.item]["value"]
    if task == "functional_group":  # the group the question names, decided by its SMARTS
        group = next(g for g in GROUPS if g.name in q.request.prompt)
        return "yes" if group.id in groups_in(by_record[q.item]["smiles"]) else "no"
    return Chem.MolToSmiles(mol)


@pytest.mark.parametrize("images", [False, True], ids=["text-only", "takes-images"])
def test_image_cells_are_scored_for_a_model_that_sees_images_and_absent_for_one_that_does_not(
    tmp_path, monkeypatch, images
) -> None:
    # Only the image cells are asked here (the text cells are covered by test_prompt_robustness_track.py).
    import evaluators.tracks.prompt_robustness.asked as asked

    monkeypatch.setattr(asked, "SETS", tuple(s for s in asked.SETS if "image" in s.representations))
    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: [*map(dict, RECORDS)])
    track = _track(images)
    by_record = {r["id"]: r for r in RECORDS}
    out = tmp_path / "out"
    out.mkdir()
    questions = track.questions(RECORDS)
    with (out / COMPLETIONS).open("w", encoding="utf-8") as handle:
        for q in questions:
            answer = f"Answer: {_right(q, by_record)}"
            line = {"id": q.request.id, "completion": answer, "finish_reason": "stop"}
            handle.write(json.dumps(line) + "\n")
    result = TrackResult("m", "prompt_robustness", 6, "toy", "0" * 8, "0" * 8, 0, rows=(), counts={})
    scored = track.score(result, out_dir=out, data_dir=tmp_path)
    cells = {(dict(r.dims)["task"], dict(r.dims)["representation"]) for r in scored.rows}
    image_cells = {c for c in cells if c[1] == "image"}
    assert scored.counts["n_missing_completions"] == 0
    if not images:
        assert image_cells == set()  # not applicable: no row at all, so never ranked below anyone
        return
    assert image_cells == IMAGE_CELLS
    for r in scored.rows:
        dims = dict(r.dims)
        if dims["template"] == "-" and r.metric in ("accuracy_mean", "balanced_accuracy_mean"):
            assert r.value == pytest.approx(1.0), (dims, r.metric)
        if dims["template"] == "-" and r.metric == "mae_charged_mean":
            assert r.value < 0.01, (dims, r.metric)


#: The (task, representation) cells of T4 version 6 and the sha256 of their questions on FreeSolv and
#: smiles-iupac-pairs (sorted readable key, prompt, budget), measured at main 0330105 before version 7.
V6_CELLS = {
    ("aromatic_ring_count", r) for r in ("smiles", "iupac", "selfies", "inchi")} | {
    ("ring_count", r) for r in ("smiles", "iupac", "selfies", "inchi")} | {
    ("formula", r) for r in ("smiles", "iupac", "selfies", "inchi")} | {
    (task, r) for task in ("hydration_free_energy", "lipinski", "molecular_weight", "similarity")
    for r in ("smiles", "iupac")} | {
    ("equivalence", "smiles"), ("iupac_to_smiles", "iupac"), ("smiles_to_iupac", "smiles")}  # fmt: skip
V6_QUESTIONS = (50874, "9ea25f6959cc0e9626b0137f1142446a6d54642b1344edd808d0d6b560e3e04e")


def test_version_7_asks_every_question_of_version_6_word_for_word(benchmark_data) -> None:
    # Version 7 only adds cells (SELFIES/InChI for weight and Lipinski, name_equivalence, drawings): a
    # text model's version-6 results are what version 7 would ask it there, prompt for prompt.
    from evaluators.datasets import load_records

    out = []
    for name in ("freesolv", "smiles-iupac-pairs"):
        questions = _track(False).keyed_questions(load_records(name, benchmark_data(name)))
        out += sorted((q.request.id, q.request.prompt, q.request.max_new_tokens)
                      for q in questions if (q.task.task, q.representation) in V6_CELLS)  # fmt: skip
    assert (len(out), hashlib.sha256(json.dumps(out).encode()).hexdigest()) == V6_QUESTIONS


REACTIONS = [
    {"id": "0", "smiles": "CC(=O)OC", "reactants_smiles": "CC(=O)O.CO.O=S(=O)(O)O",
     "reactants_iupac": "acetic acid.methanol.sulfuric acid", "product_smiles": "CC(=O)OC",
     "product_iupac": "methyl acetate"},
    {"id": "1", "smiles": "CC(=O)Nc1ccccc1", "reactants_smiles": "CC(=O)Cl.Nc1ccccc1.CCN(CC)CC",
     "reactants_iupac": "acetyl chloride.aniline.N,N-diethylethanamine", "product_smiles": "CC(=O)Nc1ccccc1",
     "product_iupac": "N-phenylacetamide"},
]  # fmt: skip


def test_a_reaction_is_drawn_whole_for_a_model_that_sees_images_and_graded_like_its_text_forms(tmp_path,
                                                                                             monkeypatch):
    """Reactions as images (issue 33): one drawing of every reactant and reagent; the product asked as SMILES,
    graded against the product; a reactant given back is an echo, not a prediction."""
    from evaluators.notations.representations import get_representation

    image = get_representation("image")
    # Forward prediction only: retrosynthesis shows one drawing, the product's (as every molecule question).
    questions = [q for q in _track(True).questions(REACTIONS)
                 if q.representation == "image" and q.task.task == "forward_reaction"]  # fmt: skip
    assert len(questions) == 6 * len(REACTIONS)
    by_record = {r["id"]: r for r in REACTIONS}
    for q in questions:
        record = by_record[q.item]
        assert q.request.images == (image.write(record["reactants_smiles"]),)
        assert q.kind == "smiles" and "one structure drawing" in q.request.prompt
        assert not [p for p in record["reactants_smiles"].split(".") if p in q.request.prompt]
    assert not [q for q in _track(False).questions(REACTIONS) if q.representation == "image"]
    out = tmp_path / "out"
    out.mkdir()
    # Right on item 0, a reactant echoed on item 1.
    answers = {"0": "CC(=O)OC", "1": "Nc1ccccc1"}
    with (out / COMPLETIONS).open("w", encoding="utf-8") as handle:
        for q in _track(True).questions(REACTIONS):
            handle.write(json.dumps({"id": q.request.id, "completion": f"Answer: {answers[q.item]}"}) + "\n")
    monkeypatch.setattr(datasets, "load_records", lambda *a, **k: [dict(r) for r in REACTIONS])
    result = TrackResult("m", "prompt_robustness", 7, "toy", "0" * 8, "0" * 8, 0, rows=(), counts={})
    scored = _track(True).score(result, out_dir=out, data_dir=tmp_path)
    values = {(dict(r.dims)["representation"], dict(r.dims)["template"], r.metric): r.value
              for r in scored.rows if dict(r.dims)["task"] == "forward_reaction"}  # fmt: skip
    for rep in ("smiles", "iupac", "image"):
        assert values[(rep, "-", "accuracy_mean")] == 0.5 and values[(rep, "t1", "validity")] == 0.5, rep
