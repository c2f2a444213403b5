"""Uniform grid on the circle S¹ = R/2πZ."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["CircleGrid"]


@dataclass(frozen=True)
class CircleGrid:
    r"""Uniform grid of ``n`` nodes θ_j = 2πj/n, j = 0, …, n-1, on S¹.

    The same nodes serve as collocation points of the Fourier pseudo-spectral
    scheme and as cell centres of the finite-volume scheme (cells
    [θ_j - h/2, θ_j + h/2], h = 2π/n). Quadrature is the trapezoidal rule,
    exact for trigonometric polynomials of degree < n::

        ∫ f dθ ≈ h Σ_j f(θ_j).

    Fourier coefficients are normalised as f̂_k = (1/2π) ∫ f(θ) e^{-ikθ} dθ
    ≈ (1/n) Σ_j f(θ_j) e^{-ikθ_j}, so that f(θ) = Σ_k f̂_k e^{ikθ}.

    Parameters
    ----------
    n : int
        Number of nodes (≥ 4).

    Raises
    ------
    TypeError
        ``n`` not an integer.
    ValueError
        n < 4.

    Notes
    -----
    With h = 2π/n, the quadrature and the Fourier coefficients are

    .. math::

        \int_0^{2\pi} f(\theta)\,d\theta \approx h \sum_{j=0}^{n-1} f(\theta_j),
        \qquad
        \hat f_k = \frac{1}{2\pi}\int_0^{2\pi} f(\theta)\, e^{-ik\theta}\,d\theta
        \approx \frac{1}{n}\sum_{j=0}^{n-1} f(\theta_j)\, e^{-ik\theta_j},

    the first exact for trigonometric polynomials of degree < n.

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(8)
    >>> grid.theta[:3].round(6), grid.wavenumbers
    (array([0.      , 0.785398, 1.570796]), array([0, 1, 2, 3, 4]))

    The weights sum to |S¹| = 2π, and the rule integrates cos²θ (degree 2 < 8) exactly, to π:

    >>> print(f"{grid.weights.sum() / np.pi:.12f}")
    2.000000000000
    >>> print(f"{grid.weights @ np.cos(grid.theta) ** 2 / np.pi:.12f}")
    1.000000000000
    """

    n: int

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)):
            raise TypeError(f"n must be an integer number of grid nodes, got {self.n!r}")
        if self.n < 4:
            raise ValueError(f"n must be at least 4 grid nodes, got {self.n}")

    @property
    def spacing(self) -> float:
        """Node spacing h = 2π/n."""
        return 2 * np.pi / self.n

    @cached_property
    def theta(self) -> np.ndarray:
        """Nodes θ_j = 2πj/n, shape (n,)."""
        return self.spacing * np.arange(self.n)

    @cached_property
    def weights(self) -> np.ndarray:
        """Trapezoidal weights h, shape (n,), summing to 2π."""
        return np.full(self.n, self.spacing)

    @cached_property
    def wavenumbers(self) -> np.ndarray:
        """Non-negative wavenumbers k = 0, …, n//2 of the real FFT."""
        return np.arange(self.n // 2 + 1)
