r"""Indentation mistakes in a manifest's YAML, explained where the author made them.

PyYAML reports where its parser stopped, which for two common mistakes is not where the author erred:

- a **tab**: PyYAML says "found character '\t' that cannot start any token", which names neither the
  tab's purpose nor the cure. :func:`tab_diagnosis` says that the line holds a tab (quoted as ``\t``,
  :func:`leaderboard.intake.problems.excerpt`), whether it indents the line, the other lines indented
  with tabs (the parser stops at the first), and that the cure is spaces;
- a **dedented line**: a key moved left out of its mapping (``revision:`` at column 1 under ``model:``)
  closes that mapping, and the parser only stops at the *next* line, still indented, which it reads as a
  continuation of the dedented key's value ("mapping values are not allowed here") or as a stray block.
  :func:`dedent_diagnosis` points at the dedented line, says how far its neighbours are indented and
  where the parser stopped.

Both read only the text (the parse failed): the field a line was meant to be is inferred from the
``key:`` lines above it, the way a reader of the file would.

Invariants
----------
- Every text a :class:`Diagnosis` holds quotes the manifest only through :func:`safe_text` (keys) or
  line numbers: it is safe to print.
- A diagnosis is only given when the lines around say which line is wrong; otherwise ``None``, and the
  caller keeps PyYAML's location with its generic fix.

Side effects: none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from leaderboard.intake.problems import safe_text

__all__ = ["Diagnosis", "dedent_diagnosis", "tab_diagnosis"]

#: A line (comment removed) that opens a block: ``key:``, a block scalar ``key: |`` / ``key: >-``, or a
#: bare ``-``. Its children are indented deeper, so a deeper next line is no mistake after it.
_OPENS_BLOCK = re.compile(r"(?::|:[ \t]+[|>][-+0-9]*|^[ \t]*-)[ \t]*$")
_COMMENT = re.compile(r"(?:^|[ \t])#.*$")  # a '#' after a blank starts a comment (quotes aside)
#: The plain key at the start of a block-mapping line (``  revision: x`` → ``revision``; ``- id: x`` → id).
#: Greedy up to the first ':' (blanks before it stripped in :func:`_key`): a lazy key followed by ``[ \t]*:``
#: backtracked quadratically on a long line without a colon (8 s for one 64 KiB line, a manifest's limit).
_KEY = re.compile(r"^[ \t]*(?:-[ \t]+)?([^\s#:'\"{\[][^:#]*):(?:[ \t]|$)")
_KEY_LIMIT = 60  # characters of a key quoted in a message
_FIELD_LIMIT = 200  # characters of a Problem's field (leaderboard.intake.problems)
_LINES_LISTED = 8  # other tab-indented lines named before "and N more"


@dataclass(frozen=True)
class Diagnosis:
    """What an indentation mistake is, where (1-based line and column), and how to fix it.

    ``field`` is the dotted path the line was meant to hold (``model.revision``), empty when it cannot
    be told from the text.
    """

    line: int
    column: int
    field: str
    message: str
    fix: str


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    """Whether a line holds YAML (not blank, not only a comment)."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _opens_block(line: str) -> bool:
    return bool(_OPENS_BLOCK.search(_COMMENT.sub("", line)))


def _previous(lines: list[str], index: int) -> int | None:
    """Return the index of the nearest content line before ``index``, or ``None``."""
    return next((i for i in range(index - 1, -1, -1) if _is_content(lines[i])), None)


def _key(line: str) -> str | None:
    match = _KEY.match(line)
    return match.group(1).rstrip(" \t") if match else None


def _field(lines: list[str], index: int, indent: int) -> str:
    """Return the dotted path of the key on ``lines[index]`` were it indented by ``indent`` spaces.

    The parents are the ``key:`` lines above it that open a block at a smaller indentation, the nearest
    first, as a reader would follow them up the file; empty when the line holds no plain key.
    """
    key = _key(lines[index])
    if key is None:
        return ""
    path, level = [key], indent
    for i in range(index - 1, -1, -1):
        line = lines[i]
        if level == 0:
            break
        if not _is_content(line) or "\t" in line[: len(line) - len(line.lstrip())] or _indent(line) >= level:
            continue
        parent = _key(line)
        if parent is None or not _opens_block(line):
            return ""  # a list item or a scalar above: not a path we can name with confidence
        path.insert(0, parent)
        level = _indent(line)
    field = ".".join(safe_text(p, _KEY_LIMIT) for p in path)
    # A path longer than a Problem keeps would be clipped there and no longer match the message's.
    return field if len(field) <= _FIELD_LIMIT else ""


def _named(field: str) -> str:
    return f" ('{field}')" if field else ""


def _numbers(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:_LINES_LISTED])
    more = len(lines) - _LINES_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def tab_diagnosis(text: str, *, line: int, column: int) -> Diagnosis | None:
    r"""Explain a tab where PyYAML stopped (``line``/``column``, 1-based); ``None`` if no tab is there.

    Parameters
    ----------
    text : str
        The manifest.
    line, column : int
        Where the parser stopped, 1-based.

    Returns
    -------
    Diagnosis or None
        A tab in the line's indentation: "indented with a tab", the field the line was meant to be and
        the other lines indented so, to be indented with spaces; a tab after the indentation: "holds a
        tab", to be replaced by a space or quoted; ``None`` when the character there is not a tab.

    Examples
    --------
    >>> d = tab_diagnosis("model:\n\tid: x\n", line=2, column=1)
    >>> d.field, d.line, d.column
    ('model.id', 2, 1)
    >>> print(d.message)
    line 2 ('model.id') is indented with a tab (shown as \t); YAML allows only spaces for indentation.
    """
    lines = text.splitlines()
    raw = lines[line - 1] if 0 < line <= len(lines) else ""
    if raw[column - 1 : column] != "\t":
        return None
    index = line - 1
    prev = _previous(lines, index)
    if raw.strip(" \t") == "":  # a blank line that is not quite blank
        return Diagnosis(
            line,
            column,
            "",
            f"line {line} is blank but for a tab (shown as \\t); YAML does not accept a tab there.",
            "Delete the tab (and any spaces) on that line: a blank line holds nothing.",
        )
    if raw[: column - 1].strip(" \t") == "":  # the tab is part of the indentation
        # Meant as the first child of a 'key:' line above, or as a sibling of the line above.
        depth = 0 if prev is None else _indent(lines[prev]) + (2 if _opens_block(lines[prev]) else 0)
        field = _field(lines, index, depth)
        others = [
            i + 1
            for i, other in enumerate(lines)
            if i != index and "\t" in other[: len(other) - len(other.lstrip(" \t"))] and _is_content(other)
        ]
        also = (
            f" Lines {_numbers(others)} are indented with tabs too (YAML stops at the first)."
            if others
            else ""
        )
        return Diagnosis(
            line,
            column,
            field,
            f"line {line}{_named(field)} is indented with a tab (shown as \\t); YAML allows only spaces for "
            f"indentation.{also}",
            "Indent with spaces only: "
            + (
                f"start line {line} with {depth} spaces and no tab, like the lines around it"
                if depth
                else f"remove the tab from the start of line {line} (a top-level key starts at column 1)"
            )
            + ", and every line indented with a tab likewise; set your editor to insert spaces for the Tab "
            "key.",
        )
    field = _field(lines, index, _indent(raw))
    return Diagnosis(
        line,
        column,
        field,
        f"line {line}{_named(field)} holds a tab (shown as \\t) at column {column}; YAML does not accept a "
        "tab there.",
        'Replace the tab with a space, or put the value in quotes ("...") if the tab belongs to it.',
    )


def dedent_diagnosis(text: str, *, line: int) -> Diagnosis | None:
    r"""Find the dedented line that made the parser stop at ``line`` (1-based), if that is what happened.

    The pattern: the line above ``line`` (``prev``, comments and blank lines skipped) is less indented
    than ``line`` and holds a value of its own, so ``line`` cannot be its child; and the line above
    ``prev`` shows that ``prev`` belonged at ``line``'s indentation — it is itself indented that deep
    or more (``prev`` broke a run of siblings), or it opens a block that ``prev`` failed to enter or
    entered less deep than ``line`` and the line after it. Otherwise ``line`` is the one indented too
    deep and PyYAML's location stands.

    Parameters
    ----------
    text : str
        The manifest.
    line : int
        Where the parser stopped, 1-based.

    Returns
    -------
    Diagnosis or None
        The dedented line (column: its first character), the field it was meant to be, and the
        indentation to give it; ``None`` when the pattern does not hold.

    Examples
    --------
    >>> d = dedent_diagnosis("model:\n  id: a\nrevision: b\n  arch: c\n", line=4)
    >>> d.line, d.field
    (3, 'model.revision')
    >>> print(d.fix)
    Indent line 3 by 2 spaces, like line 2 and line 4: the keys of one mapping line up.
    """
    lines = text.splitlines()
    index = line - 1
    if not 0 < line <= len(lines) or not _is_content(lines[index]) or "\t" in lines[index].split("#")[0]:
        return None
    prev = _previous(lines, index)
    if prev is None or _opens_block(lines[prev]) or "\t" in lines[prev]:
        return None
    key = _key(lines[prev])
    if key is None or lines[prev].lstrip().startswith("-"):
        return None  # not a 'key: value' line: a list item's indentation follows other rules
    code = _COMMENT.sub("", lines[prev])
    if code.count("[") != code.count("]") or code.count("{") != code.count("}"):
        return None  # a flow collection that goes on below: its next lines may be indented at will
    depth, moved = _indent(lines[index]), _indent(lines[prev])
    before = _previous(lines, prev)
    if moved >= depth or before is None or "\t" in lines[before]:
        return None
    above = _indent(lines[before])
    after = next((i for i in range(index + 1, len(lines)) if _is_content(lines[i])), None)
    # The first key of the block 'before' opens: not entered at all, or entered less deep than the keys
    # after it, which agree with each other ('line' and the next line) against it.
    first_child = (
        _opens_block(lines[before])
        and above < depth
        and (moved <= above or (after is not None and _indent(lines[after]) == depth))
    )
    if above < depth and not first_child:
        return None  # the line above is as shallow: 'line' is the one indented too deep
    field = _field(lines, prev, depth)
    what = _named(field or safe_text(key, _KEY_LIMIT))
    parent = f" ('{field.rsplit('.', 1)[0]}')" if "." in field else ""
    like = (
        f"as the first key under line {before + 1}, like line {line}"
        if first_child
        else f"like line {before + 1} and line {line}"
        if above == depth
        else f"like line {line}"
    )
    return Diagnosis(
        prev + 1,
        moved + 1,
        field,
        f"line {prev + 1}{what} is indented by {moved} space{'s' * (moved != 1)} but line {line} after it "
        f"by {depth}, in the same mapping{parent}: YAML only stopped at line {line}, which no longer fits "
        "there.",
        f"Indent line {prev + 1} by {depth} spaces, {like}: the keys of one mapping line up.",
    )
