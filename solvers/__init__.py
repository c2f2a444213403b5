"""Numerical layer of meanfield: grids, transforms and continuity-equation
schemes. Arrays in, arrays out; knows nothing about attention.

Schemes are registered in :data:`SCHEMES`, keyed by ``(domain, method)``.
"""

from __future__ import annotations

from ._circle_grid import CircleGrid
from ._circle_fv import CircleFiniteVolume
from ._scheme import (
    Evolution,
    NegativeDensityError,
    NonFiniteError,
    Scheme,
    SchemeError,
    StepResult,
    StepSizeError,
    UnderResolvedError,
    evolve,
)
from ._velocity import CallableVelocity, ConvolutionVelocity
from ._sphere_grid import SphereGrid
from ._sphere_spectral import SphereSpectral

SCHEMES: dict[tuple[str, str], type[Scheme]] = {}
"""Every scheme, keyed by (domain kind, method name), e.g. ("circle", "spectral")."""
SCHEMES[("sphere", "spectral")] = SphereSpectral
SCHEMES[("circle", "finite_volume")] = CircleFiniteVolume

__all__ = [
    "CircleFiniteVolume",
    "CircleGrid",
    "CallableVelocity",
    "ConvolutionVelocity",
    "Evolution",
    "NegativeDensityError",
    "NonFiniteError",
    "SCHEMES",
    "Scheme",
    "SchemeError",
    "SphereGrid",
    "SphereSpectral",
    "StepResult",
    "StepSizeError",
    "UnderResolvedError",
    "evolve",
]
