"""Domains on which densities live: the circle S¹, the sphere S² and zonal S^{d-1}, and the protocol they share."""

from __future__ import annotations

from ._domain import Domain, Circle, moment_points, sphere_area
from ._sphere import Sphere
from ._zonal import ZonalSphere, polar_angles, polar_wasserstein

__all__ = [
    "Domain",
    "Circle",
    "moment_points",
    "sphere_area",
    "Sphere",
    "ZonalSphere",
    "polar_angles",
    "polar_wasserstein",
]
