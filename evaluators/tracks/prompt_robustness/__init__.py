"""T4 — prompt robustness of generative models: many wordings of one question (SPEC §4 T4).

Paper: ChemDIRT (``../shared/papers/chemdirt-instruction-representation-benchmark.txt``): equivalent wordings
of one instruction move a model's accuracy by tens of points and reorder models. Every task of
``prompt_templates.json`` (:mod:`evaluators.tracks.prompt_robustness.templates`) is asked with each of its
templates and in each of its representations (SMILES, IUPAC name, SELFIES and InChI where the task lists them,
and molecular formulas for reactions), about the same fixed sample of :data:`ITEMS_PER_DATASET` records of a
data set (class-balanced for the classification sets). ChemDIRT's categories on the board (issue 33):
property and descriptor questions (formula, weight, Lipinski, measured values), recognition (ring and
aromatic ring counts, named functional groups: :mod:`.groups`), classification (ClinTox toxicity, BBBP
penetration), relational (are two SMILES the same molecule, which of two molecules is more similar to a
third: :mod:`.relational`), translation (name ↔ SMILES) and reaction prediction (reactants as SMILES, names,
formulas or one drawing); truths in :mod:`.truths`.

Two halves, as in T3 (:mod:`evaluators.asking`):

- :meth:`PromptRobustnessTrack.run` (container) asks every (task, representation, template, item) once,
  greedy, and writes ``completions.jsonl``; identical prompts are generated once. No truths enter the box:
  the container sees only the requests (opaque ids, prompts, decoding parameters), never the data set.
- :meth:`PromptRobustnessTrack.score` (host) normalises every answer, scores it against the truth computed
  from the record (:data:`TRUTHS`; :mod:`evaluators.tracks.prompt_robustness.scores`), writes
  ``template_answers.csv.gz`` and returns rows per template (dimension ``template`` = its id) and over
  templates (``template`` = ``-``: mean, SD, min, max, worst, spread of the primary score).

Headline (issue 28): per task and representation, the task's primary score (exact-match accuracy; balanced
accuracy for yes/no and counts; for numbers the MAE over every asked item with an invalid answer charged the
bounded :func:`~evaluators.answers.ranges.invalid_error`) averaged over templates, and the same score
under the worst template. A constant answer is equally bad under every wording, so the old headline, the
spread best − worst, was 0 — the best — for it; the spread and SD are still reported beside the mean, not
ranked. Criteria where an honest but imperfect answerer cannot be told from a constant (FreeSolv's Lipinski
question: every molecule passes) are declared :attr:`~evaluators.schema.Criterion.flat`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluators.adapters import GenerationRequest
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
from evaluators.asking.grading import GRADING_METRICS, WRONG
from evaluators.metrics import GRADING_SPECS, register_metric
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import Criterion, Dimension, MetricRow, MetricSpec, TableSpec, TrackResult
from evaluators.tracks import TRACKS
from evaluators.tracks.prompt_robustness.asked import (
    ITEMS_PER_DATASET,
    SETS,
    applicable,
    asked_sets,
    balance_field,
    composed,
    sample,
    written,  # noqa: F401 - re-exported
    written_all,
)
from evaluators.tracks.prompt_robustness.relational import COMPOSERS, Posed
from evaluators.tracks.prompt_robustness.scores import (
    PRIMARY,
    SUMMARY_STATS,
    item_scores,
    over_templates,
    template_metrics,
)
from evaluators.tracks.prompt_robustness.templates import IMAGES, TemplateSet
from evaluators.tracks.prompt_robustness.truths import TRUTHS, formula_of

TRACK = "prompt_robustness"
ANSWERS = "template_answers.csv.gz"
TEMPERATURE = 0.0
#: Generation budget of a direct model per answer kind (room for "Answer: " and a short sentence; a chat
#: model gets the answer protocol's larger budget, evaluators.asking.protocol).
MAX_NEW_TOKENS = {"smiles": 128, "name": 128, "formula": 32, "label": 32, "number": 32, "count": 32}
#: Characters of a completion kept in the per-item table.
SHOWN_CHARS = 120
REPRESENTATIONS = ("smiles", "iupac", "selfies", "inchi", "formula", "image")

#: Primary score → (higher is better, low, high): what the statistics over templates are of.
_DIRECTION = {"accuracy": (True, 0.0, 1.0), "balanced_accuracy": (True, 0.0, 1.0),
              "mae_charged": (False, 0.0, math.inf)}  # fmt: skip
_SCORE_TEXT = {"accuracy": "Accuracy", "balanced_accuracy": "Balanced accuracy (yes/no, counts)",
               "mae_charged": "MAE with invalid answers charged"}  # fmt: skip
#: The FreeSolv Lipinski truth is "yes" for all 642 molecules (measured): one class, so balanced
#: accuracy is recall on "yes", and the constant "yes" scores 1.0 above any imperfect model.
_ONE_CLASS = ("freesolv: the truth is Lipinski-'yes' for all 642 molecules (one class), so the constant "
              "'yes' scores 1.0 and beats an honest model that is right on 70 % (measured: tests/validity)")
_LIPINSKI_FLAT = tuple((f"freesolv/lipinski/{r}", _ONE_CLASS)
                       for r in ("smiles", "iupac", "selfies", "inchi", "image"))  # fmt: skip
_STAT_TEXT = {
    "mean": "mean over templates", "sd": "population SD over templates", "min": "lowest template",
    "max": "highest template", "worst": "worst template", "spread": "best − worst template",
}  # fmt: skip
for _spec in (
    *(MetricSpec(f"tanimoto_{fp}", True, f"Tanimoto ({label})", f"Mean Tanimoto similarity on {label} "
                 "fingerprints over the valid structure answers.", 0.0, 1.0)
      for fp, label in (("maccs", "MACCS"), ("morgan2_bits", "Morgan r=2, 2048 bits"),
                        ("morgan2_counts", "Morgan r=2 counts"), ("rdkit", "RDKit path"))),
    MetricSpec("element_cosine", True, "element cosine", "Mean cosine of element-count vectors over the "
               "valid formula answers.", 0.0, 1.0),
    MetricSpec("atom_f1", True, "atom F1", "Mean atom-level F1 over the valid formula answers.", 0.0, 1.0),
    *(replace(spec, name=f"{spec.name}_mean", label=f"{spec.label} (mean over templates)",
              description=f"{spec.description} Mean over templates.")
      for spec in GRADING_SPECS if spec.name in GRADING_METRICS),
    MetricSpec("validity_mean", True, "validity (mean over templates)",
               "Share of answers that normalise (numbers: and lie in the plausible range), averaged over "
               "templates.", 0.0, 1.0),
    *(MetricSpec(f"{score}_{stat}",
                 (higher if stat not in ("sd", "spread") else False),
                 f"{_SCORE_TEXT[score]}, {_STAT_TEXT[stat]}",
                 f"{_SCORE_TEXT[score]} per template: {_STAT_TEXT[stat]}.",
                 low, high if stat not in ("sd",) else (0.5 if higher else math.inf))
      for score, (higher, low, high) in _DIRECTION.items() for stat in SUMMARY_STATS),
):  # fmt: skip
    register_metric(_spec)


def _digest(data_uri: str) -> str:
    from evaluators.notations.representations.image import png_sha256

    return png_sha256(data_uri)


def _echoes(template_set: TemplateSet, record: dict[str, str], kind: str) -> set[str]:
    """Return a reaction's inputs, whole and per component, normalised as ``kind`` (an echo is no answer).

    Structures: canonical SMILES; formulas: the Hill formula of each reactant and of all of them together.
    """
    source = record[template_set.inputs["smiles"]]
    if kind == "formula":
        found = {formula_of(source), *(formula_of(p) for p in source.split("."))}
    else:
        found = {canonical_smiles(source), *(canonical_smiles(p) for p in source.split("."))}
    return {s for s in found if s}


@TRACKS.register(TRACK)
class PromptRobustnessTrack(AskingTrack):
    """Same question, many wordings: how much do a generative model's answers depend on the wording."""

    name = TRACK
    #: 3 (issue 29): the container sees only the requests (opaque ids, prompts), never the data set's files.
    #: 5 (issue 31 item 4): structures graded strictly at the layers the input carries and leniently, wrong
    #: ones classified; items whose name shown cannot be verified as the compound left out and counted.
    #: 6 (issue 33): recognition (ring counts), classification (ClinTox, BBBP), relational (equivalence,
    #: similarity) tasks; SELFIES and InChI writings; counts scored by balanced accuracy.
    #: 7 (issue 33): molecular weight and Lipinski in SELFIES and InChI; equivalence across notations (a name
    #: and a SMILES: name_equivalence); version 6's questions unchanged; image questions for models that take
    #: images (drawing → SMILES / name, formula, weight, Lipinski, ring counts), never part of a text-only
    #: model's definition.
    #: 8 (issue 33): functional-group recognition (yes/no, a named group per item, every group balanced:
    #: :mod:`.groups`), in SMILES, IUPAC, SELFIES, InChI and images; reactions drawn as one image for models
    #: that take images; classification, measured properties and similarity also in SELFIES and InChI
    #: (drawings where one molecule is shown): every category in at least three notations.
    #: 9: a name verified only as another tautomer of the record's SMILES has no truth for tasks whose truth
    #: a tautomer can change (functional groups, aromatic rings, Lipinski's donors, similarity); "same
    #: molecule?" also as two SELFIES and as an InChI and a SMILES (issue 33).
    #: 10 (issue 33 item 1): retrosynthesis, on the reactions whose reactants a named reaction rule proves
    #: (:mod:`.retro`), answers compared as sets of molecules and by Tanimoto.
    version = 10
    main_metric = "accuracy_mean"
    description = (
        "Generative models answer each question in six wordings (templates) and in SMILES and IUPAC "
        "form; the board ranks the mean over templates and the worst template (invalid answers count "
        "against), and shows the spread between the best and the worst beside the mean."
    )
    citation = "ChemDIRT: chemistry tasks with varied instructions and representations (2026)."
    dimensions = (
        Dimension("task", "The question asked.", values=tuple(s.task for s in SETS),
                  labels=tuple((s.task, s.label) for s in SETS)),
        Dimension("representation", "How the molecule was written.", values=REPRESENTATIONS,
                  labels=(("smiles", "SMILES"), ("iupac", "IUPAC name"), ("selfies", "SELFIES"),
                          ("inchi", "InChI"), ("formula", "molecular formula"),
                          ("image", "image (RDKit drawing)"))),
        Dimension("template", "The wording's id (`-`: statistics over all templates).",
                  values=tuple(dict.fromkeys(t.id for s in SETS for t in s.templates))),
    )  # fmt: skip
    metrics = (
        "n_items", "validity", "accuracy", "tanimoto_maccs", "tanimoto_morgan2_bits",
        "tanimoto_morgan2_counts", "tanimoto_rdkit", "element_cosine", "atom_f1", "mae", "rmse",
        "balanced_accuracy", "mae_charged", "validity_mean", *GRADING_METRICS, "n_truth_excluded",
        *(f"{m}_mean" for m in GRADING_METRICS),
        *(f"{score}_{stat}" for score in _DIRECTION for stat in SUMMARY_STATS),
    )  # fmt: skip
    headline = (
        Criterion("accuracy_mean", (("template", "-"),), ("task", "representation"),
                  "Exact-match accuracy averaged over the templates (structures, formulas)"),
        Criterion("accuracy_worst", (("template", "-"),), ("task", "representation"),
                  "Accuracy under the worst template (structures, formulas)"),
        Criterion("balanced_accuracy_mean", (("template", "-"),), ("task", "representation"),
                  "Balanced accuracy averaged over the templates (yes/no, counts)",
                  flat=_LIPINSKI_FLAT),
        Criterion("balanced_accuracy_worst", (("template", "-"),), ("task", "representation"),
                  "Balanced accuracy under the worst template (yes/no, counts)",
                  flat=_LIPINSKI_FLAT),
        Criterion("mae_charged_mean", (("template", "-"),), ("task", "representation"),
                  "MAE averaged over the templates, invalid charged (numeric tasks; lower is better)"),
        Criterion("mae_charged_worst", (("template", "-"),), ("task", "representation"),
                  "MAE under the worst template, invalid charged (numeric tasks; lower is better)"),
    )  # fmt: skip
    tables = (
        TableSpec(
            name="template_answers",
            file=ANSWERS,
            columns=("task", "representation", "template", "id", "completion", "answer", "truth", "score",
                     "rule", "level", "class"),
            description=(
                "Every answer under every template: the completion (first "
                f"{SHOWN_CHARS} characters), the normalised answer (empty when invalid; a number outside "
                "its plausible range is invalid), the normalised truth and the score: 1/0 for an exact "
                "match (an invalid answer scores 0), the absolute error charged for a number (an invalid "
                "answer is charged the worst plausible answer's error: never a zero error). The `rule` "
                "column names the reader's rule that read the answer (`answer-line`, `boxed`, `first-line` "
                "…; `none`: no answer; `out-of-range`, `echo`: read, then voided). For structure answers, "
                "`level` is what they are compared at (`exact`, or `stereo` / `tautomer` where the name "
                "shown lacks the stereo or writes another tautomer of the data set's SMILES) and `class` how "
                "the answer compares with the truth (`exact`, `stereo`, `tautomer`, `isomer`, `formula`, "
                "`none`: wrong in that way). A question whose name shown cannot be verified as the compound "
                "stays with `level` `excluded` and no score: left out of every metric and counted "
                "(`n_truth_excluded`)."
            ),
            artifact=ANSWERS,
            added=("rule", "level", "class"),
        ),
    )
    artifacts = (COMPLETIONS,)
    artifact_max_bytes = 64 * 1024**2

    def definition(self) -> dict[str, Any]:  # noqa: D102
        return {
            "tasks": [s.definition() for s in asked_sets(self.images)],
            "items_per_dataset": ITEMS_PER_DATASET,
            "sample": "first records in sha256(seed|id) order",
            "max_new_tokens": dict(MAX_NEW_TOKENS),
            "decoding": {"temperature": TEMPERATURE, "seed": self.options.seed},
            "protocol": protocol.definition(),
        }

    def keyed_questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every request of a run, in a fixed order (task, representation, template, record).

        Keys: ``task|representation|template|record id``.
        """
        seed = self.options.seed
        chosen = sample(records, seed, by=balance_field(records))
        out = []
        for s in applicable(chosen, asked_sets(self.images)):
            posed = composed(s, records, chosen, seed)
            for representation in s.representations:
                kind = s.answer[representation]
                if posed is None:
                    texts = written_all(s, representation, chosen)
                elif s.slots or not any(p.texts for p in posed.values()):
                    # one molecule, written as usual (the composer chose the items, and any slot values)
                    texts = {i: t for i, t in written_all(s, representation, chosen).items() if i in posed}
                else:  # relational: only the items the composer could pose, in their own texts
                    texts = {i: p.texts[representation] for i, p in posed.items()
                             if representation in p.texts}  # fmt: skip
                budget, stop = self.decoding(MAX_NEW_TOKENS[kind])
                image = representation in IMAGES
                for template in s.templates:
                    for record in chosen:
                        item = str(record["id"])
                        if item not in texts:
                            continue
                        request = GenerationRequest(
                            id=f"{s.task}|{representation}|{template.id}|{item}",
                            prompt=s.prompt(template, representation, texts[item],
                                            posed[item].slots if posed else ()),
                            max_new_tokens=budget,
                            temperature=TEMPERATURE,
                            seed=seed,
                            stop=stop,
                            images=(texts[item],) if image else (),
                        )
                        # An image is shown by its content hash in the per-item tables, not as its bytes.
                        shown = f"sha256:{_digest(texts[item])}" if image else texts[item]
                        out.append(Question(request, s, representation, item, shown, kind, template.id))
        return out

    def _posed(self, questions: Sequence[Question], records: Sequence[dict[str, str]]
               ) -> dict[str, dict[str, Posed]]:  # fmt: skip
        """Return the relational items of ``questions``' tasks, posed again on the same sample.

        Task → item id → :class:`~evaluators.tracks.prompt_robustness.relational.Posed`.
        """
        seed = self.options.seed
        chosen = sample(records, seed, by=balance_field(records))
        sets = {q.task.task: q.task for q in questions if q.task.task in COMPOSERS}
        return {name: composed(s, records, chosen, seed) or {} for name, s in sets.items()}

    def truths(self, questions: Sequence[Question], records: Sequence[dict[str, str]]) -> dict[str, Any]:
        """Return the normalised truth of every question, by request id (``None``: not computable).

        Single-molecule tasks: :data:`~evaluators.tracks.prompt_robustness.truths.TRUTHS` on the record;
        relational ones: the composer's (:mod:`~evaluators.tracks.prompt_robustness.relational`), posed again
        on the same sample.
        """
        by_record = {str(r["id"]): r for r in records}
        posed = self._posed(questions, records)
        cache: dict[tuple[str, str, str], Any] = {}
        out: dict[str, Any] = {}
        for q in questions:
            key = (q.task.task, q.kind, q.item)
            if key not in cache:
                if q.task.task in posed:
                    found = posed[q.task.task].get(q.item)
                    cache[key] = None if found is None else found.truth
                else:
                    cache[key] = TRUTHS[q.task.task](by_record[q.item], q.kind)
            out[q.request.id] = cache[key]
        return out

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Normalise, score and summarise the completions against truths computed here (module docstring)."""
        from evaluators.datasets import load_records

        records = load_records(result.dataset, data_dir, limit=self.options.limit)
        questions = self.questions(records)
        texts, malformed = read_completions(out_dir / COMPLETIONS, {q.request.id for q in questions})
        refused: dict[str, str] = {}
        rules: dict[str, str] = {}
        answers = normalise_answers(questions, texts, refused=refused, rules=rules)
        by_record = {str(r["id"]): r for r in records}
        truth_of = self.truths(questions, records)
        posed = self._posed(questions, records)
        members = {q.request.id: posed[q.task.task][q.item].members for q in questions
                   if q.item in posed.get(q.task.task, {})}  # fmt: skip
        levels = _levels(questions, by_record, members)
        # A record whose truth RDKit cannot compute (an unparsable SMILES in the data), or whose name shown
        # cannot be verified as the compound, is left out of the scores and counted, not held against the
        # model.
        scored = [q for q in questions
                  if truth_of[q.request.id] is not None and levels[q.request.id] is not None]  # fmt: skip
        excluded = {(q.task.task, q.representation, q.item)
                    for q in questions if levels[q.request.id] is None}  # fmt: skip
        echoes: dict[tuple[str, str, str], set[str]] = {}
        scores: dict[str, dict[str, float | None]] = {}
        for q in scored:
            answer = answers[q.request.id]
            if answer is not None and q.task.task in ("forward_reaction", "retrosynthesis"):
                key = (q.task.task, q.kind, q.item)
                if key not in echoes:
                    echoes[key] = _echoes(q.task, by_record[q.item], q.kind)
                if answer in echoes[key]:
                    answers[q.request.id] = answer = None  # the input repeated back: no prediction
                    rules[q.request.id] = "echo"
            scores[q.request.id] = item_scores(q.kind, answer, truth_of[q.request.id],
                                               q.task.task if q.kind == "number" else None,
                                               level=levels[q.request.id])  # fmt: skip
            if not scores[q.request.id]["valid"]:
                # item_scores alone decides validity (a number outside its plausible range is invalid,
                # issue 28): the table shows what it scored, so an invalid answer is shown empty.
                if answers[q.request.id] is not None:
                    rules[q.request.id] = "out-of-range"
                answers[q.request.id] = None
        rows = _rows(scored, scores, excluded)
        # The questions left out for want of a verifiable truth stay in the table (level ``excluded``, no
        # score): what the model answered is kept, and a rerun never shrinks the record.
        tabled = [q for q in questions if truth_of[q.request.id] is not None]
        _write_answers(out_dir / ANSWERS, tabled, texts, answers, truth_of, scores, rules, levels)
        counts = {**host_counts(result.counts, questions, texts, malformed, refused),
                  "n_unscored_questions": len(questions) - len(scored)}  # fmt: skip
        return replace(result, rows=tuple(rows), counts=counts, artifacts=(COMPLETIONS, ANSWERS))


def _levels(
    questions: Sequence[Question], by_record: dict[str, dict[str, str]], members: dict[str, tuple[str, ...]]
) -> dict[str, str | None]:
    """Level each question is graded at (:func:`evaluators.asking.grading.item_level`), by request id.

    A question that shows a name is graded at the level where that name and the record's SMILES agree
    (reactants component by component), checked in one OPSIN batch per kind of input; ``None``: no truth.
    A relational question that shows the names of other records (``members``) has a truth only when
    every one of them is verified too.
    """
    found: dict[bool, dict[str, str | None]] = {}
    named = [q for q in questions if q.representation == "iupac"]
    for reactions in (False, True):
        chosen = [q for q in named if q.task.inputs["iupac"].startswith("reactants") == reactions]
        rows = {
            (q.item, str(by_record[q.item][q.task.inputs["iupac"]]),
             str(by_record[q.item][q.task.inputs.get("smiles", "smiles")]))
            for q in chosen
        }  # fmt: skip
        if not reactions:
            rows |= {(m, str(by_record[m]["iupac"]), str(by_record[m]["smiles"]))
                     for q in chosen for m in members.get(q.request.id, ())}  # fmt: skip
        found[reactions] = grading.levels_of(sorted(rows), components=reactions) if rows else {}
    out = {}
    for q in questions:
        level = grading.item_level(
            q.representation, found[q.task.inputs.get("iupac", "").startswith("reactants")], q.item
        )
        shown = members.get(q.request.id, ())
        if q.representation == "iupac" and any(found[False].get(m) is None for m in shown):
            level = None
        if level == "tautomer" and q.task.tautomer_sensitive:
            level = None  # the name's tautomer may lack the group the record's SMILES has: no truth
        if q.task.task == "name_equivalence" and level != "exact":
            level = None  # "same molecule as this SMILES?" is exact: a name off by a tautomer has no truth
        out[q.request.id] = level
    return out


def _rows(
    questions: Sequence[Question],
    scores: dict[str, dict[str, float | None]],
    excluded: set[tuple[str, str, str]] = frozenset(),  # type: ignore[assignment]
) -> list[MetricRow]:
    def row(task: str, representation: str, template: str, metric: str, value: float) -> MetricRow:
        dims = (("task", task), ("representation", representation), ("template", template))
        return MetricRow(dims, metric, float(value))

    grouped: dict[tuple[str, str], dict[str, list[Question]]] = {}
    for q in questions:
        grouped.setdefault((q.task.task, q.representation), {}).setdefault(q.template, []).append(q)
    rows: list[MetricRow] = []
    for (task, representation), by_template in grouped.items():
        kind = by_template[next(iter(by_template))][0].kind
        primary = PRIMARY[kind]
        per_template: list[float] = []
        validities: list[float] = []
        for template, qs in by_template.items():
            values = template_metrics(kind, [scores[q.request.id] for q in qs])
            values = {m: v for m, v in values.items() if math.isfinite(v)}
            if representation == "iupac":  # the same items are left out of every template
                values["n_truth_excluded"] = sum(t == task and r == representation for t, r, _ in excluded)
            rows += [row(task, representation, template, m, v) for m, v in values.items()]
            if primary in values:
                per_template.append(values[primary])
            validities.append(values.get("validity", 0.0))
        summary = over_templates(per_template, higher_is_better=_DIRECTION[primary][0])
        rows += [row(task, representation, "-", f"{primary}_{stat}", v) for stat, v in summary.items()
                 if math.isfinite(v)]  # fmt: skip
        rows.append(row(task, representation, "-", "validity_mean", sum(validities) / len(validities)))
        if kind in ("smiles", "name"):  # the lenient accuracy and the error classes, mean over templates
            for metric in GRADING_METRICS:
                per = [m for t, qs in by_template.items()
                       if (m := template_metrics(kind, [scores[q.request.id] for q in qs]).get(metric))
                       is not None]  # fmt: skip
                if per:
                    rows.append(row(task, representation, "-", f"{metric}_mean", sum(per) / len(per)))
        rows.append(row(task, representation, "-", "n_items", len(by_template[next(iter(by_template))])))
    return rows


def _write_answers(path: Path, questions, texts, answers, truths, scores, rules, levels) -> None:
    """Write the per-item table (:data:`PromptRobustnessTrack.tables`)."""

    def rows():
        for q in questions:
            s = scores.get(q.request.id, {})
            score = s.get("error") if q.kind == "number" else s.get("accuracy")
            level = levels[q.request.id] or "excluded"
            completion = texts.get(q.request.id)
            yield [
                q.task.task, q.representation, q.template, q.item,
                "" if completion is None else " ".join(completion.split())[:SHOWN_CHARS],
                cell(answers[q.request.id])[:300], cell(truths[q.request.id])[:300], cell(score),
                rules.get(q.request.id, "none"),
                level if q.kind in ("smiles", "name") or level == "excluded" else "",
                next((c for c in WRONG if s.get(f"wrong_{c}")), "exact" if s.get("accuracy") else "")
                if q.kind in ("smiles", "name") and s else "",
            ]  # fmt: skip

    write_table(path, PromptRobustnessTrack.tables[0].columns, rows())
