"""Asking a generative model many questions and reading its answers back: shared by T3, T4 and T5.

The questions T3 and T4 both ask (translation, formula, Lipinski, hydration free energy, reaction product)
and their ground truths are :mod:`evaluators.asking.tasks`.

The generative tracks (T3, T4, T5) split their work across the sandbox the same way, so that no answer
enters the box:

- on the host, :meth:`AskingTrack.container_view` turns the data set's records into the requests only: one
  row per question (:data:`REQUEST_COLUMNS`: an opaque id, the prompt and its decoding parameters), in a
  seeded shuffled order; the host writes them as ``/data/<set>/view.csv``
  (:mod:`evaluators.datasets.views`) instead of mounting the set's files, whose other notations, formulas,
  values and labels are the answers. An id is a salted hash of the question's own key
  (:func:`opaque_id`): it names no record, task or representation, so nothing but the chemistry in the
  prompts links two questions about the same molecule;
- inside the container, :meth:`AskingTrack.run` reads those rows back (:func:`view_requests`) and
  :func:`ask` sends exactly those requests to the adapter in chunks, writing one JSON line per request to
  ``completions.jsonl`` (id, completion, finish reason, token counts); identical requests (two questions
  whose prompts happen to be the same) are generated once and their answer written under every id that
  asked;
- on the host, :meth:`AskingTrack.questions` rebuilds the questions from the records (the same opaque ids,
  each with its readable :attr:`Question.key`), :func:`read_completions` reads those lines back as
  untrusted data (a line cut at 64 KiB, a completion at :data:`MAX_COMPLETION_CHARS`, first line per id
  wins), :func:`normalise_answers` turns each completion into a normalised answer
  (:mod:`evaluators.answers`: RDKit, OPSIN in one batch per kind), and :func:`write_table` writes the
  per-item table the site shows (task, representation and record id: the host knows them).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from evaluators.adapters import Adapter, Completion, GenerationRequest, GenerativeAdapter, as_completions
from evaluators.asking.reuse import built_once
from evaluators.datasets import LoadedDataset
from evaluators.schema import TrackOptions
from evaluators.tracks import Progress, Track, no_progress

__all__ = [
    "AskingTrack",
    "CHUNK",
    "COMPLETIONS",
    "MAX_COMPLETION_CHARS",
    "REQUEST_COLUMNS",
    "SHOWN_CHARS",
    "Question",
    "ask",
    "cell",
    "generation_order",
    "host_counts",
    "normalise_answers",
    "opaque_id",
    "read_completions",
    "refused_counts",
    "request_rows",
    "view_requests",
    "write_table",
]

COMPLETIONS = "completions.jsonl"
#: Requests per ``generate`` call: progress granularity (the adapter batches within a call).
CHUNK = 256
#: Characters of a completion the host reads (a longer one is cut: no answer is that long).
MAX_COMPLETION_CHARS = 4000
#: Characters of a completion and of an input shown in a per-item table.
SHOWN_CHARS = 300
#: Columns of a generative track's container view: a :class:`GenerationRequest`, field for field (``stop``
#: and ``images`` as JSON lists: the images as data URIs, which the view file stores as hashed PNG files,
#: :mod:`evaluators.datasets.views`), and nothing else.
REQUEST_COLUMNS = ("id", "prompt", "max_new_tokens", "temperature", "seed", "stop", "images")
#: Hex digits of an opaque question id (80 bits: no two of a run's questions share one, checked).
_ID_HEX = 20


@dataclass(frozen=True, slots=True)
class Question:
    """One request of a run and what the host needs to score it.

    Attributes
    ----------
    request : GenerationRequest
        What the adapter is asked; its ``id`` is opaque (:func:`opaque_id`) and names the question in the
        container's view and in ``completions.jsonl``.
    task : Any
        The track's task object (T3: :class:`~evaluators.asking.tasks.Task`).
    representation : str
        How the molecule is written in the prompt.
    item : str
        The record id.
    shown : str
        The molecule as written in the prompt (for the per-item table).
    kind : str
        The answer kind the completion is normalised as (:data:`evaluators.answers.ANSWER_KINDS`).
    template : str
        The instruction template's id (``-`` for a track with one wording per task).
    key : str
        The question's readable key on the host (``task|representation|record id`` and the like): what the
        opaque id hashes; never shown to the container.
    """

    request: GenerationRequest
    task: Any
    representation: str
    item: str
    shown: str
    kind: str
    template: str = "-"
    key: str = ""


class AskingTrack(Track):
    """A generative track whose container half only asks: :meth:`run` is :func:`ask` over the view's requests.

    Subclasses implement :meth:`keyed_questions` (each question's request id its readable key) and
    :meth:`Track.score`, which rebuilds the questions with :meth:`questions` (opaque ids, as the container
    saw them) and scores them against truths computed on the host.
    """

    capability = "generate"
    #: Whether the questions are for a chat model (:mod:`evaluators.asking.protocol`: a larger budget, no
    #: stop string); set by :meth:`container_view` from the job's model, ``False`` for a direct model.
    chat: bool = False
    #: The container never sees the data set's files, only the requests (module docstring).
    withholds_labels: ClassVar[bool] = True
    view_columns: ClassVar[tuple[str, ...]] = REQUEST_COLUMNS

    def keyed_questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every question of a run on ``records``, in a fixed order; each request's id its readable key."""
        raise NotImplementedError

    def questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every question of a run on ``records``, in a fixed order, with opaque request ids.

        The readable key moves to :attr:`Question.key`; the id is :func:`opaque_id` of it, salted with the
        track, its version, the seed, the limit and the records themselves (:meth:`id_salt`).

        Raises
        ------
        ValueError
            If two questions share a key, or (never seen: 80 bits) two keys hash alike.
        """
        salt = self.id_salt(records)  # the track, its version, seed, limit and every record

        def build() -> list[Question]:
            keyed = self.keyed_questions(records)
            out = [replace(q, key=q.request.id, request=replace(q.request, id=opaque_id(salt, q.request.id)))
                   for q in keyed]  # fmt: skip
            if len({q.key for q in out}) != len(out) or len({q.request.id for q in out}) != len(out):
                raise ValueError(f"track {self.name!r}: question keys or their opaque ids repeat")
            return out

        track = (type(self).__module__, type(self).__qualname__)
        model = (self.chat, bool(getattr(self, "images", False)))
        return built_once((*track, *model, salt, json.dumps(self.options.to_json(), sort_keys=True)), build)

    def id_salt(self, records: Sequence[dict[str, str]]) -> str:
        """Return the salt of this run's opaque ids: a hash of the track, its version, options and records.

        Another data version, seed or track version gives other ids, so ids of two runs cannot be matched.
        """
        payload = {"track": self.name, "version": self.version, "seed": self.options.seed,
                   "limit": self.options.limit, "records": list(records)}  # fmt: skip
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def decoding(self, direct_budget: int) -> tuple[int, tuple[str, ...]]:
        """Return ``(max_new_tokens, stop)`` of a question whose task allows ``direct_budget`` tokens.

        The answer protocol's rule for this track's kind of model
        (:func:`evaluators.asking.protocol.decoding`).
        """
        from evaluators.asking.protocol import decoding

        return decoding(direct_budget, chat=self.chat)

    @classmethod
    def for_model(cls, options: TrackOptions, *, chat: bool = False, images: bool = False) -> AskingTrack:
        """Return the track asking a chat model (``chat``) or a direct one, with ``options``.

        ``images``: the model takes images too, so the track's image questions are asked.
        """
        track = cls(options)
        track.chat = bool(chat)
        track.images = bool(images)
        return track

    @classmethod
    def container_view(
        cls,
        dataset: str,
        records: list[dict[str, str]],
        options: TrackOptions,
        *,
        chat: bool = False,
        images: bool = False,
    ) -> list[dict[str, str]] | None:
        """Return the requests of a run on ``records`` (:func:`request_rows`): all the container sees.

        ``chat``: the model is a chat model or an API (:mod:`evaluators.asking.protocol`); ``images``: it
        takes images, so the track's image questions are asked too.
        """
        del dataset
        return request_rows(cls.for_model(options, chat=chat, images=images).questions(records))

    def container_dataset(self, records: Sequence[dict[str, str]]) -> LoadedDataset:
        """Return what :meth:`run` gets inside the container for ``records``: the view, read back.

        The rows go through the view file's bytes (:func:`evaluators.datasets.views.view_bytes`) and back,
        as the host writes them and the container reads them; for tests and tools that run a track in
        process.
        """
        from evaluators.datasets.views import view_bytes, view_dataset

        blob = view_bytes(request_rows(self.questions(records)), self.view_columns)
        return view_dataset(list(csv.DictReader(io.StringIO(blob.decode("utf-8")))))

    def run(  # noqa: D102
        self,
        adapter: Adapter,
        dataset: LoadedDataset,
        *,
        out_dir: Path,
        log: Callable[[str], None],
        progress: Progress = no_progress,
    ) -> dict[str, Any]:
        if not isinstance(adapter, GenerativeAdapter):
            raise TypeError(f"track {self.name!r} needs an adapter with the 'generate' capability")
        requests = view_requests(dataset.records)
        if not requests:
            raise ValueError(f"this data set has no records with the fields any {self.name} task needs")
        log(f"{self.name}: {len(requests)} questions")
        asked = ask(adapter, requests, out_dir / COMPLETIONS, log=log, progress=progress)
        return {
            "rows": [],
            "counts": asked["counts"],
            "artifacts": [COMPLETIONS],
            "timing": asked["timing"],
        }


def opaque_id(salt: str, key: str) -> str:
    """Return the opaque id of the question ``key`` in the run ``salt``: 20 hex digits of a sha256.

    Examples
    --------
    >>> opaque_id("salt", "formula|smiles|1")
    '3f563c098194f8a1206e'
    """
    return hashlib.sha256(f"{salt}|{key}".encode()).hexdigest()[:_ID_HEX]


def request_rows(questions: Sequence[Question]) -> list[dict[str, str]]:
    """Return the container's view of ``questions``: their requests only (:data:`REQUEST_COLUMNS`).

    Rows are sorted by opaque id, a shuffle seeded by the run's salt: neighbours in the file are not
    questions about the same record, task or representation.
    """
    rows = [
        {
            "id": q.request.id,
            "prompt": q.request.prompt,
            "max_new_tokens": str(int(q.request.max_new_tokens)),
            "temperature": repr(float(q.request.temperature)),
            "seed": str(int(q.request.seed)),
            "stop": json.dumps(list(q.request.stop), ensure_ascii=False),
            "images": json.dumps(list(q.request.images)),
        }
        for q in questions
    ]
    return sorted(rows, key=lambda row: row["id"])


def view_requests(rows: Sequence[dict[str, str]]) -> list[GenerationRequest]:
    """Read the requests back from the view's rows (inside the container).

    Raises
    ------
    ValueError
        If a row lacks a column, has a malformed number or ``stop`` list, or an id repeats.
    """
    out = []
    for number, row in enumerate(rows, start=1):
        try:
            stop = json.loads(row["stop"])
            images = json.loads(row["images"])
            temperature = float(row["temperature"])
            if not (isinstance(stop, list) and all(isinstance(s, str) for s in stop)):
                raise ValueError("stop is not a JSON list of strings")
            if not (isinstance(images, list) and all(isinstance(i, str) and i.startswith("data:image/")
                                                     for i in images)):  # fmt: skip
                raise ValueError("images is not a JSON list of image data URIs")
            if not math.isfinite(temperature):
                raise ValueError("temperature is not finite")
            out.append(GenerationRequest(id=row["id"], prompt=row["prompt"],
                                         max_new_tokens=int(row["max_new_tokens"]), temperature=temperature,
                                         seed=int(row["seed"]), stop=tuple(stop),
                                         images=tuple(images)))  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"request view row {number}: {exc}") from None
    if len({r.id for r in out}) != len(out):
        raise ValueError("request view: ids repeat")
    return out


def _key(request: GenerationRequest) -> tuple:
    return (request.prompt, request.max_new_tokens, float(request.temperature), request.seed,
            tuple(request.stop), tuple(request.images))  # fmt: skip


def generation_order(requests: Sequence[GenerationRequest]) -> list[GenerationRequest]:
    """Return ``requests`` in the order :func:`ask` generates them: by decoding options, then prompt length.

    The view lists the questions in a shuffled order (it must not group a molecule's questions), and
    :func:`ask` sends them in chunks of :data:`CHUNK`; in that order every chunk mixes all budgets and
    lengths, so the adapter's batches (one decoding setting, similar lengths each) come out small and padded.
    Sorted first, each chunk is a few full batches of alike prompts. Stable, so equal keys keep their order;
    the answers are written back in the view's order.
    """
    return sorted(requests, key=lambda r: (r.max_new_tokens, float(r.temperature), tuple(r.stop),
                                           len(r.prompt)))  # fmt: skip


def ask(
    adapter: GenerativeAdapter,
    questions: Sequence[Question | GenerationRequest],
    out_path: Path,
    *,
    log: Callable[[str], None],
    progress: Progress = no_progress,
    name: str = "questions",
) -> dict[str, Any]:
    """Generate an answer to every request (a question's, or a bare one) and write them to ``out_path``.

    One JSON line per request. Requests that are identical (prompt, budget, temperature, seed, stop,
    images) are generated once: with greedy decoding their answers are the same, and a model is never
    charged twice for one prompt.

    Returns
    -------
    dict
        ``counts`` (requests, distinct prompts generated, finish reasons, token counts) and ``timing``
        (``generate_s``) for the track's result.
    """
    started = time.perf_counter()
    first: dict[tuple, GenerationRequest] = {}
    askers: dict[str, list[str]] = {}
    for request in (q.request if isinstance(q, Question) else q for q in questions):
        lead = first.setdefault(_key(request), request)
        askers.setdefault(lead.id, []).append(request.id)
    distinct = list(first.values())
    finish: dict[str, int] = {}
    tokens = [0, 0]
    log(f"{name}: {len(questions)} questions, {len(distinct)} distinct prompts")
    progress(name, 0, len(distinct))  # the adapter reports "generate" within a chunk
    done: dict[str, Completion] = {}
    ordered = generation_order(distinct)
    adapter.prepare(ordered)  # once per run: an adapter's fixed per-call cost is paid once, not per chunk
    for start in range(0, len(ordered), CHUNK):
        requests = ordered[start : start + CHUNK]
        done.update((c.id, c) for c in as_completions(requests, adapter.generate(requests)))
        progress(name, min(start + CHUNK, len(ordered)), len(ordered))
    with out_path.open("w", encoding="utf-8") as handle:
        for request in distinct:  # the file in the view's order, whatever order generated it
            c = done[request.id]
            text, reason = c.text, c.finish_reason
            if not _encodable(text):  # lone surrogates: that answer is invalid, the run goes on
                text, reason = "", "invalid_text"
            finish[reason] = finish.get(reason, 0) + 1
            tokens[0] += c.prompt_tokens or 0
            tokens[1] += c.completion_tokens or 0
            for asker in askers[c.id]:
                line = {
                    "id": asker,
                    "completion": text,
                    "finish_reason": reason,
                    "prompt_tokens": c.prompt_tokens,
                    "completion_tokens": c.completion_tokens,
                }
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
    seconds = time.perf_counter() - started
    log(f"{name}: {len(distinct)} completions in {seconds:.1f} s")
    return {
        "counts": {
            "n_requests": len(questions),
            "n_generated": len(distinct),
            "finish_reasons": finish,
            "prompt_tokens": tokens[0],
            "completion_tokens": tokens[1],
        },
        "timing": {"generate_s": seconds},
    }


def _encodable(text: object) -> bool:
    """Tell whether ``text`` is a string that UTF-8 can write (no lone surrogates)."""
    if not isinstance(text, str):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_completions(path: Path, expected: set[str]) -> tuple[dict[str, str], int]:
    """Read ``completions.jsonl`` as untrusted data: the text of each expected id (first one wins).

    Returns
    -------
    texts : dict of str to str
        Completion text by request id, cut to :data:`MAX_COMPLETION_CHARS`.
    malformed : int
        Lines that are not a JSON object with a string ``id`` and ``completion``, or name no expected id.
    """
    texts: dict[str, str] = {}
    malformed = 0
    if not path.is_file():
        return texts, 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in _lines(handle):
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                malformed += 1
                continue
            if not (isinstance(obj, dict) and isinstance(obj.get("id"), str)
                    and isinstance(obj.get("completion"), str) and obj["id"] in expected):  # fmt: skip
                malformed += 1
                continue
            texts.setdefault(obj["id"], obj["completion"][:MAX_COMPLETION_CHARS])
    return texts, malformed


def _lines(handle: io.TextIOBase, limit: int = 64 * 1024) -> Iterator[str]:
    # A single line longer than any real completion is cut, then fails to parse: it cannot exhaust memory.
    while True:
        line = handle.readline(limit)
        if not line:
            return
        if not line.endswith("\n") and len(line) == limit:
            while (rest := handle.readline(limit)) and not rest.endswith("\n"):
                pass
        if line.strip():
            yield line


def normalise_answers(
    questions: Sequence[Question],
    texts: dict[str, str],
    *,
    refused: dict[str, str] | None = None,
    rules: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Normalised answer of every request id (``None``: no usable answer); OPSIN runs once for all names.

    ``refused`` (when given) is filled with the request id and reason of each answer a host limit refused
    (:func:`evaluators.answers.opsin.name_problem` and OPSIN's own limits): invalid, counted, never a failed
    run. ``rules`` (when given) is filled with the request id and the id of the rule that read its answer
    (:data:`evaluators.answers.READING_RULES`). Completions are read per answer kind and task (the task's
    name selects task rules, e.g. Lipinski's violation counts).
    """
    from evaluators.answers import read_batch

    by_kind: dict[tuple[str, str | None], list[str]] = {}
    for q in questions:
        # Only labels have task rules; names stay one batch per kind (one OPSIN run).
        task = q.task.get("task") if isinstance(q.task, dict) else q.task
        task = getattr(task, "name", None) or getattr(task, "task", None) or task  # T3 .name, T4/T5 .task
        key = (q.kind, task if isinstance(task, str) and q.kind == "label" else None)
        by_kind.setdefault(key, []).append(q.request.id)
    out: dict[str, Any] = {}
    for (kind, task), ids in by_kind.items():
        present = [i for i in ids if i in texts]
        problems: dict[int, str] = {}
        readings = read_batch(kind, [texts[i] for i in present], task=task, problems=problems)
        values = [r.value for r in readings]
        if rules is not None:
            rules.update({i: r.rule for i, r in zip(present, readings, strict=True)})
        if refused is not None:
            refused.update({present[i]: why for i, why in problems.items()})
        out.update(dict(zip(present, values, strict=True)))
        out.update({i: None for i in ids if i not in texts})
    return out


def host_counts(
    counts: dict[str, Any],
    questions: Sequence[Question],
    texts: dict[str, str],
    malformed: int,
    refused: dict[str, str],
) -> dict[str, Any]:
    """Return a scored result's counts: the container's (requests, tokens) and what the host knows.

    The host adds the items asked about (the container's view names none), the malformed lines, the
    questions without a completion and the refused answers (:func:`refused_counts`).
    """
    return {**counts, "n_items": len({q.item for q in questions}), "n_malformed_lines": malformed,
            "n_missing_completions": sum(q.request.id not in texts for q in questions),
            **refused_counts(refused)}  # fmt: skip


def refused_counts(refused: dict[str, str]) -> dict[str, Any]:
    """Return ``{"answers_refused": {reason: count}}`` for a result's counts (``{}``: none refused)."""
    if not refused:
        return {}
    reasons: dict[str, int] = {}
    for why in refused.values():
        reasons[why] = reasons.get(why, 0) + 1
    return {"answers_refused": dict(sorted(reasons.items()))}


def cell(value: Any) -> str:
    """Write one table cell: empty for ``None``, yes/no for booleans, ``repr`` for floats (round trip)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_table(path: Path, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
    """Write a gzipped CSV table (``mtime`` 0: same rows, same bytes), replacing whatever the run left there.

    The run controlled ``out_dir``: a link or file already at ``path`` is removed and the table created
    anew (``O_EXCL | O_NOFOLLOW``), never written through a link.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    if path.is_symlink() or path.exists():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(buffer.getvalue().encode("utf-8"))
