"""Questions built once per evaluation: every model is asked the same questions, the host builds them twice.

The host writes a run's questions into the container's view, then builds them again to score the answers
(:meth:`evaluators.asking.AskingTrack.questions`); every other model of the evaluation is asked the same
ones. Building T4's questions on one data set takes ~19 s (drawings, SELFIES and InChI read back,
composed pairs): profiled, 2 × 19 s of the constant reference's 66-s T4 run on pubchem-names.

Inside :func:`questions_reused` they are built once per track, options, kind of model and records, and
reused: the scoring child of :func:`leaderboard.execution.limits.call_limited` is forked, so it sees what
its parent built. T4's composed tasks (pairs, groups, routes: ~5 s a set), which the scoring composes
again for their truths, are kept the same way.

Off outside the context: a test that edits a track's templates between two calls is never served the
old questions, and nothing is held after an evaluation.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

#: Objects kept at once: one evaluation asks a few (track, data set, kind of model) settings in a row, and
#: T4 composes five or six tasks per data set; a T4 question list holds its drawings.
KEPT = 16
_kept: OrderedDict[Hashable, object] | None = None


@contextmanager
def questions_reused() -> Iterator[None]:
    """Build each run's questions once while inside (nested uses share the outermost's store)."""
    global _kept
    outer = _kept
    if outer is None:
        _kept = OrderedDict()
    try:
        yield
    finally:
        if outer is None:
            _kept = None


def reused(key: Hashable, build: Callable[[], T]) -> T:
    """Return ``build()``, or inside :func:`questions_reused` what was built before under ``key``.

    ``key`` must hold everything the object is made of, and callers must not change what they get (it is
    shared); :func:`built_once` hands out lists.
    """
    if _kept is None:
        return build()
    if key not in _kept:
        _kept[key] = build()
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    _kept.move_to_end(key)
    return _kept[key]  # type: ignore[return-value]


def built_once(key: Hashable, build: Callable[[], list[T]]) -> list[T]:
    """Like :func:`reused`, with a new list each time (its items are frozen): a caller may reorder it."""
    return list(reused(key, build))


def records_digest(records: Sequence[Mapping[str, object]]) -> str:
    """Return the sha256 of ``records`` (every field, in order): part of a key of :func:`reused`."""
    blob = json.dumps(list(records), sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
