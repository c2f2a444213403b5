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

Largest dimension. Node values are densities with respect to σ itself, so the
uniform density is 1/|S^{d-1}|, and |S^{d-1}| falls faster than exponentially:
log|S^{d-1}| = log 2 + (d/2) log π - log Γ(d/2) ≈ -(d/2) log(d/(2πe)). It is
3.2e-308 at d = 438 and subnormal from d = 439 (3.8e-309, where
1/|S^{d-1}| = inf), so the grids accept 3 ≤ d ≤ :data:`MAX_DIMENSION` = 438.
All weights are formed from logarithms (``gammaln``, ``betaln``) and the
quadrature of the probability measure σ̄ = σ/|S^{d-1}| (:attr:`relative_weights`)
never passes through |S^{d-1}|; what underflows is only the weight of nodes or
cells holding less than 1e-308 of the area.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import betainc, betaln, gammaln, roots_jacobi

from ._validate import positive_int

__all__ = ["gegenbauer_table", "sphere_area", "ZonalGaussGrid", "ZonalCellGrid", "MAX_DIMENSION",
           "check_grid_dimension"]

MAX_DIMENSION = 438
"""The largest d of a zonal grid: |S^{d-1}| = 3.2e-308 is the last normal double (module docstring)."""

_TINY = float(np.finfo(float).tiny)


def log_sphere_area(d: int) -> float:
    """log|S^{d-1}| = log 2 + (d/2) log π - log Γ(d/2), finite for every d ≥ 1."""
    return float(np.log(2.0) + 0.5 * d * np.log(np.pi) - gammaln(0.5 * d))


def sphere_area(d: int) -> float:
    r"""|S^{d-1}| = 2π^{d/2}/Γ(d/2) for an integer ambient dimension d ≥ 1 (|S⁰| = 2 counts two points;
    underflows to a subnormal from d = 439, to 0 from d = 456).

    Parameters
    ----------
    d : int
        Ambient dimension (≥ 1): the area of the unit sphere S^{d-1} ⊂ R^d.

    Returns
    -------
    float
        |S^{d-1}|.

    Raises
    ------
    TypeError, ValueError
        ``d`` not a positive integer.

    Notes
    -----
    .. math::

        |S^{d-1}| = \frac{2\pi^{d/2}}{\Gamma(d/2)},

    computed as the exponential of its logarithm (``gammaln``), so that Γ(d/2) never overflows.

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> print(solvers.sphere_area(1), f"{solvers.sphere_area(2) / np.pi:.12f} {solvers.sphere_area(3) / np.pi:.12f}")
    2.0 2.000000000000 4.000000000000
    >>> print(f"{solvers.sphere_area(4) / np.pi ** 2:.12f}")  # |S³| = 2π²
    2.000000000000
    """
    return float(np.exp(log_sphere_area(positive_int("d", d))))


def _log_polar_normaliser(d: int) -> float:
    """log(|S^{d-2}|/|S^{d-1}|) = -log ∫_0^π sin^{d-2}ϑ dϑ = -log B(1/2, (d-1)/2)."""
    return -float(betaln(0.5, 0.5 * (d - 1)))


def _check_dimension(d: int) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"d must be an integer ambient dimension, got {d!r}")
    if d < 3:
        raise ValueError(f"d must be >= 3 for zonal measures on S^(d-1) (use the circle for d = 2), got {d}")
    return int(d)


def check_grid_dimension(d: int) -> int:
    """``d`` as an int, requiring 3 ≤ d ≤ :data:`MAX_DIMENSION` (the grids' range, module docstring).

    Raises
    ------
    TypeError
        ``d`` not an integer.
    ValueError
        d < 3, or d > 438: densities are taken w.r.t. the area of S^{d-1}, and
        the uniform one, 1/|S^{d-1}|, is not a finite double beyond.
    """
    d = _check_dimension(d)
    if d > MAX_DIMENSION:
        raise ValueError(
            f"d must be <= {MAX_DIMENSION} for a zonal grid on S^(d-1), got d={d}: densities are taken with "
            f"respect to the area of S^(d-1), and |S^(d-1)| = 2 pi^(d/2)/Gamma(d/2) = exp({log_sphere_area(d):.1f}) "
            f"is below the smallest normal double, so the uniform density 1/|S^(d-1)| overflows"
        )
    return d


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
    r"""Normalised Gegenbauer polynomials q_l(t), l = 0, …, n_degrees - 1.

    q_l is the degree-l Gegenbauer polynomial C_l^{(d-2)/2} normalised in the probability
    measure σ̄ = σ/|S^{d-1}| of S^{d-1}, computed by its three-term recurrence (stable for
    |t| ≤ 1, and finite where C_l^λ itself overflows).

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

    Raises
    ------
    ValueError
        d < 3, n_degrees < 1, or values that overflow.

    Notes
    -----
    .. math::

        \int_{S^{d-1}} q_l(\langle x, e_d\rangle)\, q_m(\langle x, e_d\rangle)\, d\sigma(x) = |S^{d-1}|\, \delta_{lm},
        \qquad q_0 \equiv 1,

    .. math::

        t\, q_l = b_{l+1} q_{l+1} + b_l q_{l-1}, \qquad
        b_l^2 = \frac{l (l + d - 3)}{(2l + d - 2)(2l + d - 4)},

    so that q_l(1) = (dim H_l)^{1/2}, H_l the spherical harmonics of degree l.

    Examples
    --------
    On S² (d = 3), q_l(1) = √(2l + 1):

    >>> import numpy as np
    >>> import solvers
    >>> print(solvers.gegenbauer_table(4, 3, np.array([1.0])), np.sqrt(2 * np.arange(4) + 1))
    [[1.         1.73205081 2.23606798 2.64575131]] [1.         1.73205081 2.23606798 2.64575131]

    Orthonormal in σ̄ on S⁴, by the Gauss quadrature of :class:`solvers.ZonalGaussGrid`:

    >>> grid = solvers.ZonalGaussGrid(5, 8)
    >>> q = solvers.gegenbauer_table(4, 5, grid.t)
    >>> bool(np.allclose(q.T @ (grid.relative_weights[:, None] * q), np.eye(4)))
    True
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
    r"""Gauss–Gegenbauer (Gauss–Jacobi with α = β = (d-3)/2) nodes in t = cos ϑ on S^{d-1}.

    The nodes are the n roots of q_n, sorted by increasing polar angle
    ϑ_j = arccos t_j ∈ (0, π). The weights are the Christoffel numbers of the
    area measure::

        w_j = |S^{d-1}| / Σ_{l<n} q_l(t_j)²,      Σ_j w_j f(t_j) = ∫_{S^{d-1}} f dσ

    exactly for zonal polynomials f of degree < 2n; Σ_j w_j = |S^{d-1}|.

    Transforms (matrix products, exact round trip for degree < n)::

        analysis   ρ_l = (1/|S^{d-1}|) Σ_j w_j q_l(t_j) ρ(t_j),    l = 0, …, n-1,
        synthesis  ρ(t_j) = Σ_l ρ_l q_l(t_j).

    Parameters
    ----------
    d : int
        Ambient dimension, 3 ≤ d ≤ :data:`MAX_DIMENSION`.
    n : int
        Number of nodes (= number of degrees), ≥ 2.

    Raises
    ------
    TypeError, ValueError
        ``d`` or ``n`` not an integer or out of range.

    Notes
    -----
    q_l the normalised Gegenbauer polynomials (:func:`solvers.gegenbauer_table`):

    .. math::

        w_j = \frac{|S^{d-1}|}{\sum_{l<n} q_l(t_j)^2}, \qquad
        \sum_j w_j f(t_j) = \int_{S^{d-1}} f\, d\sigma \quad (\deg f < 2n),

    .. math::

        \rho_l = \frac{1}{|S^{d-1}|} \sum_j w_j\, q_l(t_j)\, \rho(t_j), \qquad
        \rho(t_j) = \sum_{l<n} \rho_l\, q_l(t_j).

    Examples
    --------
    On S⁴ (d = 5): the weights sum to |S⁴| = 8π²/3, and ∫ t² dσ̄ = 1/d:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.ZonalGaussGrid(5, 8)
    >>> print(f"{grid.weights.sum():.12f} {8 * np.pi ** 2 / 3:.12f}")
    26.318945069572 26.318945069572
    >>> print(f"{grid.relative_weights @ grid.t ** 2:.12f}")
    0.200000000000

    The function t is b_1 q_1 with b_1 = 1/√d:

    >>> print(grid.analysis(grid.t).round(12)[:3], f"{1 / np.sqrt(5):.12f}")
    [0.         0.4472136  0.        ] 0.447213595500
    """

    d: int
    n: int
    kind = "gauss"

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", check_grid_dimension(self.d))
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
        """Nodes t_j and the weights w_j/|S^{d-1}| = 1/Σ_{l<n} q_l(t_j)² of σ̄."""
        t, _ = roots_jacobi(self.n, self.alpha, self.alpha)
        t = np.sort(t)[::-1].copy()
        # One Newton step on q_n polishes the nodes to machine precision.
        q, dq = gegenbauer_table(self.n + 1, self.d, t, derivative=True)
        t = t - q[:, -1] / dq[:, -1]
        q = gegenbauer_table(self.n, self.d, t)
        return t, 1.0 / np.sum(q * q, axis=1)

    @property
    def t(self) -> np.ndarray:
        """Nodes t_j = cos ϑ_j, decreasing, shape (n,)."""
        return self._nodes_and_weights[0]

    @property
    def relative_weights(self) -> np.ndarray:
        """Weights w_j/|S^{d-1}| of the probability measure σ̄ = σ/|S^{d-1}|, shape (n,), summing to 1.

        Computed without |S^{d-1}|, so they keep full relative precision where
        w_j itself underflows (near the poles in high d).
        """
        return self._nodes_and_weights[1]

    @cached_property
    def polar(self) -> np.ndarray:
        """Polar angles ϑ_j = arccos t_j, increasing in (0, π), shape (n,)."""
        return np.arccos(self.t)

    @cached_property
    def weights(self) -> np.ndarray:
        """Quadrature weights w_j = |S^{d-1}| · :attr:`relative_weights` of the area measure, shape (n,),
        summing to |S^{d-1}|."""
        return self.area * self.relative_weights

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
        return (self.synthesis_matrix * self.relative_weights[:, None]).T.copy()

    def analysis(self, values: np.ndarray) -> np.ndarray:
        """Gegenbauer coefficients ρ_l of node values (last axis = nodes)."""
        return np.asarray(values, dtype=float) @ self.analysis_matrix.T

    def synthesis(self, coeffs: np.ndarray) -> np.ndarray:
        """Node values Σ_l ρ_l q_l(t_j) of coefficients (last axis = degrees)."""
        return np.asarray(coeffs, dtype=float) @ self.synthesis_matrix.T


@dataclass(frozen=True)
class ZonalCellGrid:
    r"""Uniform cells in the polar angle on S^{d-1} for finite volumes.

    Faces ϑ_{i+1/2} = (i+1)π/n, i = -1, …, n-1; centres ϑ_i = (i + 1/2)π/n.
    Cell areas (the cell's mass under σ) are computed exactly from the
    regularised incomplete beta function: with G(ϑ) = σ({polar ≤ ϑ})/|S^{d-1}|
    = I_{sin²(ϑ/2)}(α+1, α+1), α = (d-3)/2::

        V_i = |S^{d-1}| (G(ϑ_{i+1/2}) - G(ϑ_{i-1/2})),   Σ_i V_i = |S^{d-1}|,

    evaluated on the northern half and mirrored so that tiny polar cells keep
    their relative accuracy. Face areas S_{i+1/2} = |S^{d-2}| sin^{d-2}ϑ_{i+1/2}
    (zero at the poles).

    Parameters
    ----------
    d : int
        Ambient dimension, 3 ≤ d ≤ :data:`MAX_DIMENSION`.
    n : int
        Number of cells, ≥ 4.

    Raises
    ------
    ValueError
        d out of range (:func:`check_grid_dimension`), n < 4, or polar cells
        whose area V_0 = |S^{d-1}| G(π/n) is below the smallest normal double
        (in high d only a few cells are representable: n ≤ 31 at d = 200,
        n ≤ 7 at d = 300, none from d = 375; the message names the largest n).

    Notes
    -----
    .. math::

        V_i = |S^{d-1}| \bigl(G(\vartheta_{i+1/2}) - G(\vartheta_{i-1/2})\bigr), \qquad
        G(\vartheta) = I_{\sin^2(\vartheta/2)}(\alpha + 1, \alpha + 1), \qquad
        S_{i+1/2} = |S^{d-2}| \sin^{d-2}\vartheta_{i+1/2} .

    Examples
    --------
    On S² (d = 3) the polar cap of the first cell has area 2π(1 - cos(π/n)), and the face
    at ϑ has length 2π sin ϑ:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.ZonalCellGrid(3, 8)
    >>> print(f"{grid.volumes.sum() / np.pi:.12f}")
    4.000000000000
    >>> print(f"{grid.volumes[0]:.12f} {2 * np.pi * (1 - np.cos(np.pi / 8)):.12f}")
    0.478279002901 0.478279002901
    >>> print(grid.face_areas[:3].round(8), (2 * np.pi * np.sin(grid.faces[:3])).round(8))
    [0.         2.40447092 4.44288294] [0.         2.40447092 4.44288294]
    """

    d: int
    n: int
    kind = "cells"

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", check_grid_dimension(self.d))
        object.__setattr__(self, "n", _check_count("n", self.n, 4))
        _check_cell_areas(self.d, self.n)

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
    def relative_weights(self) -> np.ndarray:
        """Cell fractions V_i/|S^{d-1}| = G(ϑ_{i+1/2}) - G(ϑ_{i-1/2}), shape (n,), summing to 1,
        symmetric about the equator (computed without |S^{d-1}|)."""
        a = 0.5 * (self.d - 1)
        half = self.n // 2
        cap = betainc(a, a, np.sin(0.5 * self.faces[: half + 1]) ** 2)
        frac = np.empty(self.n)
        frac[:half] = np.diff(cap)
        frac[self.n - half :] = frac[:half][::-1]
        if self.n % 2:
            frac[half] = 1.0 - 2.0 * cap[half]
        return frac

    @cached_property
    def volumes(self) -> np.ndarray:
        """Cell areas V_i = |S^{d-1}| · :attr:`relative_weights`, shape (n,), summing to |S^{d-1}|."""
        return self.area * self.relative_weights

    @property
    def weights(self) -> np.ndarray:
        """Quadrature weights = cell areas V_i (mass = Σ_i ρ_i V_i)."""
        return self.volumes

    @cached_property
    def face_areas(self) -> np.ndarray:
        """S_{i+1/2} = |S^{d-2}| sin^{d-2}ϑ_{i+1/2} = exp(log|S^{d-2}| + (d-2) log sin ϑ_{i+1/2}), shape (n+1,);
        zero at both poles."""
        with np.errstate(divide="ignore"):
            log_sin = np.log(np.sin(self.faces[1:-1]))
        inner = np.exp(log_sphere_area(self.d - 1) + (self.d - 2) * log_sin)
        return np.concatenate([[0.0], inner, [0.0]])

    def _subcells(self, points_per_cell: int) -> tuple[np.ndarray, np.ndarray]:
        """Gauss–Legendre nodes ϑ (shape (n·k,)) and weights of σ̄ = σ/|S^{d-1}| in every cell:
        (h/2) w_k (|S^{d-2}|/|S^{d-1}|) sin^{d-2}ϑ, formed in logarithms."""
        x, w = np.polynomial.legendre.leggauss(points_per_cell)
        h = self.spacing
        theta = (self.faces[:-1, None] + 0.5 * h * (x[None, :] + 1)).ravel()
        wq = np.broadcast_to(0.5 * h * w, (self.n, points_per_cell)).ravel()
        return theta, wq * np.exp(_log_polar_normaliser(self.d) + (self.d - 2) * np.log(np.sin(theta)))

    def points_per_cell(self) -> int:
        """Gauss–Legendre nodes per cell of :meth:`cell_averages`: k = 8 + ⌈d/2⌉.

        The weight sin^{d-2}ϑ ≈ ϑ^{d-2} of the polar cells is a polynomial of
        degree ≈ d - 2, which needs ≈ (d-1)/2 nodes, and across the next cells it
        changes by ((i+1)/i)^{d-2}; the 8 further nodes resolve f. Measured
        against the closed forms (cell areas, ⟨cos ϑ⟩_i from :meth:`cell_moments`):
        areas to 1e-12, face distances of the finite-volume scheme to 1e-11
        for 3 ≤ d ≤ 370, n ≤ 128. With the former fixed k = 8 the polar cells were
        off by 30 % at d = 100 (⟨cos ϑ⟩_0), giving a first face distance of the
        wrong sign.
        """
        return 8 + math.ceil(self.d / 2)

    def cell_averages(self, func: Callable[[np.ndarray], np.ndarray], points_per_cell: int | None = None) -> np.ndarray:
        """(1/V_i) ∫_cell f dσ for f = ``func(ϑ)``, by Gauss–Legendre in ϑ, shape (n,).

        ``points_per_cell`` defaults to :meth:`points_per_cell`.
        """
        k = self.points_per_cell() if points_per_cell is None else points_per_cell
        theta, wq = self._subcells(k)
        sums = (np.asarray(func(theta), dtype=float) * wq).reshape(self.n, k).sum(axis=1)
        return sums / self.relative_weights

    def cell_moments(self, n_degrees: int) -> np.ndarray:
        """M[l, i] = (1/|S^{d-1}|) ∫_{cell i} q_l dσ, shape (n_degrees, n), in closed form.

        From ∫_t^1 q_l(s)(1-s²)^α ds = (1-t²)^{α+1} q_l'(t)/(l(l+d-2)) (module docstring), with
        |S^{d-2}|/|S^{d-1}| = 1/B(1/2, (d-1)/2),

            M[l, i] = T_l(ϑ_{i+1/2}) - T_l(ϑ_{i-1/2}),
            T_l(ϑ) = sin^{d-1}ϑ q_l'(cos ϑ) / (B(1/2, (d-1)/2) l(l+d-2))     (l ≥ 1),

        T_l = 0 at both poles, and M[0, i] = V_i/|S^{d-1}| (:attr:`relative_weights`).
        Then ρ_l = Σ_i M[l, i] ρ_i are the Gegenbauer coefficients of the
        piecewise-constant density, and Σ_i M[l, i] = 0 for l ≥ 1 telescopes
        (the uniform density has no l ≥ 1 component, to round-off, in any d).
        """
        faces = self.faces[1:-1]
        ell = np.arange(1, n_degrees)
        _, dq = gegenbauer_table(n_degrees, self.d, np.cos(faces), derivative=True)
        envelope = np.exp(_log_polar_normaliser(self.d) + (self.d - 1) * np.log(np.sin(faces)))
        tails = np.zeros((n_degrees, self.n + 1))
        tails[1:, 1:-1] = (envelope[:, None] * dq[:, 1:] / (ell * (ell + self.d - 2.0))).T
        moments = np.diff(tails, axis=1)
        moments[0] = self.relative_weights
        return np.ascontiguousarray(moments)


def _polar_cell_area(d: int, n: np.ndarray) -> np.ndarray:
    """V_0 = |S^{d-1}| G(π/n) = |S^{d-1}| I_{sin²(π/2n)}(α+1, α+1), α = (d-3)/2: the area of the polar cell
    (the smallest) of n cells, for an array of n; decreasing in n."""
    a = 0.5 * (d - 1)
    return sphere_area(d) * betainc(a, a, np.sin(0.5 * np.pi / np.asarray(n, dtype=float)) ** 2)


def _check_cell_areas(d: int, n: int) -> None:
    """Refuse n cells whose polar cells have an area below the smallest normal double (2.2e-308): their
    densities ρ_i = m_i/V_i would overflow or lose their digits. The message names the largest n that works."""
    smallest = float(_polar_cell_area(d, n))
    if smallest >= _TINY:
        return
    counts = np.arange(4, n)
    fitting = counts[_polar_cell_area(d, counts) >= _TINY]
    remedy = (f"use n <= {fitting[-1]} cells, nodes='gauss' or a smaller d" if fitting.size else
              f"no cell grid (n >= 4) is representable at d={d}; use nodes='gauss' or a smaller d")
    raise ValueError(
        f"the polar cells of ZonalCellGrid(d={d}, n={n}) have area {smallest:.3g}, below the smallest normal "
        f"double ({_TINY:.3g}); {remedy}"
    )
