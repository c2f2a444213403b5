"""The sphere S² ⊂ R³ with a Gauss–Legendre grid of band limit lmax.

Coordinates: latitude λ ∈ (-π/2, π/2) (node rings ordered from north to
south, so ``lat`` decreases) and longitude φ ∈ [0, 2π); the node
x = (cos λ cos φ, cos λ sin φ, sin λ). Densities are node values with
respect to the area measure (∫ ρ dσ = 1, |S²| = 4π).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from solvers import SphereGrid

from ..models._kernels import von_mises_fisher_values
from .._validate import check_nonnegative, check_positive_int

__all__ = ["Sphere"]

_UNIT_TOL = 1e-8


@dataclass(frozen=True)
class Sphere:
    """The sphere S² with the Gauss–Legendre grid of band limit ``lmax``.

    Parameters
    ----------
    lmax : int
        Band limit (≥ 2): (lmax + 1) latitude rings × (2 lmax + 2) longitudes.
        Quadrature Σ W_ij f(x_ij) is exact for polynomials of degree ≤ 2 lmax + 1.

    Examples
    --------
    >>> import meanfield as mf
    >>> s = mf.Sphere(15)
    >>> s.shape, round(float(s.weights.sum()), 12) == round(4 * 3.141592653589793, 12)
    ((16, 32), True)
    """

    lmax: int
    kind = "sphere"

    def __post_init__(self) -> None:
        check_positive_int("lmax", self.lmax, minimum=2)

    @cached_property
    def grid(self) -> SphereGrid:
        """The :class:`solvers.SphereGrid` of this domain."""
        return SphereGrid(int(self.lmax))

    @property
    def dimension(self) -> int:
        """Ambient dimension d = 3 (S² ⊂ R³)."""
        return 3

    @property
    def shape(self) -> tuple[int, int]:
        """(nlat, nlon) = (lmax + 1, 2 lmax + 2)."""
        return self.grid.shape

    @property
    def lat(self) -> np.ndarray:
        """Latitudes of the rings, in (-π/2, π/2), decreasing (north to south), shape (nlat,)."""
        return self.grid.lat

    @property
    def lon(self) -> np.ndarray:
        """Longitudes 2πj/nlon ∈ [0, 2π), shape (nlon,)."""
        return self.grid.lon

    @property
    def points(self) -> np.ndarray:
        """Unit vectors (cos λ cos φ, cos λ sin φ, sin λ) of the nodes, shape (nlat, nlon, 3)."""
        return self.grid.points

    @property
    def weights(self) -> np.ndarray:
        """Gauss–Legendre weights of the area measure, shape (nlat, nlon), summing to 4π."""
        return self.grid.weights

    @property
    def coords(self) -> dict[str, np.ndarray]:
        """``{"lat": lat, "lon": lon}`` in radians."""
        return {"lat": self.lat, "lon": self.lon}

    @property
    def area(self) -> float:
        """|S²| = 4π."""
        return 4 * np.pi

    def convolve(self, values: np.ndarray, multipliers: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """(f ⋆ ρ)(x) = ∫ f(<x, y>) ρ(y) dσ(y) at the nodes, by spherical-harmonic transforms.

        ``multipliers(l)`` are the Funk–Hecke coefficients of the zonal kernel
        f at degrees l ≥ 0: (f ⋆ ρ)_lm = f̂_l ρ_lm. ``values`` has shape
        (..., nlat, nlon). Exact for ρ of degree ≤ lmax.
        """
        values = np.asarray(values, dtype=float)
        if values.shape[-2:] != self.shape:
            raise ValueError(f"values must end with the grid's shape {self.shape}, got {values.shape}")
        coeffs = self.grid.analysis(values)
        coeffs = coeffs * np.asarray(multipliers(self.grid.degrees))
        return self.grid.synthesis(coeffs)

    def von_mises(self, loc: Any, kappa: float) -> Any:
        """Von Mises–Fisher density ρ(x) = κ e^{κ<loc, x>} / (4π sinh κ) (κ = 0: 1/4π).

        Evaluated as e^{κ(<loc, x> - 1)} · 2κ / (4π (1 - e^{-2κ})) so that κ
        up to several hundred neither overflows nor loses accuracy.

        Parameters
        ----------
        loc : array_like, shape (3,)
            Mean direction, a unit vector (|loc| = 1 within 1e-8).
        kappa : float
            Concentration κ ≥ 0.
        """
        from ..measures._measure import Density

        mu = np.asarray(loc, dtype=float)
        if mu.shape != (3,) or not np.all(np.isfinite(mu)):
            raise ValueError(f"loc must be a finite unit vector of shape (3,) on S², got {loc!r}")
        if abs(np.linalg.norm(mu) - 1) > _UNIT_TOL:
            raise ValueError(f"loc must be a unit vector (|loc| = 1 within {_UNIT_TOL}), got |loc| = {np.linalg.norm(mu)!r}")
        kappa_f = check_nonnegative("kappa", kappa)
        values = von_mises_fisher_values(self.points @ mu, kappa_f, 3)
        return Density(self, values, {"name": "von_mises", "loc": mu, "kappa": kappa_f})
