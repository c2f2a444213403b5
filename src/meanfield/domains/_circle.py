"""The circle S¹ with a uniform grid of n nodes θ_j = 2πj/n (densities w.r.t. dθ, |S¹| = 2π)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import xarray as xr
from scipy.special import ive

from solvers import CircleGrid, Scheme, degree_tail, schemes_for

from ..io._conventions import COORD_ATTRS
from .._validate import as_real, check_allocation, check_nonnegative, check_positive_int
from ._funk_hecke import von_mises_fisher_values
from ._geometry import CircleGeometry
from ._sampling import circle_sample

__all__ = ["Circle"]

#: sub-atoms per cell when a cell density enters a Wasserstein distance that has no closed form for cells
CELL_SUBATOMS = 16


@dataclass(frozen=True)
class Circle:
    r"""The circle S¹ with a uniform grid of ``n`` nodes θ_j = 2πj/n.

    Parameters
    ----------
    n : int
        Number of grid nodes (≥ 4). Densities are node values; quadrature is
        the trapezoidal rule with weights 2π/n (spectrally accurate for smooth
        periodic functions).

    Raises
    ------
    TypeError
        ``n`` not an integer.
    ValueError
        n < 4, or a grid too large to allocate.

    Notes
    -----
    Densities are taken with respect to dθ (|S¹| = 2π). The nodes, the points
    and the quadrature are

        θ_j = 2πj/n,   x_j = (cos θ_j, sin θ_j),   ∫ f dθ ≈ (2π/n) Σ_j f(θ_j),

    .. math::

        \theta_j = \frac{2\pi j}{n}, \qquad
        \int_0^{2\pi} f(\theta)\,\mathrm{d}\theta \approx \frac{2\pi}{n}\sum_{j=0}^{n-1} f(\theta_j),

    exact for trigonometric polynomials of degree < n.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> circle = mf.Circle(16)
    >>> circle.theta.shape, circle.points.shape
    ((16,), (16, 2))
    >>> print(f"{circle.weights.sum():.6f}")            # |S¹| = 2π
    6.283185
    >>> print(f"{np.sum(np.cos(circle.theta) ** 2 * circle.weights):.6f}")   # ∫ cos²θ dθ = π
    3.141593
    """

    n: int
    kind: ClassVar[str] = "circle"

    def __post_init__(self) -> None:
        check_positive_int("n", self.n, minimum=4)
        check_allocation("n", self.n, 8.0 * self.n, "one density on this grid (8 bytes a node)")

    # ------------------------------------------------------------------ geometry
    @cached_property
    def grid(self) -> CircleGrid:
        """The :class:`solvers.CircleGrid` of this domain."""
        return CircleGrid(int(self.n))

    @property
    def geometry(self) -> CircleGeometry:
        """The space particles of this domain move in: angles on S¹."""
        return CircleGeometry()

    @property
    def dimension(self) -> int:
        """Ambient dimension d = 2 (S¹ ⊂ R²)."""
        return 2

    @property
    def shape(self) -> tuple[int, ...]:
        return (int(self.n),)

    @property
    def theta(self) -> np.ndarray:
        """Nodes θ_j = 2πj/n in [0, 2π), shape (n,)."""
        return self.grid.theta

    @cached_property
    def points(self) -> np.ndarray:
        """Unit vectors (cos θ_j, sin θ_j), shape (n, 2)."""
        return np.stack([np.cos(self.theta), np.sin(self.theta)], axis=-1)

    @property
    def moment_points(self) -> np.ndarray:
        """Node vectors whose quadrature gives ∫ x ρ dσ: the points themselves."""
        return self.points

    @property
    def weights(self) -> np.ndarray:
        """Trapezoidal weights 2π/n, shape (n,), summing to 2π."""
        return self.grid.weights

    @property
    def coords(self) -> dict[str, np.ndarray]:
        return {"theta": self.theta}

    @property
    def area(self) -> float:
        """|S¹| = 2π."""
        return 2 * np.pi

    def convolve(self, values: np.ndarray, multipliers: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """(f ⋆ ρ)(θ) = ∫ f(cos(θ - φ)) ρ(φ) dφ at the nodes, by FFT.

        ``multipliers(k)`` gives the Funk–Hecke (here: 2π × Fourier) multipliers
        of the even kernel at wavenumbers k ≥ 0; ``values`` may carry leading
        axes. Exact for trigonometric polynomials of degree < n/2.
        """
        values = np.asarray(values, dtype=float)
        coeffs = np.fft.rfft(values, axis=-1) / self.n
        coeffs *= np.asarray(multipliers(self.grid.wavenumbers))
        return np.fft.irfft(coeffs, n=self.n, axis=-1) * self.n

    # ------------------------------------------------------------------ densities on the grid
    def node_values(self, f: Callable[..., np.ndarray]) -> np.ndarray:
        """``f(theta)`` at the nodes."""
        return f(self.theta)

    def field(self, f: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """A function of the points x ∈ S¹ (unit vectors (…, 2)) on the grid: ``f(points)`` at the nodes."""
        return f(self.points)

    @property
    def band_limit(self) -> int:
        """The largest wavenumber the grid represents, N//2."""
        return int(self.n) // 2

    def von_mises_values(self, loc: Any, kappa: float) -> tuple[np.ndarray, dict[str, Any]]:
        """Node values of ρ(θ) = e^{κ cos(θ - loc)}/(2π I_0(κ)) (``loc`` an angle, None: 0) and the law."""
        kappa = check_nonnegative("kappa", kappa)
        loc_f = as_real("loc", 0.0 if loc is None else loc, "an angle in radians")
        if not np.isfinite(loc_f):
            raise ValueError(f"loc must be finite, got {loc!r}")
        values = von_mises_fisher_values(np.cos(self.theta - loc_f), kappa, 2)
        return values, {"name": "von_mises", "loc": loc_f, "kappa": kappa}

    def von_mises_remedy(self, kappa: float, tolerance: float) -> str:
        """The grid that resolves a von Mises density of concentration κ: its mass error on n nodes is
        2 Σ_{m≥1} I_{mn}(κ)/I_0(κ), at most ``tolerance`` for the smallest n with 2 I_n/I_0 ≤ tolerance/2."""
        ns = np.arange(1, int(kappa + 64 + 40 * np.sqrt(kappa)))
        enough = ns[2 * ive(ns, kappa) / ive(0, kappa) <= tolerance / 2]
        return f"use Circle(n) with n >= {int(enough[0]) if enough.size else ns[-1]}"

    def perturbation(self, modes: int, rng: np.random.Generator, spectrum: str) -> np.ndarray:
        """Node values of a random perturbation of modes 1 … ``modes`` (:func:`meanfield.perturbed_uniform`):
        "smooth": Σ_k (a_k cos kθ + b_k sin kθ)/k with a_k, b_k standard normal; "flat":
        Σ_k cos(kθ + φ_k) with φ_k uniform."""
        k = np.arange(1, modes + 1)
        if spectrum == "flat":
            phases = rng.uniform(0.0, 2.0 * np.pi, modes)
            return np.cos(np.outer(self.theta, k) + phases).sum(axis=-1)
        a, b = rng.standard_normal((2, modes))
        return (np.cos(np.outer(self.theta, k)) * a + np.sin(np.outer(self.theta, k)) * b) @ (1.0 / k)

    def sample(self, values: np.ndarray, law: dict, n: int, rng: np.random.Generator, quantile: bool) -> np.ndarray:
        """n angles from the density (:func:`meanfield.domains._sampling.circle_sample`)."""
        return circle_sample(self.theta, values, law, n, rng, quantile)

    # ------------------------------------------------------------------ transport and moments
    def transport_atoms(self, masses: np.ndarray, cells: bool) -> tuple[CircleGeometry, np.ndarray, np.ndarray]:
        """The measure Σ_j m_j δ_{θ_j} of node masses m_j = ρ_j w_j, as (geometry, angles, masses), each of
        shape (1, atoms); with ``cells`` each mass spread uniformly over its cell [θ_j - h/2, θ_j + h/2]
        by :data:`CELL_SUBATOMS` sub-atoms at sub-cell midpoints (W_p within h/(2·16) of the cell measure)."""
        theta = np.asarray(self.theta, dtype=float)
        if not cells:
            return self.geometry, theta[None], masses[None]
        h = 2 * np.pi / self.n
        offsets = ((np.arange(CELL_SUBATOMS) + 0.5) / CELL_SUBATOMS - 0.5) * h
        return (self.geometry, (theta[:, None] + offsets).reshape(1, -1),
                np.repeat(masses / CELL_SUBATOMS, CELL_SUBATOMS)[None])

    def subcell_accuracy(self) -> float:
        """Bound h/(2·16) on the change of W_p when a cell density is replaced by its sub-atoms."""
        return float(np.pi / (self.n * CELL_SUBATOMS))

    def moments(self, masses: np.ndarray, n_modes: int) -> list[np.ndarray]:
        """m̂_k = Σ_j m_j e^{ikθ_j}, k = 1, …, ``n_modes`` (for :meth:`CircleGeometry.moment_gaps`)."""
        k = np.arange(1, n_modes + 1)
        return list(np.exp(1j * np.outer(k, self.theta)) @ masses)

    # ------------------------------------------------------------------ PDE
    @property
    def schemes(self) -> dict[str, type[Scheme]]:
        """The schemes of :mod:`solvers` on this grid, by method name."""
        return schemes_for(self.grid)

    def method_hint(self) -> str:
        """What to change to reach a method this grid has not (none: both are here)."""
        return ""

    def degree_norms(self, values: np.ndarray) -> np.ndarray:
        """‖ρ_k‖ = |ρ̂_k| of node values (..., N), the discrete Fourier coefficients ρ̂_k = Σ_j ρ_j e^{-ikθ_j},
        0 ≤ k ≤ N/2 (each e^{±ikθ} on its own); shape (..., N//2 + 1)."""
        return np.abs(np.fft.rfft(np.asarray(values, dtype=float), axis=-1))

    def spectral_tail(self, values: np.ndarray) -> float:
        """τ = max_{k > ⌊2⌊N/2⌋/3⌋} ‖ρ_k‖ / ‖ρ_0‖ of node values (species, N), the largest over species
        (:meth:`degree_norms`, :func:`solvers.degree_tail`)."""
        return float(np.max(degree_tail(np.atleast_2d(self.degree_norms(values)))))

    def resolution_words(self) -> tuple[str, str, str]:
        """(the grid, the tail expression, a grid twice as fine) for messages."""
        n = int(self.n)
        return f"on S¹ with N={n}", f"max_(k > {2 * (n // 2) // 3}) |rho_k|/|rho_0|", f"N={2 * n}"

    # ------------------------------------------------------------------ results
    def dataset_coords(self) -> dict[str, tuple[str, np.ndarray, dict[str, str]]]:
        """The grid coordinates of a result, with their units."""
        return {"theta": ("theta", self.theta, COORD_ATTRS["theta"])}

    @classmethod
    def from_dataset(cls, ds: xr.Dataset) -> Circle | None:
        """The Circle of a result whose ``density`` is over (time, theta), checked against its nodes; None
        for a result on another grid."""
        if tuple(d for d in ds["density"].dims if d != "time") != ("theta",):
            return None
        domain = cls(int(ds.sizes["theta"]))
        if not np.allclose(ds["theta"].values, domain.theta, rtol=0, atol=1e-12):
            raise ValueError("theta must be the uniform grid 2πj/n of a Circle")
        return domain
