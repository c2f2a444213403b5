r"""Dormand–Prince 5(4) of token systems one at a time in one compiled loop, their statistics recorded inside.

The integration of :func:`solvers.evolve_batch` (its tableau, controller, first step, step floor, error
norm, dense output and exponential chart, each from the same compiled function) for the three
representations of :mod:`meanfield.particles._token_ensembles`, with every step of a system taken before
the next system starts: the seven stages of one system (a few hundred doubles) and the velocity's work
arrays stay in the first-level cache, nothing is allocated per evaluation, and nothing between two
evaluations returns to Python. A system's steps are those :func:`solvers.evolve_batch` takes for it, bit for
bit (the same compiled arithmetic in the same order; its trajectory never depended on the other systems of a
batch).

At each output time inside an accepted step the state (dense output of order 4, or the step's end when the
time is the step's end) is reduced to its statistics, (pair fraction, clusters) at threshold δ; with
``stop_clustered`` a system whose accepted state has every pair linked ends there and its later statistics
are 1 (the invariance argument of :mod:`meanfield.particles._token_ensembles`).
"""

from __future__ import annotations

import numba
import numpy as np

from solvers._batched_dormand_prince import (
    _A_ROWS,
    _EXPONENT,
    _MAX_FACTOR,
    _MIN_FACTOR,
    _SAFETY,
    FINISHED,
    MAX_STEPS,
    RUNNING,
    STOPPED,
    UNDERFLOW,
    _error_norms,
    _rms_rows,
    dense_row,
    stage_sum_row,
)
from solvers._runge_kutta import ERROR_ORDER, controller_decision, covers, first_step_probe, first_step_size, step_floor

from ..domains._geometry import ANGLES as CIRCLE
from ..models._attention_weights import velocity_factor
from ..models._batched_velocity import chord_rates_system, point_rates_system
from ..models._compiled_kernels import attention_velocity_kernel
from ._compiled_charts import points_exp, points_pullback
from ._token_statistics import ANGLES, POINTS, all_linked, representation_statistics

__all__ = ["evolve_statistics"]


@numba.njit(cache=True)
def _work_arrays(n, d):
    """The velocity's and the chart's work arrays of one system: (n × n matrices, n-vectors, Xᵀ, K X, the angle
    kernel's rows, the radii's rows)."""
    return (np.empty((4, n, n)), np.empty((3, n)), np.empty((d, n)), np.empty((n, d)), np.empty((n + 3, n)),
            np.empty((3, n)))


@numba.njit(cache=True)
def _velocity(kind, state, n, d, weights, beta, normalized, factor, out, work):
    """The velocity of one system's state (size,) into ``out`` (size,), the per-system kernels of the batched ones."""
    matrices, vectors, xt, product, angle_work = work[0], work[1], work[2], work[3], work[4]
    if kind == ANGLES:
        attention_velocity_kernel(CIRCLE, state.reshape((n, 1)), weights, beta, normalized, factor,
                                  out.reshape((n, 1)), angle_work)
    elif kind == POINTS:
        point_rates_system(state.reshape((n, d)), weights, beta, normalized, factor, out.reshape((n, d)), xt,
                           matrices[0], matrices[1], product)
    else:
        chord_rates_system(state, weights, beta, normalized, factor, out, matrices, vectors)


@numba.njit(cache=True)
def _exp(p, u, n, d, out, work):
    points_exp(p.reshape((n, d)), u.reshape((n, d)), out.reshape((n, d)), work[5])


@numba.njit(cache=True)
def _pullback(p, u, f, n, d, out, work):
    points_pullback(p.reshape((n, d)), u.reshape((n, d)), f.reshape((n, d)), out.reshape((n, d)), work[5])


@numba.njit(cache=True)
def _copy(source, target):
    """target[:] = source for rows of equal length, without the broadcasting checks of slice assignment (whose
    error messages cost seconds of compilation)."""
    for q in range(target.size):
        target[q] = source[q]


@numba.njit(cache=True)
def _evolve_systems(kind, states0, n, d, t_out, min_step, weights, beta, normalized, factor, rtol, atol, limit,
                    screen, stop_clustered, max_steps, values, counts, status, t_stop):
    """Every system of ``states0`` (systems, size) from its state through ``t_out``, one after another: statistics
    into ``values`` (systems, times, 2), (nfev, accepted, rejected) into ``counts`` (3, systems), the status and
    the time reached into ``status`` and ``t_stop``."""
    work = _work_arrays(n, d)
    size = states0.shape[1]
    chart = kind == POINTS
    unit_scale = kind == ANGLES
    t_end = t_out[-1]
    stats = np.empty((1, 2))
    y = np.empty((1, size))
    f = np.empty(size)
    raw = np.empty(size)
    zero = np.zeros(size)
    stages = np.empty((7, 1, size))
    points = np.empty((2, size))
    end_point = np.empty((1, size))
    dense = np.empty(size)
    state = np.empty((1, size))
    acc = np.empty(size)
    dense_weights = np.empty(7)
    step = np.empty(1)
    for system in range(states0.shape[0]):
        _copy(states0[system], y[0])
        representation_statistics(kind, y, n, d, limit, stats)
        _copy(stats[0], values[system, 0])
        # the first step (solvers.initial_step's rule, as solvers.evolve_batch takes it)
        _velocity(kind, y[0], n, d, weights, beta, normalized, factor, raw, work)
        if chart:
            _pullback(y[0], zero, raw, n, d, f, work)
        else:
            _copy(raw, f)
        if unit_scale:
            scale0 = np.full((1, 1), atol + rtol)
            d0 = 1.0 / (atol + rtol)
        else:
            scale0 = atol + rtol * np.abs(y)
            d0 = _rms_rows(y, scale0)[0]
        d1 = _rms_rows(f.reshape((1, size)), scale0)[0]
        h0 = first_step_probe(d0, d1)
        probe = f * h0
        if chart:
            _exp(y[0], probe, n, d, end_point[0], work)
        else:
            _copy(y[0] + probe, end_point[0])
        _velocity(kind, end_point[0], n, d, weights, beta, normalized, factor, raw, work)
        if chart:
            _pullback(y[0], zero, raw, n, d, dense, work)
        else:
            _copy(raw, dense)
        h = first_step_size(h0, d1, _rms_rows((dense - f).reshape((1, size)), scale0)[0] / h0, ERROR_ORDER)
        nfev, accepted_steps, rejected_steps = 2, 0, 0
        t = t_out[0]
        rejected_last = False
        next_out = 1
        outcome = RUNNING
        while outcome == RUNNING:
            if accepted_steps + rejected_steps >= max_steps:
                outcome = MAX_STEPS
                break
            if h < min_step:
                outcome = UNDERFLOW
                break
            last = covers(h, t_end - t)
            if last:
                h = t_end - t
            step[0] = h
            _copy(f, stages[0, 0])
            for i in range(1, 7):
                point = points[1 if i == 6 else 0]
                if chart:
                    stage_sum_row(_A_ROWS[i], stages, i, 0, h, acc, False, point, acc)
                    _exp(y[0], point, n, d, end_point[0], work)
                    _velocity(kind, end_point[0], n, d, weights, beta, normalized, factor, raw, work)
                    _pullback(y[0], point, raw, n, d, stages[i, 0], work)
                else:
                    stage_sum_row(_A_ROWS[i], stages, i, 0, h, y[0], True, point, acc)
                    _velocity(kind, point, n, d, weights, beta, normalized, factor, stages[i, 0], work)
            y_new = end_point[0] if chart else points[1]
            err = _error_norms(stages, step, y, y_new.reshape((1, size)), rtol, atol, unit_scale)[0]
            nfev += 6
            accepted, change = controller_decision(err, rejected_last, _SAFETY, _MIN_FACTOR, _MAX_FACTOR, _EXPONENT)
            rejected_last = not accepted
            if not accepted:
                rejected_steps += 1
                h *= change
                continue
            t_new = t_end if last else t + h
            while next_out < t_out.size and t_out[next_out] <= t_new:
                if t_out[next_out] == t_new:
                    _copy(y_new, state[0])
                elif chart:
                    dense_row(stages, 0, h, (t_out[next_out] - t) / h, dense, False, dense, dense_weights)
                    _exp(y[0], dense, n, d, state[0], work)
                else:
                    dense_row(stages, 0, h, (t_out[next_out] - t) / h, y[0], True, state[0], dense_weights)
                representation_statistics(kind, state, n, d, limit, stats)
                _copy(stats[0], values[system, next_out])
                next_out += 1
            accepted_steps += 1
            t = t_new
            _copy(y_new, y[0])
            if chart:
                _pullback(y[0], zero, raw, n, d, f, work)
            else:
                _copy(stages[6, 0], f)
            h *= change
            if last:
                outcome = FINISHED
            elif stop_clustered and all_linked(kind, y, n, d, limit, screen, stats):
                outcome = STOPPED
                values[system, next_out:] = 1.0
        counts[0, system], counts[1, system], counts[2, system] = nfev, accepted_steps, rejected_steps
        status[system], t_stop[system] = outcome, t


def evolve_statistics(kind: int, states0: np.ndarray, n: int, d: int, t_out: np.ndarray, beta: float,
                      normalized: bool, weights: np.ndarray, *, limit: float, screen: float, rtol: float, atol: float,
                      stop_clustered: bool, max_steps: int = 100_000) -> tuple[np.ndarray, ...]:
    r"""Statistics of every system of ``states0`` at the output times, each system integrated by its own DP5(4).

    Parameters
    ----------
    kind : {ANGLES, POINTS, GRAM}
        The representation of the states (:mod:`._token_statistics`): angles (n, 1) with error scale 1, unit
        vectors (n, d) stepped in the exponential chart of S^{d-1}, or packed chords (n(n-1)/2,).
    states0 : ndarray, shape (systems, size)
        Initial states, flattened.
    n, d : int
        Tokens per system and dimension of R^d.
    t_out : ndarray
        Increasing output times, t_out[0] the start.
    beta, normalized, weights
        β, SA (True) or USA, the token weights w_j (n,).
    limit : float
        The statistics' threshold in the representation: √δ (chords), 1 - δ (inner products) or arccos(1 - δ)
        (arcs).
    screen : float
        The quick test's threshold on the pairs (1, k), ``limit`` with the representation's slack.
    rtol, atol : float
        Tolerances of the error norm of :func:`solvers.evolve_batch`.
    stop_clustered : bool
        End a system at its first accepted state with every pair linked (later statistics 1).
    max_steps : int
        Bound on the attempts of each system.

    Returns
    -------
    values : ndarray, shape (systems, times, 2)
        (pair fraction, clusters) at the output times (NaN after a system failed).
    counts : ndarray of int64, shape (3, systems)
        Velocity evaluations, accepted and rejected steps.
    status : ndarray of int8, shape (systems,)
        As :class:`solvers.BatchEvolution` (``FINISHED``, ``STOPPED``, ``MAX_STEPS``, ``UNDERFLOW``).
    t_stop : ndarray, shape (systems,)
        The time each system reached.
    """
    t_out = np.asarray(t_out, dtype=float)
    states0 = np.ascontiguousarray(states0, dtype=float)
    systems = states0.shape[0]
    values = np.full((systems, t_out.size, 2), np.nan)
    counts = np.zeros((3, systems), dtype=np.int64)
    status = np.full(systems, FINISHED, dtype=np.int8)
    t_stop = np.full(systems, float(t_out[0]))
    if t_out.size == 1:
        first = np.empty((systems, 2))
        representation_statistics(kind, states0, n, d, limit, first)
        values[:, 0] = first
        return values, counts, status, t_stop
    _evolve_systems(kind, states0, n, d, t_out, step_floor(t_out[0], t_out[-1]), weights, float(beta),
                    bool(normalized), velocity_factor(beta, normalized), float(rtol), float(atol), float(limit),
                    float(screen), bool(stop_clustered), int(max_steps), values, counts, status, t_stop)
    return values, counts, status, t_stop
