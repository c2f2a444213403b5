"""Wasserstein distances W_p (not W_p^p) with the geodesic distance, in radians.

Measures are densities on a domain's grid, empirical measures, or plain arrays
of points. A :class:`~meanfield.Density` is by default the discrete measure with atoms at
its quadrature nodes and masses ρ_j w_j (w_j the area weights); against a
smooth density this differs from W_p of the continuous measure by at most the
W_p of the node discretisation itself (≤ h/2 on a circle grid of spacing h,
≈ h/4 for W₁ of a smooth density). On the circle, ``density="cells"`` spreads
each mass uniformly over its cell instead (error O(h²)); W₁ is then exact for
the cell measure.

The distance is named by ``method`` and computed by the space the measures
live in (:mod:`meanfield.domains._geometry`), never chosen by their size:

* "exact" on S¹: W₁ by the cumulative distribution functions (median shift) and
  W_p for p > 1 by the quantile functions with an optimal rotation (Delon, Salomon
  and Sobolevski, SIAM J. Appl. Math. 70 (2010)), :mod:`meanfield.transport._circle`;
* "exact" on S^{d-1}: optimal transport with cost arccos⟨x, y⟩^p by the network
  simplex (``ot.emd2``), refused above ``max_exact_atoms``² pairs of atoms;
* "sliced" on S^{d-1}: the spherical sliced Wasserstein distance (Bonet et al.,
  ICLR 2023; ``ot.sliced_wasserstein_sphere``), a different metric, reported as
  such with its Monte Carlo standard error;
* "polar", for a density on a ZonalSphere: W_p between polar-angle marginals
  (exact on [0, π]); a lower bound, equal to W_p when both measures are zonal.
  Points must live in the ZonalSphere's R^d.

``method=None`` is the first method of the measures' space: "exact", or
"polar" for a zonal density. Plain arrays are read as every function reads particles
(:mod:`._read_particles`): on ``domain=`` if given, else by their shape, never by
their values.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..domains._geometry import CircleGeometry, PolarGeometry, SphereGeometry
from ..domains._zonal import ZonalSphere
from .._validate import check_order, check_positive_int
from ..transport._circle import circle_w1_cells
from ._measure import Density, EmpiricalMeasure
from ._read_particles import read_particles

__all__ = ["WassersteinResult", "polar_angles", "polar_wasserstein", "wasserstein"]

logger = logging.getLogger(__name__)

_MASS_TOL = 1e-8


@dataclass(frozen=True)
class WassersteinResult:
    """A distance with the method that computed it and its accuracy.

    What :func:`wasserstein` returns with ``return_info=True``.

    Parameters
    ----------
    value : float or ndarray of shape (systems,)
        W_p in radians (or the sliced distance for ``method="sliced"``).
    p : float
        The order p ≥ 1.
    method : str
        The method asked for: "exact", "sliced" or "polar" (module docstring).
    algorithm : str
        What computed it: "circle-cdf" (exact W₁ on S¹), "circle-quantile"
        (exact W_p on S¹), "circle-cdf-cells" (exact W₁, density as uniform
        cells), a "-subcells" suffix (cells split into sub-atoms, see
        ``density``), "emd" (network simplex on S^{d-1}), "sliced-spherical",
        or "zonal-polar" (a zonal density: exact W_p between the polar-angle
        marginals ϑ = arccos x_d, which equals W_p against the particles'
        rotational average about e_d and is a lower bound for W_p itself).
    exact : bool
        True when ``value`` is W_p up to rounding and ``accuracy``.
    accuracy : float
        Bound on |value - W_p| for exact methods (certified gap of the
        rotation search on S¹, 0 for closed forms); for the sliced distance
        the Monte Carlo standard error over projections.
    n_atoms : tuple of int
        Atoms per system of the two measures.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> r = mf.wasserstein(np.array([0.1]), np.array([2 * np.pi - 0.2]), return_info=True)
    >>> print(f"{r.value:.6f}")                 # the geodesic distance 0.3 across θ = 0
    0.300000
    >>> r.method, r.algorithm, r.exact, r.accuracy, r.n_atoms
    ('exact', 'circle-cdf', True, 0.0, (1, 1))
    """

    value: float | np.ndarray
    p: float
    method: str
    algorithm: str
    exact: bool
    accuracy: float
    n_atoms: tuple[int, int]


@dataclass(frozen=True)
class _Atoms:
    geometry: Any  # the space of the atoms (its transport methods)
    points: np.ndarray  # (B, n) angles, (B, n, d) unit vectors
    weights: np.ndarray  # (B, n)
    batched: bool
    density: Any = None  # the Density the atoms come from, if any


def wasserstein(
    a: Density | EmpiricalMeasure | np.ndarray,
    b: Density | EmpiricalMeasure | np.ndarray,
    p: float = 1,
    *,
    method: str | None = None,
    domain: str | None = None,
    return_info: bool = False,
    density: str = "atoms",
    max_exact_atoms: int = 3000,
    n_projections: int = 400,
    seed: int | None = 0,
) -> float | np.ndarray | WassersteinResult:
    r"""Wasserstein distance W_p(a, b) for the geodesic distance, in radians.

    W_p(μ, ν) = (min_π ∫ d(x, y)^p dπ(x, y))^{1/p},  d = geodesic distance
    (|θ - φ| mod 2π folded to [0, π] on S¹, arccos⟨x, y⟩ on S^{d-1}).

    .. math::

        W_p(\mu, \nu) = \Big(\min_{\pi \in \Pi(\mu, \nu)} \int d(x, y)^p \,\mathrm{d}\pi(x, y)\Big)^{1/p},
        \qquad d(x, y) = \arccos\langle x, y\rangle,

    the minimum over couplings π of μ and ν (on S¹, d(θ, φ) is the distance
    of the angles along the circle, at most π).

    Parameters
    ----------
    a, b : Density, EmpiricalMeasure or ndarray
        Densities (see ``density``), empirical measures, or plain arrays of
        equally weighted points, read on ``domain`` if given, else by their
        shape only (the same rule as ``simulate``, ``energy`` and ``velocity``):

        * (n,): n angles on S¹;
        * (n, d), d ≥ 2: n unit vectors on S^{d-1} (systems of angles
          (systems, n) need ``domain="circle"``);
        * (systems, n, d): a batch of unit vectors.

        Values never decide the reading: unit vectors must satisfy
        | |x| - 1 | ≤ SPHERE_TOLERANCE = 1e-10 or a ValueError names the
        largest deviation. Unit vectors of S¹ ⊂ R² (d = 2) are converted to
        angles atan2(x₂, x₁) and compared by the exact circle methods. A single
        measure against a batch is compared with every system.
    p : float
        Order, p ≥ 1. The sums of d^p are taken in scaled units (every term ≤ 1); a p
        so large that the sum falls below :data:`POWER_FLOOR` (its terms underflow) is
        refused with a ValueError naming a p that works, unless the measures coincide.
    method : {"exact", "sliced", "polar"} or None
        The distance (module docstring); None: the first method of the measures'
        space, "exact" on S¹ and S^{d-1}, "polar" for a zonal density. It is never
        chosen by the size of the measures.
    domain : {"circle", "sphere"}, optional
        How plain arrays are read: "circle": angles (n,) or (systems, n);
        "sphere": unit vectors (n, d) or (systems, n, d). Default: by shape,
        as above. Measures on another domain than ``domain`` are refused.
    return_info : bool
        Return a :class:`WassersteinResult` (value, method, algorithm, accuracy)
        instead of the bare value.
    density : {"atoms", "cells"}
        How a :class:`~meanfield.Density` on a Circle becomes a measure:
        "atoms" (default) at the nodes θ_j with masses ρ_j w_j; "cells": mass
        ρ_j w_j spread uniformly over [θ_j - h/2, θ_j + h/2] (second-order
        close to the smooth density, where node atoms are first order: h/4 for
        W₁). With cells, W₁ against atoms is exact ("circle-cdf-cells");
        otherwise each cell is split into 16 sub-atoms at sub-cell midpoints,
        and ``accuracy`` bounds the error by h/(2·16) per density (W_p of a cell
        and its sub-atoms is at most W_∞).
    max_exact_atoms : int
        "exact" on S^{d-1} is refused when n·m > max_exact_atoms² (the message
        names method="sliced").
    n_projections, seed : int
        Projections and their seed for the sliced distance.

    Returns
    -------
    float, ndarray of shape (systems,) or WassersteinResult
        W_p in radians: a float, an array over systems for batches, or a
        :class:`WassersteinResult` with ``return_info=True``.

    Raises
    ------
    ValueError
        p < 1, an unknown method or one the measures' space has not, "exact" on
        S^{d-1} beyond ``max_exact_atoms``, measures on different domains or
        spheres of different dimension, densities of mass ≠ 1, weights not
        summing to 1, points off the unit sphere, arrays of the wrong shape, an
        unknown ``density`` or ``domain``.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> round(mf.wasserstein(np.array([0.1]), np.array([2 * np.pi - 0.2])), 12)   # across θ = 0
    0.3
    >>> # the uniform density against a Dirac at 0: W₁ = mean distance to 0 = π/2
    >>> rho = mf.uniform(mf.Circle(64))
    >>> print(f"{mf.wasserstein(rho, np.array([0.0])):.6f} {np.pi / 2:.6f}")
    1.570796 1.570796
    >>> # unit vectors of R² are read as angles: two at a right angle are π/2 apart for every p
    >>> a, b = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    >>> print(f"{mf.wasserstein(a, b, p=2):.6f}")
    1.570796
    """
    p = check_order(p)
    if domain is not None and domain not in ("circle", "sphere"):
        raise ValueError(f"domain must be 'circle' or 'sphere' (how plain arrays are read), got {domain!r}")
    if density not in ("atoms", "cells"):
        raise ValueError(f"density must be 'atoms' or 'cells', got {density!r}")
    check_positive_int("max_exact_atoms", max_exact_atoms)
    check_positive_int("n_projections", n_projections)
    cells = density == "cells"
    for name, m in (("a", a), ("b", b)):
        if cells and isinstance(m, Density) and not isinstance(m.domain.geometry, CircleGeometry):
            raise ValueError(f"density='cells' is available for Circle densities only, got {name} on a "
                             f"{m.domain.kind!r} domain")
    # W₁ of a cell density against atoms has a closed form; otherwise cells become sub-atoms
    w1_cells = cells and p == 1 and isinstance(a, Density) != isinstance(b, Density)
    atoms_a, atoms_b = _same_space(_as_atoms(a, "a", domain, cells and not w1_cells),
                                   _as_atoms(b, "b", domain, cells and not w1_cells))
    geometry = atoms_a.geometry
    method = geometry.transport_methods[0] if method is None else method
    if method not in geometry.transport_methods:
        raise ValueError(f"method must be one of {list(geometry.transport_methods)} for measures on the "
                         f"{geometry.name} domain, got {method!r}")
    batched = atoms_a.batched or atoms_b.batched
    n_atoms = (int(atoms_a.weights.shape[-1]), int(atoms_b.weights.shape[-1]))
    xa, wa, xb, wb = _broadcast_systems(atoms_a, atoms_b)
    if w1_cells:
        rho, other = (atoms_a, atoms_b) if atoms_a.density is not None else (atoms_b, atoms_a)
        value, algorithm, exact, accuracy = (circle_w1_cells(rho.weights[0], other.points, other.weights),
                                             "circle-cdf-cells", True, 0.0)
    else:
        result = geometry.wasserstein(xa, wa, xb, wb, p, method, max_exact_atoms=max_exact_atoms,
                                      n_projections=n_projections, seed=seed)
        value, algorithm, exact, accuracy = result.value, result.algorithm, result.exact, result.accuracy
        subdivided = [m for m in (atoms_a, atoms_b) if cells and m.density is not None]
        if subdivided:
            algorithm += "-subcells"
            exact = False
            accuracy += sum(m.density.domain.subcell_accuracy() for m in subdivided)
    if p > 1:
        _check_representable(value, p, _POWER_SCALE[algorithm.split("-subcells")[0]],
                             lambda: wasserstein(a, b, 1, method=method, domain=domain, density=density,
                                                 max_exact_atoms=max_exact_atoms, n_projections=n_projections,
                                                 seed=seed))
    out: float | np.ndarray = value if batched else float(value[0])
    if return_info:
        return WassersteinResult(out, p, method, algorithm, exact, accuracy, n_atoms)
    return out


#: smallest W_p^p (in the units in which each method sums d^p, every d^p ≤ 1 there) that is kept:
#: terms d^p below the smallest normal double (2.2e-308) underflow, which changes a sum of at least
#: this size by less than one rounding error (2.2e-16)
POWER_FLOOR = float(np.finfo(float).tiny / np.finfo(float).eps)
#: W₁ (in units of the method's scale) at or below which two measures count as equal up to round-off when
#: W_p's sum underflows: a mass below about this size moved far is not caught at very large p
ROUNDOFF = 1e-13
#: the distance unit of each p > 1 algorithm's sum of d^p (circle: the unit-period circle, d ≤ 1/2 turn;
#: sphere and zonal: d/π ≤ 1)
_POWER_SCALE = {"circle-quantile": 2 * np.pi, "sliced-spherical": 2 * np.pi, "emd": np.pi, "zonal-polar": np.pi}


def _check_representable(value: np.ndarray, p: float, scale: float, w1) -> None:
    """Refuse a W_p whose sum Σ π (d/scale)^p fell below :data:`POWER_FLOOR` (d^p underflowed).

    There W_p = scale · (Σ π (d/scale)^p)^{1/p} is lost in double precision (0.0 or
    garbage for p ≳ 700) unless the measures coincide: W₁ = 0, or W₁ at round-off
    level (≤ :data:`ROUNDOFF` · scale), where the computed W_p is returned.
    The error suggests p ≤ log(POWER_FLOOR)/log(W₁/scale), which keeps the sum
    representable since W_p ≥ W₁.
    """
    value = np.atleast_1d(np.asarray(value, dtype=float))
    with np.errstate(divide="ignore"):
        log_power = p * np.log(value / scale)  # log of the sum, -inf when it underflowed to 0
    low = ~(log_power >= np.log(POWER_FLOOR))
    if not np.any(low):
        return
    first = np.atleast_1d(np.asarray(w1(), dtype=float))
    first = np.broadcast_to(first, value.shape)
    # a W₁ at round-off level means measures that coincide (W_p = 0 computed exactly is then right)
    lost = low & (first > ROUNDOFF * scale)
    if not np.any(lost):
        return
    safe = np.log(POWER_FLOOR) / np.log(np.min(first[lost]) / scale)
    raise ValueError(f"p = {p:g} is too large for double precision for these measures: the sum of "
                     f"(d/{scale:.4g})^p is below {POWER_FLOOR:.3g} (d^p underflows), so W_p would be lost "
                     f"(returned as {float(np.min(value[lost])):g}); use p <= {max(safe, 1.0):.4g} "
                     f"(W_p increases with p towards the largest displacement W_inf)")


def _same_space(a: _Atoms, b: _Atoms) -> tuple[_Atoms, _Atoms]:
    """Both measures in one space: unit vectors of R² as angles, sphere points as polar angles against a zonal
    density."""
    a, b = _angles_if_planar(a), _angles_if_planar(b)
    circles = isinstance(a.geometry, CircleGeometry), isinstance(b.geometry, CircleGeometry)
    if circles[0] != circles[1]:
        raise ValueError(f"a and b must live on the same domain, got a on {a.geometry.name!r} and b on "
                         f"{b.geometry.name!r}")
    if a.geometry.dimension != b.geometry.dimension:
        da, db = a.geometry.dimension, b.geometry.dimension
        raise ValueError(f"a and b must live on the same sphere, got a on S^{da - 1} (points in R^{da}) and b on "
                         f"S^{db - 1} (points in R^{db})")
    polar = isinstance(a.geometry, PolarGeometry) or isinstance(b.geometry, PolarGeometry)
    return (_polar(a), _polar(b)) if polar else (a, b)


def _angles_if_planar(atoms: _Atoms) -> _Atoms:
    """Unit vectors (cos θ, sin θ) of S¹ ⊂ R² as angles θ = atan2(x₂, x₁)."""
    if not (isinstance(atoms.geometry, SphereGeometry) and atoms.geometry.dimension == 2):
        return atoms
    angles = np.arctan2(atoms.points[..., 1], atoms.points[..., 0])
    return _Atoms(CircleGeometry(), angles, atoms.weights, atoms.batched)


def _polar(atoms: _Atoms) -> _Atoms:
    """Polar angles arccos x_d of sphere points (a zonal measure's own atoms pass through)."""
    if isinstance(atoms.geometry, PolarGeometry):
        return atoms
    angles = np.arccos(np.clip(atoms.points[..., -1], -1.0, 1.0))
    return _Atoms(PolarGeometry(atoms.geometry.dimension), angles, atoms.weights, atoms.batched)


def _as_atoms(m: Any, name: str, domain: str | None, subcells: bool) -> _Atoms:
    """Atoms of a measure; plain arrays are read by :func:`read_particles` (on ``domain`` if given)."""
    if isinstance(m, Density):
        mass = m.mass
        if abs(mass - 1.0) > _MASS_TOL:
            raise ValueError(f"{name} must be a probability density (mass 1 within {_MASS_TOL}), got mass "
                             f"{mass:.12g}; use .normalized()")
        masses = (m.values * m.domain.weights).ravel()
        geometry, points, weights = m.domain.transport_atoms(masses / masses.sum(), subcells)
        return _Atoms(geometry, points, weights, False, m)
    if isinstance(m, (EmpiricalMeasure, np.ndarray, list, tuple)):
        read = read_particles(m, name=name, domain=domain, kinds=("circle", "sphere"), can_renormalize=False)
        return _Atoms(read.geometry, read.points, read.weights, read.batched)
    raise TypeError(f"{name} must be a Density, an EmpiricalMeasure or an array of points, got {type(m).__name__}")


def _broadcast_systems(a: _Atoms, b: _Atoms) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    na, nb = a.points.shape[0], b.points.shape[0]
    if na != nb and min(na, nb) != 1:
        raise ValueError(f"a and b must hold the same number of systems (or one of them a single one), got {na} "
                         f"and {nb}")
    n = max(na, nb)

    def expand(x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, (n,) + x.shape[1:]).copy() if x.shape[0] != n else x

    return expand(a.points), expand(a.weights), expand(b.points), expand(b.weights)


def polar_angles(points: EmpiricalMeasure | np.ndarray, d: int | None = None) -> tuple[np.ndarray, np.ndarray]:
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


def polar_wasserstein(rho: Density, particles: EmpiricalMeasure | np.ndarray, resolution: int = 4096) -> float:
    """W₁ (in radians) between the polar-angle marginals of a zonal density and of particles:

        W₁ = ∫_0^π |F(ϑ) - F_n(ϑ)| dϑ,

    F the CDF of the density's marginal (:meth:`ZonalSphere.polar_cdf`, exact for its node values or cells;
    ``rho`` of mass 1), F_n the empirical CDF of ϑ_i = arccos <x_i, e_d>. Integrated by Simpson's rule on the
    intervals between ``resolution`` uniform angles and the particle angles (F_n is constant on each). Unlike
    ``wasserstein(rho, particles, method="polar")``, which takes the density as atoms at its nodes, this
    integrates the density's own CDF.

    Parameters
    ----------
    rho : Density
        On a :class:`~meanfield.ZonalSphere`.
    particles : EmpiricalMeasure or array, shape (N, d)
    resolution : int
        Number of uniform intervals of [0, π].
    """
    if not (isinstance(rho, Density) and isinstance(rho.domain, ZonalSphere)):
        raise TypeError(f"rho must be a Density on a ZonalSphere, got {type(rho).__name__}")
    domain = rho.domain
    check_positive_int("resolution", resolution)
    angles, weights = polar_angles(particles, domain.d)
    order = np.argsort(angles)
    angles, weights = angles[order], weights[order]
    breaks = np.unique(np.concatenate([np.linspace(0.0, np.pi, int(resolution) + 1), angles]))
    left, right = breaks[:-1], breaks[1:]
    step = np.concatenate([[0.0], np.cumsum(weights)])
    emp = step[np.searchsorted(angles, left, side="right")]
    cdf = [domain.polar_cdf(rho.values, x) for x in (left, 0.5 * (left + right), right)]
    gaps = (np.abs(cdf[0] - emp) + 4 * np.abs(cdf[1] - emp) + np.abs(cdf[2] - emp)) / 6
    return float(np.sum(gaps * (right - left)))
