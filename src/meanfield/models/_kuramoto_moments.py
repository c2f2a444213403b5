"""Kuramoto velocities of particles from the Fourier moments of their angles.

For h(u) = Σ_{|k| ≤ K_h} ĥ_k e^{iku} (h real), θ̇_i = ω_i + K Σ_j w_j h(θ_j - θ_i) is computed from the K_h
moments Z_k = Σ_j w_j e^{ikθ_j} in O(n K_h).
"""

from __future__ import annotations

import numpy as np

__all__ = ["KuramotoVelocity", "fourier_moments"]


class KuramotoVelocity:
    r"""θ̇_i = ω_i + K [ĥ_0 + 2 Re Σ_{k=1}^{K_h} ĥ_k e^{-ikθ_i} Z_k],  Z_k = Σ_j w_j e^{ikθ_j}.

    This is ω_i + K Σ_j w_j h(θ_j - θ_i) for h(u) = Σ_{|k|≤K_h} ĥ_k e^{iku}
    (h real), computed from the K_h moments in O(n K_h).
    """

    path = "moments"
    collapse_rate = 0.0
    fourier_modes = -1

    def __init__(self, coupling: float, interaction: np.ndarray, frequencies: np.ndarray,
                 weights: np.ndarray) -> None:
        self.coupling = coupling
        self.interaction = interaction
        self.frequencies = frequencies
        self.weights = weights

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        acc = np.full(x.shape, self.interaction[0].real)
        for k, zk, moment in fourier_moments(x, self.weights, self.interaction.size - 1):
            acc += 2 * np.real(self.interaction[k] * np.conj(zk) * moment[..., None])
        return self.frequencies + self.coupling * acc


def fourier_moments(theta: np.ndarray, weights: np.ndarray, k_max: int):
    """Yield (k, e^{ikθ}, Z_k) for k = 1, …, k_max, with Z_k = Σ_j w_j e^{ikθ_j}.

    ``theta`` and ``weights`` of shape (systems, n); e^{ikθ} has that shape and Z_k
    shape (systems,). The powers are built by repeated multiplication (no trigonometric
    calls beyond e^{iθ}).
    """
    z1 = np.exp(1j * theta)
    zk = np.ones_like(z1)
    for k in range(1, k_max + 1):
        zk = zk * z1
        yield k, zk, np.sum(weights * zk, axis=-1)
