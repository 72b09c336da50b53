"""OPSIN on the host: IUPAC names to RDKit canonical SMILES, in batches, one Java process per batch.

OPSIN (Lowe et al., J. Chem. Inf. Model. 2011) is the name parser of track T3. It comes as the jar that
``py2opsin`` ships — ``opsin-cli-2.9.0-jar-with-dependencies.jar`` in py2opsin 1.2.0, i.e. **OPSIN 2.9.0**
(:data:`OPSIN_JAR`) — and needs a Java runtime (8 or newer; Debian: ``openjdk-17-jre-headless``). The
evaluation image has no Java, so this module runs on the host only, and ``py2opsin`` and RDKit are imported
inside the functions: importing this module needs neither.

Invariants: the output of :func:`names_to_smiles` is aligned with its input, item for item, whatever the
names hold; a name OPSIN cannot read is ``None``, never an error; nothing is written outside a private
temporary directory (py2opsin's default input file lands in the current directory).
Side effects: one ``java`` process per chunk of :data:`DEFAULT_CHUNK_SIZE` names.
"""

from __future__ import annotations

import locale
import re
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_NAME_LENGTH",
    "OPSIN_JAR",
    "OPSIN_VERSION",
    "OpsinError",
    "names_to_smiles",
    "restore_locant_case",
]

#: The jar py2opsin 1.2.0 ships (and runs by default); py2opsin is pinned in leaderboard/requirements.lock.
OPSIN_JAR = "opsin-cli-2.9.0-jar-with-dependencies.jar"
OPSIN_VERSION = "2.9.0"
#: Names per Java process: bounds the input file, OPSIN's output held in memory and the JVM's heap.
DEFAULT_CHUNK_SIZE = 5000
#: Longer "names" (a runaway completion) are not parsed: the longest systematic name in PubChem's table
#: that ships with ``chemicals`` has 947 characters, and OPSIN's time grows with the length.
MAX_NAME_LENGTH = 2000

_JAVA_HINT = (
    "OPSIN (IUPAC name parsing, track T3) needs a Java runtime (8 or newer) on the host: `java` is not on "
    "PATH. Install one, e.g. `apt-get install openjdk-17-jre-headless` on Debian/Ubuntu."
)


class OpsinError(RuntimeError):
    """Java is missing, or the OPSIN process failed for a whole batch (not for one bad name)."""


def _parsable(name: object) -> str | None:
    """Return the stripped name if it can go to OPSIN as one input line, else ``None``."""
    if not isinstance(name, str):
        return None
    name = name.strip()
    # OPSIN reads its input line by line (and py2opsin splits its output on "\n"): a name spanning two
    # lines would shift every later answer, so any line break — including the Unicode ones — disqualifies.
    if not name or len(name) > MAX_NAME_LENGTH or len(name.splitlines()) != 1 or "\r" in name:
        return None
    try:
        # py2opsin writes its input file in the locale's encoding; a name it cannot encode would abort the
        # whole batch with UnicodeEncodeError.
        name.encode(locale.getpreferredencoding(False))
    except UnicodeEncodeError:
        return None
    return name


def _run_chunk(names: list[str], folder: Path) -> list[str]:
    """Run OPSIN once on ``names``; return one output line per name ("" when OPSIN failed on it)."""
    with warnings.catch_warnings():
        # py2opsin warns at import (its own `java -version` probe) and for every name OPSIN rejects; we
        # report rejections as None instead.
        warnings.simplefilter("ignore", RuntimeWarning)
        from py2opsin import py2opsin

        try:
            out = py2opsin(names, output_format="SMILES", tmp_fpath=str(folder / "names.txt"))
        except (OSError, TypeError, UnicodeError, AttributeError) as exc:
            # py2opsin's own error path ("…" + exception) raises TypeError when Java exits non-zero, and it
            # decodes with sys.stdout's encoding (AttributeError where stdout was replaced without one).
            raise OpsinError(f"OPSIN ({OPSIN_JAR}) failed on a batch of {len(names)} names: {exc!r}") from exc
    if out is False or not isinstance(out, list) or len(out) != len(names):
        got = len(out) if isinstance(out, list) else out
        raise OpsinError(f"OPSIN returned {got!r} lines for {len(names)} names; cannot align the answers")
    return out


def names_to_smiles(
    names: Sequence[str | None], *, tmp_dir: str | Path | None = None, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> list[str | None]:
    """Parse chemical names with OPSIN and return RDKit canonical (isomeric) SMILES, aligned with ``names``.

    Parameters
    ----------
    names : sequence of str or None
        Names, e.g. IUPAC names. Names are stripped; ``None``, empty or whitespace-only names, names that
        span lines, names over :data:`MAX_NAME_LENGTH` characters or not encodable in the locale's
        encoding give ``None`` without running Java.
    tmp_dir : str or pathlib.Path, optional
        Where the private temporary directory for OPSIN's input file is made (default: the system's).
    chunk_size : int
        Names per Java process (memory bound); default :data:`DEFAULT_CHUNK_SIZE`.

    Returns
    -------
    list of str or None
        For each name, RDKit's canonical isomeric SMILES of OPSIN's structure, or ``None`` if OPSIN cannot
        parse the name or RDKit cannot read OPSIN's SMILES.

    Raises
    ------
    OpsinError
        If ``java`` is not on PATH (the message names the Debian package ``openjdk-17-jre-headless``), or a
        Java process fails as a whole.

    Examples
    --------
    >>> names_to_smiles(["ethanol", "not a name", ""])  # doctest: +SKIP
    ['CCO', None, None]
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    results: list[str | None] = [None] * len(names)
    todo = [(i, clean) for i, name in enumerate(names) if (clean := _parsable(name)) is not None]
    if not todo:
        return results
    if shutil.which("java") is None:
        raise OpsinError(_JAVA_HINT)
    from evaluators.notations.smiles import canonical_smiles

    with tempfile.TemporaryDirectory(prefix="chemrobust-opsin-", dir=tmp_dir) as folder:
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start : start + chunk_size]
            lines = _run_chunk([name for _, name in chunk], Path(folder))
            for (index, _), line in zip(chunk, lines, strict=True):
                line = line.strip()
                results[index] = canonical_smiles(line) if line else None
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
