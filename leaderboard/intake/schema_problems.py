"""Schema errors as problems, and the fields that passed: what pydantic found, in the manifest's terms.

:func:`schema_problem` turns one pydantic error of :class:`~leaderboard.intake.schema.Submission` into a
:class:`~leaderboard.intake.problems.Problem` that names the YAML path, the value and a fix (an unknown key
gets the closest field name of its own mapping: "Did you mean 'revision'?") and, given the parsed document,
its ``file:line:col`` (the key of an unknown key, the value of a wrong one, the mapping that lacks a
missing field). :func:`usable_fields` returns
the fields that passed, validated one by one, so that the checks after the schema run on them in the same
pass (:func:`leaderboard.intake.manifest.load_submission`).

Side effects: none.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Annotated, Any, get_args

from pydantic import BaseModel, TypeAdapter, ValidationError

from leaderboard.intake.endpoints import ENDPOINT_FIXES
from leaderboard.intake.problems import Problem, safe_text, shown
from leaderboard.intake.schema import MODEL_SOURCES, TRAINING_TAGS, Submission, TokenizerOptions
from leaderboard.intake.yaml_source import Parsed

__all__ = ["schema_problem", "usable_fields"]

#: Top-level fields and ``model`` fields the checks after the schema read (see :func:`usable_fields`).
_TOP_FIELDS = ("id", "adapter", "code", "tracks", "trust_remote_code", "model", "reference", "reference_note")
_MODEL_FIELDS = ("architecture", "capabilities", "allow_pickle", "path", "dataset", "split")

# Fixes shown after the message, by the last field name of the error location.
_FIXES: dict[str, str] = {
    "revision": 'Copy the full 40-character commit SHA from the model\'s "Files and versions" page on '
    "Hugging Face (a branch name like 'main' moves; a commit does not).",
    "id": "Use lowercase letters, digits and '-', 1-64 characters, equal to the submission's folder name.",
    # Full paths win over the last field name: model.id is a hub repository, not the submission id.
    "model.id": "Give the Hugging Face repository as 'org/name', as in its URL.",
    "model.path": "Give a folder path relative to the package (pip) or to the submission folder (local).",
    "architecture": "Use one of: encoder, decoder, encoder-decoder, non-neural.",
    "capabilities": "List what the model can do: 'embed' (embedding tracks) and/or 'generate'.",
    "inputs": "List what the model reads: [text], or [text, image] for a generative model that also reads "
    "images (molecule drawings).",
    "requirements": "Pin each extra requirement exactly, as 'package==1.2.3'.",
    "version": "Pin the package to an exact release, e.g. '0.1.0'.",
    "source": "Use one of: huggingface (id, revision), pip (package, version, path), local (path), none, "
    "dataset (dataset, split: a registered training split), endpoint (url, model, max_requests).",
    "model.dataset": "Name a registered data set that declares a training split, e.g. 'chebi20'.",
    "model.split": "Name one of the data set's training splits (lowercase), e.g. 'validation'.",
    **ENDPOINT_FIXES,
    "pooling": "Use one of: mean, cls, last_token, mean_no_special.",
    "adapter": "Use 'transformers' for Hugging Face models, 'custom' with a 'code' entry for your own class.",
    "contact": "Give an e-mail address or a URL where maintainers can reach you.",
    "name": "Give the name the leaderboard shows, e.g. 'ACME Chem 7B'.",
    "authors": "List at least one author, e.g. [Ada Lovelace, Alan Turing].",
    "license": "Give the license of the weights (of an API: its terms), e.g. apache-2.0, mit, cc-by-4.0.",
    "path": "Use a relative path of printable characters, e.g. 'weights' (a folder inside the submission or "
    "the package).",
}


def _untagged(loc: Iterable[Any]) -> list[Any]:
    """Return ``loc`` without pydantic's union-tag segments: the YAML path.

    A source's tag is dropped only where pydantic puts it, right after ``model``: the tag ``dataset`` is
    also a field of that source (``model.dataset``), which must stay in the path.
    """
    parts = list(loc)
    if len(parts) > 1 and parts[0] == "model" and parts[1] in MODEL_SOURCES:
        del parts[1]
    return [p for p in parts if p not in TRAINING_TAGS]


def _loc(loc: Iterable[Any]) -> str:
    # Keys come from the document: a line break or tab in one shows as its escape, like any other control
    # character.
    parts = [safe_text(p, 60) for p in _untagged(loc)]
    return ".".join(parts) or "(top level)"


def schema_problem(file: str, error: Mapping[str, Any], parsed: Parsed | None = None) -> Problem:
    """Turn one pydantic error of :class:`Submission` into a :class:`Problem` (field, value, fix).

    Parameters
    ----------
    file : str
        The manifest's path, as problems name it.
    error : mapping
        One of pydantic's ``ValidationError.errors()``.
    parsed : Parsed, optional
        The document the data came from: the problem then carries the ``line:col`` of the node at fault.

    Returns
    -------
    Problem
        The problem (check ``schema``; ``consistency`` for a whole-model error).
    """
    problem = _problem(file, error)
    if parsed is None or not error["loc"]:
        return problem
    loc = list(error["loc"])
    written = parsed.written_at(loc) if error["type"] == "string_type" else None
    if written is not None and isinstance(error.get("input"), (bool, int, float)):
        problem = _resolved(problem, written, error["input"])
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        # The tag field is at fault ('model.source'), or, when it is missing, the mapping that lacks it.
        loc.append(str((error.get("ctx") or {}).get("discriminator", "source")).strip("'"))
    at = parsed.locate(loc, key=error["type"] == "extra_forbidden")
    return problem if at is None else replace(problem, at=at)


def _resolved(problem: Problem, written: str, value: bool | int | float) -> Problem:
    """Restate a text field that YAML read as a number or boolean (``0123456`` → 42798) as written.

    pydantic only sees the resolved value, so its message ("got 42798") names a number the author never
    wrote; a short SHA, a version or a name like ``yes`` is read so when left unquoted.
    """
    kind = "boolean" if isinstance(value, bool) else "number"
    quoted = safe_text(written, 60)
    message = (
        f"'{problem.field}' must be text, but YAML reads the unquoted {quoted} as the {kind} "
        f"{safe_text(repr(value), 60)}."
    )
    fix = f"Put the value in quotes ('{quoted}') so YAML keeps it as written." + (
        f" {problem.fix}" if problem.fix else ""
    )
    return replace(problem, value=shown(written), message=message, fix=fix)


def _problem(file: str, error: Mapping[str, Any]) -> Problem:
    loc = _loc(error["loc"])
    last = next((p for p in reversed(loc.split(".")) if not p.isdigit()), loc)
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "manifest_reserved":  # it names field, value and fix
        return Problem(file, ctx["field"], ctx["value"], ctx["message"], ctx["fix"], "schema")
    if kind == "manifest_track":
        return _track_problem(file, loc, str(ctx["track"]), list(ctx["known"]))
    if kind == "extra_forbidden":
        return Problem(
            file, loc, shown(error.get("input")), f"unknown key '{loc}'.", _spelling(error["loc"]), "schema"
        )
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        # The tagged union of model sources: name the tag field, not the whole 'model' mapping.
        tag_field = f"{loc}.{str(ctx.get('discriminator', 'source')).strip(chr(39))}"
        if kind == "union_tag_not_found":
            message = f"'{tag_field}' is required but missing."
            return Problem(file, tag_field, "", message, _FIXES["source"], "schema")
        tag = shown(ctx.get("tag"))
        message = f"'{tag_field}' must be one of {ctx.get('expected_tags')}, got {tag}."
        return Problem(file, tag_field, tag, message, _FIXES["source"], "schema")
    fix = _FIXES.get(loc) or _FIXES.get(last, "")
    if kind == "missing":
        fix = fix or "Add it (see submissions/README.md for every field)."
        return Problem(file, loc, "", f"'{loc}' is required but missing.", fix, "schema")
    empty = _empty(loc, kind, error)
    if empty:  # a placeholder the scaffold wrote ('~', '[]') or a key with nothing after it
        return Problem(file, loc, "", empty, fix or _EMPTY_FIX, "schema")
    # Messages can quote the input (pydantic does for some types): one clipped, printable line.
    message = safe_text(error["msg"].removeprefix("Value error, "), 300)
    if not error["loc"]:  # another whole-model error; the offending value would be the whole manifest
        return Problem(file, "", "", message, "", "consistency")
    value = shown(error.get("input"))
    return Problem(file, loc, value, f"'{loc}' {message}, got {value}.", fix, "schema")


_EMPTY_FIX = "Give it a value (see submissions/README.md), or remove the line if the field is optional."


def _empty(loc: str, kind: str, error: Mapping[str, Any]) -> str:
    """Return the message of a field left empty, or ``""``.

    pydantic says "Input should be a valid string, got None" of ``name: ~``: true, but an author who left
    the scaffold's placeholder reads it better as "has no value".
    """
    given = error.get("input", ...)
    if given is None and kind.endswith("_type"):
        return f"'{loc}' has no value (~, or nothing after the key)."
    if kind == "too_short" and given in ([], ""):
        need = (error.get("ctx") or {}).get("min_length", 1)
        return f"'{loc}' is empty; it needs at least {need} entr{'y' if need == 1 else 'ies'}."
    return ""


def _track_problem(file: str, loc: str, track: str, known: list[str]) -> Problem:
    """Return the problem of an unknown track name: every registered track, and the closest one.

    Compared in lowercase, so that a name in the wrong case ('AMORE') gets its track.
    """
    value = shown(track)
    message = f"'{loc}' {value} is not a track; choose from {', '.join(known)}."
    close = difflib.get_close_matches(track.lower(), known, n=1, cutoff=0.6)
    if close:
        case = " Track names are lowercase." if track.lower() == close[0] else ""
        fix = f"Did you mean '{close[0]}'?{case}"
    else:
        fix = "Use one of the names listed, or leave 'tracks' out to run every track the capabilities allow."
    return Problem(file, loc, value, message, fix, "schema")


def _model_classes(annotation: Any) -> list[type[BaseModel]]:
    """Return the pydantic models an annotation admits (``CodeEntry | None`` → ``[CodeEntry]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [cls for arg in get_args(annotation) for cls in _model_classes(arg)]


def _keys_at(loc: Sequence[Any]) -> list[str]:
    """Return the field names of the mapping holding the key at ``loc`` (pydantic's, tags included)."""
    owner: type[BaseModel] = Submission
    parts = list(loc[:-1])
    while parts:
        part = parts.pop(0)
        if part not in owner.model_fields:
            return []
        classes = _model_classes(owner.model_fields[part].annotation)
        if len(classes) > 1 and parts and parts[0] in MODEL_SOURCES:  # the tagged union of sources
            classes = [MODEL_SOURCES[parts.pop(0)]]
        if len(classes) != 1:
            return []
        owner = classes[0]
    return list(owner.model_fields)


def _spelling(loc: Sequence[Any]) -> str:
    """Return the fix of an unknown key: the closest field name of the same mapping, if one is close."""
    fix = "Remove it or fix its spelling (see submissions/README.md)."
    close = difflib.get_close_matches(str(loc[-1]), _keys_at(loc), n=1, cutoff=0.6) if loc else []
    if not close:
        return fix
    return f"Remove it or fix its spelling: did you mean '{close[0]}'? (see submissions/README.md)"


class _Unknown(Exception):
    """A field that is missing without a default, or not valid on its own."""


@cache
def _adapter(owner: type[BaseModel], name: str) -> TypeAdapter:
    info = owner.model_fields[name]
    return TypeAdapter(Annotated[info.annotation, info])


def _value(owner: type[BaseModel], raw: Any, name: str) -> Any:
    """Return the value pydantic gives field ``name`` of ``owner`` from mapping ``raw`` (or its default)."""
    info = owner.model_fields[name]
    if not isinstance(raw, Mapping):
        raise _Unknown
    if name not in raw:
        if info.is_required():
            raise _Unknown
        return info.get_default(call_default_factory=True)
    try:
        return _adapter(owner, name).validate_python(raw[name])
    except ValidationError:
        raise _Unknown from None


def usable_fields(data: Mapping[str, Any], errors: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Return the fields the later checks read that passed the schema, by YAML path, validated.

    Parameters
    ----------
    data : mapping
        The manifest as parsed (a mapping).
    errors : iterable of mapping
        pydantic's errors of validating ``data`` as a :class:`Submission` (none when it passed).

    Returns
    -------
    dict of str to Any
        ``id``, ``adapter``, ``code``, ``tracks``, ``trust_remote_code``, ``model``, ``reference``,
        ``reference_note``, ``tokenizer.chat_template``, ``tokenizer.pre_tokenizer``, ``model.source``,
        ``model.architecture``, ``model.capabilities``, ``model.allow_pickle``, ``model.path`` — each only
        when neither it, nor a field inside it, nor a mapping above it has an error (defaults for fields
        left out), so a check never reads a value the schema refused; ``fields_set``: the top-level keys
        given.
    """
    bad = [tuple(str(p) for p in _untagged(e["loc"])) for e in errors if e["loc"]]

    def clean(*path: str) -> bool:
        return not any(b[: len(path)] == path or path[: len(b)] == b for b in bad)

    known: dict[str, Any] = {"fields_set": frozenset(str(k) for k in data)}

    def take(key: str, owner: type[BaseModel], raw: Any, name: str) -> None:
        if clean(*key.split(".")):
            try:
                known[key] = _value(owner, raw, name)
            except _Unknown:
                pass

    for name in _TOP_FIELDS:
        take(name, Submission, data, name)
    take("tokenizer.chat_template", TokenizerOptions, data.get("tokenizer", {}), "chat_template")
    take("tokenizer.pre_tokenizer", TokenizerOptions, data.get("tokenizer", {}), "pre_tokenizer")
    model = data.get("model")
    source = model.get("source") if isinstance(model, Mapping) else None
    if isinstance(source, str) and source in MODEL_SOURCES and clean("model", "source"):
        known["model.source"] = source
        for name in _MODEL_FIELDS:
            if name in MODEL_SOURCES[source].model_fields:
                take(f"model.{name}", MODEL_SOURCES[source], model, name)
    return known
