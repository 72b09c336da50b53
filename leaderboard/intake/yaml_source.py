"""Reading a manifest's YAML: safe, bounded, strict about what YAML itself lets slip.

:func:`parse_manifest` turns a manifest's text into plain data with a ``yaml.SafeLoader`` subclass that

- refuses aliases (``*name``): a manifest never needs them, and a chain of them is how a small document
  expands into a huge one (a "billion laughs" YAML bomb) once something walks it;
- finds every duplicate mapping key, with the lines of both occurrences: YAML's own loaders keep the last
  silently, so a second ``revision:`` further down would win unseen;
- reports a syntax error as ``file:line:col`` with the offending line, a caret and a fix sentence of our
  own (:data:`_SYNTAX_FIXES`), never PyYAML's multi-line text; a tab, or a line dedented out of its
  mapping, is reported where the author made it, with the field it was meant to be
  (:mod:`leaderboard.intake.yaml_layout`), not where the parser stopped;
- keeps where every key and value is (:meth:`Parsed.locate`), so that a schema error can name its
  ``file:line:col`` too, and how every scalar was written (:meth:`Parsed.written_at`), so that a value
  YAML resolved to something else (``0123456``, an octal number) is quoted as the author wrote it.

Invariants
----------
- Only the safe loader's types are built (no tags that import or call anything).
- Every failure is a :class:`~leaderboard.intake.problems.ManifestError` whose problems are safe to print;
  duplicate keys are problems of a document that still parsed, so the other checks run on it too.

Side effects: none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from leaderboard.intake.problems import Location, ManifestError, Problem, safe_text, shown
from leaderboard.intake.yaml_layout import dedent_diagnosis, tab_diagnosis

__all__ = ["Parsed", "parse_manifest"]

#: The checks that ran when the document could not be parsed (nothing after ``yaml`` can run).
_PARSE_REACHED = ("file", "yaml")
_MERGE_TAG = "tag:yaml.org,2002:merge"

_CONTROL_FIX = "Remove the control character (the file must be plain UTF-8 text)."
#: Fix sentences by a fragment of PyYAML's ``problem`` text; ``{opened}`` is where the construct that is
#: left open began ("line 2, column 7"). The first match wins; :data:`_DEFAULT_FIX` otherwise.
_SYNTAX_FIXES: tuple[tuple[str, str], ...] = (
    ("'\\t'", "Indent with spaces: YAML does not allow tab characters there."),
    ("mapping values are not allowed", "Put each key on its own line as 'key: value', indented like its "
     "neighbours, and quote a value that itself contains ': ' (name: \"A: B\")."),
    ("expected ',' or ']'", "Close the '[' opened at {opened} with ']', or quote the value if the bracket "
     "is part of it."),
    ("expected ',' or '}'", "Close the '{{' opened at {opened} with '}}', or quote the value if the brace "
     "is part of it."),
    ("unknown escape character", "In double quotes a backslash starts an escape: write '\\\\' for a "
     "backslash, or use single quotes."),
    ("end of stream", "Close the quote opened at {opened}."),
    ("expected <block end>", "Indent the keys of one mapping by the same number of spaces, and do not mix "
     "'- item' lists with 'key: value' lines at the same level."),
    ("could not determine a constructor", "Remove the '!!' tag: a manifest holds plain strings, numbers, "
     "booleans, lists and mappings."),
    ("cannot start any token", "Quote the value (a plain value cannot start with characters such as '@', "
     "'`' or '%')."),
)  # fmt: skip
#: PyYAML's words when a line it met was indented deeper than the block it was in allows.
_DEDENT_SIGNS = ("mapping values are not allowed", "expected <block end>")
_DEFAULT_FIX = (
    "Check the line shown: indentation with spaces, a ': ' after each key, quotes around a value that "
    "contains ': ' or ' #'."
)


class _AliasError(yaml.YAMLError):
    def __init__(self, anchor: str, line: int) -> None:
        super().__init__(anchor, line)
        self.anchor, self.line = anchor, line


class _ManifestLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (``*name``); duplicate keys are found on the node tree."""

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasError(str(event.anchor), event.start_mark.line + 1)
        return super().compose_node(parent, index)


#: ``(key line, key column, value line, value column)``, 1-based, of one node of the document.
Marks = tuple[int, int, int, int]


@dataclass(frozen=True)
class Parsed:
    """A parsed manifest: its data (duplicate keys: the last wins) and the problems of its YAML.

    ``marks`` maps the path of every node (mapping keys and list indices as strings)
    to where its key and its value start; ``text`` is the document, for the quoted line of a location;
    ``written`` maps the path of every scalar value to its text before YAML resolved it (``0123456``
    for the integer 42798).
    """

    data: Any
    problems: tuple[Problem, ...] = ()
    text: str = ""
    marks: Mapping[tuple[str, ...], Marks] = field(default_factory=dict)
    written: Mapping[tuple[str, ...], str] = field(default_factory=dict)

    def _walk(self, loc: Sequence[Any]) -> tuple[tuple[str, ...], bool]:
        """Return the deepest path of ``loc`` the document holds, and whether it is all of ``loc``."""
        path: tuple[str, ...] = ()
        parts = [str(p) for p in loc]
        for i, part in enumerate(parts):
            if (*path, part) in self.marks:
                path = (*path, part)
            elif i + 1 < len(parts) and (*path, parts[i + 1]) in self.marks:
                continue  # a union tag pydantic inserted: not a node of the document
            else:
                return path, False
        return path, True

    def written_at(self, loc: Sequence[Any]) -> str | None:
        r"""Return the scalar at ``loc`` (a pydantic error location) as written, or ``None`` if not one.

        Examples
        --------
        >>> parsed = parse_manifest(Path("m.yaml"), "model:\n  revision: 0123456\n")
        >>> parsed.data["model"]["revision"], parsed.written_at(["model", "revision"])
        (42798, '0123456')
        """
        path, whole = self._walk(loc)
        return self.written.get(path) if whole and path else None

    def locate(self, loc: Sequence[Any], *, key: bool = False) -> Location | None:
        """Return where the node at ``loc`` (a pydantic error location) is, or its nearest ancestor.

        Parameters
        ----------
        loc : sequence
            Path segments (keys, list indices). A segment the document does not hold is skipped when the
            next one continues the path (pydantic puts a tagged union's tag, e.g. ``huggingface``, between
            ``model`` and its field), else the walk stops there: a missing field points at the mapping
            that lacks it.
        key : bool, default False
            Point at the key (an unknown key) rather than the value (a wrong value).

        Returns
        -------
        Location or None
            ``None`` when not even the first segment is in the document (a missing top-level field).
        """
        path, whole = self._walk(loc)
        key = key or not whole  # a missing child: point at the key of the mapping that lacks it
        if not path:
            return None
        key_line, key_col, value_line, value_col = self.marks[path]
        line, column = (key_line, key_col) if key else (value_line, value_col)
        return Location.in_text(self.text, line=line, column=column)


def _refuse(
    path: Path, message: str, fix: str = "", at: Location | None = None, field: str = ""
) -> ManifestError:
    problem = Problem(str(path), field, "", message, fix, "yaml", at=at)
    return ManifestError(path, [problem], reached=_PARSE_REACHED)


def _duplicates(path: Path, text: str, root: yaml.Node | None) -> list[Problem]:
    """Every key given twice in one mapping, anywhere in the document, in document order."""
    found: list[Problem] = []
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [] if root is None else [(root, ())]
    while stack:  # iterative: the depth is bounded by what the composer accepted, not by our stack
        node, where = stack.pop()
        if isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*where, str(i))) for i, item in reversed(list(enumerate(node.value))))
            continue
        if not isinstance(node, yaml.MappingNode):
            continue
        first_line: dict[tuple[str, str], int] = {}
        children = []
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
                continue
            ident, line = (key.tag, key.value), key.start_mark.line + 1
            children.append((value, (*where, key.value)))
            if ident not in first_line:
                first_line[ident] = line
                continue
            field = ".".join((*where, key.value))
            parent = f"under '{'.'.join(where)}'" if where else "at the top level"
            found.append(
                Problem(
                    str(path),
                    field,
                    shown(key.value),
                    f"'{field}' is given twice (lines {first_line[ident]} and {line}); YAML would keep "
                    "only the last one, silently.",
                    f"Keep one '{safe_text(key.value, 60)}' {parent} and delete the other.",
                    "yaml",
                    at=Location.in_text(text, line=line, column=key.start_mark.column + 1),
                )
            )
        stack.extend(reversed(children))
    return found


def _marks(root: yaml.Node | None) -> tuple[dict[tuple[str, ...], Marks], dict[tuple[str, ...], str]]:
    """Where every node of the document starts, and every scalar's text as written, by path.

    For a duplicate key: the last, the one the data keeps.
    """
    out: dict[tuple[str, ...], Marks] = {}
    written: dict[tuple[str, ...], str] = {}
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [] if root is None else [(root, ())]
    while stack:  # iterative, as in _duplicates
        node, where = stack.pop()
        # By path, so that of a key given twice only the last (the one the data keeps) is walked.
        children: dict[tuple[str, ...], tuple[yaml.Node, yaml.Node]] = {}
        if isinstance(node, yaml.SequenceNode):
            children = {(*where, str(i)): (item, item) for i, item in enumerate(node.value)}
        elif isinstance(node, yaml.MappingNode):
            children = {
                (*where, str(key.value)): (key, value)
                for key, value in node.value
                if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE_TAG
            }
        for path, (key, value) in children.items():
            k, v = key.start_mark, value.start_mark
            out[path] = (k.line + 1, k.column + 1, v.line + 1, v.column + 1)
            if isinstance(value, yaml.ScalarNode):
                written[path] = str(value.value)  # the text before YAML resolved its type
            stack.append((value, path))
    return out, written


def _layout_problem(path: Path, text: str, exc: yaml.MarkedYAMLError) -> ManifestError | None:
    """Explain a tab, or a dedented line the parser only noticed a line later, where the author erred."""
    mark, what, context = exc.problem_mark, exc.problem or "", exc.context or ""
    if mark is None:
        return None
    found = tab_diagnosis(text, line=mark.line + 1, column=mark.column + 1)
    # Only the two ways a dedent surfaces in block context; inside [ ] or { } indentation means nothing.
    if found is None and any(f in what for f in _DEDENT_SIGNS) and "flow" not in context:
        found = dedent_diagnosis(text, line=mark.line + 1)
    if found is None:
        return None
    at = Location.in_text(text, line=found.line, column=found.column)
    return _refuse(path, f"not valid YAML: {found.message}", found.fix, at, found.field)


def _syntax_problem(path: Path, text: str, exc: yaml.MarkedYAMLError) -> ManifestError:
    layout = _layout_problem(path, text, exc)
    if layout is not None:
        return layout
    mark, opened = exc.problem_mark, exc.context_mark
    what = safe_text(exc.problem or "cannot be parsed", 200)
    context = f" ({safe_text(exc.context, 80)} at line {opened.line + 1})" if exc.context and opened else ""
    opened_at = f"line {opened.line + 1}, column {opened.column + 1}" if opened else "the line shown"
    fix = next((f for fragment, f in _SYNTAX_FIXES if fragment in what), _DEFAULT_FIX)
    at = None if mark is None else Location.in_text(text, line=mark.line + 1, column=mark.column + 1)
    return _refuse(path, f"not valid YAML: {what}{context}.", fix.format(opened=opened_at), at)


def _reader_problem(path: Path, text: str, exc: yaml.reader.ReaderError) -> ManifestError:
    before = text[: max(0, exc.position)]
    line, column = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
    message = (
        f"not valid YAML: character #x{exc.character:04x} is not allowed in a manifest."
        if isinstance(exc.character, int)
        else f"not valid YAML: {safe_text(exc.reason, 100)}."
    )
    return _refuse(path, message, _CONTROL_FIX, Location.in_text(text, line=line, column=column))


def parse_manifest(path: Path, text: str) -> Parsed:
    """Parse a manifest's text safely, finding duplicate keys and explaining syntax errors.

    Parameters
    ----------
    path : pathlib.Path
        The manifest (named in every problem).
    text : str
        Its text.

    Returns
    -------
    Parsed
        The data (plain dicts, lists and scalars; for a duplicate key the last value) and one problem per
        duplicate key (severity ``error``, check ``yaml``, with the line and column of the second one).

    Raises
    ------
    ManifestError
        When the text is not YAML, uses aliases, nests too deeply or holds an integer too long to convert:
        one problem of the whole document, with ``file:line:col``, the offending line and a fix where
        the parser knows the place.
    """
    loader = None
    try:
        loader = _ManifestLoader(text)  # the reader refuses control characters already here
        root = loader.get_single_node()
        duplicates = _duplicates(path, text, root)
        marks, written = _marks(root)
        data = None if root is None else loader.construct_document(root)
    except _AliasError as exc:
        raise _refuse(
            path,
            f"line {exc.line}: YAML aliases ('*{safe_text(exc.anchor, 40)}') are not allowed in a manifest "
            "(they can expand a small file into a huge one).",
            "Write the value out in full.",
        ) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_problem(path, text, exc) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_problem(path, text, exc) from None
    except yaml.YAMLError as exc:  # any other parser failure: its first line, never the whole text
        first = safe_text(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 200)
        raise _refuse(path, f"not valid YAML: {first}", _DEFAULT_FIX) from None
    except RecursionError:
        raise _refuse(
            path, "not valid YAML: nested too deeply.", "A manifest is a flat mapping of a few levels."
        ) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise _refuse(
            path,
            f"not valid YAML: {safe_text(exc, 200)}",
            "Write numbers with at most a few digits (a manifest's numbers are small), or quote the value.",
        ) from None
    finally:
        if loader is not None:
            loader.dispose()
    return Parsed(data, tuple(duplicates), text, marks, written)
