"""Initial densities used by the command line and the validation scripts."""

from __future__ import annotations

import numpy as np

from ._measures import Density, density
from ._validate import as_rng, check_positive_int

__all__ = ["perturbed_uniform"]


def perturbed_uniform(
    domain, amplitude: float = 0.01, modes: int = 8, seed: int | np.random.Generator | None = 0
) -> Density:
    """The uniform density with a small, smooth random perturbation.

    On S¹:  ρ_0(θ) = (1/2π) (1 + ε Σ_{k=1}^{K} (a_k cos kθ + b_k sin kθ) / k)
    with a_k, b_k standard normal (seeded). On S^{d-1}:
    ρ_0(x) = |S^{d-1}|⁻¹ (1 + ε f(x)), f(x) = Σ_{j=1}^{K} a_j e^{2<x, v_j>} with
    v_j uniform unit vectors and a_j standard normal, its mean removed. In both
    cases f is scaled to max |f| = 1, so that ρ_0 ≥ (1 - ε)/|S^{d-1}| > 0 with
    ε = ``amplitude`` and K = ``modes``.
    """
    if not (0 <= amplitude < 1):
        raise ValueError(f"amplitude must satisfy 0 <= amplitude < 1, got {amplitude!r}")
    check_positive_int("modes", modes)
    rng = as_rng(seed)
    if domain.kind == "circle":
        k = np.arange(1, modes + 1)
        a, b = rng.standard_normal((2, modes))
        theta = domain.theta
        wave = (np.cos(np.outer(theta, k)) * a + np.sin(np.outer(theta, k)) * b) @ (1.0 / k)
    else:
        directions = rng.standard_normal((modes, domain.points.shape[-1]))
        directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
        wave = np.exp(2.0 * domain.points @ directions.T) @ rng.standard_normal(modes)
        wave -= np.sum(wave * domain.weights) / domain.area
    wave = wave / np.max(np.abs(wave))
    rho = density(domain, (1 + amplitude * wave) / domain.area)
    return Density(domain, rho.values, {"name": "perturbed_uniform", "amplitude": amplitude, "modes": modes})
