"""``simulate``: integrate a particle system and return an xarray.Dataset."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time as _time
from pathlib import Path
from typing import Any

import numpy as np
import xarray as xr

from ..measures._measure import EmpiricalMeasure
from ..measures._read_particles import SPHERE_TOLERANCE, model_domain, read_particles
from ..models._dynamics import Kuramoto, SelfAttention
from ..io._conventions import COORD_ATTRS, continued_history, describe, history_line, with_history
from ..io._checkpoint import Checkpoint, load_checkpoint, locks_checkpoint, snapshot_of, snapshot_variables
from .._validate import as_times, check_flag, check_nonnegative, check_positive_int
from .._version import __version__
from . import _ensemble
from ..models._attention import Attention
from ._compiled_statistics import order_parameters
from ._energy import energy_of_states
from ._geometry import geometry_for
from ._integrators import METHODS, check_fixed_step, integrate
from ._kuramoto_flow import KURAMOTO_METHODS, first_harmonic, integrate_moebius
from ._velocity import BLOCK_ELEMENTS, DirectSelfAttention, KuramotoVelocity, NufftSelfAttention

__all__ = ["simulate", "NUFFT_MIN_PARTICLES", "ENSEMBLE_MAX_PARTICLES", "PATHS"]

logger = logging.getLogger(__name__)

#: below this many particles per system the direct O(n²) sum beats the NUFFT path on S¹
#: (benchmarks/bench_particles_nufft.py)
NUFFT_MIN_PARTICLES = 256
#: up to this many particles per system, "auto" integrates SelfAttention without noise by dopri5 with the
#: compiled per-system kernels of :mod:`._ensemble`; measured on one thread against the "direct" path (1 and
#: 8-16 systems): 12x-3.8x faster at n = 32 on S¹, 1.7x-2.1x at n = 256 on S¹, 2.3x-1.2x at n = 256 on S²
#: and S^31, 0.7x at n = 512 on S^31
ENSEMBLE_MAX_PARTICLES = NUFFT_MIN_PARTICLES - 1
PATHS = ("auto", "direct", "nufft", "ensemble")
#: positions per block of the diagnostics (energy, order parameter) over systems × times: the memory a
#: diagnostic needs beyond the trajectory is bounded by about this (a copy of the block and its weights)
DIAGNOSTIC_BLOCK_BYTES = 32 * 2**20
ENSEMBLE_INTEGRATOR = "Dormand–Prince 5(4) in exponential charts, adaptive per system (compiled), dense output"
FREQUENCY_RULES = ("quantile", "iid")
#: settings a resumed run may change: how the path was asked for ("auto" or the path it chose,
#: which is compared as ``path``); the number of Fourier modes, a function of beta and
#: ``accuracy`` (both compared); whether x0 was projected onto the sphere (the projected x0
#: is compared through ``x0_sha1``). Run facts (steps, wall time, ``rng_state``, ``resumed_at``,
#: ``stability_rate``) are added after the check and never compared.
RESUME_MAY_DIFFER = frozenset({"path_requested", "fourier_modes", "renormalize"})


@locks_checkpoint
def simulate(
    model: SelfAttention | Kuramoto | Attention,
    x0: Any,
    t: Any,
    method: str | None = None,
    *,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    dt: float | None = None,
    seed: int | np.random.Generator | None = None,
    path: str = "auto",
    accuracy: float = 1e-10,
    domain: str | None = None,
    frequencies: Any = "quantile",
    renormalize: bool = False,
    sphere_tolerance: float = SPHERE_TOLERANCE,
    max_steps: int = 10_000_000,
    block_elements: int = BLOCK_ELEMENTS,
    progress: bool = False,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_interval: float = 30.0,
    resume: bool = False,
) -> xr.Dataset:
    r"""Integrate a particle system of self-attention or Kuramoto type.

    The particles x_i (weights w_i) follow ẋ_i = X[μ_n](t, x_i) with
    μ_n = Σ_j w_j δ_{x_j} and the model's velocity (``SelfAttention``: paper 2
    (SA)/(USA); ``Kuramoto``: θ̇_i = ω_i + K Σ_j w_j h(θ_j - θ_i); ``Attention``:
    (2.7)–(2.8) or paper 1). With noise σ > 0 the SDE dX = X dt + √(2σ) dB on
    the manifold (generator σΔ, matching the PDE's σΔμ) is integrated by
    geodesic Euler–Maruyama.

    Parameters
    ----------
    model : SelfAttention, Kuramoto or Attention
    x0 : array_like or EmpiricalMeasure
        Angles (n,) on S¹, unit vectors (n, d) on S^{d-1}, points (n, d) in R^d
        (``Attention(projection=False)``), or a batch with a leading systems
        axis: (systems, n) angles or (systems, n, d) points. A 2-D array is
        read as points (n, d) unless ``domain="circle"`` or the model is
        ``Kuramoto``.
    t : array_like
        Output times, strictly increasing; t[0] is the initial time.
    method : {"dopri5", "rk4", "euler", "euler-maruyama", "moebius"}, optional
        Default "dopri5" (adaptive, error control by ``rtol``/``atol``); with
        noise > 0 "euler-maruyama" (required); for a Kuramoto model whose h
        has one harmonic (h = sin, sin(u + α)) and no noise "moebius": the
        natural frequencies are integrated exactly (cost independent of
        max|ω_i|), order 4, adaptive with ``rtol``/``atol`` on the order
        parameter Z = Σ w_j e^{iθ_j}, or fixed step with ``dt``
        (:mod:`meanfield.particles._kuramoto_flow`). Other fixed-step methods
        need ``dt``. See :mod:`meanfield.particles._integrators`.
    rtol, atol : float
        Local error tolerances of the adaptive method (chart coordinates).
    dt : float, optional
        Step of fixed-step methods (each output interval is split into equal
        steps h ≤ dt). A step with h·L above the method's stability limit (2
        for Euler and Euler–Maruyama, 2.785 for RK4), L the estimated rate of
        the velocity (:func:`._integrators.check_fixed_step`), is an error.
    seed : int, Generator or None
        Randomness of the noise and of "iid" frequencies; recorded in attrs.
        With noise, the generator's state at the last output is stored in the
        attr ``rng_state`` (JSON) so that a resumed run continues the stream.
    path : {"auto", "direct", "nufft", "ensemble"}
        Velocity evaluation: direct O(n²) blocked BLAS sums, (S¹, SA/USA)
        NUFFT, or (SelfAttention on S¹ or S^{d-1}, no noise, dopri5) compiled
        per-system kernels (:mod:`._ensemble`): each system takes its own
        adaptive steps, in parallel over systems, so a system's trajectory is
        the same bit for bit alone or in a batch of any size. "auto" takes
        "ensemble" where it applies and n ≤ ``ENSEMBLE_MAX_PARTICLES``, else
        "nufft" for n ≥ ``NUFFT_MIN_PARTICLES`` on S¹, else "direct".
        Kuramoto models always use their O(n K_h) Fourier moments.
    accuracy : float
        Relative accuracy of the NUFFT kernel sums (Fourier truncation and
        finufft tolerance); on that path the energies are Fourier sums of the
        same truncation, relative error ≤ ``accuracy``, O(n) per output.
    domain : {"circle", "sphere", "euclidean"}, optional
        How a plain array ``x0`` is read; the rule (``domain``, else the
        model, else the shape) is the one of ``energy``, ``velocity`` and
        ``wasserstein``. An EmpiricalMeasure on another domain is refused.
    frequencies : "quantile", "iid" or array
        Kuramoto natural frequencies ω_i: midpoint quantiles F⁻¹((i+1/2)/n)
        of the model's law (default), iid draws, or given values (n,) /
        (systems, n). Ignored for identical oscillators.
    renormalize : bool
        Project x0 onto the sphere instead of rejecting points off it.
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of x0 on S^{d-1}.
    max_steps : int
        Maximum number of steps (adaptive: accepted + rejected, of each system
        on the "ensemble" path; fixed-step: a run stops before the output
        interval that would exceed it), then ``success = 0``.
    block_elements : int
        Largest number of Gram-matrix entries alive at once (memory bound).
    progress : bool
        Show a tqdm progress bar over output times.
    checkpoint : path, optional
        NetCDF file rewritten with the outputs reached so far (at most every
        ``checkpoint_interval`` seconds of wall time, and at the end), with the
        SHA-256 of its data, which ``resume`` verifies. The path is checked and
        locked before any work (a device, a directory, a missing or read-only
        directory, or a path another process writes is refused); a failed
        periodic write is logged and tried again.
    resume : bool
        Continue from ``checkpoint`` if it exists and was made with the same
        model parameters and run settings (every such attr except those in
        ``RESUME_MAY_DIFFER``), seed and x0 (attr ``x0_sha1``, the SHA-1 of
        the initial positions and weights) for a prefix of ``t``. A periodic
        write holds the integrator's own state at its last output (``scheme_*``
        variables: the unreduced state; for adaptive methods the step size,
        controller memory and, for dopri5, the start and FSAL velocity of the
        step that reached it) and the counts so far; the integrator restarts
        from it and, with noise, the saved generator state continues the noise
        stream, so an interrupted and resumed run equals an uninterrupted one
        bit for bit (steps, rejected steps and evaluations count both
        segments). A run's last write holds no integrator state: its last
        positions start the continuation. With ``seed=None`` the checkpoint's
        seed is used. The result's ``history`` keeps the checkpoint's lines
        and appends this call's (oldest first).

    Returns
    -------
    xarray.Dataset
        ``positions`` (time, particle) on S¹ (angles in [0, 2π)), else (time,
        particle, component), with a leading ``system`` dim for batches;
        ``energy`` (E_β, or Kuramoto's energy when h is odd; absent for
        ``Attention``), ``mass`` Σ_i w_i (= 1), ``order_parameter`` |Σ w_i x_i|,
        ``weights``; attrs with
        the model's parameters, method, tolerances, path, integrator, seed,
        steps, nfev (sums over systems), ``max_sphere_deviation`` (max_i,t | |x_i(t)| - 1 |),
        ``success``/``message`` and wall time. The diagnostics (energy, order parameter) are
        computed in blocks of bounded memory (``DIAGNOSTIC_BLOCK_BYTES``); one that fails is
        left out, logged and named in attr ``diagnostic_errors``, never costing the positions.

    Raises
    ------
    ValueError, TypeError
        Unknown model/method/path, x0 of the wrong shape or off the sphere,
        t not increasing, missing or non-positive dt, a dt beyond the stability
        bound, non-positive tolerances, β > 709.78 for USA (e^β overflows), a
        checkpoint made by a different run.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.simulate(mf.SelfAttention(1.0), np.linspace(0, 3, 8), [0.0, 1.0])
    >>> ds["positions"].shape
    (2, 8)
    """
    if not isinstance(model, (SelfAttention, Kuramoto, Attention)):
        raise TypeError(f"model must be SelfAttention, Kuramoto or Attention, got {type(model).__name__}")
    times = as_times(t)
    states, weights, kind, batch = _read_initial(model, x0, domain, renormalize, sphere_tolerance)
    noise = float(model.noise)
    exact_drift = isinstance(model, Kuramoto) and first_harmonic(model.interaction)
    if method is None:
        method = "euler-maruyama" if noise > 0 else ("moebius" if exact_drift else "dopri5")
    all_methods = {**METHODS, **KURAMOTO_METHODS}
    if method not in all_methods:
        raise ValueError(f"method must be one of {sorted(all_methods)}, got {method!r}")
    if noise > 0 and method != "euler-maruyama":
        raise ValueError(f"noise = {noise} > 0 needs method='euler-maruyama', got method={method!r}")
    if method in KURAMOTO_METHODS and not exact_drift:
        raise ValueError(f"method={method!r} needs a Kuramoto model whose interaction has one harmonic "
                         f"(ĥ_k = 0 for k >= 2), got {model.name}; use method='dopri5'")
    if method == "moebius":
        if dt is not None and not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive time step (or None: adaptive) for method='moebius', got {dt!r}")
    elif method != "dopri5":
        if dt is None or not np.isfinite(dt) or dt <= 0:
            raise ValueError(f"dt must be a positive time step for method={method!r}, got {dt!r}")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    check_positive_int("block_elements", block_elements)
    check_nonnegative("checkpoint_interval", checkpoint_interval)
    check_flag("progress", progress)
    check_positive_int("max_steps", max_steps)
    if not (np.isfinite(accuracy) and 1e-15 <= accuracy < 1):
        raise ValueError(f"accuracy must lie in [1e-15, 1), got {accuracy!r}")

    seed_value = _seed_record(seed)
    saved_run = None
    if resume:
        if checkpoint is None:
            raise ValueError("resume=True needs a checkpoint path")
        saved_run = load_checkpoint(checkpoint)
        saved_seed = None if saved_run is None else str(saved_run.attrs.get("seed", ""))
        if seed is None and saved_seed is not None and saved_seed.lstrip("-").isdigit():
            seed_value = int(saved_seed)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed_value)
    omega = None
    if isinstance(model, Kuramoto):
        omega = _frequencies(model, frequencies, states.shape, rng)
        velocity = KuramotoVelocity(model.coupling, model.interaction, omega, weights)
    elif isinstance(model, SelfAttention):
        velocity = _self_attention_velocity(model, kind, path, weights, accuracy, block_elements)
    else:
        velocity = model.velocity(states.shape[-1], block_elements)
    used_path = getattr(velocity, "path", "direct")
    if path == "nufft" and used_path != "nufft":
        raise ValueError(f"path='nufft' is available for SelfAttention on the circle only, got {model.name} "
                         f"on a {kind!r} domain")
    ensemble_applies = isinstance(model, SelfAttention) and noise == 0 and method == "dopri5" and kind != "euclidean"
    if path == "ensemble" and not ensemble_applies:
        raise ValueError(f"path='ensemble' is available for SelfAttention without noise and method='dopri5' on "
                         f"the circle or a sphere, got {type(model).__name__} with noise = {noise}, "
                         f"method={method!r} on a {kind!r} domain")
    if path == "ensemble" or (path == "auto" and ensemble_applies and states.shape[1] <= ENSEMBLE_MAX_PARTICLES):
        used_path = "ensemble"

    geometry = geometry_for(kind)
    run_attrs = {
        "method": method,
        "integrator": ENSEMBLE_INTEGRATOR if used_path == "ensemble" else all_methods[method],
        "rtol": rtol, "atol": atol, "dt": -1.0 if dt is None else float(dt),
        "path": used_path, "path_requested": path,
        "accuracy": accuracy if used_path == "nufft" else -1.0,
        "fourier_modes": getattr(velocity, "n_modes_half", -1),
        "seed": str(seed_value),
        "noise_convention": "dX = X dt + sqrt(2 sigma) dB on the manifold (generator sigma*Laplacian), "
                            "geodesic Euler-Maruyama",
        "renormalize": int(renormalize),
        "x0_sha1": _fingerprint(states, weights),
    }
    done = None
    if saved_run is not None:
        done = _check_checkpoint(saved_run, Path(checkpoint), {**model.attrs, **run_attrs}, times, states.shape,
                                 omega)
    previous: list[np.ndarray] = []
    energy_rows: list[np.ndarray] = []  # per output, computed once as outputs are built
    scheme = None  # the integrator's own state at the checkpoint's last output, when it was saved there
    if done is not None:
        saved = _states_of(done, batch)
        previous = list(np.moveaxis(saved, 1, 0)[:-1])
        states = saved[:, -1]
        scheme = snapshot_of(done) or None
        if "energy" in done:  # the saved values: on S¹ the saved angles are reduced mod 2π
            energy = np.asarray(done["energy"].values, dtype=float)
            energy_rows = list(np.moveaxis(energy if batch else energy[None], -1, 0))
        if noise > 0:
            if "rng_state" not in done.attrs:
                raise ValueError(f"checkpoint {str(checkpoint)!r} holds no noise generator state (attr rng_state); "
                                 f"remove it or pass resume=False")
            rng.bit_generator.state = json.loads(done.attrs["rng_state"])
        logger.info("resuming from %s at t=%g", checkpoint, times[len(previous)])
    remaining = times[len(previous):]
    if method not in ("dopri5", "moebius") and remaining.size > 1:
        run_attrs["stability_rate"] = check_fixed_step(geometry, velocity, method, remaining, states, dt)
    reached: list[np.ndarray] = []
    rng_states: list[str] = []
    # record["snapshot"]: the integrator's state at the output of index record["index"] (of ``remaining``)
    record: dict[str, Any] = {} if scheme is None else {"snapshot": lambda: scheme}

    def build(n_reached: int, facts: dict[str, Any] | None = None) -> xr.Dataset:
        traj = np.stack(previous + reached[:n_reached], axis=1)  # (systems, time, n[, d])
        run = facts or {"success": 1, "message": "checkpoint", "max_sphere_deviation": geometry.deviation(traj)}
        if noise > 0:
            run = {**run, "rng_state": rng_states[n_reached - 1]}
        ds = _dataset(model, traj, weights, kind, batch, times[: traj.shape[1]], omega, {**run_attrs, **run},
                      energy_rows)
        if done is not None:
            ds.attrs = continued_history(ds.attrs, done.attrs.get("history", ""))
        if facts is None and record.get("index") == n_reached - 1 and "snapshot" in record:
            state = record["snapshot"]()
            ds.attrs.update({name: int(state[name]) for name in ("n_steps", "n_rejected", "nfev")})
            ds = ds.assign(snapshot_variables(state))
        return ds

    keeper = Checkpoint(checkpoint, build, checkpoint_interval) if checkpoint is not None else None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=remaining.size - 1, desc="simulate")

    def on_output(i: int, x: np.ndarray) -> None:
        record["index"] = len(reached)
        reached.append(x.copy())
        if noise > 0:
            rng_states.append(json.dumps(rng.bit_generator.state))
        if bar is not None and i > 0:
            bar.update(1)
        if keeper is not None:
            keeper(i, remaining[i], x)

    resumable = {"record": record if keeper is not None else None, "resume": scheme}
    start = _time.perf_counter()
    try:
        if used_path == "ensemble":
            result = _ensemble.integrate(_ensemble.CIRCLE if kind == "circle" else _ensemble.SPHERE, states,
                                         weights, model.beta, model.normalized, remaining, rtol=rtol, atol=atol,
                                         max_steps=max_steps, on_output=on_output,
                                         every_output=progress or checkpoint is not None, **resumable)
        elif method == "moebius":
            result = integrate_moebius(model.coupling, model.interaction, omega, weights, states, remaining, rtol=rtol,
                                       atol=atol, dt=dt, max_steps=max_steps, on_output=on_output, **resumable)
        else:
            result = integrate(geometry, velocity, states, remaining, method, rtol=rtol, atol=atol, dt=dt,
                               noise=noise, rng=rng, max_steps=max_steps, on_output=on_output, **resumable)
    finally:
        if bar is not None:
            bar.close()
    wall = _time.perf_counter() - start
    if not result.success:
        logger.warning("simulate stopped early: %s", result.message)
    # counts of the first segment, when the checkpoint recorded them and the integrator did not take them
    # back with its saved state (the result's counts are then totals)
    prior = {name: int(done.attrs.get(name, 0)) if done is not None and scheme is None else 0
             for name in ("n_steps", "n_rejected", "nfev")}
    facts = {
        "n_steps": prior["n_steps"] + result.n_steps, "n_rejected": prior["n_rejected"] + result.n_rejected,
        "nfev": prior["nfev"] + result.nfev,
        "min_step": float(min(result.step_sizes)) if result.step_sizes else -1.0,
        "max_step": float(max(result.step_sizes)) if result.step_sizes else -1.0,
        "max_sphere_deviation": max(geometry.deviation(x) for x in previous + reached),
        "success": int(result.success), "message": result.message,
        "wall_time": wall, "resumed_at": float(remaining[0]) if done is not None else -1.0,
    }
    ds = build(len(reached), facts)
    if keeper is not None:
        keeper.save(ds)
    return ds


def _fingerprint(states: np.ndarray, weights: np.ndarray) -> str:
    """SHA-1 of the float64 bytes of the initial states and weights."""
    digest = hashlib.sha1(np.ascontiguousarray(states, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(weights, dtype=float).tobytes())
    return digest.hexdigest()


def _check_checkpoint(done: xr.Dataset, path: Path, attrs: dict[str, Any], times: np.ndarray,
                      shape: tuple[int, ...], omega: np.ndarray | None) -> xr.Dataset:
    """The saved run ``done``, checked against this run's parameters, x0, seed and times.

    Every key of ``attrs`` (the model's parameters and this run's settings) must equal the
    checkpoint's attr of that name, except those in :data:`RESUME_MAY_DIFFER`.
    """
    if str(done.attrs.get("x0_sha1")) != attrs["x0_sha1"]:
        raise ValueError(
            f"checkpoint {str(path)!r} was made from a different x0 (SHA-1 of initial positions and weights "
            f"{done.attrs.get('x0_sha1')}, this run has {attrs['x0_sha1']}); remove it or pass resume=False"
        )
    for name, value in attrs.items():
        if name not in RESUME_MAY_DIFFER and str(done.attrs.get(name)) != str(value):
            raise ValueError(
                f"checkpoint {str(path)!r} was made with {name}={done.attrs.get(name)}, "
                f"but this run has {name}={value}; remove it or pass resume=False"
            )
    saved = done["time"].values
    if saved.size > times.size or not np.allclose(saved, times[: saved.size], rtol=1e-12, atol=0):
        raise ValueError(f"checkpoint {str(path)!r} holds times that are not a prefix of t")
    if int(done.attrs.get("n_particles", -1)) != shape[1] or int(done.attrs.get("n_systems", -1)) != shape[0]:
        raise ValueError(f"checkpoint {str(path)!r} holds a different number of particles or systems")
    if omega is not None and "frequency" in done:
        saved_omega = np.asarray(done["frequency"].values, dtype=float).reshape(omega.shape)
        if not np.array_equal(saved_omega, omega):
            raise ValueError(f"checkpoint {str(path)!r} was made with different natural frequencies; "
                             f"remove it or pass resume=False")
    return done


def _states_of(ds: xr.Dataset, batch: bool) -> np.ndarray:
    """Saved positions as integrator states (systems, time, n[, d])."""
    values = np.asarray(ds["positions"].values, dtype=float)
    return values if batch else values[None]


def _read_initial(model, x0, domain, renormalize, tol):
    if domain is not None and domain not in ("circle", "sphere", "euclidean"):
        raise ValueError(f"domain must be 'circle', 'sphere' or 'euclidean', got {domain!r}")
    kind = domain or (x0.kind if isinstance(x0, EmpiricalMeasure) else model_domain(model))
    if kind is not None:
        _check_model_domain(model, kind)
    read = read_particles(x0, name="x0", domain=domain, model=model, renormalize=renormalize, tolerance=tol)
    return read.points, read.weights, read.kind, read.batched


def _check_model_domain(model, kind):
    if isinstance(model, Kuramoto) and kind != "circle":
        raise ValueError(f"Kuramoto particles are angles on the circle, got domain {kind!r}")
    if isinstance(model, SelfAttention) and kind == "euclidean":
        raise ValueError("SelfAttention particles live on the circle or a sphere, got domain 'euclidean'; "
                         "use Attention(projection=False) for R^d")
    if isinstance(model, Attention):
        want = "sphere" if model.projection else "euclidean"
        if kind != want:
            raise ValueError(f"Attention(projection={model.projection}) needs points on the {want} domain "
                             f"(shape (n, d)), got domain {kind!r}")


def _self_attention_velocity(model, kind, path, weights, accuracy, block_elements):
    n = weights.shape[1]
    use_nufft = kind == "circle" and (path == "nufft" or (path == "auto" and n >= NUFFT_MIN_PARTICLES))
    if use_nufft:
        return NufftSelfAttention(model.beta, model.normalized, weights, accuracy)
    return DirectSelfAttention(model.beta, model.normalized, weights, kind, block_elements)


def _seed_record(seed):
    if isinstance(seed, np.random.Generator):
        return "generator"
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, a numpy Generator or None, got {seed!r}")
        return int(seed)
    raise TypeError(f"seed must be an int, a numpy Generator or None, got {seed!r}")


def _frequencies(model: Kuramoto, rule: Any, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    law = model.frequencies
    if isinstance(rule, str) and rule not in FREQUENCY_RULES:
        raise ValueError(f"frequencies must be 'quantile', 'iid' or an array, got {rule!r}")
    if law is None or not hasattr(law, "ppf"):
        return np.full(shape, 0.0 if law is None else float(law))
    if isinstance(rule, str):
        n = shape[-1]
        if rule == "quantile":
            return np.broadcast_to(law.ppf((np.arange(n) + 0.5) / n), shape).copy()
        return law.rvs(size=shape, random_state=rng)
    omega = np.asarray(rule, dtype=float)
    try:
        omega = np.broadcast_to(omega, shape).copy()
    except ValueError:
        raise ValueError(f"frequencies must have shape {shape[-1:]} or {shape}, got {omega.shape}") from None
    if not np.all(np.isfinite(omega)):
        raise ValueError("frequencies must be finite")
    return omega


def _diagnostic(name: str, failures: list[str], traj: np.ndarray, weights: np.ndarray, func) -> np.ndarray | None:
    """``func(states, weights)`` (one value per configuration) over every (system, time) of ``traj``.

    Computed in blocks of at most :data:`DIAGNOSTIC_BLOCK_BYTES` of positions (each block copied
    once, its weights repeated once), so the memory beyond the trajectory is bounded for any
    ensemble. A diagnostic that fails (for any reason) is logged and named in ``failures``
    and None is returned: the integrated positions are never lost to a diagnostic.
    """
    n_sys, n_t = traj.shape[:2]
    per_output = max(int(np.prod(traj.shape[2:])) * 8, 1)
    per_block = max(1, DIAGNOSTIC_BLOCK_BYTES // per_output)
    t_len = min(n_t, per_block)
    s_len = max(1, per_block // t_len)
    out = np.empty((n_sys, n_t))
    try:
        for s0 in range(0, n_sys, s_len):
            for t0 in range(0, n_t, t_len):
                block = np.ascontiguousarray(traj[s0:s0 + s_len, t0:t0 + t_len], dtype=float)
                ns, nt = block.shape[:2]
                values = func(block.reshape(ns * nt, *block.shape[2:]), np.repeat(weights[s0:s0 + ns], nt, axis=0))
                out[s0:s0 + ns, t0:t0 + nt] = np.reshape(values, (ns, nt))
    except Exception as exc:  # noqa: BLE001 -- a diagnostic never costs the integrated result
        logger.exception("simulate: the %s diagnostic failed; positions are returned without it", name)
        failures.append(f"{name}: {type(exc).__name__}: {exc}")
        return None
    return out


def _dataset(model, traj, weights, kind, batch, times, omega, run_attrs, energy_rows=None) -> xr.Dataset:
    """Dataset of a trajectory (systems, time, n[, d]); ``energy_rows`` caches the energies of the outputs
    (one array over systems per time), extended here to every time of ``traj``."""
    n_sys, n_t, n = traj.shape[:3]
    sys_dims = ("system",) if batch else ()
    sel = slice(None) if batch else 0
    positions = np.remainder(traj, 2 * np.pi) if kind == "circle" else traj
    pos_dims = (*sys_dims, "time", "particle") + (() if kind == "circle" else ("component",))
    data = {
        "positions": (pos_dims, positions[sel], {
            "long_name": "angle" if kind == "circle" else "position",
            "units": "rad" if kind == "circle" else "1"}),
        "weights": ((*sys_dims, "particle"), weights[sel], {"long_name": "particle weight"}),
        "mass": ((*sys_dims, "time"), np.broadcast_to(weights.sum(axis=-1)[:, None], (n_sys, n_t))[sel],
                 {"long_name": "total weight sum_i w_i", "units": "1"}),
    }
    failures: list[str] = []
    circle = kind == "circle"
    if kind != "euclidean":
        order = _diagnostic("order_parameter", failures, traj, weights,
                            lambda x, w: order_parameters(x[..., None] if circle else x, w, circle))
        if order is not None:
            data["order_parameter"] = ((*sys_dims, "time"), order[sel], {"long_name": "|sum_i w_i x_i|"})
    has_energy = isinstance(model, SelfAttention) or (isinstance(model, Kuramoto) and model.is_gradient)
    # the NUFFT path's energies are its Fourier sums at its accuracy (O(n), not O(n²))
    energy_accuracy = run_attrs["accuracy"] if run_attrs.get("path") == "nufft" else None
    if has_energy:
        rows = [] if energy_rows is None else energy_rows  # the outputs' energies computed so far
        if len(rows) < n_t:
            new = _diagnostic("energy", failures, traj[:, len(rows):], weights,
                              lambda x, w: energy_of_states(model, x, w, kind, energy_accuracy))
            if new is not None:
                rows.extend(new.T)
        if len(rows) >= n_t:
            data["energy"] = ((*sys_dims, "time"), np.stack(rows[:n_t], axis=1)[sel],
                              {"long_name": "interaction energy E"})
    if omega is not None:
        data["frequency"] = ((*sys_dims, "particle"), omega[sel], {"long_name": "natural frequency"})
    coords = {
        "time": ("time", times, COORD_ATTRS["time"]),
        "particle": ("particle", np.arange(n), {"long_name": "particle index"}),
    }
    if batch:
        coords["system"] = ("system", np.arange(n_sys), {"long_name": "independent system"})
    if kind != "circle":
        coords["component"] = ("component", np.arange(traj.shape[-1]), {"long_name": "coordinate in R^d", "units": "1"})
    attrs = {**model.attrs, **run_attrs, "domain": kind, "n_particles": n, "n_systems": n_sys,
             "dimension": 2 if kind == "circle" else int(traj.shape[-1]), "meanfield_version": __version__}
    if failures:
        attrs["diagnostic_errors"] = "; ".join(failures)
    attrs = with_history(describe(attrs), history_line(f"meanfield.simulate(model={model!r}, "
                                                       f"method={attrs.get('method', '?')!r})"))
    return xr.Dataset(data, coords=coords, attrs=attrs)
