"""Compiled ensembles: many small SA/USA systems, each with its own adaptive Dormand–Prince 5(4).

The velocity of one system is the compiled kernel of the model
(:func:`meanfield.models._compiled_kernels.attention_velocity_kernel`, paper 2, arXiv:2312.10794,
(SA)/(USA), on S¹ (7.1)), inlined into the time stepping below.

Time stepping. Every system runs its own Dormand–Prince 5(4) with the tableau
and the rules of step-size control of :mod:`solvers`, inlined from their one
definition: the controller (:func:`solvers.controller_decision`), the first step
(:func:`solvers.first_step_probe`, :func:`solvers.first_step_size`), the step floor
(:func:`solvers.step_floor`, checked on every proposal) and the last step onto the
final time (:func:`solvers.covers`) — the integrator of
:class:`meanfield.particles._chart_steppers.ChartDormandPrince` for one system:
chart coordinates of the exponential map on S^{d-1} (so |x_i| = 1 to round-off),
angles on S¹; error norm the RMS over particles and components of
err/(atol + rtol·scale) (scale 1 for angles, max(|x|, |x_new|) per component on
the sphere); FSAL; 4th-order dense output at the output times; the last step lands
on the final time. A system's trajectory depends on nothing but its own initial
state, so it is the same bit for bit in a batch of any size and for any split of
the output times into calls (the state carried between calls is each system's
time, position, velocity, step size, controller memory and the dense output of
its last step).

Systems are spread over threads with ``numba.prange``; the number of threads
is numba's (``NUMBA_NUM_THREADS``, or :func:`numba.set_num_threads`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from solvers import (
    DORMAND_PRINCE,
    Evolution,
    StepController,
    controller_decision,
    covers,
    first_step_probe,
    first_step_size,
    step_floor,
)

from ..domains._geometry import ANGLES
from ..models._attention_weights import velocity_factor
from ..models._compiled_kernels import attention_velocity_kernel
from ._compiled_charts import chart_exp, chart_pullback

__all__ = ["EnsembleIntegrator", "EnsembleState", "start", "advance", "snapshot", "restore", "STATUS_MESSAGES"]

#: geometry codes of the kernels (those of :mod:`meanfield.domains._geometry`)
CIRCLE = ANGLES
#: per-system status: running, or why it stopped
RUNNING, MAX_STEPS, UNDERFLOW = 0, 1, 2
STATUS_MESSAGES = {MAX_STEPS: "exceeded max_steps", UNDERFLOW: "step size fell below the smallest step"}

_A = np.ascontiguousarray(DORMAND_PRINCE.A)
_E = np.ascontiguousarray(DORMAND_PRINCE.E)
_P = np.ascontiguousarray(DORMAND_PRINCE.P)
_CONTROLLER = StepController()
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = _CONTROLLER.safety, _CONTROLLER.min_factor, _CONTROLLER.max_factor
_ERROR_ORDER = DORMAND_PRINCE.error_order
_EXPONENT = -1.0 / (_ERROR_ORDER + 1)


@numba.njit(cache=True)
def _rms_scaled(kind, v, p, q, rtol, atol):
    """RMS over entries of v / (atol + rtol·scale), scale 1 (angles) or max(|p|, |q|) per component."""
    n, m = v.shape
    total = 0.0
    for i in range(n):
        for k in range(m):
            size = 1.0 if kind == CIRCLE else max(abs(p[i, k]), abs(q[i, k]))
            ratio = v[i, k] / (atol + rtol * size)
            total += ratio * ratio
    return np.sqrt(total / (n * m))


# ---------------------------------------------------------------------------- one system
@numba.njit(cache=True)
def _first_step(kind, x, f, w, beta, normalized, factor, rtol, atol, work, u, y, g):
    """Hairer–Nørsett–Wanner starting step (:func:`solvers.initial_step`, as
    :meth:`._chart_steppers.ChartDormandPrince.initial_step` for one system); costs one velocity evaluation."""
    n, m = x.shape
    d0 = 1.0 / (atol + rtol) if kind == CIRCLE else _rms_scaled(kind, x, x, x, rtol, atol)
    d1 = _rms_scaled(kind, f, x, x, rtol, atol)
    h0 = first_step_probe(d0, d1)
    zero = np.zeros_like(x)
    chart_pullback(kind, x, zero, f, u)
    for i in range(n):
        for k in range(m):
            u[i, k] *= h0
    chart_exp(kind, x, u, y)
    attention_velocity_kernel(kind, y, w, beta, normalized, factor, g, work)
    for i in range(n):
        for k in range(m):
            g[i, k] -= f[i, k]
    d2 = _rms_scaled(kind, g, x, x, rtol, atol) / h0
    return first_step_size(h0, d1, d2, _ERROR_ORDER)


@numba.njit(cache=True)
def _dense_output(kind, dense, theta, u, out):
    """exp_{x_n}(u(θ)), u(θ) = Σ_q θ^q Q_q, from ``dense`` = [x_n, Q_1, …, Q_4] of the last step."""
    n, m = u.shape
    for i in range(n):
        for k in range(m):
            u[i, k] = theta * (dense[1, i, k] + theta * (dense[2, i, k] + theta * (dense[3, i, k]
                                                                                + theta * dense[4, i, k])))
    chart_exp(kind, dense[0], u, out)


@numba.njit(cache=True)
def _advance_system(kind, x, f, w, beta, normalized, factor, rtol, atol, t_out, t_end, max_steps, min_step,
                    clock, counts, steps, dense, out):
    """Advance one system until it has written its state at every time of ``t_out`` into ``out``.

    ``clock`` = [t, h, rejected_last, t of the last step's start, its size]; ``counts`` =
    [n_steps, n_rejected, nfev, status, outputs written by this call]; ``steps`` = [min h, max h]
    of accepted steps; ``dense`` = [x_n, Q_1, …, Q_4] of the last accepted step, whose dense output is
    exp_{x_n}(Σ_q θ^q Q_q) with Q_q = h Σ_j P_jq K_j. ``x``, ``f`` (velocity at x) and these
    are updated in place; on a stop (``counts[3]`` ≠ 0) the outputs not reached are left.
    Outputs inside the last step of a previous call are written from ``dense`` first.
    """
    n, m = x.shape
    ks = np.empty((7, n, m))
    work = np.empty((n + m + 2, n))
    u = np.empty((n, m))
    y = np.empty((n, m))
    g = np.empty((n, m))
    x_new = np.empty((n, m))
    f_new = np.empty((n, m))
    err = np.empty((n, m))
    t, h = clock[0], clock[1]
    rejected_last = clock[2] != 0.0
    next_out = 0
    while counts[0] > 0 and next_out < t_out.size and t_out[next_out] <= t:
        if t_out[next_out] == t:
            out[next_out] = x
        else:
            _dense_output(kind, dense, (t_out[next_out] - clock[3]) / clock[4], u, out[next_out])
        next_out += 1
    while next_out < t_out.size:
        if counts[0] + counts[1] >= max_steps:
            counts[3] = MAX_STEPS
            break
        if h < min_step:  # the step floor of solvers.step_floor, on every proposal (after a rejection or a step)
            counts[3] = UNDERFLOW
            break
        last = covers(h, t_end - t)
        if last:
            h = t_end - t
        u[:, :] = 0.0
        chart_pullback(kind, x, u, f, ks[0])
        for stage in range(1, 6):
            for i in range(n):
                for k in range(m):
                    acc = 0.0
                    for j in range(stage):
                        acc += _A[stage, j] * ks[j, i, k]
                    u[i, k] = h * acc
            chart_exp(kind, x, u, y)
            attention_velocity_kernel(kind, y, w, beta, normalized, factor, g, work)
            chart_pullback(kind, x, u, g, ks[stage])
        for i in range(n):
            for k in range(m):
                acc = 0.0
                for j in range(6):
                    acc += _A[6, j] * ks[j, i, k]
                u[i, k] = h * acc
        chart_exp(kind, x, u, x_new)
        attention_velocity_kernel(kind, x_new, w, beta, normalized, factor, f_new, work)
        chart_pullback(kind, x, u, f_new, ks[6])
        counts[2] += 6
        finite = True
        for i in range(n):
            for k in range(m):
                acc = 0.0
                for j in range(7):
                    acc += _E[j] * ks[j, i, k]
                err[i, k] = h * acc
                if not np.isfinite(err[i, k]):
                    finite = False
        err_norm = _rms_scaled(kind, err, x, x_new, rtol, atol) if finite else np.inf
        accepted, fac = controller_decision(err_norm, rejected_last, _SAFETY, _MIN_FACTOR, _MAX_FACTOR, _EXPONENT)
        rejected_last = not accepted
        if not accepted:
            counts[1] += 1
            h *= fac
            continue
        t_new = t_end if last else t + h
        dense[0] = x
        for q in range(4):
            for i in range(n):
                for k in range(m):
                    acc = 0.0
                    for j in range(7):
                        acc += _P[j, q] * ks[j, i, k]
                    dense[q + 1, i, k] = h * acc
        clock[3], clock[4] = t, h
        while next_out < t_out.size and t_out[next_out] <= t_new:
            if t_out[next_out] == t_new:
                out[next_out] = x_new
            else:
                _dense_output(kind, dense, (t_out[next_out] - t) / h, u, out[next_out])
            next_out += 1
        if counts[0] == 0 or h < steps[0]:
            steps[0] = h
        steps[1] = max(steps[1], h)
        counts[0] += 1
        t = t_new
        x[:, :] = x_new
        f[:, :] = f_new
        h *= fac
    clock[0], clock[1] = t, h
    clock[2] = 1.0 if rejected_last else 0.0
    counts[4] = next_out


# ---------------------------------------------------------------------------- batches
@numba.njit(cache=True, parallel=True)
def _start_batch(kind, x, w, beta, normalized, factor, rtol, atol, f, clock, counts):
    for s in numba.prange(x.shape[0]):
        n, m = x.shape[1], x.shape[2]
        work = np.empty((n + m + 2, n))
        attention_velocity_kernel(kind, x[s], w[s], beta, normalized, factor, f[s], work)
        u = np.empty((n, m))
        y = np.empty((n, m))
        g = np.empty((n, m))
        clock[s, 1] = _first_step(kind, x[s], f[s], w[s], beta, normalized, factor, rtol, atol, work, u, y, g)
        counts[s, 2] = 2


@numba.njit(cache=True, parallel=True)
def _advance_batch(kind, x, f, w, beta, normalized, factor, rtol, atol, t_out, t_end, max_steps, min_step,
                   clock, counts, steps, dense, out):
    for s in numba.prange(x.shape[0]):
        if counts[s, 3] == RUNNING:
            _advance_system(kind, x[s], f[s], w[s], beta, normalized, factor, rtol, atol, t_out, t_end,
                            max_steps, min_step, clock[s], counts[s], steps[s], dense[s], out[s])


@dataclass
class EnsembleState:
    """Per-system state of a compiled ensemble between calls of :func:`advance`.

    Attributes
    ----------
    x : ndarray, shape (systems, n, m)
        Positions at each system's own time ``clock[:, 0]`` (m = 1: angles; m = d: unit vectors).
    f : ndarray, shape (systems, n, m)
        The velocity at ``x`` (the first stage of the next step, FSAL).
    clock : ndarray, shape (systems, 5)
        Time, next step size, 1.0 if the last attempt was rejected, start and size of the
        last accepted step.
    counts : ndarray of int64, shape (systems, 5)
        Accepted steps, rejected steps, velocity evaluations, status (0 running,
        1 max_steps exceeded, 2 step size below ``min_step``), outputs written by the last call.
    steps : ndarray, shape (systems, 2)
        Smallest and largest accepted step.
    dense : ndarray, shape (systems, 5, n, m)
        Dense output of the last accepted step: its start x_n and Q_1, …, Q_4.
    """

    kind: int
    weights: np.ndarray
    beta: float
    normalized: bool
    time: str
    """The time variable: "t", or "rescaled" (USA in s = e^β t, :data:`meanfield.models._attention_weights.TIMES`)."""
    rtol: float
    atol: float
    t_end: float
    max_steps: int
    min_step: float
    """The step floor (:func:`solvers.step_floor` of the run's times): a step proposed below it stops the system."""
    x: np.ndarray
    f: np.ndarray
    clock: np.ndarray
    counts: np.ndarray
    steps: np.ndarray
    dense: np.ndarray

    @property
    def factor(self) -> float:
        """The velocity's factor: 1 (SA, divided by D_i), e^β (USA in t) or 1 (USA in s = e^β t)
        (:func:`velocity_factor`)."""
        return velocity_factor(self.beta, self.normalized, self.time)


def start(kind: int, x0: np.ndarray, weights: np.ndarray, beta: float, normalized: bool, t0: float,
          t_end: float, rtol: float, atol: float, max_steps: int, min_step: float, *, time: str = "t"
          ) -> EnsembleState:
    """Initial state of a compiled ensemble: velocity and first step of every system.

    ``x0``: (systems, n) angles (``kind=CIRCLE``) or (systems, n, d) unit vectors
    (``kind=SPHERE``); ``weights`` (systems, n); ``t_end``: the final time (the last
    step of every system lands on it). USA (``normalized=False``) multiplies by e^β in the time t
    (``time="t"``), by 1 in s = e^β t (``time="rescaled"``).
    """
    x = np.array(x0[..., None] if kind == CIRCLE else x0, dtype=float, order="C")
    n_sys = x.shape[0]
    clock = np.zeros((n_sys, 5))
    clock[:, 0] = t0
    counts = np.zeros((n_sys, 5), dtype=np.int64)
    steps = np.full((n_sys, 2), np.inf)
    steps[:, 1] = 0.0
    state = EnsembleState(kind, np.ascontiguousarray(weights, dtype=float), float(beta), bool(normalized), time,
                          float(rtol), float(atol), float(t_end), int(max_steps), float(min_step), x, np.empty_like(x),
                          clock, counts,
                          steps, np.zeros((n_sys, 5, *x.shape[1:])))
    _start_batch(kind, x, state.weights, state.beta, state.normalized, state.factor, state.rtol, state.atol, state.f,
                 clock, counts)
    return state


def advance(state: EnsembleState, t_out: np.ndarray) -> np.ndarray:
    """Advance every system of ``state`` through the output times ``t_out`` (increasing, after the
    systems' current times, ≤ t_end); returns the states there, shape (systems, len(t_out), n, m).

    Systems that stop (``state.counts[:, 3]`` ≠ 0) leave NaN at the outputs they did not reach.
    """
    t_out = np.ascontiguousarray(t_out, dtype=float)
    out = np.empty((state.x.shape[0], t_out.size, *state.x.shape[1:]))
    state.counts[:, 4] = 0
    _advance_batch(state.kind, state.x, state.f, state.weights, state.beta, state.normalized, state.factor,
                   state.rtol, state.atol, t_out, state.t_end, state.max_steps, state.min_step, state.clock,
                   state.counts, state.steps, state.dense, out)
    for s in np.nonzero(state.counts[:, 4] < t_out.size)[0]:
        out[s, state.counts[s, 4]:] = np.nan
    return out


#: the arrays of an :class:`EnsembleState` that :func:`snapshot` saves and :func:`restore` takes back
STATE_ARRAYS = ("x", "f", "clock", "counts", "steps", "dense")


def snapshot(state: EnsembleState) -> dict[str, np.ndarray]:
    """Copies of the per-system arrays of ``state`` (:data:`STATE_ARRAYS`)."""
    return {name: getattr(state, name).copy() for name in STATE_ARRAYS}


def restore(kind: int, weights: np.ndarray, beta: float, normalized: bool, t_end: float, rtol: float, atol: float,
            max_steps: int, min_step: float, saved: dict[str, np.ndarray], *, time: str = "t") -> EnsembleState:
    """The :class:`EnsembleState` whose arrays :func:`snapshot` saved in ``saved`` (settings as :func:`start`),
    every system running again (a system stopped by ``max_steps`` goes on under the new settings)."""
    arrays = {name: np.array(saved[name], dtype=np.int64 if name == "counts" else float, order="C")
              for name in STATE_ARRAYS}
    arrays["counts"][:, 3] = RUNNING
    return EnsembleState(kind, np.ascontiguousarray(weights, dtype=float), float(beta), bool(normalized), time,
                         float(rtol), float(atol), float(t_end), int(max_steps), float(min_step), **arrays)


class EnsembleIntegrator:
    """The compiled ensemble as an integrator of the run driver (:class:`meanfield.runs.Integrator`).

    ``run(x0, times, observers, resume)`` integrates every system from ``times[0]``; the observers are
    called for each output time in order with the states of all systems (angles (systems, n) or points
    (systems, n, d)). With ``live`` the kernel runs output interval by output interval (so that a progress
    bar or a checkpoint sees each output as it is reached), else in one call; the trajectories are the
    same bit for bit. ``max_steps`` bounds the steps (accepted + rejected) of each system; the run stops
    at the first output time some system did not reach. The counts of the result are sums over systems
    in this run (``dt_min``, ``dt_max`` over all systems); ``snapshot()`` gives every system's state at the
    latest output (:func:`snapshot`), from which ``run(..., resume=snapshot)`` goes on bit for bit. ``time``:
    the time variable of the velocity ("rescaled": USA in s = e^β t, :func:`start`).
    """

    def __init__(self, kind: int, weights: np.ndarray, beta: float, normalized: bool, *, rtol: float,
                 atol: float, max_steps: int, live: bool, time: str = "t") -> None:
        self.kind, self.weights, self.beta, self.normalized, self.time = kind, weights, beta, normalized, time
        self.rtol, self.atol, self.max_steps, self.live = rtol, atol, max_steps, live
        self.state: EnsembleState | None = None
        self._base = np.zeros(3, dtype=np.int64)

    def run(self, x0: np.ndarray, times: np.ndarray, observers: list[Any], resume: dict[str, np.ndarray] | None
            ) -> Evolution:
        x0 = np.asarray(x0, dtype=float)
        kind = self.kind
        out = Evolution(t=times, y=np.zeros(0))
        min_step = step_floor(times[0], times[-1])
        if resume is None:
            state = start(kind, x0, self.weights, self.beta, self.normalized, float(times[0]), float(times[-1]),
                          self.rtol, self.atol, self.max_steps, min_step, time=self.time)
        else:
            state = restore(kind, self.weights, self.beta, self.normalized, float(times[-1]), self.rtol, self.atol,
                            self.max_steps, min_step, resume, time=self.time)
        self.state = state
        self._base = state.counts[:, :3].sum(axis=0)
        for observer in observers:
            observer(0, float(times[0]), x0)
        chunks = [times[i:i + 1] for i in range(1, times.size)] if self.live else [times[1:]]
        index = 1
        for chunk in chunks:
            if chunk.size == 0:
                break
            states = advance(state, chunk)
            complete = True
            for k in range(chunk.size):
                if not np.all(np.isfinite(states[:, k])):
                    complete = False
                    break
                reached = states[:, k, :, 0] if kind == CIRCLE else states[:, k]
                for observer in observers:
                    observer(index, float(times[index]), reached)
                index += 1
            if not complete:
                break
        out.t = times[:index]
        stopped = np.nonzero(state.counts[:, 3] != RUNNING)[0]
        if index < times.size:
            first = int(stopped[0]) if stopped.size else 0
            reason = STATUS_MESSAGES.get(int(state.counts[first, 3]), "non-finite state")
            limit = f" = {self.max_steps} per system" if state.counts[first, 3] == MAX_STEPS else ""
            out.success = False
            out.message = (f"{max(stopped.size, 1)} of {x0.shape[0]} systems stopped: {reason}{limit} "
                           f"(system {first} at t = {state.clock[first, 0]:.6g})")
        out.n_steps, out.n_rejected, out.nfev = (int(c) for c in state.counts[:, :3].sum(axis=0) - self._base)
        accepted = state.counts[:, 0] > 0
        if np.any(accepted):
            out.dt_min, out.dt_max = float(state.steps[accepted, 0].min()), float(state.steps[accepted, 1].max())
        return out

    def snapshot(self) -> dict[str, np.ndarray]:
        """Every system's state (:func:`snapshot`), its counts in this run and its step range."""
        saved = snapshot(self.state)
        counts = self.state.counts[:, :3].sum(axis=0) - self._base
        accepted = self.state.counts[:, 0] > 0
        steps = self.state.steps[accepted]
        return {**saved, "n_steps": counts[0], "n_rejected": counts[1], "nfev": counts[2],
                "dt_min": np.float64(steps[:, 0].min() if steps.size else np.inf),
                "dt_max": np.float64(steps[:, 1].max() if steps.size else 0.0)}
