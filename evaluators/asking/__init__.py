"""Asking a generative model many questions and reading its answers back: shared by T3, T4 and T5.

The questions T3 and T4 both ask (translation, formula, Lipinski, hydration free energy, reaction product)
and their ground truths are :mod:`evaluators.asking.tasks`.

Both generative tracks split their work across the sandbox the same way:

- inside the container, :func:`ask` sends every :class:`Question`'s request to the adapter in chunks and
  writes one JSON line per request to ``completions.jsonl`` (id, completion, finish reason, token
  counts); identical requests are generated once and their answer written under every id that asked;
- on the host, :func:`read_completions` reads those lines back as untrusted data (a line cut at 64 KiB,
  a completion at :data:`MAX_COMPLETION_CHARS`, first line per id wins), :func:`normalise_answers` turns
  each completion into a normalised answer (:mod:`evaluators.answers`: RDKit, OPSIN in one batch per
  kind), and :func:`write_table` writes the per-item table the site shows.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.adapters import Adapter, GenerationRequest, GenerativeAdapter, as_completions
from evaluators.datasets import LoadedDataset
from evaluators.tracks import Progress, Track, no_progress

__all__ = [
    "AskingTrack",
    "CHUNK",
    "COMPLETIONS",
    "MAX_COMPLETION_CHARS",
    "SHOWN_CHARS",
    "Question",
    "ask",
    "cell",
    "normalise_answers",
    "read_completions",
    "refused_counts",
    "write_table",
]

COMPLETIONS = "completions.jsonl"
#: Requests per ``generate`` call: progress granularity (the adapter batches within a call).
CHUNK = 256
#: Characters of a completion the host reads (a longer one is cut: no answer is that long).
MAX_COMPLETION_CHARS = 4000
#: Characters of a completion and of an input shown in a per-item table.
SHOWN_CHARS = 300


@dataclass(frozen=True, slots=True)
class Question:
    """One request of a run and what the host needs to score it.

    Attributes
    ----------
    request : GenerationRequest
        What the adapter is asked (its ``id`` names the question in ``completions.jsonl``).
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
    """

    request: GenerationRequest
    task: Any
    representation: str
    item: str
    shown: str
    kind: str
    template: str = "-"


class AskingTrack(Track):
    """A generative track whose container half only asks: :meth:`run` is :func:`ask` over :meth:`questions`.

    Subclasses implement :meth:`questions` (the same call on the host, in :meth:`Track.score`, rebuilds
    the questions to score) and :meth:`Track.score`.
    """

    capability = "generate"

    def questions(self, records: Sequence[dict[str, str]]) -> list[Question]:
        """Every request of a run on ``records``, in a fixed order."""
        raise NotImplementedError

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
        questions = self.questions(list(dataset.records))
        if not questions:
            raise ValueError(f"this data set has no records with the fields any {self.name} task needs")
        n_items = len({q.item for q in questions})
        log(f"{self.name}: {len(questions)} questions on {n_items} items")
        asked = ask(adapter, questions, out_dir / COMPLETIONS, log=log, progress=progress)
        return {
            "rows": [],
            "counts": {"n_items": n_items, **asked["counts"]},
            "artifacts": [COMPLETIONS],
            "timing": asked["timing"],
        }


def _key(request: GenerationRequest) -> tuple:
    return (request.prompt, request.max_new_tokens, float(request.temperature), request.seed,
            tuple(request.stop))  # fmt: skip


def ask(
    adapter: GenerativeAdapter,
    questions: Sequence[Question],
    out_path: Path,
    *,
    log: Callable[[str], None],
    progress: Progress = no_progress,
    name: str = "questions",
) -> dict[str, Any]:
    """Generate an answer to every question and write them to ``out_path`` as JSON lines.

    Questions whose requests are identical (prompt, budget, temperature, seed, stop) are generated once:
    with greedy decoding their answers are the same, and a model is never charged twice for one prompt.

    Returns
    -------
    dict
        ``counts`` (requests, distinct prompts generated, finish reasons, token counts) and ``timing``
        (``generate_s``) for the track's result.
    """
    started = time.perf_counter()
    first: dict[tuple, GenerationRequest] = {}
    askers: dict[str, list[str]] = {}
    for q in questions:
        lead = first.setdefault(_key(q.request), q.request)
        askers.setdefault(lead.id, []).append(q.request.id)
    distinct = list(first.values())
    finish: dict[str, int] = {}
    tokens = [0, 0]
    log(f"{name}: {len(questions)} questions, {len(distinct)} distinct prompts")
    progress(name, 0, len(distinct))  # the adapter reports "generate" within a chunk
    with out_path.open("w", encoding="utf-8") as handle:
        for start in range(0, len(distinct), CHUNK):
            requests = distinct[start : start + CHUNK]
            for c in as_completions(requests, adapter.generate(requests)):
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
            progress(name, min(start + CHUNK, len(distinct)), len(distinct))
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
    questions: Sequence[Question], texts: dict[str, str], *, refused: dict[str, str] | None = None
) -> dict[str, Any]:
    """Normalised answer of every request id (``None``: no usable answer); OPSIN runs once for all names.

    ``refused`` (when given) is filled with the request id and reason of each answer a host limit refused
    (:func:`evaluators.answers.opsin.name_problem` and OPSIN's own limits): invalid, counted, never a failed
    run.
    """
    from evaluators.answers import normalise

    by_kind: dict[str, list[str]] = {}
    for q in questions:
        by_kind.setdefault(q.kind, []).append(q.request.id)
    out: dict[str, Any] = {}
    for kind, ids in by_kind.items():
        present = [i for i in ids if i in texts]
        problems: dict[int, str] = {}
        values = normalise(kind, [texts[i] for i in present], problems=problems) if present else []
        if refused is not None:
            refused.update({present[i]: why for i, why in problems.items()})
        out.update(dict(zip(present, values, strict=True)))
        out.update({i: None for i in ids if i not in texts})
    return out


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
