"""Reference γ(t) of Theorem 6.8 (paper 2) shared by the particle tests (imported, not collected).

Orthogonal initial tokens x_1, …, x_n (n ≤ d) keep equal pairwise inner products
γ(t), γ(0) = 0, solving (6.9) for SA and (6.10) for USA. The reference is the
library's :func:`meanfield.equiangular_gamma` (DOP853 at rtol 1e-12; it is
checked against quadrature of the separable ODE in tests/test_phase_diagram.py).
"""

from __future__ import annotations

import numpy as np

from meanfield import equiangular_gamma


def gamma(beta: float, n: int, times, normalized: bool = True) -> np.ndarray:
    """γ at ``times`` (times[0] ≥ 0, increasing)."""
    return equiangular_gamma(beta, n, times, normalized=normalized)
