"""``simulate``: integrate a particle system and return an xarray.Dataset.

The model answers for its particles (:mod:`meanfield.models._model`), the integrator is chosen in
:mod:`._integrators`, the outputs are kept by :class:`._record.ParticleRecord`, and the run goes through
the driver of every run (:func:`meanfield.runs.drive`: progress, checkpoint, resume).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import xarray as xr

from ..io._checkpoint import load_checkpoint, locks_checkpoint
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles
from ..models._model import check_model
from ..models._self_attention_sums import BLOCK_ELEMENTS
from ..runs import Run, drive
from .._validate import as_times, check_flag, check_nonnegative, check_positive, check_positive_int, check_rtol
from ._integrators import METHODS, PATHS, particle_integrator
from ._layers import LAYER_TIME_TOLERANCE, SPLITS, layer_counts
from ._record import ParticleRecord

__all__ = ["simulate"]

#: settings a resumed run may change: how the path was asked for ("auto" or the path it chose,
#: which is compared as ``path``); the number of Fourier modes, a function of beta and
#: ``accuracy`` (both compared); whether x0 was projected onto the sphere (the projected x0
#: is compared through ``x0_sha1``).
RESUME_MAY_DIFFER = frozenset({"path_requested", "fourier_modes", "renormalize"})
NOISE_CONVENTION = ("dX = X dt + sqrt(2 sigma) dB on the manifold (generator sigma*Laplacian), "
                    "geodesic Euler-Maruyama")


@locks_checkpoint
def simulate(
    model: Any,
    x0: Any,
    t: Any,
    method: str | None = None,
    *,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    dt: float | None = None,
    split: str | None = None,
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
    model : SelfAttention, Kuramoto, Attention, HardmaxAttention, Interaction, or any model with particles
        (:mod:`meanfield.models._model`)
    x0 : array_like or EmpiricalMeasure
        Angles (n,) on S¹, unit vectors (n, d) on S^{d-1}, points (n, d) in R^d
        (``Attention(projection=False)``), or a batch with a leading systems
        axis: (systems, n) angles or (systems, n, d) points. A 2-D array is
        read as points (n, d) unless ``domain="circle"`` or the model is
        ``Kuramoto``.
    t : array_like
        Output times, strictly increasing; t[0] is the initial time.
    method : {"dopri5", "rk4", "euler", "euler-maruyama", "moebius", "layers", "filippov"}, optional
        Default: the model's ``default_particle_method``: "dopri5" (adaptive,
        error control by ``rtol``/``atol``); with noise > 0 "euler-maruyama"
        (required); for a Kuramoto model whose h has one harmonic (h = sin,
        sin(u + α)), or an Interaction whose kernel has one (W = a + bt), and no noise "moebius": the
        natural frequencies are integrated exactly (cost independent of
        max|ω_i|), order 4, adaptive with ``rtol``/``atol`` on the order
        parameter Z = Σ w_j e^{iθ_j}, or fixed step with ``dt``
        (:mod:`meanfield.particles._moebius`). Other fixed-step methods
        need ``dt``. A model with an integrator of its own takes only that one
        (``HardmaxAttention``: "filippov", the event-driven Filippov flow of
        :mod:`meanfield.models._filippov`, error control by ``rtol``/``atol``). "layers": the discrete
        layers of a Transformer, x_{k+1} = Π(x_k + h v(x_k)) with h = ``dt`` and Π the layer
        normalisation x/|x| on S^{d-1} (the identity in R^d; on S¹ the map of the unit vectors, read back
        as the angle θ + arctan(h θ̇)), one velocity evaluation per layer; the layers are the model, so
        every output time must be t[0] plus whole layers, and there is no error control (``rtol`` and
        ``atol`` do not apply: ignored, recorded as -1). As an approximation of the flow it has order 1
        in h (:mod:`meanfield.particles._layers`). See :mod:`meanfield.particles._integrators`.
    rtol, atol : float
        Local error tolerances of the adaptive method (chart coordinates); not used by "layers".
    dt : float, optional
        Step of fixed-step methods (each output interval is split into equal
        steps h ≤ dt). A step with h·L above the method's stability limit (2
        for Euler and Euler–Maruyama, 2.785 for RK4), L the estimated rate of
        the velocity (:func:`._chart_steppers.check_fixed_step`), is an error. With
        ``method="layers"``: the layer step h itself (no stability bound: the layers are the model), and
        every interval of ``t`` must be a whole number of layers (to a relative 1e-12).
    split : {None, "lie-trotter"}
        With ``method="layers"``, a layer taken as sub-layers, each normalised: "lie-trotter" is
        x ← Π(x + h v_att(x)), then x ← Π(x + h v_ffn(x)) for an ``Attention`` with a feed-forward term
        (still order 1). None (default): one layer of the whole velocity.
    seed : int, Generator or None
        Randomness of the noise and of "iid" frequencies; recorded in attrs.
        With noise, the generator's state at the last output is stored in the
        attr ``rng_state`` (JSON) so that a resumed run continues the stream.
    path : {"auto", "direct", "nufft", "fourier", "ensemble"}
        Velocity evaluation: direct O(n²) blocked BLAS sums, (S¹, SA/USA and Interaction)
        NUFFT, (S¹, an Interaction kernel of finitely many harmonics) the exact O(nK) Fourier moments, or (SelfAttention on S¹ or S^{d-1}, no noise, dopri5) compiled
        per-system kernels (:mod:`._ensemble`): each system takes its own
        adaptive steps, in parallel over systems, so a system's trajectory is
        the same bit for bit alone or in a batch of any size. "auto" takes
        "ensemble" where it applies and n ≤ ``ENSEMBLE_MAX_PARTICLES``, else
        "nufft" for n ≥ ``NUFFT_MIN_PARTICLES`` on S¹, else "direct"; the path
        taken is the attr ``path`` (:mod:`meanfield.particles._integrators`).
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
        Allowed | |x_i| - 1 | of x0 on S^{d-1}, and of every output: a run
        whose particles drift further off the sphere ends with
        ``success = 0`` and says so in ``message``, as do non-finite
        positions, energies or order parameters and angles that lost their
        digits (:meth:`._record.ParticleRecord.failure`).
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
        SHA-256 of its data, which ``resume`` verifies, and the integrator's own
        state there (``scheme_*`` variables). A file written while the run goes
        on says ``success = 0``. The path is checked and locked before any work
        (a device, a directory, a missing or read-only directory, or a path
        another process writes is refused); a failed periodic write is logged
        and tried again.
    checkpoint_interval : float
        Least wall-clock time in seconds ≥ 0 between two periodic writes of
        ``checkpoint`` (default 30; 0 writes at every output). The final
        write at the end of the run is made whatever the interval. Ignored
        without a checkpoint.
    resume : bool
        Continue from ``checkpoint`` if it exists and was made with the same
        model parameters and run settings (every such attr except those in
        ``RESUME_MAY_DIFFER``), seed and x0 (attr ``x0_sha1``, the SHA-1 of
        the initial positions, weights and natural frequencies) for a prefix
        of ``t``. Every write holds the integrator's continuation after its
        last output (``scheme_*`` variables: the unreduced state; for adaptive
        methods the step size, controller memory and, for dopri5, the start and
        FSAL velocity of the step that reached it) and the counts so far; the
        integrator restarts from it and, with noise, the saved generator state
        continues the noise stream, so an interrupted and resumed run equals an
        uninterrupted one bit for bit (steps, rejected steps and evaluations
        count both segments). The run driver of :mod:`meanfield.runs` does
        this for every run. With ``seed=None`` the checkpoint's seed is used.
        The result's ``history`` keeps the checkpoint's lines and appends this
        call's (oldest first).

    Returns
    -------
    xarray.Dataset
        ``positions`` (time, particle) on S¹ (angles in [0, 2π)), else (time,
        particle, component), with a leading ``system`` dim for batches;
        ``energy`` (E_β, or Kuramoto's energy when h is odd; for ``Attention`` only with the
        gradient structure V = c QᵀK of :meth:`Attention.particle_energy`, absent otherwise; inf
        beyond the largest double), for self-attention also
        ``normalized_energy`` e^{-β}E_β and ``log_energy`` log E_β (finite for every
        β), ``mass`` Σ_i w_i (= 1), ``order_parameter`` |Σ w_i x_i|,
        ``weights``; attrs with
        the model's parameters, method, tolerances, path, integrator, seed,
        ``n_steps``, ``n_rejected``, ``nfev`` (sums over systems), ``dt_min``,
        ``dt_max``, ``max_sphere_deviation`` (max_i,t | |x_i(t)| - 1 |), with "layers" ``layer_step``
        h, ``order`` (1), ``split`` and ``integrator`` (the layer map in words),
        ``success``/``message`` and wall time. The diagnostics (energy, order parameter) are
        computed in blocks of bounded memory (``DIAGNOSTIC_BLOCK_BYTES``); one that fails is
        left out, logged and named in attr ``diagnostic_errors``, never costing the positions.

    Raises
    ------
    ValueError, TypeError
        Unknown model/method/path, x0 of the wrong shape or off the sphere,
        t not increasing, missing or non-positive dt, a dt beyond the stability
        bound, output times or switching times of the model (``DepthVaryingAttention``) that are not whole
        layers of dt (method "layers"), a ``split`` without
        method "layers" or for a model without a feed-forward term, non-positive tolerances, β > 709.78 for USA (e^β overflows), a
        checkpoint made by a different run.

    Examples
    --------
    >>> import numpy as np, meanfield as mf
    >>> ds = mf.simulate(mf.SelfAttention(1.0), np.linspace(0, 3, 8), [0.0, 1.0])
    >>> ds["positions"].shape
    (2, 8)
    >>> # SA increases E_β (paper 2, (3.6)); the mass Σ_i w_i stays 1
    >>> e = ds["energy"].values
    >>> print(bool(e[1] >= e[0]), float(ds["mass"][-1]), ds.attrs["success"])
    True 1.0 1
    >>> # a checkpointed run gives the same trajectory; resuming its finished file returns it
    >>> run = mf.simulate(mf.SelfAttention(1.0), np.linspace(0, 3, 8), [0.0, 1.0],
    ...                   checkpoint="run.nc", checkpoint_interval=0.0)
    >>> again = mf.simulate(mf.SelfAttention(1.0), np.linspace(0, 3, 8), [0.0, 1.0],
    ...                     checkpoint="run.nc", resume=True)
    >>> np.array_equal(run["positions"], ds["positions"]), np.array_equal(again["positions"], ds["positions"])
    (True, True)
    """
    check_model(model)
    times = as_times(t)
    if domain is not None and domain not in ("circle", "sphere", "euclidean"):
        raise ValueError(f"domain must be 'circle', 'sphere' or 'euclidean', got {domain!r}")
    read = read_particles(x0, name="x0", domain=domain, fixed=model.particle_domain, renormalize=renormalize,
                          tolerance=sphere_tolerance)
    model.check_particles(read.geometry)
    states, weights = read.points, read.weights
    method = model.default_particle_method(read.geometry) if method is None else method
    _check_settings(model, method, dt, rtol, atol, path, block_elements, checkpoint_interval, progress, max_steps,
                    accuracy)
    _check_layers(model, method, dt, split, times)
    if resume and checkpoint is None:
        raise ValueError("resume=True needs a checkpoint path")
    seed_value = _seed_record(seed)
    if resume and seed is None:
        seed_value = _saved_seed(checkpoint, seed_value)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed_value)
    omega = model.natural_frequencies(frequencies, states.shape, rng)
    chosen = particle_integrator(model, read.geometry, states, weights, omega, times, method, path=path, rtol=rtol,
                                 atol=atol, dt=dt, accuracy=accuracy, block_elements=block_elements,
                                 max_steps=max_steps, rng=rng, live=progress or checkpoint is not None, split=split)
    controlled = method != "layers"
    attrs = {**model.attrs, **chosen.attrs, "rtol": rtol if controlled else -1.0, "atol": atol if controlled else -1.0,
             "dt": -1.0 if dt is None else float(dt),
             "seed": str(seed_value), "noise_convention": NOISE_CONVENTION, "renormalize": int(renormalize),
             "x0_sha1": _fingerprint(states, weights, omega), "domain": read.geometry.name,
             "dimension": int(read.geometry.dimension), "n_particles": int(states.shape[1]),
             "n_systems": int(states.shape[0])}
    record = ParticleRecord(model, read.geometry, weights, read.batched, times, states, chosen.positions,
                            chosen.state, omega, rng if model.noise > 0 else None, chosen.energy_accuracy,
                            sphere_tolerance)
    run = Run(chosen.integrator, record, chosen.y0, times, attrs, f"simulate {model.name}", RESUME_MAY_DIFFER)
    return drive(run, checkpoint=checkpoint, checkpoint_interval=checkpoint_interval, resume=resume,
                 progress=progress)


def _check_settings(model: Any, method: str, dt: float | None, rtol: float, atol: float, path: str,
                    block_elements: int, checkpoint_interval: float, progress: bool, max_steps: int,
                    accuracy: float) -> None:
    """Refuse a method or setting that does not apply, naming it."""
    own = model.particle_methods
    if own and method not in own:
        raise ValueError(f"{model.name} is integrated by its own method {sorted(own)} (the default), got "
                         f"method={method!r}")
    if not own and method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if model.noise > 0 and method != "euler-maruyama":
        raise ValueError(f"noise = {model.noise} > 0 needs method='euler-maruyama', got method={method!r}")
    if method == "moebius":
        if dt is not None and not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive time step (or None: adaptive) for method='moebius', got {dt!r}")
    elif method not in ("dopri5", "layers") and method not in own:
        if dt is None or not np.isfinite(dt) or dt <= 0:
            raise ValueError(f"dt must be a positive time step for method={method!r}, got {dt!r}")
    check_rtol("rtol", rtol)
    check_positive("atol", atol)
    if path not in PATHS:
        raise ValueError(f"path must be one of {PATHS}, got {path!r}")
    check_positive_int("block_elements", block_elements)
    check_nonnegative("checkpoint_interval", checkpoint_interval)
    check_flag("progress", progress)
    check_positive_int("max_steps", max_steps)
    if not (np.isfinite(accuracy) and 1e-15 <= accuracy < 1):
        raise ValueError(f"accuracy must lie in [1e-15, 1), got {accuracy!r}")


def _check_layers(model: Any, method: str, dt: float | None, split: str | None, times: np.ndarray) -> None:
    """Refuse a ``split`` without layers or of an unknown name, and layers whose ``dt`` does not fit the times or
    the model's switching times (every layer lies in one piece of a velocity that switches)."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be None or one of {sorted(SPLITS)}, got {split!r}")
    if split is not None and method != "layers":
        raise ValueError(f"split={split!r} splits a discrete layer: it needs method='layers', got method={method!r}")
    if method == "layers":
        layer_counts(times, dt)
        switches = model.switching_times(float(times[0]), float(times[-1]))
        ratios = (switches - times[0]) / float(dt)
        bad = np.nonzero(np.abs(ratios - np.rint(ratios)) > LAYER_TIME_TOLERANCE * np.maximum(np.rint(ratios), 1))[0]
        if bad.size:
            s = float(switches[bad[0]])
            raise ValueError(f"dt = {dt!r} must divide the pieces of {model.name} for method='layers' (its "
                             f"{model.switching_rule}; a layer lies in one piece of the weights): the switching "
                             f"time {s!r} is {ratios[bad[0]]:.15g} layers after t[0] = {float(times[0])!r}; take "
                             f"dt = period/m for a whole m")


def _fingerprint(states: np.ndarray, weights: np.ndarray, frequencies: np.ndarray | None) -> str:
    """SHA-1 of the float64 bytes of the initial states, weights and natural frequencies."""
    digest = hashlib.sha1(np.ascontiguousarray(states, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(weights, dtype=float).tobytes())
    if frequencies is not None:
        digest.update(np.ascontiguousarray(frequencies, dtype=float).tobytes())
    return digest.hexdigest()


def _seed_record(seed: Any) -> int | str:
    if isinstance(seed, np.random.Generator):
        return "generator"
    if seed is None:
        return int(np.random.SeedSequence().entropy % (2**63))
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, a numpy Generator or None, got {seed!r}")
        return int(seed)
    raise TypeError(f"seed must be an int, a numpy Generator or None, got {seed!r}")


def _saved_seed(checkpoint: str | os.PathLike, default: int | str) -> int | str:
    """The seed a checkpoint was made with (a resumed run with seed=None takes it), else ``default``."""
    saved = load_checkpoint(checkpoint)
    text = None if saved is None else str(saved.attrs.get("seed", ""))
    return int(text) if text is not None and text.lstrip("-").isdigit() else default
