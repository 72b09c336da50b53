"""AMORE's pairs: every molecule's rewrites, each checked to encode the same molecule, on every core.

Rewriting is RDKit work done before the model runs: one parse and one canonical SMILES per original,
then per augmentation a rewrite, its parse and its canonical SMILES for the identity check (0.4 ms a
molecule and augmentation, measured on the default set). RDKit holds the GIL, so threads would not help;
the molecules are split into contiguous chunks and all but the first are rewritten in forked children
while the model still sleeps. Each pair is seeded by its molecule's id alone
(:meth:`~evaluators.notations.augmentations.Augmentation.rng`), so the chunks change no rewrite: the
pairs are the same objects, in the same order, for any number of workers.

A worker that cannot start or dies (a sandbox's process limit, memory) costs only speed: its chunk is
rewritten here instead.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from evaluators.datasets import Molecule
from evaluators.notations.augmentations import AUGMENTATIONS, Augmentation, AugmentedPair, get_augmentation
from evaluators.notations.smiles import canonical_smiles
from evaluators.tracks import Progress, no_progress

#: Fewer molecules per worker than this are rewritten here: the fork alone took 25 ms (profiled on the
#: default set), the rewrites of 250 molecules ~0.55 s (500 in 1.10 s, one worker).
MIN_PER_WORKER = 250


def rewrite_chunk(
    molecules: Sequence[Molecule], augmentations: Sequence[Augmentation]
) -> list[list[AugmentedPair]]:
    """Rewrite ``molecules`` with each augmentation: one list of pairs per augmentation, molecule order.

    Molecule by molecule, every rewrite of one original in a row, so that its parse is reused from the
    small cache of :mod:`evaluators.notations.smiles`.
    """
    out: list[list[AugmentedPair]] = [[] for _ in augmentations]
    for m in molecules:
        reference = canonical_smiles(m.smiles)  # the identity reference, shared by every augmentation
        for pairs, augmentation in zip(out, augmentations, strict=True):
            pairs.append(augmentation.apply(m.id, m.smiles, reference))
    return out


def _forked_chunk(
    molecules: Sequence[Molecule], names: Sequence[str], seed: int
) -> list[list[AugmentedPair]]:
    return rewrite_chunk(molecules, [get_augmentation(name, seed) for name in names])


def cgroup_cpus(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Return the CPUs a CPU quota allows (``docker run --cpus``), rounded up, or ``None`` without one.

    A container's quota does not narrow its CPU affinity: on a 16-core host a job limited to 2 CPUs
    still sees 16, and 16 workers would only take turns on its 2.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = (Path(tmp) / "cpu.max").write_text("150000 100000")
    ...     cgroup_cpus(Path(tmp))
    2
    """
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us")):
        try:
            fields = (root / quota_file).read_text().split()
            if period_file is not None:
                fields += (root / period_file).read_text().split()
            quota, period = fields[0], fields[1]
        except (OSError, IndexError):
            continue
        if quota in ("max", "-1") or not (quota.isdigit() and period.isdigit()) or int(period) == 0:
            return None
        return max(1, -(-int(quota) // int(period)))
    return None


def available_cpus() -> int:
    """Return the CPUs this process may use: its affinity (a cpuset), narrowed by a CPU quota."""
    try:
        cpus = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cpus = max(1, os.cpu_count() or 1)
    quota = cgroup_cpus()
    return min(cpus, quota) if quota else cpus


def _may_fork(threads: Sequence[threading.Thread] | None = None) -> bool:
    """Whether forking is safe: only idle daemons (progress writers) may run beside this thread.

    A fork copies the locks other threads hold; a worker that needed one would wait forever.
    """
    current = threading.current_thread()
    others = [t for t in (threading.enumerate() if threads is None else threads) if t is not current]
    return all(t.daemon for t in others) and "fork" in multiprocessing.get_all_start_methods()


def rewrite_pairs(
    molecules: Sequence[Molecule],
    seed: int,
    *,
    names: Sequence[str] | None = None,
    workers: int | None = None,
    progress: Progress = no_progress,
) -> dict[str, list[AugmentedPair]]:
    """Return ``{augmentation: pairs}``, one pair per molecule in molecule order, for each augmentation.

    Parameters
    ----------
    molecules : sequence of Molecule
        The originals.
    seed : int
        The benchmark seed (with each molecule's id, it seeds every rewrite).
    names : sequence of str, optional
        Augmentations, in the order of the result (default: every registered one).
    workers : int, optional
        Processes to rewrite in, this one included (default: the CPUs available); fewer are used when
        a worker would get under ``MIN_PER_WORKER`` molecules.
    progress : callable, optional
        Called with ``("augment", done, total)``.

    Returns
    -------
    dict
        The same pairs for any ``workers``.
    """
    names = list(AUGMENTATIONS.names() if names is None else names)
    augmentations = [get_augmentation(name, seed) for name in names]
    total = len(molecules)
    workers = min(workers or available_cpus(), max(1, total // MIN_PER_WORKER))
    if workers > 1 and not _may_fork():
        workers = 1
    size = -(-total // workers) if total else 0
    chunks = [molecules[i : i + size] for i in range(0, total, size)] if total else []
    progress("augment", 0, total)
    results: list[list[list[AugmentedPair]] | None] = [None] * len(chunks)
    if len(chunks) > 1:
        context = multiprocessing.get_context("fork")
        try:
            with ProcessPoolExecutor(len(chunks) - 1, mp_context=context) as pool:
                futures = [pool.submit(_forked_chunk, chunk, names, seed) for chunk in chunks[1:]]
                results[0] = rewrite_chunk(chunks[0], augmentations)
                progress("augment", len(chunks[0]), total)
                for k, future in enumerate(futures, start=1):
                    results[k] = future.result()
        except (BrokenProcessPool, OSError):
            pass  # below: what a worker did not return is rewritten here
    done = 0
    for k, chunk in enumerate(chunks):
        if results[k] is None:
            results[k] = rewrite_chunk(chunk, augmentations)
        done += len(chunk)
        progress("augment", done, total)
    pairs: dict[str, list[AugmentedPair]] = {name: [] for name in names}
    for result in results:
        for name, chunk_pairs in zip(names, result, strict=True):
            pairs[name] += chunk_pairs
    return pairs
