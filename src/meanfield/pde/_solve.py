"""``solve``: the mean-field continuity equation of a model from a density.

    ∂_t ρ + div(ρ X[ρ]) = σ Δρ,   ρ(0) = ρ_0,

on the domain of ρ_0, with the scheme of :mod:`solvers` that ``method`` names or "auto" picks
(:mod:`meanfield.pde._methods`), run by the driver of every run (:func:`meanfield.runs.drive`) and
returned as an :class:`xarray.Dataset`.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import xarray as xr

from solvers import Scheme

from ..io._checkpoint import fingerprint, locks_checkpoint
from ..measures._measure import Density, check_domain
from ..models._model import DEFAULT_FREQUENCY_NODES, check_model
from ..runs import EvolveIntegrator, Run, drive
from .._validate import as_times, check_allocation, check_flag, check_nonnegative, check_positive_int, check_rtol
from .._version import __version__
from ._dataset import DensityRecord, netcdf_safe
from ._methods import METHOD_AUTO, choose_method, scheme_options
from ._recurrence import check_recurrence
from ._step_estimate import check_step_count

__all__ = ["methods", "solve"]

#: quadratures of a continuous frequency law whose nodes rephase (a law's poles and a discrete law's atoms do not:
#: they are the law itself)
REPHASING_QUADRATURES = ("gauss_hermite", "midpoint_quantiles")
#: attrs a resumed run may change: how the method was asked for (the scheme is compared as ``method``)
RESUME_MAY_DIFFER = frozenset({"method_requested", "method_reason", "initial_condition"})


def methods(domain: Any) -> list[str]:
    """Names of the schemes available on a domain's grid (``domain.schemes``), for :func:`solve`'s ``method``.

    Parameters
    ----------
    domain : Circle, Sphere or ZonalSphere
        The grid domain of the density to be solved.

    Returns
    -------
    list of str
        The scheme names, sorted: "finite_volume" and "spectral" on a :class:`Circle` and a
        ``Sphere``, "spectral" alone on a ``ZonalSphere``.

    Raises
    ------
    TypeError
        ``domain`` is not a grid domain (e.g. the string "circle").

    Examples
    --------
    >>> import meanfield as mf
    >>> mf.methods(mf.Circle(64))
    ['finite_volume', 'spectral']
    >>> mf.methods(mf.ZonalSphere(3, 32))
    ['spectral']
    """
    return sorted(check_domain(domain).schemes)


@locks_checkpoint
def solve(
    model: Any,
    rho0: Density,
    t: np.ndarray | list[float],
    method: str | type[Scheme] = METHOD_AUTO,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    dt: float | None = None,
    cfl: float | None = None,
    frequency_nodes: int | None = None,
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
    model : SelfAttention, Kuramoto, Interaction, or any model with a PDE (:mod:`meanfield.models._model`)
        The velocity field X[ρ] and the noise σ (see the model's docstring).
    rho0 : Density
        Initial density on a :class:`Circle`, ``Sphere`` or ``ZonalSphere``;
        normalised to unit mass. For a Kuramoto model with a frequency law g,
        the initial density on (θ, ω) is ρ_0(θ) g(ω).
    t : array_like
        Output times, strictly increasing; ``t[0]`` is the initial time.
    method : "auto", "spectral", "finite_volume" or a scheme class of :mod:`solvers`
        The scheme (:func:`methods` lists those of a domain). "auto" (default)
        picks what can work (:mod:`meanfield.pde._methods`): finite volume
        without noise, where the density concentrates into Diracs that no
        spectral grid resolves; spectral with noise; the only scheme of a grid
        that has one. The result records the choice and its reason (attrs
        ``method``, ``method_requested``, ``method_reason``).
    rtol, atol : float, optional
        Tolerances of the spectral schemes' error control (their defaults when None).
    dt : float, optional
        Finite volume: a fixed step (each output interval split into equal steps
        ≤ dt, validated against the stability bound); None: CFL control.
    cfl : float, optional
        Finite volume: the fraction of the stability bound its adaptive step uses.
    frequency_nodes : int, optional
        Quadrature nodes in ω for a Kuramoto frequency law (one density per
        node, :meth:`Kuramoto.frequency_quadrature`). None (default): the
        law's exact form where the model has one and the scheme takes it — a
        Lorentzian law with one-harmonic coupling is one density, the marginal
        over ω, advanced at the law's pole c - iγ (exact in ω, smooth, no
        rephasing; :meth:`Kuramoto.velocity_spec`) by the spectral scheme —
        else 32 nodes. attrs ``frequency_quadrature`` ("cauchy_pole",
        "midpoint_quantiles", "gauss_hermite") and ``frequency_nodes`` say which.
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
    checkpoint_interval : float
        Least wall-clock time in seconds ≥ 0 between two periodic writes of
        ``checkpoint`` (default 30; 0 writes at every output). The final write
        at the end of the run is made whatever the interval. Ignored without a
        checkpoint.
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
        Further options of the scheme, documented on its class (e.g.
        ``tail_tol``, ``on_underresolved``, ``dealias`` of the spectral schemes:
        they stop, or warn, when the spectral tail max_{l > 2L/3} ‖ρ_l‖/‖ρ_0‖
        exceeds max(tail_tol, 100 rtol), :mod:`solvers._spectral`; ``limiter``,
        ``cfl_growth`` of finite volume). An option the scheme does not take is
        refused by name, also ``rtol`` of a run whose method is finite volume.

    Returns
    -------
    xarray.Dataset
        ``density`` (time, then the grid's dims, e.g. ``theta``), ``energy``, ``mass``, ``order_parameter``,
        ``steps`` (time); for self-attention ``normalized_energy`` e^{-β}E_β and ``log_energy`` log E_β (time, finite
        for every β); ``free_energy`` (time) for a noisy gradient flow whose model computes it
        (USA, :class:`~meanfield.Interaction` without normalisation); for a Kuramoto frequency law on quadrature nodes also
        ``density_by_frequency`` (time, frequency, θ) and ``frequency_weight``
        (at a Lorentzian's pole ``density`` is the marginal itself).
        attrs hold every parameter, the method and why it ran, every scheme
        option (given or default, as ``option_<name>``), the version and run
        facts (``success``, ``message``, ``n_steps``, ``n_rejected``, ``nfev``,
        ``dt_min``, ``dt_max``, ``wall_time``; a scheme that does not check its
        own resolution also ``resolution_tail`` and ``resolved``, see
        :mod:`meanfield.pde._resolution`).

    Raises
    ------
    ValueError, TypeError
        Unknown method, a model without a PDE, a measure that is not a density,
        bad times, an option the scheme does not take, a checkpoint path that
        cannot be written, a finite-volume run estimated at more than 1e7 steps.
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
    >>> ds.density.dims, ds.attrs["method"]
    (('time', 'theta'), 'finite_volume')
    >>> # mass is conserved and SA increases E_β (paper 2, (3.6))
    >>> print(np.allclose(ds["mass"], 1.0), bool(np.all(np.diff(ds["energy"]) > 0)))
    True True
    >>> # checkpointed to t = 1, then resumed to t = 2: the same as one run to t = 2, bit for bit
    >>> first = mf.solve(mf.SelfAttention(beta=4.0), rho0, np.linspace(0, 1, 5),
    ...                  checkpoint="rho.nc", checkpoint_interval=0.0)
    >>> resumed = mf.solve(mf.SelfAttention(beta=4.0), rho0, np.linspace(0, 2, 9), checkpoint="rho.nc", resume=True)
    >>> whole = mf.solve(mf.SelfAttention(beta=4.0), rho0, np.linspace(0, 2, 9))
    >>> resumed.attrs["resumed_at"], np.array_equal(resumed["density"], whole["density"])
    (1.0, True)
    """
    check_model(model)
    if not isinstance(rho0, Density):
        raise TypeError(
            f"rho0 must be a Density (use mf.density, mf.uniform, mf.von_mises), got {type(rho0).__name__}; "
            "particles are advanced by mf.simulate"
        )
    times = as_times(t)
    domain = rho0.domain
    if frequency_nodes is not None:
        check_positive_int("frequency_nodes", frequency_nodes)
        points = float(np.prod(domain.shape))
        check_allocation("frequency_nodes", frequency_nodes, 8.0 * frequency_nodes * (10 * points + frequency_nodes),
                         f"a density per node on {points:.0f} grid points with the scheme's stages, and the nodes' "
                         "q x q eigenproblem")
    if rtol is not None:
        check_rtol("rtol", rtol)
    check_nonnegative("checkpoint_interval", checkpoint_interval)
    check_flag("progress", progress)
    if not max_step > 0:
        raise ValueError(f"max_step must be positive, got {max_step!r}")
    if resume and checkpoint is None:
        raise ValueError("resume=True needs a checkpoint path")
    velocity = model.grid_velocity(domain, frequency_nodes)
    scheme_cls, reason = choose_method(model, domain, method, velocity)
    if velocity.cauchy_drift and not scheme_cls.takes_cauchy_drift:  # e.g. method="finite_volume": nodes in ω
        velocity = model.grid_velocity(domain, DEFAULT_FREQUENCY_NODES)
    given = {name: value for name, value in (("rtol", rtol), ("atol", atol), ("dt", dt), ("cfl", cfl))
             if value is not None}
    effective = scheme_options(scheme_cls, {**given, **options})
    scheme = scheme_cls(domain.grid, velocity, diffusion=model.noise, **model.scheme_arguments(scheme_cls, velocity),
                        **{**given, **options})
    y0 = scheme.from_grid(np.repeat(rho0.normalized().values[None], velocity.n_species, axis=0))
    attrs = _attrs(model, domain, scheme, effective, velocity, max_step, rho0)
    attrs.update(method_requested=method if isinstance(method, str) else method.__name__, method_reason=reason)
    check_step_count(scheme, y0, times, max_step, model.noise, model.attrs)
    if attrs.get("frequency_quadrature") in REPHASING_QUADRATURES:
        check_recurrence(lambda m: model.grid_velocity(domain, m).drift, velocity.n_species,
                         float(times[-1] - times[0]), model.noise)
    integrator = EvolveIntegrator(scheme, max_step=max_step, raise_on_error=raise_on_error)
    record = DensityRecord(model, domain, velocity, scheme, lambda: integrator.record.steps_per_output, times)
    run = Run(integrator, record, y0, times, netcdf_safe(attrs), f"{model.name} {scheme.name}", RESUME_MAY_DIFFER)
    return drive(run, checkpoint=checkpoint, checkpoint_interval=checkpoint_interval, resume=resume,
                 progress=progress)


def _attrs(model: Any, domain: Any, scheme: Scheme, options: dict[str, Any], velocity: Any, max_step: float,
           rho0: Density) -> dict[str, Any]:
    """The parameters of a run: the model's, the domain, the scheme and every option, the initial density."""
    attrs: dict[str, Any] = dict(model.attrs)
    attrs.update(domain=domain.kind, dimension=int(domain.dimension), grid=repr(domain), method=scheme.name,
                 scheme=type(scheme).__name__, scheme_order=int(scheme.order), meanfield_version=__version__,
                 Conventions="CF-1.8", rho0_sha256=fingerprint(np.asarray(rho0.values), text=repr(domain)))
    for name, value in options.items():
        attrs[f"option_{name}"] = value if isinstance(value, (int, float, str)) else repr(value)
    attrs.update(model.pde_attrs(velocity))
    if np.isfinite(max_step):
        attrs["max_step"] = float(max_step)
    return attrs
