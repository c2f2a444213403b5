"""(pair fraction, clusters) of token systems in each representation of :mod:`._token_ensembles`, compiled.

For states of m systems of n tokens, each kernel writes per system the fraction of pairs i < k with
<x_i, x_k> ≥ 1 - δ and the number of components of the graph of those pairs (single linkage), into
``out`` (m, 2): from packed chords c_ik = √(1 - <x_i, x_k>) (linked: c_ik ≤ √δ), from unit vectors
(linked: <x_i, x_k> ≥ 1 - δ) or from angles on S¹ (linked: circular distance ≤ arccos(1 - δ)).
:func:`all_linked` decides whether every pair of one system is linked, the pairs (1, k) first.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["ANGLES", "POINTS", "GRAM", "chord_statistics", "point_statistics", "angle_statistics",
           "representation_statistics", "all_linked", "clustered_systems"]

#: codes of the representations in compiled callers
ANGLES, POINTS, GRAM = 0, 1, 2
_TWO_PI = 2 * np.pi


@numba.njit(cache=True)
def _find(parent, i):
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:
        parent[i], i = root, parent[i]
    return root


@numba.njit(cache=True)
def _union(parent, i, k):
    """Join the components of i and k; 1 if they were apart."""
    ri, rk = _find(parent, i), _find(parent, k)
    if ri == rk:
        return 0
    parent[max(ri, rk)] = min(ri, rk)
    return 1


@numba.njit(cache=True)
def chord_statistics(packed, n, limit, out):
    """(pair fraction, components) of {c_ik ≤ limit} per system of packed chords (m, n(n-1)/2) into out (m, 2)."""
    m, size = packed.shape
    parent = np.empty(n, dtype=np.int64)
    for s in range(m):
        for i in range(n):
            parent[i] = i
        components = n
        linked = 0
        p = 0
        for i in range(n):
            for k in range(i + 1, n):
                if packed[s, p] <= limit:
                    linked += 1
                    components -= _union(parent, i, k)
                p += 1
        out[s, 0] = linked / size
        out[s, 1] = components


@numba.njit(cache=True)
def point_statistics(x, threshold, out):
    """(pair fraction, components) of {<x_i, x_k> ≥ threshold} per system of points (m, n, d) into out (m, 2)."""
    m, n, d = x.shape
    parent = np.empty(n, dtype=np.int64)
    xt = np.empty((d, n))
    gram = np.empty((n, n))
    for s in range(m):
        xs = np.ascontiguousarray(x[s])
        for i in range(n):
            for k in range(d):
                xt[k, i] = xs[i, k]
        np.dot(xs, xt, gram)
        for i in range(n):
            parent[i] = i
        components = n
        linked = 0
        for i in range(n):
            for k in range(i + 1, n):
                if gram[i, k] >= threshold:
                    linked += 1
                    components -= _union(parent, i, k)
        out[s, 0] = 2.0 * linked / (n * (n - 1))
        out[s, 1] = components


@numba.njit(cache=True)
def angle_statistics(theta, arc, out):
    """(pair fraction, components) of {circular distance |θ_i - θ_k| ≤ arc} per system of angles (m, n, 1).

    Sorted angles on [0, 2π) (insertion sort: n is a few dozen tokens): a pair is linked iff its circular
    distance is ≤ arc (arc < π); linked pairs are counted with two pointers over the doubled circle, and the
    components are the circular gaps > arc (one component when there is none)."""
    m, n = theta.shape[0], theta.shape[1]
    doubled = np.empty(2 * n)
    for s in range(m):
        for i in range(n):
            value = np.remainder(theta[s, i, 0], _TWO_PI)
            k = i
            while k > 0 and doubled[k - 1] > value:
                doubled[k] = doubled[k - 1]
                k -= 1
            doubled[k] = value
        for i in range(n):
            doubled[i + n] = doubled[i] + _TWO_PI
        linked = 0
        j = 0
        for i in range(n):
            if j < i + 1:
                j = i + 1
            while j < i + n and doubled[j] - doubled[i] <= arc:
                j += 1
            linked += j - i - 1
        gaps = 0
        for i in range(n):
            if doubled[i + 1] - doubled[i] > arc:
                gaps += 1
        out[s, 0] = 2.0 * linked / (n * (n - 1))
        out[s, 1] = max(gaps, 1)


@numba.njit(cache=True)
def representation_statistics(kind, states, n, d, limit, out):
    """(pair fraction, clusters) of flattened states (m, size) into ``out`` (m, 2), in the representation ``kind``."""
    m = states.shape[0]
    if kind == ANGLES:
        angle_statistics(states.reshape((m, n, 1)), limit, out)
    elif kind == POINTS:
        point_statistics(states.reshape((m, n, d)), limit, out)
    else:
        chord_statistics(states, n, limit, out)


@numba.njit(cache=True)
def _linked_to_first(kind, state, n, d, screen):
    """No pair (1, k) of one state (1, size) farther apart than ``screen`` (a chord, an inner product or an arc)."""
    if kind == GRAM:
        for k in range(n - 1):
            if not state[0, k] <= screen:
                return False
        return True
    if kind == POINTS:
        for k in range(1, n):
            inner = 0.0
            for c in range(d):
                inner += state[0, c] * state[0, k * d + c]
            if not inner >= screen:
                return False
        return True
    for k in range(1, n):
        gap = abs(np.remainder(state[0, k] - state[0, 0] + np.pi, _TWO_PI) - np.pi)
        if not gap <= screen:
            return False
    return True


@numba.njit(cache=True)
def all_linked(kind, state, n, d, limit, screen, stats):
    """Every pair of one state (1, size) linked: the quick test of the pairs (1, k) at ``screen``, then the pair
    fraction at ``limit`` (``stats`` (1, 2) its work array)."""
    if not _linked_to_first(kind, state, n, d, screen):
        return False
    representation_statistics(kind, state, n, d, limit, stats)
    return stats[0, 0] == 1.0


@numba.njit(cache=True)
def clustered_systems(kind, states, n, d, limit, screen):
    """:func:`all_linked` of every state of ``states`` (systems, size)."""
    out = np.empty(states.shape[0], dtype=np.bool_)
    stats = np.empty((1, 2))
    for s in range(states.shape[0]):
        out[s] = all_linked(kind, states[s:s + 1], n, d, limit, screen, stats)
    return out
