"""Reference γ(t) of Theorem 6.8 (paper 2) shared by the particle tests (imported, not collected).

Orthogonal initial tokens x_1, …, x_n (n ≤ d) keep equal pairwise inner products
γ(t), γ(0) = 0, solving (6.9) for SA and (6.10) for USA:

    SA:   γ' = 2 e^{βγ} (1 - γ) ((n - 1) γ + 1) / (e^β + (n - 1) e^{βγ}),
    USA:  γ' = 2 e^{βγ} (1 - γ) ((n - 1) γ + 1) / n.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp


def gamma_rhs(normalized: bool, beta: float, n: int):
    """Right-hand side of (6.9) (``normalized``) or (6.10)."""

    def rhs(t, g):
        core = 2 * np.exp(beta * g) * (1 - g) * ((n - 1) * g + 1)
        if normalized:
            return core / (np.exp(beta) + (n - 1) * np.exp(beta * g))
        return core / n

    return rhs


def gamma(beta: float, n: int, times, normalized: bool = True) -> np.ndarray:
    """γ at ``times`` (times[0] = 0) by DOP853 at rtol 1e-13, atol 1e-14 (error ≲ 1e-12)."""
    times = np.atleast_1d(np.asarray(times, dtype=float))
    return solve_ivp(gamma_rhs(normalized, beta, n), (0.0, times[-1]), [0.0], t_eval=times, rtol=1e-13,
                     atol=1e-14, method="DOP853").y[0]
