r"""Compiled steps of :class:`~solvers.CircleSpectral`: the transport, the Lawson step and the adaptive loop.

The formulas are those of :mod:`solvers._circle_spectral` (the transport N of a
:class:`~solvers.ConvolutionVelocity` with 3/2-rule products) and
:mod:`solvers._spectral` / :class:`~solvers.LawsonTables` (Dormand–Prince 5(4)
in Lawson form, the error norm, the step ladder, the resolution rule),
written once more as numba loops so that a stage costs its FFTs and a pass
over the coefficients, with no Python between stages or steps. The FFTs are
FFTW plans executed through ``fftw_execute`` (:mod:`solvers._fftw_compiled`).

Transport. For coefficients ρ̂_{m,k}, k = 0, …, K - 1 (K = N//2 + 1), the rows
synthesised on the M padded nodes are ρ_m (times the Nyquist split s_k) and
A ⋆ ρ̄, B ⋆ ρ̄ of the marginal ρ̄̂_k = Σ_m w_m ρ̂_{m,k} (their multipliers
``fields`` = a_k s_k, b_k s_k; with one species ρ̄ = ρ and ``fields`` starts with
the row s_k), then

    N_{m,k} = (-ik/M) FFT_M[ρ_m ((A ⋆ ρ̄)/(B ⋆ ρ̄) - ∂_θU)]_k      (Nyquist derivative zero).

Lawson tables. For a step h and the 14 distinct node differences d of the tableau,
F_d = e^{d h λ} (λ the linear rates, one row or one per species); stage i of the
step is Σ_{j<i} (h a_ij) F_{c_i - c_j} ⊙ K_j + F_{c_i} ⊙ y_n, summed in the order
j = 0, …, i - 1 as :func:`solvers._runge_kutta.lawson_step` does. A few tables are
kept, by step size, in the slots of the caller's arrays (least recently used
replaced), so that steps on the ladder 2^{j/8} reuse them.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ._runge_kutta import (
    _DIFFS,
    _ERROR_INDEX,
    _GROWTH_INDEX,
    _ROW_INDEX,
    A,
    E,
    N_STAGES,
    controller_decision,
    covers,
)

__all__ = ["RUNNING", "REACHED", "MAX_STEPS", "FLOOR", "CHECK", "advance", "analysis", "attempt",
           "preferred_step", "synthesis", "transport"]

DIFFS = np.ascontiguousarray(_DIFFS)
"""The distinct node differences d of the tableau (14), in the order of the table rows."""
ROW_INDEX = np.zeros((N_STAGES, N_STAGES), dtype=np.int64)
for _i in range(N_STAGES):
    ROW_INDEX[_i, :_i] = _ROW_INDEX[_i]
GROWTH_INDEX = np.ascontiguousarray(_GROWTH_INDEX, dtype=np.int64)
ERROR_INDEX = np.ascontiguousarray(_ERROR_INDEX, dtype=np.int64)
_A = np.ascontiguousarray(A)
_E = np.ascontiguousarray(E)

RUNNING, REACHED, MAX_STEPS, FLOOR, CHECK = 0, 1, 2, 3, 4
"""Why :func:`advance` returned: (still running), the stop reached, the attempt budget spent, a proposed
step below the floor, an accepted state whose spectral tail fails the resolution rule."""


@numba.njit(cache=True, error_model="numpy")
def synthesis(a, plan_coefficients, plan_values, plan, execute, out):
    """out = node values of the coefficients ``a`` (m, K) on the N nodes (backward plan of shape (m, N))."""
    plan_coefficients[...] = a
    execute(plan)
    out[...] = plan_values


@numba.njit(cache=True, error_model="numpy")
def analysis(y, plan_values, plan_coefficients, plan, execute, scale, out):
    """out = (1/N) FFT_N(y): the coefficients ρ̂_{m,k} of the node values ``y`` (m, N); ``scale`` = 1/N."""
    plan_values[...] = y
    execute(plan)
    for s in range(out.shape[0]):
        for k in range(out.shape[1]):
            out[s, k] = plan_coefficients[s, k] * scale


@numba.njit(cache=True, error_model="numpy")
def transport(a, out, single, weights, fields, split, flux_derivative, external, has_den, marginal,
              synth_in, synth_out, synth_plan, flux_in, flux_out, flux_plan, ratio, execute):
    """out = N(a), the dealiased transport of the coefficients ``a`` (m, K) (module docstring).

    ``synth_in``/``synth_out`` are the buffers of the backward plan ``synth_plan`` on M nodes (rows:
    the species unless ``single``, then the field rows), ``flux_in``/``flux_out`` those of the forward
    plan ``flux_plan``; ``marginal`` (K,) and ``ratio`` (M,) are scratch.
    """
    m, n_modes = a.shape
    n_rows = synth_in.shape[0]
    synth_in[:, n_modes:] = 0.0
    if single:
        for r in range(n_rows):
            for k in range(n_modes):
                synth_in[r, k] = fields[r, k] * a[0, k]
    else:
        for s in range(m):
            for k in range(n_modes):
                synth_in[s, k] = a[s, k] * split[k]
        for k in range(n_modes):
            total = 0j
            for s in range(m):
                total += weights[s] * a[s, k]
            marginal[k] = total
        for r in range(n_rows - m):
            for k in range(n_modes):
                synth_in[m + r, k] = fields[r, k] * marginal[k]
    execute(synth_plan)
    first_field = n_rows - (2 if has_den else 1)
    n_padded = synth_out.shape[1]
    for j in range(n_padded):
        value = synth_out[first_field, j]
        if has_den:
            value = value / synth_out[first_field + 1, j]
        if external.size:
            value = value + external[j]
        ratio[j] = value
    for s in range(m):
        for j in range(n_padded):
            flux_in[s, j] = synth_out[s, j] * ratio[j]
    execute(flux_plan)
    for s in range(m):
        for k in range(n_modes):
            out[s, k] = flux_out[s, k] * flux_derivative[k]


@numba.njit(cache=True, error_model="numpy")
def _table(h, rates, tables, keys, ages, clock):
    """Slot of ``tables`` holding F_d = e^{d h λ} for the step ``h`` (filled now when no slot has it)."""
    for slot in range(keys.size):
        if keys[slot] == h:
            ages[slot] = clock
            return slot
    slot = 0
    for other in range(1, keys.size):
        if ages[other] < ages[slot]:
            slot = other
    for d in range(DIFFS.size):
        for r in range(rates.shape[0]):
            for k in range(rates.shape[1]):
                tables[slot, d, r, k] = np.exp(DIFFS[d] * (h * rates[r, k]))
    keys[slot] = h
    ages[slot] = clock
    return slot


def _scale(weight, z):
    """weight · z for a complex z (a real weight multiplies both parts, as numpy's (w + 0i) z does)."""
    return weight * z


@overload(_scale)
def _scale_typed(weight, z):
    if isinstance(weight, types.Float):
        return lambda weight, z: complex(weight * z.real, weight * z.imag)
    return lambda weight, z: weight * z


@numba.njit(cache=True, error_model="numpy")
def _accumulate(row, weight, factors, linear, values):
    """row += (weight · factors) ⊙ values (weight ⊙ values when not ``linear``; for weight 1, factors ⊙ values)."""
    if not linear:
        if weight == 1.0:
            for k in range(row.size):
                row[k] += values[k]
        else:
            for k in range(row.size):
                row[k] += _scale(weight, values[k])
    elif weight == 1.0:
        for k in range(row.size):
            row[k] += _scale(factors[k], values[k])
    else:
        for k in range(row.size):
            row[k] += _scale(weight * factors[k], values[k])


@numba.njit(cache=True, error_model="numpy")
def _norms(v, parseval, skip_mean, out):
    """out[m] = (Σ_k |v_{m,k}|² p_k)^{1/2}, the RMS of the node values (Parseval); without k = 0 when
    ``skip_mean`` (the fluctuation about the mean)."""
    for s in range(v.shape[0]):
        total = 0.0
        for k in range(1 if skip_mean else 0, v.shape[1]):
            z = v[s, k]
            total += (z.real ** 2 + z.imag ** 2) * parseval[k]
        out[s] = np.sqrt(total)


@numba.njit(cache=True, error_model="numpy")
def lawson_attempt(a0, k0, h, linear, table, stages, y1, error, norms, rtol, atol, parseval, transport_args,
                   execute):
    """One Dormand–Prince 5(4) step h in Lawson form from ``a0`` (N(a0) = ``k0``); returns its error norm.

    ``table`` (14, r, K) holds F_d for h (unused when not ``linear``: all factors 1). On return ``y1``
    holds y_{n+1}, ``stages[6]`` = N(y_{n+1}); the norm is max_m ‖e_m‖ / (atol_m + rtol max(‖ρ_m^n - ρ̄_m‖,
    ‖ρ_m^{n+1} - ρ̄_m‖)) with atol_m = ``atol`` + 64 ε ‖ρ_m^n‖ (:mod:`solvers._spectral`), ∞ when it or
    y_{n+1} is not finite. ``norms`` is scratch of shape (4, m).
    """
    m, n_modes = a0.shape
    per_species = table.shape[1] > 1
    stages[0] = k0
    for i in range(1, N_STAGES):
        for s in range(m):
            r = s if per_species else 0
            row = y1[s]
            row[:] = 0.0
            for j in range(i):
                _accumulate(row, h * _A[i, j], table[ROW_INDEX[i, j], r], linear, stages[j, s])
            _accumulate(row, 1.0, table[GROWTH_INDEX[i], r], linear, a0[s])
        transport(y1, stages[i], *transport_args, execute)
    for s in range(m):
        r = s if per_species else 0
        row = error[s]
        row[:] = 0.0
        for j in range(N_STAGES):
            _accumulate(row, h * _E[j], table[ERROR_INDEX[j], r], linear, stages[j, s])
    _norms(error, parseval, False, norms[0])
    _norms(a0, parseval, True, norms[1])
    _norms(y1, parseval, True, norms[2])
    _norms(a0, parseval, False, norms[3])
    floor = 64 * np.finfo(np.float64).eps
    err = 0.0
    for s in range(m):
        scale = (atol + floor * norms[3, s]) + rtol * max(norms[1, s], norms[2, s])
        err = max(err, norms[0, s] / scale)
    if not np.isfinite(err):
        return np.inf
    for s in range(m):
        for k in range(n_modes):
            if not (np.isfinite(y1[s, k].real) and np.isfinite(y1[s, k].imag)):
                return np.inf
    return err


@numba.njit(cache=True, error_model="numpy")
def attempt(a, k0, h, linear, rates, tables, keys, ages, clock, stages, y1, error, norms, parseval, rtol, atol,
            transport_args, execute):
    """The error norm of one step h from ``a`` (:func:`lawson_attempt` with the table of h, made when no slot
    holds it, ``clock`` its age); ``y1`` and ``stages[6]`` as there."""
    slot = _table(h, rates, tables, keys, ages, clock) if linear else 0
    return lawson_attempt(a, k0, h, linear, tables[slot], stages, y1, error, norms, rtol, atol, parseval,
                          transport_args, execute)


@numba.njit(cache=True, error_model="numpy")
def preferred_step(h, linear):
    """h rounded down to the ladder 2^{j/8} when the linear part is not zero (:class:`LawsonTables`)."""
    if not linear or not (np.isfinite(h) and h > 0):
        return h
    return 2.0 ** (np.floor(8.0 * np.log2(h)) / 8.0)


@numba.njit(cache=True, error_model="numpy")
def _tail(a, cut):
    """max_m τ_m, τ_m = max_{k > cut} |ρ̂_{m,k}| / |ρ̂_{m,0}| (0 for a zero tail; :func:`solvers.degree_tail`)."""
    worst = 0.0
    for s in range(a.shape[0]):
        top = 0.0
        for k in range(cut + 1, a.shape[1]):
            top = max(top, abs(a[s, k]))
        if top != 0.0:
            worst = max(worst, top / abs(a[s, 0]))
    return worst


@numba.njit(cache=True, error_model="numpy")
def advance(state, counts, a, k0, stop, linear, rates, tables, keys, ages, stages, y1, error, norms, parseval,
            control, transport_args, execute):
    """Adaptive Lawson steps from ``state`` = [t, dt, rejected_last] towards ``stop``, the loop of
    :func:`solvers.evolve` for a landing stepper with the steps of :meth:`SpectralScheme._step_impl`.

    ``a``, ``k0`` hold the coefficients and N of the current state and are updated in place with every
    accepted step; ``control`` = [max_step, h_min, attempts left, rtol, atol, safety, min_factor,
    max_factor, exponent, tail tolerance, cut, clock]. ``counts`` = [steps, rejected, attempts, nfev,
    dt_min, dt_max, last accepted h] accumulates. Returns why it stopped (:data:`REACHED`, :data:`MAX_STEPS`,
    :data:`FLOOR`, :data:`CHECK`: an accepted state, not yet counted, whose spectral tail is above the
    tolerance).
    """
    t, dt, rejected_last = state[0], state[1], state[2] != 0.0
    max_step, h_min, budget = control[0], control[1], control[2]
    rtol, atol = control[3], control[4]
    safety, min_factor, max_factor, exponent = control[5], control[6], control[7], control[8]
    tolerance, cut = control[9], int(control[10])
    status = RUNNING
    while t < stop:
        if counts[2] >= budget:
            status = MAX_STEPS
            break
        remaining = stop - t
        last = covers(dt, remaining)
        h = remaining if last else dt
        counts[2] += 1
        control[11] += 1.0
        slot = _table(h, rates, tables, keys, ages, control[11]) if linear else 0
        err = lawson_attempt(a, k0, h, linear, tables[slot], stages, y1, error, norms, rtol, atol, parseval,
                             transport_args, execute)
        counts[3] += N_STAGES - 1
        accepted, factor = controller_decision(err, rejected_last, safety, min_factor, max_factor, exponent)
        rejected_last = not accepted
        if not accepted:
            counts[1] += 1
            dt = min(preferred_step(h * factor, linear), max_step)
            if dt < h_min:
                status = FLOOR
                break
            continue
        a[...] = y1
        k0[...] = stages[N_STAGES - 1]
        t = stop if last else t + h
        proposal = preferred_step(h * factor, linear)
        if not last or proposal < dt:
            dt = min(proposal, max_step)
        counts[6] = h
        if _tail(a, cut) > tolerance:
            status = CHECK
            break
        counts[0] += 1
        counts[4] = min(counts[4], h)
        counts[5] = max(counts[5], h)
        if not last and dt < h_min:
            status = FLOOR
            break
    state[0], state[1], state[2] = t, dt, 1.0 if rejected_last else 0.0
    return REACHED if status == RUNNING else status
