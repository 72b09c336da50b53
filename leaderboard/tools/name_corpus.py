"""Training corpus of the generative (seq2seq) reference models: PubChem names that OPSIN reads back.

Source: the PubChem identifiers table that ships with the ``chemicals`` package (71 347 compounds; see
:mod:`leaderboard.data.pubchem_names`). Every row, in CID order, goes through the rules of the embedded
``pubchem-names`` set (:func:`leaderboard.data.pubchem_names.screen_rows`), then one more; the first rule a
row fails is its rejection reason in the report:

1. a systematic name is present;
2. a single component;
3. RDKit parses the SMILES;
4. organic: carbon, and only H, B, C, N, O, F, P, S, Cl, Br, I;
5. no isotope labels, no radicals;
6. 3 to 50 heavy atoms;
7. OPSIN parses the name restored to its locant case to the same canonical isomeric SMILES (stereo both
   ways), so every kept name is a correct name of its structure;
8. not a duplicate of a structure kept from a lower CID;
9. not a molecule of any evaluation set (:data:`IN_EVALUATION`). The sets are every registered data set
   (:data:`evaluators.datasets.specs.DATASETS`, all tracks: AMORE, consistency, prompt robustness,
   identity-blinded), so a set registered later is excluded without a code change. Their molecules are the
   SMILES of every field of every record (the record's molecule, reactants and product, edit-pair source and
   target), each whole and each of its ``.``-separated components (mixtures, salts, reactant lists). A row is
   removed when its canonical isomeric SMILES, or its canonical SMILES without stereo (so stereoisomers of
   an evaluation molecule go too), equals one of theirs, or when its name, case and spacing aside, is one
   of the sets' IUPAC names (or a ``.``/``;``-separated part of one): a model must not have seen the
   question's text either. A row may match several sets; ``excluded`` counts it in each.

The result (:class:`NameCorpus`): the kept rows ``(cid, canonical isomeric SMILES, restored name)`` sorted by
their line ``smiles<TAB>name``, and the corpus sha256 over those sorted lines
(:func:`name_corpus_sha256`, one line each, newline-terminated), which a model records.

Determinism: no randomness and no times. The corpus depends only on the table (its sha256), the rules
(:data:`RULES_VERSION`), the evaluation sets' files (their sha256s), the RDKit and OPSIN versions and
``limit`` — together the cache key. The result is cached in ``<state>/name-corpus/<key>/`` (``names.csv`` and
``report.json``); a later build with the same key reads it back, after checking the CSV against the sha256
the report recorded, and computes nothing else.

An evaluation set that cannot be had stops the build with
:class:`~leaderboard.tools.training_config.TrainingError` (never a corpus that may hold its molecules).
Side effects: builds/caches the evaluation sets under ``<state>/data``, writes the cache folder, runs Java
(OPSIN), silences RDKit's log.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import io
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from evaluators.datasets.text import split_components
from evaluators.notations.smiles import canonical_smiles
from leaderboard.data.pubchem_names import (
    HEAVY_ATOMS,
    ORGANIC_ELEMENTS,
    PUBCHEM_TABLE,
    REASONS,
    read_table,
    screen_rows,
    write_atomic,
)
from leaderboard.tools.corpus import corpus_sha256, prepare_evaluation_sets
from leaderboard.tools.training_config import TrainingError

__all__ = [
    "FULL_BUILD",
    "IN_EVALUATION",
    "RULES_VERSION",
    "EvaluationIndex",
    "NameCorpus",
    "NameRow",
    "build_name_corpus",
    "evaluation_index",
    "evaluation_set_names",
    "name_corpus_sha256",
]

#: Bump when a rule changes (here or in ``leaderboard.data.pubchem_names``): it is part of the cache key.
RULES_VERSION = "1"
#: Rejection reason of rule 9.
IN_EVALUATION = "in an evaluation set"
#: The full build as recorded (chemicals 1.5.2, RDKit 2026.09.1, OPSIN 2.9.0, rules version 1, the nine
#: evaluation sets registered today, edit-pairs with its BACE pairs): 71 347 rows examined, 46 770 kept,
#: 2701 removed as evaluation molecules. :func:`main` says whether a build reproduces it; the cache key,
#: not this, decides reuse.
FULL_BUILD = {"kept": 46770, "sha256": "14b9571b8651f0a25c8ee07a77877e2309d811de05f234b70c947711b2b8ceb6"}
CACHE_FOLDER = "name-corpus"
CSV_COLUMNS = ("cid", "smiles", "name")
# Rows per OPSIN process: one Java start per 5000 names (OPSIN's own chunk size), few starts over 71 k rows.
_BLOCK = 5000
# How a row matched an evaluation set, strongest first (the report counts each excluded row once here).
_MATCHES = ("same structure", "same structure without stereo", "same name")


class NameRow(NamedTuple):
    """One kept compound."""

    #: PubChem CID.
    cid: int
    #: RDKit canonical isomeric SMILES.
    smiles: str
    #: The systematic name with its locant case restored (OPSIN reads it back to ``smiles``).
    name: str


@dataclass(frozen=True, slots=True)
class NameCorpus:
    """The name corpus and how it was obtained.

    Attributes
    ----------
    rows : list of NameRow
        Kept compounds, sorted by their line ``smiles<TAB>name``.
    sha256 : str
        :func:`name_corpus_sha256` of the rows.
    rejected : dict of str to int
        Rows rejected per reason (:data:`leaderboard.data.pubchem_names.REASONS`, then :data:`IN_EVALUATION`).
    excluded : dict of str to int
        Rows removed per evaluation set (a row matching several sets counts in each).
    report : dict
        Everything above plus the cache key's inputs, versions and per-set molecule counts (``report.json``).
    cached : bool
        Whether this result was read from the cache.
    """

    rows: list[NameRow]
    sha256: str
    rejected: dict[str, int]
    excluded: dict[str, int]
    report: dict[str, Any] = field(default_factory=dict)
    cached: bool = False

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """``(smiles, name)`` of every row, in corpus order."""
        return [(row.smiles, row.name) for row in self.rows]


def name_corpus_sha256(pairs: Iterable[tuple[str, str]]) -> str:
    """sha256 of a name corpus: over its lines ``smiles<TAB>name``, sorted, one per line.

    Examples
    --------
    >>> name_corpus_sha256([("CCO", "ethanol"), ("C", "methane")]) == name_corpus_sha256(
    ...     [("C", "methane"), ("CCO", "ethanol")])
    True
    >>> name_corpus_sha256([("CCO", "ethanol")]) == name_corpus_sha256([("CCO", "Ethanol")])
    False
    """
    # The same digest as the SMILES corpus, over lines that carry the name too: neither field holds a tab
    # or a line break (the table is tab-separated, one compound a line).
    return corpus_sha256([f"{smiles}\t{name}" for smiles, name in pairs])


def evaluation_set_names() -> list[str]:
    """Return the data sets no corpus molecule may come from, sorted: every set a model is asked about.

    Left out: sets that serve only the downstream probes (T2, the MoleculeNet files). There a probe is
    fitted on the set's own training split over a model's frozen embeddings; no model is asked about those
    molecules, and excluding them would change the recorded corpus (:data:`FULL_BUILD`) the chem-t5
    references were trained on.
    """
    from evaluators.datasets import DATASETS

    return [name for name in DATASETS.names() if set(DATASETS.get(name).tracks) - {"downstream"}]


def _stereo_free(mol) -> str:
    """Return the canonical SMILES of ``mol`` without stereo (isotopes go too; the corpus has none)."""
    from rdkit import Chem

    # Written without stereo and read again, so the key does not depend on how RDKit ranks stereoisomers.
    return canonical_smiles(Chem.MolToSmiles(mol, isomericSmiles=False)) or ""


def _structure_keys(smiles: str) -> tuple[set[str], set[str]] | None:
    """Return the canonical isomeric and stereo-free SMILES of a molecule and of each of its components.

    ``None`` when RDKit cannot read ``smiles``.
    """
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles) if smiles else None
    if mol is None or mol.GetNumAtoms() == 0:
        return None
    whole = Chem.MolToSmiles(mol)
    exact, flat = {whole}, {_stereo_free(mol)}
    if "." in whole:
        for fragment in Chem.GetMolFrags(mol, asMols=True):
            exact.add(Chem.MolToSmiles(fragment))
            flat.add(_stereo_free(fragment))
    return exact, flat


def _name_key(name: str) -> str:
    """Return ``name`` for a case- and spacing-blind comparison (the table's names are lower-cased)."""
    return " ".join(name.split()).casefold()


def _record_names(record: dict[str, str]) -> Iterator[str]:
    """Yield a record's IUPAC names, whole and split into components (reactant lists, ``;`` mixtures)."""
    for key, value in record.items():
        if (key == "iupac" or key.endswith("_iupac")) and value.strip():
            yield value
            for part in split_components(value):
                yield from (piece for piece in part.split(";") if piece.strip())


def _record_smiles(record: dict[str, str]) -> Iterator[str]:
    """Yield every SMILES field of a record (``smiles``, ``reactants_smiles``, ``source_smiles`` …)."""
    for key, value in record.items():
        if (key == "smiles" or key.endswith("_smiles")) and value.strip():
            yield value.strip()


@dataclass
class EvaluationIndex:
    """Keys of the evaluation molecules, per set."""

    exact: dict[str, set[str]] = field(default_factory=dict)
    flat: dict[str, set[str]] = field(default_factory=dict)
    names: dict[str, set[str]] = field(default_factory=dict)
    stats: dict[str, dict[str, int]] = field(default_factory=dict)

    def match(self, smiles: str, name: str) -> tuple[list[str], str | None]:
        """Return the sets a kept row belongs to and the strongest way it matched (``None``: no set)."""
        from rdkit import Chem

        flat = _stereo_free(Chem.MolFromSmiles(smiles))
        name = _name_key(name)
        hits, how = [], None
        for set_name in sorted(self.exact):
            tests = (
                smiles in self.exact[set_name],
                flat in self.flat[set_name],
                name in self.names[set_name],
            )
            if any(tests):
                hits.append(set_name)
                strongest = _MATCHES[tests.index(True)]
                how = strongest if how is None else min(how, strongest, key=_MATCHES.index)
        return hits, how


def evaluation_index(
    state_dir: Path, *, mirror: Path | None = None, roots: dict[str, Path] | None = None
) -> EvaluationIndex:
    """Return the structure and name keys of every evaluation set (:func:`evaluation_set_names`).

    Any corpus a reference model is trained on leaves out what :meth:`EvaluationIndex.match` finds.
    ``roots``: the sets already prepared (:func:`~leaderboard.tools.corpus.prepare_evaluation_sets`), so a
    caller that reads them too does not prepare them twice.

    Raises
    ------
    TrainingError
        If a set cannot be obtained or read.
    """
    if roots is None:
        roots = prepare_evaluation_sets(state_dir, evaluation_set_names(), mirror=mirror)
    return _evaluation_index(roots)


def _evaluation_index(roots: dict[str, Path]) -> EvaluationIndex:
    """Read every evaluation set's records and collect their structure and name keys."""
    from evaluators.datasets import load_records

    index = EvaluationIndex()
    for set_name, root in sorted(roots.items()):
        try:
            records = load_records(set_name, root)
        except (FileNotFoundError, ValueError) as exc:
            raise TrainingError(
                f"evaluation set {set_name!r} cannot be read ({exc}); the name corpus must exclude its "
                "molecules, so the build stops here"
            ) from None
        exact, flat, names = set(), set(), set()
        smiles_fields = unparsable = 0
        for record in records:
            for smiles in _record_smiles(record):
                smiles_fields += 1
                # Reactant lists are '.'-joined: RDKit reads them as one disconnected molecule, and its
                # components are the reactants.
                keys = _structure_keys(smiles)
                if keys is None:
                    unparsable += 1  # reported: such a molecule can only be matched by name
                    continue
                exact |= keys[0]
                flat |= keys[1]
            names.update(_name_key(name) for name in _record_names(record))
        index.exact[set_name], index.flat[set_name], index.names[set_name] = exact, flat, names
        index.stats[set_name] = {
            "records": len(records),
            "smiles_fields": smiles_fields,
            "unparsable_smiles": unparsable,
            "structures": len(exact),
            "names": len(names),
        }
    return index


def _versions() -> dict[str, str]:
    from rdkit import __version__ as rdkit_version

    from evaluators.answers.opsin import OPSIN_VERSION

    return {
        "chemicals": importlib.metadata.version("chemicals"),
        "opsin": OPSIN_VERSION,
        "py2opsin": importlib.metadata.version("py2opsin"),
        "rdkit": rdkit_version,
    }


def _write(folder: Path, rows: list[NameRow], report: dict[str, Any]) -> None:
    """Write ``names.csv``, then ``report.json`` with the CSV's sha256: the report marks a complete entry."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(rows)
    data = buffer.getvalue().encode("utf-8")
    write_atomic(folder / "names.csv", data)
    report["csv_sha256"] = hashlib.sha256(data).hexdigest()
    text = json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(folder / "report.json", text.encode("utf-8"))


def _load(folder: Path, key: str, log: Callable[[str], None]) -> NameCorpus | None:
    """Return the cached corpus for ``key``, or ``None`` when there is none or it does not check out."""
    report_path, csv_path = folder / "report.json", folder / "names.csv"
    if not (report_path.is_file() and csv_path.is_file()):
        return None
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
        data = csv_path.read_bytes()
        if report.get("key") != key or hashlib.sha256(data).hexdigest() != report.get("csv_sha256"):
            raise ValueError("the CSV does not match the sha256 its report recorded")
        reader = csv.reader(io.StringIO(data.decode("utf-8")))
        if tuple(next(reader)) != CSV_COLUMNS:
            raise ValueError(f"columns are not {CSV_COLUMNS}")
        rows = [NameRow(int(cid), smiles, name) for cid, smiles, name in reader]
        if name_corpus_sha256((row.smiles, row.name) for row in rows) != report.get("sha256"):
            raise ValueError("the rows do not give the recorded corpus sha256")
    except (OSError, ValueError, UnicodeDecodeError, StopIteration) as exc:
        # A damaged or foreign entry is rebuilt, never trusted.
        log(f"name corpus: ignoring the cached copy in {folder} ({exc}); building again")
        return None
    return NameCorpus(rows, report["sha256"], report["rejected"], report["excluded"], report, cached=True)


def build_name_corpus(
    state_dir: Path,
    *,
    limit: int | None = None,
    mirror: Path | None = None,
    log: Callable[[str], None] = print,
) -> NameCorpus:
    """Build (or read from the cache) the name corpus by the rules of the module docstring.

    Parameters
    ----------
    state_dir : pathlib.Path
        The project's state folder: evaluation data cache (``data/``) and this corpus's cache
        (``name-corpus/``).
    limit : int, optional
        Examine only the first ``limit`` rows in CID order (tests); ``None``: all.
    mirror : pathlib.Path, optional
        Local mirror of the data sets (``CHEMROBUST_DATA_DIR``,
        :attr:`leaderboard.settings.Settings.data_mirror`), looked at before the cache and the network.
    log : callable
        Receives a line when the result comes from the cache or a cached copy is rejected.

    Returns
    -------
    NameCorpus
        The sorted rows, their sha256 and the counts behind them.

    Raises
    ------
    TrainingError
        If an evaluation set cannot be obtained or read.
    evaluators.answers.opsin.OpsinError
        If Java is missing (OPSIN checks every name).
    ValueError
        If ``limit`` is negative.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be None or >= 0, got {limit}")
    from rdkit import RDLogger

    from evaluators.datasets import dataset_hash

    RDLogger.DisableLog("rdApp.*")
    rows, table_sha = read_table()
    examined = rows if limit is None else rows[:limit]
    roots = prepare_evaluation_sets(state_dir, evaluation_set_names(), mirror=mirror)
    inputs = {
        "source": {"file": f"chemicals/Identifiers/{PUBCHEM_TABLE}", "sha256": table_sha, "rows": len(rows)},
        "limit": limit,
        "rules_version": RULES_VERSION,
        "rules": {"reasons": [*REASONS, IN_EVALUATION], "heavy_atoms": list(HEAVY_ATOMS),
                  "organic_elements": sorted(ORGANIC_ELEMENTS)},  # fmt: skip
        "evaluation_sets": {name: dataset_hash(name, root) for name, root in sorted(roots.items())},
        "versions": _versions(),
    }
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    folder = state_dir / CACHE_FOLDER / key[:16]
    cached = _load(folder, key, log)
    if cached is not None:
        log(f"name corpus: {len(cached.rows)} rows from the cache ({folder}), sha256 {cached.sha256}")
        return cached

    index = _evaluation_index(roots)
    rejected: Counter[str] = Counter()
    excluded: Counter[str] = Counter()
    matched_by: Counter[str] = Counter()
    kept: list[NameRow] = []
    for screened in screen_rows(examined, block=_BLOCK):
        if screened.reason is not None:
            rejected[screened.reason] += 1
            continue
        sets, how = index.match(screened.smiles, screened.name)
        if sets:
            rejected[IN_EVALUATION] += 1
            excluded.update(sets)
            matched_by[how] += 1
            continue
        kept.append(NameRow(int(screened.row[0]), screened.smiles, screened.name))
    kept.sort(key=lambda row: f"{row.smiles}\t{row.name}")
    sha = name_corpus_sha256((row.smiles, row.name) for row in kept)
    report: dict[str, Any] = {
        "corpus": "pubchem-names training corpus (leaderboard/tools/name_corpus.py)",
        "key": key,
        "inputs": inputs,
        "examined": len(examined),
        "kept": len(kept),
        "rejected": {reason: rejected[reason] for reason in (*REASONS, IN_EVALUATION)},
        "excluded": {name: excluded[name] for name in sorted(roots)},
        "excluded_by": {how: matched_by[how] for how in _MATCHES},
        "evaluation_sets": index.stats,
        "sha256": sha,
    }
    _write(folder, kept, report)
    return NameCorpus(kept, sha, report["rejected"], report["excluded"], report, cached=False)


def main(argv: list[str] | None = None) -> int:
    """Build the corpus and print its report; ``python -m leaderboard.tools.name_corpus [--limit N]``."""
    import argparse
    import time

    from leaderboard.settings import Settings

    repo_root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(prog="python -m leaderboard.tools.name_corpus", description=__doc__)
    parser.add_argument("--state-dir", default=str(repo_root / ".state"), help="state folder (data cache)")
    parser.add_argument("--limit", type=int, default=None, help="examine only the first N rows")
    args = parser.parse_args(argv)
    state_dir = Path(args.state_dir)
    settings = Settings.from_environment(repo_root=repo_root, state_dir=state_dir)
    started = time.perf_counter()
    try:
        corpus = build_name_corpus(state_dir, limit=args.limit, mirror=settings.data_mirror)
    except TrainingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    summary = {key: corpus.report[key] for key in ("examined", "kept", "rejected", "excluded", "excluded_by")}
    seconds = round(time.perf_counter() - started, 1)
    summary |= {"sha256": corpus.sha256, "cached": corpus.cached, "seconds": seconds}
    if args.limit is None:
        summary["matches_recorded_full_build"] = corpus.sha256 == FULL_BUILD["sha256"]
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":  # pragma: no cover - a manual run
    raise SystemExit(main())
