"""Compiled per-configuration statistics over stacks of particle configurations.

Every kernel takes a stack of configurations, shape (N, n, m) (m = 1: angles on
S¹, m = d: points of R^d or unit vectors) and returns one value per
configuration, computed in parallel over the stack (``numba.prange``) with
O(n) memory per configuration:

* :func:`pair_fractions` — the fraction of ordered pairs i ≠ j with
  <x_i, x_j> ≥ 1 - δ (angles: cos(θ_i - θ_j) = c_i c_j + s_i s_j);
* :func:`cluster_counts` — connected components of the graph linking x_i and
  x_j when the chord |x_i - x_j| ≤ ε (single linkage cut at ε); on S¹ by
  sorting the angles and counting circular gaps whose chord 2 sin(gap/2)
  exceeds ε, elsewhere by union–find over the pairs;
* :func:`order_parameters` — |Σ_i w_i x_i|.

Angles enter through (sin θ, cos θ) of :func:`meanfield._vector_math.sincos` (vectorised).
"""

from __future__ import annotations

import numba
import numpy as np

from .._vector_math import LOOP_FASTMATH, cos_sin, sincos

__all__ = ["pair_fractions", "cluster_counts", "order_parameters"]

_TWO_PI = 2 * np.pi


@numba.njit(cache=True, parallel=True)
def pair_fractions(states: np.ndarray, circle: bool, delta: float) -> np.ndarray:
    """Fraction of ordered pairs i ≠ j with <x_i, x_j> ≥ 1 - ``delta`` per configuration (0 for n = 1)."""
    n_conf, n, m = states.shape
    out = np.zeros(n_conf)
    if n < 2:
        return out
    threshold = 1.0 - delta
    for s in numba.prange(n_conf):
        x = states[s]
        close = 0
        if circle:
            cs, sn = cos_sin(x)
            for i in range(n):
                for j in range(i + 1, n):
                    if cs[i] * cs[j] + sn[i] * sn[j] >= threshold:
                        close += 1
        else:
            for i in range(n):
                for j in range(i + 1, n):
                    g = 0.0
                    for k in range(m):
                        g += x[i, k] * x[j, k]
                    if g >= threshold:
                        close += 1
        out[s] = 2.0 * close / (n * (n - 1))
    return out


@numba.njit(cache=True)
def _find(parent: np.ndarray, i: int) -> int:
    root = i
    while parent[root] != root:
        root = parent[root]
    while parent[i] != root:  # path compression
        parent[i], i = root, parent[i]
    return root


@numba.njit(cache=True, parallel=True)
def cluster_counts(states: np.ndarray, circle: bool, tolerance: float) -> np.ndarray:
    """Number of connected components of {|x_i - x_j| ≤ ``tolerance``} per configuration."""
    n_conf, n, m = states.shape
    out = np.ones(n_conf, dtype=np.int64)
    if n < 2:
        return out
    tol2 = tolerance * tolerance
    for s in numba.prange(n_conf):
        x = states[s]
        if circle:
            theta = np.sort(np.remainder(x[:, 0], _TWO_PI))
            gaps = 0
            for i in range(n):
                gap = theta[i + 1] - theta[i] if i + 1 < n else theta[0] + _TWO_PI - theta[n - 1]
                if 2.0 * np.sin(0.5 * min(gap, _TWO_PI - gap)) > tolerance:
                    gaps += 1
            out[s] = max(gaps, 1)
        else:
            parent = np.arange(n)
            components = n
            for i in range(n):
                for j in range(i + 1, n):
                    dist2 = 0.0
                    for k in range(m):
                        diff = x[i, k] - x[j, k]
                        dist2 += diff * diff
                    if dist2 <= tol2:
                        ri, rj = _find(parent, i), _find(parent, j)
                        if ri != rj:
                            parent[max(ri, rj)] = min(ri, rj)
                            components -= 1
            out[s] = components
    return out


@numba.njit(cache=True, parallel=True, fastmath=LOOP_FASTMATH)
def order_parameters(states: np.ndarray, weights: np.ndarray, circle: bool) -> np.ndarray:
    """|Σ_i w_i x_i| per configuration (angles: |Σ_i w_i e^{iθ_i}|)."""
    n_conf, n, m = states.shape
    out = np.zeros(n_conf)
    for s in numba.prange(n_conf):
        x = states[s]
        w = weights[s]
        if circle:
            re, im = 0.0, 0.0
            for i in range(n):
                sine, cosine = sincos(x[i, 0])
                re += w[i] * cosine
                im += w[i] * sine
            out[s] = np.sqrt(re * re + im * im)
        else:
            total = 0.0
            for k in range(m):
                acc = 0.0
                for i in range(n):
                    acc += w[i] * x[i, k]
                total += acc * acc
            out[s] = np.sqrt(total)
    return out
