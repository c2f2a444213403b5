"""The time-stepping contract and the one loop that drives it through output times.

A :class:`Stepper` advances a state ``y`` of an ODE y' = F(t, y) by one step at a time:
a continuity-equation scheme of :mod:`solvers` (:class:`solvers.Scheme`), or any
integrator that fulfils the contract (the particle integrators of ``meanfield``).
:func:`evolve` drives a stepper through a list of output times.

Rules for implementers (in the manner of ``scipy.integrate.OdeSolver``):

* ``initial_step(y, t)`` proposes a first step from the state ``y`` at time ``t``;
* ``_step_impl(t, y, dt)`` attempts one step of size ``dt`` and returns a
  :class:`StepResult`; an adaptive stepper may reject the step and propose a
  smaller ``dt_next``; a CFL-controlled stepper proposes its stable step;
* ``check(y)`` inspects an accepted state and raises :class:`SchemeError`
  subclasses (under-resolution, negative density, non-finite values);
* ``snapshot(y)`` / ``restore(snapshot)`` save and rebuild everything the next
  step from the loop state ``y`` depends on (see :class:`Continuation`), so that
  a run continued from a snapshot repeats the uninterrupted run bit for bit;
* ``nfev`` counts right-hand-side evaluations;
* optionally ``advance(t, y, stop, dt, ...)`` takes the adaptive steps of a
  landing stepper up to the next output time in one call (a compiled loop),
  by exactly the rules below and those of its ``_step_impl``, and returns an
  :class:`Advance`; returning None (the default) means step by step.

How the steps meet the output times is the stepper's declaration:

* landing (default): every step that would pass an output time is cut short
  to end on it;
* ``equal_steps = True`` (landing): a step of proposed size ``dt`` with more
  than ``dt`` left to the next output time is taken as remaining/⌈remaining/dt⌉,
  so that a constant proposal splits each output interval into equal steps
  instead of leaving a sliver before the output (for schemes whose local errors
  oscillate and cancel over a regular sequence of steps);
* ``dense_output = True``: steps are cut short only at the final time, and
  ``interpolate(t)`` gives the state at an output time t inside the last
  accepted step (a continuous extension of the method);
* ``fixed_step = h`` (a float): each output interval [t_{i-1}, t_i] is split
  into ⌈(t_i - t_{i-1})/h⌉ equal steps, taken at the times t_{i-1} + s·h_i;
  a fixed step that is not accepted is an error.

Switching times. A right-hand side that jumps at known times (weights that change
with depth) is declared by ``switching_times(t0, t1)``: the times in the open
interval (t0, t1) at which F(t, ·) switches (default: none). Every step ends
exactly at each of them, whatever the stepper's kind: an adaptive step is cut
short to land on it (a dense-output stepper too), and a fixed-step stepper splits
each piece between consecutive output and switching times into equal steps ≤ h
(``fixed_steps`` of the merged times). After a switching time an adaptive stepper
restarts its step-size control: the next step size is ``initial_step(y, t)`` at
the switching time, as at the start of a run. A switching time is not an output;
a checkpoint made at an output that is a switching time records the restart as
pending (``Continuation.dt`` = NaN), so a resumed run restarts the same way.

Step size of adaptive steppers (one rule for all). The stepper proposes
``dt_next`` after each attempt. A proposal below :func:`solvers.step_floor`
(16 ε max(|t0|, |t_end|), the round-off of the run's times) stops the run with a
:class:`StepSizeError`: the first step, the step after a rejection, and the step
after an accepted step that was not cut short. A step of proposed size ``dt``
covers the time ``remaining`` to the next stop when ``dt`` ≥ remaining·(1 − 10⁻¹²)
(:func:`solvers.covers`); it is then taken as exactly ``remaining``, and after
it the proposal may shrink (to ``dt_next``) but not grow: a step cut short says
little about the step size the error allows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

from ._errors import SchemeError, StepSizeError
from ._runge_kutta import covers, step_floor

__all__ = ["Advance", "Continuation", "Evolution", "Stepper", "StepResult", "evolve", "fixed_steps"]


@dataclass(frozen=True)
class StepResult:
    """Outcome of one attempted step.

    Returned by :meth:`Stepper.step`; a frozen record.

    Parameters
    ----------
    accepted : bool
        Whether ``y`` is the state at ``t + dt``.
    y : ndarray or None
        The new state when accepted.
    dt_next : float
        Step size proposed for the next attempt (retry or next step).
    error : float
        Stepper-specific error measure of the attempt (0 when not estimated).

    Examples
    --------
    One step of the heat equation ∂_t ρ = σ ∂²_θ ρ on S¹, which the spectral scheme
    integrates exactly (no transport: the error estimate is 0 and the next step may
    grow tenfold); the mode cos θ decays by e^{-σ dt} = e^{-0.01}:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda k: np.zeros(k.shape))
    >>> scheme = solvers.CircleSpectral(grid, heat, diffusion=0.1)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> res = scheme.step(0.0, rho0, 0.1)
    >>> res.accepted, res.dt_next, res.error
    (True, 1.0, 0.0)
    >>> print(f"{(2 * np.pi * res.y[0, 0] - 1) / 0.5:.12f} {np.exp(-0.01):.12f}")
    0.990049833749 0.990049833749
    """

    accepted: bool
    y: Any
    dt_next: float
    error: float = 0.0


class Advance(NamedTuple):
    """Outcome of :meth:`Stepper.advance`: where its steps ended and what they counted.

    Parameters
    ----------
    t, y : float, ndarray
        Time and state reached (``y`` as :meth:`Stepper.step` returns states).
    dt : float
        The step size proposed next, by the rules of :func:`evolve`.
    steps, rejected, attempts : int
        Accepted steps whose states passed :meth:`Stepper.check`, rejected attempts, all attempts.
    dt_min, dt_max : float
        Smallest and largest of the ``steps`` (∞ and 0 when there are none).
    stopped : str
        "reached" (t is the stop), "max_steps" (the budget of attempts is spent), "floor" (``dt`` is
        below the smallest step), "check" (``y`` was accepted by a step of size ``h`` but may fail
        :meth:`Stepper.check`: it is neither checked nor counted in ``steps``).
    h : float
        The size of the last accepted step.

    Examples
    --------
    The compiled steps of :class:`~solvers.CircleSpectral` from t = 0 to t = 1 (Kuramoto, K = 1):

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> kuramoto = solvers.ConvolutionVelocity(numerator=lambda k: np.where(k == 1, np.pi * 1j, 0))
    >>> scheme = solvers.CircleSpectral(grid, kuramoto)
    >>> y0 = (1 + 0.2 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> out = scheme.advance(0.0, y0, 1.0, 0.1, max_step=np.inf, h_min=1e-14, attempts=100)
    >>> out.t, out.stopped, out.steps + out.rejected == out.attempts
    (1.0, 'reached', True)
    """

    t: float
    y: Any
    dt: float
    steps: int
    rejected: int
    attempts: int
    dt_min: float
    dt_max: float
    stopped: str
    h: float


class Stepper:
    """Base class of everything :func:`evolve` drives; see the module docstring for the contract.

    A subclass provides ``initial_step(y, t)`` and ``_step_impl(t, y, dt)`` (returning a
    :class:`StepResult`), counts its right-hand-side evaluations in ``nfev``, and may
    override ``check``, ``snapshot``/``restore``, ``interpolate`` (with
    ``dense_output = True``) or set ``fixed_step``. :meth:`step` validates ``dt`` and
    calls ``_step_impl``.

    Examples
    --------
    A stepper that solves y' = -y exactly and proposes to double its step:

    >>> import numpy as np
    >>> import solvers
    >>> class Decay(solvers.Stepper):  # y' = -y, stepped exactly: y(t + dt) = e^(-dt) y(t)
    ...     name = "decay"
    ...     def initial_step(self, y, t=0.0):
    ...         return 0.1
    ...     def _step_impl(self, t, y, dt):
    ...         self.nfev += 1
    ...         return solvers.StepResult(True, np.exp(-dt) * y, 2 * dt)
    >>> run = solvers.evolve(Decay(), np.array([1.0]), [0.0, 1.0, 2.0])
    >>> print(run.y[:, 0].round(6), np.exp(-run.t).round(6))
    [1.       0.367879 0.135335] [1.       0.367879 0.135335]

    Steps 0.1, 0.2, 0.4, then 0.3 cut short to land on t = 1, 0.6 and 0.4:

    >>> run.n_steps, run.steps_per_output
    (6, array([0, 4, 2]))
    """

    name: ClassVar[str] = ""
    """Name of the method, starting its error messages."""
    dense_output: ClassVar[bool] = False
    """Steps pass output times, which :meth:`interpolate` evaluates (module docstring)."""
    equal_steps: ClassVar[bool] = False
    """Adaptive steps split each output interval into equal steps (module docstring)."""
    fixed_step: float | None = None
    """Each output interval is split into equal steps of at most this size (None: adaptive)."""

    def __init__(self) -> None:
        self.nfev = 0

    def initial_step(self, y: Any, t: float = 0.0) -> float:
        """A first step size suited to the state ``y`` at time ``t``."""
        raise NotImplementedError(f"{type(self).__name__} does not provide initial_step")

    def _step_impl(self, t: float, y: Any, dt: float) -> StepResult:
        """Attempt one step of size ``dt`` from ``(t, y)``."""
        raise NotImplementedError(f"{type(self).__name__} does not provide _step_impl")

    def step(self, t: float, y: Any, dt: float) -> StepResult:
        """Attempt one step; a non-positive or non-finite ``dt`` is an error."""
        if not (np.isfinite(dt) and dt > 0):
            raise StepSizeError(f"{self.name}: step size dt={dt!r} must be positive and finite")
        return self._step_impl(t, y, dt)

    def advance(self, t: float, y: Any, stop: float, dt: float, *, max_step: float, h_min: float,
                attempts: int) -> Advance | None:
        """Adaptive steps from ``(t, y)`` towards ``stop`` with proposed step ``dt``, taken as :func:`evolve`
        takes them (steps capped by ``max_step``, the floor ``h_min``, at most ``attempts`` attempts), in one
        call; None (here) to have :func:`evolve` take them one by one."""
        return None

    def switching_times(self, t0: float, t1: float) -> np.ndarray:
        """The times in the open interval (t0, t1), increasing, at which the right-hand side switches (every step
        ends at them; module docstring); here none."""
        return np.empty(0)

    def interpolate(self, t: float) -> Any:
        """The state at time ``t`` inside the last accepted step (``dense_output`` steppers)."""
        raise NotImplementedError(f"{type(self).__name__} has no dense output")

    def check(self, y: Any) -> None:
        """Raise a :class:`SchemeError` when ``y`` cannot be trusted (here: never)."""

    def snapshot(self, y: Any) -> dict[str, np.ndarray]:
        """Arrays from which :meth:`restore` rebuilds the loop state ``y`` exactly (here: ``y``)."""
        return {"state": np.array(y)}

    def restore(self, snapshot: dict[str, np.ndarray]) -> Any:
        """The loop state saved by :meth:`snapshot`, ready for the next step."""
        return np.array(snapshot["state"])


class Continuation(NamedTuple):
    """Where a run continues from after its latest output (:attr:`Evolution.continuation`).

    For a landing or fixed-step stepper it is the output itself: time and state
    of the output, the step size the next step would try, and the counts so far.
    For a ``dense_output`` stepper it is the start of the step that reached the
    output (that step is taken again on resuming): its time, state, the step
    size proposed there before any cut, and the counts before its accepted
    attempt. ``evolve(..., start=(t, y), first_step=dt)`` with the stepper
    restored from ``stepper.snapshot(y)`` goes on exactly as the run would have.

    Parameters
    ----------
    t : float
        Time to continue from.
    y : ndarray
        State at ``t``.
    dt : float
        Step size the next step tries (NaN before any step when none was planned).
    n_steps : int
        Accepted steps so far.
    n_rejected : int
        Rejected attempts so far.
    nfev : int
        Right-hand-side evaluations so far.

    Examples
    --------
    A run stopped at t = 1 and continued to t = 2 repeats the uninterrupted run:

    >>> import numpy as np
    >>> import solvers
    >>> class Decay(solvers.Stepper):  # y' = -y, stepped exactly: y(t + dt) = e^(-dt) y(t)
    ...     name = "decay"
    ...     def initial_step(self, y, t=0.0):
    ...         return 0.1
    ...     def _step_impl(self, t, y, dt):
    ...         self.nfev += 1
    ...         return solvers.StepResult(True, np.exp(-dt) * y, 2 * dt)
    >>> first = solvers.evolve(Decay(), np.array([1.0]), [0.0, 1.0])
    >>> c = first.continuation
    >>> c.t, c.n_steps
    (1.0, 4)
    >>> stepper = Decay()
    >>> y = stepper.restore(stepper.snapshot(c.y))
    >>> rest = solvers.evolve(stepper, y, [c.t, 2.0], first_step=c.dt)
    >>> whole = solvers.evolve(Decay(), np.array([1.0]), [0.0, 1.0, 2.0])
    >>> bool(np.array_equal(rest.y[-1], whole.y[-1]))
    True
    """

    t: float
    y: Any
    dt: float
    n_steps: int
    n_rejected: int
    nfev: int


@dataclass
class Evolution:
    """Result of :func:`evolve`.

    Parameters
    ----------
    t : ndarray, shape (T,)
        Output times reached (a prefix of the requested ones when the run stopped early).
    y : ndarray, shape (T, \\*state_shape)
        States at ``t``.
    n_steps : int
        Accepted steps.
    n_rejected : int
        Rejected attempts.
    nfev : int
        Right-hand-side evaluations.
    dt_min : float
        Smallest accepted step.
    dt_max : float
        Largest accepted step.
    success : bool
        True when every requested time was reached.
    message : str
        Why the run stopped.
    steps_per_output : ndarray of int
        Accepted steps that ended in each output interval (0 for the initial output).
    continuation : Continuation or None
        Where the run continues from after its latest output; kept up to date during
        the run, before the observers are called, so that an observer given the live
        record (``evolve(..., record=)``) can save it with ``stepper.snapshot``.

    Examples
    --------
    The heat equation ∂_t ρ = σ ∂²_θ ρ, σ = 0.1, on S¹: the mode cos θ decays as e^{-σt}.

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda k: np.zeros(k.shape))
    >>> scheme = solvers.CircleSpectral(grid, heat, diffusion=0.1)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> run = solvers.evolve(scheme, rho0, [0.0, 1.0, 2.0])
    >>> run.success, run.message, run.y.shape
    (True, 'reached the final time', (3, 1, 16))
    >>> print(((2 * np.pi * run.y[:, 0, 0] - 1) / 0.5).round(6), np.exp(-0.1 * run.t).round(6))
    [1.       0.904837 0.818731] [1.       0.904837 0.818731]
    >>> int(run.steps_per_output.sum()) == run.n_steps
    True
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
    continuation: Continuation | None = None


Observer = Callable[[int, float, Any], Any]
"""Called as ``observer(index, t, y)`` at each output time (progress, checkpoints)."""


def fixed_steps(t_eval: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Number of equal steps per output interval (each ≤ ``dt``) and their sizes.

    Parameters
    ----------
    t_eval : array_like, shape (T,)
        Increasing output times.
    dt : float
        Largest step size.

    Returns
    -------
    n_sub : ndarray of int, shape (T - 1,)
        n_i = max(1, ⌈(t_i - t_{i-1})/dt⌉) steps in the interval [t_{i-1}, t_i] (up to a
        relative 10⁻¹² of round-off, which does not add a step).
    sizes : ndarray, shape (T - 1,)
        Their size (t_i - t_{i-1})/n_i.

    Notes
    -----
    .. math::

        n_i = \max\Bigl(1, \Bigl\lceil \frac{t_i - t_{i-1}}{\Delta t} (1 - 10^{-12}) \Bigr\rceil\Bigr),
        \qquad h_i = \frac{t_i - t_{i-1}}{n_i} \le \Delta t .

    Examples
    --------
    >>> import solvers
    >>> solvers.fixed_steps([0.0, 1.0, 1.5], 0.3)
    (array([4, 2]), array([0.25, 0.25]))
    """
    lengths = np.diff(np.asarray(t_eval, dtype=float))
    n_sub = np.maximum(1, np.ceil(lengths / dt * (1 - 1e-12)).astype(int))
    return n_sub, lengths / n_sub


def evolve(
    stepper: Stepper,
    y0: Any,
    t_eval: Sequence[float] | np.ndarray,
    *,
    first_step: float | None = None,
    max_step: float = np.inf,
    max_steps: int = 10_000_000,
    observers: Sequence[Observer] = (),
    raise_on_error: bool = False,
    record: Evolution | None = None,
    start: tuple[float, Any] | None = None,
) -> Evolution:
    """Advance ``y0`` from ``t_eval[0]`` through every time of ``t_eval``.

    Steps meet the output times as the stepper declares (module docstring). A
    :class:`SchemeError` raised by the stepper stops the run; the states reached
    so far are returned with ``success=False`` and the error's message (or the
    error is re-raised when ``raise_on_error``). An initial state that fails
    :meth:`Stepper.check` is the only output (shown to the observers too).

    Parameters
    ----------
    stepper : Stepper
        What advances the state: a scheme (:class:`solvers.Scheme`) or any
        :class:`Stepper`.
    y0 : ndarray
        State at ``t_eval[0]``, the first output.
    t_eval : array_like, shape (T,)
        Strictly increasing output times.
    first_step : float, optional
        First step of an adaptive stepper (default ``stepper.initial_step``).
    max_step : float
        Largest step of an adaptive stepper (the floor, :func:`solvers.step_floor`:
        module docstring).
    max_steps : int
        Bound on accepted plus rejected steps; a fixed-step run stops before the
        output interval that would exceed it.
    observers : sequence of callables
        ``observer(index, t, y)`` is called at every output time, including the initial one.
    raise_on_error : bool
        Re-raise stepper errors instead of returning a partial result.
    record : Evolution, optional
        Filled in (counters, ``continuation``) as the run goes, before the observers
        are called at each output, and returned; its counters start from zero.
    start : (t, y), optional
        The loop's own starting point when it differs from the first output: the
        :attr:`Continuation` of a ``dense_output`` stepper, t ≤ ``t_eval[0]``
        (the first step is then taken from there, with ``first_step``).

    Returns
    -------
    Evolution
        Output times reached, states, counters, ``success`` and ``message``, and
        where to continue from (``continuation``).

    Raises
    ------
    ValueError
        ``t_eval`` empty, not 1-D, not finite or not strictly increasing.
    SchemeError
        Only with ``raise_on_error``: the stepper's error.

    Examples
    --------
    The heat equation ∂_t ρ = σ ∂²_θ ρ, σ = 0.1, on S¹: the mode cos θ decays as e^{-σt};
    an observer sees every output:

    >>> import numpy as np
    >>> import solvers
    >>> grid = solvers.CircleGrid(16)
    >>> heat = solvers.ConvolutionVelocity(numerator=lambda k: np.zeros(k.shape))
    >>> scheme = solvers.CircleSpectral(grid, heat, diffusion=0.1)
    >>> rho0 = (1 + 0.5 * np.cos(grid.theta))[None] / (2 * np.pi)
    >>> run = solvers.evolve(scheme, rho0, [0.0, 1.0, 2.0],
    ...                      observers=[lambda i, t, y: print(i, t, y.shape)])
    0 0.0 (1, 16)
    1 1.0 (1, 16)
    2 2.0 (1, 16)
    >>> print(((2 * np.pi * run.y[:, 0, 0] - 1) / 0.5).round(6), np.exp(-0.1 * run.t).round(6))
    [1.       0.904837 0.818731] [1.       0.904837 0.818731]
    """
    t_eval = np.asarray(t_eval, dtype=float)
    if t_eval.ndim != 1 or t_eval.size < 1:
        raise ValueError(f"t_eval must be a non-empty 1-D array of times, got shape {t_eval.shape}")
    if not np.all(np.isfinite(t_eval)):
        raise ValueError("t_eval must contain finite times")
    if t_eval.size > 1 and not np.all(np.diff(t_eval) > 0):
        raise ValueError("t_eval must be strictly increasing")
    y = _loop_state(y0)
    out_y = np.empty((t_eval.size, *np.shape(y)), dtype=np.result_type(y))
    out_y[0] = y
    result = record if record is not None else Evolution(t=t_eval, y=out_y)
    result.t, result.y = t_eval, out_y
    result.steps_per_output = np.zeros(t_eval.size, dtype=int)
    t, y_loop = (float(t_eval[0]), y) if start is None else (float(start[0]), _loop_state(start[1]))
    breaks = np.asarray(stepper.switching_times(t, float(t_eval[-1])), dtype=float)
    loop = _Loop(stepper, result, out_y, observers, max_step, max_steps, breaks)
    planned = stepper.fixed_step if stepper.fixed_step is not None else first_step
    try:
        try:
            stepper.check(y)
        finally:  # the first output is shown to the observers even when it fails its check
            loop.emit(0, t_eval[0], y, Continuation(t, y_loop, np.nan if planned is None else planned, 0, 0, 0))
        if stepper.fixed_step is not None:
            loop.run_fixed(t_eval, y)
        else:
            dt = first_step if first_step is not None else stepper.initial_step(y_loop, t)
            loop.run_adaptive(t_eval, t, y_loop, min(dt, max_step))
    except SchemeError as err:
        if raise_on_error:
            raise
        result.success = False
        result.message = str(err)
    result.t = t_eval[: loop.reached]
    result.y = out_y[: loop.reached]
    result.nfev = stepper.nfev
    result.steps_per_output = result.steps_per_output[: loop.reached]
    return result


def _loop_state(y: Any) -> Any:
    """``y`` as the loop's own state: a read-only float array (possibly a stepper's cached one) is taken as it
    is, anything else copied."""
    if isinstance(y, np.ndarray) and not y.flags.writeable:
        return y
    return np.array(y, copy=True)


class _Loop:
    """The stepping of :func:`evolve`: one adaptive loop (landing or dense) and one fixed-step loop."""

    def __init__(self, stepper: Stepper, result: Evolution, out_y: np.ndarray, observers: Sequence[Observer],
                 max_step: float, max_steps: int, breaks: np.ndarray) -> None:
        self.stepper, self.result, self.out_y = stepper, result, out_y
        self.observers, self.max_step, self.max_steps = observers, max_step, max_steps
        self.breaks = breaks
        self.reached = 0
        self.attempts = 0

    def emit(self, index: int, t: float, y: Any, continuation: Continuation) -> None:
        """Output ``index``: stored, counted, recorded with where to continue, shown to the observers."""
        self.out_y[index] = y
        self.reached = index + 1
        self.result.nfev = self.stepper.nfev
        self.result.continuation = continuation
        for observer in self.observers:
            observer(index, t, y)

    def accepted(self, index: int, h: float, steps: int = 1, h_max: float | None = None) -> None:
        """Count ``steps`` accepted steps in output interval ``index``, of sizes from ``h`` to ``h_max``."""
        result = self.result
        result.n_steps += steps
        result.steps_per_output[index] += steps
        result.dt_min = min(result.dt_min, h)
        result.dt_max = max(result.dt_max, h if h_max is None else h_max)

    def advanced(self, index: int, target: float, h_min: float, out: Advance) -> None:
        """Account for the steps of :meth:`Stepper.advance` towards ``target``; raise where the loop would."""
        self.attempts += out.attempts
        self.result.n_rejected += out.rejected
        if out.steps:
            self.accepted(index, out.dt_min, out.steps, out.dt_max)
        if out.stopped == "max_steps":
            raise StepSizeError(f"{self.stepper.name}: exceeded max_steps = {self.max_steps} at t = {out.t:.6g}")
        if out.stopped == "floor":
            self.floor(out.dt, h_min, out.t)
        if out.stopped == "check":
            self.stepper.check(out.y)
            self.accepted(index, out.h)
            if out.t < target:
                self.floor(out.dt, h_min, out.t)

    def counts(self) -> tuple[int, int, int]:
        return self.result.n_steps, self.result.n_rejected, self.stepper.nfev

    def run_fixed(self, t_eval: np.ndarray, y: Any) -> None:
        stepper, breaks = self.stepper, self.breaks
        for i in range(1, t_eval.size):
            start, end = float(t_eval[i - 1]), float(t_eval[i])
            ends = np.concatenate(([start], breaks[(breaks > start) & (breaks < end)], [end]))
            n_subs, sizes = fixed_steps(ends, float(stepper.fixed_step))  # the pieces between switching times
            if self.attempts + int(n_subs.sum()) > self.max_steps:
                raise StepSizeError(f"{stepper.name}: exceeded max_steps = {self.max_steps} at t = {start:.6g}")
            for t0, n_sub, h in zip(ends[:-1].tolist(), n_subs.tolist(), sizes.tolist()):
                for s in range(n_sub):
                    self.attempts += 1
                    res = stepper.step(t0 + s * h, y, h)
                    if not res.accepted:
                        raise StepSizeError(f"{stepper.name}: the fixed step {h:.6g} was not accepted at "
                                            f"t = {t0 + s * h:.6g}")
                    y = res.y
                    stepper.check(y)
                    self.accepted(i, h)
            self.emit(i, end, y, Continuation(end, y, h, *self.counts()))

    def run_adaptive(self, t_eval: np.ndarray, t: float, y: Any, dt: float) -> None:
        stepper, result, breaks = self.stepper, self.result, self.breaks
        dense = stepper.dense_output
        h_min = step_floor(t_eval[0], t_eval[-1])
        self.floor(dt, h_min, t)
        continuation = Continuation(t, y, dt, *self.counts())
        switch = int(np.searchsorted(breaks, t, side="right"))  # the next switching time
        for i in range(1, t_eval.size):
            target = float(t_eval[i])
            end = float(t_eval[-1]) if dense else target
            while t < target:
                if np.isnan(dt):  # a switching time was reached: the step-size control restarts there
                    dt = min(stepper.initial_step(y, t), self.max_step)
                    self.floor(dt, h_min, t)
                switching = switch < breaks.size and breaks[switch] <= end
                stop = float(breaks[switch]) if switching else end
                if not dense:
                    out = stepper.advance(t, y, stop, dt, max_step=self.max_step, h_min=h_min,
                                          attempts=self.max_steps - self.attempts)
                    if out is not None:
                        t, y, dt = out.t, out.y, out.dt
                        self.advanced(i, stop, h_min, out)
                        if switching and t == stop:
                            switch, dt = switch + 1, np.nan
                        continue
                if self.attempts >= self.max_steps:
                    raise StepSizeError(f"{stepper.name}: exceeded max_steps = {self.max_steps} at t = {t:.6g}")
                remaining = stop - t
                last = covers(dt, remaining)
                h = remaining if last else dt
                if stepper.equal_steps and not last:
                    h = remaining / np.ceil(remaining / dt)
                before = Continuation(t, y, dt, *self.counts())
                self.attempts += 1
                res = stepper.step(t, y, h)
                if not res.accepted:
                    result.n_rejected += 1
                    dt = min(res.dt_next, self.max_step)
                    self.floor(dt, h_min, t)
                    continue
                y = res.y
                stepper.check(y)
                t = stop if last else t + h
                self.accepted(i, h)
                continuation = before
                if not last or res.dt_next < dt:
                    dt = min(res.dt_next, self.max_step)
                if not last:
                    self.floor(dt, h_min, t)
                elif switching:
                    switch, dt = switch + 1, np.nan
            if not dense:
                continuation = Continuation(target, y, dt, *self.counts())
            self.emit(i, target, y if t == target else stepper.interpolate(target), continuation)

    def floor(self, dt: float, h_min: float, t: float) -> None:
        """Raise :class:`StepSizeError` when the proposed step ``dt`` at ``t`` is below the floor ``h_min``."""
        if dt < h_min:
            raise StepSizeError(f"{self.stepper.name}: step size {dt:.3g} fell below the smallest step "
                                f"{h_min:.3g} at t = {t:.6g}")
