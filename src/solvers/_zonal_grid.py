"""Grids on the polar angle ϑ ∈ [0, π] for zonal (axisymmetric) functions on S^{d-1}.

A zonal function on S^{d-1} ⊂ R^d depends on x only through t = <x, e_d> = cos ϑ.
The area measure pushed forward to ϑ (resp. t) is

    dσ = |S^{d-2}| sin^{d-2}ϑ dϑ = |S^{d-2}| (1 - t²)^α dt,    α = (d - 3)/2,

with total mass |S^{d-1}| = 2π^{d/2}/Γ(d/2).

Normalised Gegenbauer polynomials. We write q_l(t) for the degree-l
Gegenbauer polynomial C_l^{(d-2)/2}(t) (equivalently the Jacobi polynomial
P_l^{(α,α)}(t)) normalised in the *probability* measure σ̄ = σ/|S^{d-1}|:

    ∫_{S^{d-1}} q_l(<x,e_d>) q_m(<x,e_d>) dσ(x) = |S^{d-1}| δ_lm,    q_0 ≡ 1,

so that q_l(1) = sqrt(dim H_l) (the number of degree-l spherical harmonics).
They obey the three-term recurrence (symmetric weight, no diagonal term)

    t q_l = b_{l+1} q_{l+1} + b_l q_{l-1},   b_l² = l (l + d - 3) / ((2l + d - 2)(2l + d - 4)),

and its derivative b_{l+1} q'_{l+1} = q_l + t q'_l - b_l q'_{l-1}. Normalising
keeps the values moderate (q_l(1) ≈ 10^47 at d = 100, l = 300) where the
classical C_l^λ overflows, and the recurrence is stable for |t| ≤ 1.

Gegenbauer coefficients. A zonal ρ = Σ_l ρ_l q_l has

    ρ_l = (1/|S^{d-1}|) ∫ ρ q_l dσ,

and the Funk–Hecke formula turns a zonal convolution
(f ⋆ ρ)(x) = ∫ f(<x,y>) ρ(y) dσ(y) into (f ⋆ ρ)_l = c_l ρ_l, with c_l the
Funk–Hecke multiplier of f (q_l(<·, e_d>) is a spherical harmonic of degree l).

Useful identities (Sturm–Liouville form of the zonal Laplace–Beltrami operator):

    Δ q_l = (1-t²)^{-α} d/dt[(1-t²)^{α+1} q_l'] = -l(l+d-2) q_l,
    ∫_t^1 q_l(s) (1-s²)^α ds = (1-t²)^{α+1} q_l'(t) / (l(l+d-2))     (l ≥ 1).

Two grids:

* :class:`ZonalGaussGrid` — n Gauss–Jacobi nodes t_j (roots of q_n), ordered
  by increasing polar angle ϑ_j = arccos t_j, with weights w_j of the area
  measure (Σ_j w_j f(t_j) = ∫ f dσ exactly for polynomials of degree < 2n);
  used by the spectral scheme.
* :class:`ZonalCellGrid` — n uniform cells [ϑ_{i-1/2}, ϑ_{i+1/2}] of width π/n,
  with exact cell areas V_i = ∫_cell dσ and face areas
  S_{i+1/2} = |S^{d-2}| sin^{d-2}ϑ_{i+1/2}; used by the finite-volume scheme.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import betainc, gammaln, roots_jacobi

__all__ = ["gegenbauer_table", "sphere_area", "ZonalGaussGrid", "ZonalCellGrid"]


def sphere_area(d: int) -> float:
    """|S^{d-1}| = 2π^{d/2}/Γ(d/2)."""
    return float(2 * np.exp(0.5 * d * np.log(np.pi) - gammaln(0.5 * d)))


def _check_dimension(d: int) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"d must be an integer ambient dimension, got {d!r}")
    if d < 3:
        raise ValueError(f"d must be >= 3 for zonal measures on S^(d-1) (use the circle for d = 2), got {d}")
    return int(d)


def _check_count(name: str, n: int, minimum: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {n!r}")
    if n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {n}")
    return int(n)


def _recurrence_coefficients(n_degrees: int, d: int) -> np.ndarray:
    """b_l for l = 0, …, n_degrees (b_0 = 0), see the module docstring."""
    ell = np.arange(n_degrees + 1, dtype=float)
    b = np.zeros(n_degrees + 1)
    pos = ell[1:]
    b[1:] = np.sqrt(pos * (pos + d - 3) / ((2 * pos + d - 2) * (2 * pos + d - 4)))
    return b


def gegenbauer_table(n_degrees: int, d: int, t: np.ndarray, derivative: bool = False):
    """Normalised Gegenbauer polynomials q_l(t), l = 0, …, n_degrees - 1.

    Parameters
    ----------
    n_degrees : int
        Number of degrees L (returns l = 0, …, L-1).
    d : int
        Ambient dimension (≥ 3).
    t : array_like, shape (m,)
        Points in [-1, 1].
    derivative : bool
        Also return q_l'(t).

    Returns
    -------
    q : ndarray, shape (m, L)
        q[j, l] = q_l(t_j), normalised so that ∫ q_l q_m dσ = |S^{d-1}| δ_lm.
    dq : ndarray, shape (m, L)
        q_l'(t_j) (only when ``derivative``).
    """
    d = _check_dimension(d)
    n_degrees = _check_count("n_degrees", n_degrees, 1)
    t = np.asarray(t, dtype=float)
    b = _recurrence_coefficients(n_degrees, d)
    q = np.zeros((t.size, n_degrees))
    dq = np.zeros((t.size, n_degrees))
    q[:, 0] = 1.0
    if n_degrees > 1:
        q[:, 1] = t / b[1]
        dq[:, 1] = 1.0 / b[1]
    for ell in range(1, n_degrees - 1):
        q[:, ell + 1] = (t * q[:, ell] - b[ell] * q[:, ell - 1]) / b[ell + 1]
        if derivative:
            dq[:, ell + 1] = (q[:, ell] + t * dq[:, ell] - b[ell] * dq[:, ell - 1]) / b[ell + 1]
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(dq))):
        raise ValueError(
            f"Gegenbauer polynomials overflow for d={d} and {n_degrees} degrees; use fewer degrees or a smaller d"
        )
    return (q, dq) if derivative else q


@dataclass(frozen=True)
class ZonalGaussGrid:
    """Gauss–Gegenbauer (Gauss–Jacobi with α = β = (d-3)/2) nodes in t = cos ϑ on S^{d-1}.

    The nodes are the n roots of q_n, sorted by increasing polar angle
    ϑ_j = arccos t_j ∈ (0, π). The weights are the Christoffel numbers of the
    area measure,

        w_j = |S^{d-1}| / Σ_{l<n} q_l(t_j)²,      Σ_j w_j f(t_j) = ∫_{S^{d-1}} f dσ

    exactly for zonal polynomials f of degree < 2n; Σ_j w_j = |S^{d-1}|.

    Transforms (matrix products, exact round trip for degree < n):

        analysis   ρ_l = (1/|S^{d-1}|) Σ_j w_j q_l(t_j) ρ(t_j),    l = 0, …, n-1,
        synthesis  ρ(t_j) = Σ_l ρ_l q_l(t_j).

    Parameters
    ----------
    d : int
        Ambient dimension, ≥ 3.
    n : int
        Number of nodes (= number of degrees), ≥ 2.
    """

    d: int
    n: int
    kind = "gauss"

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", _check_dimension(self.d))
        object.__setattr__(self, "n", _check_count("n", self.n, 2))

    @property
    def alpha(self) -> float:
        """Jacobi parameter α = (d-3)/2 of the weight (1-t²)^α."""
        return 0.5 * (self.d - 3)

    @property
    def area(self) -> float:
        """|S^{d-1}|."""
        return sphere_area(self.d)

    @cached_property
    def _nodes_and_weights(self) -> tuple[np.ndarray, np.ndarray]:
        t, _ = roots_jacobi(self.n, self.alpha, self.alpha)
        t = np.sort(t)[::-1].copy()
        # One Newton step on q_n polishes the nodes to machine precision.
        q, dq = gegenbauer_table(self.n + 1, self.d, t, derivative=True)
        t = t - q[:, -1] / dq[:, -1]
        q = gegenbauer_table(self.n, self.d, t)
        weights = self.area / np.sum(q * q, axis=1)
        return t, weights

    @property
    def t(self) -> np.ndarray:
        """Nodes t_j = cos ϑ_j, decreasing, shape (n,)."""
        return self._nodes_and_weights[0]

    @cached_property
    def polar(self) -> np.ndarray:
        """Polar angles ϑ_j = arccos t_j, increasing in (0, π), shape (n,)."""
        return np.arccos(self.t)

    @property
    def weights(self) -> np.ndarray:
        """Quadrature weights of the area measure, shape (n,), summing to |S^{d-1}|."""
        return self._nodes_and_weights[1]

    @cached_property
    def degrees(self) -> np.ndarray:
        """Degrees l = 0, …, n-1."""
        return np.arange(self.n)

    @cached_property
    def synthesis_matrix(self) -> np.ndarray:
        """Q[j, l] = q_l(t_j), shape (n, n)."""
        return gegenbauer_table(self.n, self.d, self.t)

    @cached_property
    def analysis_matrix(self) -> np.ndarray:
        """P[l, j] = w_j q_l(t_j) / |S^{d-1}|, shape (n, n); P Q = I."""
        return (self.synthesis_matrix * (self.weights / self.area)[:, None]).T.copy()

    def analysis(self, values: np.ndarray) -> np.ndarray:
        """Gegenbauer coefficients ρ_l of node values (last axis = nodes)."""
        return np.asarray(values, dtype=float) @ self.analysis_matrix.T

    def synthesis(self, coeffs: np.ndarray) -> np.ndarray:
        """Node values Σ_l ρ_l q_l(t_j) of coefficients (last axis = degrees)."""
        return np.asarray(coeffs, dtype=float) @ self.synthesis_matrix.T


@dataclass(frozen=True)
class ZonalCellGrid:
    """Uniform cells in the polar angle on S^{d-1} for finite volumes.

    Faces ϑ_{i+1/2} = (i+1)π/n, i = -1, …, n-1; centres ϑ_i = (i + 1/2)π/n.
    Cell areas (the cell's mass under σ) are computed exactly from the
    regularised incomplete beta function: with G(ϑ) = σ({polar ≤ ϑ})/|S^{d-1}|
    = I_{sin²(ϑ/2)}(α+1, α+1), α = (d-3)/2,

        V_i = |S^{d-1}| (G(ϑ_{i+1/2}) - G(ϑ_{i-1/2})),   Σ_i V_i = |S^{d-1}|,

    evaluated on the northern half and mirrored so that tiny polar cells keep
    their relative accuracy. Face areas S_{i+1/2} = |S^{d-2}| sin^{d-2}ϑ_{i+1/2}
    (zero at the poles).

    Parameters
    ----------
    d : int
        Ambient dimension, ≥ 3.
    n : int
        Number of cells, ≥ 4.
    """

    d: int
    n: int
    kind = "cells"

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", _check_dimension(self.d))
        object.__setattr__(self, "n", _check_count("n", self.n, 4))

    @property
    def area(self) -> float:
        """|S^{d-1}|."""
        return sphere_area(self.d)

    @property
    def spacing(self) -> float:
        """Cell width h = π/n."""
        return np.pi / self.n

    @cached_property
    def faces(self) -> np.ndarray:
        """Face angles ϑ_{i+1/2}, i = -1, …, n-1, shape (n+1,)."""
        return self.spacing * np.arange(self.n + 1)

    @cached_property
    def polar(self) -> np.ndarray:
        """Cell-centre angles ϑ_i = (i + 1/2)π/n, shape (n,)."""
        return self.spacing * (np.arange(self.n) + 0.5)

    @cached_property
    def t(self) -> np.ndarray:
        """cos ϑ_i at the centres, shape (n,)."""
        return np.cos(self.polar)

    @cached_property
    def volumes(self) -> np.ndarray:
        """Cell areas V_i, shape (n,), summing to |S^{d-1}|, symmetric about the equator."""
        a = 0.5 * (self.d - 1)
        half = self.n // 2
        cap = betainc(a, a, np.sin(0.5 * self.faces[: half + 1]) ** 2)
        frac = np.empty(self.n)
        frac[:half] = np.diff(cap)
        frac[self.n - half :] = frac[:half][::-1]
        if self.n % 2:
            frac[half] = 1.0 - 2.0 * cap[half]
        vols = self.area * frac
        if np.any(vols <= 0):
            raise ValueError(
                f"cells of ZonalCellGrid(d={self.d}, n={self.n}) near the poles have zero area in floating point; "
                "use fewer cells or a smaller d"
            )
        return vols

    @property
    def weights(self) -> np.ndarray:
        """Quadrature weights = cell areas V_i (mass = Σ_i ρ_i V_i)."""
        return self.volumes

    @cached_property
    def face_areas(self) -> np.ndarray:
        """S_{i+1/2} = |S^{d-2}| sin^{d-2}ϑ_{i+1/2}, shape (n+1,); zero at both poles."""
        s = np.sin(self.faces)
        s[0] = s[-1] = 0.0
        return sphere_area(self.d - 1) * s ** (self.d - 2)

    def _subcells(self, points_per_cell: int) -> tuple[np.ndarray, np.ndarray]:
        """Gauss–Legendre nodes ϑ (shape (n·k,)) and weights of σ/|S^{d-1}| in every cell."""
        x, w = np.polynomial.legendre.leggauss(points_per_cell)
        h = self.spacing
        theta = (self.faces[:-1, None] + 0.5 * h * (x[None, :] + 1)).ravel()
        wq = np.broadcast_to(0.5 * h * w, (self.n, points_per_cell)).ravel()
        return theta, wq * sphere_area(self.d - 1) * np.sin(theta) ** (self.d - 2) / self.area

    def cell_averages(self, func, points_per_cell: int = 8) -> np.ndarray:
        """(1/V_i) ∫_cell f dσ for f = ``func(ϑ)``, by Gauss–Legendre in ϑ, shape (n,)."""
        theta, wq = self._subcells(points_per_cell)
        sums = (np.asarray(func(theta), dtype=float) * wq).reshape(self.n, points_per_cell).sum(axis=1)
        return sums * self.area / self.volumes

    def cell_moments(self, n_degrees: int, points_per_cell: int = 8) -> np.ndarray:
        """M[l, i] = (1/|S^{d-1}|) ∫_{cell i} q_l dσ, shape (n_degrees, n).

        Gauss–Legendre in ϑ with ``points_per_cell`` nodes per cell; the l = 0
        row is set to the exact V_i/|S^{d-1}|. Then ρ_l = Σ_i M[l, i] ρ_i are the
        Gegenbauer coefficients of the piecewise-constant density.
        """
        theta, wq = self._subcells(points_per_cell)
        q = gegenbauer_table(n_degrees, self.d, np.cos(theta))
        moments = (q * wq[:, None]).reshape(self.n, points_per_cell, n_degrees).sum(axis=1).T
        moments[0] = self.volumes / self.area
        return np.ascontiguousarray(moments)
