"""The exact point configurations that minimise the repulsive energy (paper 2, Theorem 9.2), their
spherical-design strength and their energy.

For n points x_i ∈ S^{d-1} with equal weights the energy is that of :func:`meanfield.energy`,

    H_β[C] = (1/(2β n²)) Σ_{i,j} e^{β<x_i, x_j>},

and C is a spherical t-design iff Σ_{i,j} P_k(<x_i, x_j>) = 0 for k = 1, …, t, P_k the Gegenbauer
polynomial C_k^{(d-2)/2} (Chebyshev T_k on S¹), each a positive-definite kernel on S^{d-1}
(Delsarte–Goethals–Seidel).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.special

from ..._validate import check_allocation, check_positive_int

__all__ = ["SharpConfiguration", "design_strength", "sharp_configuration"]

_GOLDEN = (1 + np.sqrt(5)) / 2


@dataclass(frozen=True)
class SharpConfiguration:
    r"""An exact configuration of n points on S^{d-1}, with its inner-product distribution.

    Built by :func:`sharp_configuration`, a frozen record; :func:`design_strength` recomputes the
    strength from the points.

    Parameters
    ----------
    name : str
        The configuration's name (``"polygon"``, ``"simplex"``, ...).
    points : ndarray, shape (n, d)
        Unit vectors.
    inner_products : ndarray
        The distinct values of <x_i, x_j> seen from any one point (1 included); the configurations
        here are distance-regular, so every point sees the same values.
    multiplicities : ndarray of int
        How many points j have each value, summing to n.
    strength : int
        The largest t for which the points form a spherical t-design.

    Notes
    -----
    The energy of the configuration, :meth:`energy`, is that of the module docstring (paper 2, §9.1),

    .. math::

        H_\beta[C] = \frac{1}{2\beta n^2} \sum_{i,j=1}^n e^{\beta\langle x_i, x_j\rangle}
                   = \frac{1}{2\beta n} \sum_k m_k\, e^{\beta t_k},

    the second form exact from the inner products t_k and their multiplicities m_k, since every point
    sees the same distribution.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.repulsive import sharp_configuration
    >>> simplex = sharp_configuration("simplex", d=3)
    >>> simplex.points.shape, simplex.strength
    ((4, 3), 2)
    >>> print(simplex.inner_products, simplex.multiplicities)
    [-0.33333333  1.        ] [3 1]

    The energy H_1 = (3 e^{-1/3} + e)/8 from the distribution, and from the points:

    >>> print(f"{simplex.energy(1.0):.10f}")
    0.6084844700
    >>> x = simplex.points
    >>> print(f"{np.exp(x @ x.T).sum() / (2 * 1.0 * 4**2):.10f}")
    0.6084844700
    """

    name: str
    points: np.ndarray
    inner_products: np.ndarray
    multiplicities: np.ndarray
    strength: int

    def energy(self, beta: float) -> float:
        """H_β[C] = (1/(2β n)) Σ_k m_k e^{β t_k}, exact from the inner-product distribution (t_k, m_k)."""
        n = int(self.multiplicities.sum())
        return float(np.sum(self.multiplicities * np.exp(beta * self.inner_products)) / (2 * beta * n))


def _polygon(n: int) -> np.ndarray:
    angles = 2 * np.pi * np.arange(n) / n
    return np.stack([np.cos(angles), np.sin(angles)], axis=-1)


def _simplex(d: int) -> np.ndarray:
    """d + 1 unit vectors of R^d with pairwise inner product -1/d: the centred basis of R^{d+1}, in a basis
    of its orthogonal complement of (1, …, 1)."""
    centred = np.eye(d + 1) - 1.0 / (d + 1)
    basis = np.linalg.svd(centred)[2][:d]
    points = centred @ basis.T
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def _icosahedron() -> np.ndarray:
    base = [(0.0, s1, s2 * _GOLDEN) for s1 in (-1, 1) for s2 in (-1, 1)]
    points = np.array([np.roll(p, k) for p in base for k in range(3)])
    return points / np.linalg.norm(points[0])


def _600_cell() -> np.ndarray:
    """The 120 unit quaternions of the binary icosahedral group: (±1, 0, 0, 0) permuted, (±1/2)⁴, and the even
    permutations of (±φ, ±1, ±1/φ, 0)/2."""
    points = [sign * axis for axis in np.eye(4) for sign in (-1, 1)]
    points += [np.array(signs) for signs in itertools.product((-0.5, 0.5), repeat=4)]
    even = [p for p in itertools.permutations(range(4))
            if sum(p[i] > p[j] for i in range(4) for j in range(i + 1, 4)) % 2 == 0]
    for signs in itertools.product((-1, 1), repeat=3):
        values = np.array([signs[0] * _GOLDEN, signs[1] * 1.0, signs[2] / _GOLDEN, 0.0]) / 2
        points += [values[list(perm)] for perm in even]
    return np.array(points)


def _e8_roots() -> np.ndarray:
    """The 240 roots of E₈ over √2: ±e_i ± e_j (112) and (±1/2)⁸ with an even number of minus signs (128)."""
    roots = []
    for i, j in itertools.combinations(range(8), 2):
        for si, sj in itertools.product((-1, 1), repeat=2):
            root = np.zeros(8)
            root[i], root[j] = si, sj
            roots.append(root)
    roots += [np.array(signs) / 2 for signs in itertools.product((-1, 1), repeat=8) if signs.count(-1) % 2 == 0]
    return np.array(roots) / np.sqrt(2)


def sharp_configuration(name: str, d: int | None = None, n: int | None = None) -> SharpConfiguration:
    r"""One of the exact configurations of paper 2, Theorem 9.2, with its inner-product distribution
    and design strength.

    ``"polygon"`` (n points on S¹, strength n - 1), ``"simplex"`` (d + 1 points of S^{d-1}, strength 2),
    ``"cross_polytope"`` (±e_i, 2d points, strength 3), ``"icosahedron"`` (12 points of S², strength 5),
    ``"600_cell"`` (120 points of S³, strength 11), ``"e8"`` (the 240 E₈ roots on S⁷, strength 7).

    Parameters
    ----------
    name : {"polygon", "simplex", "cross_polytope", "icosahedron", "600_cell", "e8"}
        Which configuration.
    d : int, optional
        Ambient dimension (points on S^{d-1}), d ≥ 2: required by ``"simplex"`` and ``"cross_polytope"``;
        for the others, if given, it must be the configuration's own (2 for a polygon).
    n : int, optional
        Number of points, n ≥ 2: required by ``"polygon"``; for the others, if given, it must be the
        configuration's own.

    Returns
    -------
    SharpConfiguration
        The points, the distinct inner products seen from a point (increasing, 1 last), their
        multiplicities and the design strength.

    Raises
    ------
    ValueError
        An unknown name, a missing n (polygon) or d (simplex, cross-polytope), or an n or d that
        contradicts the configuration.

    Notes
    -----
    Theorem 9.2 (Cohn–Kumar) says that a global minimiser of
    :math:`H_\beta[C] = \frac{1}{2\beta n^2}\sum_{i,j} e^{\beta\langle x_i, x_j\rangle}` over n-point
    sets of S^{d-1} is a sharp configuration (m distinct inner products between distinct points and a
    spherical (2m - 1)-design) or the 600-cell. The 600-cell is the 120 unit quaternions of the binary
    icosahedral group; the E₈ roots are ±e_i ± e_j and (±1/2)⁸ with an even number of minus signs,
    over √2. :func:`design_strength` recomputes the strength from the points, and
    :func:`optimal_configurations` asks whether random starts reach these configurations.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.repulsive import sharp_configuration
    >>> cell = sharp_configuration("600_cell")
    >>> cell.points.shape, cell.strength, int(cell.multiplicities.sum())
    ((120, 4), 11, 120)
    >>> bool(np.allclose(np.linalg.norm(cell.points, axis=1), 1.0))
    True

    The stated distribution is the one of the points (seen from the first point):

    >>> values, counts = np.unique(np.round(cell.points @ cell.points[0], 12), return_counts=True)
    >>> bool(np.allclose(values, cell.inner_products)), bool(np.all(counts == cell.multiplicities))
    (True, True)
    >>> print(sharp_configuration("polygon", n=6).inner_products)
    [-1.  -0.5  0.5  1. ]
    """
    fixed = {"icosahedron": (12, 3), "600_cell": (120, 4), "e8": (240, 8)}
    if name == "polygon":
        if n is None or (d is not None and d != 2):
            raise ValueError(f"a polygon needs n points and lives on S¹ (d = 2), got n={n}, d={d}")
        n = check_positive_int("n", n, minimum=2)
        check_allocation("n", n, 28.0 * n, "a polygon (its points and its inner products: 28 bytes a point)")
        k = np.arange(n // 2 + 1)
        counts = np.where((k == 0) | (2 * k == n), 1, 2)
        return SharpConfiguration(name, _polygon(n), np.cos(2 * np.pi * k / n)[::-1], counts[::-1], n - 1)
    if name in ("simplex", "cross_polytope"):
        if d is None:
            raise ValueError(f"a {name} needs d (points on S^{{d-1}}), got d=None")
        d = check_positive_int("d", d, minimum=2)
        size = d + 1 if name == "simplex" else 2 * d
        check_allocation("d", d, 24.0 * size * d,
                         f"a {name} ({size} points of R^{d}, with the work of its construction)")
        if n is not None and n != size:
            raise ValueError(f"a {name} on S^{d - 1} has n = {size} points, got n={n}")
        if name == "simplex":
            return SharpConfiguration(name, _simplex(d), np.array([-1.0 / d, 1.0]), np.array([d, 1]), 2)
        points = np.concatenate([np.eye(d), -np.eye(d)])
        return SharpConfiguration(name, points, np.array([-1.0, 0.0, 1.0]), np.array([1, 2 * d - 2, 1]), 3)
    if name in fixed and ((n is not None and n != fixed[name][0]) or (d is not None and d != fixed[name][1])):
        raise ValueError(f"the {name} has n = {fixed[name][0]} points on S^{fixed[name][1] - 1}, got n={n}, d={d}")
    if name == "icosahedron":
        root5 = 1 / np.sqrt(5)
        return SharpConfiguration(name, _icosahedron(), np.array([-1.0, -root5, root5, 1.0]),
                                  np.array([1, 5, 5, 1]), 5)
    if name == "600_cell":
        half = np.array([_GOLDEN / 2, 0.5, 1 / (2 * _GOLDEN)])
        values = np.concatenate([[-1.0], -half, [0.0], half[::-1], [1.0]])
        return SharpConfiguration(name, _600_cell(), values, np.array([1, 12, 20, 12, 30, 12, 20, 12, 1]), 11)
    if name == "e8":
        return SharpConfiguration(name, _e8_roots(), np.array([-1.0, -0.5, 0.0, 0.5, 1.0]),
                                  np.array([1, 56, 126, 56, 1]), 7)
    raise ValueError(f"unknown configuration {name!r}; one of 'polygon', 'simplex', 'cross_polytope', "
                     f"'icosahedron', '600_cell', 'e8'")


def design_strength(points: np.ndarray, max_strength: int = 30, tolerance: float = 1e-10) -> int:
    r"""The largest t ≤ ``max_strength`` such that the points form a spherical t-design.

    The points form a t-design when

        M_k = (1/n²) Σ_{i,j} P_k(<x_i, x_j>) / P_k(1) ≤ ``tolerance``  for k = 1, …, t,

    P_k = C_k^{(d-2)/2} (T_k for d = 2). M_k ≥ 0 always (P_k is positive definite) and M_k = 0 exactly for
    a design; at round-off M_k ~ 1e-16.

    Parameters
    ----------
    points : array_like, shape (n, d)
        Unit vectors (to 1e-12), d ≥ 2.
    max_strength : int, default 30
        The largest t tested; returned when every M_k up to it is below the tolerance.
    tolerance : float, default 1e-10
        Threshold on M_k, > 0.

    Returns
    -------
    int
        The strength t (0 when M_1 already exceeds the tolerance, i.e. the mean is not 0).

    Raises
    ------
    ValueError
        Points not of shape (n, d) with d ≥ 2 or not unit vectors, ``max_strength`` not a positive
        integer, ``tolerance`` not finite and > 0.

    Notes
    -----
    With :math:`P_k = C_k^{(d-2)/2}` the Gegenbauer polynomial (:math:`T_k` for d = 2), a
    positive-definite kernel on S^{d-1} (Delsarte–Goethals–Seidel), the moments

    .. math::

        M_k = \frac{1}{n^2} \sum_{i,j=1}^n \frac{P_k(\langle x_i, x_j\rangle)}{P_k(1)} \ge 0

    vanish for k = 1, …, t exactly when the points are a spherical t-design (paper 2, Definition 9.1).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies.repulsive import design_strength, sharp_configuration

    A regular n-gon is an (n - 1)-design; the icosahedron a 5-design:

    >>> angles = 2 * np.pi * np.arange(7) / 7
    >>> design_strength(np.stack([np.cos(angles), np.sin(angles)], axis=1))
    6
    >>> design_strength(sharp_configuration("icosahedron").points)
    5

    Random points are not even a 1-design (their mean is not 0):

    >>> x = np.random.default_rng(0).standard_normal((10, 3))
    >>> design_strength(x / np.linalg.norm(x, axis=1, keepdims=True))
    0
    """
    x = np.asarray(points, dtype=float)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(f"points must have shape (n, d) with d >= 2, got {x.shape}")
    if not np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-12):
        raise ValueError("points must be unit vectors")
    check_positive_int("max_strength", max_strength)
    if not (np.isfinite(tolerance) and tolerance > 0):
        raise ValueError(f"tolerance must be a finite number > 0, got {tolerance!r}")
    inner = np.clip(x @ x.T, -1.0, 1.0)
    d = x.shape[1]
    for k in range(1, max_strength + 1):
        if d == 2:
            moment = np.mean(scipy.special.eval_chebyt(k, inner))
        else:
            alpha = (d - 2) / 2
            moment = np.mean(scipy.special.eval_gegenbauer(k, alpha, inner)) / scipy.special.eval_gegenbauer(
                k, alpha, 1.0)
        if moment > tolerance:
            return k - 1
    return max_strength
