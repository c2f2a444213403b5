r"""The states the Ott–Antonsen dynamics settles in over a plane of parameters, from several starts.

For the symmetric bimodal Lorentzian (:func:`meanfield.bimodal_lorentzian`, peaks ±ω₀, half-width Δ) the
reduced equations ż_± = (±iω₀ - Δ) z_± + (K/2)(Z - Z̄ z_±²), Z = (z_+ + z_-)/2 (Martens et al., PRE 79, 026204
(2009)) have three kinds of attractors: incoherence (r = 0), partial synchrony (r constant) and standing waves
(r periodic). :func:`bimodal_states` integrates them for every (ω₀, K) of a grid and every start in one batch
(:func:`meanfield.reduced.evolve_amplitudes`) and classifies the end of each run by r over the final window:

* ``INCOHERENT``: max r < :data:`INCOHERENT_R`;
* ``STATIONARY``: max r - min r < :data:`STEADY_SPREAD`;
* ``OSCILLATING``: r rises and falls within the window (its increments change sign at least twice: a standing
  wave);
* ``UNSETTLED``: r still drifts one way over the window — the relaxation near a bifurcation, whose time
  diverges there, is longer than ``t_final``; such cells say so instead of being guessed.

Two starts that end in different states at the same (ω₀, K) show bistability, the region Martens et al. draw
between the saddle-node and the pitchfork (Δ/√3 < ω₀ < Δ) and between the saddle-node and the Hopf line
(ω₀ > Δ).
"""

from __future__ import annotations

from collections.abc import Sequence
import time

import numpy as np
import xarray as xr

from solvers._batched_dormand_prince import BATCH_STATUS, FINISHED

from ...models._frequency_laws import bimodal_lorentzian
from ...models._kuramoto import Kuramoto
from ...reduced import evolve_amplitudes, reduced_form
from ..._validate import check_positive
from ..._version import __version__

__all__ = ["INCOHERENT", "OSCILLATING", "STATIONARY", "UNSETTLED", "bimodal_states"]

UNSETTLED, INCOHERENT, STATIONARY, OSCILLATING = -2, 0, 1, 2
#: r below this over the final window: incoherence (the linear decay from the start has reached it)
INCOHERENT_R = 1e-4
#: max r - min r below this over the final window: a stationary state
STEADY_SPREAD = 1e-6


def bimodal_states(
    separations: Sequence[float] | np.ndarray,
    couplings: Sequence[float] | np.ndarray,
    width: float = 1.0,
    *,
    starts: Sequence[complex] = (0.01, 0.9),
    t_final: float = 400.0,
    window: float = 100.0,
    rtol: float = 1e-9,
    atol: float = 1e-12,
) -> xr.Dataset:
    r"""Attractors of the bimodal Lorentzian's reduced equations over (ω₀, K), from each start.

    Parameters
    ----------
    separations, couplings : array_like
        ω₀ ≥ 0 and K ≥ 0 (the dimensions ``separation`` and ``coupling``).
    width : float, default 1.0
        Δ > 0, the half-width of each peak.
    starts : sequence of complex, default (0.01, 0.9)
        z₀ of each start (the wrapped Cauchy density of first moment z₀ at every frequency; dimension
        ``start``, whose coordinate is |z₀|); default near incoherence and near synchrony.
    t_final, window : float, default 400.0 and 100.0
        Final time and the final window over which r is classified (0 < window < t_final; r is sampled at 201
        equally spaced times of the window).
    rtol, atol : float, default 1e-9 and 1e-12
        Tolerances of the batched Dormand–Prince 5(4).

    Returns
    -------
    xarray.Dataset
        ``state`` (separation, coupling, start): :data:`INCOHERENT`, :data:`STATIONARY`, :data:`OSCILLATING`,
        :data:`UNSETTLED` or -1 for a run that failed (attr ``flag_meanings``); ``r_min``, ``r_max``,
        ``r_mean`` over the window; ``bistable`` (separation, coupling): 1 where the starts end in different
        states or on different stationary values; attrs ``width``, the thresholds, ``wall_time``, ``success``
        (every run reached t_final).

    Raises
    ------
    ValueError
        Negative or non-finite parameters, a window outside (0, t_final), no start or |z₀| ≥ 1.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> ds = mf.bimodal_states([0.0, 2.0], [1.5, 5.0], width=1.0, t_final=60, window=20)
    >>> ds.attrs["success"], ds.state.dims
    (1, ('separation', 'coupling', 'start'))

    Below K = 2(Δ² + ω₀²)/Δ (ω₀ ≤ Δ) and 4Δ (ω₀ > Δ) incoherence (0) attracts both starts; above, at
    ω₀ = 0 a stationary state (1), at ω₀ = 2 > Δ standing waves (2), as the Hopf line K = 4Δ predicts:

    >>> ds.state.values.tolist()
    [[[0, 0], [1, 1]], [[0, 0], [2, 2]]]

    At ω₀ = 0 the law is the Lorentzian of half-width Δ, whose stationary r is √(1 - 2Δ/K):

    >>> r = ds.r_mean.sel(separation=0.0, coupling=5.0).values
    >>> np.round(r, 6).tolist(), round(float(np.sqrt(1 - 2 / 5.0)), 6)
    ([0.774597, 0.774597], 0.774597)
    """
    omegas, ks = _grid("separations", separations), _grid("couplings", couplings)
    width, t_final = check_positive("width", width), check_positive("t_final", t_final)
    if not 0 < window < t_final:
        raise ValueError(f"window must lie in (0, t_final = {t_final:g}), got {window!r}")
    z_starts = np.atleast_1d(np.asarray(starts, dtype=complex))
    if z_starts.ndim != 1 or z_starts.size == 0 or np.any(np.abs(z_starts) >= 1):
        raise ValueError(f"starts must be a non-empty sequence of complex z₀ with |z₀| < 1, got {starts!r}")
    clock = time.perf_counter()
    forms = [reduced_form(Kuramoto(coupling=k, frequencies=bimodal_lorentzian(w0, width)))
             for w0 in omegas for k in ks for _ in z_starts]
    a = np.array([f[0] for f in forms])
    nu = np.array([f[1] for f in forms])
    weights = forms[0][2]
    z0 = np.repeat(np.tile(z_starts, omegas.size * ks.size)[:, None], 2, axis=1)
    times = np.linspace(t_final - window, t_final, 201)
    run = evolve_amplitudes(a, nu, weights, z0, np.concatenate([[0.0], times]), rtol=rtol, atol=atol)
    r = np.abs(run.order_parameter(weights))[:, 1:]
    shape = (omegas.size, ks.size, z_starts.size)
    r_min, r_max, r_mean = (f(r, axis=1).reshape(shape) for f in (np.min, np.max, np.mean))
    turns = np.sum(np.diff(np.sign(np.diff(r, axis=1)), axis=1) != 0, axis=1).reshape(shape)
    state = np.where(r_max < INCOHERENT_R, INCOHERENT,
                     np.where(r_max - r_min < STEADY_SPREAD, STATIONARY,
                              np.where(turns >= 2, OSCILLATING, UNSETTLED)))
    finished = run.status == FINISHED
    state = np.where(finished.reshape(shape), state, -1)
    settled = np.all(state >= INCOHERENT, axis=2)
    different = settled & ((state.max(axis=2) != state.min(axis=2)) | (
        (state.min(axis=2) == STATIONARY) & (np.ptp(r_mean, axis=2) > 1e3 * STEADY_SPREAD)))
    dims = ("separation", "coupling", "start")
    return xr.Dataset(
        {
            "state": (dims, state.astype(np.int8), {
                "long_name": "attractor reached", "flag_values": np.array([-2, -1, 0, 1, 2], dtype=np.int8),
                "flag_meanings": "unsettled failed incoherent partially_synchronised standing_wave"}),
            "r_min": (dims, r_min, {"long_name": "min r over the final window"}),
            "r_max": (dims, r_max, {"long_name": "max r over the final window"}),
            "r_mean": (dims, r_mean, {"long_name": "mean r over the final window"}),
            "bistable": (dims[:2], different.astype(np.int8),
                         {"long_name": "1 where the starts settle in different states"}),
        },
        coords={"separation": ("separation", omegas, {"long_name": "peak separation ω₀", "units": "1"}),
                "coupling": ("coupling", ks, {"long_name": "coupling K", "units": "1"}),
                "start": ("start", np.abs(z_starts), {"long_name": "|z₀| of the start"})},
        attrs={"study": "bimodal_states", "width": width, "t_final": t_final, "window": window, "rtol": rtol,
               "atol": atol, "incoherent_r": INCOHERENT_R, "steady_spread": STEADY_SPREAD,
               "success": int(finished.all()),
               "message": "every run reached t_final" if finished.all() else
               f"{int((~finished).sum())} runs failed: {BATCH_STATUS[int(run.status[~finished][0])]}",
               "wall_time": time.perf_counter() - clock, "meanfield_version": __version__},
    )


def _grid(name: str, values: Sequence[float] | np.ndarray) -> np.ndarray:
    v = np.atleast_1d(np.asarray(values, dtype=float))
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)) or np.any(v < 0):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of finite values >= 0, got {values!r}")
    return v
