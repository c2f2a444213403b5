"""Numerical layer of meanfield: grids, transforms and continuity-equation
schemes. Arrays in, arrays out; knows nothing about attention.

Schemes are registered in :data:`SCHEMES`, keyed by ``(domain, method)``.
"""

from __future__ import annotations

from ._circle_grid import CircleGrid
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

SCHEMES: dict[tuple[str, str], type[Scheme]] = {}
"""Every scheme, keyed by (domain kind, method name), e.g. ("circle", "spectral")."""

__all__ = [
    "CircleGrid",
    "CallableVelocity",
    "ConvolutionVelocity",
    "Evolution",
    "NegativeDensityError",
    "NonFiniteError",
    "SCHEMES",
    "Scheme",
    "SchemeError",
    "StepResult",
    "StepSizeError",
    "UnderResolvedError",
    "evolve",
]
