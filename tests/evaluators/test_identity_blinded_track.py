"""The identity-blinded track (T5): what it asks under each condition, and how the host scores the answers.

Made-up pair records (real molecules, labels chosen by hand; ``load_records`` is served from memory): an
oracle must score perfectly everywhere, a model that copies the source label must get the hand-computed
collapse ratio, group test and a toward rate of 1, prompts must differ only where the condition says, and a
hostile ``completions.jsonl`` must neither crash the scoring nor write through a link.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import math
from pathlib import Path

import pytest

import evaluators.datasets as datasets
from evaluators.asking.protocol import ANSWER_LINE, WHAT
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import TrackOptions, TrackResult
from evaluators.tracks import TRACKS
from evaluators.tracks.identity_blinded import (
    ANSWERS,
    COMPLETIONS,
    CONDITIONS,
    IdentityBlindedTrack,
    representations,
)

_CL_TO_OH = "Replace the chloro group on an aromatic carbon by a hydroxyl group."
_BR_TO_CL = "Replace the bromo group on an acyclic carbon by a chloro group."
_METHYL_AT_8 = ("Add a methyl group to the acyclic carbon that is atom 8 of the source SMILES (heavy atoms "
                "counted from 1 in the order written).")  # fmt: skip
_NO_METHOXY = "Remove the methoxy group from an aromatic carbon, leaving a hydrogen atom in its place."
# (source SMILES, target SMILES, source name, target name, edit)
_PAIRS = [
    ("Clc1ccccc1", "Oc1ccccc1", "chlorobenzene", "phenol", _CL_TO_OH),
    ("CCCCCCBr", "CCCCCCCl", "1-bromohexane", "1-chlorohexane", _BR_TO_CL),
    ("CCCOC(=O)CC", "CCCOC(=O)CCC", "propyl propanoate", "propyl butanoate", _METHYL_AT_8),
    ("COc1ccccc1O", "Oc1ccccc1", "", "", _NO_METHOXY),
]


def _record(pid: str, task: str, group: str, pair: int, labels: tuple[str, str, str]) -> dict[str, str]:
    source, target, source_name, target_name, edit = _PAIRS[pair]
    return {
        "id": pid, "task": task, "group": group, "source_id": f"s{pair}", "target_id": f"t{pair}",
        "source_smiles": source, "target_smiles": target, "source_iupac": source_name,
        "target_iupac": target_name, "edit": edit, "removed": "", "added": "", "attach": "0", "root": "",
        "source_label": labels[0], "target_label": labels[1], "false_source_label": labels[2],
        "smiles": target,
    }  # fmt: skip


#: Binary task: two consistent, two inconsistent pairs (labels: source, target, false source).
BINARY = [
    _record("logp_gt_3:0", "logp_gt_3", "consistent", 0, ("0", "0", "1")),
    _record("logp_gt_3:1", "logp_gt_3", "consistent", 1, ("1", "1", "0")),
    _record("logp_gt_3:2", "logp_gt_3", "inconsistent", 2, ("0", "1", "1")),
    _record("logp_gt_3:3", "logp_gt_3", "inconsistent", 3, ("1", "0", "0")),
]
#: Numeric task: |target − source| 0.5 and 0.4 (consistent), 3.0 and 2.5 (inconsistent).
NUMERIC = [
    _record("hydration_free_energy:0", "hydration_free_energy", "consistent", 0, ("-5.0", "-5.5", "-2.0")),
    _record("hydration_free_energy:1", "hydration_free_energy", "consistent", 1, ("-3.0", "-3.4", "-6.0")),
    _record("hydration_free_energy:2", "hydration_free_energy", "inconsistent", 2, ("-4.0", "-7.0", "-1.0")),
    _record("hydration_free_energy:3", "hydration_free_energy", "inconsistent", 3, ("-1.0", "-3.5", "-4.0")),
]
RECORDS = BINARY + NUMERIC
TRACK = IdentityBlindedTrack(TrackOptions())


def _result() -> TrackResult:
    return TrackResult("model", "identity_blinded", 1, "edit-pairs", "0" * 8, "0" * 8, 0, rows=(), counts={})


def _serve(monkeypatch, records) -> None:
    monkeypatch.setattr(
        datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in records]
    )


def _write(out: Path, lines) -> None:
    out.mkdir(exist_ok=True)
    (out / COMPLETIONS).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _score(tmp_path: Path, monkeypatch, answer, records=RECORDS):
    """Write ``answer(question, record)`` for every question and score; return (rows by key, out, result)."""
    _serve(monkeypatch, records)
    by_id = {r["id"]: r for r in records}
    out = tmp_path / "out"
    _write(out, [json.dumps({"id": q.request.id, "completion": answer(q, by_id[q.item])})
                 for q in TRACK.questions(records)])  # fmt: skip
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    TRACKS.get("identity_blinded").parse_result(scored.to_json())  # the host's check of the rows
    rows = {}
    for r in scored.rows:
        d = dict(r.dims)
        rows[(d["task"], d["representation"], d["condition"], d["group"], r.metric)] = r.value
    return rows, out, scored


def _say(q, value: str) -> str:
    return ("yes" if float(value) else "no") if q.kind == "label" else value


def _oracle(q, record) -> str:
    return record["target_smiles"] if q.kind == "smiles" else _say(q, record["target_label"])


def _copier(q, record) -> str:
    """Copies the source label: the stated one under C2/C3, the true one (remembered) under C0/C1."""
    if q.kind == "smiles":
        return record["source_smiles"]
    return _say(q, record["false_source_label" if q.template == "C3" else "source_label"])


def _table(out: Path) -> list[dict[str, str]]:
    with gzip.open(out / ANSWERS, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# --------------------------------------------------------------------------------------------------------
# Questions


def test_every_pair_is_asked_under_every_condition_and_iupac_only_without_positions() -> None:
    questions = TRACK.questions(RECORDS)
    ids = [q.key for q in questions]
    assert len(ids) == len(set(ids)) and ids == [q.key for q in TRACK.questions(RECORDS)]
    assert [q.request.id for q in questions] == [q.request.id for q in TRACK.questions(RECORDS)]
    # Pairs 0 and 1 have both names and no position; pair 2 names an atom of the SMILES; pair 3 has no names.
    assert [representations(r) for r in BINARY] == [("smiles", "iupac"), ("smiles", "iupac"), ("smiles",),
                                                   ("smiles",)]  # fmt: skip
    for r in RECORDS:
        for rep in representations(r):
            for c in CONDITIONS:
                assert f"{r['task']}|{c}|{rep}|{r['id']}" in ids
            assert f"reconstruct|C1|{rep}|{r['id']}" in ids
    assert len(ids) == 2 * (2 * 2 + 2) * 5
    kinds = {q.key.split("|")[0]: q.kind for q in questions}
    assert kinds == {"logp_gt_3": "label", "hydration_free_energy": "number", "reconstruct": "smiles"}
    for q in questions:
        assert q.request.temperature == 0.0 and q.request.stop == ("\n\n",)
        assert q.request.max_new_tokens == {"label": 32, "number": 32, "smiles": 128}[q.kind]
        assert q.request.prompt.endswith(ANSWER_LINE.format(what=WHAT[q.kind]))


def test_prompts_differ_only_where_the_condition_says() -> None:
    # The answer protocol's last line is the same under every condition; the lines above it are compared.
    prompts = {q.key: q.request.prompt.split("\n")[:-1] for q in TRACK.questions(RECORDS)}
    for r in RECORDS:
        for rep in representations(r):
            c0, c1, c2, c3 = (prompts[f"{r['task']}|{c}|{rep}|{r['id']}"] for c in CONDITIONS)
            field = "smiles" if rep == "smiles" else "iupac"
            notation = "SMILES" if rep == "smiles" else "IUPAC name"
            assert c0[0] == f"Target molecule ({notation}): {r['target_' + field]}"
            assert c0[1:] == c1[-2:]  # the question and the answer format, word for word
            assert c1[0] == f"Source molecule ({notation}): {r['source_' + field]}"
            assert c1[1] == f"Edit: {r['edit']}"
            assert r["target_" + field] not in "\n".join(c1[1:]) or r["target_" + field] in r["edit"]
            assert c2[:1] + c2[2:] == c1 and c3[:1] + c3[2:] == c1  # C2/C3 add one line to C1
            assert c2[1] != c3[1] and c2[1].startswith("Known property of the source molecule: ")
            recon = prompts[f"reconstruct|C1|{rep}|{r['id']}"]
            assert recon[:-2] == c1[:-2] and recon[-2:] == ["Write the SMILES of the target molecule.",
                                                            "Answer with the SMILES only."]  # fmt: skip
    c2 = prompts["hydration_free_energy|C2|smiles|hydration_free_energy:0"][1]
    c3 = prompts["hydration_free_energy|C3|smiles|hydration_free_energy:0"][1]
    assert "-5.00 kcal/mol" in c2 and "-2.00 kcal/mol" in c3
    assert "not greater than 3" in prompts["logp_gt_3|C2|smiles|logp_gt_3:0"][1]
    assert "not" not in prompts["logp_gt_3|C3|smiles|logp_gt_3:0"][1]


# --------------------------------------------------------------------------------------------------------
# Scores


def test_an_oracle_scores_perfectly_collapses_nothing_and_ignores_the_false_label(
    tmp_path, monkeypatch
) -> None:
    rows, out, scored = _score(tmp_path, monkeypatch, _oracle)
    for rep in ("smiles", "iupac"):
        for c in CONDITIONS:
            assert rows[("logp_gt_3", rep, c, "-", "accuracy")] == 1.0
            assert rows[("hydration_free_energy", rep, c, "-", "mae")] == pytest.approx(0.0, abs=1e-12)
            assert rows[("logp_gt_3", rep, c, "-", "validity")] == 1.0
        assert rows[("logp_gt_3", rep, "C1", "-", "reconstruction_accuracy")] == 1.0
        assert rows[("logp_gt_3", rep, "C3", "-", "toward_rate")] == 0.0
        assert rows[("logp_gt_3", rep, "C3", "-", "unchanged_rate")] == 1.0
        assert rows[("hydration_free_energy", rep, "C3", "-", "label_shift_mean")] == 0.0
        assert rows[("hydration_free_energy", rep, "C3", "-", "same_direction_rate")] == 0.0
    for c in ("C1", "C2"):
        assert rows[("logp_gt_3", "smiles", c, "-", "collapse_ratio")] == 1.0
        assert rows[("logp_gt_3", "smiles", c, "-", "cr_distance")] == 0.0
        assert rows[("logp_gt_3", "smiles", c, "-", "group_p")] == 1.0
        assert rows[("logp_gt_3", "smiles", c, "consistent", "accuracy")] == 1.0
        # MAE 0 on both groups: CR = 0/0 is undefined (the paper prints "Undefined"), so no row.
        assert ("hydration_free_energy", "smiles", c, "-", "collapse_ratio") not in rows
    # The iupac cell has only consistent pairs: no comparison there.
    assert ("logp_gt_3", "iupac", "C1", "-", "collapse_ratio") not in rows
    assert rows[("logp_gt_3", "smiles", "C0", "-", "n_items")] == 4
    assert rows[("logp_gt_3", "iupac", "C0", "-", "n_items")] == 2
    assert scored.counts["n_malformed_lines"] == 0 and scored.counts["n_missing_completions"] == 0
    assert len(_table(out)) == len(TRACK.questions(RECORDS))


def test_a_source_label_copier_gets_the_hand_computed_collapse_and_follows_the_false_label(
    tmp_path, monkeypatch
) -> None:
    rows, out, _ = _score(tmp_path, monkeypatch, _copier)
    key = ("hydration_free_energy", "smiles")
    # Numeric: errors 0.5, 0.4 (consistent) and 3.0, 2.5 (inconsistent) under C0-C2; CR = MAE_i / MAE_c.
    for c in ("C1", "C2"):
        assert rows[(*key, c, "consistent", "mae")] == pytest.approx(0.45)
        assert rows[(*key, c, "inconsistent", "mae")] == pytest.approx(2.75)
        assert rows[(*key, c, "-", "collapse_ratio")] == pytest.approx(2.75 / 0.45)
        assert rows[(*key, c, "-", "cr_distance")] == pytest.approx(math.log(2.75 / 0.45))
        assert rows[(*key, c, "-", "group_effect")] == 1.0  # every consistent error below every other
        assert (
            rows[(*key, c, "-", "collapse_ratio_low")]
            <= 2.75 / 0.45
            <= rows[(*key, c, "-", "collapse_ratio_high")]
        )
    # C3: each prediction moved by the whole label change, toward the false label.
    assert rows[(*key, "C3", "-", "label_shift_mean")] == pytest.approx(1.0)
    assert rows[(*key, "C3", "-", "same_direction_rate")] == 1.0
    assert rows[(*key, "C3", "-", "n_paired")] == 4
    # Binary: right on every consistent pair, wrong on every inconsistent one: CR = 1/0, undefined (no row);
    # Fisher's exact p of [[2, 0], [0, 2]] is 1/3; Cohen's h = π.
    for c in ("C1", "C2"):
        assert rows[("logp_gt_3", "smiles", c, "consistent", "accuracy")] == 1.0
        assert rows[("logp_gt_3", "smiles", c, "inconsistent", "accuracy")] == 0.0
        assert ("logp_gt_3", "smiles", c, "-", "collapse_ratio") not in rows
        assert rows[("logp_gt_3", "smiles", c, "-", "group_p")] == pytest.approx(1 / 3)
        assert rows[("logp_gt_3", "smiles", c, "-", "group_effect")] == pytest.approx(math.pi)
        assert rows[("logp_gt_3", "smiles", c, "-", "group_q")] >= rows[("logp_gt_3", "smiles", c, "-",
                                                                         "group_p")]  # fmt: skip
    for rep in ("smiles", "iupac"):
        assert rows[("logp_gt_3", rep, "C3", "-", "toward_rate")] == 1.0
        assert rows[("logp_gt_3", rep, "C3", "-", "unchanged_rate")] == 0.0
        # The source given back is no reconstruction.
        assert rows[("logp_gt_3", rep, "C1", "-", "reconstruction_accuracy")] == 0.0
    # The false label of a binary pair is the other class: wrong on consistent pairs, right on the others.
    assert rows[("logp_gt_3", "smiles", "C3", "consistent", "accuracy")] == 0.0
    assert rows[("logp_gt_3", "smiles", "C3", "inconsistent", "accuracy")] == 1.0


def test_a_half_right_model_gets_a_finite_binary_collapse_ratio(tmp_path, monkeypatch) -> None:
    """Right on both consistent pairs and on one inconsistent pair: CR = 1 / 0.5 = 2."""

    def answer(q, record):
        right = record["id"] != "logp_gt_3:3"
        return _oracle(q, record) if right else _copier(q, record)

    rows, _, _ = _score(tmp_path, monkeypatch, answer, BINARY)
    assert rows[("logp_gt_3", "smiles", "C1", "-", "collapse_ratio")] == 2.0
    assert rows[("logp_gt_3", "smiles", "C1", "-", "cr_distance")] == pytest.approx(math.log(2.0))
    assert rows[("logp_gt_3", "smiles", "C1", "-", "accuracy")] == 0.75


def test_the_answer_table_holds_every_question_with_its_score(tmp_path, monkeypatch) -> None:
    _, out, _ = _score(tmp_path, monkeypatch, _copier)
    table = _table(out)
    assert tuple(table[0]) == IdentityBlindedTrack.tables[0].columns
    by = {(t["task"], t["representation"], t["condition"], t["question"], t["id"]): t for t in table}
    row = by[("hydration_free_energy", "smiles", "C3", "property", "hydration_free_energy:2")]
    assert (
        row["answer"] == "-1.0"
        and float(row["score"]) == pytest.approx(6.0)
        and row["group"] == "inconsistent"
    )
    assert row["stated"] == "-1.0"
    assert by[("logp_gt_3", "smiles", "C2", "property", "logp_gt_3:0")]["stated"] == "no"
    assert by[("logp_gt_3", "smiles", "C1", "property", "logp_gt_3:0")]["stated"] == ""
    recon = by[("logp_gt_3", "smiles", "C1", "reconstruction", "logp_gt_3:0")]
    assert recon["answer"] == canonical_smiles("Clc1ccccc1") and recon["score"] == "0.0"


def test_a_hostile_completions_file_neither_crashes_scoring_nor_writes_through_a_link(
    tmp_path, monkeypatch
) -> None:
    _serve(monkeypatch, RECORDS)
    questions = TRACK.questions(RECORDS)
    junk = ["1e308", "-1.7e308", "yes and no", "", "NaN", "<|endoftext|>" * 200, "C1CC", "Ｙｅｓ", "\x00"]
    lines = [json.dumps({"id": q.request.id, "completion": junk[k % len(junk)]}) for k, q in
             enumerate(questions[2:])]  # fmt: skip
    lines += ["not json", "[]", json.dumps({"id": 5, "completion": "x"}),
              json.dumps({"id": "zz", "completion": "1"}),
              json.dumps({"id": questions[3].request.id, "completion": 7}), "{" * 100000]  # fmt: skip
    out = tmp_path / "out"
    _write(out, lines)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    (out / ANSWERS).symlink_to(victim)
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    TRACKS.get("identity_blinded").parse_result(scored.to_json())
    assert victim.read_text(encoding="utf-8") == "precious" and not (out / ANSWERS).is_symlink()
    assert len(_table(out)) == len(questions)
    assert scored.counts["n_missing_completions"] == 2 and scored.counts["n_malformed_lines"] == 6
    for r in scored.rows:
        assert math.isfinite(r.value)


# --------------------------------------------------------------------------------------------------------
# References


def _load_submission(monkeypatch, folder: str, file: str):
    path = Path(__file__).resolve().parents[2] / "submissions" / folder / file
    monkeypatch.syspath_prepend(str(path.parent))
    spec = importlib.util.spec_from_file_location(f"{folder.replace('-', '_')}_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_tool_reference_rebuilds_every_target_and_labels_it_exactly(tmp_path, monkeypatch) -> None:
    from rdkit import Chem
    from rdkit.Chem import Crippen

    from evaluators.answers.opsin import names_to_smiles

    tools = _load_submission(monkeypatch, "rdkit-opsin-tools", "tools.py")
    def names_to_mols(names):
        return [Chem.MolFromSmiles(s) if s else None for s in names_to_smiles(names)]

    monkeypatch.setattr(tools, "_names_to_mols", names_to_mols)
    # Real labels this time: Crippen logP > 3 of each target.
    records = [dict(r, target_label=str(int(Crippen.MolLogP(Chem.MolFromSmiles(r["target_smiles"])) > 3)))
               for r in RECORDS]  # fmt: skip
    assert tools.read_edit(_METHYL_AT_8) == ("[*:1][H]", "C[*:1]", "acyclic C", 7)
    out = tmp_path / "out"
    out.mkdir()
    TRACK.run(
        tools.ToolAnswerer(None), TRACK.container_dataset(records), out_dir=out, log=lambda _: None
    )
    _serve(monkeypatch, records)
    scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
    rows = {(*(v for _, v in r.dims), r.metric): r.value for r in scored.rows}
    for rep in ("smiles", "iupac"):
        for c in CONDITIONS:
            assert rows[("logp_gt_3", rep, c, "-", "accuracy")] == 1.0, (rep, c)
            assert rows[("hydration_free_energy", rep, c, "-", "validity")] == 0.0  # abstains on numbers
        assert rows[("logp_gt_3", rep, "C3", "-", "toward_rate")] == 0.0
        for task in ("logp_gt_3", "hydration_free_energy"):
            assert rows[(task, rep, "C1", "-", "reconstruction_accuracy")] == 1.0


def test_the_copy_baseline_copies_a_stated_label_and_abstains_otherwise(tmp_path, monkeypatch) -> None:
    copier = _load_submission(monkeypatch, "copy-source-label", "copy_label.py")
    out = tmp_path / "out"
    out.mkdir()
    TRACK.run(copier.SourceLabelCopier(None), TRACK.container_dataset(RECORDS), out_dir=out,
              log=lambda _: None)  # fmt: skip
    _serve(monkeypatch, RECORDS)
    rows = {(*(v for _, v in r.dims), r.metric): r.value
            for r in TRACK.score(_result(), out_dir=out, data_dir=tmp_path).rows}  # fmt: skip
    for task, rep in (("logp_gt_3", "smiles"), ("hydration_free_energy", "smiles"), ("logp_gt_3", "iupac")):
        for c in ("C0", "C1"):
            assert rows[(task, rep, c, "-", "validity")] == 0.0
        assert rows[(task, rep, "C2", "-", "validity")] == 1.0
        assert rows[(task, rep, "C1", "-", "reconstruction_accuracy")] == 0.0
    assert rows[("logp_gt_3", "smiles", "C3", "-", "toward_rate")] == 1.0
    assert rows[("hydration_free_energy", "smiles", "C2", "-", "collapse_ratio")] == pytest.approx(
        2.75 / 0.45
    )
    assert rows[("hydration_free_energy", "smiles", "C3", "-", "label_shift_mean")] == pytest.approx(1.0)


# ------------------------------------------------------------------------------------- issue 28 headline


def test_balanced_accuracy_gives_a_constant_one_half_whatever_the_class_shares() -> None:
    """Fix 2: plain accuracy gives "no" the majority share (0.75 here); balanced accuracy 0.5."""
    from evaluators.tracks.identity_blinded.metrics import balanced_accuracy, score

    truths = [False, False, False, True]
    constant_no = [float(t is False) for t in truths]  # correct where the truth is "no"
    assert score(constant_no, "accuracy") == 0.75
    assert balanced_accuracy(constant_no, truths) == 0.5
    assert balanced_accuracy([None] * 4, truths) == 0.0


def test_an_implausible_or_missing_number_is_charged_never_dropped(tmp_path, monkeypatch) -> None:
    """Fix 1: 1e14 is invalid (outside the plausible range) and charged, so abstaining or garbage is worst."""
    from evaluators.answers.ranges import invalid_error

    monkeypatch.setattr(datasets, "load_records", lambda name, data_dir, limit=None: [dict(r) for r in RECORDS])  # noqa: E501
    rows = {}
    for name, text in (("absurd", "1e14"), ("empty", ""), ("oracle", None)):
        out = tmp_path / name
        out.mkdir()
        by_id = {r["id"]: r for r in RECORDS}
        lines = [json.dumps({"id": q.request.id,
                             "completion": _oracle(q, by_id[q.item]) if text is None else text})
                 for q in TRACK.questions(RECORDS)]  # fmt: skip
        (out / "completions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        scored = TRACK.score(_result(), out_dir=out, data_dir=tmp_path)
        rows[name] = {(*(v for _, v in r.dims), r.metric): r.value for r in scored.rows}
    key = ("hydration_free_energy", "smiles", "C3", "-")
    truths = [float(r["target_label"]) for r in RECORDS if r["task"] == "hydration_free_energy"]
    charge = sum(invalid_error("hydration_free_energy", y) for y in truths) / len(truths)
    for name in ("absurd", "empty"):
        assert rows[name][(*key, "validity")] == 0.0
        assert (*key, "mae") not in rows[name]  # the paper's valid-only MAE has nothing to average
        assert math.isclose(rows[name][(*key, "mae_charged")], charge)
    assert rows["oracle"][(*key, "mae_charged")] == 0.0 < charge


def test_the_headline_has_no_criterion_a_constant_or_abstainer_wins_by_construction() -> None:
    """Fix 3: group gap and toward rate (0 for a constant / an abstainer) are reported, not ranked."""
    ranked = {(c.metric, dict(c.where)["condition"], dict(c.where)["group"]) for c in TRACK.headline}
    assert not {m for m, _, _ in ranked} & {"group_gap", "toward_rate", "accuracy", "mae"}
    assert ("balanced_accuracy", "C2", "inconsistent") in ranked and ("mae_charged", "C3", "-") in ranked
    assert TRACK.version == 6


def test_a_cell_below_the_minimum_is_reported_not_ranked() -> None:
    """Issue 29: a cell is ranked only with at least MIN_RANKED_PAIRS pairs in both groups (declared data)."""
    import evaluators.tracks.identity_blinded as T

    flat = {family: dict(c.flat) for family, c in zip(("C1", "C1n", "C2", "C2n", "C3", "C3n"), TRACK.headline,
                                                     strict=True)}  # fmt: skip
    assert T.MIN_RANKED_PAIRS == 20
    for (task, rep), (n, yes) in T.PAIRS_PER_GROUP.items():
        cell = f"edit-pairs/{task}/{rep}"
        names = ((flat["C1"], cell), (flat["C2"], f"{cell}/C2/inconsistent"), (flat["C3"], f"{cell}/C3")) \
            if yes is not None else ((flat["C1n"], f"{cell}/C1/inconsistent"),
                                     (flat["C2n"], f"{cell}/C2/inconsistent"), (flat["C3n"], f"{cell}/C3"))
        for family, name in names:
            assert (name in family) == (0 < n < T.MIN_RANKED_PAIRS), name
            if name in family:
                assert f"{n} label-consistent and {n} label-inconsistent" in family[name]
    assert "edit-pairs/hbd_gt_2/iupac" in flat["C1"] and "edit-pairs/logp_gt_3/iupac" not in flat["C1"]
    assert "edit-pairs/bace/smiles" not in flat["C1"] and T.PAIRS_PER_GROUP[("bace", "smiles")][0] >= 20
    assert "one class only" in flat["C1"]["edit-pairs/tpsa_gt_75/iupac"]


def test_bace_is_a_binary_task_asked_in_smiles_only() -> None:
    import evaluators.tracks.identity_blinded as T

    wording = next(w for w in T.WORDINGS if w.task == "bace")
    assert wording.kind == "label" and set(wording.statement) == {"yes", "no"}
    assert "bace" in TRACK.dimensions[0].values
    record = {"task": "bace", "id": "bace:0", "source_smiles": "CCO", "target_smiles": "CCN",
              "source_iupac": "", "target_iupac": "", "edit": "x", "source_label": "1",
              "false_source_label": "0"}  # fmt: skip
    assert T.representations(record) == ("smiles",)
    assert "BACE-1" in T.prompt("C2", "smiles", record, wording.question, wording.instruction)
