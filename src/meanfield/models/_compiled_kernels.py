"""Compiled kernels of the self-attention weights: the velocity of one system and the energy's double sum.

Both evaluate the weights of :mod:`meanfield.models._attention_weights` (paper 2, arXiv:2312.10794, (SA),
(USA), (3.2), (3.5); on S¹ (7.1)), the exponent and the SA/USA rule inlined (:func:`attention_exponent`,
:func:`attention_velocity`), with particles x_j of weights w_j and the exponent shifted by -β so that no
term overflows:

    N_i = Σ_j w_j e^{β(<x_i,x_j> - 1)} x_j,   D_i = Σ_j w_j e^{β(<x_i,x_j> - 1)},
    SA:  ẋ_i = P⊥_{x_i} N_i / D_i,            USA: ẋ_i = e^β P⊥_{x_i} N_i,
    S = Σ_ij w_i w_j e^{β(<x_i,x_j> - 1)}     (the energy E_β = e^β S/(2β)).

The loops are compiled so that the compiler vectorises them (the exponentials by
:func:`meanfield._vector_math.exp_nonpositive`, relative error ≤ 2.3e-16). On S¹ the state is the angles,
<x_i,x_j> = c_i c_j + s_i s_j and sin(θ_j - θ_i) = c_i s_j - s_i c_j with c = cos θ, s = sin θ (n sine-cosine
pairs per evaluation, none per pair), and full rows of n exponentials are cheaper vectorised than the
n(n-1)/2 pairs scalar. On S^{d-1} the Gram entries are computed once per pair (above d = 16) or by rows.

``code`` selects the state: :data:`meanfield.domains._geometry.ANGLES` (angles (n, 1)) or ``POINTS``
(unit vectors (n, d)).
"""

from __future__ import annotations

import numba
import numpy as np

from ..domains._geometry import ANGLES
from .._vector_math import LOOP_FASTMATH, cos_sin, exp_nonpositive, sincos
from ._attention_weights import attention_exponent, attention_velocity

__all__ = ["attention_velocity_kernel", "kernel_sums"]


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def _circle_velocity(theta, w, beta, normalized, factor, out, work):
    """θ̇ of one system of angles ``theta`` (n, 1) into ``out`` (n, 1); ``work`` (≥ 2, n)."""
    n = theta.shape[0]
    cs, sn = work[0], work[1]
    for i in range(n):
        sn[i], cs[i] = sincos(theta[i, 0])
    for i in range(n):
        ci, si = cs[i], sn[i]
        acc_s, acc_d = 0.0, 0.0
        for j in range(n):  # full rows: branch-free, vectorised exponentials
            wj_e = w[j] * exp_nonpositive(attention_exponent(beta, ci * cs[j] + si * sn[j]))
            acc_s += wj_e * (ci * sn[j] - si * cs[j])  # sin(θ_j - θ_i)
            acc_d += wj_e
        out[i, 0] = attention_velocity(acc_s, acc_d, normalized, factor)


#: up to this dimension the Gram matrix is built by rows (vectorised over j), above it by pair dot products
_GRAM_BY_ROWS_MAX_D = 16


@numba.njit(cache=True, fastmath=LOOP_FASTMATH)
def _sphere_velocity(x, w, beta, normalized, factor, out, work):
    """ẋ = P⊥_x N / D (SA) or e^β P⊥_x N (USA) of one system of unit vectors ``x`` (n, d) into ``out``;
    ``work`` (≥ n + d, n) holds the kernel matrix and xᵀ (so that every inner loop runs over j)."""
    n, d = x.shape
    kernel = work[:n]
    xt = work[n:n + d]
    for i in range(n):
        for k in range(d):
            xt[k, i] = x[i, k]
    if d <= _GRAM_BY_ROWS_MAX_D:
        for i in range(n):
            for j in range(n):
                kernel[i, j] = 0.0
            for k in range(d):
                xik = x[i, k]
                for j in range(n):
                    kernel[i, j] += xik * xt[k, j]
    else:
        for i in range(n):
            kernel[i, i] = 1.0  # |x_i|² (unit vectors)
            for j in range(i + 1, n):
                g = 0.0
                for k in range(d):
                    g += x[i, k] * x[j, k]
                kernel[i, j] = g
                kernel[j, i] = g
    for i in range(n):
        for j in range(n):
            kernel[i, j] = w[j] * exp_nonpositive(attention_exponent(beta, kernel[i, j]))
    for i in range(n):
        den = 0.0
        for j in range(n):
            den += kernel[i, j]
        g = 0.0
        for k in range(d):
            acc = 0.0
            for j in range(n):
                acc += kernel[i, j] * xt[k, j]
            out[i, k] = acc
            g += x[i, k] * acc
        scale = attention_velocity(1.0, den, normalized, factor)  # 1/D_i (SA) or e^β (USA)
        for k in range(d):
            out[i, k] = scale * (out[i, k] - g * x[i, k])


@numba.njit(cache=True)
def attention_velocity_kernel(code, x, w, beta, normalized, factor, out, work):
    """The velocity of one system into ``out`` (angle rates (n, 1) on S¹, ambient components (n, d) on the
    sphere); ``work`` of shape (≥ n + d + 2, n); ``factor`` = e^β for USA (ignored by SA)."""
    if code == ANGLES:
        _circle_velocity(x, w, beta, normalized, factor, out, work)
    else:
        _sphere_velocity(x, w, beta, normalized, factor, out, work)


@numba.njit(cache=True, parallel=True, fastmath=LOOP_FASTMATH)
def kernel_sums(states: np.ndarray, weights: np.ndarray, circle: bool, beta: float) -> np.ndarray:
    """Σ_ij w_i w_j e^{β(<x_i,x_j> - 1)} per configuration.

    On S¹ full rows (branch-free, vectorised exponentials); elsewhere each Gram
    entry once per pair, the diagonal contributing Σ_i w_i².
    """
    n_conf, n, m = states.shape
    out = np.zeros(n_conf)
    for s in numba.prange(n_conf):
        x = states[s]
        w = weights[s]
        total = 0.0
        inner = np.empty(n)
        if circle:
            cs, sn = cos_sin(x)
            for i in range(n):
                acc = 0.0
                for j in range(n):
                    acc += w[j] * exp_nonpositive(attention_exponent(beta, cs[i] * cs[j] + sn[i] * sn[j]))
                total += w[i] * acc
        else:
            for i in range(n):
                total += w[i] * w[i]
                for j in range(i + 1, n):
                    g = 0.0
                    for k in range(m):
                        g += x[i, k] * x[j, k]
                    inner[j] = g
                acc = 0.0
                for j in range(i + 1, n):
                    acc += w[j] * exp_nonpositive(attention_exponent(beta, inner[j]))
                total += 2.0 * w[i] * acc
        out[s] = total
    return out
