"""Submission manifests (``submissions/<id>/submission.yaml``, SPEC §3): loading and validation in one pass.

Validation never imports or runs submission code. :func:`check_submission` reads the file (size-capped),
parses its YAML safely (:mod:`leaderboard.intake.yaml_source`: aliases and duplicate keys refused, syntax
errors as ``file:line:col``), checks the schema with pydantic (:mod:`leaderboard.intake.schema`;
``extra="forbid"``: an unknown key is an error, with the closest field name), the cross-field rules that
the evaluators' adapters and tracks declare (:mod:`leaderboard.intake.consistency`), and the manifest
against its folder and the maintainers' allowances (:mod:`leaderboard.intake.folder_checks`; ``code.object``
found by parsing ``code.file``). Every check after the schema reads only the fields that passed it, so all
of them run together and one push shows every problem. Every problem is a :class:`Problem` built where it
is found, naming the file, the field, the value and the fix; ``str(problem)`` is the one line the terminal
shows. A problem is an error or a warning (an option a maintainer must look at); only errors make a
manifest invalid.

Invariants
----------
- Text a submission controls (values, keys, folder names) reaches a :class:`Problem` only clipped and
  printable (:func:`leaderboard.text.printable`, :func:`~leaderboard.text.clip`): one line, no escape
  sequences, bounded length.
- Importing this module imports neither the evaluators nor numpy; the registries are read on first use
  (numpy and RDKit, never torch or transformers).

Side effects: none (reads files only).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from leaderboard.intake.consistency import adapter_capabilities, consistency_violations, track_capabilities
from leaderboard.intake.folder_checks import folder_problems
from leaderboard.intake.problems import STAGES, Location, ManifestError, Problem, errors, safe_text, shown
from leaderboard.intake.schema import (
    ID_PATTERN,
    PIN_PATTERN,
    SHA_PATTERN,
    CodeEntry,
    HuggingFaceModel,
    LocalModel,
    ModelSource,
    NoWeights,
    PipModel,
    Submission,
    TokenizerOptions,
)
from leaderboard.intake.schema_problems import schema_problem, usable_fields
from leaderboard.intake.yaml_source import Parsed, parse_manifest

__all__ = [
    "ID_PATTERN", "MANIFEST_NAME", "MAX_MANIFEST_BYTES", "PIN_PATTERN", "SHA_PATTERN", "STAGES", "Checked",
    "CodeEntry", "HuggingFaceModel", "LocalModel", "Location", "ManifestError", "ModelSource", "NoWeights",
    "PipModel", "Problem", "Submission", "TokenizerOptions", "adapter_capabilities", "check_submission",
    "discover", "load_submission", "track_capabilities", "validate_paths",
]  # fmt: skip

MANIFEST_NAME = "submission.yaml"
MAX_MANIFEST_BYTES = 64 * 1024


@dataclass(frozen=True)
class Checked:
    """The outcome of checking one manifest.

    Attributes
    ----------
    path : pathlib.Path
        The manifest checked.
    submission : Submission or None
        The validated manifest, ``None`` when any problem is an error.
    problems : tuple of Problem
        Every problem found, errors and warnings, in the order of :data:`STAGES`.
    reached : tuple of str
        The checks of :data:`STAGES` that ran: all of them, unless the file could not be read or parsed.
    """

    path: Path
    submission: Submission | None
    problems: tuple[Problem, ...] = ()
    reached: tuple[str, ...] = STAGES


def _whole(path: Path, check: str, message: str, fix: str = "") -> ManifestError:
    """Return a :class:`ManifestError` with one problem of the whole document (no field, no value)."""
    reached = STAGES[: STAGES.index(check) + 1]
    return ManifestError(path, [Problem(str(path), "", "", message, fix, check)], reached=reached)


def _read(path: Path) -> str:
    """Return the manifest's text; raise :class:`ManifestError` when it is missing, too big or not UTF-8."""
    if not path.is_file():
        raise _whole(path, "file", "file not found.", f"Each submission folder needs a {MANIFEST_NAME}.")
    size = path.stat().st_size
    if size > MAX_MANIFEST_BYTES:
        raise _whole(
            path,
            "file",
            f"{size} bytes; a manifest is at most {MAX_MANIFEST_BYTES} bytes.",
            "Keep long texts in a README beside it.",
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _whole(
            path,
            "yaml",
            f"not valid YAML: byte {exc.start} is not UTF-8 ({safe_text(exc.reason, 60)}).",
            "Save the file as UTF-8.",
        ) from None


def _consistency(file: str, known: dict, parsed: Parsed) -> list[Problem]:
    # A rule names the YAML path of the field at fault: point at its value, as schema errors do.
    return [
        Problem(file, field, shown(value), message, fix, "consistency", at=parsed.locate(field.split(".")))
        for field, value, message, fix in consistency_violations(known)
    ]


def _located(problems: Iterable[Problem], parsed: Parsed) -> list[Problem]:
    """Give each problem that names a field the ``line:col`` of that field's value in the manifest.

    The folder and policy checks read the validated fields, not the document: without this, a missing
    ``code.file`` was the one error an author got without a line to look at.
    """
    return [
        p if p.at is not None or not p.field else replace(p, at=parsed.locate(p.field.split(".")))
        for p in problems
    ]


def check_submission(path: Path, *, allow_remote_code: Iterable[str] = ()) -> Checked:
    """Run every check on one manifest (a ``submission.yaml`` file or its folder) and collect every problem.

    Parameters
    ----------
    path : pathlib.Path
        The manifest, or the submission folder containing it.
    allow_remote_code : iterable of str
        Submission ids for which a maintainer allows ``trust_remote_code: true``.

    Returns
    -------
    Checked
        The problems (errors and warnings) and, when there is no error, the validated manifest. The
        schema, the cross-field rules and the folder and policy checks run in one pass: each check after the
        schema reads only the fields that passed it.
    """
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST_NAME
    try:
        parsed = parse_manifest(path, _read(path))
    except ManifestError as exc:
        return Checked(path, None, tuple(exc.problems), exc.reached)
    data, file = parsed.data, str(path)
    if not isinstance(data, dict):
        problem = Problem(
            file,
            "",
            "",
            f"the top level must be a mapping of keys (id, name, model, ...), got {type(data).__name__}.",
            "Write one 'key: value' per line, starting with 'id:' (nox -s new-submission writes a template).",
            "yaml",
        )
        return Checked(path, None, (*parsed.problems, problem), ("file", "yaml"))
    submission, schema_errors = None, []
    try:
        submission = Submission.model_validate(data)
    except ValidationError as exc:
        schema_errors = exc.errors()
    known = usable_fields(data, schema_errors)
    problems = [
        *parsed.problems,
        *(schema_problem(file, e, parsed) for e in schema_errors),
        *_consistency(file, known, parsed),
        *_located(folder_problems(path, known, allow_remote_code=set(allow_remote_code)), parsed),
    ]
    valid = submission if not errors(problems) else None
    return Checked(path, valid, tuple(problems))


def load_submission(path: Path, *, allow_remote_code: Iterable[str] = ()) -> Submission:
    """Read and validate one manifest (a ``submission.yaml`` file or its folder).

    Parameters
    ----------
    path : pathlib.Path
        The manifest, or the submission folder containing it.
    allow_remote_code : iterable of str
        Submission ids for which a maintainer allows ``trust_remote_code: true``.

    Returns
    -------
    Submission
        The validated manifest (its warnings: :func:`check_submission`).

    Raises
    ------
    ManifestError
        When any problem is an error, with every problem found (a :class:`Problem` each: file, field,
        value, message, fix), warnings included.
    """
    checked = check_submission(path, allow_remote_code=allow_remote_code)
    if checked.submission is None:
        raise ManifestError(checked.path, list(checked.problems), checked.reached)
    return checked.submission


def discover(submissions_dir: Path) -> list[Path]:
    """Every ``submission.yaml`` directly under ``submissions_dir/<id>/``, sorted by id."""
    return sorted(
        p / MANIFEST_NAME for p in submissions_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
    )


def validate_paths(
    paths: Iterable[Path], *, allow_remote_code: Iterable[str] = ()
) -> dict[Path, list[Problem]]:
    """Validate several manifests.

    Parameters
    ----------
    paths : iterable of pathlib.Path
        Manifests (or their folders).
    allow_remote_code : iterable of str
        Ids a maintainer allows to use ``trust_remote_code``.

    Returns
    -------
    dict of pathlib.Path to list of Problem
        ``{path: problems}`` in the order given; a manifest is valid when none of its problems is an
        error (:attr:`Problem.is_error`), warnings aside.
    """
    allow = list(allow_remote_code)
    return {path: list(check_submission(path, allow_remote_code=allow).problems) for path in paths}
