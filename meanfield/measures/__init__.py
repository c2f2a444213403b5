"""Probability measures on a domain: densities on its grid, empirical measures (and how a plain array of
particle positions is read as one), and initial densities.
"""

from __future__ import annotations

from ._measure import Density, EmpiricalMeasure, density, uniform, von_mises, wrapped_cauchy
from ._perturbed_uniform import perturbed_uniform
from ._read_particles import Particles, SPHERE_TOLERANCE, read_particles, model_domain

__all__ = [
    "Density",
    "EmpiricalMeasure",
    "density",
    "uniform",
    "von_mises",
    "wrapped_cauchy",
    "perturbed_uniform",
    "Particles",
    "SPHERE_TOLERANCE",
    "read_particles",
    "model_domain",
]
