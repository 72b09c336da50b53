"""The manifest against its folder and the maintainers' allowances: the ``folder`` and ``policy`` checks.

``folder``: ``id`` equals the folder name; ``code.file`` and local weights lie inside the folder and exist;
``code.object`` is defined at the top level of ``code.file`` — found by parsing the file with :mod:`ast`,
never by importing or running it. ``policy``: options that run code from elsewhere need a maintainer:
``trust_remote_code`` is an error unless a maintainer allows the submission (and a warning when one does),
``model.allow_pickle`` is a warning (the maintainer's consent is given when the weights are fetched).

Both read only the fields that passed the schema (:func:`leaderboard.intake.schema_problems.usable_fields`),
so they run in the same pass as the schema and the cross-field rules.

Side effects: none (reads the submission's folder and its code file).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from leaderboard.intake.problems import Problem, shown

__all__ = ["MAX_CODE_BYTES", "defined_names", "folder_problems"]

#: The largest ``code.file`` the validator parses (a submission's adapter is a page or two of Python).
MAX_CODE_BYTES = 1024 * 1024
_ADAPTER_BASES = "evaluators.adapters.EmbeddingAdapter or GenerativeAdapter"


def _inside(folder: Path, relative: str) -> Path | None:
    try:
        candidate = (folder / relative).resolve()
    except (OSError, ValueError):  # a NUL byte, a name too long, a link loop
        return None
    return candidate if candidate == folder.resolve() or folder.resolve() in candidate.parents else None


def _bindings(statements: list[ast.stmt]) -> Iterator[tuple[str, str]]:
    """``(name, kind)`` of every name a block of module-level statements binds (kind: class, function …)."""
    for node in statements:
        if isinstance(node, ast.ClassDef):
            yield node.name, "class"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, "function"
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        yield leaf.id, "assignment"
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                yield (alias.asname or alias.name.split(".")[0]), "import"
        elif isinstance(node, ast.If | ast.Try | ast.With):  # still the module's top level
            for block in ("body", "orelse", "finalbody"):
                yield from _bindings(getattr(node, block, []))
            for handler in getattr(node, "handlers", []):
                yield from _bindings(handler.body)


def defined_names(source: bytes | str) -> dict[str, str]:
    r"""Return the names a Python module binds at its top level, and how, without running it.

    Parameters
    ----------
    source : bytes or str
        The module's source (bytes: its encoding declaration is honoured).

    Returns
    -------
    dict of str to str
        Name → ``class``, ``function``, ``assignment`` or ``import`` (the last binding wins, as at run
        time).

    Raises
    ------
    SyntaxError, ValueError, RecursionError, MemoryError
        When the source does not parse (a NUL byte, nesting too deep for the parser).

    Examples
    --------
    >>> defined_names("import numpy as np\nclass A(B):\n    pass\ndef f(): ...\nX = Y = 1\n")
    {'np': 'import', 'A': 'class', 'f': 'function', 'X': 'assignment', 'Y': 'assignment'}
    """
    return dict(_bindings(ast.parse(source).body))


def _code_problems(folder: Path, code: Any, add: Any) -> None:
    """``code.file`` inside the folder and present; ``code.object`` defined in it."""
    target = _inside(folder, code.file)
    if target is None:
        add(
            "code.file",
            code.file,
            f"'code.file' {code.file!r} points outside the submission folder.",
            "Put your code inside submissions/<id>/.",
        )
        return
    if not target.is_file():
        add(
            "code.file",
            code.file,
            f"'code.file' {code.file!r} does not exist in {folder}.",
            "Add the file or fix the path (relative to the submission folder).",
        )
        return
    if target.stat().st_size > MAX_CODE_BYTES:
        message = f"'code.file' {code.file!r} is over {MAX_CODE_BYTES} bytes; 'code.object' was not checked."
        add("code.file", code.file, message, "Keep data out of the code file.", severity="warning")
        return
    try:
        names = defined_names(target.read_bytes())
    except SyntaxError as exc:
        add(
            "code.file",
            code.file,
            f"'code.file' {code.file!r} is not valid Python (line {exc.lineno}: {exc.msg}), so the sandbox "
            "could not import it either.",
            f"Fix the syntax error; 'python -m py_compile {code.file}' shows it.",
        )
        return
    except (ValueError, RecursionError, MemoryError) as exc:
        message = f"'code.file' {code.file!r} cannot be parsed as Python ({type(exc).__name__}: {exc})."
        add("code.file", code.file, message, "Remove NUL bytes and very deep nesting from the file.")
        return
    kind = names.get(code.object)
    if kind is None:
        classes = sorted(n for n, k in names.items() if k == "class")
        close = difflib.get_close_matches(code.object, list(names), n=1, cutoff=0.6)
        defines = f" (it defines the classes {', '.join(classes)})" if classes else " (it defines no class)"
        fix = f"Did you mean '{close[0]}'? " if close else ""
        add(
            "code.object",
            code.object,
            f"'code.object' {code.object!r} is not defined at the top level of {code.file!r}{defines}.",
            fix + f"Give the name of your adapter class, a subclass of {_ADAPTER_BASES}.",
        )
    elif kind == "function":
        add(
            "code.object",
            code.object,
            f"'code.object' {code.object!r} is a function in {code.file!r}; the adapter must be a class.",
            f"Name the adapter class instead (a subclass of {_ADAPTER_BASES}).",
        )


def folder_problems(path: Path, known: Mapping[str, Any], *, allow_remote_code: set[str]) -> list[Problem]:
    """Check the manifest against its folder and the maintainers' allowances.

    Parameters
    ----------
    path : pathlib.Path
        The manifest; its folder is the submission folder.
    known : mapping of str to Any
        The fields that passed the schema (:func:`leaderboard.intake.schema_problems.usable_fields`); a
        check whose field is missing there is not run.
    allow_remote_code : set of str
        Submission ids a maintainer allows to use ``trust_remote_code``.

    Returns
    -------
    list of Problem
        Check ``folder`` or ``policy``; the warnings have severity ``warning``.
    """
    folder, file = path.parent, str(path)
    problems: list[Problem] = []

    def add(
        field: str, value: Any, message: str, fix: str, check: str = "folder", severity: str = "error"
    ) -> None:
        problems.append(Problem(file, field, shown(value), message, fix, check, severity))

    sub_id = known.get("id")
    if sub_id is not None and sub_id != folder.name:
        add(
            "id",
            sub_id,
            f"'id' is {sub_id!r} but the folder is {folder.name!r}.",
            "Make them equal (rename the folder or change the id).",
        )
    if known.get("code") is not None:
        _code_problems(folder, known["code"], add)
    source, weights = known.get("model.source"), known.get("model.path")
    if source == "local" and weights is not None:
        target = _inside(folder, weights)
        if target is None:
            add(
                "model.path",
                weights,
                f"'model.path' {weights!r} points outside the submission folder.",
                "Keep local weights inside submissions/<id>/.",
            )
        elif not target.is_dir():
            add(
                "model.path",
                weights,
                f"'model.path' {weights!r} is not a folder in {folder}.",
                "Point it at the folder with config.json and the weights.",
            )
    if source == "pip" and weights and _inside(Path("/pkg"), weights) is None:
        add("model.path", weights, f"'model.path' {weights!r} must be a path inside the package.", "")
    if known.get("trust_remote_code") is True:
        if sub_id is not None and sub_id in allow_remote_code:
            add(
                "trust_remote_code",
                True,
                "'trust_remote_code' is true: code from the model repository runs in the sandbox; a "
                "maintainer allows it for this submission.",
                "Maintainers: read the repository's *.py files at the pinned revision before evaluating.",
                check="policy",
                severity="warning",
            )
        else:
            add(
                "trust_remote_code",
                True,
                "'trust_remote_code' is true, which runs code from the model repository.",
                "A maintainer must allow it explicitly (CHEMROBUST_ALLOW_REMOTE_CODE=<id>); "
                "otherwise set it to false.",
                check="policy",
            )
    if known.get("model.allow_pickle") is True:
        add(
            "model.allow_pickle",
            True,
            "'model.allow_pickle' is true: pickle weights (.bin, .pt) can run code when loaded, so they are "
            "fetched only when a maintainer allows this submission (CHEMROBUST_ALLOW_PICKLE=<id>, or an "
            "entry in leaderboard/allowances.toml), and loaded only inside the sandbox.",
            "Prefer safetensors: convert the weights and remove 'allow_pickle'; otherwise a maintainer must "
            "allow it before the evaluation.",
            check="policy",
            severity="warning",
        )
    return problems
