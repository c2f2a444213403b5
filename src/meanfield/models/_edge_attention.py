r"""Attention restricted to the edges of a graph: one compiled pass over the CSR rows, O(entries · d).

For a graph with entries b_ij (the coupling operator B of :mod:`._graph`, or the adjacency A diag(w)), scores
s_ij = <l_i, r_j> and values v_j, :func:`edge_sums` forms per row i

    N_i = Σ_j b_ij e^{s_ij - m_i} v_j,     D_i = Σ_j b_ij e^{s_ij - m_i},

over the stored entries j of row i only, with the shift m_i = max_j s_ij over the row (``row_max``: a masked
softmax that cannot overflow) or a constant m (self-attention's β, :func:`attention_exponent`: on the sphere
s_ij = β<x_i, x_j> ≤ β, every weight in (0, 1]). With ``differences`` the values enter as v_j - v_i (a
consensus velocity summed without cancellation, :func:`meanfield.models._attention.consensus_velocity`).

Everything a model restricted to edges needs follows from N and D (shift cancelling in N/D):

* SelfAttention on a graph (paper 2, (SA)/(USA) with A inserted), b_ij = B_ij:
  SA ẋ_i = P⊥_{x_i} N_i/D_i,  USA ẋ_i = e^β P⊥_{x_i} N_i (:class:`EdgeSelfAttention`);
* Attention with weights (Q_h, K_h, V_h) and a mask A: P^h_ij = A_ij e^{β<Q_h x_i, K_h x_j>} / Σ_l (…), the
  softmax over the edges (the causal mask of a decoder is the lower-triangular graph).
"""

from __future__ import annotations

import numba
import numpy as np

from ..domains._geometry import tangent_projection
from .._vector_math import exp_nonpositive
from ._attention_weights import attention_velocity, check_unnormalized_beta, velocity_factor
from ._graph_operator import CouplingOperator

__all__ = ["EdgeSelfAttention", "edge_energy_sums", "edge_sums"]


@numba.njit(cache=True)
def _edge_sums(indptr, indices, data, left, right, values, row_max, shift, differences, num,
               den):  # pragma: no cover - compiled
    n_sys, n, d = left.shape
    dv = values.shape[2]
    width = 0
    for i in range(n):
        width = max(width, indptr[i + 1] - indptr[i])
    scores = np.empty(max(width, 1))
    acc = np.empty(dv)
    for s in range(n_sys):
        for i in range(n):
            start, end = indptr[i], indptr[i + 1]
            top = shift
            if row_max:
                top = -np.inf
            for e in range(start, end):
                j = indices[e]
                score = 0.0
                for c in range(d):
                    score += left[s, i, c] * right[s, j, c]
                scores[e - start] = score
                if row_max and score > top:
                    top = score
            for c in range(dv):
                acc[c] = 0.0
            total = 0.0
            for e in range(start, end):
                j = indices[e]
                weight = data[e] * exp_nonpositive(min(scores[e - start] - top, 0.0))
                total += weight
                if differences:
                    for c in range(dv):
                        acc[c] += weight * (values[s, j, c] - values[s, i, c])
                else:
                    for c in range(dv):
                        acc[c] += weight * values[s, j, c]
            for c in range(dv):
                num[s, i, c] = acc[c]
            den[s, i] = total


def edge_sums(operator: CouplingOperator, left: np.ndarray, right: np.ndarray, values: np.ndarray, *,
              row_max: bool, shift: float = 0.0, differences: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """N (systems, n, dv) and D (systems, n) of the module docstring for scores <left_i, right_j> ((systems, n, d)
    each) and ``values`` (systems, n, dv), over the entries of ``operator``."""
    left = np.ascontiguousarray(left, dtype=float)
    right = np.ascontiguousarray(right, dtype=float)
    values = np.ascontiguousarray(values, dtype=float)
    num = np.empty(values.shape)
    den = np.empty(values.shape[:2])
    _edge_sums(operator.indptr, operator.indices, operator.data, left, right, values, bool(row_max), float(shift),
               bool(differences), num, den)
    return num, den


def edge_energy_sums(adjacency: CouplingOperator, points: np.ndarray, weights: np.ndarray, beta: float) -> np.ndarray:
    """S = Σ_ij w_i w_j A_ij e^{β(<x_i,x_j> - 1)} per system (``adjacency`` the operator A diag(w)); at β = 0
    S = Σ_ij w_i w_j A_ij <x_i, x_j>."""
    if beta == 0:
        field = np.stack([adjacency(np.ascontiguousarray(points[..., c])) for c in range(points.shape[-1])], axis=-1)
        return np.einsum("sn,snd,snd->s", weights, points, field)
    _, den = edge_sums(adjacency, beta * points, points, np.zeros(points.shape[:2] + (0,)), row_max=False,
                       shift=beta)
    return np.sum(weights * den, axis=-1)


class EdgeSelfAttention:
    r"""SA/USA velocities of particles on S¹ (angles) or S^{d-1} restricted to a graph's edges (module docstring):
    SA ẋ_i = P⊥ N_i/D_i, USA ẋ_i = e^β P⊥ N_i (dx_i/ds = P⊥ N_i in s = e^β t, ``time="rescaled"``), with N, D over
    the entries B_ij of the coupling operator."""

    path = "edges"
    fourier_modes = -1

    def __init__(self, beta: float, normalized: bool, operator: CouplingOperator, angles: bool, *,
                 time: str = "t") -> None:
        check_unnormalized_beta(beta, normalized, time)
        self.beta, self.normalized, self.operator, self.angles = beta, normalized, operator, angles
        self.collapse_rate = velocity_factor(beta, normalized, time)

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        points = np.stack([np.cos(x), np.sin(x)], axis=-1) if self.angles else x
        num, den = edge_sums(self.operator, self.beta * points, points, points, row_max=False, shift=self.beta)
        if self.angles:
            rate = points[..., 0] * num[..., 1] - points[..., 1] * num[..., 0]
            return attention_velocity.py_func(rate, den, self.normalized, self.collapse_rate)
        return attention_velocity.py_func(tangent_projection(points, num), den[..., None], self.normalized,
                                          self.collapse_rate)
