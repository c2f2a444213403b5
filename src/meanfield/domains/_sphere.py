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
from typing import Any, ClassVar

import numpy as np
import xarray as xr

from solvers import Scheme, SphereGrid, degree_tail, schemes_for

from ..io._conventions import COORD_ATTRS, geographic_coords
from .._validate import as_real_array, check_allocation, check_nonnegative, check_positive_int
from ._funk_hecke import von_mises_fisher_values
from ._geometry import SphereGeometry
from ._sampling import law_sample

__all__ = ["Sphere", "exponential_wave"]

_UNIT_TOL = 1e-8


def exponential_wave(domain: Any, modes: int, rng: np.random.Generator) -> np.ndarray:
    """f(x) = Σ_{j=1}^{K} a_j e^{2<x, v_j>} at the nodes with v_j uniform unit vectors and a_j standard
    normal, its mean (by the domain's quadrature) removed: a smooth random perturbation on S^{d-1}."""
    directions = rng.standard_normal((modes, domain.points.shape[-1]))
    directions /= np.linalg.norm(directions, axis=-1, keepdims=True)
    wave = np.exp(2.0 * domain.points @ directions.T) @ rng.standard_normal(modes)
    return wave - np.sum(wave * domain.weights) / domain.area


@dataclass(frozen=True)
class Sphere:
    r"""The sphere S² with the Gauss–Legendre grid of band limit ``lmax``.

    Parameters
    ----------
    lmax : int
        Band limit (≥ 2): (lmax + 1) latitude rings × (2 lmax + 2) longitudes.
        Quadrature Σ W_ij f(x_ij) is exact for polynomials of degree ≤ 2 lmax + 1.

    Raises
    ------
    TypeError
        ``lmax`` not an integer.
    ValueError
        lmax < 2, or a grid too large to allocate.

    Notes
    -----
    Densities are taken with respect to the area measure (|S²| = 4π). The node
    of latitude λ_i (Gauss–Legendre in sin λ, rings from north to south) and
    longitude φ_j = 2πj/(2 lmax + 2) is

        x_ij = (cos λ_i cos φ_j, cos λ_i sin φ_j, sin λ_i),   ∫ f dσ ≈ Σ_ij W_ij f(x_ij),

    .. math::

        x_{ij} = (\cos\lambda_i\cos\phi_j,\ \cos\lambda_i\sin\phi_j,\ \sin\lambda_i),
        \qquad \int_{\mathbb{S}^2} f\,\mathrm{d}\sigma \approx \sum_{i,j} W_{ij}\, f(x_{ij}),

    with ``weights`` W_ij summing to 4π.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> s = mf.Sphere(15)
    >>> s.shape, s.points.shape
    ((16, 32), (16, 32, 3))
    >>> print(f"{s.weights.sum():.6f}")                              # |S²| = 4π
    12.566371
    >>> print(f"{np.sum(s.points[..., 2] ** 2 * s.weights):.6f}")    # ∫ z² dσ = 4π/3
    4.188790
    """

    lmax: int
    kind: ClassVar[str] = "sphere"

    def __post_init__(self) -> None:
        check_positive_int("lmax", self.lmax, minimum=2)
        check_allocation("lmax", self.lmax, 8.0 * (self.lmax + 1) * (2 * self.lmax + 2),
                         "one density on its (lmax + 1) x (2 lmax + 2) grid (8 bytes a node)")

    @cached_property
    def grid(self) -> SphereGrid:
        """The :class:`solvers.SphereGrid` of this domain."""
        return SphereGrid(int(self.lmax))

    @property
    def geometry(self) -> SphereGeometry:
        """The space particles of this domain move in: unit vectors of R³."""
        return SphereGeometry(3)

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
    def moment_points(self) -> np.ndarray:
        """Node vectors whose quadrature gives ∫ x ρ dσ: the points themselves."""
        return self.points

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

    def node_values(self, f: Callable[..., np.ndarray]) -> np.ndarray:
        """``f(lat, lon)`` on the (nlat, nlon) mesh of the nodes."""
        return f(*np.meshgrid(self.lat, self.lon, indexing="ij"))

    def field(self, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """A function of the points x ∈ S² (unit vectors (…, 3)) on the grid: ``f(points)`` at the nodes."""
        return f(self.points)

    @property
    def band_limit(self) -> int:
        """The largest degree the grid represents, lmax."""
        return int(self.lmax)

    def von_mises_values(self, loc: Any, kappa: float) -> tuple[np.ndarray, dict[str, Any]]:
        """Node values of the von Mises–Fisher density ρ(x) = κ e^{κ<loc, x>} / (4π sinh κ) (κ = 0: 1/4π)
        and its law.

        Evaluated as e^{κ(<loc, x> - 1)} · 2κ / (4π (1 - e^{-2κ})) so that κ
        up to several hundred neither overflows nor loses accuracy.

        Parameters
        ----------
        loc : array_like, shape (3,), or None
            Mean direction, a unit vector (|loc| = 1 within 1e-8); None: e_3.
        kappa : float
            Concentration κ ≥ 0.
        """
        kappa = check_nonnegative("kappa", kappa)
        mu = as_real_array("loc", [0.0, 0.0, 1.0] if loc is None else loc, finite=False)
        if mu.shape != (3,) or not np.all(np.isfinite(mu)):
            raise ValueError(f"loc must be a finite unit vector of shape (3,) on S², got {loc!r}")
        if abs(np.linalg.norm(mu) - 1) > _UNIT_TOL:
            raise ValueError(f"loc must be a unit vector (|loc| = 1 within {_UNIT_TOL}), got |loc| = {np.linalg.norm(mu)!r}")
        values = von_mises_fisher_values(self.points @ mu, kappa, 3)
        return values, {"name": "von_mises", "loc": mu, "kappa": kappa}

    def von_mises_remedy(self, kappa: float, tolerance: float) -> str:
        """How to resolve a von Mises density too concentrated for this grid."""
        return "use a finer grid (a larger lmax)"

    def perturbation(self, modes: int, rng: np.random.Generator, spectrum: str) -> np.ndarray:
        """Node values of a random perturbation (:func:`meanfield.perturbed_uniform`): "smooth":
        :func:`exponential_wave`; "flat": f = Σ_{l=1}^{K} Σ_m a_lm Y_lm with Gaussian a_lm (an isotropic
        field) scaled to unit degree norm (:meth:`solvers.SphereGrid.degree_norms`) for every l ≤ K."""
        if spectrum != "flat":
            return exponential_wave(self, modes, rng)
        grid = self.grid
        if modes > grid.lmax:
            raise ValueError(f"modes must be <= lmax = {grid.lmax} for spectrum='flat' on this sphere, got {modes}")
        degrees, orders = grid.degrees, grid.orders
        # isotropic Gaussian field: a_l0 ~ N(0, 1), Re a_lm, Im a_lm ~ N(0, 1/2) for m > 0
        coeffs = np.where(orders > 0, (rng.standard_normal(grid.nalm) + 1j * rng.standard_normal(grid.nalm))
                          / np.sqrt(2), rng.standard_normal(grid.nalm))
        coeffs[(degrees == 0) | (degrees > modes)] = 0.0
        norms = grid.degree_norms(coeffs)
        coeffs /= np.where(norms > 0, norms, 1.0)[degrees]
        return grid.synthesis(coeffs)

    def sample(self, values: np.ndarray, law: dict, n: int, rng: np.random.Generator, quantile: bool) -> np.ndarray:
        """n iid points (n, 3) of the law the density was made from ("uniform", "von_mises")."""
        if quantile:
            raise ValueError("method='quantile' is available on the circle only, got a density on a Sphere")
        return law_sample(law, n, 3, rng, "a Sphere")

    # ------------------------------------------------------------------ transport and moments
    def transport_atoms(self, masses: np.ndarray, cells: bool) -> tuple[SphereGeometry, np.ndarray, np.ndarray]:
        """The measure Σ_j m_j δ_{x_j} of node masses m_j = ρ_j w_j: (geometry, points (1, N, 3), masses (1, N))."""
        return self.geometry, np.asarray(self.points, dtype=float).reshape(1, -1, 3), masses.reshape(1, -1)

    def moments(self, masses: np.ndarray, n_modes: int) -> list[np.ndarray]:
        """The mean Σ_j m_j x_j and the second moment Σ_j m_j x_j x_jᵀ (for :meth:`SphereGeometry.moment_gaps`)."""
        points = self.points.reshape(-1, 3)
        masses = masses.ravel()
        return [masses @ points, np.einsum("j,ja,jb->ab", masses, points, points)]

    # ------------------------------------------------------------------ PDE
    @property
    def schemes(self) -> dict[str, type[Scheme]]:
        """The schemes of :mod:`solvers` on this grid, by method name."""
        return schemes_for(self.grid)

    def method_hint(self) -> str:
        """What to change to reach a method this grid has not (none: both are here)."""
        return ""

    def degree_norms(self, values: np.ndarray) -> np.ndarray:
        """‖ρ_l‖ = (|ρ_l0|² + 2 Σ_{m>0} |ρ_lm|²)^{1/2}, the L² norm of the degree-l part of node values
        (..., nlat, nlon), ρ_lm = ∫ ρ conj(Y_lm) dσ (:meth:`solvers.SphereGrid.degree_norms`); shape
        (..., lmax + 1)."""
        return self.grid.degree_norms(self.grid.analysis(np.asarray(values, dtype=float)))

    def spectral_tail(self, values: np.ndarray) -> float:
        """τ = max_{l > ⌊2 lmax/3⌋} ‖ρ_l‖ / ‖ρ_0‖ of node values (species, nlat, nlon), the largest over species
        (:meth:`degree_norms`, :func:`solvers.degree_tail`)."""
        return float(np.max(degree_tail(np.atleast_2d(self.degree_norms(values)))))

    def resolution_words(self) -> tuple[str, str, str]:
        """(the grid, the tail expression, a grid twice as fine) for messages."""
        lmax = self.grid.lmax
        return f"on S² with lmax={lmax}", f"max_(l > {2 * lmax // 3}) |rho_l|/|rho_0|", f"lmax={2 * lmax + 1}"

    # ------------------------------------------------------------------ results
    def dataset_coords(self) -> dict[str, tuple[str, np.ndarray, dict[str, str]]]:
        """``lat``, ``lon`` in radians and ``latitude``, ``longitude`` in degrees (CF), with their units."""
        return {"lat": ("lat", self.lat, COORD_ATTRS["lat"]), "lon": ("lon", self.lon, COORD_ATTRS["lon"]),
                **geographic_coords(self.coords)}

    @classmethod
    def from_dataset(cls, ds: xr.Dataset) -> Sphere | None:
        """The Sphere of a result whose ``density`` is over (time, lat, lon), checked against its nodes; None
        for a result on another grid."""
        if set(ds["density"].dims) - {"time"} != {"lat", "lon"}:
            return None
        domain = cls(int(ds.sizes["lat"]) - 1)
        if not (np.allclose(ds["lat"].values, domain.lat, atol=1e-12)
                and np.allclose(ds["lon"].values, domain.lon, atol=1e-12)):
            raise ValueError("lat/lon must be the Gauss–Legendre grid of a Sphere")
        return domain
