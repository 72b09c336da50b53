"""T5 — identity-blinded diagnostic of generative models: a property of a molecule shown only as an edit.

Paper: Su et al., *Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction*
(``../shared/papers/identity-blinded-reasoning-diagnostic.txt``); issue 14. Every record of the data set
``edit-pairs`` (:mod:`evaluators.datasets.edit_pairs`) is a pair: a source molecule, a structural edit in
words and the target molecule it makes, with the task's label of both and a false source label. The property
of the *target* is asked under four conditions, worded identically (``blinded_prompts.json``) except for the
lines a condition adds or swaps:

==========  ==============================================================================================
condition   the prompt shows
==========  ==============================================================================================
C0          the target molecule
C1          the source molecule and the edit
C2          C1 and the source's true label
C3          C1 and a false source label
==========  ==============================================================================================

Each in SMILES and, for pairs with both IUPAC names whose edit does not name an atom by its position in
the source SMILES (:data:`POSITIONAL`), as IUPAC names too. Under C1 the model is also asked to write the
target's SMILES (structure reconstruction).

Two halves (:mod:`evaluators.asking`): :meth:`IdentityBlindedTrack.run` (container) asks, greedy, and sees
only the requests (opaque ids, prompts, decoding parameters): never the pairs file, whose target SMILES,
target labels and groups are the answers;
:meth:`IdentityBlindedTrack.score` (host) normalises and scores with
:mod:`evaluators.tracks.identity_blinded.metrics` (:mod:`evaluators.tracks.identity_blinded.rows`), and writes
``blinded_answers.csv.gz`` (every answer) and ``blinded_pairs.csv.gz`` (the pairs asked, for the site's
explorer).

Numeric answers outside the quantity's plausible range (:mod:`evaluators.answers.ranges`) are invalid.

Tasks (``blinded_prompts.json``): FreeSolv hydration free energy and aqueous log solubility (numeric), four
RDKit-computed binary properties (logP > 3, TPSA > 75, rule of five, > 2 H-bond donors) and, from the
paper's six tasks, BACE-1 inhibition (MoleculeNet BACE, measured labels; SMILES only, BACE has no names).

Headline (version 3: issue 28's criteria, issue 29's BACE task and balanced IUPAC subsets), per task and
representation; each criterion is an item mean (or a mean of per-class means), so the rank bootstrap can
resample pairs, and none can be won by an answerer that does not read the molecule (``tests/validity``).
A cell is ranked only when both of its groups hold at least :data:`MIN_RANKED_PAIRS` pairs
(:data:`PAIRS_PER_GROUP`); smaller cells are reported, not ranked (``Criterion.flat``):

==========================  ================================  ==========================================
criterion                   binary tasks (↑)                  numeric tasks (↓)
==========================  ================================  ==========================================
C1, source + edit           balanced accuracy, all pairs      charged MAE, label-inconsistent pairs
C2, + true source label     balanced accuracy, inconsistent   charged MAE, label-inconsistent pairs
C3, + false source label    balanced accuracy, all pairs      charged MAE, all pairs
==========================  ================================  ==========================================

Balanced accuracy = mean per-class recall (invalid = wrong): a constant scores 0.5, abstaining 0. Charged
MAE = MAE over every item asked, an invalid answer charged the worst plausible answer's error. On the
label-inconsistent pairs the source's label is wrong for the target (binary: always), so a source-label
copier scores 0 there under C2. The numeric C1 criterion is taken there too: on all pairs copying the
source's value is as good as a 70 %-right answerer (the pinned edit-pairs build, all 200 pairs per task:
mean |y_source − y_target| 1.94 kcal/mol and 0.80 log units, against the expected 2.04 and 0.81 of an
answerer right on 70 % and uniform over the truths' range otherwise), on the 100 inconsistent pairs it is
not (3.48 and 1.37, against 2.05 and 0.81). The
paper's numbers — plain accuracy, valid-only MAE, the collapse ratio with its interval and tests, the group
gap |S_c − S_i|, the toward/away rates — are reported next to them but not ranked: a constant or an
always-invalid answerer has gap 0 and toward rate 0, the best possible.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluators.adapters import GenerationRequest
from evaluators.answers.match import classify
from evaluators.answers.ranges import plausible
from evaluators.asking import (
    COMPLETIONS,
    AskingTrack,
    Question,
    cell,
    grading,
    host_counts,
    normalise_answers,
    protocol,
    read_completions,
    write_table,
)
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import Criterion, Dimension, TableSpec, TrackResult
from evaluators.tracks import TRACKS
from evaluators.tracks.identity_blinded.rows import METRIC_NAMES, Item, item_score, track_rows

__all__ = ["CONDITIONS", "IdentityBlindedTrack", "POSITIONAL", "TaskWording", "load_wordings", "prompt"]

TRACK = "identity_blinded"
ANSWERS = "blinded_answers.csv.gz"
PAIRS = "blinded_pairs.csv.gz"
PROMPTS_FILE = Path(__file__).with_name("blinded_prompts.json")
CONDITIONS = ("C0", "C1", "C2", "C3")
REPRESENTATIONS = ("smiles", "iupac")
_NOTATION = {"smiles": "SMILES", "iupac": "IUPAC name"}
_NAME_FIELD = {"smiles": "_smiles", "iupac": "_iupac"}
#: An edit description naming an atom by its place in the source SMILES (:func:`.edits.describe_edit`)
#: is meaningless next to an IUPAC name: such pairs are asked in SMILES only.
POSITIONAL = "of the source SMILES"
RECONSTRUCT = "reconstruct"
TEMPERATURE = 0.0
#: Generation budget of a direct model per answer kind (a chat model gets the answer protocol's larger
#: budget and no stop string: evaluators.asking.protocol).
MAX_NEW_TOKENS = {"smiles": 128, "label": 32, "number": 32}
#: Characters of a completion kept in the per-item table.
SHOWN_CHARS = 120
#: Bootstrap replicates of each collapse-ratio interval.
N_BOOT = 10000
#: Pairs per group a cell (task × representation) needs in *both* groups, label-consistent and
#: label-inconsistent, to be ranked. Below it a headline criterion rests on a handful of items (a C2 balanced
#: accuracy on 2 × 5 pairs moves by 0.1 per answer) and, in the smallest cells, on one class only, where a
#: constant scores 1. Such cells are still scored and shown; they are declared flat (``Criterion.flat``).
MIN_RANKED_PAIRS = 20
#: Pairs per group of each cell of edit-pairs (``sampled`` / ``sampled_named`` of its build_report.json;
#: the two groups are equal and have the same classes by construction, :func:`.pairs.named_first`), and for
#: binary tasks how many of them have target label yes. Measured on the pinned build; the data test checks
#: them (tests/execution/test_edit_pairs_data.py). BACE has no IUPAC names: SMILES only.
PAIRS_PER_GROUP: dict[tuple[str, str], tuple[int, int | None]] = {
    ("hydration_free_energy", "smiles"): (100, None), ("hydration_free_energy", "iupac"): (100, None),
    ("log_solubility", "smiles"): (100, None), ("log_solubility", "iupac"): (59, None),
    ("logp_gt_3", "smiles"): (100, 38), ("logp_gt_3", "iupac"): (44, 10),
    ("tpsa_gt_75", "smiles"): (76, 33), ("tpsa_gt_75", "iupac"): (2, 0),
    ("lipinski", "smiles"): (12, 6), ("lipinski", "iupac"): (0, 0),
    ("hbd_gt_2", "smiles"): (57, 24), ("hbd_gt_2", "iupac"): (1, 0),
    ("bace", "smiles"): (100, 50),
}  # fmt: skip


def _small(kind: str) -> dict[str, str]:
    """``edit-pairs/<task>/<rep>`` → why it is not ranked: the cells of one answer kind below the minimum."""
    binary = kind == "label"
    out = {}
    for (task, rep), (n, yes) in PAIRS_PER_GROUP.items():
        if n >= MIN_RANKED_PAIRS or n == 0 or (yes is not None) != binary:
            continue  # n == 0: nothing asked, no criterion
        classes = f" ({yes} with target label yes, {n - yes} no)" if binary else ""
        out[f"edit-pairs/{task}/{rep}"] = (
            f"{n} label-consistent and {n} label-inconsistent pairs{classes}, fewer than "
            f"{MIN_RANKED_PAIRS} per group" + ("; one class only: a constant of that class scores 1"
                                               if binary and yes in (0, n) else ""))  # fmt: skip
    return out


#: Declared flat criteria per headline family (``Criterion.flat``): reported, not ranked.
FLAT_C1 = tuple(_small("label").items())
FLAT_C2 = tuple((f"{cell}/C2/inconsistent", why) for cell, why in _small("label").items())
FLAT_C3 = tuple((f"{cell}/C3", why) for cell, why in _small("label").items())
FLAT_NUMERIC = {c: tuple((f"{cell}/{c}", why) for cell, why in _small("number").items())
                for c in ("C1/inconsistent", "C2/inconsistent", "C3")}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TaskWording:
    """One task's wording (``blinded_prompts.json``).

    Attributes
    ----------
    task, label : str
        Name (a task of :mod:`evaluators.tracks.identity_blinded.pairs`) and display label.
    kind : str
        Answer kind: ``number`` or ``label``.
    question, instruction : str
        The question about the target and the answer format.
    statement : str or dict
        The source-label sentence: ``{value}`` for numbers, ``yes``/``no`` sentences for binary tasks.
    """

    task: str
    label: str
    kind: str
    question: str
    instruction: str
    statement: Any

    def statement_of(self, value: float) -> str:
        """Return the sentence stating a source label (numbers with two decimals)."""
        if self.kind == "number":
            return self.statement.format(value=f"{value:.2f}")
        return self.statement["yes" if value else "no"]


def load_wordings(
    path: Path = PROMPTS_FILE,
) -> tuple[dict[str, str], dict[str, str], tuple[TaskWording, ...]]:
    """Load the layout lines, the reconstruction wording and the task wordings; check them.

    Raises
    ------
    ValueError
        When a task is unknown to :mod:`evaluators.tracks.identity_blinded.pairs`, repeats, has another answer
        kind than its labels, or lacks a field.
    """
    from evaluators.datasets.edit_pairs import BINARY_TASKS, NUMERIC_THRESHOLDS

    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    tasks = []
    for entry in doc["tasks"]:
        name = entry.get("task")
        kind = "label" if name in BINARY_TASKS else "number" if name in NUMERIC_THRESHOLDS else None
        if kind is None or entry.get("answer") != kind:
            raise ValueError(f"{path}: task {name!r} is unknown or its answer is not {kind!r}")
        statement = entry["statement"]
        if (kind == "number") != isinstance(statement, str) or (
            kind == "label" and set(statement) != {"yes", "no"}
        ):
            raise ValueError(f"{path}: task {name!r}: statement must be a string with {{value}} or yes/no")
        tasks.append(
            TaskWording(name, entry["label"], kind, entry["question"], entry["instruction"], statement)
        )
    if len({t.task for t in tasks}) != len(tasks):
        raise ValueError(f"{path}: task names repeat")
    return doc["layout"], doc["reconstruction"], tuple(tasks)


LAYOUT, RECONSTRUCTION, WORDINGS = load_wordings()
_BY_TASK = {w.task: w for w in WORDINGS}


def prompt(
    condition: str, representation: str, record: dict[str, str], question: str, instruction: str
) -> str:
    """Write the prompt of one pair under one condition (module docstring); lines joined by newlines.

    Parameters
    ----------
    condition : str
        One of :data:`CONDITIONS`.
    representation : str
        ``smiles`` (canonical SMILES as stored) or ``iupac`` (the record's names).
    record : dict
        An ``edit-pairs`` record.
    question, instruction : str
        What is asked and the answer format (the same under every condition).
    """
    notation = _NOTATION[representation]
    field = _NAME_FIELD[representation]
    if condition == "C0":
        lines = [LAYOUT["target"].format(notation=notation, molecule=record["target" + field])]
    else:
        lines = [LAYOUT["source"].format(notation=notation, molecule=record["source" + field])]
        if condition in ("C2", "C3"):
            wording = _BY_TASK[record["task"]]
            label = float(record["source_label" if condition == "C2" else "false_source_label"])
            lines.append(LAYOUT["label"].format(statement=wording.statement_of(label)))
        lines += [LAYOUT["edit"].format(edit=record["edit"]), LAYOUT["link"]]
    return "\n".join([*lines, question, instruction])


def representations(record: dict[str, str]) -> tuple[str, ...]:
    """Representations a pair is asked in: SMILES, and IUPAC when both names exist and no atom position."""
    named = record.get("source_iupac") and record.get("target_iupac") and POSITIONAL not in record["edit"]
    return REPRESENTATIONS if named else REPRESENTATIONS[:1]


@TRACKS.register(TRACK)
class IdentityBlindedTrack(AskingTrack):
    """Does a model predict the edited molecule's property, or copy the source's? (SPEC §4 T5)."""

    name = TRACK
    #: 3 (issue 29): balanced IUPAC subsets, BACE; 4: the container sees only the requests (opaque ids,
    #: prompts), never the pairs file. 6 (issue 31 item 4): reconstructions graded strictly at the layers
    #: the input carries and leniently, wrong ones classified, unverifiable source names left out.
    version = 6
    main_metric = "balanced_accuracy"
    description = (
        "Generative models predict a property of a target molecule given as a source molecule plus an "
        "edit in words, with no label (C1), the source's true label (C2) or a false one (C3), against the "
        "target shown directly (C0). The collapse ratio compares pairs whose source and target share the "
        "label with pairs whose labels differ (1: no reliance on the source); the toward rate counts "
        "predictions that follow a false source label."
    )
    citation = ("Su et al., Beyond Benchmark Accuracy: A Diagnostic Test for LLM Chemical Prediction "
                "(identity-blinded reasoning).")  # fmt: skip
    dimensions = (
        Dimension("task", "The property asked about the target.", values=tuple(w.task for w in WORDINGS),
                  labels=tuple((w.task, w.label) for w in WORDINGS)),
        Dimension("representation", "How the molecules were written.", values=REPRESENTATIONS,
                  labels=(("smiles", "SMILES"), ("iupac", "IUPAC name"))),
        Dimension("condition", "What the prompt showed (C3 rows also hold the C2→C3 response).",
                  values=CONDITIONS,
                  labels=(("C0", "C0 target given"), ("C1", "C1 source + edit"), ("C2", "C2 + true label"),
                          ("C3", "C3 + false label"))),
        Dimension("group", "Label-consistent or -inconsistent pairs (`-`: all pairs, or the comparison).",
                  values=("consistent", "inconsistent")),
    )  # fmt: skip
    metrics = METRIC_NAMES
    headline = (
        Criterion("balanced_accuracy", (("condition", "C1"), ("group", "-")), ("task", "representation"),
                  "C1 (source + edit) balanced accuracy of the edited molecule's label, all pairs (↑)",
                  flat=FLAT_C1),
        Criterion("mae_charged", (("condition", "C1"), ("group", "inconsistent")),
                  ("task", "representation", "condition", "group"),
                  "C1 (source + edit) MAE of the edited molecule's value, invalid charged, "
                  "label-inconsistent pairs (↓)", flat=FLAT_NUMERIC["C1/inconsistent"]),
        Criterion("balanced_accuracy", (("condition", "C2"), ("group", "inconsistent")),
                  ("task", "representation", "condition", "group"),
                  "C2 (+ true source label) balanced accuracy on label-inconsistent pairs (↑)",
                  flat=FLAT_C2),
        Criterion("mae_charged", (("condition", "C2"), ("group", "inconsistent")),
                  ("task", "representation", "condition", "group"),
                  "C2 (+ true source label) MAE, invalid charged, on label-inconsistent pairs (↓)",
                  flat=FLAT_NUMERIC["C2/inconsistent"]),
        Criterion("balanced_accuracy", (("condition", "C3"), ("group", "-")),
                  ("task", "representation", "condition"),
                  "C3 (+ false source label) balanced accuracy, all pairs (↑)", flat=FLAT_C3),
        Criterion("mae_charged", (("condition", "C3"), ("group", "-")),
                  ("task", "representation", "condition"),
                  "C3 (+ false source label) MAE, invalid charged, all pairs (↓)", flat=FLAT_NUMERIC["C3"]),
    )  # fmt: skip
    tables = (
        TableSpec(
            name="blinded_answers",
            file=ANSWERS,
            columns=("task", "representation", "condition", "question", "id", "group", "stated", "completion",
                     "answer", "score", "rule", "level", "class"),
            description=(
                "Every answer: the pair's task, representation and condition, the question (`property` or "
                "`reconstruction`), the pair id and group, the source label the prompt stated (C2: true, C3: "
                f"false; yes/no or the number shown), the completion (first {SHOWN_CHARS} "
                "characters), the normalised answer (empty when invalid) and its score: 1/0 for a label or "
                "a reconstructed SMILES (an invalid answer scores 0), the absolute error of a number (empty "
                "when invalid). The `rule` column names the reader's rule that read the answer "
                "(`answer-line`, `boxed`, `first-line` …; `none`: no answer; `out-of-range`: read, then "
                "voided). Reconstructions: `level` is what they are compared at (`exact`, or `stereo` / "
                "`tautomer` where the source name shown lacks the stereo or writes another tautomer of its "
                "SMILES; `excluded`: OPSIN cannot verify the name, left out) and `class` how the answer "
                "compares with the target (`exact`, `stereo`, `tautomer`, `isomer`, `formula`, `none`)."
            ),
            artifact=ANSWERS,
            numeric=("score",),
            added=("rule", "level", "class"),
        ),
        TableSpec(
            name="blinded_pairs",
            file=PAIRS,
            columns=("task", "id", "group", "source_smiles", "edit", "target_smiles", "source_label",
                     "target_label", "false_source_label"),
            description=(
                "Every pair asked: its task, id and group, the source SMILES, the edit as the prompts word "
                "it, the target SMILES, and the source's true, the target's and the false source label "
                "(binary: 1/0). Written by the host from the data set, so the site's pair explorer can "
                "draw what each answer was about."
            ),
            artifact=PAIRS,
            numeric=("source_label", "target_label", "false_source_label"),
        ),
    )  # fmt: skip
    artifacts = (COMPLETIONS,)
    artifact_max_bytes = 64 * 1024**2

    def definition(self) -> dict[str, Any]:  # noqa: D102
        return {
            "layout": dict(LAYOUT),
            "reconstruction": dict(RECONSTRUCTION),
            "tasks": [
                {
                    "task": w.task,
                    "kind": w.kind,
                    "question": w.question,
                    "instruction": w.instruction,
                    "statement": w.statement,
                }
                for w in WORDINGS
            ],  # fmt: skip
            "conditions": list(CONDITIONS),
            "iupac": f"both names present and the edit does not contain {POSITIONAL!r}",
            "max_new_tokens": dict(MAX_NEW_TOKENS),
            "decoding": {"temperature": TEMPERATURE, "seed": self.options.seed},
            "protocol": protocol.definition(),
            "collapse_ratio": {"n_boot": N_BOOT, "seed": self.options.seed, "level": 0.95},
        }

    def keyed_questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every request, in a fixed order: record, representation, condition, then the reconstruction.

        Keys: ``task|condition|representation|pair id`` and ``reconstruct|C1|representation|pair id``.
        Records of an unknown task are skipped.
        """
        out = []
        for record in records:
            wording = _BY_TASK.get(str(record.get("task", "")))
            if wording is None:
                continue
            item = str(record["id"])
            for representation in representations(record):
                shown = record["source" + _NAME_FIELD[representation]]
                for condition in CONDITIONS:
                    text = prompt(condition, representation, record, wording.question, wording.instruction)
                    molecule = record["target" + _NAME_FIELD[representation]] if condition == "C0" else shown
                    out.append(self._question(f"{wording.task}|{condition}|{representation}|{item}", text,
                                              wording, representation, item, molecule, wording.kind,
                                              condition))  # fmt: skip
                text = prompt("C1", representation, record, RECONSTRUCTION["question"],
                              RECONSTRUCTION["instruction"])  # fmt: skip
                out.append(self._question(f"{RECONSTRUCT}|C1|{representation}|{item}", text, wording,
                                          representation, item, shown, "smiles", RECONSTRUCT))  # fmt: skip
        return out

    def _question(self, qid, text, wording, representation, item, shown, kind, template) -> Question:
        budget, stop = self.decoding(MAX_NEW_TOKENS[kind])
        request = GenerationRequest(id=qid, prompt=protocol.with_protocol(text, kind), max_new_tokens=budget,
                                    temperature=TEMPERATURE, seed=self.options.seed, stop=stop)  # fmt: skip
        return Question(request, wording, representation, item, shown, kind, template)

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Normalise and score every answer; rows per task × representation × condition × group."""
        from evaluators.datasets import load_records

        records = load_records(result.dataset, data_dir, limit=self.options.limit)
        by_id = {str(r["id"]): r for r in records}
        questions = self.questions(records)
        texts, malformed = read_completions(out_dir / COMPLETIONS, {q.request.id for q in questions})
        refused: dict[str, str] = {}
        rules: dict[str, str] = {}
        answers = normalise_answers(questions, texts, refused=refused, rules=rules)
        # A reconstruction from names is graded at the layers the source's name and SMILES share.
        named = {(q.item, by_id[q.item]["source_iupac"], by_id[q.item]["source_smiles"]) for q in questions
                 if q.template == RECONSTRUCT and q.representation == "iupac"}  # fmt: skip
        levels = grading.levels_of(sorted(named)) if named else {}
        items = []
        for q in questions:
            record = by_id[q.item]
            reconstruct = q.template == RECONSTRUCT
            level = grading.item_level(q.representation, levels, q.item) if reconstruct else "exact"
            truth: Any = canonical_smiles(record["target_smiles"]) if reconstruct else _label(record, q.kind)
            answer = answers[q.request.id]
            if q.kind == "number" and not reconstruct:  # outside the plausible range: invalid
                answer = plausible(q.task.task, answer)
                if answer is None and answers[q.request.id] is not None:
                    rules[q.request.id] = "out-of-range"
            items.append(Item(
                task=q.task.task, representation=q.representation,
                condition="C1" if reconstruct else q.template,
                question="reconstruction" if reconstruct else "property", id=q.item,
                group=record["group"], kind=q.kind, answer=answer, truth=truth,
                score=(float(grading.grade(answer, truth, level).strict) if reconstruct and level is not None
                       else item_score(q.kind, answer, truth)),
                source_label=_label(record, q.task.kind, "source_label"),
                false_label=_label(record, q.task.kind, "false_source_label"), level=level,
            ))  # fmt: skip
        rows = track_rows(items, n_boot=N_BOOT, seed=self.options.seed)
        _write_answers(out_dir / ANSWERS, questions, items, texts, rules)
        asked = {q.item for q in questions}
        write_table(out_dir / PAIRS, IdentityBlindedTrack.tables[1].columns,
                    ([r.get(c, "") for c in IdentityBlindedTrack.tables[1].columns] for r in records
                     if str(r["id"]) in asked))  # fmt: skip
        counts = host_counts(result.counts, questions, texts, malformed, refused)
        return replace(result, rows=tuple(rows), counts=counts, artifacts=(COMPLETIONS, ANSWERS, PAIRS))


def _label(record: dict[str, str], kind: str, column: str = "target_label") -> Any:
    """Return a record's label as its answer kind holds it: ``bool`` (binary tasks) or ``float``.

    Numbers are rounded to two decimals, as the prompts write them (the C2→C3 shift is of the shown values).
    """
    value = float(record[column])
    if kind == "label":
        return value >= 0.5
    return round(value, 2) if column != "target_label" else value


def _write_answers(path: Path, questions: Sequence[Question], items: Sequence[Item], texts, rules) -> None:
    """Write the per-item table (:data:`IdentityBlindedTrack.tables`)."""

    def rows():
        for q, it in zip(questions, items, strict=True):
            completion = texts.get(q.request.id)
            stated = {"C2": it.source_label, "C3": it.false_label}.get(it.condition)
            yield [
                it.task, it.representation, it.condition, it.question, it.id, it.group,
                cell(stated) if it.question == "property" else "",
                "" if completion is None else " ".join(completion.split())[:SHOWN_CHARS],
                cell(it.answer)[:300], cell(it.score), rules.get(q.request.id, "none"),
                ("excluded" if it.level is None else it.level) if it.question == "reconstruction" else "",
                classify(it.answer, it.truth) if it.question == "reconstruction" else "",
            ]  # fmt: skip

    write_table(path, IdentityBlindedTrack.tables[0].columns, rows())
