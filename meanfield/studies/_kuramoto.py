r"""Kuramoto bifurcation diagrams: the long-time order parameter r∞ over the coupling K.

One run (:func:`kuramoto_run`) integrates θ̇ = ω + K Σ_j w_j sin(θ_j - θ) (+ √(2σ) dW)
from near-incoherence, by particles (:func:`meanfield.simulate`) or by the
mean-field PDE (:func:`meanfield.solve`), and reports r(t) = |∫ e^{iθ} dμ_t| and
its time average r∞ over the final window [t_final - average_window, t_final].
:func:`kuramoto_bifurcation` sweeps it over K (and seeds, for particles) through
:func:`meanfield.studies.sweep` and adds the theory (:func:`kuramoto_theory`).

Frequency laws (centre ω_0, width w): "lorentzian" g(ω) = (w/π)/((ω-ω_0)² + w²)
(half-width w); "gaussian" g = N(ω_0, w²).

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
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.stats
import xarray as xr

from ..domains._circle import Circle
from ..measures._measure import density
from ..models._kuramoto import Kuramoto
from ..particles import simulate
from ..pde import METHOD_AUTO, choose_method, solve
from ..pde._recurrence import recurrence_free as _recurrence_free
from ..pde._recurrence import recurrence_time
from .._validate import check_nonnegative, check_positive, check_positive_int
from .._version import __version__
from ._kuramoto_theory import kuramoto_critical_coupling, kuramoto_theory
from ._sweep import sweep

__all__ = ["LAWS", "frequency_law", "kuramoto_bifurcation", "kuramoto_run", "recurrence_time"]

logger = logging.getLogger(__name__)

LAWS = {"lorentzian": scipy.stats.cauchy, "gaussian": scipy.stats.norm}
ENGINES = ("particles", "pde")
#: numbers of PDE frequency nodes tried by frequency_nodes=None, smallest first
NODE_LADDER = (32, 48, 64, 96, 128)
#: relative amplitude of the initial cos θ perturbation of the PDE's uniform density
PDE_PERTURBATION = 0.1


def frequency_law(law: str, width: float, centre: float = 0.0):
    """The frozen scipy law named ``law`` ("lorentzian": cauchy, "gaussian": norm) with scale ``width``."""
    if law not in LAWS:
        raise ValueError(f"law must be one of {sorted(LAWS)}, got {law!r}")
    width = check_positive("width", width)
    if not np.isfinite(centre):
        raise ValueError(f"centre must be finite, got {centre!r}")
    return LAWS[law](float(centre), width)


def _check_window(t_final: float, average_window: float) -> None:
    check_positive("t_final", t_final)
    if not (np.isfinite(average_window) and 0 < average_window <= t_final):
        raise ValueError(f"average_window must lie in (0, t_final = {t_final}], got {average_window!r}")


def _law_of(frequencies: Any, width: float | None) -> tuple[str, float, float]:
    """(law name, width, centre) from a name (+ width) or a frozen cauchy/norm law."""
    if isinstance(frequencies, str):
        if frequencies not in LAWS:
            raise ValueError(f"frequencies must be one of {sorted(LAWS)} or a frozen scipy.stats cauchy/norm law, "
                             f"got {frequencies!r}")
        return frequencies, 1.0 if width is None else check_positive("width", width), 0.0
    dist = getattr(frequencies, "dist", None)
    for name, family in LAWS.items():
        if isinstance(dist, type(family)):
            if width is not None:
                raise ValueError("width is given by the law itself; pass width only with a law name")
            centre = float(frequencies.median())
            scale = float(frequencies.std()) if name == "gaussian" else float(frequencies.ppf(0.75)) - centre
            return name, scale, centre
    raise ValueError(f"frequencies must be one of {sorted(LAWS)} or a frozen scipy.stats cauchy/norm law, "
                     f"got {frequencies!r}")


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
    law: str = "lorentzian",
    width: float = 1.0,
    centre: float = 0.0,
    noise: float = 0.0,
    engine: str = "particles",
    n: int = 2000,
    t_final: float = 60.0,
    average_window: float = 20.0,
    frequency_nodes: int | None = None,
    grid: int = 128,
    dt: float = 0.01,
    rtol: float = 1e-4,
) -> xr.Dataset:
    r"""One Kuramoto run: r(t) on t = 0, 0.5, …, t_final and r∞ = its mean over the final window.

    Parameters
    ----------
    coupling : float
        K ≥ 0.
    seed : int, optional
        Seed of the particles' initial phases (``SeedSequence([seed])``); required for
        particles, ignored by the PDE.
    law, width, centre : str, float, float
        Frequency law (see :data:`LAWS`) and its scale and centre.
    noise : float
        σ ≥ 0 (dθ = … + √(2σ) dW).
    engine : {"particles", "pde"}, default "particles"
        Integrate the oscillators (:func:`meanfield.simulate`) or the mean-field PDE (:func:`meanfield.solve`).
    n : int
        Number of oscillators (particles).
    t_final, average_window : float
        Final time and the length of the final averaging window (0 < window ≤ t_final).
    frequency_nodes : int, optional
        PDE quadrature nodes in ω (None: chosen against recurrence, module docstring).
    grid : int
        PDE nodes in θ.
    dt : float
        Euler–Maruyama step of particles with noise.
    rtol : float
        Tolerance of the adaptive integrators (particles without noise: on Z).

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
        An unknown engine or law, a bad window, or no ``seed`` for particles.
    """
    engine = _engine(engine)
    _check_window(t_final, average_window)
    model = Kuramoto(coupling=coupling, frequencies=frequency_law(law, width, centre), noise=noise)
    times = np.linspace(0.0, t_final, int(round(2 * t_final)) + 1)
    attrs: dict[str, Any] = {"law": law, "width": float(width), "centre": float(centre), "noise": float(noise),
                             "engine": engine, "t_final": float(t_final), "average_window": float(average_window)}
    if engine == "particles":
        if seed is None:
            raise ValueError("seed is required for engine='particles' (initial phases)")
        n = check_positive_int("n", n, 2)
        theta0 = np.random.default_rng(np.random.SeedSequence([int(seed)])).uniform(0, 2 * np.pi, int(n))
        options = {"dt": dt, "seed": int(seed)} if noise > 0 else {"rtol": rtol, "atol": rtol * 1e-3}
        ds = simulate(model, theta0, times, **options)
        attrs.update(n=int(n), integrator=ds.attrs["integrator"], dt=float(dt) if noise > 0 else -1.0,
                     rtol=float(rtol))
    else:
        nodes, t_rec = _pde_nodes(model, frequency_nodes, t_final, noise)
        domain = Circle(int(grid))
        rho0 = density(domain, lambda th: 1 + PDE_PERTURBATION * np.cos(th))
        # finite volume without noise, else spectral
        scheme = choose_method(model, domain, METHOD_AUTO, model.grid_velocity(domain, nodes))[0].name
        options = {"rtol": rtol, "atol": rtol * 1e-3} if scheme == "spectral" else {}
        ds = solve(model, rho0, times, method=scheme, frequency_nodes=nodes, **options)
        attrs.update(scheme=scheme, theta_nodes=int(grid), frequency_nodes=nodes, recurrence_time=t_rec,
                     recurrence_free=int(_recurrence_free(t_rec, t_final, noise)))
    r = ds["order_parameter"].values
    reached = ds["time"].values
    late = r[reached >= t_final - average_window - 1e-9]
    if late.size == 0 or reached[-1] < t_final:
        logger.warning("run at K = %g stopped at t = %g before t_final = %g: %s", coupling, reached[-1], t_final,
                       ds.attrs.get("message", ""))
        late = np.array([np.nan])
    r_full = np.full(times.size, np.nan)
    r_full[: r.size] = r
    resolution = {}
    if "resolution_tail" in ds.attrs:  # finite volume: its own estimate of the grid's resolution
        resolution = {
            "resolved": ((), int(ds.attrs["resolved"]), {"long_name": "1 if the finite-volume grid resolved the run"}),
            "resolution_tail": ((), float(ds.attrs["resolution_tail"]),
                                {"long_name": "largest spectral tail of the density beyond N/3 (over frequency nodes)"}),
        }
    return xr.Dataset(
        {
            **resolution,
            "order_parameter": ("time", r_full, {"long_name": "r(t) = |∫ e^{iθ} dμ_t|"}),
            "r_inf": ((), float(np.mean(late)), {"long_name": "mean of r over the final window"}),
            "r_spread": ((), float(np.std(late)), {"long_name": "standard deviation of r over the final window"}),
            "n_steps": ((), int(ds.attrs["n_steps"]), {"long_name": "accepted time steps"}),
            "success": ((), int(ds.attrs.get("success", 1)), {"long_name": "1 if the run reached t_final"}),
        },
        coords={"time": ("time", times, {"long_name": "time", "units": "1"})},
        attrs=attrs,
    )


def kuramoto_bifurcation(
    couplings: Sequence[float] | np.ndarray,
    frequencies: Any = "lorentzian",
    *,
    width: float | None = None,
    noise: float = 0.0,
    engine: str = "particles",
    n: int = 2000,
    t_final: float = 60.0,
    average_window: float = 20.0,
    seeds: int | Sequence[int] | None = 4,
    frequency_nodes: int | None = None,
    grid: int = 128,
    dt: float = 0.01,
    rtol: float = 1e-4,
    scheduler: Any = None,
    n_workers: int | None = None,
    store: Any = None,
    resume: bool = False,
    progress: bool = False,
) -> xr.Dataset:
    r"""r∞(K) of the Kuramoto model over couplings K, by particles or the PDE, with its theory.

    Each K (and seed, for particles) is one task of :func:`meanfield.studies.sweep`
    running :func:`kuramoto_run`.

    Parameters
    ----------
    couplings : array_like
        Couplings K ≥ 0 (the dimension ``coupling``).
    frequencies : {"lorentzian", "gaussian"} or frozen scipy.stats cauchy/norm law
        Law g of ω; with a name, ``width`` is its scale (Lorentzian half-width γ,
        Gaussian standard deviation), default 1.
    noise : float
        σ ≥ 0 in dθ = (ω + K Σ_j w_j sin(θ_j - θ)) dt + √(2σ) dW.
    engine : {"particles", "pde"}, default "particles"
        Oscillators or the mean-field PDE (:func:`kuramoto_run`).
    n, t_final, average_window, frequency_nodes, grid, dt, rtol
        See :func:`kuramoto_run`.
    seeds : int or sequence of int
        Particles: seeds of the initial phases (dimension ``seed``); ignored by the PDE.
    scheduler, n_workers, store, resume, progress
        Passed to :func:`meanfield.studies.sweep` (None: a local dask cluster;
        "serial": a plain loop).

    Returns
    -------
    xarray.Dataset
        ``order_parameter`` (coupling, [seed,] time), ``r_inf`` and ``r_spread``
        (coupling[, seed]); ``r_mean`` (coupling): r∞ averaged over seeds, with
        ``r_error`` its standard error over seeds (particles, ≥ 2 seeds; else the
        window's spread); ``r_theory`` (coupling) from :func:`kuramoto_theory`;
        attrs ``critical_coupling`` K_c, the law, σ, ``engine`` and the sweep's record.

    Raises
    ------
    ValueError, TypeError
        Empty or negative couplings, an unknown law or engine, a bad width, noise or window.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.kuramoto_bifurcation([0.5, 2.0], "lorentzian", width=0.5, n=500, t_final=20,
    ...                              average_window=5, seeds=1, scheduler="serial")
    >>> ds.r_mean.dims
    ('coupling',)
    """
    ks = np.asarray(couplings, dtype=float)
    if ks.ndim != 1 or ks.size == 0 or not np.all(np.isfinite(ks)) or np.any(ks < 0):
        raise ValueError(f"couplings must be a non-empty 1-D sequence of finite K >= 0, got {couplings!r}")
    law, scale, centre = _law_of(frequencies, width)
    law_object = frequency_law(law, scale, centre)
    noise = check_nonnegative("noise", noise)
    engine = _engine(engine)
    n, grid = check_positive_int("n", n, 2), check_positive_int("grid", grid, 8)
    rtol, dt = check_positive("rtol", rtol), check_positive("dt", dt)
    if frequency_nodes is not None:
        frequency_nodes = check_positive_int("frequency_nodes", frequency_nodes, 1)
    fixed = {"law": law, "width": scale, "centre": centre, "noise": noise, "engine": engine, "n": int(n),
             "t_final": float(t_final), "average_window": float(average_window), "frequency_nodes": frequency_nodes,
             "grid": int(grid), "dt": float(dt), "rtol": float(rtol)}
    _check_window(t_final, average_window)  # fail before any task runs
    ds = sweep(kuramoto_run, {"coupling": ks}, seeds=seeds if engine == "particles" else None, fixed=fixed,
               store=store, resume=resume, scheduler=scheduler, n_workers=n_workers, progress=progress)
    theory = kuramoto_theory(ks, law_object, noise)
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
    ds.attrs.update(law=law, width=scale, centre=centre, noise=noise, engine=engine,
                    critical_coupling=kuramoto_critical_coupling(law_object, noise),
                    study="kuramoto_bifurcation", meanfield_version=__version__)
    return ds


def _engine(engine: str) -> str:
    """``engine``, checked to be one of :data:`ENGINES`."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    return engine
