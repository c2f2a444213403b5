"""The contract every continuity-equation scheme in :mod:`solvers` fulfils.

A scheme advances a semi-discrete state ``y`` (node values or cell averages of
one or several densities on a grid) of

    ∂_t ρ + div(ρ X[ρ]) = σ Δρ

by one step at a time. It owns its discretisation; it receives the velocity as
a specification (multipliers of convolution kernels or a callable), never as
physics. :func:`evolve` drives any scheme through a list of output times.

A scheme is a :class:`solvers.Stepper` (the time-stepping contract and the loop
:func:`evolve` that drives it: :mod:`solvers._evolve`), which in addition

* ``__init__(grid, velocity, diffusion=0.0, **options)`` validates every
  option and raises ``ValueError`` naming it;
* ``rhs(y)`` returns dy/dt of the semi-discrete system;
* ``mass(y)`` returns the total mass of each density (quadrature);
* ``from_grid(values)`` / ``to_grid(y)`` convert between node values on the
  domain's grid and the scheme's state (identity unless the scheme works on
  cells of its own);
* ``snapshot(y)`` / ``restore(snapshot)`` save and rebuild everything the
  next step from an accepted ``y`` depends on (the state itself, and e.g. the
  coefficients and last stage a spectral scheme keeps), so that a run
  continued from a snapshot, with ``first_step`` the saved
  :attr:`Continuation.dt`, repeats the uninterrupted run bit for bit.

Schemes count right-hand-side evaluations in ``nfev``.

Names. A scheme class is called ``<Domain><Method>`` (``CircleSpectral``,
``ZonalFiniteVolume``); its class attributes ``grid_type`` (the grid class it
discretises on) and ``name`` (the method: "spectral" or "finite_volume") say
where it applies, :data:`solvers.SCHEMES` lists every scheme class, and
``name`` starts its error messages. The attribute ``velocity`` is always the velocity
specification the scheme was built with (never a method).

Diagnostics, one meaning each, every scheme:

* ``velocity_field(y)``: the transport velocity X[ρ] (drifts included, the
  diffusion -σ∇log ρ not) at the nodes of the domain's grid (those of
  :meth:`to_grid`): shape (m, *grid) for the one tangential component on S¹
  (dθ/dt) and on zonal grids (the polar component u = dϑ/dt), shape
  (m, nlat, nlon, 2) on S² (components (X_ϑ, X_φ) last, as a
  :class:`~solvers.CallableVelocity` returns them);
* ``spectral_tail(y)``: the resolution measure τ of each density, shape (m,):
  τ = max_{l > ⌊2L/3⌋} ‖ρ_l‖ / ‖ρ_0‖ over the degrees l (wavenumbers |k| on
  S¹) of the expansion of ρ in eigenfunctions of the Laplacian, L the largest
  degree the grid represents, ‖ρ_l‖ the L² norm of the degree-l component
  (:func:`solvers.degree_tail`);
* ``stable_step(y)``: the largest step size the scheme's stability bound
  admits from ``y`` (∞ when none applies: an adaptive scheme whose error
  control alone limits the step).

A finite-volume scheme also provides ``face_velocity(y)``: the normal
velocity at the cell faces, one array of shape (m, *faces) per face family
(a tuple of arrays when the grid has several families, e.g. the meridional
and zonal faces of S²).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from ._errors import NonFiniteError
from ._evolve import Stepper

logger = logging.getLogger(__name__)

__all__ = ["Scheme"]


class Scheme(Stepper, ABC):
    r"""Base class of the schemes: the contract every continuity-equation scheme fulfils.

    A scheme advances the semi-discrete state ``y`` (node values or cell averages of m
    densities on its grid, shape ``(m, *grid)``) of

    .. math::

        \partial_t \rho + \operatorname{div}(\rho\, X[\rho]) = \sigma \Delta \rho

    one step at a time (:meth:`step`, driven through output times by :func:`solvers.evolve`).
    It receives the velocity as a specification (:class:`~solvers.ConvolutionVelocity`:
    multipliers of convolution kernels, or :class:`~solvers.CallableVelocity`), never as
    physics, and owns its discretisation. Besides the :class:`~solvers.Stepper` contract it
    provides ``rhs(y)`` (dy/dt of the semi-discrete system), ``mass(y)`` (∫ ρ_m dσ of each
    density by the grid's quadrature), ``from_grid`` / ``to_grid`` (node values ↔ state),
    ``snapshot`` / ``restore`` (bit-for-bit continuation), ``check(y)`` (raises a
    :class:`~solvers.SchemeError` when ``y`` cannot be trusted) and the diagnostics
    ``velocity_field(y)``, ``spectral_tail(y)`` (the resolution measure
    τ = max_{l > ⌊2L/3⌋} ‖ρ_l‖ / ‖ρ_0‖, :func:`solvers.degree_tail`) and ``stable_step(y)``
    (∞ when only the error control limits the step). The class attributes ``grid_type``,
    ``name`` ("spectral" or "finite_volume"), ``order``, ``checks_resolution``,
    ``takes_cauchy_drift`` and ``explicit_steps`` say where it applies and how it behaves
    (:func:`solvers.schemes_for`, :data:`solvers.SCHEMES`). The module
    :mod:`solvers._scheme` states the contract in full.

    Constructors take ``(grid, velocity, diffusion=0.0, **options)``, validate every option
    and raise ``ValueError`` (``TypeError`` for a wrong type) naming it.

    Examples
    --------
    The two schemes of S¹ on the same contract: the uniform density 1/2π has mass 1, is
    stationary under pure diffusion (X ≡ 0, σ = 0.1) and has no spectral tail:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda k: np.zeros(k.shape))
    >>> uniform = np.full((1, 16), 1 / (2 * np.pi))
    >>> for name, cls in sorted(solvers.schemes_for(grid).items()):
    ...     scheme = cls(grid, heat, diffusion=0.1)
    ...     y = scheme.from_grid(uniform)
    ...     rate = float(np.abs(scheme.rhs(y)).max())
    ...     print(name, isinstance(scheme, solvers.Scheme), scheme.mass(y).round(12), rate, scheme.spectral_tail(y))
    finite_volume True [1.] 0.0 [0.]
    spectral True [1.] 0.0 [0.]

    The explicit finite-volume scheme is bounded by the diffusive limit h²/(2σ), h = 2π/16;
    the adaptive spectral scheme (diffusion integrated exactly) by none:

    >>> fv = solvers.CircleFiniteVolume(grid, heat, diffusion=0.1)
    >>> print(f"{fv.stable_step(uniform):.12f} {grid.spacing ** 2 / (2 * 0.1):.12f}")
    0.771062843835 0.771062843835
    >>> solvers.CircleSpectral(grid, heat, diffusion=0.1).stable_step(uniform)
    inf
    """

    grid_type: ClassVar[type]
    """The grid class the scheme discretises on (:func:`solvers.schemes_for` finds the schemes of a grid)."""
    name: ClassVar[str] = ""
    """Method name: "spectral" or "finite_volume"."""
    order: ClassVar[int] = 0
    """Formal order of accuracy in space (time order is stated per scheme)."""
    checks_resolution: ClassVar[bool] = False
    """Whether :meth:`check` stops the run when the grid no longer resolves the density (the spectral
    schemes do, every step); a scheme that does not stays stable while the density concentrates below
    its cells, so a caller has to watch :meth:`spectral_tail`."""
    takes_cauchy_drift: ClassVar[bool] = False
    """Whether the scheme advances species averaged over a Cauchy law of drifts (a complex
    :attr:`ConvolutionVelocity.drift`, exact for kernels of one harmonic)."""
    explicit_steps: ClassVar[bool] = False
    """Whether every step is bounded by the scheme's explicit stability limit (CFL, and with diffusion
    σ > 0 the diffusive limit ~h²/σ), so that the number of steps of a run can be estimated up front."""

    @abstractmethod
    def rhs(self, y: np.ndarray) -> np.ndarray:
        """Time derivative of the semi-discrete state."""

    @abstractmethod
    def mass(self, y: np.ndarray) -> np.ndarray:
        """Total mass of each density in ``y`` (shape ``y.shape[:-grid_ndim]``)."""

    def from_grid(self, values: np.ndarray) -> np.ndarray:
        """Scheme state from node values on the domain's grid (identity by default;
        a finite-volume scheme on its own cells returns cell averages)."""
        return np.asarray(values, dtype=float)

    def to_grid(self, y: np.ndarray) -> np.ndarray:
        """Node values on the domain's grid from a scheme state (identity by default)."""
        return y

    def snapshot(self, y: np.ndarray) -> dict[str, np.ndarray]:
        """Arrays from which :meth:`restore` rebuilds the accepted state ``y`` exactly (here: ``y``)."""
        return {"state": np.array(y, dtype=float)}

    def restore(self, snapshot: dict[str, np.ndarray]) -> np.ndarray:
        """The state saved by :meth:`snapshot`, ready for the next step."""
        return np.array(snapshot["state"], dtype=float)

    def check(self, y: np.ndarray) -> None:
        """Raise a :class:`SchemeError` when ``y`` cannot be trusted."""
        if not np.all(np.isfinite(y)):
            raise NonFiniteError(f"{self.name}: the state contains NaN or infinity")

    # ------------------------------------------------------------------ diagnostics (module docstring)
    def velocity_field(self, y: np.ndarray) -> np.ndarray:
        """X[ρ] at the nodes of the domain's grid: shape ``(m, *grid)``, or ``(m, nlat, nlon, 2)`` on S²."""
        raise NotImplementedError(f"{type(self).__name__} does not provide velocity_field")

    def spectral_tail(self, y: np.ndarray) -> np.ndarray:
        """τ_m = max_{l > ⌊2L/3⌋} ‖ρ_{m,l}‖ / ‖ρ_{m,0}‖ of each density, shape (m,)."""
        raise NotImplementedError(f"{type(self).__name__} does not provide spectral_tail")

    def stable_step(self, y: np.ndarray) -> float:
        """Largest step the stability bound admits from ``y`` (∞ when only the error control limits it)."""
        return np.inf
