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
  [0, π]); a lower bound, equal to W_p when both measures are zonal.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._measures import Density, EmpiricalMeasure
from ._wasserstein_circle import circle_w1, circle_w1_cells, circle_wp, interval_wp

__all__ = ["WassersteinResult", "wasserstein"]

logger = logging.getLogger(__name__)

CELL_SUBATOMS = 16
_UNIT_TOL = 1e-8
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
    kind: str
    points: np.ndarray  # (B, n) angles on S¹, (B, n, d) unit vectors on S^{d-1}
    weights: np.ndarray  # (B, n)
    batched: bool


def wasserstein(
    a: Density | EmpiricalMeasure | np.ndarray,
    b: Density | EmpiricalMeasure | np.ndarray,
    p: float = 1,
    *,
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
        Densities (see ``density``), empirical measures, or plain points: angles of shape (n,) or (systems, n) on S¹,
        unit vectors (n, d) or (systems, n, d) on S^{d-1}. A plain 2-D array
        is read as unit vectors when the other argument lives on a sphere or
        every row has unit norm, else as systems of angles. A single measure
        against a batch is compared with every system.
    p : float
        Order, p ≥ 1.
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
        p < 1, measures on different domains, densities of mass ≠ 1, weights
        not summing to 1, points off the unit sphere, an unknown ``density``.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> round(mf.wasserstein(np.array([0.1]), np.array([2 * np.pi - 0.2])), 12)
    0.3
    """
    p = _check_p(p)
    if density not in ("atoms", "cells"):
        raise ValueError(f"density must be 'atoms' or 'cells', got {density!r}")
    cells = density == "cells"
    for name, m in (("a", a), ("b", b)):
        if cells and isinstance(m, Density) and m.domain.kind != "circle":
            raise ValueError(f"density='cells' is available for Circle densities only, got {name} on a {m.domain.kind!r} domain")
    if cells and p == 1 and isinstance(a, Density) != isinstance(b, Density):
        return _w1_cells(a, b, return_info)
    hint = _kind_hint(a, b)
    atoms_a = _as_atoms(a, "a", hint, cells)
    atoms_b = _as_atoms(b, "b", hint, cells)
    if "zonal" in (atoms_a.kind, atoms_b.kind):
        atoms_a, atoms_b = _polar(atoms_a, "a"), _polar(atoms_b, "b")
    if atoms_a.kind != atoms_b.kind:
        raise ValueError(f"a and b must live on the same domain, got a on {atoms_a.kind!r} and b on {atoms_b.kind!r}")
    if atoms_a.kind == "sphere" and atoms_a.points.shape[-1] != atoms_b.points.shape[-1]:
        raise ValueError(
            f"a and b must live on the same sphere, got points in R^{atoms_a.points.shape[-1]} "
            f"and R^{atoms_b.points.shape[-1]}"
        )
    xa, wa, xb, wb = _broadcast_systems(atoms_a, atoms_b)
    batched = atoms_a.batched or atoms_b.batched
    n_atoms = (int(wa.shape[-1]), int(wb.shape[-1]))
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
        subdivided = [m for m in (a, b) if cells and isinstance(m, Density)]
        if subdivided:
            method += "-subcells"
            exact = False
            accuracy += sum(np.pi / (m.domain.n * CELL_SUBATOMS) for m in subdivided)
    else:
        value, method, exact, accuracy = _sphere(xa, wa, xb, wb, p, max_exact_atoms, n_projections, seed)
    out: float | np.ndarray = value if batched else float(value[0])
    if return_info:
        return WassersteinResult(out, p, method, exact, accuracy, n_atoms)
    return out


def _polar(atoms: _Atoms, name: str) -> _Atoms:
    """Polar angles arccos x_d of sphere points (a zonal measure's own atoms pass through)."""
    if atoms.kind == "zonal":
        return atoms
    if atoms.kind != "sphere":
        raise ValueError(f"a and b must live on the same domain, got {name} on {atoms.kind!r} against a zonal density")
    angles = np.arccos(np.clip(atoms.points[..., -1], -1.0, 1.0))
    return _Atoms("zonal", angles, atoms.weights, atoms.batched)


def _check_p(p: Any) -> float:
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise TypeError(f"p must be a real number >= 1, got {p!r}") from None
    if not np.isfinite(value) or value < 1:
        raise ValueError(f"p must be finite and >= 1, got {p!r}")
    return value


def _kind_hint(a: Any, b: Any) -> str | None:
    for m in (a, b):
        if isinstance(m, Density):
            return m.domain.kind
        if isinstance(m, EmpiricalMeasure):
            return m.kind
    return None


def _w1_cells(a: Any, b: Any, return_info: bool) -> float | np.ndarray | WassersteinResult:
    """Exact W₁ between a Circle density taken as uniform cells and atoms."""
    rho, other, rho_name = (a, b, "a") if isinstance(a, Density) else (b, a, "b")
    dens = _density_atoms(rho, rho_name)
    atoms = _as_atoms(other, "b" if rho_name == "a" else "a", "circle")
    if atoms.kind != "circle":
        raise ValueError(f"a and b must live on the same domain, got a circle density against points on {atoms.kind!r}")
    value = circle_w1_cells(dens.weights[0], atoms.points, atoms.weights)
    out: float | np.ndarray = value if atoms.batched else float(value[0])
    if return_info:
        n_atoms = (rho.domain.n, atoms.points.shape[1])
        return WassersteinResult(out, 1.0, "circle-cdf-cells", True, 0.0, n_atoms if rho_name == "a" else n_atoms[::-1])
    return out


def _as_atoms(m: Any, name: str, hint: str | None, cells: bool = False) -> _Atoms:
    if isinstance(m, Density):
        atoms = _density_atoms(m, name)
        if cells:
            h = 2 * np.pi / m.domain.n
            offsets = ((np.arange(CELL_SUBATOMS) + 0.5) / CELL_SUBATOMS - 0.5) * h
            points = (atoms.points[..., :, None] + offsets).reshape(1, -1)
            weights = np.repeat(atoms.weights / CELL_SUBATOMS, CELL_SUBATOMS, axis=-1)
            atoms = _Atoms("circle", points, weights, False)
        return atoms
    if isinstance(m, EmpiricalMeasure):
        kind = m.kind
        if kind not in ("circle", "sphere"):
            raise ValueError(f"{name} must live on the circle or a sphere, got an empirical measure on {kind!r}")
        batched = m.weights.ndim == 2
        points = m.points if batched else m.points[None]
        weights = m.weights if batched else m.weights[None]
        if kind == "sphere":
            _check_unit(points, name)
        return _Atoms(kind, points, weights, batched)
    if isinstance(m, (np.ndarray, list, tuple)):
        points = np.asarray(m, dtype=float)
        if not np.all(np.isfinite(points)):
            raise ValueError(f"{name} must contain finite points (found NaN or infinity)")
        kind = _array_kind(points, hint)
        if kind == "circle":
            if points.ndim not in (1, 2) or points.shape[-1] < 1:
                raise ValueError(f"{name}: angles must have shape (n,) or (systems, n), got {points.shape}")
            batched = points.ndim == 2
        else:
            if points.ndim not in (2, 3) or points.shape[-2] < 1:
                raise ValueError(f"{name}: points on a sphere must have shape (n, d) or (systems, n, d), got {points.shape}")
            batched = points.ndim == 3
            _check_unit(points, name)
        points = points if batched else points[None]
        n = points.shape[1]
        return _Atoms(kind, points, np.full(points.shape[:2], 1.0 / n), batched)
    raise TypeError(f"{name} must be a Density, an EmpiricalMeasure or an array of points, got {type(m).__name__}")


def _array_kind(points: np.ndarray, hint: str | None) -> str:
    if hint in ("circle", "sphere"):
        return hint
    if hint == "zonal":
        return "sphere"
    if points.ndim == 1:
        return "circle"
    if points.ndim == 3:
        return "sphere"
    if points.ndim == 2 and points.shape[-1] >= 2 and np.allclose(np.linalg.norm(points, axis=-1), 1.0, atol=_UNIT_TOL):
        return "sphere"
    return "circle"


def _check_unit(points: np.ndarray, name: str) -> None:
    err = float(np.max(np.abs(np.linalg.norm(points, axis=-1) - 1.0)))
    if err > _UNIT_TOL:
        raise ValueError(f"{name}: points must lie on the unit sphere (|x| = 1 within {_UNIT_TOL}), got max ||x| - 1| = {err:.3g}")


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
    if kind == "circle":
        return _Atoms("circle", np.asarray(rho.domain.theta, dtype=float)[None], weights[None], False)
    if kind == "sphere":
        points = np.asarray(rho.domain.points, dtype=float).reshape(-1, rho.domain.dimension)
        return _Atoms("sphere", points[None], weights[None], False)
    if kind == "zonal":
        return _Atoms("zonal", np.asarray(rho.domain.polar, dtype=float)[None], weights[None], False)
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
            cost = np.arccos(np.clip(xa[s] @ xb[s].T, -1.0, 1.0)) ** p
            values[s] = max(float(ot.emd2(wa[s], wb[s], cost, numItermax=10_000_000)), 0.0) ** (1.0 / p)
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
