"""Domains: the grids densities live on (the circle S¹, the sphere S², zonal S^{d-1}), the spaces particles
move in (S¹, S^{d-1}, R^d, the polar angle), the Funk–Hecke multipliers of the attention kernel, and the
samplers of their laws. What a domain provides is written in :mod:`._domain`, what a particle space
provides in :mod:`._geometry`.
"""

from __future__ import annotations

from solvers import sphere_area

from ._circle import Circle
from ._domain import DOMAINS, domain_of
from ._geometry import CircleGeometry, EuclideanGeometry, PolarGeometry, SphereGeometry, tangent_projection
from ._sampling import orthogonal_frame, uniform_sphere, von_mises_fisher
from ._sphere import Sphere
from ._zonal import ZonalSphere

__all__ = [
    "DOMAINS",
    "Circle",
    "CircleGeometry",
    "EuclideanGeometry",
    "PolarGeometry",
    "Sphere",
    "SphereGeometry",
    "ZonalSphere",
    "domain_of",
    "orthogonal_frame",
    "sphere_area",
    "tangent_projection",
    "uniform_sphere",
    "von_mises_fisher",
]
