"""Domains on which densities live, and the protocol they share.

Every domain has

* ``kind``: "circle", "sphere" or "zonal" (key into :data:`solvers.SCHEMES`);
* ``dimension``: ambient dimension d of S^{d-1} ⊂ R^d;
* ``shape``: shape of a density's node values;
* ``points``: unit vectors of the nodes, shape ``(*shape, d)``
  (for :class:`ZonalSphere`, in the plane of e_1 and e_d);
* ``weights``: quadrature weights of the area measure, shape ``shape``,
  summing to |S^{d-1}|;
* ``coords``: ``{name: values}`` of the node coordinates (for xarray);
* ``grid``: the :mod:`solvers` grid object;
* ``convolve(values, multipliers)``: (f ⋆ ρ)(x) = ∫ f(<x, y>) ρ(y) dσ(y) at
  the nodes, for a zonal kernel f given by its Funk–Hecke multipliers
  (a callable of integer degrees l ≥ 0; on S¹ the degree is |k|).

Densities are taken with respect to the area measure: ∫ ρ dσ = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from collections.abc import Callable
from typing import Protocol

import numpy as np

from solvers import CircleGrid, sphere_area

from .._validate import check_positive_int

__all__ = ["Domain", "Circle", "moment_points", "sphere_area"]


def moment_points(domain: Domain) -> np.ndarray:
    """Node vectors whose quadrature gives the first moment ∫ x ρ dσ.

    ``domain.points`` except on a :class:`ZonalSphere`, whose node stands for
    a whole (d-2)-sphere of points with mean cos ϑ e_d.
    """
    return getattr(domain, "moment_points", domain.points)


class Domain(Protocol):
    """What every domain provides (see the module docstring)."""

    kind: str

    @property
    def dimension(self) -> int: ...

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def points(self) -> np.ndarray: ...

    @property
    def weights(self) -> np.ndarray: ...

    @property
    def coords(self) -> dict[str, np.ndarray]: ...

    @property
    def area(self) -> float: ...

    def convolve(self, values: np.ndarray, multipliers: Callable[[np.ndarray], np.ndarray]) -> np.ndarray: ...


@dataclass(frozen=True)
class Circle:
    """The circle S¹ with a uniform grid of ``n`` nodes θ_j = 2πj/n.

    Parameters
    ----------
    n : int
        Number of grid nodes (≥ 4). Densities are node values; quadrature is
        the trapezoidal rule with weights 2π/n (spectrally accurate for smooth
        periodic functions).

    Examples
    --------
    >>> import meanfield as mf
    >>> mf.Circle(256).theta.shape
    (256,)
    """

    n: int
    kind = "circle"

    def __post_init__(self) -> None:
        check_positive_int("n", self.n, minimum=4)

    @cached_property
    def grid(self) -> CircleGrid:
        """The :class:`solvers.CircleGrid` of this domain."""
        return CircleGrid(int(self.n))

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
