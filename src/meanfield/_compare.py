"""PDE solution against particles: W_p, energy, order parameter and moment gaps over time."""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from .domains._domain import domain_of
from .measures._measure import Density, EmpiricalMeasure
from .measures._wasserstein import wasserstein
from ._version import __version__
from ._validate import check_order, check_positive_int

__all__ = ["compare"]

_TIME_RTOL = 1e-9
_NEGATIVE_TOL = 1e-8


#: model parameters in a result's attrs that two compared runs must share
MODEL_ATTRS = ("model", "beta", "normalized", "noise", "coupling", "frequencies", "interaction", "phase_lag",
               "repulsive", "kernel", "potential")
#: the coordinates along ``time`` that a result takes over from the PDE run (a run in s = e^β t has ``log_time``)
TIME_COORDS = ("time", "log_time")


def compare(
    pde: xr.Dataset,
    particles: xr.Dataset,
    p: float = 1,
    *,
    n_modes: int = 3,
    density: str = "cells",
    method: str | None = None,
    max_exact_atoms: int = 3000,
) -> xr.Dataset:
    r"""Compare a PDE solution with a particle simulation at their common output times.

    For every output time t_k and every system s of the particle result:

    * ``wasserstein``: W_p(ρ(t_k), μ_n^s(t_k)) in radians by the named ``method``
      (see :func:`wasserstein`; on S¹ the density is taken as uniform cells by
      default, elsewhere as atoms at the grid nodes with masses ρ_j w_j);
    * ``energy_gap``: E[μ_n^s] - E[ρ] (the ``energy`` variables of both results);
    * ``order_parameter_gap``: |∫ x dμ_n^s| - |∫ x dρ|;
    * ``moment_gap`` (mode): on S¹ |m̂_k[μ_n^s] - m̂_k[ρ]|, m̂_k[μ] = ∫ e^{ikθ} dμ,
      k = 1..n_modes; on spheres mode 1 is |∫ x dμ_n - ∫ x dρ| and mode 2 the
      Frobenius norm of the difference of the second moments ∫ x xᵀ dμ.

    Every per-system variable ``v`` (dims (system, time[, mode])) comes with
    ``v_mean`` and ``v_std`` over systems (sample standard deviation, 0 for a
    single system).

    Parameters
    ----------
    pde : xarray.Dataset
        Result of :func:`meanfield.solve`: ``density`` (time, theta), (time, lat,
        lon) or (time, polar), with ``energy`` and ``order_parameter``.
    particles : xarray.Dataset
        Result of :func:`meanfield.simulate`: ``positions`` (time, particle) on
        S¹, (time, particle, component) on S^{d-1}, optionally with a leading
        ``system`` dim; ``weights``.
    p : float
        Order of the Wasserstein distance, p ≥ 1.
    n_modes : int
        Fourier modes compared on S¹.
    density : {"cells", "atoms"}
        How a circle density enters W_p (see :func:`wasserstein`); spheres
        always use atoms.
    method : {"exact", "sliced", "polar"} or None
        The distance (:func:`wasserstein`); None: the first method of the domain,
        "exact" on S¹ and S², "polar" on a ZonalSphere. Recorded in attr
        ``wasserstein_method``, what computed it in ``wasserstein_algorithm``.
    max_exact_atoms : int
        Passed to :func:`wasserstein`: "exact" on S^{d-1} is refused beyond it.

    Returns
    -------
    xarray.Dataset
        Dims ``system``, ``time`` (and ``mode``), the time coordinates of the
        runs (``time``, and ``log_time`` of a run in the rescaled time
        s = e^β t); attrs: p, the Wasserstein method, its algorithm and
        accuracy, the domain, n_particles, n_systems, the methods of both runs.

    Raises
    ------
    ValueError
        Different output times or time variables (t against s = e^β t),
        incompatible domains, runs of different models (any of ``MODEL_ATTRS``
        recorded by both with different values), p < 1, a density with
        negative values beyond rounding.

    Notes
    -----
    With ρ(t) the PDE density and μ_n^s(t) = Σ_i w_i δ_{x_i^s(t)} the
    empirical measure of system s, the variables are

    .. math::

        \mathrm{wasserstein} = W_p\big(\rho(t_k), \mu_n^s(t_k)\big), \qquad
        \mathrm{energy\_gap} = E_\beta[\mu_n^s(t_k)] - E_\beta[\rho(t_k)],

        \mathrm{order\_parameter\_gap} = \Big|\int x \,\mathrm{d}\mu_n^s(t_k)\Big|
        - \Big|\int x \,\mathrm{d}\rho(t_k)\Big|, \qquad
        \mathrm{moment\_gap}_k = \big|\hat m_k[\mu_n^s(t_k)] - \hat m_k[\rho(t_k)]\big|,
        \quad \hat m_k[\mu] = \int e^{ik\theta} \,\mathrm{d}\mu(\theta)

    (the moment gap as on S¹; on spheres, see above). The density is
    renormalised to unit mass at each time before W_p (its mass before that
    is ``pde_mass``; negative rounding is clipped and its mass reported as
    ``pde_negative_mass``). For a Lipschitz velocity field
    the mean-field limit (paper 2, Remark 3.3, after Dobrushin) bounds
    W₁(μ_n(t), μ(t)) ≤ e^{C|t|} W₁(μ_n(0), μ(0)), which is what
    ``wasserstein`` lets one watch.

    Examples
    --------
    The uniform density and 8 equally spaced particles are both stationary;
    their W₁ distance is the mean distance to the nearest particle, π/(2n):

    >>> import numpy as np
    >>> import meanfield as mf
    >>> model, t = mf.SelfAttention(beta=1.0), [0.0, 0.5, 1.0]
    >>> pde = mf.solve(model, mf.uniform(mf.Circle(64)), t)
    >>> particles = mf.simulate(model, 2 * np.pi * np.arange(8) / 8, t)
    >>> gaps = mf.compare(pde, particles)
    >>> gaps.wasserstein.dims, gaps.moment_gap.dims
    (('system', 'time'), ('system', 'time', 'mode'))
    >>> print(np.round(gaps.wasserstein_mean.values, 6), f"{np.pi / 16:.6f}")
    [0.19635 0.19635 0.19635] 0.196350
    >>> print(f"{float(np.abs(gaps.order_parameter_gap_mean).max()):.6f}")  # both order parameters are 0
    0.000000
    >>> gaps.attrs["wasserstein_method"], gaps.attrs["n_particles"]
    ('exact', 8)
    """
    p = check_order(p)
    n_modes = check_positive_int("n_modes", n_modes)
    _check_inputs(pde, particles)
    _check_same_model(pde, particles)
    domain = domain_of(pde)
    _check_times(pde, particles)
    geometry = domain.geometry
    part_kind = str(particles.attrs.get("domain", "sphere" if "component" in particles["positions"].dims else "circle"))
    if part_kind != geometry.name:
        raise ValueError(f"pde and particles must live on the same domain, got pde on {domain.kind!r} and "
                         f"particles on {part_kind!r} (the density's particles live on the {geometry.name!r} domain)")
    positions = particles["positions"]
    batch = "system" in positions.dims
    order = ("system", "time", "particle") + (("component",) if "component" in positions.dims else ())
    x = positions.transpose(*order).values if batch else positions.transpose(*order[1:]).values[None]
    n_sys, n_time, n = x.shape[:3]
    if geometry.atom_ndim == 2 and x.shape[-1] != domain.dimension:
        raise ValueError(
            f"pde and particles must live on the same sphere, got a density on S^{domain.dimension - 1} "
            f"and particles in R^{x.shape[-1]}"
        )
    if "weights" in particles:
        w = particles["weights"].values
        w = w if batch else w[None]
    else:
        w = np.full((n_sys, n), 1.0 / n)
    densities = pde["density"].transpose("time", *domain.coords).values

    if density not in ("cells", "atoms"):
        raise ValueError(f"density must be 'cells' or 'atoms', got {density!r}")
    as_ = density if geometry.atom_ndim == 1 else "atoms"
    distances = np.empty((n_sys, n_time))
    algorithms: set[str] = set()
    accuracy = 0.0
    exact = True
    negative_mass = np.zeros(n_time)
    for k in range(n_time):  # one transport problem per output time, batched over systems
        rho, negative_mass[k] = _density_at(domain, densities[k], float(pde.time.values[k]))
        measure = EmpiricalMeasure(x[:, k], w, domain=geometry.name)
        info = wasserstein(rho, measure, p, method=method, return_info=True, max_exact_atoms=max_exact_atoms,
                           density=as_)
        distances[:, k] = info.value
        method = info.method
        algorithms.add(info.algorithm)
        accuracy = max(accuracy, info.accuracy)
        exact = exact and info.exact
        masses = (rho.values * domain.weights).ravel()
        gaps = geometry.moment_gaps(x[:, k], w, domain.moments(masses, n_modes))
        if k == 0:
            moment_gap = np.empty((n_sys, n_time, gaps.shape[-1]))
        moment_gap[:, k] = gaps
    n_mode = moment_gap.shape[-1]

    per_system: dict[str, tuple[tuple[str, ...], np.ndarray, dict[str, str]]] = {
        "wasserstein": (("system", "time"), distances, {"long_name": f"W_{p:g}(rho, mu_n)", "units": "rad"}),
        "energy_gap": (
            ("system", "time"),
            _gap(pde, particles, "energy", batch, n_sys, n_time),
            {"long_name": "E[mu_n] - E[rho]"},
        ),
        "order_parameter_gap": (
            ("system", "time"),
            _gap(pde, particles, "order_parameter", batch, n_sys, n_time),
            {"long_name": "|int x dmu_n| - |int x drho|"},
        ),
        "moment_gap": (
            ("system", "time", "mode"),
            moment_gap,
            {"long_name": "|m_k[mu_n] - m_k[rho]| (S^1: Fourier modes; spheres: 1 = mean, 2 = second moment)"},
        ),
    }
    data: dict[str, Any] = {}
    for name, (dims, values, attrs) in per_system.items():
        data[name] = (dims, values, attrs)
        data[f"{name}_mean"] = (dims[1:], np.mean(values, axis=0), {"long_name": f"mean over systems of {name}"})
        std = np.std(values, axis=0, ddof=1) if n_sys > 1 else np.zeros(values.shape[1:])
        data[f"{name}_std"] = (dims[1:], std, {"long_name": f"sample standard deviation over systems of {name}"})
    data["pde_mass"] = ("time", np.sum(densities * domain.weights, axis=tuple(range(1, densities.ndim))),
                        {"long_name": "mass of the PDE density before normalisation"})
    data["pde_negative_mass"] = ("time", negative_mass, {"long_name": "mass of the clipped negative part of the PDE density"})
    coords = {
        "system": ("system", np.arange(n_sys), {"long_name": "independent particle system"}),
        **{name: ("time", pde[name].values.astype(float), dict(pde[name].attrs)) for name in TIME_COORDS
           if name in pde.coords},
        "mode": ("mode", np.arange(1, n_mode + 1), {"long_name": "Fourier mode (S^1) or moment order (spheres)"}),
    }
    attrs = {
        "p": float(p),
        "wasserstein_method": str(method),
        "wasserstein_algorithm": ",".join(sorted(algorithms)),
        "wasserstein_exact": int(exact),
        "wasserstein_accuracy": float(accuracy),
        "density_as": "uniform cells around the nodes" if as_ == "cells" else "atoms at the nodes, masses rho_j w_j",
        "domain": domain.kind,
        "dimension": int(domain.dimension),
        "n_particles": int(n),
        "n_systems": int(n_sys),
        "pde_method": str(pde.attrs.get("method", "unknown")),
        "particle_method": str(particles.attrs.get("method", "unknown")),
        "meanfield_version": __version__,
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _check_inputs(pde: Any, particles: Any) -> None:
    if not isinstance(pde, xr.Dataset) or "density" not in pde:
        raise TypeError(f"pde must be an xarray.Dataset with a 'density' variable (from mf.solve), got {type(pde).__name__}")
    if not isinstance(particles, xr.Dataset) or "positions" not in particles:
        raise TypeError(
            f"particles must be an xarray.Dataset with a 'positions' variable (from mf.simulate), got {type(particles).__name__}"
        )


def _check_same_model(pde: xr.Dataset, particles: xr.Dataset) -> None:
    """Refuse runs whose recorded model parameters differ, naming each of them."""
    differ = [f"{key}: pde {pde.attrs[key]!r}, particles {particles.attrs[key]!r}" for key in MODEL_ATTRS
              if key in pde.attrs and key in particles.attrs and str(pde.attrs[key]) != str(particles.attrs[key])]
    if differ:
        raise ValueError("pde and particles must be runs of the same model, got different " + "; ".join(differ))


def _check_times(pde: xr.Dataset, particles: xr.Dataset) -> None:
    clocks = [str(ds.attrs.get("time", "t")) for ds in (pde, particles)]
    if clocks[0] != clocks[1]:
        raise ValueError(f"pde and particles must run in the same time variable, got pde in time={clocks[0]!r} and "
                         f"particles in time={clocks[1]!r} ('rescaled': s = e^beta t)")
    t_pde = np.asarray(pde["time"].values, dtype=float)
    t_part = np.asarray(particles["time"].values, dtype=float)
    if t_pde.shape != t_part.shape or not np.allclose(t_pde, t_part, rtol=_TIME_RTOL, atol=_TIME_RTOL):
        stopped = ""
        for name, ds in (("pde", pde), ("particles", particles)):
            if int(ds.attrs.get("success", 1)) == 0:
                stopped += f"; the {name} run stopped early: {ds.attrs.get('message', '')}"
        raise ValueError(
            "pde and particles must have the same output times, got "
            f"{t_pde.size} times {np.round(t_pde[:4], 6)}... and {t_part.size} times {np.round(t_part[:4], 6)}...{stopped}"
        )


def _density_at(domain: Any, values: np.ndarray, time: float) -> tuple[Density, float]:
    """The probability density at one output time; clips negative rounding."""
    peak = float(np.max(np.abs(values)))
    low = float(np.min(values))
    if low < -_NEGATIVE_TOL * max(peak, 1.0):
        raise ValueError(
            f"pde: density at t = {time:g} has negative values down to {low:.3g} "
            f"(allowed: > -{_NEGATIVE_TOL:g} x max); refine the grid or use method='finite_volume'"
        )
    negative = float(np.sum(np.minimum(values, 0.0) * domain.weights))
    rho = Density(domain, np.maximum(values, 0.0))
    return rho.normalized(), -negative


def _gap(pde: xr.Dataset, particles: xr.Dataset, name: str, batch: bool, n_sys: int, n_time: int) -> np.ndarray:
    if name not in pde or name not in particles:
        return np.full((n_sys, n_time), np.nan)
    part = particles[name].transpose(*(("system", "time") if batch else ("time",))).values
    part = part if batch else part[None]
    return part - pde[name].values[None]
