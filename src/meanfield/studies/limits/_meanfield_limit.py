"""Mean-field limit measured: W_p(μ_n(t), μ(t)) against the number of particles n.

For every n in a list and every seed, n particles are drawn from the initial
density (iid or by quantiles), advanced by the particle engine, and compared
with the PDE solution from the same initial density at every output time. At
each time the exponent a of W_p ≈ c n^a is fitted by least squares on
log W_p against log n, once per seed; the reported exponent is the mean over
seeds and its uncertainty the standard error of that mean (with one seed: the
ordinary least-squares standard error of the slope).

For iid initial particles on S¹ the expected exponent is -1/2 at every fixed
t (Dobrushin's estimate W₁(μ_n(t), μ(t)) ≤ e^{Ct} W₁(μ_n(0), μ(0)), paper 2, arXiv:2312.10794 Remark 3.3, and
E W₁(μ_n(0), μ(0)) ~ n^{-1/2}).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import xarray as xr

from ..._compare import compare
from ...measures._measure import Density
from ...measures._sampling import sample
from ...particles import simulate
from ...pde import solve
from ..._validate import as_times, check_order, check_positive_int
from ..._version import __version__
from ..sweeps._sweep import sweep

__all__ = ["meanfield_study", "fit_exponent", "study_system", "system_seed_sequences"]

SEED_RULE = (
    "system (n, seed): SeedSequence((seed, n)).spawn(2) = (initial sample, noise) seed sequences, "
    "each used as numpy.random.default_rng(child); one particle run per system"
)

logger = logging.getLogger(__name__)


def meanfield_study(
    model: Any,
    rho0: Density,
    t: Sequence[float] | np.ndarray,
    n_values: Sequence[int],
    seeds: Sequence[int] = (0, 1, 2, 3),
    *,
    p: float = 1,
    sampler: str = "iid",
    method: str = "spectral",
    solve_options: dict[str, Any] | None = None,
    simulate_options: dict[str, Any] | None = None,
    pde: xr.Dataset | None = None,
    density: str = "cells",
    scheduler: Any = "serial",
    n_workers: int | None = None,
    store: str | os.PathLike | None = None,
    resume: bool = False,
    progress: bool = False,
) -> xr.Dataset:
    r"""W_p between the particle and PDE solutions for several n and seeds, and the fitted exponent.

    For every n of ``n_values`` and every seed, n particles drawn from ``rho0`` are advanced by
    :func:`meanfield.simulate` and their empirical measure μ_n(t) = (1/n) Σ_i δ_{x_i(t)} is compared with the
    PDE solution μ(t) of :func:`meanfield.solve` from ``rho0`` (:func:`meanfield.compare`). At each time the
    exponent a and prefactor c of

    .. math::

        W_p(\mu_n(t), \mu(t)) \approx c\, n^{a}

    are fitted by least squares of log W_p on log n, once per seed (:func:`fit_exponent`). For iid initial
    particles a = -1/2 is expected at every fixed t (Dobrushin's estimate W₁(μ_n(t), μ(t)) ≤ e^{Ct}
    W₁(μ_n(0), μ(0)), paper 2, Remark 3.3, and E W₁(μ_n(0), μ(0)) ~ n^{-1/2}); quantile particles start at
    W₁ ~ 1/n.

    Parameters
    ----------
    model : SelfAttention or Kuramoto
        The dynamics, run by both the particle engine and the PDE solver (any model both accept).
    rho0 : Density
        Initial density (PDE) and law of the initial particles.
    t : array_like
        Output times, t[0] the initial time.
    n_values : sequence of int
        Particle numbers, at least two distinct values.
    seeds : sequence of int, default (0, 1, 2, 3)
        One independent particle system per seed and n, run on its own: the
        system (n, seed) draws its initial sample and its noise from the two
        children of ``SeedSequence((seed, n))`` (:func:`system_seed_sequences`),
        so it does not depend on the other seeds or particle numbers and can
        be rerun alone. Non-negative integers.
    p : float, default 1
        Order of W_p, p ≥ 1.
    sampler : {"iid", "quantile"}, default "iid"
        How initial particles are drawn (:func:`meanfield.sample`).
    method : str, default "spectral"
        PDE scheme for :func:`meanfield.solve`.
    solve_options, simulate_options : dict, optional
        Keyword arguments passed on to :func:`meanfield.solve` and :func:`meanfield.simulate` (e.g.
        ``{"dt": 1e-3}`` for the SDE with noise > 0).
    pde : xarray.Dataset, optional
        A PDE result on the same times to reuse instead of solving.
    density : {"cells", "atoms"}, default "cells"
        How the circle density enters W_p (:func:`meanfield.compare`).
    scheduler, n_workers, store, resume, progress
        How the systems run: one task of :func:`meanfield.sweep` per system
        (n, seed), the function :func:`study_system`; the PDE is solved here
        once. Defaults ``"serial"`` (a plain loop), None, None, False, False. The result does not depend on the
        scheduler (every system has its own generators).

    Returns
    -------
    xarray.Dataset
        ``wasserstein`` (n, seed, time); ``exponent``, ``exponent_stderr``,
        ``prefactor`` (time; NaN at times where some W_p = 0); ``energy_gap``
        (n, seed, time), E[μ_n] - E[μ]; the PDE's energy ``pde_energy`` (time); attrs with the model,
        sampler, method, p, the Wasserstein method, ``seeds`` and
        ``seed_rule`` (how each system's generators are made) and the scalar
        ``simulate_options`` as ``simulate_<name>``.

    Raises
    ------
    ValueError
        Fewer than two distinct n, no seeds, a negative seed, an unknown sampler, p < 1.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> model = mf.SelfAttention(1.0, normalized=False)
    >>> rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.5 * np.cos(th))
    >>> ds = mf.meanfield_study(model, rho0, [0.0, 1.0], [16, 64, 250], seeds=(0, 1, 2, 3))
    >>> ds.wasserstein.dims, ds.exponent.dims
    (('n', 'seed', 'time'), ('time',))
    >>> # iid starts: the fitted exponent is -1/2 within three standard errors, at t = 0 and t = 1
    >>> bool(np.all(np.abs(ds.exponent + 0.5) < 3 * ds.exponent_stderr))
    True

    Quantile particles sit at the medians of n cells of mass 1/n each: for large n the mass of a cell of width h
    lies on average h/4 from its particle and the widths add up to 2π, so W₁ at t = 0 is close to π/(2n), and
    the exponent is -1:

    >>> q = mf.meanfield_study(model, rho0, [0.0, 1.0], [16, 64, 250], seeds=(0,), sampler="quantile")
    >>> w0 = q.wasserstein.isel(seed=0, time=0).values
    >>> np.round(w0 * 2 * q.n.values / np.pi, 2).tolist(), np.round(q.exponent.values, 2).tolist()
    ([1.0, 1.0, 1.0], [-1.0, -1.0])

    """
    times = as_times(t)
    p = check_order(p)
    ns = np.array([check_positive_int("n_values entry", n) for n in n_values])
    if np.unique(ns).size < 2:
        raise ValueError(f"n_values must hold at least two distinct particle numbers, got {list(n_values)!r}")
    seed_list = [check_positive_int("seeds entry", s, minimum=0) for s in seeds]
    if not seed_list:
        raise ValueError("seeds must hold at least one seed, got an empty sequence")
    if sampler not in ("iid", "quantile"):
        raise ValueError(f"sampler must be 'iid' or 'quantile', got {sampler!r}")
    if pde is None:
        pde = solve(model, rho0, times, method=method, **(solve_options or {}))
    if int(pde.attrs.get("success", 1)) != 1:
        raise ValueError(f"the PDE solve did not reach the final time: {pde.attrs.get('message', '')}")
    fixed = {"model": model, "rho0": rho0, "times": times, "pde": pde, "p": p, "sampler": sampler,
             "density": density, "simulate_options": dict(simulate_options or {})}
    systems = sweep(study_system, {"n": ns}, seeds=seed_list, fixed=fixed, scheduler=scheduler, n_workers=n_workers,
                    store=store, resume=resume, progress=progress)
    w = systems["wasserstein"].values
    energy_gap = systems["energy_gap"].values
    for i, n in enumerate(ns):
        logger.info("n = %d: mean W_%g at the last time %.4g", n, p, w[i, :, -1].mean())
    exponent, stderr, prefactor = fit_exponent(ns, w)
    coords = {
        "n": ("n", ns, {"long_name": "number of particles"}),
        "seed": ("seed", np.array(seed_list), {"long_name": "seed of the particle system"}),
        **model.time_coordinates(times),
    }
    data = {
        "wasserstein": (("n", "seed", "time"), w, {"long_name": f"W_{p:g}(mu_n(t), mu(t))", "units": "rad"}),
        "energy_gap": (("n", "seed", "time"), energy_gap, {"long_name": "E[mu_n] - E[mu]"}),
        "exponent": ("time", exponent, {"long_name": "fitted exponent a in W ~ c n^a"}),
        "exponent_stderr": ("time", stderr, {"long_name": "standard error of the exponent"}),
        "prefactor": ("time", prefactor, {"long_name": "fitted c in W ~ c n^a"}),
        "pde_energy": ("time", pde["energy"].values, {"long_name": "E of the PDE solution"}),
    }
    attrs = {
        **{k: v for k, v in pde.attrs.items() if isinstance(v, (str, int, float, np.number))},
        "p": float(p),
        "sampler": sampler,
        "pde_method": str(pde.attrs.get("method", method)),
        "wasserstein_method": systems.attrs["wasserstein_method"],
        "seeds": np.array(seed_list, dtype=np.int64),
        "seed_rule": SEED_RULE,
        **{f"simulate_{k}": int(v) if isinstance(v, bool) else v
           for k, v in (simulate_options or {}).items() if isinstance(v, (str, int, float))},
        "fit": "least squares of log W on log n per seed; mean and standard error over seeds",
        **{k: systems.attrs[k] for k in ("tasks_total", "tasks_run", "tasks_skipped", "store", "scheduler")},
        "meanfield_version": __version__,
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


def study_system(
    n: int,
    seed: int,
    *,
    model: Any,
    rho0: Density,
    times: np.ndarray,
    pde: xr.Dataset,
    p: float,
    sampler: str,
    density: str,
    simulate_options: dict[str, Any],
) -> xr.Dataset:
    """One particle system (n, seed) of :func:`meanfield_study` against the PDE: a task of its sweep.

    Draws n initial particles from ``rho0`` and the noise from the generators
    of :func:`system_seed_sequences`, simulates them to ``times`` and returns
    ``wasserstein`` and ``energy_gap`` over time (attr ``wasserstein_method``).
    """
    sample_seq, noise_seq = system_seed_sequences(seed, n)
    x0 = sample(rho0, n, seed=np.random.default_rng(sample_seq), method=sampler)
    particles = simulate(model, x0, times, seed=np.random.default_rng(noise_seq), **simulate_options)
    gaps = compare(pde, particles, p, density=density)
    return xr.Dataset(
        {"wasserstein": ("time", gaps["wasserstein"].values[0]), "energy_gap": ("time", gaps["energy_gap"].values[0])},
        coords={"time": times},
        attrs={"wasserstein_method": gaps.attrs["wasserstein_method"]},
    )


def system_seed_sequences(seed: int, n: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """Seed sequences (initial sample, noise) of the particle system (n, seed) of :func:`meanfield_study`.

    The two children spawned by ``np.random.SeedSequence((seed, n))``; each is
    used as ``np.random.default_rng(child)``.
    """
    sample_seq, noise_seq = np.random.SeedSequence((int(seed), int(n))).spawn(2)
    return sample_seq, noise_seq


def fit_exponent(ns: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit W ≈ c n^a at every time.

    Parameters
    ----------
    ns : ndarray, shape (N,)
    w : ndarray, shape (N, S, T)
        Distances for each n, seed and time.

    Returns
    -------
    exponent, stderr, prefactor : ndarray, shape (T,)
        a = mean over seeds of the per-seed least-squares slope of log W on
        log n, its standard error std/√S (S ≥ 2) or the OLS standard error of
        the pooled fit (S = 1); c = exp(mean intercept). NaN where W has zeros.
    """
    ns = np.asarray(ns, dtype=float)
    w = np.asarray(w, dtype=float)
    n_seeds, n_times = w.shape[1], w.shape[2]
    exponent = np.full(n_times, np.nan)
    stderr = np.full(n_times, np.nan)
    prefactor = np.full(n_times, np.nan)
    x = np.log(ns)
    xc = x - x.mean()
    sxx = float(np.sum(xc**2))
    for k in range(n_times):
        if not np.all(w[:, :, k] > 0):
            continue
        y = np.log(w[:, :, k])  # (N, S)
        slopes = xc @ (y - y.mean(axis=0)) / sxx
        intercepts = y.mean(axis=0) - slopes * x.mean()
        exponent[k] = slopes.mean()
        prefactor[k] = np.exp(intercepts.mean())
        if n_seeds >= 2:
            stderr[k] = slopes.std(ddof=1) / np.sqrt(n_seeds)
        elif ns.size > 2:
            resid = y[:, 0] - intercepts[0] - slopes[0] * x
            stderr[k] = np.sqrt(np.sum(resid**2) / (ns.size - 2) / sxx)
    return exponent, stderr, prefactor
