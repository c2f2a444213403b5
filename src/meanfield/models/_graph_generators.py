r"""Adjacency matrices of standard graphs, built without loops over nodes or pairs (CSR, weights 1).

* complete: A_ij = 1 for all i ≠ j (and A_ii = 1 with loops);
* ring(n, k): i ~ i ± s (mod n), s = 1, …, k;
* lattice(shape): nearest neighbours along each axis of a grid (C order), periodic or not;
* Erdős–Rényi G(n, p): the number of edges M ~ Binomial(N, p) over the N = n(n-1)/2 pairs (n(n-1) ordered
  pairs if directed), then M distinct pairs uniformly — exactly G(n, p), in O(n + M) memory;
* small world (Watts & Strogatz, Nature 393 (1998) 440): ring(n, k) whose edges (i, i + s) have their far
  end rewired with probability p to a node drawn uniformly among those that are neither i, nor the old
  end, nor already joined to i (redrawn in vectorised rounds until no loop or double edge remains);
* scale free (Barabási & Albert, Science 286 (1999) 509): from a star on m + 1 nodes, each new node joins m
  distinct nodes drawn with probability proportional to their degree (a compiled loop over new nodes: the
  process is sequential);
* causal: A_ij = 1 for j ≤ i (a decoder's attention mask).

Randomness comes from the numpy Generator passed in (the compiled Barabási–Albert loop draws a seed from it).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse

from .._validate import as_real, check_positive_int

__all__ = [
    "causal_adjacency",
    "complete_adjacency",
    "erdos_renyi_adjacency",
    "lattice_adjacency",
    "ring_adjacency",
    "scale_free_adjacency",
    "small_world_adjacency",
    "upper_pairs",
]


def _symmetric(n: int, rows: np.ndarray, cols: np.ndarray) -> scipy.sparse.csr_array:
    """The 0/1 adjacency of the undirected edges (rows, cols) (each pair listed once, i ≠ j)."""
    i = np.concatenate([rows, cols])
    j = np.concatenate([cols, rows])
    return scipy.sparse.csr_array((np.ones(i.size), (i, j)), shape=(n, n))


def _probability(p: float) -> float:
    value = as_real("p", p)
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    return value


def complete_adjacency(n: int, loops: bool = True) -> scipy.sparse.csr_array:
    """A_ij = 1 for every pair (and the diagonal with ``loops``)."""
    n = check_positive_int("n", n)
    dense = np.ones((n, n))
    if not loops:
        np.fill_diagonal(dense, 0.0)
    return scipy.sparse.csr_array(dense)


def ring_adjacency(n: int, k: int = 1) -> scipy.sparse.csr_array:
    """i ~ i ± s mod n for s = 1, …, k (1 ≤ k ≤ (n-1)/2, so that no pair is counted twice)."""
    n = check_positive_int("n", n, 3)
    k = check_positive_int("k", k)
    if 2 * k >= n:
        raise ValueError(f"k must be at most (n - 1)/2 = {(n - 1) // 2} for a ring of n = {n} nodes, got {k}")
    nodes = np.arange(n)
    shifts = np.arange(1, k + 1)
    rows = np.repeat(nodes, k)
    cols = (rows + np.tile(shifts, n)) % n
    return _symmetric(n, rows, cols)


def lattice_adjacency(shape: tuple[int, ...], periodic: bool = True) -> scipy.sparse.csr_array:
    """Nearest neighbours of a grid of ``shape`` (nodes numbered in C order); a periodic axis needs ≥ 3 nodes."""
    if len(shape) == 0 or any(s < 1 for s in shape):
        raise ValueError(f"shape must be a tuple of positive sizes, got {shape!r}")
    if periodic and any(s < 3 for s in shape):
        raise ValueError(f"a periodic lattice needs at least 3 nodes along each axis, got shape {shape!r}")
    index = np.arange(int(np.prod(shape))).reshape(shape)
    rows, cols = [], []
    for axis, size in enumerate(shape):
        if periodic:
            neighbour = np.roll(index, -1, axis=axis)
            rows.append(index.ravel())
            cols.append(neighbour.ravel())
        elif size > 1:
            lead = [slice(None)] * len(shape)
            tail = [slice(None)] * len(shape)
            lead[axis], tail[axis] = slice(0, size - 1), slice(1, size)
            rows.append(index[tuple(lead)].ravel())
            cols.append(index[tuple(tail)].ravel())
    n = index.size
    if not rows:
        return scipy.sparse.csr_array((n, n))
    return _symmetric(n, np.concatenate(rows), np.concatenate(cols))


def upper_pairs(n: int, linear: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(i, j), i < j, of the linear indices k of the strict upper triangle taken row by row:
    k = i(2n - i - 1)/2 + (j - i - 1)."""
    k = np.asarray(linear, dtype=np.int64)
    i = (n - 2 - np.floor(np.sqrt(-8.0 * k + 4.0 * n * (n - 1) - 7) / 2.0 - 0.5)).astype(np.int64)
    start = i * (2 * n - i - 1) // 2
    # the square root may round across a row boundary: correct by one row either way
    low = k < start
    i[low] -= 1
    start = i * (2 * n - i - 1) // 2
    high = k >= start + (n - 1 - i)
    i[high] += 1
    start = i * (2 * n - i - 1) // 2
    return i, k - start + i + 1


def erdos_renyi_adjacency(n: int, p: float, rng: np.random.Generator, directed: bool = False
                          ) -> scipy.sparse.csr_array:
    """G(n, p) (module docstring); directed: each ordered pair i ≠ j independently."""
    n = check_positive_int("n", n)
    p = _probability(p)
    pairs = n * (n - 1) if directed else n * (n - 1) // 2
    count = int(rng.binomial(pairs, p)) if pairs else 0
    chosen = rng.choice(pairs, size=count, replace=False) if count else np.zeros(0, dtype=np.int64)
    if directed:
        rows = chosen // (n - 1)
        rest = chosen % (n - 1)
        cols = rest + (rest >= rows)
        return scipy.sparse.csr_array((np.ones(count), (rows, cols)), shape=(n, n))
    rows, cols = upper_pairs(n, chosen)
    return _symmetric(n, rows, cols)


def small_world_adjacency(n: int, k: int, p: float, rng: np.random.Generator) -> scipy.sparse.csr_array:
    """Watts–Strogatz rewiring of ring(n, k) (module docstring); needs 2k < n - 1 so that a free target exists."""
    n = check_positive_int("n", n, 3)
    k = check_positive_int("k", k)
    p = _probability(p)
    if 2 * k >= n - 1:
        raise ValueError(f"k must be below (n - 1)/2 for a small world of n = {n} nodes (a rewired edge needs a free "
                         f"target), got {k}")
    rows = np.repeat(np.arange(n), k)
    cols = (rows + np.tile(np.arange(1, k + 1), n)) % n
    rewire = rng.random(rows.size) < p
    keep_keys = np.sort(_keys(n, rows[~rewire], cols[~rewire]))
    sources, old = rows[rewire], cols[rewire]
    targets = np.empty(sources.size, dtype=np.int64)
    pending = np.arange(sources.size)
    taken = keep_keys
    while pending.size:
        draw = rng.integers(0, n, size=pending.size)
        keys = _keys(n, sources[pending], draw)
        clash = (draw == sources[pending]) | (draw == old[pending]) | _member(keys, taken)
        # two rewired edges drawing the same new pair: the first keeps it
        _, first = np.unique(keys, return_index=True)
        repeated = np.ones(pending.size, dtype=bool)
        repeated[first] = False
        clash |= repeated
        accepted = ~clash
        targets[pending[accepted]] = draw[accepted]
        taken = np.sort(np.concatenate([taken, keys[accepted]]))
        pending = pending[clash]
    return _symmetric(n, np.concatenate([rows[~rewire], sources]), np.concatenate([cols[~rewire], targets]))


def _keys(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One integer per unordered pair {a, b}."""
    return np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)


def _member(keys: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in the sorted array ``sorted_keys``."""
    if sorted_keys.size == 0:
        return np.zeros(keys.size, dtype=bool)
    position = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return sorted_keys[position] == keys


@numba.njit(cache=True)
def _barabasi_albert(n, m, seed):  # pragma: no cover - compiled
    np.random.seed(seed)
    n_edges = m + (n - m - 1) * m
    rows = np.empty(n_edges, dtype=np.int64)
    cols = np.empty(n_edges, dtype=np.int64)
    ends = np.empty(2 * n_edges, dtype=np.int64)  # every edge's two endpoints: a draw from it is ∝ degree
    chosen = np.empty(m, dtype=np.int64)
    e = 0
    for j in range(1, m + 1):  # the star on nodes 0..m
        rows[e] = 0
        cols[e] = j
        ends[2 * e] = 0
        ends[2 * e + 1] = j
        e += 1
    for new in range(m + 1, n):
        filled = 2 * e
        count = 0
        while count < m:
            candidate = ends[np.random.randint(0, filled)]
            fresh = True
            for c in range(count):
                if chosen[c] == candidate:
                    fresh = False
                    break
            if fresh:
                chosen[count] = candidate
                count += 1
        for c in range(m):
            rows[e] = new
            cols[e] = chosen[c]
            ends[2 * e] = new
            ends[2 * e + 1] = chosen[c]
            e += 1
    return rows, cols


def scale_free_adjacency(n: int, m: int, rng: np.random.Generator) -> scipy.sparse.csr_array:
    """Barabási–Albert preferential attachment (module docstring), 1 ≤ m < n."""
    n = check_positive_int("n", n, 2)
    m = check_positive_int("m", m)
    if m >= n:
        raise ValueError(f"m must be below n = {n} (each new node joins m earlier ones), got {m}")
    rows, cols = _barabasi_albert(n, m, int(rng.integers(0, 2**31 - 1)))
    return _symmetric(n, rows, cols)


def causal_adjacency(n: int) -> scipy.sparse.csr_array:
    """A_ij = 1 for j ≤ i: the lower triangle with the diagonal, built row by row in CSR form."""
    n = check_positive_int("n", n)
    counts = np.arange(1, n + 1)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.arange(indptr[-1]) - np.repeat(indptr[:-1], counts)
    return scipy.sparse.csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
