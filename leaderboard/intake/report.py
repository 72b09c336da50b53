"""The checks behind the pull-request report: every manifest through :data:`CHECKS`, with every problem.

:func:`check_manifest` / :func:`check_manifests` run :func:`leaderboard.intake.manifest.check_submission`
and keep each :class:`~leaderboard.intake.manifest.Problem` it reports as it is (file, field, value,
message, fix and the check that found it), with paths shown relative to the repository root. The Markdown
report built from them is :mod:`leaderboard.intake.pr_report`.

Invariants
----------
- Checking a manifest never runs submission code: the verdict is
  :func:`leaderboard.intake.manifest.load_submission` (safe YAML, pydantic), and a manifest that is a
  symbolic link or lies outside its submission folder is refused before it is read, so a pull request
  cannot make the report quote files from elsewhere.
- The problems are the validator's own (no second parse of the manifest): the report and
  ``python -m leaderboard validate`` cannot disagree. Warnings are problems too, but never make a
  manifest fail.
- Deterministic: the same inputs give the same result.

Side effects: none (reads manifests).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from leaderboard.intake.manifest import STAGES, Problem, Submission, check_submission
from leaderboard.text import printable

__all__ = ["CHECKS", "ManifestCheck", "check_manifest", "check_manifests"]

#: The checks every manifest goes through, in order (keys: :data:`leaderboard.intake.manifest.STAGES`).
#: They run in one pass; the ones after ``schema`` read only the fields that passed it, and nothing after
#: ``yaml`` runs on a file that does not parse.
CHECKS: tuple[tuple[str, str], ...] = (
    ("file", "file: present, a plain file inside its submission folder, at most 64 KiB"),
    ("yaml", "YAML: parses with the safe loader into a mapping of keys, no key given twice"),
    ("schema", "schema: no unknown keys; every field present, of the right type, pinned"),
    ("consistency", "consistency: adapter, source, architecture, capabilities, code entry and tracks agree"),
    ("folder", "folder: id equals the folder name; code and local weights inside the folder; "
     "`code.object` defined in `code.file`"),
    ("policy", "policy: options that need a maintainer (`trust_remote_code`, `allow_pickle`)"),
)  # fmt: skip


@dataclass(frozen=True)
class ManifestCheck:
    """The outcome of checking one manifest.

    Attributes
    ----------
    submission : str
        The submission id (its folder name), printable (:func:`leaderboard.text.printable`).
    file : str
        The manifest, relative to the repository root, printable.
    status : str
        ``new``, ``modified`` or ``unchanged`` relative to the ref compared with; empty without one.
    problems : tuple of Problem
        Every problem, errors and warnings (``file`` relative to the repository root).
    submission_model : Submission or None
        The validated manifest when valid.
    reached : tuple of str
        The checks of :data:`CHECKS` that ran (all, unless the file could not be read or parsed).
    """

    submission: str
    file: str
    status: str
    problems: tuple[Problem, ...] = ()
    submission_model: Submission | None = field(default=None, compare=False)
    reached: tuple[str, ...] = STAGES

    @property
    def errors(self) -> tuple[Problem, ...]:
        """The problems that make the manifest invalid."""
        return tuple(p for p in self.problems if p.is_error)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """The problems a maintainer must look at, which do not make the manifest invalid."""
        return tuple(p for p in self.problems if not p.is_error)

    @property
    def ok(self) -> bool:
        """Whether the manifest passed every check (warnings aside)."""
        return not self.errors

    def outcome(self, check: str) -> str:
        """Return ``pass``, ``warn``, ``fail`` or ``skip`` (not reached) for one of :data:`CHECKS`."""
        if check not in self.reached:
            return "skip"
        found = {p.severity for p in self.problems if p.check == check}
        return "fail" if "error" in found else "warn" if found else "pass"


def _relative(path: Path, root: Path) -> str:
    try:
        return path.absolute().relative_to(root.absolute()).as_posix()
    except ValueError:
        return path.as_posix()


def _containment_problem(path: Path, root: Path) -> tuple[str, str] | None:
    """Refuse a manifest reached through a symbolic link (it could make the report quote any file).

    Returns
    -------
    tuple of (str, str) or None
        The problem's message and fix, or ``None`` when the manifest is a plain file in its folder.
    """
    if path.is_symlink() or path.parent.is_symlink():
        return (
            "is a symbolic link, or in a folder that is one; a manifest must be a plain file in a plain "
            "submission folder.",
            "Replace the link with the file itself.",
        )
    outside = ("lies outside its submission folder.", "Put it at submissions/<id>/submission.yaml.")
    try:
        folder = path.parent.resolve()
        leaves_repository = path.absolute().is_relative_to(root.absolute()) and not folder.is_relative_to(
            root.resolve()
        )
    except (OSError, RuntimeError):
        return outside
    return outside if leaves_repository else None


def check_manifest(
    path: Path, *, root: Path, status: str = "", allow_remote_code: Iterable[str] = ()
) -> ManifestCheck:
    """Check one manifest; each problem names the one of :data:`CHECKS` that found it.

    Parameters
    ----------
    path : pathlib.Path
        The ``submission.yaml`` (it need not exist: a missing file is a problem).
    root : pathlib.Path
        Repository root; paths in the result are relative to it.
    status : str
        ``new``, ``modified`` or ``unchanged`` relative to a ref, shown in the report; empty when all
        manifests are checked.
    allow_remote_code : iterable of str
        Ids a maintainer allows to use ``trust_remote_code``.

    Returns
    -------
    ManifestCheck
        The problems (none when valid) and, when valid, the parsed manifest.
    """
    path = Path(path)
    root = Path(root)
    submission_id = printable(path.parent.name, collapse=False)  # a folder name from the pull request
    shown = printable(_relative(path, root), collapse=False)
    refused = _containment_problem(path, root)
    if refused is not None:
        message, fix = refused
        problem = Problem(shown, "", "", message, fix, "file")
        return ManifestCheck(submission_id, shown, status, (problem,), reached=("file",))
    checked = check_submission(path, allow_remote_code=list(allow_remote_code))
    # Folder paths in messages are shown relative to the root, as the file is (no runner paths in comments).
    folder, folder_shown = printable(str(path.parent), collapse=False), _relative(path.parent, root)
    problems = tuple(
        replace(p, file=shown, message=p.message.replace(folder, folder_shown)) for p in checked.problems
    )
    return ManifestCheck(submission_id, shown, status, problems, checked.submission, checked.reached)


def check_manifests(
    ids: Sequence[str],
    *,
    root: Path,
    statuses: Mapping[str, str] | None = None,
    allow_remote_code: Iterable[str] = (),
) -> list[ManifestCheck]:
    """Check ``<root>/submissions/<id>/submission.yaml`` for every id, in the given order.

    Parameters
    ----------
    ids : sequence of str
        Submission ids (folder names under ``submissions/``).
    root : pathlib.Path
        Repository root.
    statuses : mapping of str to str, optional
        ``new`` / ``modified`` per id (see :func:`check_manifest`).
    allow_remote_code : iterable of str
        Ids a maintainer allows to use ``trust_remote_code``.

    Returns
    -------
    list of ManifestCheck
        One per id, in the order of ``ids``.
    """
    allow = list(allow_remote_code)
    statuses = statuses or {}
    return [
        check_manifest(
            Path(root) / "submissions" / i / "submission.yaml",
            root=Path(root),
            status=statuses.get(i, ""),
            allow_remote_code=allow,
        )
        for i in ids
    ]
