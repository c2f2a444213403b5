"""What every domain provides, and the table of domains a result file is read back on.

A domain is a grid on which densities live (:class:`~meanfield.Circle`, :class:`~meanfield.Sphere`,
:class:`~meanfield.ZonalSphere`). The physics layer asks it, never tests its type:

* geometry: ``kind`` (the ``domain`` attr of a result), ``dimension`` (d of S^{d-1} ⊂ R^d), ``shape`` (of a
  density's node values), ``points`` (unit vectors of the nodes, shape ``(*shape, d)``; a ZonalSphere's in
  the plane of e_1 and e_d), ``moment_points`` (those whose quadrature gives ∫ x ρ dσ), ``weights``
  (quadrature weights of the area measure, summing to ``area`` = |S^{d-1}|), ``coords``, ``grid`` (the
  :mod:`solvers` grid), ``geometry`` (the space its particles move in, :mod:`._geometry`);
* ``convolve(values, multipliers)``: (f ⋆ ρ)(x) = ∫ f(<x, y>) ρ(y) dσ(y) at the nodes, for a zonal kernel
  f given by its Funk–Hecke multipliers (a callable of integer degrees l ≥ 0; on S¹ the degree is |k|);
* densities: ``node_values(f)`` (a callable of the coordinates at the nodes), ``von_mises(loc, kappa)``
  (node values and law), ``von_mises_remedy``, ``perturbation(modes, rng, spectrum)``,
  ``sample(values, law, n, rng, quantile)``;
* transport: ``transport_atoms(masses, cells)`` (the measure of node masses as atoms of a geometry) and
  ``moments(masses, n_modes)``;
* the PDE: ``schemes`` (method name → scheme class of :mod:`solvers` on this grid), ``method_hint``,
  ``degree_norms(values)`` (the L² norm of each degree of the expansion in eigenfunctions of the
  Laplacian), ``spectral_tail(values)`` (the resolution measure τ of them, :func:`solvers.degree_tail`),
  ``resolution_words``;
* results: ``dataset_coords()`` (the coordinates with their units) and ``from_dataset(ds)`` (the domain of
  a result, or None when the result is on another kind of grid).

Densities are taken with respect to the area measure: ∫ ρ dσ = 1. A new domain is a class with these
members in a module of its own and one entry in :data:`DOMAINS` (docs/extending.md).
"""

from __future__ import annotations

from typing import Any

import xarray as xr

from ._circle import Circle
from ._sphere import Sphere
from ._zonal import ZonalSphere

__all__ = ["DOMAINS", "domain_of"]

DOMAINS: tuple[type, ...] = (Circle, Sphere, ZonalSphere)
"""The domain classes, each able to recognise its results (``from_dataset``)."""


def domain_of(ds: xr.Dataset, name: str = "pde") -> Any:
    """The domain of a :func:`meanfield.solve` result ``ds``, rebuilt from its grid coordinates.

    Raises
    ------
    ValueError
        ``ds`` has no ``density``, or its coordinates are no grid of :data:`DOMAINS` (the message names the
        argument ``name``).
    """
    if "density" not in ds:
        raise ValueError(f"{name} must hold a 'density' variable (a result of meanfield.solve)")
    for cls in DOMAINS:
        try:
            domain = cls.from_dataset(ds)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        if domain is not None:
            return domain
    raise ValueError(f"{name}: density must have dims (time, theta), (time, lat, lon) or (time, polar), got "
                     f"{ds['density'].dims}")
