"""Which submissions a branch touches: ``git diff`` since a ref, mapped to submission ids.

``--changed-since REF`` (validate and evaluate) uses :func:`changed_submissions`: the files that differ
between the merge base of ``REF`` and ``HEAD`` and the working tree under ``submissions/`` (committed,
staged and unstaged changes, and untracked files that git does not ignore), grouped by the folder
directly under ``submissions/``. Comparing with the merge base (``git diff REF...``) means that commits
landed on ``REF`` after the branch started do not count as the branch's changes; including the working
tree means a model author can check a manifest before committing it (in CI the tree is clean, so it is
the branch's commits exactly).

Invariants
----------
- A touched id whose folder still exists is *changed* (validated, evaluated); ``added`` is the subset
  whose folder did not exist at the merge base. A touched id whose folder is gone is *deleted* (reported,
  never validated). Renames count as a deletion plus an addition (``--no-renames``).
- Files directly under ``submissions/`` (e.g. ``submissions/README.md``) belong to no submission; they
  are listed in ``other``.
- Nothing is read from the changed files here, and no git command that runs repository-configured
  programs is used (no checkout, no hooks, no textconv): the repository may be an untrusted pull request.

Side effects: runs read-only ``git`` commands in the repository.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SUBMISSIONS_DIR", "ChangeError", "ChangeSet", "changed_submissions", "repo_toplevel"]

#: Folder of the submissions, relative to the repository root.
SUBMISSIONS_DIR = "submissions"


class ChangeError(RuntimeError):
    """git could not tell what changed (not a repository, unknown ref, no common history)."""


@dataclass(frozen=True)
class ChangeSet:
    """The submissions a branch touches, relative to a ref.

    Attributes
    ----------
    ref : str
        The ref as given (``main``, ``origin/main``, a commit).
    base : str
        The merge-base commit of ``ref`` and ``HEAD`` (full SHA) the changes are measured from.
    changed : tuple of str
        Ids (folder names under ``submissions/``) with any changed file whose folder still exists, sorted.
    added : tuple of str
        The ids in ``changed`` whose folder did not exist at ``base``.
    deleted : tuple of str
        Ids whose folder existed at ``base`` and is gone now, sorted.
    other : tuple of str
        Changed paths under ``submissions/`` that are in no submission folder, sorted.
    """

    ref: str
    base: str
    changed: tuple[str, ...]
    added: tuple[str, ...]
    deleted: tuple[str, ...]
    other: tuple[str, ...]

    @property
    def modified(self) -> tuple[str, ...]:
        """Ids in ``changed`` that existed at ``base`` (edited, not new)."""
        return tuple(i for i in self.changed if i not in self.added)

    def status(self, submission_id: str) -> str:
        """Return ``"new"``, ``"modified"``, ``"deleted"`` or ``"unchanged"`` for one id."""
        if submission_id in self.added:
            return "new"
        if submission_id in self.changed:
            return "modified"
        if submission_id in self.deleted:
            return "deleted"
        return "unchanged"


def _git(repo_root: Path, *args: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo_root), "-c", "core.quotePath=false", *args],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise ChangeError(f"cannot run git ({exc}); install git to use --changed-since") from None
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.split())[:300] or f"exit status {proc.returncode}"
        raise ChangeError(f"git {' '.join(args[:2])} failed in {repo_root}: {detail}")
    return proc.stdout


def repo_toplevel(start: Path) -> Path:
    """Return the root of the git work tree that contains ``start``.

    Raises
    ------
    ChangeError
        If ``start`` is not inside a git work tree.
    """
    try:
        out = _git(Path(start), "rev-parse", "--show-toplevel")
    except ChangeError:
        raise ChangeError(
            f"{Path(start).resolve()} is not inside a git repository; --changed-since compares git commits. "
            "Run it from your clone, or pass --root PATH."
        ) from None
    return Path(out.strip())


def _split(path: str) -> tuple[str | None, str]:
    """Map a repository path under ``submissions/`` to (id or None, path)."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == SUBMISSIONS_DIR:
        return parts[1], path
    return None, path


def changed_submissions(ref: str, *, repo_root: Path) -> ChangeSet:
    """List the submissions added, changed or deleted since ``ref`` (see the module docstring).

    Parameters
    ----------
    ref : str
        A branch, tag or commit, e.g. ``main`` or ``origin/main``; it must exist in the repository.
    repo_root : pathlib.Path
        The git work tree whose ``submissions/`` folder is compared.

    Returns
    -------
    ChangeSet
        Changed, added and deleted ids and the other touched paths.

    Raises
    ------
    ChangeError
        If ``repo_root`` is not a git work tree, ``ref`` is unknown there, or ``ref`` and ``HEAD`` share
        no history; the message says how to fix it.

    Examples
    --------
    A branch that adds ``submissions/acme-chem/`` and edits ``submissions/minilm-l6-text/submission.yaml``
    gives ``changed=("acme-chem", "minilm-l6-text")``, ``added=("acme-chem",)``, ``deleted=()``.
    """
    repo_root = Path(repo_root)
    if ref.startswith("-") or not ref.strip():
        raise ChangeError(f"--changed-since: {ref!r} is not a git ref. Give a branch or commit, e.g. 'main'.")
    try:
        _git(repo_root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    except ChangeError:
        raise ChangeError(
            f"--changed-since: unknown git ref {ref!r} in {repo_root}. Fetch it first "
            f"(git fetch origin {ref}) or give a commit SHA or 'origin/{ref}'."
        ) from None
    try:
        base = _git(repo_root, "merge-base", "--end-of-options", ref, "HEAD").strip()
    except ChangeError:
        raise ChangeError(
            f"--changed-since: {ref!r} and HEAD share no history in {repo_root} (a shallow clone?). "
            "Fetch the full history (git fetch --unshallow) and try again."
        ) from None
    touched: set[str] = set()
    diff = _git(repo_root, "diff", "--name-only", "-z", "--no-renames", base, "--", f"{SUBMISSIONS_DIR}/")
    touched.update(p for p in diff.split("\0") if p)
    untracked = _git(
        repo_root, "ls-files", "--others", "--exclude-standard", "-z", "--", f"{SUBMISSIONS_DIR}/"
    )
    touched.update(p for p in untracked.split("\0") if p)
    listing = _git(repo_root, "ls-tree", "-d", "--name-only", "-z", base, "--", f"{SUBMISSIONS_DIR}/")
    at_base = {p.split("/", 1)[1] for p in listing.split("\0") if p.startswith(f"{SUBMISSIONS_DIR}/")}

    ids: set[str] = set()
    other: set[str] = set()
    for path in touched:
        sub_id, _ = _split(path)
        if sub_id is None:
            other.add(path)
        else:
            ids.add(sub_id)
    present = {i for i in ids if (repo_root / SUBMISSIONS_DIR / i).is_dir()}
    return ChangeSet(
        ref=ref,
        base=base,
        changed=tuple(sorted(present)),
        added=tuple(sorted(i for i in present if i not in at_base)),
        deleted=tuple(sorted(ids - present)),
        other=tuple(sorted(other)),
    )
