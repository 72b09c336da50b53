"""T3 — cross-representation consistency of generative models (SPEC §4 T3).

Paper: Yan et al., "Inconsistency of LLMs in molecular representations"
(``../shared/papers/smiles-iupac-consistency.txt``). Every question of :data:`TASKS` is asked about the
same molecules written as canonical SMILES, as IUPAC names and as randomized SMILES; a model that
understands the molecule gives the same answer whichever way it is written. The formula, Lipinski,
hydration-free-energy and retrosynthesis questions are also asked with the molecule as SELFIES and as standard
InChI (pairs
``smiles-selfies`` and ``smiles-inchi``, issue 33; not the translation question, whose wording asks for "the
other notation" — name ↔ SMILES —, nor the reaction question, whose reactants are "SMILES strings" or
"names": :mod:`evaluators.asking.tasks`). A molecule is asked in SELFIES or InChI only where the string
written reads back as the same molecule, stereo and tautomer included (as T4 asks them:
:func:`evaluators.tracks.prompt_robustness.asked.written`), so the truth computed from the SMILES is the truth
of what is shown; one that does not is not asked in that notation, its pair with SMILES has no item for it
(left out, never scored as a disagreement), and the representation's row counts it (``n_not_written``).

Two halves, on two sides of the sandbox:

- :meth:`ConsistencyTrack.run` (inside the container) only asks: the host builds the prompts from the data
  set's records and mounts only the requests (:meth:`~evaluators.asking.AskingTrack.container_view`:
  opaque ids, prompts, decoding parameters — never the set's file, whose names, formulas and values are
  the answers); the run calls the adapter's ``generate`` in chunks and writes one JSON line per request to
  ``completions.jsonl`` (id, completion, finish reason, token counts). It returns no metric rows, and the
  reference answers never enter the container.
- :meth:`ConsistencyTrack.score` (on the host, after the run) reads those lines back as untrusted data,
  extracts and normalises each answer by fixed rules (:mod:`evaluators.answers`: RDKit, OPSIN in batches),
  compares them with the ground truth computed from the records (:func:`consistency_tasks.truth`) and
  with each other (:mod:`evaluators.tracks.consistency.metrics`), and writes the per-item table
  ``answers.csv.gz``.

Rows: per (task, pair of representations) the agreement metrics — consistency, chance, adjusted, false
consistency, raw string agreement (numeric tasks: the MSE forms) — and per (task, representation) the
accuracy (numeric: MSE against the truth), the share of unusable answers, the item count and (SELFIES,
InChI) the molecules not written so. The headline is, per task and pair, the κ consistency
``(C − P_v)/(1 − P_v)`` (categorical; the paper's ``C − P_e`` stays as ``adjusted_consistency``) or the
chance-adjusted numeric agreement
:func:`~evaluators.tracks.consistency.metrics.numeric_agreement` (numeric; the paper's ``2·Var − MSE`` stays
as ``mse_adjusted``). A numeric answer outside its plausible range (:mod:`evaluators.answers.ranges`) is
invalid: it agrees with nothing and is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from evaluators.adapters import GenerationRequest
from evaluators.answers.ranges import PLAUSIBLE, plausible
from evaluators.asking import (
    COMPLETIONS,
    SHOWN_CHARS,
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
from evaluators.asking.tasks import (
    PAIRS,
    REPRESENTATIONS,
    TASKS,
    Task,
    applicable,
    input_structures,
    truth,
)
from evaluators.metrics import register_metric
from evaluators.notations.augmentations import get_augmentation
from evaluators.notations.representations import NotWritable, get_representation
from evaluators.schema import Criterion, Dimension, MetricRow, MetricSpec, TableSpec, TrackResult
from evaluators.tracks import TRACKS
from evaluators.tracks.consistency import metrics as cm

ANSWERS = "answers.csv.gz"
#: Greedy decoding; budgets and stop strings follow the answer protocol (evaluators.asking.protocol).
TEMPERATURE = 0.0

for _spec in (
    MetricSpec("consistency", True, "consistency", "Share of items whose two normalised answers agree.", 0.0,
               1.0),
    MetricSpec("chance_consistency", False, "chance", "Agreement of two random predictions: Σ p(y)².", 0.0,
               1.0),
    MetricSpec("adjusted_consistency", True, "adjusted consistency", "Consistency − chance.", -1.0, 1.0),
    MetricSpec("kappa_consistency", True, "κ consistency",
               "(consistency − chance of valid answers) / (1 − that chance): 1 identical, 0 constant or "
               "chance, −1 no valid answer.",
               -1.0, 1.0),
    MetricSpec("false_consistency", False, "false consistency",
               "Agreement among the items both representations answer wrongly.", 0.0, 1.0),
    MetricSpec("raw_agreement", True, "raw agreement",
               "Share of items whose raw completions are identical (the paper's string match).", 0.0, 1.0),
    MetricSpec("missing_share", False, "unusable answers",
               "Share of items without an answer that normalises (invalid SMILES, unparsable name …).",
               0.0, 1.0),
    MetricSpec("mse_consistency", False, "MSE between representations",
               "Mean squared difference of the two representations' numeric answers.", 0.0),
    MetricSpec("mse_chance", False, "chance MSE", "2·Var of all numeric answers (two random draws).", 0.0),
    MetricSpec("mse_adjusted", True, "adjusted consistency (MSE)",
               "Chance MSE − MSE between representations."),
    MetricSpec("mse_error", False, "MSE vs truth", "Mean squared error of the answered items.", 0.0),
    MetricSpec("numeric_agreement", True, "agreement (numeric, chance-adjusted)",
               "1 − MSE between representations (invalid side: squared plausible width) / (2·Var of all "
               "valid answers), clipped to [−1, 1]: 1 identical, 0 constant or chance, −1 no valid answer.",
               -1.0, 1.0),
    MetricSpec("mse_error_charged", False, "MSE vs truth (invalid charged)",
               "Mean squared error over every item; an invalid answer is charged the worst plausible error.",
               0.0),
    MetricSpec("n_not_written", False, "n not written",
               "Molecules not asked in this representation: their SELFIES or InChI does not read back as the "
               "same molecule (stereo and tautomer included); left out of its pair with SMILES.",
               0.0, integral=True),
):  # fmt: skip
    register_metric(_spec)


#: Criteria on which an honest but imperfect answerer cannot be told from a constant (tests/validity).
_LIPINSKI_FLAT = (
    "every FreeSolv molecule satisfies Lipinski's rule of five (the truth is \"yes\" for 642 of 642), so "
    "agreement between representations is agreement on a constant: the oracle answers \"yes\" everywhere "
    "and scores exactly what the constant \"yes\" scores (κ = 0)"
)
FLAT = tuple((f"freesolv/lipinski/{pair}", _LIPINSKI_FLAT) for pair in PAIRS)


@TRACKS.register("consistency")
class ConsistencyTrack(AskingTrack):
    """Same question, different notation: do a generative model's answers agree, and are they right."""

    name = "consistency"
    #: 2: formulas name each element once; a reaction answer that repeats an input is no prediction.
    #: 3 (issue 28): a number outside its plausible range is no answer; the numeric headline is the bounded,
    #: chance-adjusted ``numeric_agreement``; the categorical one κ = (C − P_v)/(1 − P_v); FreeSolv's Lipinski
    #: criteria are declared flat.
    #: 4 (issue 29): the container sees only the requests (opaque ids, prompts), never the data set's file.
    #: 6 (issue 31 item 4): structure answers graded strictly at the layers the input carries and leniently,
    #: wrong ones classified; items whose name cannot be verified as the compound left out and counted.
    #: 7 (issue 33 item 2): formula, Lipinski and ΔG_hyd also asked from SELFIES and InChI (pairs
    #: smiles-selfies, smiles-inchi; a molecule whose string does not read back is not asked, counted as
    #: ``n_not_written``); the questions of the other representations are word for word those of 6.
    #: 8 (issue 33 item 4): ``reaction_own_notation``, the product asked in the reactants' notation (a name
    #: from names, a SMILES from SMILES, both read back to a structure), beside the SMILES-product question;
    #: ``retrosynthesis``, the reactants and reagents from the product (in every writing).
    #: 9 (issue 33 item 4): ``retrosynthesis_own_notation``, the reactants and reagents in the product's
    #: notation (IUPAC names from a name, read back by OPSIN and compared as a set).
    version = 9
    main_metric = "kappa_consistency"
    description = (
        "Generative models answer the same question about a molecule written as SMILES, as an IUPAC name, "
        "as a randomized SMILES, as SELFIES and as InChI; consistent models give the same answer."
    )
    citation = (
        "Yan, B. et al. Inconsistency of LLMs in molecular representations. Digital Discovery (2025)."
    )
    dimensions = (
        Dimension("task", "The question asked.", values=tuple(t.name for t in TASKS),
                  labels=tuple((t.name, t.label) for t in TASKS)),
        Dimension("pair", "Two representations whose answers are compared (`-` for one representation).",
                  values=PAIRS,
                  labels=(("smiles-iupac", "SMILES ↔ IUPAC"),
                          ("smiles-randomized", "canonical ↔ random SMILES"),
                          ("smiles-selfies", "SMILES ↔ SELFIES"), ("smiles-inchi", "SMILES ↔ InChI"))),
        Dimension("representation", "How the molecule was written (`-` for a pair).", values=REPRESENTATIONS,
                  labels=(("smiles", "canonical SMILES"), ("iupac", "IUPAC name"),
                          ("randomized", "randomized SMILES"), ("selfies", "SELFIES"),
                          ("inchi", "InChI"))),
    )  # fmt: skip
    metrics = (
        "consistency", "chance_consistency", "adjusted_consistency", "kappa_consistency", "false_consistency",
        "raw_agreement", "accuracy", "accuracy_lenient", *(f"wrong_{c}" for c in grading.WRONG),
        "n_truth_excluded", "missing_share", "mse_consistency", "mse_chance", "mse_adjusted",
        "numeric_agreement", "mse_error", "mse_error_charged", "n_items", "n_not_written",
    )  # fmt: skip
    headline = (
        Criterion(
            metric="kappa_consistency",
            where=(("representation", "-"),),
            per=("task", "pair"),
            label="κ consistency (agreement beyond chance, normalised) per task and pair of representations",
            flat=FLAT,
        ),
        Criterion(
            metric="numeric_agreement",
            where=(("representation", "-"),),
            per=("task", "pair"),
            label="Chance-adjusted agreement of numeric answers (1 − MSE between representations / 2·Var)",
        ),
    )
    tables = (
        TableSpec(
            name="answers",
            file="answers.csv.gz",
            columns=("task", "representation", "id", "input", "completion", "answer", "correct", "rule",
                     "level", "class"),
            description=(
                "Every question and answer: the input as the model saw it, its completion (first "
                f"{SHOWN_CHARS} characters), the normalised answer and whether it is correct — the per-item "
                "explorer shows the two representations side by side. The `rule` column names the reader's "
                "rule that read the answer (`answer-line`, `boxed`, `first-line` …; `none`: no answer; "
                "`out-of-range`, `echo`: read, then voided). `level` is what a structure answer is compared "
                "at — `exact`, or `stereo` / `tautomer` where the name shown lacks the stereo or writes "
                "another tautomer of the data set's SMILES; `excluded`: the name cannot be verified as the "
                "compound, the item is left out of the scores — and `class` how a structure answer "
                "compares with the truth (`exact`, `stereo`, `tautomer`, `isomer`, `formula`, `none`). A "
                "molecule whose SELFIES or InChI does not read back as itself is not asked so and has no "
                "row in that representation."
            ),
            artifact=ANSWERS,
            added=("rule", "level", "class"),
        ),
    )
    artifacts = (COMPLETIONS,)
    artifact_max_bytes = 64 * 1024**2

    # ------------------------------------------------------------------ what is asked

    def definition(self) -> dict[str, Any]:  # noqa: D102
        return {
            "tasks": [t.definition() for t in TASKS],
            "representations": list(REPRESENTATIONS),
            "pairs": list(PAIRS),
            "randomized": asdict(get_augmentation("random_order", self.options.seed).description),
            "decoding": {"temperature": TEMPERATURE, "seed": self.options.seed},
            "protocol": protocol.definition(),
        }

    def keyed_questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every request of a run on ``records``, in a fixed order (task, representation, record).

        Keys: ``task|representation|record id``. Each task in its own representations
        (:attr:`~evaluators.asking.tasks.Task.representations`); a molecule that cannot be written in SELFIES
        or InChI (:func:`_written` raises) is not asked in it.
        """
        out = []
        for task in applicable(list(records)):
            for representation in task.representations:
                for record in records:
                    try:
                        text = _written(task, representation, record, self.options.seed)
                    except NotWritable:  # counted by the scoring (n_not_written), never asked
                        continue
                    budget, stop = self.decoding(task.max_new_tokens)
                    request = GenerationRequest(
                        id=f"{task.name}|{representation}|{record['id']}",
                        prompt=task.prompt(representation, text),
                        max_new_tokens=budget,
                        temperature=TEMPERATURE,
                        seed=self.options.seed,
                        stop=stop,
                    )
                    kind = task.answer[representation]
                    out.append(Question(request, task, representation, str(record["id"]), text, kind))
        return out

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Extract, normalise and score the completions against truths computed here (module docstring)."""
        from evaluators.datasets import load_records

        records = load_records(result.dataset, data_dir, limit=self.options.limit)
        questions = self.questions(records)
        texts, malformed = read_completions(out_dir / COMPLETIONS, {q.request.id for q in questions})
        by_record = {str(r["id"]): r for r in records}
        refused: dict[str, str] = {}
        rules: dict[str, str] = {}
        answers = normalise_answers(questions, texts, refused=refused, rules=rules)
        for q in questions:
            if q.task.numeric:  # outside the plausible range: invalid, never a number (issue 28)
                read = answers[q.request.id]
                answers[q.request.id] = plausible(q.task.name, read)
                if read is not None and answers[q.request.id] is None:
                    rules[q.request.id] = "out-of-range"
        for q in questions:
            if not q.task.echo_is_no_answer:
                continue
            if answers[q.request.id] in input_structures(q.task, by_record[q.item]):
                answers[q.request.id] = None  # the question repeated back: no prediction
                rules[q.request.id] = "echo"
        # One truth per task and item (each is asked in several representations).
        tasks = {q.task.name: q.task for q in questions}
        keys = dict.fromkeys((q.task.name, q.item) for q in questions)
        truths = {(name, item): truth(tasks[name], by_record[item]) for name, item in keys}
        levels = _levels(questions, by_record)
        rows = _rows(questions, texts, answers, truths, levels)
        _write_answers(out_dir / ANSWERS, questions, texts, answers, truths, rules, levels)
        counts = host_counts(result.counts, questions, texts, malformed, refused)
        return replace(result, rows=tuple(rows), counts=counts, artifacts=(COMPLETIONS, ANSWERS))


def plausible_width(quantity: str) -> float:
    """Return the width ``high − low`` of a quantity's plausible range (what an invalid side costs)."""
    low, high = PLAUSIBLE[quantity]
    return high - low


def _written(task: Task, representation: str, record: dict[str, str], seed: int) -> str:
    """Write the molecule (or the reactants) of ``record`` in ``representation``.

    Names are the data set's own; SMILES are written component by component by the notation
    (:mod:`evaluators.notations.representations`), a randomized component that cannot be drawn falls back to
    the canonical SMILES, and an unparsable one stays as written: the model sees what the data set holds.
    SELFIES and InChI (one molecule, never reactants): the registry's string, only where it reads back as
    the record's molecule, stereo and tautomer included (T4's rule), so the SMILES's truth is its truth.

    Raises
    ------
    NotWritable
        SELFIES or InChI only: the molecule cannot be written so, or its string reads back as another one.
    """
    if representation == "iupac":
        return record[task.inputs[1]]
    if representation in _CHECKED:
        return _written_checked(representation, record[task.inputs[0]], str(record["id"]))
    source = record[task.inputs[0]]
    parts = source.split(".") if task.reactions else [source]
    writers = [get_representation(name, seed) for name in dict.fromkeys((representation, "smiles"))]
    written = []
    for k, part in enumerate(parts):
        for writer in writers:
            try:
                written.append(writer.write(part, key=f"{record['id']}:{k}"))
                break
            except NotWritable:
                continue
        else:
            written.append(part)
    return ".".join(written)


#: Representations written only where they read back as the same molecule (:func:`_written_checked`).
_CHECKED = ("selfies", "inchi")


def _written_checked(representation: str, smiles: str, key: str) -> str:
    """Write ``smiles`` in ``representation`` and check that it reads back as the same canonical SMILES.

    The same rule as T4's (:func:`evaluators.tracks.prompt_robustness.asked.written`): standard InChI
    normalises mobile hydrogens, so a tautomer-sensitive molecule would be asked as another compound than
    the one its truth is computed from; SELFIES's valence constraints can change a molecule.

    Raises
    ------
    NotWritable
        The notation cannot write the molecule, or its string reads back as another one.
    """
    from evaluators.notations.smiles import canonical_smiles

    notation = get_representation(representation)
    written = notation.write(smiles, key=key)
    if notation.read(written) != canonical_smiles(smiles):
        raise NotWritable(f"the {notation.label} of {smiles[:80]!r} reads back as another molecule")
    return written


def structural(task: Task) -> bool:
    """Return whether every answer of ``task`` is a structure (a SMILES, or a name read as one).

    Such answers are graded strictly and leniently (:mod:`evaluators.asking.grading`).
    """
    return not task.numeric and set(task.answer.values()) <= {"smiles", "name", "names"}


def _levels(questions: Sequence[Question], by_record: dict[str, dict[str, str]]) -> dict[str, str | None]:
    """Level each question is graded at (:func:`evaluators.asking.grading.item_level`), by request id.

    The names shown (molecules, or reactants component by component) are checked against the record's
    SMILES in one OPSIN batch each; ``None``: the name cannot be verified as the compound (no truth).
    """
    named = [q for q in questions if q.representation == "iupac"]
    found: dict[tuple[tuple[str, str], bool], dict[str, str | None]] = {}
    for source in dict.fromkeys((q.task.inputs, q.task.reactions) for q in questions):
        (smiles, name), components = source
        items = dict.fromkeys(q.item for q in named if (q.task.inputs, q.task.reactions) == source)
        found[source] = (
            grading.levels_of(((i, by_record[i][name], by_record[i][smiles]) for i in items),
                              components=components)
            if items else {}
        )  # fmt: skip
    return {
        q.request.id: grading.item_level(q.representation, found[(q.task.inputs, q.task.reactions)], q.item)
        for q in questions
    }


def _rows(questions, texts, answers, truths, levels) -> list[MetricRow]:
    def row(task: str, pair: str, representation: str, metric: str, value: float) -> MetricRow:
        dims = (("task", task), ("pair", pair), ("representation", representation))
        return MetricRow(dims, metric, float(value))

    grouped: dict[tuple[str, str], list[Question]] = {}
    opaque: dict[tuple[str, str, str], str] = {}  # (task, representation, item) → the request's opaque id
    excluded: dict[tuple[str, str], int] = {}
    for q in questions:
        if levels[q.request.id] is None:  # no truth from the name shown: left out, counted
            excluded[(q.task.name, q.representation)] = excluded.get((q.task.name, q.representation), 0) + 1
            continue
        grouped.setdefault((q.task.name, q.representation), []).append(q)
        opaque[(q.task.name, q.representation, q.item)] = q.request.id
    rows: list[MetricRow] = []
    tasks = {q.task.name: q.task for q in questions}
    # Molecules a checked notation could not write (never asked): the task's items less those asked so.
    items: dict[str, set[str]] = {}
    asked: dict[tuple[str, str], set[str]] = {}
    for q in questions:
        items.setdefault(q.task.name, set()).add(q.item)
        asked.setdefault((q.task.name, q.representation), set()).add(q.item)
    checked = [(name, r) for name, task in tasks.items() for r in task.representations if r in _CHECKED]
    not_written = {(name, r): len(items[name] - asked.get((name, r), set())) for name, r in checked}
    for (name, representation), n in not_written.items():
        if (name, representation) not in grouped:  # nothing written so: only the count
            rows.append(row(name, "-", representation, "n_not_written", n))
    for (name, representation), qs in grouped.items():
        task = tasks[name]
        got = [answers[q.request.id] for q in qs]
        want = [truths[(name, q.item)] for q in qs]
        values = {"n_items": len(qs), "missing_share": cm.missing_share(got)}
        if representation == "iupac":
            values["n_truth_excluded"] = excluded.get((name, representation), 0)
        if representation in _CHECKED:
            values["n_not_written"] = not_written[(name, representation)]
        if task.numeric:
            values["mse_error"] = cm.numeric_error_mse(got, want)
            values["mse_error_charged"] = cm.numeric_error_charged(got, want, name)
        elif structural(task):
            graded = [grading.grade(a, t, levels[q.request.id])
                      for a, t, q in zip(got, want, qs, strict=True)]  # fmt: skip
            values.update(grading.summary(graded))
        else:
            values["accuracy"] = cm.accuracy(got, want)
        rows += [row(name, "-", representation, m, v) for m, v in values.items() if math.isfinite(v)]
    for name, task in tasks.items():
        for pair in task.pairs:
            a_rep, b_rep = pair.split("-")
            if (name, a_rep) not in grouped or (name, b_rep) not in grouped:
                continue
            # An item without a truth on one side, or not written in one, is left out of the pair.
            items = [q.item for q in grouped[(name, a_rep)] if (name, b_rep, q.item) in opaque]
            a = [answers[opaque[(name, a_rep, i)]] for i in items]
            b = [answers[opaque[(name, b_rep, i)]] for i in items]
            if structural(task):  # compared at the layers both inputs carry
                pair_levels = [grading.coarsest([levels[opaque[(name, r, i)]] for r in (a_rep, b_rep)])
                               for i in items]  # fmt: skip
                b = grading.align(a, b, pair_levels)
            if task.numeric:
                values = {
                    "mse_consistency": cm.numeric_consistency_mse(a, b),
                    "mse_chance": cm.numeric_chance_mse(a, b),
                    "mse_adjusted": cm.numeric_adjusted_consistency(a, b),
                    "numeric_agreement": cm.numeric_agreement(a, b, plausible_width(name)),
                }
            else:
                want = [truths[(name, i)] for i in items]
                raw_a = [texts.get(opaque[(name, a_rep, i)], "") for i in items]
                raw_b = [texts.get(opaque[(name, b_rep, i)], "") for i in items]
                values = {
                    "consistency": cm.consistency(a, b),
                    "chance_consistency": cm.chance_consistency(a, b),
                    "adjusted_consistency": cm.adjusted_consistency(a, b),
                    "kappa_consistency": cm.kappa_consistency(a, b),
                    "false_consistency": cm.false_consistency(a, b, want),
                    "raw_agreement": cm.raw_agreement(raw_a, raw_b),
                }
            rows += [row(name, pair, "-", m, v) for m, v in values.items() if math.isfinite(v)]
    return rows


def _write_answers(path: Path, questions, texts, answers, truths, rules, levels) -> None:
    """Write the per-item table (:data:`ConsistencyTrack.tables`)."""

    def rows():
        for q in questions:
            answer, want, level = answers[q.request.id], truths[(q.task.name, q.item)], levels[q.request.id]
            kind = ""
            if level is None or q.task.numeric:
                correct = ""
            elif structural(q.task):
                graded = grading.grade(answer, want, level)
                correct, kind = ("1" if graded.strict else "0"), graded.kind
            else:
                correct = "1" if answer is not None and answer == want else "0"
            completion = texts.get(q.request.id)
            yield [
                q.task.name, q.representation, q.item, q.shown[:SHOWN_CHARS],
                "" if completion is None else " ".join(completion.split())[:SHOWN_CHARS],
                cell(answer)[:SHOWN_CHARS], correct, rules.get(q.request.id, "none"),
                "excluded" if level is None else level, kind,
            ]  # fmt: skip

    write_table(path, ConsistencyTrack.tables[0].columns, rows())
