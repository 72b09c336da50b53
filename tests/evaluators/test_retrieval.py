"""Tests for ``evaluators.tracks.amore.retrieval``: exact ranks with the half-tie rule (SPEC section 4, T1).

The ranks are compared with (a) a brute-force loop that implements the definition literally and
(b) a k = N FAISS flat search, on random data that includes exact ties (duplicate gallery rows,
integer-valued vectors).
"""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from evaluators.tracks.amore.retrieval import (
    DISTANCES,
    bidirectional_ranks,
    retrieval_ranks,
    retrieval_ranks_and_ties,
)


def _distance(q: np.ndarray, g: np.ndarray, distance: str) -> float:
    if distance == "l2":
        return float(np.linalg.norm(q - g))
    if distance == "cosine":
        nq, ng = np.linalg.norm(q), np.linalg.norm(g)
        # A zero vector has no direction: cosine similarity 0 with everything (the module's convention).
        cos = 0.0 if nq == 0 or ng == 0 else float(q @ g) / (nq * ng)
        return 1.0 - cos
    return -float(q @ g)


def brute_force_ranks(queries: np.ndarray, gallery: np.ndarray, distance: str):
    """rank_i = 1 + #{j: d_ij < d_ii} + 1/2 #{j != i: d_ij = d_ii}, one pair at a time."""
    q = np.asarray(queries, dtype=np.float64)
    g = np.asarray(gallery, dtype=np.float64)
    n = len(q)
    ranks = np.empty(n)
    ties = np.empty(n, dtype=np.int64)
    for i in range(n):
        d = np.array([_distance(q[i], g[j], distance) for j in range(n)])
        # Mathematically equal cosines can differ in the last bit; nothing else in the test data is
        # closer than ~1e-4, so a 1e-12 tolerance only absorbs that rounding.
        equal = np.abs(d - d[i]) <= 1e-12 * max(1.0, abs(d[i]))
        less = (d < d[i]) & ~equal
        equal[i] = False
        ranks[i] = 1 + less.sum() + 0.5 * equal.sum()
        ties[i] = equal.sum()
    return ranks, ties


def faiss_ranks(queries: np.ndarray, gallery: np.ndarray, distance: str, *, tol: float = 0.0):
    """Rank of the true match from a k = N FAISS flat search, with the same half-tie rule."""
    q = np.ascontiguousarray(queries, dtype=np.float32).copy()
    g = np.ascontiguousarray(gallery, dtype=np.float32).copy()
    n, dim = g.shape
    if distance == "cosine":
        faiss.normalize_L2(q)
        faiss.normalize_L2(g)
    index = faiss.IndexFlatL2(dim) if distance == "l2" else faiss.IndexFlatIP(dim)
    index.add(g)
    scores, labels = index.search(q, n)
    assert (np.sort(labels, axis=1) == np.arange(n)).all()  # k = N: every item retrieved once
    ranks = np.empty(n)
    ties = np.empty(n, dtype=np.int64)
    for i in range(n):
        true = scores[i, labels[i] == i][0]
        # IndexFlatL2 returns squared distances (smaller is closer), IndexFlatIP similarities.
        better = scores[i] < true - tol if distance == "l2" else scores[i] > true + tol
        equal = np.abs(scores[i] - true) <= tol
        ranks[i] = 1 + better.sum() + 0.5 * (equal.sum() - 1)
        ties[i] = equal.sum() - 1
    return ranks, ties


def _gaussian(seed: int, n: int = 120, dim: int = 16):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, dim)).astype(np.float32)
    g = (q + rng.normal(scale=0.8, size=(n, dim))).astype(np.float32)
    return q, g


def _integer_with_ties(seed: int, n: int = 80, dim: int = 3):
    """Small integer vectors: many exact distance ties, plus duplicated gallery rows; no zero rows."""
    rng = np.random.default_rng(seed)
    q = rng.integers(-2, 3, size=(n, dim)).astype(np.float32)
    g = q + rng.integers(-1, 2, size=(n, dim)).astype(np.float32)
    for x in (q, g):
        zero = ~x.any(axis=1)
        x[zero, 0] = 1.0
    # Duplicate some gallery rows (two items indistinguishable to the model), including true matches.
    g[10:20] = g[0:10]
    g[30] = g[31]
    g[40:45] = 2.0 * g[45:50]  # proportional rows: identical under cosine only
    return q, g


DATA = {
    "gaussian": _gaussian(0),
    "integer_ties": _integer_with_ties(1),
    "integer_ties_2": _integer_with_ties(2, n=40, dim=2),
}


@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("data", DATA)
def test_ranks_match_brute_force(data, distance):
    q, g = DATA[data]
    ranks, ties = retrieval_ranks_and_ties(q, g, distance=distance)
    expected_ranks, expected_ties = brute_force_ranks(q, g, distance)
    np.testing.assert_array_equal(ties, expected_ties)
    np.testing.assert_array_equal(ranks, expected_ranks)
    np.testing.assert_array_equal(retrieval_ranks(q, g, distance=distance), expected_ranks)
    assert ranks.dtype == np.float64
    assert ((ranks >= 1) & (ranks <= len(q))).all()
    if data.startswith("integer"):
        # The data must exercise the tie rule, or this test proves nothing about it.
        assert (ties > 0).sum() >= 5
        assert (ranks % 1 == 0.5).any()


@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("data", DATA)
def test_ranks_match_faiss_flat_search(data, distance):
    q, g = DATA[data]
    # Integer vectors give exact float32 squared distances and dot products, so ties are exact in
    # FAISS too; normalised (cosine) vectors tie only up to float32 rounding.
    tol = 1e-6 if distance == "cosine" and data != "gaussian" else 0.0
    expected_ranks, expected_ties = faiss_ranks(q, g, distance, tol=tol)
    ranks, ties = retrieval_ranks_and_ties(q, g, distance=distance)
    np.testing.assert_array_equal(ties, expected_ties)
    np.testing.assert_array_equal(ranks, expected_ranks)


@pytest.mark.parametrize("distance", DISTANCES)
def test_duplicate_gallery_rows_tie_exactly(distance):
    q, g = DATA["integer_ties"]
    ranks, ties = retrieval_ranks_and_ties(q, g, distance=distance)
    # Rows 0-9 and 10-19 of the gallery are identical: each true match there shares its distance with
    # at least its twin, so it is never retrieved first (rank >= 1.5).
    assert (ties[0:20] >= 1).all()
    assert (ranks[0:20] >= 1.5).all()


@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("data", DATA)
def test_memory_blocking_gives_identical_results(data, distance):
    q, g = DATA[data]
    n = len(q)
    full = retrieval_ranks_and_ties(q, g, distance=distance)
    for block_bytes in (1, 8 * n * 7, 8 * n * 3 * 7 + 5, 10**12):
        blocked = retrieval_ranks_and_ties(q, g, distance=distance, block_bytes=block_bytes)
        np.testing.assert_array_equal(blocked[0], full[0])
        np.testing.assert_array_equal(blocked[1], full[1])


@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("data", DATA)
def test_reverse_direction_is_the_swapped_search(data, distance):
    q, g = DATA[data]
    both = bidirectional_ranks(q, g, distance=distance, block_bytes=8 * len(q) * 5)
    expected_ranks, expected_ties = brute_force_ranks(g, q, distance)
    np.testing.assert_array_equal(both.reverse, expected_ranks)
    np.testing.assert_array_equal(both.reverse_ties, expected_ties)
    np.testing.assert_array_equal(both.forward, retrieval_ranks(q, g, distance=distance))


@pytest.mark.parametrize(
    ("distance", "competitor"),
    [("l2", [1.0, 1e-3]), ("cosine", [1.0, 1e-3]), ("inner_product", [1.0 - 1e-6, 0.0])],
)
def test_tolerance_only_absorbs_rounding(distance, competitor):
    # A competitor ~1e-6 of the distance scale farther than the true match is a genuine difference,
    # far above float64 rounding: it must not count as a tie.
    q = np.array([[1.0, 0.0], [-1.0, 0.0]])
    g = np.array([[1.0, 0.0], competitor])
    ranks, ties = retrieval_ranks_and_ties(q, g, distance=distance)
    expected_ranks, expected_ties = brute_force_ranks(q, g, distance)
    assert ranks[0] == 1.0 and ties[0] == 0
    np.testing.assert_array_equal(ranks, expected_ranks)
    np.testing.assert_array_equal(ties, expected_ties)


def test_one_large_norm_vector_does_not_create_ties_elsewhere():
    q = np.array([[0.0, 0.0], [5.0, 0.0], [1e5, 0.0]])
    g = np.array([[1.0, 0.0], [2.0, 0.0], [1e5, 0.0]])
    ranks, ties = retrieval_ranks_and_ties(q, g, distance="l2")
    expected_ranks, expected_ties = brute_force_ranks(q, g, "l2")
    assert expected_ranks.tolist() == [1.0, 1.0, 1.0]  # squared distances 1 vs 4, 9 vs 16: no tie
    np.testing.assert_array_equal(ties, expected_ties)
    np.testing.assert_array_equal(ranks, expected_ranks)


def test_zero_vectors_under_cosine_do_not_crash():
    x = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    ranks, ties = retrieval_ranks_and_ties(x, x, distance="cosine")
    assert np.isfinite(ranks).all()
    # The zero query is equally far (cosine distance 1) from everything: its match ties with both others.
    assert ranks.tolist() == [2.0, 1.0, 1.0]
    assert ties.tolist() == [2, 0, 0]
    np.testing.assert_array_equal(ranks, brute_force_ranks(x, x, "cosine")[0])
    zeros = np.zeros((4, 3))
    assert retrieval_ranks(zeros, zeros, distance="cosine").tolist() == [2.5] * 4


def test_single_item_is_rank_one():
    x = np.array([[3.0, -1.0]])
    for distance in DISTANCES:
        assert retrieval_ranks(x, 2 * x, distance=distance).tolist() == [1.0]


@pytest.mark.parametrize(
    ("queries", "gallery"),
    [
        (np.zeros((3, 4)), np.zeros((4, 4))),
        (np.zeros((3, 4)), np.zeros((3, 5))),
        (np.zeros(3), np.zeros(3)),
        (np.zeros((2, 3, 1)), np.zeros((2, 3, 1))),
    ],
    ids=["rows", "dims", "1d", "3d"],
)
def test_shape_mismatch_raises(queries, gallery):
    with pytest.raises(ValueError, match="must both be"):
        retrieval_ranks(queries, gallery)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", ["queries", "gallery"])
@pytest.mark.parametrize("distance", DISTANCES)
def test_non_finite_embeddings_raise(bad, where, distance):
    q, g = _gaussian(3, n=5, dim=4)
    (q if where == "queries" else g)[2, 1] = bad
    with pytest.raises(ValueError, match="NaN or inf"):
        retrieval_ranks(q, g, distance=distance)


def test_unknown_distance_raises():
    q, g = _gaussian(4, n=5, dim=4)
    with pytest.raises(ValueError, match="unknown distance"):
        retrieval_ranks(q, g, distance="euclid")


@pytest.mark.parametrize("distance", DISTANCES)
def test_near_identical_embeddings_are_settled_in_bounded_chunks(distance, monkeypatch):
    """A pretrained MLM's [CLS] is nearly the same vector for every molecule: then most of the N × N pairs
    fall in the rounding band and are recomputed exactly. rxnfp's BERT on ChEBI-20 (3 300 pairs, 256 dims)
    ran out of 6 GB gathering them all at once; in chunks the ranks are the same whatever the chunk size
    (and the brute-force ones), and every chunk stays within the budget."""
    from evaluators.tracks.amore import retrieval

    rng = np.random.default_rng(7)
    base = rng.normal(size=24)
    q = base + 1e-7 * rng.normal(size=(150, 24))  # every distance within the band of every other
    g = base + 1e-7 * rng.normal(size=(150, 24))
    expected = retrieval_ranks_and_ties(q, g, distance=distance)  # one chunk: everything at once
    if distance != "inner_product":  # (a dot product's tie tolerance scales with the norms: not brute force)
        np.testing.assert_array_equal(expected[0], brute_force_ranks(q, g, distance)[0])
    gathered: list[int] = []
    original = retrieval._exact

    def spy(a, b, d):
        gathered.append(a.nbytes + b.nbytes)
        return original(a, b, d)

    monkeypatch.setattr(retrieval, "_exact", spy)
    for budget in (1, 8 * 3 * 24 * 7 + 3, 10**12):
        monkeypatch.setattr(retrieval, "_RESOLVE_BYTES", budget)
        gathered.clear()
        ranks, ties = retrieval_ranks_and_ties(q, g, distance=distance)
        np.testing.assert_array_equal(ranks, expected[0])
        np.testing.assert_array_equal(ties, expected[1])
        assert sum(gathered) > 150 * 150 * 8 * 24  # the band held (nearly) every pair
        if budget < 10**12:
            assert max(gathered[1:]) <= max(budget, 2 * 8 * 24)  # one chunk at a time (after the true pairs)


def test_every_distance_comes_from_one_product_per_block(monkeypatch):
    """L2, cosine and inner product are read off one float32 product per block (cosine divided by the
    norms), not one product per family: the ranks are the brute-force ones, zero vectors and ties included,
    and the product runs once per block of queries."""
    from evaluators.tracks.amore import retrieval

    rng = np.random.default_rng(11)
    q = rng.integers(-2, 3, size=(60, 8)).astype(np.float64)  # integer vectors: exact ties everywhere
    g = rng.integers(-2, 3, size=(60, 8)).astype(np.float64)
    q[::7] = 0.0  # no direction: cosine distance 1 to everything
    calls: list[int] = []
    real = retrieval._product

    def counting(a, b):
        calls.append(len(a))
        return real(a, b)

    monkeypatch.setattr(retrieval, "_product", counting)
    block = 4 * 60 * (3 + len(DISTANCES)) * 20  # 20 queries a block
    many = retrieval.bidirectional_ranks_many(q, g, distances=DISTANCES, block_bytes=block)
    assert calls == [20, 20, 20]
    for distance in DISTANCES:
        ranks, ties = brute_force_ranks(q, g, distance)
        np.testing.assert_array_equal(many[distance].forward, ranks)
        np.testing.assert_array_equal(many[distance].forward_ties, ties)
        reverse, reverse_ties = brute_force_ranks(g, q, distance)
        np.testing.assert_array_equal(many[distance].reverse, reverse)
        np.testing.assert_array_equal(many[distance].reverse_ties, reverse_ties)


def test_hnsw_ranks_do_not_depend_on_the_search_threads():
    """The search may run on one thread beside other work: each query is searched alone, so the ranks are
    the same, and the caller's OpenMP thread count is left as it was."""
    from evaluators.tracks.amore.retrieval import hnsw_ranks

    rng = np.random.default_rng(5)
    q = rng.normal(size=(400, 16)).astype(np.float32)
    g = q + 1.5 * rng.normal(size=(400, 16)).astype(np.float32)
    before = faiss.omp_get_max_threads()
    default = hnsw_ranks(q, g, k=20)
    single = hnsw_ranks(q, g, k=20, search_threads=1)
    assert faiss.omp_get_max_threads() == before
    np.testing.assert_array_equal(single, default)
    assert np.isinf(default).any() and (default == 1).any()  # some misses, some hits: a real comparison
