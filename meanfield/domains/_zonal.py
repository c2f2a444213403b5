"""Axisymmetric (zonal) measures on S^{d-1}, any d ≥ 3, reduced to the polar angle.

A zonal density depends on x ∈ S^{d-1} only through the polar angle
ϑ = arccos <x, e_d> ∈ [0, π]. Node values are densities with respect to the
area measure of S^{d-1} (∫ ρ dσ = 1), and

    ∫_{S^{d-1}} f dσ = |S^{d-2}| ∫_0^π f(ϑ) sin^{d-2}ϑ dϑ.

The polar-angle marginal of ρ (a probability density on [0, π] w.r.t. dϑ) is
p(ϑ) = |S^{d-2}| sin^{d-2}ϑ ρ(ϑ); for particles x_i it is the law of
ϑ_i = arccos <x_i, e_d>.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import betainc, betaln

from solvers import ZonalCellGrid, ZonalGaussGrid, gegenbauer_table

from ._domain import sphere_area
from ..models._kernels import von_mises_fisher_values
from .._validate import check_nonnegative, check_positive_int

__all__ = ["ZonalSphere", "polar_angles", "polar_wasserstein"]

_UNIT_TOL = 1e-8
_NODES = ("gauss", "cells")


@dataclass(frozen=True)
class ZonalSphere:
    """Zonal (axisymmetric about e_d) densities on S^{d-1} on a grid in the polar angle.

    Parameters
    ----------
    d : int
        Ambient dimension, ≥ 3 (S^{d-1} ⊂ R^d).
    n : int
        Number of nodes (``nodes="gauss"``, ≥ 2) or cells (``nodes="cells"``, ≥ 4).
    nodes : {"gauss", "cells"}
        "gauss": Gauss–Gegenbauer nodes in cos ϑ with the weights of the area
        measure (exact for zonal polynomials of degree < 2n) — the grid of
        ``method="spectral"``. "cells": n uniform cells in ϑ, values are cell
        averages and weights the cell areas — the grid of
        ``method="finite_volume"``.

    Notes
    -----
    ``points`` has shape (n, d): the node x = sin ϑ e_1 + cos ϑ e_d, all other
    components zero (the plane of e_1 and e_d). Memory is n·d floats. A node
    stands for the whole (d-2)-sphere of points at polar angle ϑ, so moments
    ∫ x ρ dσ use ``moment_points`` (cos ϑ e_d), not ``points``.

    Examples
    --------
    >>> import meanfield as mf
    >>> z = mf.ZonalSphere(10, 32)
    >>> z.shape, z.points.shape, round(float(z.weights.sum() / mf.sphere_area(10)), 12)
    ((32,), (32, 10), 1.0)
    """

    d: int
    n: int
    nodes: str = "gauss"
    kind = "zonal"

    def __post_init__(self) -> None:
        check_positive_int("d", self.d, minimum=3)
        if self.nodes not in _NODES:
            raise ValueError(f"nodes must be one of {_NODES}, got {self.nodes!r}")
        check_positive_int("n", self.n, minimum=2 if self.nodes == "gauss" else 4)

    @cached_property
    def grid(self) -> ZonalGaussGrid | ZonalCellGrid:
        """The :mod:`solvers` grid: ``ZonalGaussGrid`` or ``ZonalCellGrid``."""
        if self.nodes == "gauss":
            return ZonalGaussGrid(int(self.d), int(self.n))
        return ZonalCellGrid(int(self.d), int(self.n))

    @property
    def dimension(self) -> int:
        """Ambient dimension d."""
        return int(self.d)

    @property
    def shape(self) -> tuple[int]:
        return (int(self.n),)

    @property
    def polar(self) -> np.ndarray:
        """Polar angles ϑ_j ∈ (0, π) of the nodes (cell centres), increasing, shape (n,)."""
        return self.grid.polar

    @cached_property
    def points(self) -> np.ndarray:
        """Unit vectors sin ϑ_j e_1 + cos ϑ_j e_d, shape (n, d)."""
        out = np.zeros((self.n, self.d))
        out[:, 0] = np.sin(self.polar)
        out[:, -1] = np.cos(self.polar)
        return out

    @cached_property
    def moment_points(self) -> np.ndarray:
        """cos ϑ_j e_d, shape (n, d): the average of x over the (d-2)-sphere of
        azimuths of node j, so that ∫ x ρ dσ = Σ_j w_j ρ_j moment_points[j]
        (``points`` lie in one meridian plane and must not be used for moments)."""
        out = np.zeros((self.n, self.d))
        out[:, -1] = np.cos(self.polar)
        return out

    @property
    def weights(self) -> np.ndarray:
        """Quadrature weights of the area measure (Gauss weights or cell areas), summing to |S^{d-1}|."""
        return self.grid.weights

    @property
    def coords(self) -> dict[str, np.ndarray]:
        """``{"polar": polar}`` in radians."""
        return {"polar": self.polar}

    @property
    def area(self) -> float:
        """|S^{d-1}| = 2π^{d/2}/Γ(d/2)."""
        return sphere_area(int(self.d))

    @cached_property
    def _cell_moments(self) -> np.ndarray:
        return self.grid.cell_moments(int(self.n))

    def coefficients(self, values: np.ndarray) -> np.ndarray:
        """Gegenbauer coefficients ρ_l = (1/|S^{d-1}|) ∫ ρ q_l dσ, l < n (last axis).

        Gauss nodes: the discrete transform (exact for degree < n); cells: the
        coefficients of the piecewise-constant density.
        """
        values = np.asarray(values, dtype=float)
        if values.shape[-1:] != self.shape:
            raise ValueError(f"values must end with the grid's shape {self.shape}, got {values.shape}")
        if self.nodes == "gauss":
            return self.grid.analysis(values)
        return values @ self._cell_moments.T

    def convolve(self, values: np.ndarray, multipliers: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """(f ⋆ ρ)(x) = ∫ f(<x, y>) ρ(y) dσ(y) by Funk–Hecke: (f ⋆ ρ)_l = f̂_l ρ_l.

        ``multipliers(l)`` are the Funk–Hecke coefficients f̂_l, l ≥ 0.
        Gauss nodes: values at the nodes, exact for ρ of degree < n. Cells:
        cell averages of f ⋆ ρ for the piecewise-constant ρ (degrees < n), so
        that ½ Σ_i V_i ρ_i (f ⋆ ρ)_i = ½ |S^{d-1}| Σ_l f̂_l ρ_l².
        """
        coeffs = self.coefficients(values) * np.real(np.asarray(multipliers(np.arange(self.n))))
        if self.nodes == "gauss":
            return self.grid.synthesis(coeffs)
        return (coeffs @ self._cell_moments) * (self.area / self.grid.volumes)

    def von_mises(self, loc: Any = None, kappa: float = 1.0) -> Any:
        """Von Mises–Fisher density with mean direction e_d:

            ρ(x) = C_d(κ) e^{κ <e_d, x>},   C_d(κ) = κ^{d/2-1} / ((2π)^{d/2} I_{d/2-1}(κ)),

        evaluated as exp(κ(cos ϑ - 1) + ν log κ - (d/2) log 2π - log Ĩ_ν(κ)),
        ν = d/2 - 1, Ĩ = ``ive`` (small κ: the series of log I_ν), so κ up to
        several hundred and d up to a few hundred neither overflow nor lose
        accuracy. κ = 0 gives 1/|S^{d-1}|. Gauss nodes: node values; cells:
        cell averages (Gauss–Legendre with 8 nodes per cell).

        Parameters
        ----------
        loc : None, "north" or array_like of shape (d,)
            Must be the axis e_d (the only mean direction of a zonal law).
        kappa : float
            Concentration κ ≥ 0.
        """
        from ..measures._measure import Density

        axis = np.zeros(self.d)
        axis[-1] = 1.0
        if loc is not None and not (isinstance(loc, str) and loc == "north"):
            mu = np.asarray(loc, dtype=float) if not isinstance(loc, str) else None
            on_axis = mu is not None and mu.shape == (self.d,) and bool(np.all(np.isfinite(mu)))
            if not on_axis or np.max(np.abs(mu - axis)) > _UNIT_TOL:
                raise ValueError(
                    f"loc must be the axis e_d = (0, …, 0, 1) of shape ({self.d},), 'north' or None on a "
                    f"ZonalSphere (zonal measures are axisymmetric about e_d), got {loc!r}"
                )
        kappa_f = check_nonnegative("kappa", kappa)

        def vmf(theta: np.ndarray) -> np.ndarray:
            return von_mises_fisher_values(np.cos(theta), kappa_f, self.d)

        values = vmf(self.polar) if self.nodes == "gauss" else self.grid.cell_averages(vmf)
        return Density(self, values, {"name": "von_mises", "loc": axis, "kappa": kappa_f})

    def polar_marginal(self, values: np.ndarray) -> np.ndarray:
        """p(ϑ_j) = |S^{d-2}| sin^{d-2}ϑ_j ρ(ϑ_j): the density of the polar angle w.r.t. dϑ."""
        values = np.asarray(values, dtype=float)
        return values * sphere_area(self.d - 1) * np.sin(self.polar) ** (self.d - 2)

    def polar_cdf(self, values: np.ndarray, angles: np.ndarray) -> np.ndarray:
        """F(ϑ) = ∫_{polar ≤ ϑ} ρ dσ at ``angles`` (any shape, values in [0, π]).

        Gauss nodes: exact for ρ = Σ_{l<n} ρ_l q_l, from
        ∫_t^1 q_l(s)(1-s²)^α ds = (1-t²)^{α+1} q_l'(t)/(l(l+d-2)), α = (d-3)/2:

            F(ϑ) = |S^{d-1}| [ρ_0 G(ϑ) + Σ_{l≥1} ρ_l (1-t²)^{α+1} q_l'(t) / (Z l(l+d-2))],

        t = cos ϑ, Z = ∫_{-1}^1 (1-s²)^α ds, G(ϑ) = I_{sin²(ϑ/2)}(α+1, α+1) the
        uniform cap fraction. Cells: exact for the piecewise-constant density.

        The Gauss-node series cancels when the coefficients are huge compared
        with the result: accurate to round-off for d ≤ 16 (measured 1e-14), but
        to only ~2e-4 for a vMF law with d = 100, κ = 200; use a cell grid there.
        """
        values = np.asarray(values, dtype=float)
        angles = np.asarray(angles, dtype=float)
        a = 0.5 * (self.d - 1)
        flat = np.clip(angles.ravel(), 0.0, np.pi)
        cap = betainc(a, a, np.sin(0.5 * flat) ** 2)
        if self.nodes == "gauss":
            coeffs = self.grid.analysis(values)
            t = np.cos(flat)
            _, dq = gegenbauer_table(self.n, self.d, t, derivative=True)
            ell = np.arange(1, self.n)
            log_z = (2 * a - 1) * np.log(2.0) + betaln(a, a)
            sin2 = np.maximum(1.0 - t * t, 0.0)
            with np.errstate(divide="ignore"):
                envelope = np.exp(a * np.log(sin2) - log_z)
            series = envelope * (dq[:, 1:] @ (coeffs[1:] / (ell * (ell + self.d - 2.0))))
            out = self.area * (coeffs[0] * cap + series)
        else:
            grid = self.grid
            masses = values * grid.volumes
            cum = np.concatenate([[0.0], np.cumsum(masses)])
            cell = np.clip(np.searchsorted(grid.faces, flat, side="right") - 1, 0, self.n - 1)
            face_cap = betainc(a, a, np.sin(0.5 * grid.faces[cell]) ** 2)
            out = cum[cell] + values[cell] * self.area * (cap - face_cap)
        return out.reshape(angles.shape)

    def polar_wasserstein(self, values: np.ndarray, particles: Any, resolution: int = 4096) -> float:
        """W₁ (in radians) between the polar-angle marginals of a zonal density and of particles:

            W₁ = ∫_0^π |F(ϑ) - F_n(ϑ)| dϑ,

        F the CDF of the density's marginal (:meth:`polar_cdf`; ``values`` of
        mass 1), F_n the empirical CDF of ϑ_i = arccos <x_i, e_d>. Integrated by
        Simpson's rule on the intervals between ``resolution`` uniform angles
        and the particle angles (F_n is constant on each).

        Parameters
        ----------
        values : ndarray, shape (n,)
            Node values (or cell averages) of the density.
        particles : EmpiricalMeasure or array, shape (N, d)
        resolution : int
            Number of uniform intervals of [0, π].
        """
        values = np.asarray(values, dtype=float)
        if values.shape != self.shape:
            raise ValueError(f"values must have the grid's shape {self.shape}, got {values.shape}")
        check_positive_int("resolution", resolution)
        angles, weights = polar_angles(particles, self.d)
        order = np.argsort(angles)
        angles, weights = angles[order], weights[order]
        breaks = np.unique(np.concatenate([np.linspace(0.0, np.pi, int(resolution) + 1), angles]))
        left, right = breaks[:-1], breaks[1:]
        step = np.concatenate([[0.0], np.cumsum(weights)])
        emp = step[np.searchsorted(angles, left, side="right")]
        cdf = [self.polar_cdf(values, x) for x in (left, 0.5 * (left + right), right)]
        gaps = (np.abs(cdf[0] - emp) + 4 * np.abs(cdf[1] - emp) + np.abs(cdf[2] - emp)) / 6
        return float(np.sum(gaps * (right - left)))


def polar_angles(points: Any, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Polar angles ϑ_i = arccos <x_i, e_d> of particles on S^{d-1} and their weights.

    Parameters
    ----------
    points : EmpiricalMeasure or array_like, shape (n, d)
    d : int, optional
        Required ambient dimension.

    Returns
    -------
    angles, weights : ndarray, shape (n,)
    """
    from ..measures._measure import EmpiricalMeasure

    if isinstance(points, EmpiricalMeasure):
        x, w = np.asarray(points.points), np.asarray(points.weights)
    else:
        x = np.asarray(points, dtype=float)
        w = None
    if x.ndim != 2 or x.shape[-1] < 3 or (d is not None and x.shape[-1] != d):
        wanted = "d >= 3" if d is None else f"d = {d}"
        raise ValueError(f"points must have shape (n, d) with {wanted}, got {x.shape}")
    if w is None:
        w = np.full(x.shape[0], 1.0 / x.shape[0])
    return np.arccos(np.clip(x[:, -1], -1.0, 1.0)), w


def polar_wasserstein(rho: Any, particles: Any, resolution: int = 4096) -> float:
    """W₁ (in radians) between the polar-angle marginals of a zonal density and of particles.

    ``rho`` is a :class:`Density` on a :class:`ZonalSphere`; see
    :meth:`ZonalSphere.polar_wasserstein` (which also takes raw node values).
    """
    domain = getattr(rho, "domain", None)
    if not isinstance(domain, ZonalSphere):
        raise TypeError(f"rho must be a Density on a ZonalSphere, got {type(rho).__name__}")
    return domain.polar_wasserstein(rho.values, particles, resolution)
