"""Numerical layer of meanfield: grids, transforms and continuity-equation
schemes. Arrays in, arrays out; knows nothing about attention.

Public surface (everything a caller needs; the modules behind it are private):

* grids: :class:`CircleGrid`, :class:`SphereGrid`, :class:`ZonalGaussGrid`,
  :class:`ZonalCellGrid`, :func:`gegenbauer_table`;
* velocity specifications: :class:`ConvolutionVelocity`, :class:`CallableVelocity`;
* schemes, named ``<Domain><Method>`` and registered in :data:`SCHEMES` under
  ``(cls.domain, cls.name)``: :class:`CircleSpectral`, :class:`SphereSpectral`,
  :class:`ZonalSpectral` (base :class:`SpectralScheme`), :class:`CircleFiniteVolume`,
  :class:`SphereFiniteVolume`, :class:`ZonalFiniteVolume`; the contract
  (:class:`Scheme`, :func:`evolve`) and its errors;
* the resolution rule: :func:`degree_tail`, :data:`SPECTRAL_TAIL_TOL`,
  :data:`FINITE_VOLUME_TAIL_TOL`;
* time stepping shared with other integrators: :data:`DORMAND_PRINCE`,
  :class:`StepController`, :func:`initial_step`, :func:`dense_weights`,
  :class:`LawsonTables`, :func:`weighted_rms`, :func:`step_floor`, and
  :class:`UnevaluableState` (a right-hand side that cannot be evaluated at a
  trial state: the step is rejected).
"""

from __future__ import annotations

import warnings
from typing import Any

from ._circle_grid import CircleGrid
from ._circle_fv import CircleFiniteVolume
from ._circle_spectral import CircleSpectral
from ._scheme import (
    Evolution,
    UnevaluableState,
    NegativeDensityError,
    NonFiniteError,
    Scheme,
    SchemeError,
    StepResult,
    StepSizeError,
    UnderResolvedError,
    evolve,
)
from ._spectral import FINITE_VOLUME_TAIL_TOL, SPECTRAL_TAIL_TOL, SpectralScheme, degree_tail
from ._runge_kutta import (
    DORMAND_PRINCE,
    ButcherTableau,
    LawsonTables,
    StepController,
    dense_weights,
    initial_step,
    step_floor,
    weighted_rms,
)
from ._velocity import CallableVelocity, ConvolutionVelocity, NonPositiveNormaliser
from ._sphere_fv import SphereFiniteVolume
from ._sphere_grid import SphereGrid
from ._sphere_spectral import SphereSpectral
from ._zonal_fv import ZonalFiniteVolume
from ._zonal_grid import ZonalCellGrid, ZonalGaussGrid, gegenbauer_table, sphere_area
from ._zonal_spectral import ZonalSpectral

SCHEMES: dict[tuple[str, str], type[Scheme]] = {}
"""Every scheme, keyed by (domain kind, method name), e.g. ("circle", "spectral")."""
SCHEMES[("sphere", "spectral")] = SphereSpectral
SCHEMES[("sphere", "finite_volume")] = SphereFiniteVolume
SCHEMES[("circle", "finite_volume")] = CircleFiniteVolume
SCHEMES[("circle", "spectral")] = CircleSpectral
SCHEMES[("zonal", "spectral")] = ZonalSpectral
SCHEMES[("zonal", "finite_volume")] = ZonalFiniteVolume

__all__ = [
        "sphere_area",
"CircleFiniteVolume",
    "CircleGrid",
    "CircleSpectral",
    "CallableVelocity",
    "ConvolutionVelocity",
    "Evolution",
    "NegativeDensityError",
    "NonFiniteError",
    "SCHEMES",
    "Scheme",
    "SchemeError",
    "SphereFiniteVolume",
    "SphereGrid",
    "SphereSpectral",
    "StepResult",
    "StepSizeError",
    "UnderResolvedError",
    "ZonalCellGrid",
    "ZonalFiniteVolume",
    "ZonalGaussGrid",
    "ZonalSpectral",
    "UnevaluableState",
    "evolve",
    "degree_tail",
    "FINITE_VOLUME_TAIL_TOL",
    "NonPositiveNormaliser",
    "SPECTRAL_TAIL_TOL",
    "SpectralScheme",
    "ButcherTableau",
    "DORMAND_PRINCE",
    "LawsonTables",
    "StepController",
    "dense_weights",
    "gegenbauer_table",
    "initial_step",
    "step_floor",
    "weighted_rms",
]


_RENAMED = {"ZonalSpectralScheme": "ZonalSpectral", "ZonalFiniteVolumeScheme": "ZonalFiniteVolume"}
"""Former public names, kept one release with a DeprecationWarning."""


_FORMER_MIN_STEP = 1e-12
"""The former relative step floor ``solvers.MIN_STEP`` (now :func:`step_floor`, the round-off of t)."""


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        warnings.warn(f"solvers.{name} is deprecated, use solvers.{_RENAMED[name]}", DeprecationWarning, stacklevel=2)
        return globals()[_RENAMED[name]]
    if name == "MIN_STEP":
        warnings.warn("solvers.MIN_STEP is deprecated: the smallest step is solvers.step_floor(t0, t_end), "
                      "16 eps max(|t0|, |t_end|)", DeprecationWarning, stacklevel=2)
        return _FORMER_MIN_STEP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
