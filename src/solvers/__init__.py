"""Numerical layer of meanfield: grids, transforms, continuity-equation schemes and time stepping.
Arrays in, arrays out; knows nothing about attention.

Public surface (everything a caller needs; the modules behind it are private):

* grids: :class:`CircleGrid`, :class:`SphereGrid`, :class:`ZonalGaussGrid`,
  :class:`ZonalCellGrid`, :func:`gegenbauer_table`;
* velocity specifications: :class:`ConvolutionVelocity`, :class:`CallableVelocity`;
* time stepping: the contract :class:`Stepper` (:class:`StepResult`) and the one
  loop :func:`evolve` that drives a stepper through output times
  (:class:`Evolution`, :class:`Continuation`, :func:`fixed_steps`; :class:`Advance`, what a
  stepper's compiled loop between output times reports); for many small
  independent systems, :func:`evolve_batch` (one vectorised Dormand–Prince 5(4),
  a step size per system, :class:`BatchEvolution`);
* schemes, named ``<Domain><Method>``: :class:`CircleSpectral`,
  :class:`SphereSpectral`, :class:`ZonalSpectral` (base :class:`SpectralScheme`),
  :class:`CircleFiniteVolume`, :class:`SphereFiniteVolume`,
  :class:`ZonalFiniteVolume`; the contract :class:`Scheme` and its errors;
  :data:`SCHEMES` lists them and :func:`schemes_for` gives those of a grid;
* Funk–Hecke multipliers of a zonal kernel by Gauss–Jacobi quadrature: :func:`funk_hecke_multipliers`
  (:class:`FunkHeckeMultipliers`), the Legendre polynomials of dimension d, :func:`legendre_table`;
* the resolution rule: :func:`degree_tail` (of a kernel: :func:`kernel_tail`), :data:`SPECTRAL_TAIL_TOL`,
  :data:`FINITE_VOLUME_TAIL_TOL`;
* step-size control shared with the compiled integrators of ``meanfield``:
  :data:`DORMAND_PRINCE`, :class:`StepController` (:func:`controller_decision`),
  :func:`initial_step` (:func:`first_step_probe`, :func:`first_step_size`),
  :func:`step_floor`, :func:`covers`, :func:`dense_weights`,
  :class:`LawsonTables`, :func:`weighted_rms`, and :class:`UnevaluableState`
  (a right-hand side that cannot be evaluated at a trial state: the step is rejected).
"""

from __future__ import annotations

from ._circle_grid import CircleGrid
from ._circle_fv import CircleFiniteVolume
from ._circle_spectral import CircleSpectral
from ._errors import (
    NegativeDensityError,
    NonFiniteError,
    SchemeError,
    StepSizeError,
    UnderResolvedError,
    UnevaluableState,
)
from ._batched_dormand_prince import BatchEvolution, evolve_batch
from ._funk_hecke import FunkHeckeMultipliers, funk_hecke_multipliers, legendre_table
from ._evolve import Advance, Continuation, Evolution, Stepper, StepResult, evolve, fixed_steps
from ._piecewise import PiecewiseStepper
from ._scheme import Scheme
from ._spectral import FINITE_VOLUME_TAIL_TOL, SPECTRAL_TAIL_TOL, SpectralScheme, degree_tail, kernel_tail
from ._runge_kutta import (
    DORMAND_PRINCE,
    ButcherTableau,
    LawsonTables,
    StepController,
    controller_decision,
    covers,
    dense_weights,
    first_step_probe,
    first_step_size,
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

SCHEMES: tuple[type[Scheme], ...] = (
    CircleSpectral,
    CircleFiniteVolume,
    SphereSpectral,
    SphereFiniteVolume,
    ZonalSpectral,
    ZonalFiniteVolume,
)
"""Every scheme class; each says by ``grid_type`` on which grid and by ``name`` which method it is."""


def schemes_for(grid: object) -> dict[str, type[Scheme]]:
    """The schemes that discretise on ``grid``, by method name (e.g. ``{"spectral": CircleSpectral, ...}``).

    A scheme class applies to a grid when the grid is an instance of its ``grid_type``; its ``name``
    ("spectral" or "finite_volume") is the key. The classes are taken from :data:`SCHEMES`.

    Parameters
    ----------
    grid : object
        A grid instance: :class:`CircleGrid`, :class:`SphereGrid`, :class:`ZonalGaussGrid` or
        :class:`ZonalCellGrid`. Anything else gives an empty dict (no error).

    Returns
    -------
    dict of str to type
        ``{name: scheme class}`` of every scheme in :data:`SCHEMES` whose ``grid_type`` ``grid`` is an
        instance of; at most one class per method name.

    Examples
    --------
    S¹ and S² have both methods; a zonal grid of Gauss nodes has the spectral scheme only, one of
    cells the finite-volume scheme only:

    >>> import solvers
    >>> def names(grid):
    ...     return {name: cls.__name__ for name, cls in sorted(solvers.schemes_for(grid).items())}
    >>> names(solvers.CircleGrid(16))
    {'finite_volume': 'CircleFiniteVolume', 'spectral': 'CircleSpectral'}
    >>> names(solvers.SphereGrid(4))
    {'finite_volume': 'SphereFiniteVolume', 'spectral': 'SphereSpectral'}
    >>> names(solvers.ZonalGaussGrid(5, 8)), names(solvers.ZonalCellGrid(5, 8))
    ({'spectral': 'ZonalSpectral'}, {'finite_volume': 'ZonalFiniteVolume'})
    >>> solvers.schemes_for("not a grid")
    {}
    """
    return {cls.name: cls for cls in SCHEMES if isinstance(grid, cls.grid_type)}


__all__ = [
    "PiecewiseStepper",
    "BatchEvolution",
    "ButcherTableau",
    "CallableVelocity",
    "CircleFiniteVolume",
    "CircleGrid",
    "CircleSpectral",
    "Advance",
    "Continuation",
    "ConvolutionVelocity",
    "DORMAND_PRINCE",
    "Evolution",
    "FINITE_VOLUME_TAIL_TOL",
    "FunkHeckeMultipliers",
    "LawsonTables",
    "NegativeDensityError",
    "NonFiniteError",
    "NonPositiveNormaliser",
    "SCHEMES",
    "SPECTRAL_TAIL_TOL",
    "Scheme",
    "SchemeError",
    "SpectralScheme",
    "SphereFiniteVolume",
    "SphereGrid",
    "SphereSpectral",
    "StepController",
    "StepResult",
    "StepSizeError",
    "Stepper",
    "UnderResolvedError",
    "UnevaluableState",
    "ZonalCellGrid",
    "ZonalFiniteVolume",
    "ZonalGaussGrid",
    "ZonalSpectral",
    "controller_decision",
    "covers",
    "degree_tail",
    "dense_weights",
    "evolve",
    "evolve_batch",
    "first_step_probe",
    "first_step_size",
    "fixed_steps",
    "funk_hecke_multipliers",
    "gegenbauer_table",
    "initial_step",
    "kernel_tail",
    "legendre_table",
    "schemes_for",
    "sphere_area",
    "step_floor",
    "weighted_rms",
]
