"""Dormand–Prince 5(4) on a batch of independent systems, each with its own step size.

The systems y_s' = F(y_s), s = 1 … S, share the right-hand side and the
output times but nothing else: every system has its own step size, its own
accept/reject decision and its own controller memory, with the tableau and the
rules of :mod:`solvers._runge_kutta` (the controller :func:`controller_decision`,
the first step :func:`first_step_probe` / :func:`first_step_size`, the floor
:func:`step_floor`, the last step :func:`covers`). One pass of the loop
attempts one step of every running system: the seven stages are evaluated for
the whole batch at once (the right-hand side sees an array of shape
(running systems, *state)), so the cost per step is that of a few batched
array operations, independent of Python. A system's trajectory is the one its
own adaptive integration gives: which other systems share its batch changes
only the order in which floating-point operations are issued to BLAS, not its
steps.

Charts. With a ``chart`` (``exp(p, u)`` and ``pullback(p, u, f)``, vectorised
over the leading axes) the step is taken in the chart u ↦ exp_p(u) centred at
the step's start p (Munthe-Kaas' RKMK of order 1 in the differential, exact for
the exponential map of the sphere): K_i = dexp_p(U_i)^{-1} F(exp_p(U_i)), with
U_i = h Σ_{j<i} a_ij K_j, and the step ends at exp_p(h Σ b_j K_j). Without a
chart exp_p(u) = p + u and the pullback is the identity (the classical method).

Error norm per system: the root mean square over the state's entries of
err/(atol + rtol · scale), scale = max(|y|, |y_new|) entrywise (``unit_scale``:
scale = 1, for angles). Dense output: the continuous extension of order 4
(:data:`solvers._runge_kutta.P`) in the chart of the last accepted step.

Order 5 (4 for the dense output). ``stop`` is the caller's test of an accepted
state: a system it marks is taken out of the batch at that state (its later
outputs are left NaN, its stop time recorded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numba
import numpy as np

from ._runge_kutta import (
    A,
    E,
    ERROR_ORDER,
    P,
    StepController,
    controller_decision,
    covers,
    first_step_probe,
    first_step_size,
    step_floor,
)

__all__ = ["BatchChart", "BatchEvolution", "evolve_batch", "RUNNING", "FINISHED", "STOPPED", "MAX_STEPS",
           "UNDERFLOW", "BATCH_STATUS"]

#: status of a system of :class:`BatchEvolution`
RUNNING, FINISHED, STOPPED, MAX_STEPS, UNDERFLOW = 0, 1, 2, 3, 4
BATCH_STATUS = {RUNNING: "running", FINISHED: "reached the final time", STOPPED: "stopped by the caller's test",
                MAX_STEPS: "exceeded max_steps", UNDERFLOW: "step size fell below the smallest step"}

_CONTROLLER = StepController()
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = _CONTROLLER.safety, _CONTROLLER.min_factor, _CONTROLLER.max_factor
#: "contract" only (FMA): every sum keeps its order, so a system's arithmetic does not depend on its batch
_FASTMATH = {"contract"}
_EXPONENT = -1.0 / (ERROR_ORDER + 1)


class BatchChart(Protocol):
    """A chart u ↦ exp_p(u) around every point p of a batch, vectorised over leading axes."""

    def exp(self, p: np.ndarray, u: np.ndarray) -> np.ndarray: ...

    def pullback(self, p: np.ndarray, u: np.ndarray, f: np.ndarray) -> np.ndarray:
        """dexp_p(u)^{-1} f: a velocity f at exp_p(u) as a velocity in the chart."""


@dataclass
class BatchEvolution:
    r"""Result of :func:`evolve_batch`.

    Parameters
    ----------
    y : ndarray, shape (systems, len(t_out), \*state)
        States at the output times (NaN after a system stopped).
    status : ndarray of int8, shape (systems,)
        :data:`FINISHED`, :data:`STOPPED` (the caller's ``stop``), :data:`MAX_STEPS` or
        :data:`UNDERFLOW` (messages in :data:`BATCH_STATUS`). A step is accepted only with a finite
        error estimate, which involves every stage, so an accepted state is finite; a system whose
        right-hand side is not finite is rejected down to the step floor (:data:`UNDERFLOW`).
    t_stop : ndarray, shape (systems,)
        Time each system reached.
    n_steps, n_rejected, nfev : ndarray of int, shape (systems,)
        Accepted steps, rejected attempts, right-hand-side evaluations of each system.
    dt_min, dt_max : ndarray, shape (systems,)
        Smallest and largest accepted step of each system.

    Examples
    --------
    Three systems y' = -r y with rates r = 1, 2, 3, each with its own steps:

    >>> import numpy as np
    >>> import solvers
    >>> rates = np.array([1.0, 2.0, 3.0])
    >>> def rhs(y, systems, out):
    ...     out[:] = -rates[systems, None] * y
    >>> result = solvers.evolve_batch(rhs, np.ones((3, 1)), [0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12)
    >>> result.y.shape, result.status, result.t_stop
    ((3, 3, 1), array([1, 1, 1], dtype=int8), array([1., 1., 1.]))
    >>> bool(np.all(np.diff(result.n_steps) > 0))  # faster decay, more steps
    True
    """

    y: np.ndarray
    status: np.ndarray
    t_stop: np.ndarray
    n_steps: np.ndarray
    n_rejected: np.ndarray
    nfev: np.ndarray
    dt_min: np.ndarray
    dt_max: np.ndarray


@numba.njit(cache=True)
def _probes(d0, d1):
    out = np.empty(d0.size)
    for s in range(d0.size):
        out[s] = first_step_probe(d0[s], d1[s])
    return out


@numba.njit(cache=True)
def _first_sizes(h0, d1, d2, error_order):
    out = np.empty(h0.size)
    for s in range(h0.size):
        out[s] = first_step_size(h0[s], d1[s], d2[s], error_order)
    return out


@numba.njit(cache=True)
def _covers(h, remaining):
    out = np.empty(h.size, dtype=np.bool_)
    for s in range(h.size):
        out[s] = covers(h[s], remaining[s])
    return out


@numba.njit(cache=True)
def _rms_rows(values, scale_rows):
    """√(mean over entries of (values_s / scale_s)²) per row s of (m, N) arrays (scale (m, N) or (1, 1))."""
    m, size = values.shape
    out = np.empty(m)
    broadcast = scale_rows.size == 1
    for s in range(m):
        total = 0.0
        for q in range(size):
            ratio = values[s, q] / (scale_rows[0, 0] if broadcast else scale_rows[s, q])
            total += ratio * ratio
        out[s] = np.sqrt(total / size)
    return out


@numba.njit(cache=True, fastmath=_FASTMATH)
def stage_sum_row(weights, stages, count, s, hs, base, with_base, out, acc):
    """out = base + h_s Σ_{j<count} weights_j K_j[s] for one row s of stages (7, m, N) (``base`` ignored
    without ``with_base``); ``acc`` (N,) work."""
    size = out.shape[0]
    acc[:] = 0.0
    for j in range(count):
        wj = weights[j]
        for q in range(size):
            acc[q] += wj * stages[j, s, q]
    if with_base:
        for q in range(size):
            out[q] = base[q] + hs * acc[q]
    else:
        for q in range(size):
            out[q] = hs * acc[q]


@numba.njit(cache=True)
def _stage_sum(weights, stages, count, h, base, out):
    """out_s = base_s + h_s Σ_{j<count} weights_j K_j[s] over (m, N) rows (no base: an empty array)."""
    m, size = out.shape
    with_base = base.shape[0] == m
    acc = np.empty(size)
    for s in range(m):
        stage_sum_row(weights, stages, count, s, h[s], base[s] if with_base else acc, with_base, out[s], acc)


@numba.njit(cache=True, fastmath=_FASTMATH)
def _error_norms(stages, h, y, y_new, rtol, atol, unit_scale):
    """RMS of h Σ_j E_j K_j / (atol + rtol·scale) per system, scale 1 or max(|y|, |y_new|); inf if not finite."""
    m, size = y.shape
    out = np.empty(m)
    acc = np.empty(size)
    for s in range(m):
        acc[:] = 0.0
        for j in range(7):
            ej = _E_FLAT[j]
            for q in range(size):
                acc[q] += ej * stages[j, s, q]
        hs = h[s]
        total = 0.0
        for q in range(size):
            scale = atol + rtol if unit_scale else atol + rtol * max(abs(y[s, q]), abs(y_new[s, q]))
            ratio = hs * acc[q] / scale
            total += ratio * ratio
        out[s] = np.sqrt(total / size)
    for s in range(m):
        if not np.isfinite(out[s]):
            out[s] = np.inf
    return out


@numba.njit(cache=True, fastmath=_FASTMATH)
def dense_row(stages, s, hs, th, base, with_base, out, weights):
    """Dense output u(θ) = h_s Σ_j (Σ_q P_jq θ^q) K_j[s] of the step of row s, plus ``base`` when ``with_base``;
    ``weights`` (7,) work."""
    size = out.shape[0]
    for j in range(7):
        weights[j] = th * (_P_FLAT[j, 0] + th * (_P_FLAT[j, 1] + th * (_P_FLAT[j, 2] + th * _P_FLAT[j, 3])))
    for q in range(size):
        out[q] = base[q] if with_base else 0.0
    for j in range(7):
        wj = hs * weights[j]
        for q in range(size):
            out[q] += wj * stages[j, s, q]


@numba.njit(cache=True)
def _dense_states(stages, rows, h, theta, base, out):
    """Dense output u(θ) = h Σ_j (Σ_q P_jq θ^q) K_j of the steps ``rows``, plus ``base`` rows when given."""
    with_base = base.shape[0] == rows.size
    weights = np.empty(7)
    for r in range(rows.size):
        dense_row(stages, rows[r], h[rows[r]], theta[r], base[r] if with_base else out[r], with_base, out[r],
                  weights)


_E_FLAT = np.ascontiguousarray(E)
_P_FLAT = np.ascontiguousarray(P)
_A_ROWS = np.ascontiguousarray(A)
_NO_BASE = np.zeros((0, 0))


@numba.njit(cache=True)
def _account(err, rejected_last, h, t, last, t_end, t_out, ids, next_out, y, y_new, f, f_new, n_steps, n_rejected,
             nfev, dt_min, dt_max, status, t_stop):
    """Everything one attempt of every running system decides, in place: the controller's verdict
    (:func:`controller_decision`), the counts, the clock, the accepted states and velocities, the
    systems that reached t_end (status :data:`FINISHED`, returned as ``done``) and the next step sizes;
    and the outputs inside the accepted steps as (rows, output index, θ, output at the step's end)."""
    m, size = y.shape
    done = np.zeros(m, dtype=np.bool_)
    capacity = m * t_out.size
    rows = np.empty(capacity, dtype=np.int64)
    index = np.empty(capacity, dtype=np.int64)
    theta = np.empty(capacity)
    at_end = np.empty(capacity, dtype=np.bool_)
    q = 0
    for r in range(m):
        s = ids[r]
        nfev[s] += 6
        accepted, factor = controller_decision(err[r], rejected_last[r], _SAFETY, _MIN_FACTOR, _MAX_FACTOR,
                                               _EXPONENT)
        rejected_last[r] = not accepted
        if not accepted:
            n_rejected[s] += 1
            h[r] *= factor
            continue
        t_new = t_end if last[r] else t[r] + h[r]
        j = next_out[s]
        while j < t_out.size and t_out[j] <= t_new:
            rows[q] = r
            index[q] = j
            theta[q] = (t_out[j] - t[r]) / h[r]
            at_end[q] = t_out[j] == t_new
            q += 1
            j += 1
        next_out[s] = j
        n_steps[s] += 1
        dt_min[s] = min(dt_min[s], h[r])
        dt_max[s] = max(dt_max[s], h[r])
        t[r] = t_new
        t_stop[s] = t_new
        for c in range(size):
            y[r, c] = y_new[r, c]
            f[r, c] = f_new[r, c]
        if last[r]:
            status[s] = FINISHED
            done[r] = True
        h[r] *= factor
    return done, rows[:q], index[:q], theta[:q], at_end[:q]


def evolve_batch(
    rhs: Callable[[np.ndarray, np.ndarray, np.ndarray], Any],
    y0: np.ndarray,
    t_out: np.ndarray,
    *,
    rtol: float,
    atol: float,
    chart: BatchChart | None = None,
    unit_scale: bool = False,
    max_steps: int = 100_000,
    record: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    stop: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> BatchEvolution:
    r"""Integrate every system of ``y0`` through the output times ``t_out`` with its own adaptive DP5(4).

    Every system has its own step size, accept/reject decision and controller memory (the rules of
    :class:`solvers.StepController`, :func:`solvers.initial_step`, :func:`solvers.step_floor` and
    :func:`solvers.covers`); the seven stages are evaluated for the whole running batch at once.

    Parameters
    ----------
    rhs : callable
        ``rhs(y, systems, out)`` writes F(y) into ``out``, both of shape (m, \*state), for the systems
        with indices ``systems`` (m of them, in the order of ``y``); autonomous.
    y0 : ndarray, shape (systems, \*state)
        Initial states at ``t_out[0]``.
    t_out : ndarray
        Increasing output times; the first is the initial time.
    rtol, atol : float
        Tolerances of the per-system error norm (module docstring).
    chart : BatchChart, optional
        Step in the chart exp_p around each step's start (None: y = p + u).
    unit_scale : bool
        Scale of the error norm 1 instead of max(|y|, |y_new|).
    max_steps : int
        Bound on the attempts (accepted + rejected) of each system.
    record : callable, optional
        ``record(y, systems)`` → what is kept of the states at an output time, shape
        (m, \*recorded); default the states themselves.
    stop : callable, optional
        ``stop(y, systems)`` → boolean mask: those systems end at this accepted state
        (status :data:`STOPPED`; their later outputs are left NaN), e.g. once every later
        output is known by an invariant.

    Returns
    -------
    BatchEvolution
        Outputs, status, stop time and counters of every system.

    Notes
    -----
    The error norm of a step of system s is the root mean square over the n entries of its state,

    .. math::

        \mathrm{err}_s = \Bigl(\frac{1}{n} \sum_{i=1}^{n}
        \Bigl(\frac{h_s \sum_j E_j K_{j,s,i}}{\mathrm{atol} + \mathrm{rtol}\,
        \max(|y_{s,i}|, |y^\mathrm{new}_{s,i}|)}\Bigr)^2\Bigr)^{1/2}

    (scale 1 in place of the max with ``unit_scale``); err_s ≤ 1 accepts.

    Examples
    --------
    Three systems y' = -r y with rates r = 1, 2, 3: y(1) = e^{-r}.

    >>> import numpy as np
    >>> import solvers
    >>> rates = np.array([1.0, 2.0, 3.0])
    >>> def rhs(y, systems, out):
    ...     out[:] = -rates[systems, None] * y
    >>> result = solvers.evolve_batch(rhs, np.ones((3, 1)), [0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12)
    >>> print(result.y[:, -1, 0].round(8), np.exp(-rates).round(8))
    [0.36787944 0.13533528 0.04978707] [0.36787944 0.13533528 0.04978707]

    A ``stop`` test ends each system at its first accepted state below 1/2 (status 2,
    :data:`STOPPED`, before t = 1); its later outputs are left NaN:

    >>> result = solvers.evolve_batch(rhs, np.ones((3, 1)), [0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12,
    ...                               stop=lambda y, systems: y[:, 0] < 0.5)
    >>> result.status
    array([2, 2, 2], dtype=int8)
    >>> bool(np.isnan(result.y[1, -1, 0]))
    True
    """
    rtol, atol = float(rtol), float(atol)
    y0 = np.ascontiguousarray(y0, dtype=float)
    t_out = np.asarray(t_out, dtype=float)
    n_sys, shape = y0.shape[0], y0.shape[1:]
    record = record or (lambda y, systems: y)
    t0, t_end = float(t_out[0]), float(t_out[-1])
    min_step = step_floor(t0, t_end)
    first = np.asarray(record(y0, np.arange(n_sys)), dtype=float)
    out = np.full((n_sys, t_out.size, *first.shape[1:]), np.nan)
    out[:, 0] = first
    result = BatchEvolution(out, np.full(n_sys, RUNNING, dtype=np.int8), np.full(n_sys, t0),
                            np.zeros(n_sys, dtype=np.int64), np.zeros(n_sys, dtype=np.int64),
                            np.zeros(n_sys, dtype=np.int64), np.full(n_sys, np.inf), np.zeros(n_sys))
    if n_sys == 0 or t_out.size == 1:
        result.status[:] = FINISHED
        return result
    size = int(np.prod(shape))

    def flat(a: np.ndarray) -> np.ndarray:
        return a.reshape(a.shape[0], size)

    def full(a: np.ndarray) -> np.ndarray:
        return a.reshape(a.shape[0], *shape)

    def pullback(p: np.ndarray, u: np.ndarray | None, f: np.ndarray) -> np.ndarray:
        return f if chart is None else chart.pullback(p, np.zeros_like(p) if u is None else u, f)

    def evaluate(point: np.ndarray, systems: np.ndarray) -> np.ndarray:
        value = np.empty_like(point)
        rhs(point, systems, value)
        return value

    ids = np.arange(n_sys)
    y = y0.copy()
    f = pullback(y, None, evaluate(y, ids))
    # first step (Hairer, Nørsett & Wanner, as solvers.initial_step), per system
    scale0 = np.full((1, 1), atol + rtol) if unit_scale else atol + rtol * np.abs(flat(y))
    d0 = np.full(n_sys, 1.0 / (atol + rtol)) if unit_scale else _rms_rows(flat(y), scale0)
    d1 = _rms_rows(flat(f), scale0)
    h0 = _probes(d0, d1)
    u0 = f * h0.reshape((-1,) + (1,) * len(shape))
    g = pullback(y, None, evaluate(y + u0 if chart is None else chart.exp(y, u0), ids)) - f
    h = _first_sizes(h0, d1, _rms_rows(flat(g), scale0) / h0, ERROR_ORDER)
    result.nfev += 2
    t = np.full(n_sys, t0)
    rejected_last = np.zeros(n_sys, dtype=np.bool_)
    next_out = np.ones(n_sys, dtype=np.int64)
    stage_buffer = np.empty((7, n_sys, size))
    point_buffer = np.empty((2, n_sys, size))

    while ids.size:
        m = ids.size
        attempts = result.n_steps[ids] + result.n_rejected[ids]
        ended = (attempts >= max_steps) | (h < min_step)
        if np.any(ended):
            result.status[ids[ended & (attempts >= max_steps)]] = MAX_STEPS
            result.status[ids[ended & (attempts < max_steps)]] = UNDERFLOW
            keep = ~ended
            ids, y, f, h, t, rejected_last = ids[keep], y[keep], f[keep], h[keep], t[keep], rejected_last[keep]
            continue
        last = _covers(h, t_end - t)
        h = np.where(last, t_end - t, h)
        k = stage_buffer[:, :m]
        k[0] = flat(f)
        y_flat = flat(y)
        for i in range(1, 7):
            stage = point_buffer[int(i == 6), :m]
            if chart is None:
                _stage_sum(_A_ROWS[i], k, i, h, y_flat, stage)
                point = full(stage)
                raw = full(k[i])
                rhs(point, ids, raw)
            else:
                _stage_sum(_A_ROWS[i], k, i, h, _NO_BASE, stage)
                point = chart.exp(y, full(stage))
                raw = evaluate(point, ids)
                k[i] = flat(chart.pullback(y, full(stage), raw))
        y_new, f_new = point, raw
        y_start = y_flat.copy()
        y_start_full = full(y_start)
        h_step = h.copy()
        err = _error_norms(k, h, y_flat, flat(y_new), rtol, atol, unit_scale)
        f_next = f_new if chart is None else pullback(y_new, None, f_new)
        done, rows, index, theta, at_end = _account(
            err, rejected_last, h, t, last, t_end, t_out, ids, next_out, flat(y), flat(y_new), flat(f),
            flat(f_next), result.n_steps, result.n_rejected, result.nfev, result.dt_min, result.dt_max,
            result.status, result.t_stop)
        if rows.size:
            states = np.empty((rows.size, size))
            if chart is None:
                _dense_states(k, rows, h_step, theta, y_start[rows], states)
                states = full(states)
            else:
                _dense_states(k, rows, h_step, theta, _NO_BASE, states)
                states = chart.exp(y_start_full[rows], full(states))
            states[at_end] = y_new[rows[at_end]]
            result.y[ids[rows], index] = record(states, ids[rows])
        if stop is not None:
            candidates = np.nonzero(~rejected_last & ~done)[0]
            if candidates.size:
                halted = candidates[np.asarray(stop(y[candidates], ids[candidates]), dtype=bool)]
                result.status[ids[halted]] = STOPPED
                done[halted] = True
        if np.any(done):
            keep = ~done
            ids, y, f, h, t, rejected_last = ids[keep], y[keep], f[keep], h[keep], t[keep], rejected_last[keep]
    return result
