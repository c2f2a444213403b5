r"""Self-attention with Q = K = V = I on batches of systems: matrix products on BLAS, three state representations.

For tokens x_1 … x_n on S^{d-1} with weights w_j (paper 2, arXiv:2312.10794, (SA), (USA)),

    ẋ_i = Σ_j A_ij (x_j - <x_i, x_j> x_i),
    A_ij = s_i K_ij,   K_ij = w_j e^{β(G_ij - 1)},   G_ij = <x_i, x_j>,
    s_i = 1/D_i, D_i = Σ_j K_ij (SA),      s_i = e^β (USA)

(the exponent shifted by -β as in :func:`attention_exponent`). A depends on the tokens only
through their Gram matrix G, and the tangent projection only through r'_i = Σ_j K_ij G_ij =
<x_i, Σ_j K_ij x_j>. Every representation below works one system at a time in a compiled loop
whose n × n arrays stay in cache: K, D and r' in one pass (exponentials by
:func:`meanfield._vector_math.exp_nonpositive`, vectorised), its matrix products on BLAS
(``np.dot`` in the compiled code, i.e. dgemm):

* **points** (systems, n, d): G = X Xᵀ and N = K X, two products of n × n × d;
  ẋ_i = s_i (N_i - r'_i x_i)                                     (:func:`point_velocity`);
* **Gram** (systems, n(n-1)/2): the strict upper triangle of the chords c_ik = √(1 - G_ik) =
  |x_i - x_k|/√2. Differentiating G_ik = <x_i, x_k>,

      Ġ_ik = <ẋ_i, x_k> + <x_i, ẋ_k>
           = Σ_j A_ij (G_jk - G_ij G_ik) + Σ_j A_kj (G_ij - G_kj G_ki),

  i.e. Ġ = M + Mᵀ with M = diag(s) (K G - diag(r') G), and Ġ_ii = 2 s_i (r'_i - r'_i G_ii) = 0 on
  the sphere: a closed ODE for the n(n-1)/2 entries whatever d. In H = 1 - G = c², with
  K_ij = w_j e^{-β H_ij}, q_i = Σ_j K_ij H_ij and P = K H (one product of n × n × n),

      M_ik = s_i (q_i (1 - H_ik) + D_i H_ik - P_ik),    Ḣ_ik = -(M_ik + M_ki),    ċ_ik = Ḣ_ik / (2 c_ik)

  (:func:`gram_velocity`; ċ = 0 where c = 0: coincident tokens stay coincident). Every term is
  computed from c, without the cancellation 1 - G. Why the chord and not G or H: an error
  control relative to G ≈ 1 would allow errors rtol in 1 - G at every clustered pair, far above
  a threshold δ ~ 1e-3; H controls 1 - G relatively but decays twice as fast as the tokens'
  separations (H ∝ |x_i - x_k|²), halving the stable step of an explicit method once clusters
  form; c decays at the rate of the separations themselves, as the points do.
* **angles** (systems, n) on S¹ (d = 2): the compiled kernel of one system
  (:func:`meanfield.models._compiled_kernels.attention_velocity_kernel`) over the batch
  (:func:`angle_velocity`), which needs no product (sin(θ_j - θ_i) = c_i s_j - s_i c_j).

Costs per system and evaluation: points ~4 n² d flops, Gram ~2 n³ flops, plus n² exponentials for
both; so points for d < n/2 and Gram above (the rule of
:func:`meanfield.particles._token_ensembles.representation_for`; measured at n = 32 in
``benchmarks/bench_figure3_panels.py``).
"""

from __future__ import annotations

import functools

import numba
import numpy as np

from ..domains._geometry import ANGLES
from .._vector_math import LOOP_FASTMATH, exp_nonpositive
from ._attention_weights import attention_exponent, attention_velocity, velocity_factor
from ._compiled_kernels import attention_velocity_kernel

__all__ = ["pack_gram", "unpack_gram", "gram_chords", "gram_velocity", "point_velocity", "angle_velocity",
           "packed_size", "uniform_weights", "chord_rates_system", "point_rates_system"]


def packed_size(n: int) -> int:
    """n(n-1)/2: the entries G_ik, i < k, of the packed Gram matrix."""
    return n * (n - 1) // 2


#: below this 1 - <x_i, x_k>, gram_chords computes the pair's chord from the difference x_i - x_k
_NEAR_PAIR = 1e-2


def gram_chords(tokens: np.ndarray) -> np.ndarray:
    """c_ik = |x_i - x_k|/√2 = √(1 - <x_i, x_k>) per system for unit vectors (..., n, d), zero diagonal.

    1 - <x_i, x_k> from one matrix product, except for the pairs closer than 1 - <x_i, x_k> = 10⁻²,
    whose |x_i - x_k|²/2 is computed from the difference (no cancellation for clustered tokens).
    """
    tokens = np.asarray(tokens, dtype=float)
    distance = 1.0 - np.matmul(tokens, np.swapaxes(tokens, -1, -2))
    near = np.nonzero(distance < _NEAR_PAIR)
    *lead, i, k = near
    diff = tokens[(*lead, i)] - tokens[(*lead, k)]
    distance[near] = 0.5 * np.einsum("pc,pc->p", diff, diff)
    return np.sqrt(np.maximum(distance, 0.0))


def pack_gram(gram: np.ndarray) -> np.ndarray:
    """The strict upper triangles (i < k, row by row) of symmetric matrices (..., n, n): shape (..., n(n-1)/2)."""
    n = gram.shape[-1]
    rows, columns = np.triu_indices(n, 1)
    return np.ascontiguousarray(gram[..., rows, columns])


def unpack_gram(packed: np.ndarray, n: int, diagonal: float = 0.0) -> np.ndarray:
    """The symmetric matrices (..., n, n) of packed strict upper triangles (..., n(n-1)/2), with ``diagonal``."""
    packed = np.asarray(packed, dtype=float)
    rows, columns = np.triu_indices(n, 1)
    full = np.empty((*packed.shape[:-1], n, n))
    full[..., rows, columns] = packed
    full[..., columns, rows] = packed
    full[..., np.arange(n), np.arange(n)] = diagonal
    return full


@functools.lru_cache(maxsize=16)
def uniform_weights(n: int) -> np.ndarray:
    """w_j = 1/n as a read-only row (1, n), the kernels' default weights."""
    weights = np.full((1, n), 1.0 / n)
    weights.flags.writeable = False
    return weights


def _weights(weights: np.ndarray | None, n: int) -> np.ndarray:
    return uniform_weights(n) if weights is None else np.asarray(weights, dtype=float).reshape(-1, n)


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def chord_rates_system(packed, w, beta, normalized, factor, out, matrices, vectors):
    """ċ of one system's packed chords (n(n-1)/2,) into ``out``, its n × n work arrays in cache: H = c²,
    K_ij = w_j e^{-β H_ij} with D_i, q_i, P = K H on BLAS, M by rows, then the packed sums. Work arrays
    ``matrices`` (4, n, n) and ``vectors`` (3, n)."""
    n = w.size
    distance, kernel, product, rates = matrices[0], matrices[1], matrices[2], matrices[3]
    den, num, scale = vectors[0], vectors[1], vectors[2]
    p = 0
    for i in range(n):
        distance[i, i] = 0.0
        for k in range(i + 1, n):
            value = packed[p] * packed[p]
            distance[i, k] = value
            distance[k, i] = value
            p += 1
    for i in range(n):
        d_i = 0.0
        q_i = 0.0
        for j in range(n):
            e = w[j] * exp_nonpositive(-beta * distance[i, j])
            kernel[i, j] = e
            d_i += e
            q_i += e * distance[i, j]
        den[i] = d_i
        num[i] = q_i
        scale[i] = attention_velocity(1.0, d_i, normalized, factor)
    np.dot(kernel, distance, product)
    for i in range(n):
        si, di, qi = scale[i], den[i], num[i]
        for k in range(n):
            h = distance[i, k]
            rates[i, k] = si * (qi * (1.0 - h) + di * h - product[i, k])
    p = 0
    for i in range(n):
        for k in range(i + 1, n):
            c = packed[p]
            out[p] = -(rates[i, k] + rates[k, i]) / (2.0 * c) if c > 0 else 0.0
            p += 1


@numba.njit(cache=True)
def _chord_rates(packed, weights, beta, normalized, factor, out):
    """ċ of packed chords (m, n(n-1)/2) into ``out``, one system at a time (:func:`chord_rates_system`)."""
    m = packed.shape[0]
    n = weights.shape[1]
    per_system = weights.shape[0] == m
    matrices = np.empty((4, n, n))
    vectors = np.empty((3, n))
    for s in range(m):
        chord_rates_system(packed[s], weights[s] if per_system else weights[0], beta, normalized, factor, out[s],
                           matrices, vectors)


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def point_rates_system(xs, w, beta, normalized, factor, out, xt, gram, kernel, product):
    """ẋ = s_i (N_i - r'_i x_i) of one system's points (n, d) into ``out``: G = X Xᵀ and N = K X on BLAS. Work
    arrays ``xt`` (d, n), ``gram`` and ``kernel`` (n, n), ``product`` (n, d)."""
    n, d = xs.shape
    for i in range(n):
        for k in range(d):
            xt[k, i] = xs[i, k]
    np.dot(xs, xt, gram)
    for i in range(n):
        d_i = 0.0
        r_i = 0.0
        for j in range(n):
            g = gram[i, j]
            e = w[j] * exp_nonpositive(attention_exponent(beta, g))
            kernel[i, j] = e
            d_i += e
            r_i += e * g
        scale = attention_velocity(1.0, d_i, normalized, factor)
        gram[i, 0] = scale
        gram[i, 1] = r_i
    np.dot(kernel, xs, product)
    for i in range(n):
        scale, r_i = gram[i, 0], gram[i, 1]
        for k in range(d):
            out[i, k] = scale * (product[i, k] - r_i * xs[i, k])


@numba.njit(cache=True)
def _point_rates(x, weights, beta, normalized, factor, out):
    """ẋ of points (m, n, d) into ``out``, one system at a time (:func:`point_rates_system`)."""
    m, n, d = x.shape
    per_system = weights.shape[0] == m
    xt = np.empty((d, n))
    gram = np.empty((n, n))
    kernel = np.empty((n, n))
    product = np.empty((n, d))
    for s in range(m):
        point_rates_system(np.ascontiguousarray(x[s]), weights[s] if per_system else weights[0], beta, normalized,
                           factor, out[s], xt, gram, kernel, product)


def gram_velocity(packed: np.ndarray, n: int, beta: float, normalized: bool,
                  weights: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
    r"""ċ_ik = -(M_ik + M_ki)/(2 c_ik) (i < k) for packed chords c = √(1 - G) of a batch of systems
    (module docstring).

    Parameters
    ----------
    packed : ndarray, shape (systems, n(n-1)/2)
        Strict upper triangles of c = √(1 - G) (:func:`pack_gram` of :func:`gram_chords`).
    n : int
        Tokens per system.
    beta : float
        β ≥ 0.
    normalized : bool
        SA (rows of A sum to 1) or USA (A_ij = w_j e^{β G_ij}).
    weights : ndarray, shape (n,) or (systems, n), optional
        Token weights w_j (default 1/n each).
    out : ndarray, optional
        Where to write the result (C-contiguous, the shape of ``packed``).

    Returns
    -------
    ndarray, shape (systems, n(n-1)/2)
    """
    packed = np.ascontiguousarray(packed, dtype=float)
    out = np.empty_like(packed) if out is None else out
    _chord_rates(packed, _weights(weights, n), float(beta), bool(normalized), velocity_factor(beta, normalized), out)
    return out


def point_velocity(x: np.ndarray, beta: float, normalized: bool, weights: np.ndarray | None = None,
                   out: np.ndarray | None = None) -> np.ndarray:
    r"""ẋ_i = s_i (N_i - r'_i x_i), N = K X, G = X Xᵀ, for unit vectors (systems, n, d).

    Parameters, weights and ``out`` as :func:`gram_velocity`; returns shape (systems, n, d), tangent to the sphere.
    """
    x = np.ascontiguousarray(x, dtype=float)
    out = np.empty_like(x) if out is None else out
    _point_rates(x, _weights(weights, x.shape[1]), float(beta), bool(normalized), velocity_factor(beta, normalized),
                 out)
    return out


@numba.njit(cache=True)
def _angle_rates(theta, weights, beta, normalized, factor, out):
    m, n = theta.shape[0], theta.shape[1]
    per_system = weights.shape[0] == m
    work = np.empty((n + 3, n))
    for s in range(m):
        attention_velocity_kernel(ANGLES, theta[s], weights[s] if per_system else weights[0], beta, normalized, factor,
                                  out[s], work)


def angle_velocity(theta: np.ndarray, beta: float, normalized: bool, weights: np.ndarray | None = None,
                   out: np.ndarray | None = None) -> np.ndarray:
    r"""θ̇_i = s_i Σ_j K_ij sin(θ_j - θ_i) for angles (systems, n, 1) on S¹ (paper 2, (7.1)).

    Parameters, weights and ``out`` as :func:`gram_velocity`; returns shape (systems, n, 1).
    """
    theta = np.ascontiguousarray(theta, dtype=float)
    out = np.empty_like(theta) if out is None else out
    _angle_rates(theta, _weights(weights, theta.shape[1]), float(beta), bool(normalized),
                 velocity_factor(beta, normalized), out)
    return out
