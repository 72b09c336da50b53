"""``captioning``: molecule captioning under SMILES rewrites, the other half of the AMORE study (issue 34).

Paper: AMORE (``../shared/papers/amore-smiles-augmentation-robustness.txt``) validates its retrieval test
on ChEBI-20 captioning: a model describes each test molecule written as the data set's string and as each
of the paper's rewrites, and the caption scores (ROUGE, METEOR; its Table 5) fall with the rewrite. Here
every generative submission is asked, with **one** fixed instruction (:data:`INSTRUCTION`) and the answer
protocol (:mod:`evaluators.asking.protocol`), to describe a fixed seeded sample of
:data:`ITEMS_PER_DATASET` ChEBI-20 test molecules, each written

- as the original string of the data set (dimension value ``original``), and
- as each of the five checked rewrites T1 uses (``canonical``, ``explicit_h``, ``kekule``,
  ``ring_renumber``, ``random_order``: :mod:`evaluators.notations.augmentations`, seeded per molecule,
  every output checked to encode the same molecule). A rewrite that equals the original string for a
  molecule is not asked again (its caption would be the original's: counted as ``n_identical``); one that
  fails the identity check is not asked (``n_excluded``).

Two halves, as every generative track (:mod:`evaluators.asking`): the container sees only the requests
(opaque ids, prompts, decoding parameters) — never the data set's file, whose ``description`` column is
the gold caption — and writes ``completions.jsonl``; the host (:meth:`CaptioningTrack.score`) reads the
completions as untrusted data, takes each caption (:func:`read_caption`: the last ``Answer:`` line, else
the first paragraph; the words kept as written), and scores it against the gold description with
:mod:`evaluators.tracks.captioning.metrics` (BLEU-2/4, ROUGE-1/2/L, METEOR as MolT5's evaluation script
computes them; the tokenisation used — SciBERT's WordPiece when its files are on the machine, else BERT's
basic tokenizer — is recorded in the result's ``details``). METEOR needs WordNet 3.0: without it scoring
fails with :class:`~evaluators.tracks.captioning.metrics.WordNetUnavailable` naming what to install.

Rows (dimension ``augmentation``): per writing, the six corpus scores over the molecules asked in it; per
rewrite, the drop of each from the original on the same molecules with a paired bootstrap interval
(:mod:`evaluators.tracks.captioning.drops`); counts. Per-item table ``captions.csv.gz``: molecule id,
writing, the input as the prompt showed it, the completion (first :data:`SHOWN_CHARS` characters), the
reading rule and the per-item scores.

**Nothing here is ranked** (``headline = ()``). A constant caption ("The molecule is a …") scores well
above zero on BLEU and ROUGE against ChEBI-20's descriptions, which all open with "The molecule is", and
its drop under any rewrite is exactly 0 — the best possible. Until reference captioners (a retrieval
captioner by fingerprint and by string similarity, a trained model; issue 34 point 3) show where an
honest model's scores lie against a degenerate one's, no caption score or drop can be a criterion that a
constant cannot win (SPEC §4, validity rules). The numbers are reported, not ranked.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evaluators.adapters import GenerationRequest
from evaluators.answers.spans import clean_text, marked_span
from evaluators.asking import (
    COMPLETIONS,
    SHOWN_CHARS,
    AskingTrack,
    Question,
    cell,
    host_counts,
    protocol,
    read_completions,
    write_table,
)
from evaluators.metrics import register_metric
from evaluators.notations.augmentations import get_augmentation
from evaluators.notations.smiles import canonical_smiles
from evaluators.schema import Dimension, MetricRow, MetricSpec, TableSpec, TrackResult
from evaluators.tracks import TRACKS
from evaluators.tracks.captioning import drops
from evaluators.tracks.captioning.strings import levenshtein_ratio

TRACK = "captioning"
ANSWERS = "captions.csv.gz"
#: Molecules asked per data set: a fixed sample, first in ``sha256(seed|id)`` order (:func:`sample`). Each is
#: asked up to six times (original + five rewrites) with a long answer, so the sample sets the cost: 200
#: gives at most 1 200 captions per model (the full 3 300 would be 19 800), as T4's sample; the paired
#: design keeps the drop's interval narrow at that size (molecule difficulty cancels).
ITEMS_PER_DATASET = 200
#: The writing that is no rewrite: the data set's own string.
ORIGINAL = "original"
#: The rewrites, in the order T1 shows them (the augmentation registry's names; checked by a test).
REWRITES = ("canonical", "explicit_h", "kekule", "ring_renumber", "random_order")
WRITINGS = (ORIGINAL, *REWRITES)
TEMPERATURE = 0.0
#: Tokens of a direct model's caption (ChEBI-20's descriptions: median 276 characters, longest 992, ~60
#: and ~220 WordPiece tokens); a chat model gets the protocol's larger budget.
MAX_NEW_TOKENS = 256
#: The one instruction; the molecule follows on its own line, then the protocol's last line.
INSTRUCTION = (
    "Describe the molecule whose SMILES string is given below, as a ChEBI entry would: what kind of "
    "compound it is, how it is built (its parent structure and substituents), and its roles or relations "
    "to other compounds. Begin with \"The molecule is\"."
)
#: What the protocol's answer line asks for (``<answer>`` is …).
WHAT = "the whole description written on that one line"
#: Registry names of the corpus scores (metrics.py's ``rougeL`` is ``rouge_l``: registry names are lower
#: case).
SCORES = {"bleu2": "bleu2", "bleu4": "bleu4", "rouge1": "rouge1", "rouge2": "rouge2", "rougeL": "rouge_l",
          "meteor": "meteor"}  # fmt: skip
READING_RULES = ("tag", "boxed", "answer-line", "first-paragraph", "none")

_LABELS = {"bleu2": ("BLEU-2", "Corpus BLEU-2 (NLTK, no smoothing) over the molecules asked so."),
           "bleu4": ("BLEU-4", "Corpus BLEU-4 (NLTK, no smoothing) over the molecules asked so."),
           "rouge1": ("ROUGE-1", "Mean ROUGE-1 F-measure (rouge-score, no stemming)."),
           "rouge2": ("ROUGE-2", "Mean ROUGE-2 F-measure (rouge-score, no stemming)."),
           "rouge_l": ("ROUGE-L", "Mean ROUGE-L F-measure (rouge-score, no stemming)."),
           "meteor": ("METEOR", "Mean METEOR (NLTK, WordNet 3.0 synonyms).")}  # fmt: skip
for _name, (_label, _text) in _LABELS.items():
    register_metric(MetricSpec(_name, True, _label, f"{_text} Caption against the gold ChEBI-20 description.",
                               0.0, 1.0))  # fmt: skip
    register_metric(MetricSpec(f"{_name}_drop", False, f"{_label} drop",
                               f"{_label} of the original string's captions minus that of the rewrite's, "
                               "on the same molecules (positive: worse when rewritten).", -1.0,
                               1.0))  # fmt: skip
    for _end, _word in (("low", "lower"), ("high", "upper")):
        register_metric(MetricSpec(f"{_name}_drop_{_end}", False, f"{_label} drop, {_word} end",
                                   f"{_word.capitalize()} end of the 95 % paired bootstrap interval of the "
                                   f"{_label} drop.", -1.0, 1.0))  # fmt: skip
register_metric(MetricSpec("mean_length", False, "mean string length",
                           "Mean length in characters of the SMILES asked in this writing (AMORE Table 7).",
                           0.0, math.inf))
register_metric(MetricSpec("levenshtein_ratio", False, "Levenshtein ratio to the original",
                           "Mean Levenshtein ratio as AMORE defines it (Table 7): the edit distance between "
                           "the original string and the rewrite over the original's length, per molecule "
                           "asked in both (0: the same string).", 0.0, math.inf))
register_metric(MetricSpec("no_caption_share", False, "no caption",
                           "Share of the molecules asked whose completion holds no caption (empty, or no "
                           "completion): scored as an empty caption, 0 on every metric.", 0.0, 1.0))


def sample(records: Sequence[dict[str, str]], seed: int, n: int = ITEMS_PER_DATASET) -> list[dict[str, str]]:
    """Return the molecules asked: the first ``n`` records in ``sha256(seed|id)`` order, in file order.

    The rule of T4's sample: the choice does not depend on the file's order, and a record added later
    displaces at most one.
    """
    def key(record: dict[str, str]) -> str:
        return hashlib.sha256(f"{seed}|{record['id']}".encode()).hexdigest()

    chosen = {r["id"] for r in sorted(records, key=key)[:n]}
    return [r for r in records if r["id"] in chosen]


def writings(record: dict[str, str], seed: int) -> dict[str, tuple[str, str | None]]:
    """Return how one molecule is written: ``writing → (status, text)``.

    ``original``: ``("changed", the data set's string)``. A rewrite: its :class:`AugmentedPair` status —
    ``changed`` (asked), ``identical`` (equals the original: not asked) or ``excluded`` (failed, or the
    identity check did: not asked) — and its text.
    """
    smiles = str(record["smiles"])
    reference = canonical_smiles(smiles)
    out: dict[str, tuple[str, str | None]] = {ORIGINAL: ("changed", smiles)}
    for name in REWRITES:
        pair = get_augmentation(name, seed).apply(str(record["id"]), smiles, reference)
        out[name] = (pair.status, pair.augmented)
    return out


def read_caption(text: str | None) -> tuple[str, str]:
    r"""Return the caption of a completion and the rule that found it (:data:`READING_RULES`).

    The last marked answer (``Answer:`` line, ``<answer>`` tag, ``\boxed{}``), else the first paragraph
    (a direct model may simply continue with the caption); whitespace collapsed, wrapping quotes and
    emphasis dropped, the words otherwise kept as written (no label or full stop removed: they are the
    caption). ``("", "none")`` when there is none.

    Examples
    --------
    >>> read_caption("Let me see.\nAnswer: **The molecule is an alcohol.**")
    ('The molecule is an alcohol.', 'answer-line')
    >>> read_caption("The molecule is a\nketone.\n\nMore text.")
    ('The molecule is a ketone.', 'first-paragraph')
    >>> read_caption(None)
    ('', 'none')
    """
    text = clean_text(text)
    marked = marked_span(text)
    if marked is not None:
        span, rule = marked
    else:
        paragraphs = [p for p in text.split("\n\n") if p.strip()]
        span, rule = (paragraphs[0] if paragraphs else ""), "first-paragraph"
    span = " ".join(span.split()).strip("\"'`*_“”‘’ ")
    return (span, rule) if span else ("", "none")


@TRACKS.register(TRACK)
class CaptioningTrack(AskingTrack):
    """Describe a molecule written as the data set wrote it and as five rewrites: do the captions hold up."""

    name = TRACK
    #: 2 (issue 34 point 4): each writing's mean string length and each rewrite's Levenshtein ratio to the
    #: original string, beside the drops (AMORE Tables 7–8).
    version = 2
    main_metric = "rouge_l"
    description = (
        "Generative models caption ChEBI-20 molecules written as the data set's SMILES and as five rewrites "
        "of it; BLEU, ROUGE and METEOR against the gold descriptions, and their drop per rewrite. "
        "Reported, not ranked."
    )
    citation = (
        "Ganeeva, V. et al. Chemical Language Models Have Problems with Chemistry: A Case Study on "
        "Molecule Captioning Task. ICLR 2024 Tiny Papers; Edwards, C. et al. Translation between Molecules "
        "and Natural Language. EMNLP 2022."
    )
    dimensions = (
        Dimension(
            "augmentation",
            "How the SMILES was written: the data set's own string (`original`) or one of T1's checked "
            "rewrites, asked only where it differs from the original.",
            values=WRITINGS,
        ),
    )
    metrics = (
        *SCORES.values(), *(f"{m}_drop" for m in SCORES.values()),
        *(f"{m}_drop_{end}" for m in SCORES.values() for end in ("low", "high")),
        "n_items", "n_identical", "n_excluded", "no_caption_share", "mean_length", "levenshtein_ratio",
    )  # fmt: skip
    #: Nothing is ranked: a constant caption scores above zero and never drops (module docstring).
    headline = ()
    tables = (
        TableSpec(
            name="captions",
            file="captions.csv.gz",
            columns=("augmentation", "id", "input", "completion", "rule", *SCORES.values(),
                     "levenshtein_ratio"),
            description=(
                "Every caption asked: the molecule's id, how it was written (`original` or the rewrite), the "
                f"SMILES as the prompt showed it and the completion (first {SHOWN_CHARS} characters each), "
                "the rule that read the caption (`answer-line`, `first-paragraph` …; `none`: no caption, "
                "scored as an empty one) and its scores against the gold description: sentence BLEU-2/4 "
                "(the corpus scores sum BLEU's statistics instead), ROUGE-1/2/L F-measures and METEOR; for a "
                "rewrite, its Levenshtein ratio to the original string (edit distance over the original's "
                "length, computed on the whole strings; AMORE Table 7)."
            ),
            artifact=ANSWERS,
            numeric=(*SCORES.values(), "levenshtein_ratio"),
        ),
    )
    artifacts = (COMPLETIONS,)
    artifact_max_bytes = 64 * 1024**2

    def definition(self) -> dict[str, Any]:  # noqa: D102
        from dataclasses import asdict

        return {
            "instruction": INSTRUCTION,
            "what": WHAT,
            "items_per_dataset": ITEMS_PER_DATASET,
            "sample": "first records in sha256(seed|id) order",
            "rewrites": [asdict(get_augmentation(n, self.options.seed).description) for n in REWRITES],
            "max_new_tokens": MAX_NEW_TOKENS,
            "decoding": {"temperature": TEMPERATURE, "seed": self.options.seed},
            "protocol": protocol.definition(),
            "scores": list(SCORES.values()),
            "bootstrap": {"replicates": drops.REPLICATES, "level": drops.LEVEL, "paired": True},
        }

    def prompt(self, smiles: str) -> str:
        """Return the question about the molecule written as ``smiles``."""
        return protocol.with_protocol(f"{INSTRUCTION}\nSMILES: {smiles}", "", what=WHAT)

    def keyed_questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every request of a run (writing, then record); keys ``writing|record id``."""
        seed = self.options.seed
        budget, stop = self.decoding(MAX_NEW_TOKENS)
        chosen = sample(records, seed)
        written = {str(r["id"]): writings(r, seed) for r in chosen}
        out = []
        for writing in WRITINGS:
            for record in chosen:
                item = str(record["id"])
                status, text = written[item][writing]
                if status != "changed" or text is None:
                    continue
                request = GenerationRequest(id=f"{writing}|{item}", prompt=self.prompt(text),
                                            max_new_tokens=budget, temperature=TEMPERATURE, seed=seed,
                                            stop=stop)  # fmt: skip
                out.append(Question(request, TRACK, writing, item, text, "caption"))
        return out

    def score(self, result: TrackResult, *, out_dir: Path, data_dir: Path) -> TrackResult:
        """Read every caption and score it against the gold description (module docstring)."""
        from evaluators.datasets import load_records
        from evaluators.tracks.captioning.metrics import default_tokenization, load_wordnet, score_captions

        wordnet = load_wordnet()  # fails first, and clearly, where METEOR cannot run
        tokenization = default_tokenization()
        records = load_records(result.dataset, data_dir, limit=self.options.limit)
        if not all("description" in r for r in records):
            raise ValueError(f"data set {result.dataset!r} has no gold descriptions to score captions with")
        gold = {str(r["id"]): str(r["description"]) for r in records}
        questions = self.questions(records)
        texts, malformed = read_completions(out_dir / COMPLETIONS, {q.request.id for q in questions})
        read = {q.request.id: read_caption(texts.get(q.request.id)) for q in questions}
        scored = score_captions([read[q.request.id][0] for q in questions], [gold[q.item] for q in questions],
                                tokenization=tokenization, wordnet=wordnet)  # fmt: skip
        items = dict(zip((q.request.id for q in questions), scored.items, strict=True))
        chosen = sample(records, self.options.seed)
        statuses = {str(r["id"]): writings(r, self.options.seed) for r in chosen}
        rows = _rows(questions, items, read, statuses, self.options.seed)
        _write_captions(out_dir / ANSWERS, questions, texts, read, items, _ratios(questions))
        counts = host_counts(result.counts, questions, texts, malformed, {})
        details = {**result.details, "tokenization": scored.tokenization,
                   "molt5_tokenization": scored.original_tokenization, "wordnet": "WordNet 3.0",
                   "instruction": INSTRUCTION}  # fmt: skip
        return replace(result, rows=tuple(rows), counts=counts, details=details,
                       artifacts=(COMPLETIONS, ANSWERS))  # fmt: skip


def _rows(questions, items, read, statuses, seed: int) -> list[MetricRow]:
    """Scores per writing, drops per rewrite with their intervals, and counts (module docstring)."""
    from evaluators.tracks.captioning.metrics import aggregate

    def row(writing: str, metric: str, value: float) -> MetricRow:
        return MetricRow((("augmentation", writing),), metric, float(value))

    by_writing: dict[str, dict[str, Question]] = {}
    for q in questions:
        by_writing.setdefault(q.representation, {})[q.item] = q
    rows: list[MetricRow] = []
    original = by_writing.get(ORIGINAL, {})
    for stream, writing in enumerate(WRITINGS):
        asked = by_writing.get(writing, {})
        if writing != ORIGINAL:
            found = [s[writing][0] for s in statuses.values()]
            rows += [row(writing, "n_identical", found.count("identical")),
                     row(writing, "n_excluded", found.count("excluded"))]  # fmt: skip
        rows.append(row(writing, "n_items", len(asked)))
        if not asked:
            continue
        ids = list(asked)
        mine = [items[asked[i].request.id] for i in ids]
        for name, value in aggregate(mine).items():
            rows.append(row(writing, SCORES[name], value))
        empty = sum(read[asked[i].request.id][1] == "none" for i in ids)
        rows.append(row(writing, "no_caption_share", empty / len(ids)))
        rows.append(row(writing, "mean_length", sum(len(asked[i].shown) for i in ids) / len(ids)))
        if writing == ORIGINAL:
            continue
        paired = [i for i in ids if i in original]
        if paired:  # how far the rewrite moved the string (AMORE Table 7), beside the drop it caused
            ratios = [levenshtein_ratio(original[i].shown, asked[i].shown) for i in paired]
            rows.append(row(writing, "levenshtein_ratio", sum(ratios) / len(ratios)))
        theirs = [items[original[i].request.id] for i in paired]
        found = drops.paired_drops(theirs, [items[asked[i].request.id] for i in paired], seed=seed,
                                   stream=stream) if paired else {}  # fmt: skip
        for name, drop in found.items():
            metric = SCORES[name]
            rows += [row(writing, f"{metric}_drop", _bounded(drop.value)),
                     row(writing, f"{metric}_drop_low", _bounded(drop.low)),
                     row(writing, f"{metric}_drop_high", _bounded(drop.high))]  # fmt: skip
    return rows


def _bounded(value: float) -> float:
    """Return a difference of two scores in [0, 1], clipped to [−1, 1] against rounding."""
    return min(1.0, max(-1.0, value))


def _ratios(questions: Sequence[Question]) -> dict[str, float]:
    """Levenshtein ratio of each rewrite question to its molecule's original string, by request id."""
    originals = {q.item: q.shown for q in questions if q.representation == ORIGINAL}
    return {q.request.id: levenshtein_ratio(originals[q.item], q.shown) for q in questions
            if q.representation != ORIGINAL and q.item in originals}  # fmt: skip


def _write_captions(path: Path, questions, texts, read, items, ratios: dict[str, float]) -> None:
    """Write the per-item table (:data:`CaptioningTrack.tables`)."""

    def rows():
        for q in questions:
            completion = texts.get(q.request.id)
            scores = items[q.request.id]
            yield [
                q.representation, q.item, q.shown[:SHOWN_CHARS],
                "" if completion is None else " ".join(completion.split())[:SHOWN_CHARS],
                read[q.request.id][1], *(cell(float(getattr(scores, name))) for name in SCORES),
                cell(ratios.get(q.request.id)),
            ]  # fmt: skip

    write_table(path, CaptioningTrack.tables[0].columns, rows())
