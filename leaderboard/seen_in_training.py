"""Which (model, data set) cells a model has seen in training, from what its manifest declares.

A manifest's ``training_data`` may name a registered data set or a known corpus
(:class:`leaderboard.intake.schema.TrainingSource`, :mod:`leaderboard.corpora`). A cell is flagged when

- ``declared``: the model declares the data set itself (every molecule seen);
- ``derived``: it declares a corpus the set is drawn from (:attr:`KnownCorpus.contains_datasets`);
- ``overlap``: a declared corpus the project can rebuild shares molecules with the set, matched by
  standard InChIKey (the same molecule however it is written; stereoisomers and salts are other molecules).

The first two follow from the cards alone (:func:`declared_rows`, at every site build). Overlaps need the
corpora rebuilt and every set read: ``python -m leaderboard seen-in-training`` (:func:`overlap_rows`) writes
them to ``site/data/seen_in_training.csv``, and the site reads that record. InChIKeys are cached per content
hash (``<state>/seen-in-training/``), so a rerun with nothing changed recomputes nothing.

Side effects: :func:`overlap_rows` builds corpora and data sets under the state folder.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from leaderboard.corpora import CORPORA
from leaderboard.inchikeys import inchikeys

__all__ = ["COLUMNS", "HOW", "declared_rows", "inchikeys", "overlap_rows", "read_seen", "write_seen"]

#: Columns of ``site/data/seen_in_training.csv``, in order.
COLUMNS = ("submission", "dataset", "source", "how", "n_seen", "n_molecules", "source_sha256")
#: The kinds of flag, as the methodology page explains them.
HOW = {
    "declared": "the manifest declares this data set as training data",
    "derived": "the manifest declares a corpus this data set is drawn from",
    "overlap": "molecules of this data set are in a corpus the manifest declares (same standard InChIKey)",
}
_CACHE = "seen-in-training"


def declared_rows(cards: Mapping[str, Mapping[str, Any]], datasets: Iterable[str]) -> list[dict[str, Any]]:
    """Return the flags that follow from the cards alone: declared sets, sets drawn from a declared corpus.

    Parameters
    ----------
    cards : mapping
        Submission id → card (``training_sources``: the manifest's named entries).
    datasets : iterable of str
        The data sets on the board (a declared set the board does not have is not a cell).

    Examples
    --------
    >>> declared_rows({"m": {"training_sources": [{"dataset": "esol"}]}}, ["esol", "bace"])[0]["how"]
    'declared'
    """
    present = set(datasets)
    rows = []
    for sub_id in sorted(cards):
        for source in cards[sub_id].get("training_sources") or []:
            if not isinstance(source, Mapping):
                continue
            if source.get("dataset") in present:
                rows.append(_row(sub_id, str(source["dataset"]), f"dataset:{source['dataset']}", "declared"))
            entry = CORPORA.get(str(source.get("corpus")))
            for name in entry.contains_datasets if entry else ():
                if name in present:
                    rows.append(_row(sub_id, name, f"corpus:{entry.id}", "derived"))
    return rows


def _row(sub_id: str, dataset: str, source: str, how: str, n_seen: int | str = "", n: int | str = "",
         sha: str = "") -> dict[str, Any]:  # fmt: skip
    return dict(zip(COLUMNS, (sub_id, dataset, source, how, n_seen, n, sha), strict=True))


def _cached_keys(cache: Path, key: str, compute: Callable[[], list[str]]) -> set[str]:
    path = cache / f"{key}.json"
    if path.is_file():
        return set(json.loads(path.read_text(encoding="utf-8")))
    keys = sorted(inchikeys(compute()))
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(keys), encoding="utf-8")
    tmp.replace(path)
    return set(keys)


def _smiles_sha(smiles: Sequence[str]) -> str:
    return hashlib.sha256("".join(f"{s}\n" for s in sorted(smiles)).encode()).hexdigest()


def overlap_rows(
    cards: Mapping[str, Mapping[str, Any]],
    datasets: Sequence[str],
    state_dir: Path,
    *,
    mirror: Path | None = None,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Return the overlaps of every declared, rebuildable corpus with every data set in ``datasets``.

    Each corpus is rebuilt once (its ``molecules``), each set read once; a set that cannot be had is
    logged and skipped. A row per (submission, set, corpus) with at least one shared molecule: how many
    of the set's distinct InChIKeys are in the corpus, of how many, and the corpus's content hash.
    """
    from evaluators.datasets import load_dataset
    from leaderboard.data.prepare import prepare_dataset

    cache = Path(state_dir) / _CACHE
    wanted = sorted({str(s.get("corpus")) for c in cards.values() for s in c.get("training_sources") or []
                     if isinstance(s, Mapping) and CORPORA.get(str(s.get("corpus"))) is not None
                     and CORPORA[str(s.get("corpus"))].molecules is not None})  # fmt: skip
    corpus_keys: dict[str, tuple[set[str], str]] = {}
    for corpus_id in wanted:
        log(f"seen-in-training: rebuilding corpus {corpus_id}")
        smiles = CORPORA[corpus_id].molecules(Path(state_dir), mirror)
        sha = _smiles_sha(smiles)
        corpus_keys[corpus_id] = (_cached_keys(cache, f"corpus-{sha}", lambda s=smiles: list(s)), sha)
    set_keys: dict[str, set[str]] = {}
    for name in datasets if corpus_keys else ():
        try:
            root = prepare_dataset(name, Path(state_dir), mirror=mirror, log=log)
            loaded = load_dataset(name, root)
        except Exception as exc:  # noqa: BLE001  (one unavailable set never stops the others)
            log(f"seen-in-training: data set {name!r} skipped: {type(exc).__name__}: {exc}")
            continue
        smiles = [m.smiles for m in loaded.molecules]
        set_keys[name] = _cached_keys(cache, f"set-{name}-{_smiles_sha(smiles)}", lambda s=smiles: list(s))
    rows = []
    for sub_id in sorted(cards):
        for source in cards[sub_id].get("training_sources") or []:
            corpus_id = str(source.get("corpus")) if isinstance(source, Mapping) else ""
            if corpus_id not in corpus_keys:
                continue
            keys, sha = corpus_keys[corpus_id]
            for name in sorted(set_keys):
                seen = len(set_keys[name] & keys)
                if seen:
                    n = len(set_keys[name])
                    rows.append(_row(sub_id, name, f"corpus:{corpus_id}", "overlap", seen, n, sha))
    return rows


def write_seen(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write the record (sorted, so the same flags give the same bytes)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=lambda r: tuple(str(r[c]) for c in COLUMNS)):
        writer.writerow({c: row[c] for c in COLUMNS})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(out.getvalue(), encoding="utf-8")
    tmp.replace(path)


def read_seen(path: Path) -> list[dict[str, str]]:
    """Read the record; a missing file is no flag.

    Raises
    ------
    ValueError
        If the header is not :data:`COLUMNS` or a row's ``how`` is unknown (regenerate the file).
    """
    if not Path(path).is_file():
        return []
    with Path(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: columns must be {list(COLUMNS)}; rerun python -m leaderboard "
                             "seen-in-training")  # fmt: skip
        rows = list(reader)
    for i, row in enumerate(rows):
        if row["how"] not in HOW:
            raise ValueError(f"{path}: row {i + 1} has how={row['how']!r}; known: {sorted(HOW)}")
    return rows
