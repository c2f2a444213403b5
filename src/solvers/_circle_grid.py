"""Uniform grid on the circle S¹ = R/2πZ."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["CircleGrid"]


@dataclass(frozen=True)
class CircleGrid:
    """Uniform grid of ``n`` nodes θ_j = 2πj/n, j = 0, …, n-1, on S¹.

    The same nodes serve as collocation points of the Fourier pseudo-spectral
    scheme and as cell centres of the finite-volume scheme (cells
    [θ_j - h/2, θ_j + h/2], h = 2π/n). Quadrature is the trapezoidal rule,
    exact for trigonometric polynomials of degree < n:

        ∫ f dθ ≈ h Σ_j f(θ_j).

    Fourier coefficients are normalised as f̂_k = (1/2π) ∫ f(θ) e^{-ikθ} dθ
    ≈ (1/n) Σ_j f(θ_j) e^{-ikθ_j}, so that f(θ) = Σ_k f̂_k e^{ikθ}.
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
