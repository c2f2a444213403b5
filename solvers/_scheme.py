"""The contract every continuity-equation scheme in :mod:`solvers` fulfils.

A scheme advances a semi-discrete state ``y`` (node values or cell averages of
one or several densities on a grid) of

    ∂_t ρ + div(ρ X[ρ]) = σ Δρ

by one step at a time. It owns its discretisation; it receives the velocity as
a specification (multipliers of convolution kernels or a callable), never as
physics. :func:`evolve` drives any scheme through a list of output times.

Rules for implementers (in the manner of ``scipy.integrate.OdeSolver``):

* ``__init__(grid, velocity, diffusion=0.0, **options)`` validates every
  option and raises ``ValueError`` naming it;
* ``rhs(y)`` returns dy/dt of the semi-discrete system;
* ``initial_step(y)`` proposes a first step;
* ``_step_impl(t, y, dt)`` attempts one step of size ``dt`` and returns a
  :class:`StepResult`; an adaptive scheme may reject the step and propose a
  smaller ``dt_next``; a CFL-controlled scheme proposes its stable step;
* ``check(y)`` inspects an accepted state and raises :class:`SchemeError`
  subclasses (under-resolution, negative density, non-finite values);
* ``mass(y)`` returns the total mass of each density (quadrature);
* ``from_grid(values)`` / ``to_grid(y)`` convert between node values on the
  domain's grid and the scheme's state (identity unless the scheme works on
  cells of its own);
* ``snapshot(y)`` / ``restore(snapshot)`` save and rebuild everything the
  next step from an accepted ``y`` depends on (the state itself, and e.g. the
  coefficients and last stage a spectral scheme keeps), so that a run
  continued from a snapshot, with ``first_step`` the saved
  :attr:`Evolution.dt_next`, repeats the uninterrupted run bit for bit.

Schemes count right-hand-side evaluations in ``nfev``.

Names. A scheme class is called ``<Domain><Method>`` (``CircleSpectral``,
``ZonalFiniteVolume``); its class attributes ``domain`` ("circle", "sphere",
"zonal") and ``name`` (the method: "spectral" or "finite_volume") are the key
under which it is registered in :data:`solvers.SCHEMES`, and ``name`` starts
its error messages. The attribute ``velocity`` is always the velocity
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ._errors import (
    NegativeDensityError,
    NonFiniteError,
    SchemeError,
    StepSizeError,
    UnderResolvedError,
    UnevaluableState,
)
from ._runge_kutta import deprecated_step_floor, step_floor

logger = logging.getLogger(__name__)

__all__ = [
    "Scheme",
    "StepResult",
    "Evolution",
    "evolve",
    "SchemeError",
    "UnderResolvedError",
    "NegativeDensityError",
    "NonFiniteError",
    "StepSizeError",
    "UnevaluableState",
]


def __getattr__(name: str) -> Any:
    if name == "NonPositiveNormaliser":  # its home is the velocity specification it belongs to
        from ._velocity import NonPositiveNormaliser

        return NonPositiveNormaliser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class StepResult:
    """Outcome of one attempted step.

    Attributes
    ----------
    accepted : bool
        Whether ``y`` is the state at ``t + dt``.
    y : ndarray or None
        The new state when accepted.
    dt_next : float
        Step size proposed for the next attempt (retry or next step).
    error : float
        Scheme-specific error measure of the attempt (0 when not estimated).
    """

    accepted: bool
    y: np.ndarray | None
    dt_next: float
    error: float = 0.0


class Scheme(ABC):
    """Base class of the schemes; see the module docstring for the contract."""

    domain: ClassVar[str] = ""
    """Kind of domain: "circle", "sphere" or "zonal"."""
    name: ClassVar[str] = ""
    """Method name: "spectral" or "finite_volume" (the key of :data:`solvers.SCHEMES` with ``domain``)."""
    order: ClassVar[int] = 0
    """Formal order of accuracy in space (time order is stated per scheme)."""
    renamed_options: ClassVar[dict[str, str]] = {}
    """Former option names still accepted (with a DeprecationWarning), mapped to the current ones."""

    def __init__(self) -> None:
        self.nfev = 0

    @abstractmethod
    def rhs(self, y: np.ndarray) -> np.ndarray:
        """Time derivative of the semi-discrete state."""

    @abstractmethod
    def initial_step(self, y: np.ndarray) -> float:
        """A first step size suited to ``y``."""

    @abstractmethod
    def _step_impl(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        """Attempt one step of size ``dt`` from ``(t, y)``."""

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
        """X[ρ] at the nodes of the domain's grid: shape (m, *grid), or (m, nlat, nlon, 2) on S²."""
        raise NotImplementedError(f"{type(self).__name__} does not provide velocity_field")

    def spectral_tail(self, y: np.ndarray) -> np.ndarray:
        """τ_m = max_{l > ⌊2L/3⌋} ‖ρ_{m,l}‖ / ‖ρ_{m,0}‖ of each density, shape (m,)."""
        raise NotImplementedError(f"{type(self).__name__} does not provide spectral_tail")

    def stable_step(self, y: np.ndarray) -> float:
        """Largest step the stability bound admits from ``y`` (∞ when only the error control limits it)."""
        return np.inf

    def step(self, t: float, y: np.ndarray, dt: float) -> StepResult:
        """Attempt one step; a non-positive or non-finite ``dt`` is an error."""
        if not (np.isfinite(dt) and dt > 0):
            raise StepSizeError(f"{self.name}: step size dt={dt!r} must be positive and finite")
        return self._step_impl(t, y, dt)


@dataclass
class Evolution:
    """Result of :func:`evolve`.

    Attributes
    ----------
    t : ndarray, shape (T,)
        Output times reached (a prefix of the requested ones when the run stopped early).
    y : ndarray, shape (T, *state_shape)
        States at ``t``.
    n_steps, n_rejected, nfev : int
        Accepted steps, rejected attempts, right-hand-side evaluations.
    dt_min, dt_max : float
        Smallest and largest accepted step.
    success : bool
        True when every requested time was reached.
    message : str
        Why the run stopped.
    dt_next : float
        The step size the next step would try; kept up to date during the run,
        so that an observer given the live record (``evolve(..., record=)``)
        can save it with a :meth:`Scheme.snapshot`.
    """

    t: np.ndarray
    y: np.ndarray
    n_steps: int = 0
    n_rejected: int = 0
    nfev: int = 0
    dt_min: float = np.inf
    dt_max: float = 0.0
    success: bool = True
    message: str = "reached the final time"
    steps_per_output: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    dt_next: float = np.nan


Observer = Callable[[int, float, np.ndarray], Any]
"""Called as ``observer(index, t, y)`` at each output time (progress, checkpoints)."""


def evolve(
    scheme: Scheme,
    y0: np.ndarray,
    t_eval: Sequence[float] | np.ndarray,
    *,
    first_step: float | None = None,
    max_step: float = np.inf,
    min_step: float | None = None,
    max_steps: int = 10_000_000,
    observers: Sequence[Observer] = (),
    raise_on_error: bool = False,
    record: Evolution | None = None,
) -> Evolution:
    """Advance ``y0`` from ``t_eval[0]`` through every time of ``t_eval``.

    Steps are shortened so that each output time is hit exactly. A
    :class:`SchemeError` raised by the scheme stops the run; the states
    reached so far are returned with ``success=False`` and the error's message
    (or the error is re-raised when ``raise_on_error``). An initial state that
    fails :meth:`Scheme.check` always raises: there is nothing to return.

    Parameters
    ----------
    scheme : Scheme
    y0 : ndarray
        Initial state at ``t_eval[0]``.
    t_eval : array_like, shape (T,)
        Strictly increasing output times.
    first_step, max_step : float
        Step-size controls. A step the controller proposes below
        :func:`solvers.step_floor` (16 ε max(|t0|, |t_end|), the round-off of
        the run's times), after a rejection or after a step it was not cut
        short to hit an output time, stops the run with a :class:`StepSizeError`.
    min_step : float, optional
        Deprecated (DeprecationWarning): the former floor relative to the
        time span, min_step · max(t_end - t0, 1); honoured for one release,
        never below :func:`solvers.step_floor`.
    max_steps : int
        Bound on accepted plus rejected steps.
    observers : sequence of callables
        ``observer(index, t, y)`` is called at every output time, including
        the initial one.
    raise_on_error : bool
        Re-raise scheme errors instead of returning a partial result.
    record : Evolution, optional
        Filled in (counters, ``dt_next``) as the run goes, before the observers
        are called at each output, and returned; its counters start from zero.
    """
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size < 1:
        raise ValueError(f"t_eval must be a non-empty 1-D array of times, got shape {t_eval.shape}")
    if not np.all(np.isfinite(t_eval)):
        raise ValueError("t_eval must contain finite times")
    if t_eval.size > 1 and not np.all(np.diff(t_eval) > 0):
        raise ValueError("t_eval must be strictly increasing")
    read_only = isinstance(y0, np.ndarray) and y0.dtype == float and not y0.flags.writeable
    y = y0 if read_only else np.array(y0, dtype=float, copy=True)  # a read-only state may be a scheme's cached one
    h_min = (step_floor(t_eval[0], t_eval[-1]) if min_step is None
             else deprecated_step_floor("evolve", t_eval[0], t_eval[-1], min_step))
    out_y = np.empty((t_eval.size, *y.shape))
    out_y[0] = y
    steps_per_output = np.zeros(t_eval.size, dtype=int)
    result = record if record is not None else Evolution(t=t_eval, y=out_y)
    result.t, result.y = t_eval, out_y
    initial_error = None
    try:
        scheme.check(y)
    except SchemeError as err:  # the initial output is still kept (success False) unless raise_on_error
        if raise_on_error:
            raise
        initial_error = err
    for obs in observers:
        obs(0, t_eval[0], y)
    t = t_eval[0]
    attempts = 0
    reached = 1
    try:
        if initial_error is not None:
            raise initial_error
        dt = min(first_step if first_step is not None else scheme.initial_step(y), max_step)
        for i in range(1, t_eval.size):
            target = t_eval[i]
            while t < target:
                if attempts >= max_steps:
                    raise StepSizeError(f"{scheme.name}: max_steps={max_steps} exhausted at t={t:.6g}")
                remaining = target - t
                last = dt >= remaining * (1 - 1e-12)
                h = remaining if last else dt
                attempts += 1
                res = scheme.step(t, y, h)
                if not res.accepted:
                    result.n_rejected += 1
                    dt = min(res.dt_next, max_step)
                    _check_floor(scheme, dt, h_min, t)
                    continue
                y = res.y
                scheme.check(y)
                t = target if last else t + h
                result.n_steps += 1
                steps_per_output[i] += 1
                result.dt_min = min(result.dt_min, h)
                result.dt_max = max(result.dt_max, h)
                if not last or res.dt_next < dt:
                    dt = min(res.dt_next, max_step)
                if not last:
                    _check_floor(scheme, dt, h_min, t)
            out_y[i] = y
            reached = i + 1
            result.dt_next = dt
            result.nfev = scheme.nfev
            for obs in observers:
                obs(i, target, y)
    except SchemeError as err:
        if raise_on_error:
            raise
        logger.warning("%s", err)
        result.success = False
        result.message = str(err)
    result.t = t_eval[:reached]
    result.y = out_y[:reached]
    result.nfev = scheme.nfev
    result.steps_per_output = steps_per_output[:reached]
    return result


def _check_floor(scheme: Scheme, dt: float, h_min: float, t: float) -> None:
    """Raise :class:`StepSizeError` when the proposed step ``dt`` at ``t`` is below the floor ``h_min``."""
    if dt < h_min:
        raise StepSizeError(f"{scheme.name}: step size {dt:.3g} fell below the smallest step {h_min:.3g} "
                            f"at t = {t:.6g}")
