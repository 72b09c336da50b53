"""Exact nearest-neighbour ranks for the AMORE retrieval task, with an explicit tie rule.

For query ``q_i`` and gallery ``g_1 … g_N`` whose true match is ``g_i`` (AMORE, SPEC §4 T1)::

    rank_i = 1 + #{j : d(q_i, g_j) < d(q_i, g_i)} + 1/2 · #{j != i : d(q_i, g_j) = d(q_i, g_i)}

Distances come from dense matrix products in float64, computed in query blocks whose size bounds memory
(no N × N matrix is ever held), rather than from a k = N FAISS search as in the reference code. Two
distances are equal when they differ by at most ``TIE_RTOL`` relative to the larger magnitude: the
embeddings are float32, so smaller differences are rounding noise of the matrix product, not signal.

Distances: ``l2`` (squared Euclidean — same order as Euclidean), ``cosine`` (1 − cosine similarity) and
``inner_product`` (negated dot product, so smaller is closer).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

Distance = Literal["l2", "cosine", "inner_product"]
DISTANCES: tuple[Distance, ...] = ("l2", "cosine", "inner_product")
TIE_RTOL = 1e-9
_BLOCK_BYTES = 256 * 1024 * 1024


def _prepare(x: np.ndarray, distance: Distance) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if distance == "cosine":
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        # A zero vector has no direction: it is equally (dis)similar to everything (cosine 0).
        x = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    return x


def _block_distances(q: np.ndarray, g: np.ndarray, g_sq: np.ndarray | None, distance: Distance) -> np.ndarray:
    dots = q @ g.T
    if distance == "l2":
        return (np.einsum("ij,ij->i", q, q)[:, None] + g_sq[None, :]) - 2.0 * dots
    # cosine on unit vectors and inner product both order by the negated dot product.
    return (1.0 - dots) if distance == "cosine" else -dots


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
    if queries.ndim != 2 or queries.shape != gallery.shape:
        raise ValueError(f"queries {queries.shape} and gallery {gallery.shape} must both be (n, d)")
    if distance not in DISTANCES:
        raise ValueError(f"unknown distance {distance!r}; choose one of {DISTANCES}")
    if not (np.isfinite(queries).all() and np.isfinite(gallery).all()):
        raise ValueError("embeddings contain NaN or inf")
    q_all = _prepare(queries, distance)
    g = _prepare(gallery, distance)
    g_sq = np.einsum("ij,ij->i", g, g)
    q_sq = np.einsum("ij,ij->i", q_all, q_all)
    # Tolerance scaled to the magnitude of the terms that the matrix product rounds.
    if distance == "l2":
        scale = q_sq + g_sq.max(initial=0.0)
    elif distance == "cosine":
        scale = np.ones_like(q_sq)
    else:
        scale = np.sqrt(q_sq) * np.sqrt(g_sq.max(initial=0.0))
    tol_all = TIE_RTOL * np.maximum(scale, 1e-300)
    n = len(g)
    ranks = np.empty(n, dtype=np.float64)
    ties = np.empty(n, dtype=np.int64)
    block = max(1, min(n, block_bytes // max(1, 8 * n * 3)))
    for start in range(0, n, block):
        stop = min(n, start + block)
        d = _block_distances(q_all[start:stop], g, g_sq, distance)
        rows = np.arange(stop - start)
        true = d[rows, rows + start][:, None]
        tol = tol_all[start:stop, None]
        less = (d < true - tol).sum(axis=1)
        equal = (np.abs(d - true) <= tol).sum(axis=1) - 1  # minus the true match itself
        ranks[start:stop] = 1.0 + less + 0.5 * equal
        ties[start:stop] = equal
    return ranks, ties
