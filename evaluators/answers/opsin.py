"""OPSIN on the host: IUPAC names to RDKit canonical SMILES, in batches, one Java process per batch.

OPSIN (Lowe et al., J. Chem. Inf. Model. 2011) is the name parser of track T3. It comes as the jar that
``py2opsin`` ships — ``opsin-cli-2.9.0-jar-with-dependencies.jar`` in py2opsin 1.2.0, i.e. **OPSIN 2.9.0**
(:data:`OPSIN_JAR`) — and needs a Java runtime (8 or newer; Debian: ``openjdk-17-jre-headless``). The
evaluation image has no Java, so this module runs on the host only, and ``py2opsin`` and RDKit are imported
inside the functions: importing this module needs neither.

Invariants: the output of :func:`names_to_smiles` is aligned with its input, item for item, whatever the
names hold; a name OPSIN cannot read is ``None``, never an error; nothing is written outside a private
temporary directory (py2opsin's default input file lands in the current directory).
Limits: a name is parsed only within the caps of :func:`name_problem` (characters, bracket depth,
multiplied copies); the JVM runs with a heap cap (:data:`OPSIN_HEAP`); a name OPSIN works on for more than
:data:`NAME_TIMEOUT_S`, or that exhausts the heap, gives ``None`` (OPSIN restarts after it); a structure of
more than :data:`MAX_ANSWER_ATOMS` atoms is not read; a chunk that takes more than :data:`BATCH_TIMEOUT_S`
fails as a whole (:class:`OpsinError`).
Side effects: one ``java`` process per chunk of :data:`DEFAULT_CHUNK_SIZE` names (one more after each name
OPSIN is stopped on).
"""

from __future__ import annotations

import importlib.util
import locale
import queue
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_ANSWER_ATOMS",
    "MAX_NAME_DEPTH",
    "MAX_NAME_EXPANSION",
    "MAX_NAME_LENGTH",
    "OPSIN_JAR",
    "OPSIN_VERSION",
    "OpsinError",
    "name_expansion",
    "name_problem",
    "names_to_smiles",
    "restore_locant_case",
    "smiles_problem",
]

#: The jar py2opsin 1.2.0 ships (and runs by default); py2opsin is pinned in leaderboard/requirements.lock.
OPSIN_JAR = "opsin-cli-2.9.0-jar-with-dependencies.jar"
OPSIN_VERSION = "2.9.0"
#: Names per Java process: bounds the input file, OPSIN's output held in memory and the JVM's heap.
DEFAULT_CHUNK_SIZE = 5000
#: Longer "names" (a runaway completion) are not parsed: the longest systematic name in PubChem's table
#: that ships with ``chemicals`` has 947 characters, and OPSIN's time grows with the length.
MAX_NAME_LENGTH = 2000
#: Brackets nested deeper are not parsed (the data's names nest at most 16 deep).
MAX_NAME_DEPTH = 24
#: Names whose multiplied brackets ask for more copies (:func:`name_expansion`) are not parsed: 3**7 took
#: OPSIN 1 s, 3**10 took 175 s and 3.4 GB; the data's names ask for at most 13.
MAX_NAME_EXPANSION = 1000
#: OPSIN's structure for one name is not read past this many atoms (the data's molecules have < 300), nor
#: a SMILES line past this many characters.
MAX_ANSWER_ATOMS = 1000
MAX_SMILES_CHARS = 20_000
#: The JVM's heap cap (``-Xmx``), the longest OPSIN may work on one name, the extra time its start may take,
#: and the longest a chunk of names may take (then the whole scoring fails).
OPSIN_HEAP = "1g"
NAME_TIMEOUT_S = 15.0
START_TIMEOUT_S = 30.0
BATCH_TIMEOUT_S = 900.0

_JAVA_HINT = (
    "OPSIN (IUPAC name parsing, track T3) needs a Java runtime (8 or newer) on the host: `java` is not on "
    "PATH. Install one, e.g. `apt-get install openjdk-17-jre-headless` on Debian/Ubuntu."
)


class OpsinError(RuntimeError):
    """Java is missing, or the OPSIN process failed for a whole batch (not for one bad name)."""


# Greek multiplying prefixes of bracketed substituents (IUPAC P-14.2.1: bis, tris, tetrakis, ...).
_KIS_VALUES = {"bis": 2, "tris": 3, "tetrakis": 4, "pentakis": 5, "hexakis": 6, "heptakis": 7, "octakis": 8,
               "nonakis": 9, "decakis": 10, "undecakis": 11, "dodecakis": 12}  # fmt: skip
_KIS = re.compile(r"(bis|tris|[a-z]*kis)$", re.IGNORECASE)
#: What an unknown ``…kis`` prefix counts for (``tridecakis``, ``icosakis``): more than any in the table.
_UNKNOWN_KIS = 100


def name_expansion(name: str) -> int:
    """Return how many copies of its innermost bracket a name asks for: the largest product of multipliers.

    ``tris(tris(trimethylsilyl)silyl)silane`` is 9: OPSIN builds the inner group 3 × 3 times. The product
    along nested brackets grows as ``multiplier ** depth`` while the name grows by a few characters a level,
    which is what makes a short name a denial of service (3**10 atoms from 125 characters).

    Examples
    --------
    >>> name_expansion("1,4-bis(bromanyl)-1,1,2,2,3,3,4,4-octakis(fluoranyl)butane")
    8
    >>> name_expansion("tris(tris(trimethylsilyl)silyl)silane")
    9
    """
    stack, best = [1], 1
    for i, ch in enumerate(name):
        if ch in "([{":
            match = _KIS.search(name[max(0, i - 20) : i])
            factor = _KIS_VALUES.get(match.group(1).lower(), _UNKNOWN_KIS) if match else 1
            stack.append(stack[-1] * factor)
            best = max(best, stack[-1])
        elif ch in ")]}" and len(stack) > 1:
            stack.pop()
    return best


def name_problem(name: object) -> str | None:
    """Say why ``name`` is not sent to OPSIN (the per-answer caps before parsing), or ``None`` if it is.

    Parameters
    ----------
    name : object
        A candidate name (already stripped).

    Returns
    -------
    str or None
        ``"not text"``, ``"empty"``, ``"longer than 2000 characters"``, ``"spans lines"``, ``"not encodable
        in the locale"``, ``"nests brackets more than 24 deep"`` or ``"multiplied brackets ask for more than
        1000 copies"`` (:func:`name_expansion`); ``None`` when the name goes to OPSIN.
    """
    if not isinstance(name, str):
        return "not text"
    if not name:
        return "empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"longer than {MAX_NAME_LENGTH} characters"
    # OPSIN reads its input line by line: a name spanning two lines would shift every later answer, so
    # any line break — including the Unicode ones — disqualifies.
    if len(name.splitlines()) != 1 or "\r" in name:
        return "spans lines"
    try:
        # The input file is written in the locale's encoding (as Java reads it).
        name.encode(locale.getpreferredencoding(False))
    except UnicodeEncodeError:
        return "not encodable in the locale"
    depth = deepest = 0
    for ch in name:
        depth = depth + 1 if ch in "([{" else max(0, depth - 1) if ch in ")]}" else depth
        deepest = max(deepest, depth)
    if deepest > MAX_NAME_DEPTH:
        return f"nests brackets more than {MAX_NAME_DEPTH} deep"
    if name_expansion(name) > MAX_NAME_EXPANSION:
        return f"multiplied brackets ask for more than {MAX_NAME_EXPANSION} copies"
    return None


_ATOM = re.compile(r"\[[^\]]*\]|Br|Cl|[BCNOPSFIbcnops*]")


def smiles_problem(line: str) -> str | None:
    """Say why OPSIN's SMILES for one name is not read (the cap on atoms after parsing), else ``None``."""
    if len(line) > MAX_SMILES_CHARS or len(_ATOM.findall(line)) > MAX_ANSWER_ATOMS:
        return f"more than {MAX_ANSWER_ATOMS} atoms"
    return None


def _java_command(path: Path) -> list[str]:
    # Found, not imported: importing py2opsin runs `java -version`.
    spec = importlib.util.find_spec("py2opsin")
    if spec is None or not spec.submodule_search_locations:
        raise OpsinError(f"py2opsin (which ships {OPSIN_JAR}) is not installed")
    jar = Path(next(iter(spec.submodule_search_locations))) / OPSIN_JAR
    # The heap cap and no parallel GC threads: one name can cost at most this much of the host.
    return ["java", f"-Xmx{OPSIN_HEAP}", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC",
            "-XX:ReservedCodeCacheSize=64m", "-XX:CompressedClassSpaceSize=64m", "-XX:MaxMetaspaceSize=128m",
            "-jar", str(jar), "-osmi", str(path)]  # fmt: skip


def _read_lines(stream: Any, lines: queue.Queue) -> None:
    """Put each output line (cut at :data:`MAX_SMILES_CHARS` + 1 bytes) on ``lines``, then ``None``."""
    encoding = locale.getpreferredencoding(False)
    while chunk := stream.readline(MAX_SMILES_CHARS + 1):
        while not chunk.endswith(b"\n") and (rest := stream.readline(64 * 1024)):
            chunk += b"" if len(chunk) > MAX_SMILES_CHARS else rest  # an endless line is not kept
            if rest.endswith(b"\n"):
                break
        lines.put(chunk.decode(encoding, errors="replace").rstrip("\r\n"))
    lines.put(None)


def _run_chunk(names: list[str], folder: Path, problems: dict[int, str]) -> list[str]:
    """Run OPSIN on ``names``; return one output line per name ("" when OPSIN failed on it).

    A name OPSIN is stuck on for :data:`NAME_TIMEOUT_S`, or that exhausts the heap, gives "" and its
    reason in ``problems`` (by position in ``names``); OPSIN starts again after it. The whole chunk may take
    :data:`BATCH_TIMEOUT_S`.
    """
    out: list[str] = []
    started = time.monotonic()
    while len(out) < len(names):
        path = folder / "names.txt"
        with open(path, "w", encoding=locale.getpreferredencoding(False)) as handle:
            handle.write("\n".join(names[len(out) :]) + "\n")
        first = len(out)
        try:
            proc = subprocess.Popen(_java_command(path), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)  # fmt: skip
        except OSError as exc:
            raise OpsinError(f"OPSIN ({OPSIN_JAR}) could not start: {exc!r}") from exc
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
        problem = ""
        try:
            while len(out) < len(names):
                left = BATCH_TIMEOUT_S - (time.monotonic() - started)
                if left <= 0:
                    raise OpsinError(
                        f"OPSIN took more than {BATCH_TIMEOUT_S:g} s for a batch of {len(names)} names"
                    )
                wait = min(left, NAME_TIMEOUT_S + (START_TIMEOUT_S if len(out) == first else 0))
                try:
                    line = lines.get(timeout=wait)
                except queue.Empty:
                    if time.monotonic() - started >= BATCH_TIMEOUT_S:  # the batch's time, not the name's
                        raise OpsinError(
                            f"OPSIN took more than {BATCH_TIMEOUT_S:g} s for a batch of {len(names)} names"
                        ) from None
                    problem = f"OPSIN took more than {NAME_TIMEOUT_S:g} s"
                    break
                if line is None or "Terminating due to java.lang.OutOfMemoryError" in line:
                    problem = f"OPSIN ran out of its {OPSIN_HEAP} heap" if line else "OPSIN stopped"
                    break
                out.append(line)
        finally:
            if problem == "OPSIN stopped":  # its output ended: let it exit (a crash or a short answer?)
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            proc.kill()
            proc.wait()
        if problem == "OPSIN stopped" and proc.returncode == 0:
            raise OpsinError(f"OPSIN returned {len(out)} lines for {len(names)} names; cannot align answers")
        if problem:
            problems[len(out)] = problem
            out.append("")
    return out


def names_to_smiles(
    names: Sequence[str | None],
    *,
    tmp_dir: str | Path | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    problems: dict[int, str] | None = None,
) -> list[str | None]:
    """Parse chemical names with OPSIN and return RDKit canonical (isomeric) SMILES, aligned with ``names``.

    Parameters
    ----------
    names : sequence of str or None
        Names, e.g. IUPAC names. Names are stripped; a name that fails :func:`name_problem` (``None``,
        empty, spanning lines, over :data:`MAX_NAME_LENGTH` characters, nested or multiplied past the caps,
        not encodable in the locale's encoding) gives ``None`` without running Java.
    tmp_dir : str or pathlib.Path, optional
        Where the private temporary directory for OPSIN's input file is made (default: the system's).
    chunk_size : int
        Names per Java process (memory bound); default :data:`DEFAULT_CHUNK_SIZE`.
    problems : dict, optional
        Filled with the position and reason of each non-empty name refused by a limit: a cap before
        parsing, OPSIN's time or heap for one name, more than :data:`MAX_ANSWER_ATOMS` atoms after parsing.

    Returns
    -------
    list of str or None
        For each name, RDKit's canonical isomeric SMILES of OPSIN's structure, or ``None`` if OPSIN cannot
        parse the name, RDKit cannot read OPSIN's SMILES, or a limit refused it.

    Raises
    ------
    OpsinError
        If ``java`` is not on PATH (the message names the Debian package ``openjdk-17-jre-headless``), a
        Java process fails as a whole, or a chunk takes more than :data:`BATCH_TIMEOUT_S`.

    Examples
    --------
    >>> names_to_smiles(["ethanol", "not a name", ""])  # doctest: +SKIP
    ['CCO', None, None]
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    problems = {} if problems is None else problems
    results: list[str | None] = [None] * len(names)
    todo = []
    for i, name in enumerate(names):
        clean = name.strip() if isinstance(name, str) else name
        problem = name_problem(clean)
        if problem is None:
            todo.append((i, clean))
        elif clean:  # an empty answer is no answer, not one a limit refused
            problems[i] = problem
    if not todo:
        return results
    if shutil.which("java") is None:
        raise OpsinError(_JAVA_HINT)
    from evaluators.notations.smiles import canonical_smiles

    with tempfile.TemporaryDirectory(prefix="chemrobust-opsin-", dir=tmp_dir) as folder:
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start : start + chunk_size]
            refused: dict[int, str] = {}
            lines = _run_chunk([name for _, name in chunk], Path(folder), refused)
            for position, ((index, _), line) in enumerate(zip(chunk, lines, strict=True)):
                line = line.strip()
                problem = refused.get(position) or (smiles_problem(line) if line else None)
                if problem:
                    problems[index] = problem
                results[index] = canonical_smiles(line) if line and not problem else None
    return results


# --------------------------------------------------------------------------------------------------------
# Restoring the case of lower-cased names (the `chemicals` package stores PubChem names lower-cased)

# Where a locant list may start: the name's start or after a separator. A letter or digit before it means
# the letters are part of a word ("amine-n-oxide" keeps its "n" only if preceded by a separator).
_START = r"(?<![^\s,(\[{\-])"
# Element locants: N, O, S, P and C (c-methyl…carbonimidoyl), optionally numbered and primed (N1, N',
# N2'', O6), in a comma list ended by "-" (n,n-dimethyl…). A letter before "]" or ":" is a fusion bond
# (thieno[3,4-c]thiophene) and stays lower case, as does a single letter in parentheses (stereo aside). Not
# when o-/m-/p- means ortho/meta/para before a retained name OPSIN knows (dibenzo-p-dioxin, o-xylene):
# OPSIN rejects "dibenzo-P-dioxin", and these are the only such names in the table.
_ORTHO_PARA_STEMS = (
    r"(?:dioxin|dioxan|dithiin|oxathiin|xylen|cresol|toluidin|tolu|tolyl|phenylen|benzoquinon|quinon|"
    r"terphenyl|cymen|menth|anisidin|phenetidin|carboran)"
)
_HETERO_LOCANT = re.compile(_START + r"(?!(?:[op]-" + _ORTHO_PARA_STEMS + r"))([cnosp])(\d*'*)(?=[,\-])")
# Stereodescriptors in parentheses: (2s), (3e), (2r,3s), (4ar,8as), (e), (1r*,2s*), (rs), (2rs,3sr).
_LOCANT = r"(?:\d+'*[a-z]??'*|[nosp]\d*'*)?"
_DESCRIPTOR = r"(?:rs|sr|r|s|e|z)\*?"
_STEREO_ITEM = re.compile(f"({_LOCANT})({_DESCRIPTOR})")
_STEREO_GROUP = re.compile(f"\\(({_LOCANT}{_DESCRIPTOR}(?:,{_LOCANT}{_DESCRIPTOR})*)\\)")
# Indicated or added hydrogen: 1h-indole, 9h-purin, 4ah-, indol-2(3h)-one, 1h,3h-.
_HYDROGEN = re.compile(r"(?<![a-z])(\d+[a-z]?'*)h(?=[,\-)\]]|$)")


def _stereo(match: re.Match[str]) -> str:
    items = []
    for item in match.group(1).split(","):
        # A locant's own letter (4a, 8a) stays lower case: only the descriptor after it is raised.
        parts = _STEREO_ITEM.fullmatch(item)
        if parts is None:  # pragma: no cover - the group pattern admits only items this matches
            return match.group(0)
        locant = parts.group(1)
        if locant[:1].isalpha():  # a heteroatom locant: (ne) is (NE), the oxime's N
            locant = locant.upper()
        items.append(locant + parts.group(2).upper())
    return "(" + ",".join(items) + ")"


def restore_locant_case(name: str) -> str:
    """Restore the upper case OPSIN needs in a lower-cased systematic name.

    The ``chemicals`` package lower-cases PubChem's names, and OPSIN reads heteroatom locants,
    stereodescriptors and indicated hydrogen case-sensitively. This raises:

    * heteroatom locants ``n``/``o``/``s``/``p`` (with numbers and primes: ``n1``, ``n'``) before ``-``,
      ``,``, ``)`` or ``]``: ``n,n-dimethyl…`` → ``N,N-dimethyl…``;
    * stereodescriptors R/S/E/Z (also ``RS``, ``SR``, ``R*``) in a parenthesised list: ``(2s,3r)`` →
      ``(2S,3R)``, ``(4ar)`` → ``(4aR)``, ``(e)`` → ``(E)``;
    * indicated and added hydrogen: ``1h-indole`` → ``1H-indole``, ``indol-2(3h)-one`` → ``indol-2(3H)-one``.

    Measured on the 49 837 single-component organic entries of the ``chemicals`` PubChem table (3-50 heavy
    atoms; OPSIN 2.9.0): OPSIN reads 88.8 % of the lower-cased names back to the recorded structure, 99.2 %
    after raising element locants alone, 99.3 % with all three rules — OPSIN already reads lower-case
    R/S/E/Z and indicated hydrogen, except for an element locant inside the parentheses (``(ne)``); those
    two rules give names in the standard form. The rest OPSIN cannot read (fusion names with hydro
    prefixes, porphyrins) or reads as a different structure (mostly names that do not fit the recorded
    structure).

    Anything else stays as it is (OPSIN reads the rest of a name case-insensitively). A single ``o-``,
    ``p-`` or ``s-`` at a word start could also be ortho/para/sec in a trivial name; PubChem's systematic
    names do not use those, and the build of ``pubchem-names`` checks every restored name against its
    structure anyway.

    Parameters
    ----------
    name : str
        A lower-cased name.

    Returns
    -------
    str
        The name with those parts upper-cased.

    Examples
    --------
    >>> restore_locant_case("n,n-dimethylformamide")
    'N,N-dimethylformamide'
    >>> restore_locant_case("(2s)-2-aminopropanoic acid")
    '(2S)-2-aminopropanoic acid'
    >>> restore_locant_case("(4ar,8as)-1h-indole")
    '(4aR,8aS)-1H-indole'
    >>> restore_locant_case("1,3-dihydroindol-2(3h)-one")
    '1,3-dihydroindol-2(3H)-one'
    """
    name = _STEREO_GROUP.sub(_stereo, name)
    name = _HETERO_LOCANT.sub(lambda m: m.group(1).upper() + m.group(2), name)
    return _HYDROGEN.sub(lambda m: m.group(1) + "H", name)
