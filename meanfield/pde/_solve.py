"""``solve``: the mean-field continuity equation of a model from a density.

    ∂_t ρ + div(ρ X[ρ]) = σ Δρ,   ρ(0) = ρ_0,

on the domain of ρ_0, with the scheme named by ``method`` (keys of
:data:`solvers.SCHEMES`), returned as an :class:`xarray.Dataset`.
"""

from __future__ import annotations

import inspect
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from solvers import Evolution, Scheme, evolve, schemes_for

from ..io._checkpoint import (
    Checkpoint,
    CheckpointError,
    check_same_run,
    fingerprint,
    load_checkpoint,
    locks_checkpoint,
    snapshot_of,
    snapshot_variables,
)
from ..io._conventions import continued_history
from ..io._dataset import density_dataset, marginal_energy, netcdf_safe
from ..measures._measure import Density
from ..models._dynamics import Kuramoto, SelfAttention
from ._recurrence import check_recurrence
from ._resolution import ResolutionMonitor
from ._step_estimate import check_step_count
from ._trackers import ProgressBar
from .._validate import as_times, check_flag, check_nonnegative, check_positive_int

logger = logging.getLogger(__name__)

__all__ = ["solve", "methods"]


def methods(kind: str) -> list[str]:
    """Names of the schemes available on a domain kind ("circle", "sphere", "zonal")."""
    from ..domains import Circle, Sphere, ZonalSphere

    grid = {"circle": Circle(8), "sphere": Sphere(4), "zonal": ZonalSphere(3, 8)}[kind].grid
    return sorted(schemes_for(grid))


@locks_checkpoint
def solve(
    model: SelfAttention | Kuramoto,
    rho0: Density,
    t: np.ndarray | list[float],
    method: str = "spectral",
    *,
    frequency_nodes: int = 32,
    max_step: float = np.inf,
    progress: bool = False,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_interval: float = 30.0,
    resume: bool = False,
    raise_on_error: bool = False,
    **options: Any,
) -> xr.Dataset:
    """Solve the mean-field equation of ``model`` from ``rho0`` and return the density over time.

    Parameters
    ----------
    model : SelfAttention or Kuramoto
        The velocity field X[ρ] and the noise σ (see the model's docstring).
    rho0 : Density
        Initial density on a :class:`Circle`, ``Sphere`` or ``ZonalSphere``;
        normalised to unit mass. For a Kuramoto model with a frequency law g,
        the initial density on (θ, ω) is ρ_0(θ) g(ω).
    t : array_like
        Output times, strictly increasing; ``t[0]`` is the initial time.
    method : str
        "spectral" or "finite_volume" (see :func:`methods`).
    frequency_nodes : int
        Quadrature nodes in ω for a Kuramoto frequency law.
    max_step : float
        Upper bound on every time step, on top of the scheme's own control.
    progress : bool
        Show a progress bar.
    checkpoint : path, optional
        NetCDF file written as the run goes (at most every
        ``checkpoint_interval`` seconds and at the end), atomically, with the
        SHA-256 of its data and the scheme's own state (e.g. cell averages,
        spectral coefficients, last Runge–Kutta stage, next step size). The
        path is checked and locked before any work: a device, a directory, a
        missing or read-only directory, or a path another process is writing
        is refused. A failed periodic write is logged and tried again.
    resume : bool
        Continue from ``checkpoint`` if it exists and was made with the same
        model, every scheme option (given or default), ``max_step``,
        ``frequency_nodes`` and initial density (attr ``rho0_sha256``, the
        SHA-256 of its values and grid), at times that are a prefix of ``t``.
        The outputs already there are kept, ``steps``, ``n_steps``,
        ``n_rejected`` and ``nfev`` count both segments, and the continuation
        equals an uninterrupted run bit for bit. The result's ``history``
        keeps the checkpoint's lines and appends this call's (oldest first).
    raise_on_error : bool
        Raise a :class:`solvers.SchemeError` (under-resolution, negative
        density, step-size failure) instead of returning the outputs reached
        so far with ``attrs["success"] = 0`` and the reason in ``attrs["message"]``.
    **options
        Passed to the scheme (``rtol``, ``atol``, ``cfl``, ``dt``, …). Every
        spectral scheme takes ``tail_tol`` (default 1e-6): it stops (or warns,
        ``on_underresolved="warn"``) when the spectral tail
        max_{l > 2L/3} ‖ρ_l‖/‖ρ_0‖ exceeds max(tail_tol, 100 rtol)
        (:mod:`solvers._spectral`).

    Returns
    -------
    xarray.Dataset
        ``density`` (time, *grid), ``energy``, ``mass``, ``order_parameter``,
        ``steps`` (time); for a Kuramoto frequency law also
        ``density_by_frequency`` (time, frequency, θ) and ``frequency_weight``.
        attrs hold every parameter, the method, the version and run facts
        (``success``, ``message``, ``n_steps``, ``n_rejected``, ``nfev``;
        finite volume also ``resolution_tail`` and ``resolved``, see
        :mod:`meanfield.pde._resolution`).

    Raises
    ------
    ValueError, TypeError
        Unknown method, wrong model or measure type, bad times, bad options,
        a checkpoint path that cannot be written, a finite-volume run
        estimated at more than 1e7 steps.
    CheckpointError
        (a ValueError) ``resume`` with a checkpoint that is damaged (empty,
        truncated, foreign, failing its checksum) or made by a different run
        (the differing parameter is named).
    CheckpointInUseError
        Another process is writing ``checkpoint``.

    Warns
    -----
    RuntimeWarning
        A finite-volume run estimated at more than 1e5 steps (refused beyond
        1e7; :mod:`meanfield.pde._step_estimate`); a Kuramoto run reaching half the
        rephasing time 2π/Δω of its frequency quadrature
        (:mod:`meanfield.pde._recurrence`); a finite-volume density no longer
        resolved by its grid (:mod:`meanfield.pde._resolution`).

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> circle = mf.Circle(128)
    >>> rho0 = mf.density(circle, lambda th: 1 + 0.1 * np.cos(3 * th))
    >>> ds = mf.solve(mf.SelfAttention(beta=4.0), rho0, np.linspace(0, 1, 5))
    >>> ds.density.dims
    ('time', 'theta')
    """
    if not isinstance(model, (SelfAttention, Kuramoto)):
        raise TypeError(f"model must be SelfAttention or Kuramoto, got {type(model).__name__}")
    if not isinstance(rho0, Density):
        raise TypeError(
            f"rho0 must be a Density (use mf.density, mf.uniform, mf.von_mises), got {type(rho0).__name__}; "
            "particles are advanced by mf.simulate"
        )
    times = as_times(t)
    domain = rho0.domain
    key = (domain.kind, method)
    SCHEMES = {(domain.kind, name): cls for name, cls in schemes_for(domain.grid).items()}
    if key not in SCHEMES:
        hint = " (finite volume needs ZonalSphere(d, n, nodes='cells'))" if domain.kind == "zonal" else ""
        raise ValueError(f"method must be one of {sorted(name for _, name in SCHEMES)} on {domain!r}, got "
                         f"{method!r}{hint}")
    if isinstance(model, Kuramoto):
        if domain.kind != "circle":
            raise ValueError(f"Kuramoto models live on the circle, got a {domain.kind} domain")
    check_positive_int("frequency_nodes", frequency_nodes)
    check_nonnegative("checkpoint_interval", checkpoint_interval)
    check_flag("progress", progress)
    if not max_step > 0:
        raise ValueError(f"max_step must be positive, got {max_step!r}")
    _check_options(SCHEMES[key], method, options)
    if resume and checkpoint is None:
        raise ValueError("resume=True needs a checkpoint path")
    return _solve(model, rho0, times, method, frequency_nodes, max_step, progress, checkpoint,
                  checkpoint_interval, resume, raise_on_error, options)


def _solve(model: SelfAttention | Kuramoto, rho0: Density, times: np.ndarray, method: str, frequency_nodes: int,
           max_step: float, progress: bool, checkpoint: str | os.PathLike | None, checkpoint_interval: float,
           resume: bool, raise_on_error: bool, options: dict[str, Any]) -> xr.Dataset:
    """:func:`solve` once its arguments are checked and its checkpoint path is locked."""
    domain = rho0.domain
    key = (domain.kind, method)
    SCHEMES = {(domain.kind, name): cls for name, cls in schemes_for(domain.grid).items()}
    if isinstance(model, Kuramoto):
        velocity = model.velocity_spec(frequency_nodes)
    else:
        velocity = model.velocity_spec(domain.dimension)
    scheme = SCHEMES[key](domain.grid, velocity, diffusion=model.noise, **options)
    rho_values = rho0.normalized().values
    y0 = scheme.from_grid(np.repeat(rho_values[None], velocity.n_species, axis=0))

    attrs = _attrs(model, domain, method, scheme, _effective_options(SCHEMES[key], options))
    attrs["rho0_sha256"] = fingerprint(np.asarray(rho0.values), text=repr(domain))
    if isinstance(model, Kuramoto):
        attrs["frequency_nodes"] = int(frequency_nodes)
    if np.isfinite(max_step):
        attrs["max_step"] = float(max_step)
    attrs = netcdf_safe(attrs)
    done: xr.Dataset | None = None
    first_step = None
    prior = {"n_steps": 0, "n_rejected": 0, "nfev": 0, "dt_min": np.inf, "dt_max": 0.0}
    if resume:
        done = _load_checkpoint(Path(checkpoint), attrs, times)  # type: ignore[arg-type]
    start = 0
    if done is not None:
        start = done.sizes["time"] - 1
        snapshot = snapshot_of(done)
        if "state" in snapshot:
            y0 = scheme.restore(snapshot)
        else:
            logger.warning("%s holds no scheme state: restarting from its node values, so the continuation "
                           "matches an uninterrupted run to the scheme's tolerance, not bit for bit", checkpoint)
            y0 = scheme.from_grid(_state_of(done, velocity.n_species))
        dt_next = float(done.attrs.get("checkpoint_dt_next", np.nan))
        first_step = dt_next if np.isfinite(dt_next) and dt_next > 0 else None
        for name in prior:
            value = done.attrs.get(name, prior[name])
            prior[name] = value if np.isfinite(value) else prior[name]
        logger.info("resuming from %s at t=%g", checkpoint, times[start])

    remaining = times[start:]
    check_step_count(scheme, method, y0, remaining, max_step, model.noise)
    if isinstance(model, Kuramoto):
        check_recurrence(model, frequency_nodes, float(remaining[-1] - remaining[0]), model.noise)
    resolution = ResolutionMonitor(scheme, domain, method, None if done is None else done.attrs.get("resolution_tail"))
    states = np.empty((remaining.size, velocity.n_species, *domain.shape))
    masses = np.empty(remaining.size)
    energies = np.empty(remaining.size)
    steps = np.zeros(remaining.size, dtype=int)
    live = Evolution(t=remaining, y=states)
    latest: dict[str, Any] = {"n_steps": 0}

    def record(index: int, time_: float, y: np.ndarray) -> None:
        states[index] = scheme.to_grid(y)
        resolution(time_, y)
        masses[index] = velocity.weights @ scheme.mass(y)
        energies[index] = marginal_energy(model, domain, np.tensordot(velocity.weights, states[index : index + 1],
                                                                      axes=([0], [1])))[0]
        steps[index] = live.n_steps - latest["n_steps"]
        latest["n_steps"] = live.n_steps
        if checkpoint is not None:
            dt_next = live.continuation.dt if index > 0 else (first_step or np.nan)
            latest.update(snapshot=scheme.snapshot(y), dt_next=dt_next)

    def facts(run: Any) -> dict[str, Any]:
        n_steps = int(prior["n_steps"]) + int(run.n_steps)
        return {
            "n_steps": n_steps,
            "n_rejected": int(prior["n_rejected"]) + int(run.n_rejected),
            "nfev": int(prior["nfev"]) + int(scheme.nfev),
            "dt_min": float(min(prior["dt_min"], run.dt_min)) if n_steps else np.nan,
            "dt_max": float(max(prior["dt_max"], run.dt_max)) if n_steps else np.nan,
            **resolution.facts(),
        }

    def build(n_reached: int, run: dict[str, Any] | None = None) -> xr.Dataset:
        all_states = states[:n_reached]
        all_times = remaining[:n_reached]
        all_masses = masses[:n_reached]
        all_energies = energies[:n_reached]
        all_steps = steps[:n_reached]
        if done is not None:
            all_states = np.concatenate([_state_of(done, velocity.n_species, all_times=True)[:-1], all_states])
            all_times = np.concatenate([done.time.values[:-1], all_times])
            all_masses = np.concatenate([done.mass.values[:-1], all_masses])
            all_energies = np.concatenate([done.energy.values[:-1], all_energies])
            all_steps = np.concatenate([done.steps.values, all_steps[1:]])
        attrs_run = dict(attrs, **(run or {"success": 1, "message": "checkpoint", **facts(live)}))
        ds = density_dataset(model, domain, velocity, all_times, all_states, all_masses, attrs_run, all_energies)
        ds["steps"] = ("time", all_steps, {"long_name": "accepted steps since the previous output"})
        if done is not None:
            ds.attrs = continued_history(ds.attrs, done.attrs.get("history", ""))
        return ds

    def with_state(ds: xr.Dataset) -> xr.Dataset:
        return ds.assign(snapshot_variables(latest["snapshot"])).assign_attrs(
            checkpoint_dt_next=float(latest["dt_next"]))

    observers: list[Any] = [record]
    bar = ProgressBar(remaining, description=f"{model.name} {method}") if progress else None
    if bar is not None:
        observers.append(bar)
    keeper = None if checkpoint is None else Checkpoint(checkpoint, lambda n: with_state(build(n)), checkpoint_interval)
    if keeper is not None:
        observers.append(keeper)
    try:
        result = evolve(scheme, y0, remaining, first_step=first_step, max_step=max_step, observers=observers,
                        raise_on_error=raise_on_error, record=live)
    finally:
        if bar is not None:
            bar.close()
    run = {"success": int(result.success), "message": result.message, **facts(result)}
    ds = build(result.t.size, run)
    if keeper is not None:
        keeper.save(with_state(ds))
    if not result.success:
        logger.warning("solve stopped early at t=%g: %s", ds.time.values[-1], result.message)
    return ds


def _effective_options(scheme_cls: type[Scheme], options: dict[str, Any]) -> dict[str, Any]:
    """Every option the scheme takes with the value this run uses (given, else the default)."""
    params = inspect.signature(scheme_cls.__init__).parameters
    effective = {
        name: p.default
        for name, p in params.items()
        if name not in ("self", "grid", "velocity", "diffusion")
        and p.default is not inspect.Parameter.empty
        and p.kind is not inspect.Parameter.VAR_KEYWORD
    }
    effective.update(options)
    return effective


def _check_options(scheme_cls: type[Scheme], method: str, options: dict[str, Any]) -> None:
    """Reject options the scheme does not take, naming the ones it does."""
    if "diffusion" in options:
        raise ValueError("diffusion is the model's noise σ: pass noise= to the model, not diffusion= to solve")
    params = inspect.signature(scheme_cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    accepted = [name for name in params if name not in ("self", "grid", "velocity", "diffusion")]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(f"method {method!r} does not take the option(s) {unknown}; it accepts {accepted}")


def _attrs(model: Any, domain: Any, method: str, scheme: Any, options: dict[str, Any]) -> dict[str, Any]:
    from .._version import __version__

    attrs: dict[str, Any] = dict(model.attrs)
    attrs.update(
        {
            "domain": domain.kind,
            "dimension": int(domain.dimension),
            "grid": repr(domain),
            "method": method,
            "scheme": type(scheme).__name__,
            "scheme_order": int(getattr(scheme, "order", 0)),
            "meanfield_version": __version__,
            "Conventions": "CF-1.8",
        }
    )
    for name, value in options.items():
        attrs[f"option_{name}"] = value if isinstance(value, (int, float, str)) else repr(value)
    return attrs


#: attrs of a run that a resumed run may change or that are facts of the run, not parameters
RUN_FACTS = frozenset({"success", "message", "n_steps", "n_rejected", "nfev", "dt_min", "dt_max", "sha256",
                       "meanfield_version", "initial_condition", "checkpoint_dt_next", "resolution_tail", "resolved"})


def _load_checkpoint(path: Path, attrs: dict[str, Any], times: np.ndarray) -> xr.Dataset | None:
    """The verified checkpoint at ``path`` made by the same run (every parameter, rho0's fingerprint), or None."""
    done = load_checkpoint(path)
    if done is None:
        return None
    check_same_run(done.attrs, attrs, path, RUN_FACTS)
    saved = done.time.values
    if saved.size > times.size or not np.allclose(saved, times[: saved.size], rtol=1e-12, atol=0):
        raise CheckpointError(f"checkpoint {str(path)!r} holds times that are not a prefix of t; "
                              "remove it or pass resume=False")
    return done


def _state_of(ds: xr.Dataset, n_species: int, all_times: bool = False) -> np.ndarray:
    field = ds["density_by_frequency"] if n_species > 1 else ds["density"].expand_dims("species", axis=1)
    values = np.asarray(field.values)
    return values if all_times else values[-1]
