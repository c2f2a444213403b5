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
* ``singularity=s`` (s > 1 - d) — f(t) = r^s g(r) with r = |x - y| = (2 - 2t)^{1/2} and g smooth in r (the
  Riesz kernels r^s, s > 0, have s there and g = 1; e^{-r/ℓ} has s = 0 and is smooth in r but not in t).
  With u = r/2 = ((1 - t)/2)^{1/2} = (1 + v)/2, v ∈ [-1, 1], the integral becomes

      ∫_{-1}^{1} f P_l (1 - t²)^α dt = ∫_{-1}^{1} g(r) P_l(t) ((3 + v)/4)^α (1 - v)^α (1 + v)^{2α+1+s} dv

  (t = 1 - 2u², 1 - t = 2u², 1 + t = 2(1 - u)(1 + u), dt = -4u du, r = 1 + v), whose singular factors are the
  Gauss–Jacobi weight (1 - v)^α (1 + v)^{2α+1+s} and whose remainder g(r) P_l ((3 + v)/4)^α is smooth
  on [-1, 1] (3 + v ≥ 2): exact in the algebraic singularity, exponentially convergent in the rest. Given
  as a function of t, g = f/r^s loses digits near t = 1 (1 - t is formed from t); ``profile`` g(r) itself
  avoids that.

The number of nodes n is chosen by growth: n₀ = L + 32 for L degrees, then n_{k+1} = ⌈3 n_k / 2⌉ + 8,
until two successive quadratures agree to ``tolerance`` relative to max_l |λ_l|, or, below 1e-9, stop
agreeing better (a round-off floor, of a kernel given in t with a singularity); the larger one is returned
with its n and the agreement reached (:class:`FunkHeckeMultipliers`). Cost: the nodes and
one (n × L) table of P_l, about 10–40 ms for L = 256 on these machines. The nodes and weights are
Golub and Welsch's (:func:`gauss_jacobi`): the eigenvalues and first eigenvector components of the Jacobi
matrix of the weight, accurate to 1e-15 where ``scipy.special.roots_jacobi`` drifts by 1e-11–1e-10 for
n ≈ 800 and a weight (1 - v)^{-1/2} (1 + v)^3.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh_tridiagonal, eigvalsh_tridiagonal
from scipy.special import betaln

from ._zonal_grid import gegenbauer_table, sphere_area

__all__ = ["FunkHeckeMultipliers", "QUADRATURE_TOLERANCE", "funk_hecke_multipliers", "gauss_jacobi", "legendre_table"]

QUADRATURE_TOLERANCE = 1e-12
"""Default agreement of two successive quadratures, relative to max_l |λ_l|."""
MAX_NODES = 8192
"""The most Gauss–Jacobi nodes a quadrature takes before it gives up."""
EIGENVECTOR_NODES = 4096
"""Up to this many nodes the weights come from the eigenvectors (128 MB at most), beyond from the recurrence."""


@dataclass(frozen=True)
class FunkHeckeMultipliers:
    """λ_l, l = 0, …, L-1, of a zonal kernel, and how they were computed.

    Returned by :func:`funk_hecke_multipliers`; a frozen record.

    Parameters
    ----------
    values : ndarray, shape (L,)
        The multipliers λ_l.
    nodes : int
        Gauss–Jacobi nodes of the quadrature returned.
    difference : float
        max_l |λ_l(n) - λ_l(n')| / max_l |λ_l| of the last two quadratures (n' < n nodes).

    Examples
    --------
    >>> import numpy as np
    >>> import solvers
    >>> result = solvers.funk_hecke_multipliers(np.exp, 4, 3)
    >>> result.values.shape, result.nodes, bool(result.difference <= 1e-12)
    ((4,), 62, True)
    """

    values: np.ndarray
    nodes: int
    difference: float


@functools.lru_cache(maxsize=64)
def gauss_jacobi(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """n-point Gauss–Jacobi nodes and weights of (1 - v)^a (1 + v)^b on [-1, 1] (a, b > -1), by Golub and Welsch
    (G. H. Golub, J. H. Welsch, Math. Comp. 23 (1969) 221–230): the nodes are the eigenvalues of the symmetric
    tridiagonal Jacobi matrix of the monic Jacobi recurrence,

        α_k = (b² - a²) / ((2k + a + b)(2k + a + b + 2)),
        β_k = 4k(k + a)(k + b)(k + a + b) / ((2k + a + b)² (2k + a + b + 1)(2k + a + b - 1)),

    and the weights μ_0 v_{0j}², μ_0 = 2^{a+b+1} B(a + 1, b + 1), v_{0j} the first components of the
    normalised eigenvectors (to 1e-15). Above :data:`EIGENVECTOR_NODES` nodes the eigenvectors would take
    8n² bytes (0.5 GB at 8192): the weights are then the Christoffel numbers w_j = 1/Σ_{k<n} p_k(v_j)² of the
    orthonormal polynomials (p_0 = μ_0^{-1/2} and the recurrence of the same matrix), O(n) memory, to 1e-12
    (measured 4e-13 for a = -1/2, b = 3 at n = 4200; the node error weighs more in them).
    Exact for polynomials of degree < 2n. Returned read-only (cached)."""
    k = np.arange(n, dtype=float)
    ab = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        diagonal = (b * b - a * a) / ((2 * k + ab) * (2 * k + ab + 2))
    diagonal[0] = (b - a) / (ab + 2)
    kk = k[1:]
    # (k + a + b)/(2k + a + b - 1) is 1 at k = 1 when a + b = -1 (both factors vanish)
    ratio = np.where(2 * kk + ab - 1 == 0, 1.0, (kk + ab) / np.where(2 * kk + ab - 1 == 0, 1.0, 2 * kk + ab - 1))
    off = np.sqrt(4 * kk * (kk + a) * (kk + b) * ratio / ((2 * kk + ab) ** 2 * (2 * kk + ab + 1)))
    log_mass = (ab + 1) * np.log(2.0) + betaln(a + 1, b + 1)
    if n <= EIGENVECTOR_NODES:
        nodes, vectors = eigh_tridiagonal(diagonal, off)
        weights = np.exp(log_mass) * vectors[0] ** 2
    else:
        nodes = eigvalsh_tridiagonal(diagonal, off)
        previous, current = np.zeros(n), np.full(n, np.exp(-0.5 * log_mass))
        total = current * current
        for k in range(n - 1):  # v p_k = β_{k+1} p_{k+1} + α_k p_k + β_k p_{k-1}
            previous, current = current, ((nodes - diagonal[k]) * current - (off[k - 1] if k else 0.0) * previous) / off[k]
            total += current * current
        weights = 1.0 / total
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def legendre_table(n_degrees: int, d: int, t: np.ndarray, angle: np.ndarray | None = None) -> np.ndarray:
    r"""P_l(t_j), l = 0, …, n_degrees - 1, shape (len(t), n_degrees): the Legendre polynomials of dimension d
    normalised by P_l(1) = 1 (d = 2: Chebyshev T_l(t) = cos(l θ), θ = arccos t, or the given ``angle`` θ, which
    near t = ±1 is more accurate than arccos of t).

    Parameters
    ----------
    n_degrees : int
        Number of degrees L (returns l = 0, …, L-1).
    d : int
        Ambient dimension (≥ 2; S^{d-1}).
    t : array_like, shape (m,)
        Points in [-1, 1].
    angle : array_like, shape (m,), optional
        θ = arccos t, used for d = 2 instead of arccos of ``t``.

    Returns
    -------
    ndarray, shape (m, L)
        P_l(t_j).

    Notes
    -----
    For d ≥ 3, P_l = q_l/q_l(1) with q_l the normalised Gegenbauer polynomials
    (:func:`solvers.gegenbauer_table`), that is P_l(t) = C_l^{(d-2)/2}(t)/C_l^{(d-2)/2}(1);
    for d = 2, P_l(cos θ) = T_l(cos θ) = cos(lθ):

    .. math::

        P_l(t) = \frac{C_l^{(d-2)/2}(t)}{C_l^{(d-2)/2}(1)} \quad (d \ge 3), \qquad
        P_l(\cos\theta) = \cos(l\theta) \quad (d = 2).

    Examples
    --------
    On S² (d = 3) these are Legendre's: P_2(t) = (3t² - 1)/2 and P_3(t) = (5t³ - 3t)/2 at t = 1/2:

    >>> import numpy as np
    >>> import solvers
    >>> solvers.legendre_table(4, 3, np.array([0.5, 1.0]))
    array([[ 1.    ,  0.5   , -0.125 , -0.4375],
           [ 1.    ,  1.    ,  1.    ,  1.    ]])

    On S¹ (d = 2), cos(lθ) at θ = π/3:

    >>> solvers.legendre_table(3, 2, np.array([0.5])).round(12)
    array([[ 1. ,  0.5, -0.5]])
    """
    t = np.asarray(t, dtype=float)
    if d == 2:
        theta = np.arccos(np.clip(t, -1.0, 1.0)) if angle is None else np.asarray(angle, dtype=float)
        return np.cos(np.outer(theta, np.arange(n_degrees)))
    table = gegenbauer_table(n_degrees, d, np.append(t, 1.0))
    return table[:-1] / table[-1]


def funk_hecke_multipliers(kernel: Callable[[np.ndarray], np.ndarray], n_degrees: int, d: int, *,
                           singularity: float | None = None, profile: Callable[[np.ndarray], np.ndarray] | None = None,
                           tolerance: float = QUADRATURE_TOLERANCE) -> FunkHeckeMultipliers:
    r"""Funk–Hecke multipliers λ_l of the zonal kernel f(<x, y>) on S^{d-1}, l = 0, …, ``n_degrees`` - 1.

    Parameters
    ----------
    kernel : callable
        t ↦ f(t) on arrays of t ∈ [-1, 1], real and finite there.
    n_degrees : int
        Number L of degrees (≥ 1).
    d : int
        Ambient dimension (≥ 2; S^{d-1}).
    singularity : float or None
        None: f is smooth in t. s > 1 - d: f(t) = |x - y|^s g(|x - y|) with g smooth (module docstring).
    profile : callable or None
        r ↦ g(r), with ``singularity``: integrated instead of f(t)/r^s.
    tolerance : float
        Agreement of two successive quadratures relative to max_l |λ_l|.

    Returns
    -------
    FunkHeckeMultipliers
        The multipliers (``values``), the nodes of the quadrature and the agreement reached.

    Raises
    ------
    ValueError
        f not real and finite at a node (the node is named), or no agreement within :data:`MAX_NODES` nodes.

    Notes
    -----
    The Funk–Hecke formula, with P_l the Legendre polynomial of dimension d (:func:`legendre_table`)
    and α = (d - 3)/2:

    .. math::

        \int_{S^{d-1}} f(\langle x, y\rangle)\, Y_l(y)\, d\sigma(y) = \lambda_l\, Y_l(x), \qquad
        \lambda_l = |S^{d-2}| \int_{-1}^{1} f(t)\, P_l(t)\, (1 - t^2)^{\alpha}\, dt .

    For the kernel e^{βt} this gives c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β): 2π I_l(β) on S¹
    and 4π i_l(β) on S².

    Examples
    --------
    The attention kernel e^{t} (β = 1) on S²: λ_l = 4π i_l(1), i_l the modified spherical
    Bessel functions:

    >>> import numpy as np
    >>> import solvers
    >>> from scipy.special import spherical_in
    >>> result = solvers.funk_hecke_multipliers(np.exp, 4, 3)
    >>> print((result.values / (4 * np.pi)).round(10))
    [1.17520119 0.36787944 0.07156287 0.01006509]
    >>> print(spherical_in(np.arange(4), 1.0).round(10))
    [1.17520119 0.36787944 0.07156287 0.01006509]

    The Riesz kernel |x - y| = (2 - 2t)^{1/2} (``singularity=1``, g ≡ 1) on S²:
    λ_l = -16π/((2l - 1)(2l + 1)(2l + 3)):

    >>> result = solvers.funk_hecke_multipliers(lambda t: np.sqrt(2 - 2 * t), 3, 3, singularity=1.0,
    ...                                         profile=np.ones_like)
    >>> l = np.arange(3)
    >>> print((result.values / np.pi).round(10), (-16 / ((2 * l - 1) * (2 * l + 1) * (2 * l + 3))).round(10))
    [ 5.33333333 -1.06666667 -0.15238095] [ 5.33333333 -1.06666667 -0.15238095]
    """
    alpha = 0.5 * (d - 3)
    area = sphere_area(d - 1) if d > 2 else 2.0
    nodes = n_degrees + 32
    previous, last = None, np.inf
    while nodes <= MAX_NODES:
        values = _quadrature(kernel, profile, n_degrees, d, alpha, nodes, singularity) * area
        if previous is not None:
            scale = float(np.max(np.abs(values)))
            difference = float(np.max(np.abs(values - previous))) / scale if scale > 0 else 0.0
            if difference <= tolerance or (difference <= 1e-9 and difference > 0.5 * last):
                return FunkHeckeMultipliers(values, nodes, difference)
            last = difference
        previous = values
        nodes = -(-3 * nodes // 2) + 8
    raise ValueError(f"the Funk–Hecke quadrature of the kernel did not converge to {tolerance:g} within "
                     f"{MAX_NODES} Gauss–Jacobi nodes (a kernel that is not smooth on [-1, 1], or whose "
                     f"singularity at t = 1 is not the one declared)")


def _quadrature(kernel: Callable[[np.ndarray], np.ndarray], profile: Callable[[np.ndarray], np.ndarray] | None,
                n_degrees: int, d: int, alpha: float, nodes: int, singularity: float | None) -> np.ndarray:
    """∫_{-1}^{1} f P_l (1 - t²)^α dt, l < ``n_degrees``, with ``nodes`` Gauss–Jacobi nodes (module docstring)."""
    if singularity is None and d == 2:  # Gauss–Chebyshev: nodes at the angles (2j + 1)π/2n, weights π/n
        angle = np.pi * (np.arange(nodes) + 0.5) / nodes
        t, weights = np.cos(angle), np.full(nodes, np.pi / nodes)
        integrand = _evaluate(kernel, t)
    elif singularity is None:
        t, weights = gauss_jacobi(nodes, alpha, alpha)
        angle = None
        integrand = _evaluate(kernel, t)
    else:
        v, weights = gauss_jacobi(nodes, alpha, 2 * alpha + 1 + singularity)
        u = 0.5 * (1.0 + v)
        t = 1.0 - 2.0 * u * u  # r = |x - y| = 2u = 1 + v
        # the angle θ = 2 atan2(u, cos(θ/2)), cos(θ/2) = ((1 - u)(1 + u))^{1/2} with 1 - u = (1 - v)/2: accurate at
        # both ends, where arccos t or 2 arcsin u would lose digits
        angle = 2.0 * np.arctan2(u, np.sqrt(0.5 * (1.0 - v) * (1.0 + u)))
        smooth = _evaluate(profile, 1.0 + v) if profile is not None else _evaluate(kernel, t) / (1.0 + v) ** singularity
        integrand = smooth * (0.25 * (3.0 + v)) ** alpha
    return (weights * integrand) @ legendre_table(n_degrees, d, t, angle)


def _evaluate(kernel: Callable[[np.ndarray], np.ndarray], t: np.ndarray) -> np.ndarray:
    """f at the nodes ``t`` (or g at distances), checked real and finite."""
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
