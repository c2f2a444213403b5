r"""Kuramoto bifurcation diagrams: the long-time order parameter r∞ over the coupling K.

One run (:func:`kuramoto_run`) integrates θ̇ = ω + K Σ_j w_j sin(θ_j - θ - α) (+ √(2σ) dW)
from near-incoherence, by particles (:func:`meanfield.simulate`), by the
mean-field PDE (:func:`meanfield.solve`) or on the Ott–Antonsen manifold
(:func:`meanfield.ott_antonsen`), and reports r(t) = |∫ e^{iθ} dμ_t| and
its time average r∞ over the final window [t_final - average_window, t_final].
:func:`kuramoto_bifurcation` sweeps it over K (and seeds, for particles) through
:func:`meanfield.studies.sweep` — the Ott–Antonsen engine as one batch of couplings, without a sweep — and
adds the theory (:func:`kuramoto_theory`) where it applies.

Frequency laws (centre ω_0, width w): "lorentzian" g(ω) = (w/π)/((ω-ω_0)² + w²)
(half-width w); "gaussian" g = N(ω_0, w²); "bimodal" ½[L_w(ω - ω_0 - s) + L_w(ω - ω_0 + s)]
(Lorentzians of half-width w at separation s from the centre, :func:`meanfield.bimodal_lorentzian`); or any law
object (:mod:`meanfield.models._frequency_laws`).

Ott–Antonsen engine (σ = 0, a law with poles): the start is the wrapped Cauchy density with the first moment
of the PDE's start, z₀ = 0.05 at every frequency; tolerances :data:`REDUCED_RTOL`, :data:`REDUCED_ATOL`
(the engine costs milliseconds, so ``rtol`` of the particles does not apply).

Particles: n oscillators, frequencies at the midpoint quantiles F⁻¹((i+1/2)/n),
initial phases iid uniform from ``SeedSequence([seed])``; without noise the
exact-drift integrator (method "moebius", cost independent of max|ω_i|), with
noise geodesic Euler–Maruyama with step ``dt`` (whose Euler step of the constant
drift ω_i is exact, so fast oscillators cost nothing either).

PDE: the density on (θ, ω) with ω discretised by the model's quadrature
(Gauss–Hermite for the Gaussian, midpoint quantiles otherwise), initial density
(1 + 0.1 cos θ)/2π for every ω; "finite_volume" without noise (above K_c the
locked oscillators' densities become Diracs, which no spectral grid resolves),
"spectral" with noise. A discrete set of frequencies rephases: below K_c the
linear dynamics of the first Fourier mode is Σ_m w_m e^{iω_m t}(…), which comes
back near t ≈ T_rec = 2π/Δω (Δω: the spacing of the central nodes) although the
continuum decays. The run reports T_rec, and with ``frequency_nodes=None``
takes the smallest number of nodes (up to 128) with T_rec ≥ 2 t_final (σ = 0)
or σ T_rec ≥ 5 (noise damps mode 1 at rate σ, so a revival keeps < e^{-5} of
its amplitude): averages up to t_final are then free of rephasing. Midpoint
quantiles of a Lorentzian of half-width γ give T_rec ≈ 2m/γ; Gauss–Hermite
nodes only T_rec ≈ 2√m/s, so a Gaussian law without noise rephases by
t ≈ 23/s even with 128 nodes (particles have no such limit). When no such number exists the run says so in its attrs
(``recurrence_free = 0``) and the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.stats
import xarray as xr

from solvers._batched_dormand_prince import BATCH_STATUS, FINISHED

from ...domains._circle import Circle
from ...measures._measure import density
from ...models._frequency_laws import LorentzianMixture, bimodal_lorentzian, describe_law, read_frequency_law
from ...models._kuramoto import Kuramoto
from ...particles import simulate
from ...pde import METHOD_AUTO, choose_method, solve
from ...reduced import ENGINE as REDUCED_ENGINE
from ...reduced import evolve_amplitudes, ott_antonsen, reduced_form
from ...pde._recurrence import recurrence_free as _recurrence_free
from ...pde._recurrence import recurrence_time
from ..._validate import as_real_array, check_nonnegative, check_positive, check_positive_int, check_rtol
from ..._version import __version__
from ._theory import kuramoto_critical_coupling, kuramoto_theory
from ..sweeps._sweep import sweep

__all__ = ["LAWS", "frequency_law", "kuramoto_bifurcation", "kuramoto_run", "recurrence_time"]

logger = logging.getLogger(__name__)

LAWS = {"lorentzian": scipy.stats.cauchy, "gaussian": scipy.stats.norm, "bimodal": bimodal_lorentzian}
ENGINES = ("particles", "pde", REDUCED_ENGINE)
#: default tolerance of the particles' step control on Z: r∞ moves by ≤ 1e-5 against rtol 1e-4 (measured at
#: n = 5000, K = 1, 2, 3, γ = 0.5), 10³ below its finite-n fluctuation n^{-1/2}, at 2.5× fewer steps
PARTICLE_RTOL = 1e-3
#: default tolerance of the spectral PDE (with noise)
PDE_RTOL = 1e-4
#: tolerances of the Ott–Antonsen engine in the study (its cost is negligible)
REDUCED_RTOL, REDUCED_ATOL = 1e-10, 1e-12
#: numbers of PDE frequency nodes tried by frequency_nodes=None, smallest first
NODE_LADDER = (32, 48, 64, 96, 128)
#: relative amplitude of the initial cos θ perturbation of the PDE's uniform density
PDE_PERTURBATION = 0.1
#: the Ott–Antonsen engine's start z₀: the first moment of the PDE's start (1 + 0.1 cos θ)/2π
REDUCED_START = PDE_PERTURBATION / 2


def frequency_law(law: Any, width: float = 1.0, centre: float = 0.0, separation: float = 0.0):
    r"""The frequency law g of the oscillators' natural frequencies ω, from a name and its parameters.

    The named laws, with centre ω_0 = ``centre``, scale w = ``width`` and separation s = ``separation``
    (module docstring):

    .. math::

        g_{\mathrm{lorentzian}}(\omega) = \frac{w/\pi}{(\omega - \omega_0)^2 + w^2}, \qquad
        g_{\mathrm{gaussian}}(\omega) = \frac{e^{-(\omega - \omega_0)^2/(2w^2)}}{\sqrt{2\pi}\, w},

    .. math::

        g_{\mathrm{bimodal}}(\omega) = \tfrac12\big[L_w(\omega - \omega_0 - s) + L_w(\omega - \omega_0 + s)\big],
        \qquad L_w(u) = \frac{w/\pi}{u^2 + w^2}

    (the Lorentzian is ``scipy.stats.cauchy(ω_0, w)``, the Gaussian ``scipy.stats.norm(ω_0, w)``, the bimodal
    law the two-peak :class:`meanfield.LorentzianMixture` of :func:`meanfield.bimodal_lorentzian`). A law
    object is returned as it is, after checking that it is one.

    Parameters
    ----------
    law : {"lorentzian", "gaussian", "bimodal"} or law object
        A name of :data:`LAWS`, or a law (a frozen continuous ``scipy.stats`` distribution, a law of
        :mod:`meanfield.models._frequency_laws`, or a number: identical frequencies), returned after
        :func:`meanfield.models._frequency_laws.read_frequency_law` checked it; ``width``, ``centre`` and
        ``separation`` are then ignored.
    width : float, default 1.0
        w > 0: the half-width at half-maximum of the Lorentzian (and of each bimodal peak), the standard
        deviation of the Gaussian.
    centre : float, default 0.0
        ω_0, finite: the median of the Lorentzian and of the Gaussian, the midpoint of the bimodal peaks.
    separation : float, default 0.0
        s ≥ 0: the distance of each bimodal peak from ``centre`` (peaks at ω_0 ± s); used by "bimodal" only.

    Returns
    -------
    scipy.stats frozen distribution or LorentzianMixture or law object
        ``scipy.stats.cauchy(centre, width)``, ``scipy.stats.norm(centre, width)``,
        ``LorentzianMixture([centre - separation, centre + separation], width)``, or ``law`` itself.

    Raises
    ------
    ValueError
        An unknown name, ``width`` ≤ 0, a non-finite ``centre``, a negative ``separation`` (bimodal), or an
        invalid law object (TypeError for an object that is no law).

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies import frequency_law
    >>> g = frequency_law("lorentzian", width=0.5)
    >>> # g(0) = 1/(πγ), so Kuramoto's critical coupling K_c = 2/(π g(0)) is 2γ
    >>> round(float(g.pdf(0.0)) * np.pi * 0.5, 12), round(2 / (np.pi * float(g.pdf(0.0))), 12)
    (1.0, 1.0)
    >>> round(float(frequency_law("gaussian", width=2.0, centre=1.0).std()), 12)
    2.0
    >>> b = frequency_law("bimodal", width=0.5, separation=1.0)
    >>> # peak at ω = 1: (1/2)(1/(πw)) + (1/2)(w/π)/(2² + w²)
    >>> bool(np.isclose(float(b.pdf(1.0)), 0.5 / (np.pi * 0.5) + 0.5 * (0.5 / np.pi) / (4 + 0.25)))
    True
    """
    if not isinstance(law, str):
        return read_frequency_law(law)
    if law not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)} or a law object, got {law!r}")
    width = check_positive("width", width)
    if not np.isfinite(centre):
        raise ValueError(f"centre must be finite, got {centre!r}")
    if law == "bimodal":
        separation = check_nonnegative("separation", separation)
        return LorentzianMixture([centre - separation, centre + separation], width)
    return LAWS[law](float(centre), width)


def _check_window(t_final: float, average_window: float) -> None:
    check_positive("t_final", t_final)
    if not (np.isfinite(average_window) and 0 < average_window <= t_final):
        raise ValueError(f"average_window must lie in (0, t_final = {t_final}], got {average_window!r}")


def _law_of(frequencies: Any, width: float | None, separation: float | None) -> tuple[Any, float, float, float]:
    """(law name or object, width, centre, separation) from a name (+ width, separation), a frozen cauchy/norm
    law (its name and scale) or another law object (itself; width, centre, separation NaN)."""
    if isinstance(frequencies, str):
        if frequencies not in LAWS:
            raise ValueError(f"frequencies must be one of {sorted(LAWS)} or a law object, got {frequencies!r}")
        if separation is not None and frequencies != "bimodal":
            raise ValueError(f"separation belongs to the 'bimodal' law, not {frequencies!r}")
        scale = 1.0 if width is None else check_positive("width", width)
        gap = check_nonnegative("separation", 0.0 if separation is None else separation)
        return frequencies, scale, 0.0, gap
    if width is not None or separation is not None:
        raise ValueError("width and separation are given by the law itself; pass them only with a law name")
    dist = getattr(frequencies, "dist", None)
    for name in ("lorentzian", "gaussian"):
        if isinstance(dist, type(LAWS[name])):
            centre = float(frequencies.median())
            scale = float(frequencies.std()) if name == "gaussian" else float(frequencies.ppf(0.75)) - centre
            return name, scale, centre, 0.0
    return read_frequency_law(frequencies), np.nan, np.nan, np.nan


def _law_attrs(law: Any, width: float, centre: float, separation: float) -> dict[str, Any]:
    """The law of a run for its attrs: a name with its width, centre (and separation), or a law by its parameters."""
    if not isinstance(law, str):
        return {"law": describe_law(law)}
    attrs = {"law": law, "width": float(width), "centre": float(centre)}
    if law == "bimodal":
        attrs["separation"] = float(separation)
    return attrs


def _pde_nodes(model, frequency_nodes: int | None, t_final: float, noise: float) -> tuple[int, float]:
    if frequency_nodes is not None:
        return int(frequency_nodes), recurrence_time(model.frequency_quadrature(int(frequency_nodes))[0])
    for m in NODE_LADDER:
        t_rec = recurrence_time(model.frequency_quadrature(m)[0])
        if _recurrence_free(t_rec, t_final, noise):
            return m, t_rec
    logger.warning("no frequency quadrature up to %d nodes has recurrence time T_rec >= 2 t_final = %g "
                   "(or noise * T_rec >= 5); using %d nodes with T_rec = %g", NODE_LADDER[-1], 2 * t_final,
                   NODE_LADDER[-1], t_rec)
    return NODE_LADDER[-1], t_rec


def kuramoto_run(
    coupling: float,
    seed: int | None = None,
    *,
    law: Any = "lorentzian",
    width: float = 1.0,
    centre: float = 0.0,
    separation: float = 0.0,
    phase_lag: float = 0.0,
    noise: float = 0.0,
    engine: str = "particles",
    n: int = 2000,
    t_final: float = 60.0,
    average_window: float = 20.0,
    frequency_nodes: int | None = None,
    grid: int = 128,
    dt: float = 0.01,
    rtol: float | None = None,
    graph: Any = None,
) -> xr.Dataset:
    r"""One Kuramoto run: r(t) on t = 0, 0.5, …, t_final and r∞ = its mean over the final window.

    Parameters
    ----------
    coupling : float
        K ≥ 0.
    seed : int, optional
        Seed of the particles' initial phases (``SeedSequence([seed])``); required for
        particles, ignored by the PDE.
    law, width, centre, separation : str or law object, float, float, float
        Frequency law (:func:`frequency_law`: a name of :data:`LAWS` with its scale, centre and, for "bimodal",
        the separation of its peaks from the centre; or a law object, whose parameters are its own); defaults
        "lorentzian", 1, 0, 0.
    phase_lag : float, default 0.0
        α of the coupling sin(θ_j - θ - α).
    noise : float, default 0.0
        σ ≥ 0 (dθ = … + √(2σ) dW).
    engine : {"particles", "pde", "ott-antonsen"}, default "particles"
        Integrate the oscillators (:func:`meanfield.simulate`), the mean-field PDE (:func:`meanfield.solve`) or
        the Ott–Antonsen amplitudes (:func:`meanfield.ott_antonsen`; σ = 0 and a law with poles).
    n : int, default 2000
        Number of oscillators (particles).
    t_final, average_window : float, default 60.0 and 20.0
        Final time and the length of the final averaging window (0 < window ≤ t_final).
    frequency_nodes : int, optional
        PDE quadrature nodes in ω (None: chosen against recurrence, module docstring).
    grid : int, default 128
        PDE nodes in θ.
    dt : float, default 0.01
        Euler–Maruyama step of particles with noise.
    rtol : float, optional
        Tolerance of the adaptive integrators (particles without noise: on Z, on a graph on every local field);
        None: :data:`PARTICLE_RTOL` for particles, :data:`PDE_RTOL` for the spectral PDE.
    graph : Graph, optional
        Particles coupled on this graph of n nodes (:class:`meanfield.Graph`; its attrs join the result's);
        engine "particles" only.

    Returns
    -------
    xarray.Dataset
        ``order_parameter`` (time), ``r_inf`` and ``r_spread`` (the mean and
        standard deviation of r over the window), ``n_steps`` and ``success``;
        attrs with every setting (``engine`` among them), the integrator or scheme and (PDE)
        ``theta_nodes``, ``frequency_nodes``, ``recurrence_time``, ``recurrence_free``.

    Raises
    ------
    ValueError
        An unknown engine or law, a bad window, no ``seed`` for particles, or a model outside the
        Ott–Antonsen reduction for that engine.

    Examples
    --------
    >>> import numpy as np
    >>> from meanfield.studies import kuramoto_run

    Above K_c = 2γ the Lorentzian law (half-width γ = 0.5) settles at r∞ = √(1 - 2γ/K) = √(1/2) at K = 2;
    on the Ott–Antonsen manifold that is reached to the integrator's tolerance:

    >>> ds = kuramoto_run(2.0, engine="ott-antonsen", width=0.5, t_final=40, average_window=10)
    >>> round(float(ds.r_inf), 8), round(float(np.sqrt(1 - 2 * 0.5 / 2.0)), 8)
    (0.70710678, 0.70710678)
    >>> ds.order_parameter.sizes["time"]  # t = 0, 0.5, …, 40
    81

    200 oscillators at the midpoint quantiles of the same law agree up to their finite-n fluctuation:

    >>> ds = kuramoto_run(2.0, seed=0, width=0.5, n=200, t_final=20, average_window=5)
    >>> bool(abs(float(ds.r_inf) - np.sqrt(0.5)) < 0.05), ds.attrs["engine"]
    (True, 'particles')
    """
    engine = _engine(engine)
    _check_window(t_final, average_window)
    if graph is not None and engine != "particles":
        raise ValueError(f"graph couples particles: it needs engine='particles', got engine={engine!r} (the PDE and "
                         f"the Ott–Antonsen amplitudes are all-to-all)")
    model = Kuramoto(coupling=coupling, frequencies=frequency_law(law, width, centre, separation), noise=noise,
                     phase_lag=phase_lag, graph=graph)
    times = np.linspace(0.0, t_final, int(round(2 * t_final)) + 1)
    attrs: dict[str, Any] = {**_law_attrs(law, width, centre, separation), "phase_lag": float(phase_lag),
                             "noise": float(noise), "engine": engine, "t_final": float(t_final),
                             "average_window": float(average_window)}
    if engine == REDUCED_ENGINE:
        ds = ott_antonsen(model, times, REDUCED_START, rtol=REDUCED_RTOL, atol=REDUCED_ATOL)
        attrs.update(rtol=REDUCED_RTOL, atol=REDUCED_ATOL, initial_amplitude=REDUCED_START)
    elif engine == "particles":
        if seed is None:
            raise ValueError("seed is required for engine='particles' (initial phases)")
        n = check_positive_int("n", n, 2)
        theta0 = np.random.default_rng(np.random.SeedSequence([int(seed)])).uniform(0, 2 * np.pi, int(n))
        rtol = PARTICLE_RTOL if rtol is None else rtol
        options = {"dt": dt, "seed": int(seed)} if noise > 0 else {"rtol": rtol, "atol": rtol * 1e-3}
        ds = simulate(model, theta0, times, **options)
        attrs.update(n=int(n), integrator=ds.attrs["integrator"], dt=float(dt) if noise > 0 else -1.0,
                     rtol=float(rtol), **({} if model.graph is None else model.graph.attrs))
    else:
        nodes, t_rec = _pde_nodes(model, frequency_nodes, t_final, noise)
        domain = Circle(int(grid))
        rho0 = density(domain, lambda th: 1 + PDE_PERTURBATION * np.cos(th))
        # finite volume without noise, else spectral
        scheme = choose_method(model, domain, METHOD_AUTO, model.grid_velocity(domain, nodes))[0].name
        rtol = PDE_RTOL if rtol is None else rtol
        options = {"rtol": rtol, "atol": rtol * 1e-3} if scheme == "spectral" else {}
        ds = solve(model, rho0, times, method=scheme, frequency_nodes=nodes, **options)
        attrs.update(scheme=scheme, theta_nodes=int(grid), frequency_nodes=nodes, recurrence_time=t_rec,
                     recurrence_free=int(_recurrence_free(t_rec, t_final, noise)), **options)
    resolution = {}
    if "resolution_tail" in ds.attrs:  # finite volume: its own estimate of the grid's resolution
        resolution = {
            "resolved": ((), int(ds.attrs["resolved"]), {"long_name": "1 if the finite-volume grid resolved the run"}),
            "resolution_tail": ((), float(ds.attrs["resolution_tail"]),
                                {"long_name": "largest spectral tail of the density beyond N/3 (over frequency nodes)"}),
        }
    return _run_dataset(coupling, times, ds["order_parameter"].values, int(ds.attrs["n_steps"]),
                        int(ds.attrs.get("success", 1)), ds.attrs.get("message", ""), attrs, resolution)


def _run_dataset(coupling: float, times: np.ndarray, r: np.ndarray, n_steps: int, success: int, message: str,
                 attrs: dict[str, Any], extra: dict[str, Any] | None = None) -> xr.Dataset:
    """A run's Dataset from r at the first ``r.size`` output ``times``: r(t) (NaN after a stop), r∞ and its
    spread over the final window (NaN for a run that stopped before t_final), the step count and success."""
    t_final, window = attrs["t_final"], attrs["average_window"]
    reached = times[: r.size]
    late = r[reached >= t_final - window - 1e-9]
    if late.size == 0 or reached[-1] < t_final:
        logger.warning("run at K = %g stopped at t = %g before t_final = %g: %s", coupling, reached[-1], t_final,
                       message)
        late = np.array([np.nan])
    r_full = np.full(times.size, np.nan)
    r_full[: r.size] = r
    return xr.Dataset(
        {
            **(extra or {}),
            "order_parameter": ("time", r_full, {"long_name": "r(t) = |∫ e^{iθ} dμ_t|"}),
            "r_inf": ((), float(np.mean(late)), {"long_name": "mean of r over the final window"}),
            "r_spread": ((), float(np.std(late)), {"long_name": "standard deviation of r over the final window"}),
            "n_steps": ((), int(n_steps), {"long_name": "accepted time steps"}),
            "success": ((), int(success), {"long_name": "1 if the run reached t_final"}),
        },
        coords={"time": ("time", times, {"long_name": "time", "units": "1"})},
        attrs=attrs,
    )


def kuramoto_bifurcation(
    couplings: Sequence[float] | np.ndarray,
    frequencies: Any = "lorentzian",
    *,
    width: float | None = None,
    separation: float | None = None,
    phase_lag: float = 0.0,
    noise: float = 0.0,
    engine: str = "particles",
    n: int = 2000,
    t_final: float = 60.0,
    average_window: float = 20.0,
    seeds: int | Sequence[int] | None = 4,
    frequency_nodes: int | None = None,
    grid: int = 128,
    dt: float = 0.01,
    rtol: float | None = None,
    scheduler: Any = None,
    n_workers: int | None = None,
    store: Any = None,
    resume: bool = False,
    progress: bool = False,
) -> xr.Dataset:
    r"""r∞(K) of the Kuramoto model over couplings K, by particles, the PDE or the Ott–Antonsen engine, with its
    theory.

    Each K (and seed, for particles) is one task of :func:`meanfield.studies.sweep`
    running :func:`kuramoto_run`; the Ott–Antonsen engine integrates every K in one batch
    (:func:`meanfield.reduced.evolve_amplitudes`), without a sweep.

    Parameters
    ----------
    couplings : array_like
        Couplings K ≥ 0 (the dimension ``coupling``).
    frequencies : {"lorentzian", "gaussian", "bimodal"} or a law object, default "lorentzian"
        Law g of ω (:func:`frequency_law`), centred at 0 when given by name; a frozen
        ``scipy.stats.cauchy`` or ``scipy.stats.norm`` law is recorded by its name, centre and scale, any other
        law object (a law of :mod:`meanfield.models._frequency_laws`) carries its own parameters.
    width : float, optional
        With a name only: the law's scale w > 0 (Lorentzian half-width γ, Gaussian standard deviation,
        half-width of each bimodal peak); None: 1.
    separation : float, optional
        With "bimodal" only: the distance ω₀ ≥ 0 of the law's peaks from 0 (peaks at ±ω₀); None: 0.
    phase_lag : float, default 0.0
        α of the coupling sin(θ_j - θ - α).
    noise : float, default 0.0
        σ ≥ 0 in dθ = (ω + K Σ_j w_j sin(θ_j - θ - α)) dt + √(2σ) dW.
    engine : {"particles", "pde", "ott-antonsen"}, default "particles"
        Oscillators, the mean-field PDE, or the amplitudes at the law's poles (:func:`kuramoto_run`).
    n, t_final, average_window : int, float, float
        Number of oscillators (default 2000), final time (default 60) and final averaging window (default 20):
        see :func:`kuramoto_run`.
    seeds : int or sequence of int, optional
        Particles: seeds of the initial phases (dimension ``seed``); an int m stands for the m seeds
        0, …, m-1 of :func:`meanfield.studies.sweep` (default 4); ignored by the PDE and Ott–Antonsen engines.
    frequency_nodes, grid, dt, rtol : int or None, int, float, float or None
        PDE nodes in ω (None: chosen against recurrence) and in θ (default 128), Euler–Maruyama step of noisy
        particles (default 0.01), tolerance (None: the engine's default): see :func:`kuramoto_run`.
    scheduler, n_workers, store, resume, progress
        Passed to :func:`meanfield.studies.sweep` (None: a local dask cluster;
        "serial": a plain loop).

    Returns
    -------
    xarray.Dataset
        ``order_parameter`` (coupling, [seed,] time), ``r_inf`` and ``r_spread``
        (coupling[, seed]); ``r_mean`` (coupling): r∞ averaged over seeds, with
        ``r_error`` its standard error over seeds (particles, ≥ 2 seeds; else the
        window's spread); ``r_theory`` (coupling) from :func:`kuramoto_theory` (NaN where
        it does not apply, e.g. a bimodal law: attr ``theory`` says why); attrs
        ``critical_coupling`` K_c (NaN likewise), the law, α, σ, ``engine`` and the sweep's record.

    Raises
    ------
    ValueError, TypeError
        Empty or negative couplings, an unknown law or engine, a bad width, noise or window.

    Examples
    --------
    >>> import numpy as np, meanfield as mf

    A Lorentzian law of half-width γ = 0.5: K_c = 2/(π g(0)) = 2γ = 1, and above it r∞ = √(1 - 2γ/K).
    The Ott–Antonsen engine integrates the three couplings in one batch:

    >>> ds = mf.kuramoto_bifurcation([0.5, 2.0, 4.0], "lorentzian", width=0.5, engine="ott-antonsen")
    >>> ds.attrs["critical_coupling"]
    1.0
    >>> np.round(ds.r_theory.values, 6).tolist()  # 0, √(1/2), √(3/4)
    [0.0, 0.707107, 0.866025]
    >>> bool(np.allclose(ds.r_mean, ds.r_theory, atol=1e-6))
    True

    500 oscillators, one seed, in a plain loop:

    >>> ds = mf.kuramoto_bifurcation([0.5, 2.0], "lorentzian", width=0.5, n=500, t_final=20,
    ...                              average_window=5, seeds=1, scheduler="serial")
    >>> ds.r_mean.dims, ds.order_parameter.dims
    (('coupling',), ('coupling', 'seed', 'time'))
    >>> bool(abs(float(ds.r_mean.sel(coupling=2.0)) - np.sqrt(0.5)) < 0.05)
    True
    """
    ks = as_real_array("couplings", couplings, finite=False)
    if ks.ndim != 1 or ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks < 0):
        raise ValueError(f"couplings must be a non-empty 1-D sequence of finite K >= 0, got {couplings!r}")
    law, scale, centre, gap = _law_of(frequencies, width, separation)
    law_object = frequency_law(law, scale, centre, gap)
    noise = check_nonnegative("noise", noise)
    engine = _engine(engine)
    n, grid = check_positive_int("n", n, 2), check_positive_int("grid", grid, 8)
    rtol, dt = None if rtol is None else check_rtol("rtol", rtol), check_positive("dt", dt)
    if frequency_nodes is not None:
        frequency_nodes = check_positive_int("frequency_nodes", frequency_nodes, 1)
    fixed = {"law": law, "width": scale, "centre": centre, "separation": gap, "phase_lag": float(phase_lag),
             "noise": noise, "engine": engine, "n": int(n), "t_final": float(t_final),
             "average_window": float(average_window), "frequency_nodes": frequency_nodes, "grid": int(grid),
             "dt": float(dt), "rtol": rtol}
    _check_window(t_final, average_window)  # fail before any task runs
    if engine == REDUCED_ENGINE:
        ds = _reduced_diagram(ks, Kuramoto(frequencies=law_object, noise=noise, phase_lag=phase_lag), fixed)
    else:
        ds = sweep(kuramoto_run, {"coupling": ks}, seeds=seeds if engine == "particles" else None, fixed=fixed,
                   store=store, resume=resume, scheduler=scheduler, n_workers=n_workers, progress=progress)
    try:
        theory = kuramoto_theory(ks, law_object, noise, phase_lag)
        critical, theory_note = kuramoto_critical_coupling(law_object, noise, phase_lag), "kuramoto_theory"
    except ValueError as refused:
        theory, critical, theory_note = np.full(ks.shape, np.nan), np.nan, f"none: {refused}"
    if "seed" in ds.dims and ds.sizes["seed"] > 1:
        r_mean = ds["r_inf"].mean("seed")
        r_error = ds["r_inf"].std("seed", ddof=1) / np.sqrt(ds.sizes["seed"])
    else:
        r_mean = ds["r_inf"].mean("seed") if "seed" in ds.dims else ds["r_inf"]
        r_error = ds["r_spread"].mean("seed") if "seed" in ds.dims else ds["r_spread"]
    ds["r_mean"] = r_mean.assign_attrs(long_name="r∞ averaged over seeds")
    ds["r_error"] = r_error.assign_attrs(long_name="standard error of r∞ over seeds (one seed or PDE: "
                                                   "spread of r over the window)")
    ds["r_theory"] = ("coupling", theory, {"long_name": "stationary r from the self-consistency theory"})
    ds["coupling"].attrs.update(long_name="coupling K", units="1")
    ds.attrs.update(_law_attrs(law, scale, centre, gap))
    ds.attrs.update(phase_lag=float(phase_lag), noise=noise, engine=engine, critical_coupling=critical,
                    theory=theory_note, study="kuramoto_bifurcation", meanfield_version=__version__)
    return ds


def _reduced_diagram(ks: np.ndarray, model: Kuramoto, fixed: dict[str, Any]) -> xr.Dataset:
    """Every coupling of ``ks`` on the Ott–Antonsen manifold in one batch, as :func:`kuramoto_run` would give it
    per coupling (without the sweep's record: the batch is one call)."""
    start = time.perf_counter()
    t_final, window = fixed["t_final"], fixed["average_window"]
    times = np.linspace(0.0, t_final, int(round(2 * t_final)) + 1)
    forms = [reduced_form(Kuramoto(coupling=k, frequencies=model.frequencies, interaction=model.interaction,
                                   phase_lag=model.phase_lag)) for k in ks]
    a, nu, weights = np.array([f[0] for f in forms]), np.array([f[1] for f in forms]), forms[0][2]
    run = evolve_amplitudes(a, nu, weights, np.full(nu.shape, complex(REDUCED_START)), times,
                            rtol=REDUCED_RTOL, atol=REDUCED_ATOL)
    r = np.abs(run.order_parameter(weights))
    attrs = {**_law_attrs(fixed["law"], fixed["width"], fixed["centre"], fixed["separation"]),
             "phase_lag": fixed["phase_lag"], "noise": fixed["noise"], "engine": REDUCED_ENGINE,
             "t_final": t_final, "average_window": window, "rtol": REDUCED_RTOL, "atol": REDUCED_ATOL,
             "initial_amplitude": REDUCED_START}
    runs = [_run_dataset(k, times, r[j][np.isfinite(r[j])], run.n_steps[j], int(run.status[j] == FINISHED),
                         BATCH_STATUS[run.status[j]], attrs) for j, k in enumerate(ks)]
    ds = xr.concat(runs, dim=xr.DataArray(ks, dims="coupling", name="coupling"))
    ds.attrs["wall_time"] = time.perf_counter() - start
    return ds


def _engine(engine: str) -> str:
    """``engine``, checked to be one of :data:`ENGINES`."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    return engine
