"""Command-line arguments that name a submission: kept inside ``submissions/``, refused in one line.

``python -m leaderboard validate PATH ...`` reads the manifests its arguments name. An argument is
whatever a maintainer pastes from a pull request, so before anything is read it must name a submission
folder (``submissions/<id>``) or a file directly in one (``submissions/<id>/submission.yaml``) once
``..`` and symbolic links are resolved: ``../x``, an absolute path elsewhere, or a link that points out of
``submissions/`` is an :class:`ArgumentError` whose message is one printable line that quotes the argument
and says what to give instead.

Side effects: none (reads the file system's metadata only).
"""

from __future__ import annotations

import os
from pathlib import Path

from leaderboard.intake.manifest import MANIFEST_NAME
from leaderboard.text import clip, printable

__all__ = ["ArgumentError", "manifest_argument", "shown_argument"]

_FIX = f"Give a submission folder (submissions/<id>) or its {MANIFEST_NAME}."


class ArgumentError(ValueError):
    """An argument that does not name a submission inside ``submissions/`` (a one-line, printable message)."""


def shown_argument(arg: str) -> str:
    r"""Return an argument as it may be printed: quoted, one printable line, at most 200 characters.

    Examples
    --------
    >>> print(shown_argument("x\x1b[2J\n\u202e"))
    'x\x1b[2J\x0a\u202e'
    """
    return f"'{clip(printable(arg, collapse=False), 200)}'"


def manifest_argument(arg: str, *, submissions_dir: Path) -> Path:
    """Return the manifest a command-line argument names, refusing one outside ``submissions_dir``.

    Parameters
    ----------
    arg : str
        The argument as given: a submission folder or a manifest, relative to the current directory or
        absolute.
    submissions_dir : pathlib.Path
        The ``submissions/`` folder the argument must lie in (after resolving ``..`` and symbolic links).

    Returns
    -------
    pathlib.Path
        The argument as given, with ``submission.yaml`` appended when it names a folder (or nothing yet),
        so that messages show the path the maintainer typed.

    Raises
    ------
    ArgumentError
        If the argument is empty, holds a NUL byte, cannot be resolved, resolves outside
        ``submissions_dir`` (through ``..``, as an absolute path or through a symbolic link), names
        ``submissions_dir`` itself or lies deeper than ``submissions/<id>/<file>``.
    """
    shown = shown_argument(arg)
    where = f"{clip(printable(str(submissions_dir), collapse=False), 200)}/"
    if not arg or "\0" in arg:
        raise ArgumentError(f"{shown} is not a path. {_FIX}")
    given = Path(arg)
    try:
        absolute = Path(os.path.abspath(given))  # lexical: '..' collapsed, links not followed
        resolved = absolute.resolve()
        root = Path(submissions_dir).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a link loop, a name too long
        raise ArgumentError(f"{shown} cannot be resolved ({type(exc).__name__}). {_FIX}") from None
    if root not in resolved.parents:
        lexical_root = Path(os.path.abspath(submissions_dir))
        if resolved == root or absolute == lexical_root:
            raise ArgumentError(f"{shown} is the submissions folder itself. {_FIX}")
        via_link = lexical_root in absolute.parents or root in absolute.parents
        how = "leads outside {} through a symbolic link" if via_link else "is outside {}"
        raise ArgumentError(f"{shown} {how.format(where)}; nothing was read. {_FIX}")
    depth = len(resolved.relative_to(root).parts)
    if depth == 1:
        if resolved.exists() and not resolved.is_dir():
            raise ArgumentError(f"{shown} is a file, not a submission folder. {_FIX}")
        return given / MANIFEST_NAME
    if depth == 2 and not resolved.is_dir():
        return given
    raise ArgumentError(f"{shown} is not a submission folder or a file directly in one. {_FIX}")
