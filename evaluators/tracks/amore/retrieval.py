"""Exact nearest-neighbour ranks for the AMORE retrieval task, with an explicit tie rule.

For query ``q_i`` and gallery ``g_1 … g_N`` whose true match is ``g_i`` (AMORE, SPEC §4 T1)::

    rank_i = 1 + #{j : d(q_i, g_j) < d(q_i, g_i)} + 1/2 · #{j != i : d(q_i, g_j) = d(q_i, g_i)}

Distances come from dense float32 matrix products computed in row blocks whose size bounds memory (no N × N
matrix is ever held) — not from a k = N FAISS search as in the reference code. Every comparison whose float32
distance lies within a rounding band of the true match's distance is recomputed exactly in float64 from the
vectors' difference, so the ranks are those of exact float64 arithmetic at float32 speed. Two distances are
equal when they differ by at most ``TIE_RTOL`` of their magnitude: the embeddings are float32, so smaller
differences are rounding noise, not signal. One product serves both directions (the distances are
symmetric): row counts give original → augmented, column counts give augmented → original.

Distances: ``l2`` (squared Euclidean, same order as Euclidean), ``cosine`` (1 − cosine similarity) and
``inner_product`` (negated dot product, so smaller is closer). :func:`hnsw_ranks` adds FAISS HNSW as an
approximate index (the paper's Table 6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Distance = Literal["l2", "cosine", "inner_product"]
DISTANCES: tuple[Distance, ...] = ("l2", "cosine", "inner_product")
TIE_RTOL = 1e-9
# float32 products are accurate to ~1e-6 of the scale for d <= 10^4; 1e-4 leaves a wide margin.
_BAND_RTOL = 1e-4
#: Memory budget of the exact float64 recomputation of one chunk of in-band pairs.
_RESOLVE_BYTES = 64 * 1024**2
_BLOCK_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BidirectionalRanks:
    """Ranks and tie counts in both directions for one (queries, gallery) pair of aligned sets.

    ``forward`` ranks each ``gallery[i]`` for query ``queries[i]``; ``reverse`` ranks each ``queries[i]``
    for query ``gallery[i]``. ``*_ties[i]`` counts other items at exactly the true match's distance.
    """

    forward: np.ndarray
    forward_ties: np.ndarray
    reverse: np.ndarray
    reverse_ties: np.ndarray


def _product(q: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``q @ g.T`` in float32, on torch's thread pool when torch is there.

    After a model has run, torch's OpenMP threads and numpy's OpenBLAS threads fight over the cores:
    measured on 2 cores, one 500 × 500 retrieval took 53 ms through numpy against 24 ms with BLAS on one
    thread. Torch's own pool has no such fight. The ranks do not depend on it: every comparison near
    the true match's distance is recomputed in float64 (:func:`_resolve`).
    """
    try:
        import torch
    except ImportError:  # an evaluator image always has torch; plain numpy elsewhere
        return q @ g.T
    return torch.from_numpy(np.ascontiguousarray(q)).mm(torch.from_numpy(np.ascontiguousarray(g)).T).numpy()


def _check(queries: np.ndarray, gallery: np.ndarray, distance: str) -> None:
    if queries.ndim != 2 or queries.shape != gallery.shape:
        raise ValueError(f"queries {queries.shape} and gallery {gallery.shape} must both be (n, d)")
    if distance not in DISTANCES:
        raise ValueError(f"unknown distance {distance!r}; choose one of {DISTANCES}")
    if not (np.isfinite(queries).all() and np.isfinite(gallery).all()):
        raise ValueError("embeddings contain NaN or inf")


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    # A zero vector has no direction: it is equally (dis)similar to everything (cosine 0).
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _exact(q: np.ndarray, g: np.ndarray, distance: Distance) -> np.ndarray:
    """Elementwise float64 distance between rows ``q[k]`` and ``g[k]`` (inputs already prepared)."""
    if distance == "l2":
        diff = q - g
        return np.einsum("ij,ij->i", diff, diff)
    dots = np.einsum("ij,ij->i", q, g)
    return 1.0 - dots if distance == "cosine" else -dots


def _resolve(qi, gj, owner, q64, g64, norms, true, distance, less, equal) -> None:
    """Settle comparisons inside the rounding band exactly in float64 and add them to the counts.

    The tie tolerance is per pair: relative to the two distances compared, plus, for the dot-product
    distances, the rounding of a dot product of these two vectors. A vector of huge norm elsewhere in the
    gallery therefore never merges the distances of unrelated pairs. ``norms`` are the rows' float64
    norms (queries, gallery), computed once per counter rather than per gathered pair.
    """
    if qi.size == 0:
        return
    n = len(less)
    # Near-identical embeddings (a pretrained MLM's [CLS]) put most of the N × N pairs in the band: gather
    # their vectors a bounded chunk at a time, never all at once (3 300² pairs × 256 dims is 22 GB).
    step = max(1, _RESOLVE_BYTES // (8 * 3 * max(1, q64.shape[1])))
    for start in range(0, qi.size, step):
        part = slice(start, start + step)
        rows, cols, who = qi[part], gj[part], owner[part]
        exact = _exact(q64[rows], g64[cols], distance)
        ref = true[who]
        eps = TIE_RTOL * np.maximum(np.abs(exact), np.abs(ref))
        if distance == "cosine":
            eps += TIE_RTOL
        elif distance == "inner_product":
            eps += TIE_RTOL * norms[0][rows] * norms[1][cols]
        # bincount, not np.add.at: the same integer counts, an order of magnitude faster.
        less += np.bincount(who[exact < ref - eps], minlength=n)
        equal += np.bincount(who[np.abs(exact - ref) <= eps], minlength=n)


class _Counter:
    """Rank counts of one distance in both directions, fed one block of float32 distances at a time."""

    def __init__(
        self,
        q64: np.ndarray,
        g64: np.ndarray,
        distance: Distance,
        *,
        squares: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self.q64, self.g64, self.distance = q64, g64, distance
        n = len(q64)
        if squares is None:
            squares = np.einsum("ij,ij->i", q64, q64), np.einsum("ij,ij->i", g64, g64)
        q_sq, g_sq = squares
        self.true = _exact(q64, g64, distance)
        # Per-query scale of the terms the float32 product rounds: the band in which comparisons are
        # recomputed exactly. Wide is safe (only slower); too narrow would be wrong.
        if distance == "l2":
            scale_f, scale_r = q_sq + g_sq.max(initial=0.0), g_sq + q_sq.max(initial=0.0)
        elif distance == "cosine":
            scale_f = scale_r = np.ones(n)
        else:
            scale_f = np.sqrt(q_sq) * np.sqrt(g_sq.max(initial=0.0))
            scale_r = np.sqrt(g_sq) * np.sqrt(q_sq.max(initial=0.0))
        band_f = _BAND_RTOL * np.maximum(scale_f, 1e-30)
        band_r = _BAND_RTOL * np.maximum(scale_r, 1e-30)
        # float32 thresholds: comparisons stay in float32 (an upcast of the block would double the work).
        self.lo_f, self.hi_f = (
            (self.true - band_f).astype(np.float32),
            (self.true + band_f).astype(np.float32),
        )
        self.lo_r, self.hi_r = (
            (self.true - band_r).astype(np.float32),
            (self.true + band_r).astype(np.float32),
        )
        self.less_f, self.equal_f = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        self.less_r, self.equal_r = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        self._forward, self._reverse = (self.less_f, self.equal_f), (self.less_r, self.equal_r)
        self.norms = (np.sqrt(q_sq), np.sqrt(g_sq))

    def add(self, d: np.ndarray, start: int) -> None:
        """Count block ``d`` = distances of queries ``start:start+len(d)`` to the whole gallery."""
        stop = start + len(d)
        # The true matches of this block, (k, start + k): never compared with themselves (rank counts j != i).
        own = (np.arange(stop - start), np.arange(start, stop))
        # Forward: each row's query against the gallery; reverse: each column's gallery item against the
        # queries. Same block, thresholds along the other axis.
        for lo, hi, axis, (less, equal) in (
            (self.lo_f[start:stop, None], self.hi_f[start:stop, None], 1, self._forward),
            (self.lo_r[None, :], self.hi_r[None, :], 0, self._reverse),
        ):
            below = d < lo
            below[own] = False
            counted = np.count_nonzero(below, axis=axis)
            if axis == 1:
                less[start:stop] += counted
            else:
                less += counted
            band = d <= hi
            band &= ~below
            band[own] = False
            if band.any():  # usually empty: nonzero's full scan only when something is in the band
                bi, bj = np.nonzero(band)
                bi += start
                who = bi if axis == 1 else bj
                _resolve(bi, bj, who, self.q64, self.g64, self.norms, self.true, self.distance, less, equal)

    def result(self) -> BidirectionalRanks:  # noqa: D102
        eq_f, eq_r = self.equal_f, self.equal_r
        return BidirectionalRanks(1.0 + self.less_f + 0.5 * eq_f, eq_f, 1.0 + self.less_r + 0.5 * eq_r, eq_r)


def bidirectional_ranks_many(
    queries: np.ndarray,
    gallery: np.ndarray,
    *,
    distances: tuple[Distance, ...] = DISTANCES,
    block_bytes: int = _BLOCK_BYTES,
) -> dict[Distance, BidirectionalRanks]:
    """Exact ranks of the true matches in both directions for several distances, with the half-tie rule.

    Every distance comes from one matrix product: the squared L2 distance is ``|q|² + |g|² − 2 q·g``,
    the cosine distance ``1 − q·g / (|q| |g|)``.

    Parameters
    ----------
    queries, gallery : ndarray of shape (n, d)
        Aligned embeddings: row ``i`` of one matches row ``i`` of the other.
    distances : tuple of {"l2", "cosine", "inner_product"}
        Dissimilarities to rank by.
    block_bytes : int, default=256 MiB
        Memory budget for one block of the distance matrix and its temporaries.

    Returns
    -------
    dict
        ``{distance: BidirectionalRanks}``.

    Raises
    ------
    ValueError
        On mismatched shapes, an unknown distance or non-finite values.
    """
    for distance in distances:
        _check(queries, gallery, distance)
    q64, g64 = np.asarray(queries, dtype=np.float64), np.asarray(gallery, dtype=np.float64)
    n = len(q64)
    q_sq, g_sq = np.einsum("ij,ij->i", q64, q64), np.einsum("ij,ij->i", g64, g64)
    # Cosine's exact recomputation runs on unit vectors; its float32 distances come from the same product
    # as the others (below): dividing a float32 dot product by the two norms errs by the same few ulps of
    # the scale as a product of float32 unit vectors, far inside the band that is recomputed exactly.
    unit = (_unit(q64), _unit(g64)) if "cosine" in distances else None
    counters = {
        d: _Counter(*unit, d) if d == "cosine" else _Counter(q64, g64, d, squares=(q_sq, g_sq))
        for d in distances
    }
    q32, g32 = q64.astype(np.float32), g64.astype(np.float32)
    q_sq32, g_sq32 = q_sq.astype(np.float32), g_sq.astype(np.float32)
    if unit is not None:
        inv_q = np.divide(1.0, np.sqrt(q_sq), out=np.zeros(n), where=q_sq > 0).astype(np.float32)
        inv_g = np.divide(1.0, np.sqrt(g_sq), out=np.zeros(n), where=g_sq > 0).astype(np.float32)
    block = max(1, min(n, block_bytes // max(1, 4 * n * (3 + len(distances)))))
    for start in range(0, n, block):
        stop = min(n, start + block)
        dots = _product(q32[start:stop], g32)
        for distance, counter in counters.items():
            if distance == "l2":
                d = dots * -2.0
                d += q_sq32[start:stop, None]
                d += g_sq32[None, :]
            elif distance == "cosine":
                # A zero vector has no direction: its inverse norm is 0, its cosine distance 1 to everything.
                d = dots * inv_q[start:stop, None]
                d *= inv_g[None, :]
                np.subtract(1.0, d, out=d)
            else:
                d = -dots
            counter.add(d, start)
    out = {d: c.result() for d, c in counters.items()}
    return {d: out[d] for d in distances}


def bidirectional_ranks(
    queries: np.ndarray,
    gallery: np.ndarray,
    *,
    distance: Distance = "l2",
    block_bytes: int = _BLOCK_BYTES,
) -> BidirectionalRanks:
    """Exact ranks of the true matches in both directions for one distance.

    See :func:`bidirectional_ranks_many`.

    Returns
    -------
    BidirectionalRanks
    """
    return bidirectional_ranks_many(queries, gallery, distances=(distance,), block_bytes=block_bytes)[
        distance
    ]


def retrieval_ranks(
    queries: np.ndarray,
    gallery: np.ndarray,
    *,
    distance: Distance = "l2",
    block_bytes: int = _BLOCK_BYTES,
) -> np.ndarray:
    """Rank of each query's true match (same row index) in the gallery, ties counted as half.

    Parameters
    ----------
    queries : ndarray of shape (n, d)
        Query embeddings; row ``i`` matches gallery row ``i``.
    gallery : ndarray of shape (n, d)
        Gallery embeddings.
    distance : {"l2", "cosine", "inner_product"}, default="l2"
        Dissimilarity to rank by.
    block_bytes : int, default=256 MiB
        Memory budget for one block of the distance matrix.

    Returns
    -------
    ndarray of shape (n,), float64
        ``rank_i`` as defined in the module docstring (1 = retrieved first; halves from ties).

    Raises
    ------
    ValueError
        On mismatched shapes, an unknown distance or non-finite values.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    >>> retrieval_ranks(x, x).tolist()
    [1.0, 1.0, 1.0]
    >>> retrieval_ranks(x, np.array([[1.0, 0.0], [0.0, 0.0], [5.0, 5.0]])).tolist()
    [2.0, 2.0, 1.0]
    >>> retrieval_ranks(x, np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])).tolist()
    [1.5, 1.5, 1.0]
    """
    return retrieval_ranks_and_ties(queries, gallery, distance=distance, block_bytes=block_bytes)[0]


def retrieval_ranks_and_ties(
    queries: np.ndarray,
    gallery: np.ndarray,
    *,
    distance: Distance = "l2",
    block_bytes: int = _BLOCK_BYTES,
) -> tuple[np.ndarray, np.ndarray]:
    """Like :func:`retrieval_ranks`, also returning how many other gallery items tie with the true match.

    Returns
    -------
    ranks : ndarray of shape (n,), float64
    ties : ndarray of shape (n,), int64
        ``#{j != i : d(q_i, g_j) = d(q_i, g_i)}``; non-zero where two different items are
        indistinguishable to the model (for example two molecules with the same fingerprint).
    """
    both = bidirectional_ranks(queries, gallery, distance=distance, block_bytes=block_bytes)
    return both.forward, both.forward_ties


def hnsw_ranks(
    queries: np.ndarray,
    gallery: np.ndarray,
    *,
    k: int = 100,
    m: int = 32,
    ef_search: int = 128,
    search_threads: int | None = None,
) -> np.ndarray:
    """Ranks from an approximate FAISS HNSW index over L2 (the paper's Table 6 "HNSW" row).

    Each query retrieves its ``k`` approximate nearest neighbours; the rank is the true match's position
    among them (1-based), or ``inf`` when it is not retrieved (counted as a miss for every Acc@k ≤ k and as
    0 in MRR). Ties are not resolved: this is the approximate index's own order.

    Parameters
    ----------
    queries, gallery : ndarray of shape (n, d)
        Aligned embeddings.
    k : int, default=100
        Neighbours retrieved per query (capped at n).
    m, ef_search : int
        HNSW graph degree and search breadth.
    search_threads : int, optional
        OpenMP threads of the search (default: FAISS's). Each query is searched alone, so the ranks are
        the same for any number; one leaves the other cores to work running beside it.
    """
    import faiss

    _check(queries, gallery, "l2")
    q = np.ascontiguousarray(queries, dtype=np.float32)
    g = np.ascontiguousarray(gallery, dtype=np.float32)
    n, dim = g.shape
    index = faiss.IndexHNSWFlat(dim, m)
    index.hnsw.efSearch = max(ef_search, k)
    # Parallel insertion makes the graph depend on thread timing; one thread keeps it reproducible
    # (HNSW's level generator has a fixed seed).
    # OpenMP's thread count is per calling thread: setting it here leaves the caller's other threads alone.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        index.add(g)
        faiss.omp_set_num_threads(search_threads or threads)
        _, found = index.search(q, min(k, n))
    finally:
        faiss.omp_set_num_threads(threads)
    hits = found == np.arange(n)[:, None]
    ranks = np.full(n, np.inf)
    rows, cols = np.nonzero(hits)
    ranks[rows] = cols + 1.0
    return ranks
