"""Wasserstein distances W_p (not W_p^p) with the geodesic distance, in radians.

Measures are densities on a domain's grid, empirical measures, or plain arrays
of points. A :class:`~meanfield.Density` is by default the discrete measure with atoms at
its quadrature nodes and masses ρ_j w_j (w_j the area weights); against a
smooth density this differs from W_p of the continuous measure by at most the
W_p of the node discretisation itself (≤ h/2 on a circle grid of spacing h,
≈ h/4 for W₁ of a smooth density). On the circle, ``density="cells"`` spreads
each mass uniformly over its cell instead (error O(h²)); W₁ is then exact for
the cell measure.

* S¹: exact W₁ (cumulative distribution functions, median shift) and exact W_p
  for p > 1 (quantile functions with an optimal rotation; Delon, Salomon and
  Sobolevski, SIAM J. Appl. Math. 70 (2010)), see :mod:`._wasserstein_circle`.
* S^{d-1}: exact optimal transport with cost arccos⟨x, y⟩^p by the network
  simplex (``ot.emd2``) while n·m ≤ ``max_exact_atoms``², else the spherical
  sliced Wasserstein distance (Bonet et al., ICLR 2023; ``ot.sliced_wasserstein_sphere``),
  a different metric, reported as such with its Monte Carlo standard error.
* A density on a ZonalSphere: W_p between polar-angle marginals (exact on
  [0, π]); a lower bound, equal to W_p when both measures are zonal. Points
  must live in the ZonalSphere's R^d.

Plain arrays are read as every function reads particles (:mod:`._reading`):
on ``domain=`` if given, else by their shape, never by their values; see
:func:`wasserstein`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..measures._measure import Density, EmpiricalMeasure
from ..measures._read_particles import read_particles
from .._validate import check_order
from ._circle import circle_w1, circle_w1_cells, circle_wp, interval_wp

__all__ = ["WassersteinResult", "wasserstein"]

logger = logging.getLogger(__name__)

CELL_SUBATOMS = 16
_MASS_TOL = 1e-8


@dataclass(frozen=True)
class WassersteinResult:
    """A distance with the method that computed it and its accuracy.

    Attributes
    ----------
    value : float or ndarray of shape (systems,)
        W_p in radians (or the sliced distance when ``exact`` is False).
    p : float
    method : str
        "circle-cdf" (exact W₁ on S¹), "circle-quantile" (exact W_p on S¹),
        "circle-cdf-cells" (exact W₁, density as uniform cells), a
        "-subcells" suffix (cells split into sub-atoms, see ``density``),
        "emd" (exact network simplex on S^{d-1}), "sliced-spherical", or
        "zonal-polar" (a zonal density: exact W_p between the polar-angle
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
    """

    value: float | np.ndarray
    p: float
    method: str
    exact: bool
    accuracy: float
    n_atoms: tuple[int, int]


@dataclass(frozen=True)
class _Atoms:
    kind: str  # "circle", "sphere" or "zonal"
    points: np.ndarray  # (B, n) angles on S¹ or polar angles, (B, n, d) unit vectors on S^{d-1}
    weights: np.ndarray  # (B, n)
    batched: bool
    dimension: int  # ambient dimension d of S^{d-1} ⊂ R^d (2 on the circle)


def wasserstein(
    a: Density | EmpiricalMeasure | np.ndarray,
    b: Density | EmpiricalMeasure | np.ndarray,
    p: float = 1,
    *,
    domain: str | None = None,
    return_info: bool = False,
    density: str = "atoms",
    max_exact_atoms: int = 3000,
    n_projections: int = 400,
    seed: int | None = 0,
) -> float | np.ndarray | WassersteinResult:
    """Wasserstein distance W_p(a, b) for the geodesic distance, in radians.

    W_p(μ, ν) = (min_π ∫ d(x, y)^p dπ(x, y))^{1/p},  d = geodesic distance
    (|θ - φ| mod 2π folded to [0, π] on S¹, arccos⟨x, y⟩ on S^{d-1}).

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
        largest deviation. Unit
        vectors of S¹ ⊂ R² (d = 2) are converted to angles atan2(x₂, x₁)
        and compared by the exact circle methods. ``domain`` overrides the
        reading (e.g. ``domain="circle"`` for systems of two angles). A single
        measure against a batch is compared with every system.
    p : float
        Order, p ≥ 1. The sums of d^p are taken in scaled units (every term ≤ 1); a p
        so large that the sum falls below :data:`POWER_FLOOR` (its terms underflow) is
        refused with a ValueError naming a p that works, unless the measures coincide.
    domain : {"circle", "sphere"}, optional
        How plain arrays are read: "circle": angles (n,) or (systems, n);
        "sphere": unit vectors (n, d) or (systems, n, d). Default: by shape,
        as above. Measures on another domain than ``domain`` are refused.
    return_info : bool
        Return a :class:`WassersteinResult` (value, method, accuracy) instead
        of the bare value.
    density : {"atoms", "cells"}
        How a :class:`~meanfield.Density` on a Circle becomes a measure:
        "atoms" (default) at the nodes θ_j with masses ρ_j w_j; "cells": mass
        ρ_j w_j spread uniformly over [θ_j - h/2, θ_j + h/2] (second-order
        close to the smooth density, where node atoms are first order: h/4 for
        W₁). With cells, W₁ against atoms is exact ("circle-cdf-cells");
        otherwise each cell is split into ``CELL_SUBATOMS`` = 16 atoms at
        sub-cell midpoints, and ``accuracy`` bounds the error by h/(2·16) per
        density (W_p of a cell and its sub-atoms is at most W_∞).
    max_exact_atoms : int
        On S^{d-1}, exact optimal transport while n·m ≤ max_exact_atoms²; above,
        the spherical sliced distance.
    n_projections, seed : int
        Projections and their seed for the sliced distance.

    Returns
    -------
    float, or ndarray of shape (systems,) for batches, or WassersteinResult.

    Raises
    ------
    ValueError
        p < 1, measures on different domains or spheres of different
        dimension, densities of mass ≠ 1, weights not summing to 1, points
        off the unit sphere, arrays of the wrong shape, an unknown
        ``density`` or ``domain``.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> round(mf.wasserstein(np.array([0.1]), np.array([2 * np.pi - 0.2])), 12)
    0.3
    """
    p = check_order(p)
    if domain is not None and domain not in ("circle", "sphere"):
        raise ValueError(f"domain must be 'circle' or 'sphere' (how plain arrays are read), got {domain!r}")
    if density not in ("atoms", "cells"):
        raise ValueError(f"density must be 'atoms' or 'cells', got {density!r}")
    cells = density == "cells"
    for name, m in (("a", a), ("b", b)):
        if cells and isinstance(m, Density) and m.domain.kind != "circle":
            raise ValueError(f"density='cells' is available for Circle densities only, got {name} on a {m.domain.kind!r} domain")
    # W₁ of a cell density against atoms has a closed form; otherwise cells become sub-atoms
    w1_cells = cells and p == 1 and isinstance(a, Density) != isinstance(b, Density)
    subcells = cells and not w1_cells
    atoms_a = _as_atoms(a, "a", domain, subcells)
    atoms_b = _as_atoms(b, "b", domain, subcells)
    atoms_a, atoms_b = _same_domain(atoms_a, atoms_b)
    batched = atoms_a.batched or atoms_b.batched
    n_atoms = (int(atoms_a.weights.shape[-1]), int(atoms_b.weights.shape[-1]))
    if w1_cells:
        rho, other = (atoms_a, atoms_b) if isinstance(a, Density) else (atoms_b, atoms_a)
        value = circle_w1_cells(rho.weights[0], other.points, other.weights)
        method, exact, accuracy = "circle-cdf-cells", True, 0.0
    else:
        xa, wa, xb, wb = _broadcast_systems(atoms_a, atoms_b)
        if atoms_a.kind == "zonal":
            value = interval_wp(xa, wa, xb, wb, p)
            method, exact, accuracy = "zonal-polar", False, float("nan")
        elif atoms_a.kind == "circle":
            if p == 1:
                value = circle_w1(xa, wa, xb, wb)
                method, accuracy = "circle-cdf", 0.0
            else:
                value, gap = circle_wp(xa, wa, xb, wb, p)
                method, accuracy = "circle-quantile", float(np.max(gap))
            exact = True
            subdivided = [m for m in (a, b) if subcells and isinstance(m, Density)]
            if subdivided:
                method += "-subcells"
                exact = False
                accuracy += sum(np.pi / (m.domain.n * CELL_SUBATOMS) for m in subdivided)
        else:
            value, method, exact, accuracy = _sphere(xa, wa, xb, wb, p, max_exact_atoms, n_projections, seed)
    if p > 1:
        _check_representable(value, p, _POWER_SCALE[method.split("-subcells")[0]],
                             lambda: wasserstein(a, b, 1, domain=domain, density=density, max_exact_atoms=max_exact_atoms,
                                                 n_projections=n_projections, seed=seed))
    out: float | np.ndarray = value if batched else float(value[0])
    if return_info:
        return WassersteinResult(out, p, method, exact, accuracy, n_atoms)
    return out


#: smallest W_p^p (in the units in which each method sums d^p, every d^p ≤ 1 there) that is kept:
#: terms d^p below the smallest normal double (2.2e-308) underflow, which changes a sum of at least
#: this size by less than one rounding error (2.2e-16)
POWER_FLOOR = float(np.finfo(float).tiny / np.finfo(float).eps)
#: W₁ (in units of the method's scale) at or below which two measures count as equal up to round-off when
#: W_p's sum underflows: a mass below about this size moved far is not caught at very large p
ROUNDOFF = 1e-13
#: the distance unit of each p > 1 method's sum of d^p (circle: the unit-period circle, d ≤ 1/2 turn;
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


def _same_domain(a: _Atoms, b: _Atoms) -> tuple[_Atoms, _Atoms]:
    """Both measures on one domain: unit vectors of R² as angles, sphere points as polar angles against a zonal density."""
    a, b = _angles_if_planar(a), _angles_if_planar(b)
    if a.kind != b.kind and "circle" in (a.kind, b.kind):
        raise ValueError(f"a and b must live on the same domain, got a on {a.kind!r} and b on {b.kind!r}")
    if a.dimension != b.dimension:
        raise ValueError(
            f"a and b must live on the same sphere, got a on S^{a.dimension - 1} (points in R^{a.dimension}) "
            f"and b on S^{b.dimension - 1} (points in R^{b.dimension})"
        )
    if "zonal" in (a.kind, b.kind):
        a, b = _polar(a), _polar(b)
    return a, b


def _angles_if_planar(atoms: _Atoms) -> _Atoms:
    """Unit vectors (cos θ, sin θ) of S¹ ⊂ R² as angles θ = atan2(x₂, x₁)."""
    if atoms.kind != "sphere" or atoms.dimension != 2:
        return atoms
    angles = np.arctan2(atoms.points[..., 1], atoms.points[..., 0])
    return _Atoms("circle", angles, atoms.weights, atoms.batched, 2)


def _polar(atoms: _Atoms) -> _Atoms:
    """Polar angles arccos x_d of sphere points (a zonal measure's own atoms pass through)."""
    if atoms.kind == "zonal":
        return atoms
    angles = np.arccos(np.clip(atoms.points[..., -1], -1.0, 1.0))
    return _Atoms("zonal", angles, atoms.weights, atoms.batched, atoms.dimension)


def _as_atoms(m: Any, name: str, domain: str | None, subcells: bool) -> _Atoms:
    """Atoms of a measure; plain arrays are read by :func:`meanfield.measures._read_particles.read_particles` (on ``domain`` if given)."""
    if isinstance(m, Density):
        atoms = _density_atoms(m, name)
        if subcells:
            h = 2 * np.pi / m.domain.n
            offsets = ((np.arange(CELL_SUBATOMS) + 0.5) / CELL_SUBATOMS - 0.5) * h
            points = (atoms.points[..., :, None] + offsets).reshape(1, -1)
            weights = np.repeat(atoms.weights / CELL_SUBATOMS, CELL_SUBATOMS, axis=-1)
            atoms = _Atoms("circle", points, weights, False, 2)
        return atoms
    if isinstance(m, (EmpiricalMeasure, np.ndarray, list, tuple)):
        read = read_particles(m, name=name, domain=domain, kinds=("circle", "sphere"), can_renormalize=False)
        dimension = 2 if read.kind == "circle" else read.points.shape[-1]
        return _Atoms(read.kind, read.points, read.weights, read.batched, dimension)
    raise TypeError(f"{name} must be a Density, an EmpiricalMeasure or an array of points, got {type(m).__name__}")


def _density_atoms(rho: Density, name: str) -> _Atoms:
    mass = rho.mass
    if abs(mass - 1.0) > _MASS_TOL:
        raise ValueError(
            f"{name} must be a probability density (mass 1 within {_MASS_TOL}), got mass {mass:.12g}; "
            "use .normalized()"
        )
    weights = (rho.values * rho.domain.weights).ravel()
    weights = weights / weights.sum()
    kind = rho.domain.kind
    dimension = int(rho.domain.dimension)
    if kind == "circle":
        return _Atoms("circle", np.asarray(rho.domain.theta, dtype=float)[None], weights[None], False, 2)
    if kind == "sphere":
        points = np.asarray(rho.domain.points, dtype=float).reshape(-1, dimension)
        return _Atoms("sphere", points[None], weights[None], False, dimension)
    if kind == "zonal":
        return _Atoms("zonal", np.asarray(rho.domain.polar, dtype=float)[None], weights[None], False, dimension)
    raise ValueError(f"{name}: Wasserstein distances of a density on a {kind!r} domain are not available")


def _broadcast_systems(a: _Atoms, b: _Atoms) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    na, nb = a.points.shape[0], b.points.shape[0]
    if na != nb and min(na, nb) != 1:
        raise ValueError(f"a and b must hold the same number of systems (or one of them a single one), got {na} and {nb}")
    n = max(na, nb)

    def expand(x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, (n,) + x.shape[1:]).copy() if x.shape[0] != n else x

    return expand(a.points), expand(a.weights), expand(b.points), expand(b.weights)


def _sphere(
    xa: np.ndarray,
    wa: np.ndarray,
    xb: np.ndarray,
    wb: np.ndarray,
    p: float,
    max_exact_atoms: int,
    n_projections: int,
    seed: int | None,
) -> tuple[np.ndarray, str, bool, float]:
    import ot

    n, m = xa.shape[1], xb.shape[1]
    values = np.empty(xa.shape[0])
    if n * m <= max_exact_atoms**2:
        for s in range(xa.shape[0]):  # one network-simplex problem per system
            # cost (d/π)^p ≤ 1: no overflow for any p (π^p overflows beyond p ≈ 620)
            cost = (np.arccos(np.clip(xa[s] @ xb[s].T, -1.0, 1.0)) / np.pi) ** p
            values[s] = np.pi * max(float(ot.emd2(wa[s], wb[s], cost, numItermax=10_000_000)), 0.0) ** (1.0 / p)
        return values, "emd", True, 0.0
    logger.info("sliced spherical Wasserstein for %d x %d atoms (exact limit %d^2)", n, m, max_exact_atoms)
    errors = np.empty(xa.shape[0])
    for s in range(xa.shape[0]):
        _, log = ot.sliced_wasserstein_sphere(
            xa[s], xb[s], wa[s], wb[s], n_projections=n_projections, p=p, seed=seed, log=True
        )
        # POT works on the unit-period circle: per-projection W_p^p in units of (2π)^p
        per_projection = np.asarray(log["projected_emds"], dtype=float)
        mean = float(np.mean(per_projection))
        values[s] = 2 * np.pi * mean ** (1.0 / p)
        se_pp = float(np.std(per_projection, ddof=1) / np.sqrt(per_projection.size))
        # delta method: d(x^{1/p}) = x^{1/p - 1} dx / p
        errors[s] = 2 * np.pi * se_pp * mean ** (1.0 / p - 1.0) / p if mean > 0 else 0.0
    return values, "sliced-spherical", False, float(np.max(errors))
