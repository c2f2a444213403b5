"""Initial densities used by the command line and the validation scripts."""

from __future__ import annotations

import numpy as np

from ._measures import Density, density
from ._validate import as_rng, check_positive_int

__all__ = ["perturbed_uniform"]


def perturbed_uniform(
    domain, amplitude: float = 0.01, modes: int = 8, seed: int | np.random.Generator | None = 0
) -> Density:
    """The uniform density on S¹ with a small random trigonometric perturbation:

        ρ_0(θ) = (1/2π) (1 + ε Σ_{k=1}^{K} (a_k cos kθ + b_k sin kθ) / k),

    a_k, b_k standard normal (seeded), ε = ``amplitude`` times the inverse of
    the largest absolute value of the sum, so that min ρ_0 = (1 - ε)/2π > 0.
    """
    if domain.kind != "circle":
        raise ValueError(f"perturbed_uniform is defined on the circle, got a {domain.kind} domain")
    if not (0 <= amplitude < 1):
        raise ValueError(f"amplitude must satisfy 0 <= amplitude < 1, got {amplitude!r}")
    check_positive_int("modes", modes)
    rng = as_rng(seed)
    k = np.arange(1, modes + 1)
    a, b = rng.standard_normal((2, modes))
    theta = domain.theta
    wave = (np.cos(np.outer(theta, k)) * a + np.sin(np.outer(theta, k)) * b) @ (1.0 / k)
    scale = np.max(np.abs(wave))
    rho = density(domain, (1 + amplitude * wave / scale) / (2 * np.pi))
    return Density(domain, rho.values, {"name": "perturbed_uniform", "amplitude": amplitude, "modes": modes})
