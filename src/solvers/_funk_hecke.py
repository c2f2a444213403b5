r"""Funk–Hecke multipliers of a zonal kernel by Gauss–Jacobi quadrature.

For a kernel f(<x, y>) on S^{d-1} ⊂ R^d (d ≥ 2) and a spherical harmonic Y_l of degree l,

    ∫_{S^{d-1}} f(<x, y>) Y_l(y) dσ(y) = λ_l Y_l(x),
    λ_l = |S^{d-2}| ∫_{-1}^{1} f(t) P_l(t) (1 - t²)^α dt,     α = (d - 3)/2,

P_l the Legendre polynomial of dimension d with P_l(1) = 1 (d = 2: the Chebyshev polynomial T_l,
|S^0| = 2, and λ_k = 2π f̂_k for f(cos θ) = Σ_k f̂_k e^{ikθ}; d ≥ 3: P_l = q_l/q_l(1), q_l the normalised
Gegenbauer polynomials of :func:`solvers.gegenbauer_table`).

Two quadratures, both Gauss–Jacobi, chosen by where f is smooth:

* ``singularity=None`` — f smooth on [-1, 1] as a function of t: Gauss–Jacobi nodes of the weight
  (1 - t)^α (1 + t)^α itself, exact for polynomial f of degree < 2n - l and exponentially convergent for
  analytic f;
* ``singularity=s`` (s ≥ 0) — f(t) = r^s g(r) with r = |x - y| = (2 - 2t)^{1/2} and g smooth in r (the
  Riesz kernels r^s, s > 0, have s there and g = 1; e^{-r/ℓ} has s = 0 and is smooth in r but not in t).
  With u = r/2 = ((1 - t)/2)^{1/2} = (1 + v)/2, v ∈ [-1, 1], the integral becomes

      ∫_{-1}^{1} f P_l (1 - t²)^α dt = ∫_{-1}^{1} g(r) P_l(t) ((3 + v)/4)^α (1 - v)^α (1 + v)^{2α+1+s} dv

  (t = 1 - 2u², 1 - t = 2u², 1 + t = 2(1 - u)(1 + u), dt = -4u du, r = 1 + v), whose singular factors are the
  Gauss–Jacobi weight (1 - v)^α (1 + v)^{2α+1+s} and whose remainder g(r) P_l ((3 + v)/4)^α is smooth
  on [-1, 1] (3 + v ≥ 2): exact in the algebraic singularity, exponentially convergent in the rest.

The number of nodes n is chosen by doubling: n₀ = L + 32 for L degrees, then n_{k+1} = ⌈3 n_k / 2⌉ + 8,
until two successive quadratures agree to ``tolerance`` relative to max_l |λ_l|; the larger one is
returned with its n (:class:`FunkHeckeMultipliers`). Cost: the nodes (``scipy.special.roots_jacobi``) and
one (n × L) table of P_l, about 10 ms for L = 256 on these machines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import roots_jacobi

from ._zonal_grid import gegenbauer_table, sphere_area

__all__ = ["FunkHeckeMultipliers", "QUADRATURE_TOLERANCE", "funk_hecke_multipliers", "legendre_table"]

QUADRATURE_TOLERANCE = 1e-12
"""Default agreement of two successive quadratures, relative to max_l |λ_l|."""
MAX_NODES = 8192
"""The most Gauss–Jacobi nodes a quadrature takes before it gives up."""


@dataclass(frozen=True)
class FunkHeckeMultipliers:
    """λ_l, l = 0, …, L-1, of a zonal kernel, and how they were computed.

    Attributes
    ----------
    values : ndarray, shape (L,)
        The multipliers λ_l.
    nodes : int
        Gauss–Jacobi nodes of the quadrature returned.
    difference : float
        max_l |λ_l(n) - λ_l(n')| / max_l |λ_l| of the last two quadratures (n' < n nodes).
    """

    values: np.ndarray
    nodes: int
    difference: float


def legendre_table(n_degrees: int, d: int, t: np.ndarray) -> np.ndarray:
    """P_l(t_j), l = 0, …, n_degrees - 1, shape (len(t), n_degrees): the Legendre polynomials of dimension d
    normalised by P_l(1) = 1 (d = 2: Chebyshev T_l(t) = cos(l arccos t))."""
    t = np.asarray(t, dtype=float)
    if d == 2:
        return np.cos(np.outer(np.arccos(np.clip(t, -1.0, 1.0)), np.arange(n_degrees)))
    table = gegenbauer_table(n_degrees, d, np.append(t, 1.0))
    return table[:-1] / table[-1]


def funk_hecke_multipliers(kernel: Callable[[np.ndarray], np.ndarray], n_degrees: int, d: int, *,
                           singularity: float | None = None,
                           tolerance: float = QUADRATURE_TOLERANCE) -> FunkHeckeMultipliers:
    """Funk–Hecke multipliers λ_l of the zonal kernel f(<x, y>) on S^{d-1}, l = 0, …, ``n_degrees`` - 1.

    Parameters
    ----------
    kernel : callable
        t ↦ f(t) on arrays of t ∈ [-1, 1], real and finite there.
    n_degrees : int
        Number L of degrees (≥ 1).
    d : int
        Ambient dimension (≥ 2; S^{d-1}).
    singularity : float or None
        None: f is smooth in t. s ≥ 0: f(t) = |x - y|^s g(|x - y|) with g smooth (module docstring).
    tolerance : float
        Agreement of two successive quadratures relative to max_l |λ_l|.

    Returns
    -------
    FunkHeckeMultipliers

    Raises
    ------
    ValueError
        f not real and finite at a node (the node is named), or no agreement within :data:`MAX_NODES` nodes.
    """
    alpha = 0.5 * (d - 3)
    area = sphere_area(d - 1) if d > 2 else 2.0
    nodes = n_degrees + 32
    previous = None
    while nodes <= MAX_NODES:
        values = _quadrature(kernel, n_degrees, d, alpha, nodes, singularity) * area
        if previous is not None:
            scale = float(np.max(np.abs(values)))
            difference = float(np.max(np.abs(values - previous))) / scale if scale > 0 else 0.0
            if difference <= tolerance:
                return FunkHeckeMultipliers(values, nodes, difference)
        previous = values
        nodes = -(-3 * nodes // 2) + 8
    raise ValueError(f"the Funk–Hecke quadrature of the kernel did not converge to {tolerance:g} within "
                     f"{MAX_NODES} Gauss–Jacobi nodes (a kernel that is not smooth on [-1, 1], or whose "
                     f"singularity at t = 1 is not the one declared)")


def _quadrature(kernel: Callable[[np.ndarray], np.ndarray], n_degrees: int, d: int, alpha: float, nodes: int,
                singularity: float | None) -> np.ndarray:
    """∫_{-1}^{1} f P_l (1 - t²)^α dt, l < ``n_degrees``, with ``nodes`` Gauss–Jacobi nodes (module docstring)."""
    if singularity is None:
        t, weights = roots_jacobi(nodes, alpha, alpha)
        integrand = _evaluate(kernel, t)
    else:
        v, weights = roots_jacobi(nodes, alpha, 2 * alpha + 1 + singularity)
        t = 1.0 - 0.5 * (1.0 + v) ** 2  # t = 1 - 2u², u = (1 + v)/2, r = |x - y| = 2u = 1 + v
        integrand = _evaluate(kernel, t) / (1.0 + v) ** singularity * (0.25 * (3.0 + v)) ** alpha
    return (weights * integrand) @ legendre_table(n_degrees, d, t)


def _evaluate(kernel: Callable[[np.ndarray], np.ndarray], t: np.ndarray) -> np.ndarray:
    """f at the nodes ``t``, checked real and finite."""
    values = np.asarray(kernel(t))
    if values.shape != t.shape:
        values = np.broadcast_to(values, t.shape)
    if np.iscomplexobj(values) or not np.issubdtype(values.dtype, np.number):
        raise ValueError(f"the kernel must return real numbers, got dtype {values.dtype}")
    bad = ~np.isfinite(values)
    if np.any(bad):
        raise ValueError(f"the kernel is not finite at t = {float(t[bad][0]):.17g} in [-1, 1] "
                         f"(value {values[bad][0]!r})")
    return values.astype(float)
