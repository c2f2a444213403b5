r"""Kuramoto oscillators on a graph: velocity, energy and Jacobian from sparse sums over the edges.

With the coupling operator B = diag(1/c) A diag(w) of the graph (:mod:`._graph`) and the coupling function
h(u - α) = Σ_{|k| ≤ K_h} c_k e^{iku} (c_k = ĥ_k e^{-ikα}, h real),

    θ̇_i = ω_i + K Σ_j B_ij h(θ_j - θ_i - α) = ω_i + K [c_0 s_i + 2 Re Σ_{k=1}^{K_h} c_k e^{-ikθ_i} Z_{k,i}],
    Z_{k,i} = Σ_j B_ij e^{ikθ_j},   s_i = Σ_j B_ij,

so one evaluation costs K_h sparse products, O(K_h · entries) (for h = sin one product: the local order
parameter Z_{1,i} of every node). The all-to-all model is B_ij = w_j (Z_k the Fourier moments of
:mod:`._kuramoto_moments`).

Energy (an odd h, an undirected graph, normalisation "n"): with G' = h(-·), Ĝ_k its coefficients,

    E = (1/2) Σ_ij w_i w_j A_ij G(θ_i - θ_j) = Σ_{k ≥ 1} Ĝ_k Re Σ_i w_i e^{ikθ_i} conj((A (w e^{ikθ}))_i),

which the dynamics increases (θ̇_i = (1/w_i) ∂E/∂θ_i); K Σ_{i,j} cos(θ_i - θ_j)/(2n²) over the edges for
h = sin (paper 2, (7.3) with A inserted).

Jacobian: ∂θ̇_i/∂θ_j = K B_ij h'(θ_j - θ_i - α) =: S_ij (j ≠ i) and ∂θ̇_i/∂θ_i = -Σ_{j≠i} S_ij, i.e.
J = S - diag(S 1) (a loop's term h(-α) is constant), sparse with the pattern of A plus the diagonal.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from ._graph_operator import CouplingOperator

__all__ = ["NetworkKuramotoVelocity", "coupling_derivative", "network_energy", "network_jacobian"]


class NetworkKuramotoVelocity:
    r"""θ̇_i = ω_i + K [c_0 s_i + 2 Re Σ_k c_k e^{-ikθ_i} (B e^{ikθ})_i] for states (systems, n) (module docstring)."""

    path = "edges"
    collapse_rate = 0.0
    fourier_modes = -1

    def __init__(self, coupling: float, coefficients: np.ndarray, frequencies: np.ndarray,
                 operator: CouplingOperator) -> None:
        self.coupling = coupling
        self.coefficients = coefficients
        self.frequencies = frequencies
        self.operator = operator
        self.row_sums = operator.row_sums

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        acc = np.empty(x.shape)
        acc[...] = self.coefficients[0].real * self.row_sums
        z1 = np.exp(1j * x)
        zk = np.ones_like(z1)
        for k in range(1, self.coefficients.size):
            zk = zk * z1
            acc += 2 * np.real(self.coefficients[k] * np.conj(zk) * self.operator(zk))
        return self.frequencies + self.coupling * acc


def network_energy(states: np.ndarray, weights: np.ndarray, adjacency_operator: CouplingOperator,
                   potential: np.ndarray) -> np.ndarray:
    """E = Σ_{k≥1} Ĝ_k Re Σ_i w_i e^{ikθ_i} conj((A (w e^{ikθ}))_i) per system (module docstring).

    ``adjacency_operator`` is A diag(w) (normalisation "n"), ``potential`` the coefficients Ĝ_0, …, Ĝ_{K_h}.
    """
    z1 = np.exp(1j * states)
    zk = np.ones_like(z1)
    total = np.zeros(states.shape[0])
    for k in range(1, potential.size):
        zk = zk * z1
        total += potential[k] * np.real(np.sum(weights * zk * np.conj(adjacency_operator(zk)), axis=-1))
    return total


def coupling_derivative(coefficients: np.ndarray, u: np.ndarray) -> np.ndarray:
    """h'(u - α) = 2 Re Σ_{k≥1} i k c_k e^{iku} for the coefficients c_k of h(u - α)."""
    out = np.zeros(np.shape(u))
    for k in range(1, coefficients.size):
        out += 2 * np.real(1j * k * coefficients[k] * np.exp(1j * k * u))
    return out


def network_jacobian(coupling: float, coefficients: np.ndarray, operator: CouplingOperator,
                     theta: np.ndarray) -> scipy.sparse.csr_array:
    """J = S - diag(S 1), S_ij = K B_ij h'(θ_j - θ_i - α), of one configuration ``theta`` (n,) (module docstring)."""
    matrix = operator.matrix
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    cols = matrix.indices
    values = coupling * matrix.data * coupling_derivative(coefficients, theta[cols] - theta[rows])
    values[rows == cols] = 0.0
    slopes = scipy.sparse.csr_array((values, cols, matrix.indptr), shape=matrix.shape)
    return (slopes - scipy.sparse.diags_array(np.asarray(slopes.sum(axis=1)).ravel())).tocsr()
