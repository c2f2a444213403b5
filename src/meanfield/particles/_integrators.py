"""The integrators of particle runs, by method name, and the choice among them.

``method`` names the time stepping (:data:`METHODS`): "dopri5" (adaptive Dormand–Prince 5(4) in
exponential charts, dense output), "rk4", "euler", "euler-maruyama" (fixed steps, the last with
noise), "moebius" (the exact Möbius flow of a Kuramoto model with one harmonic,
:mod:`._moebius`; on a graph with local fields, :mod:`._network_moebius`), "layers" (the discrete
layers x_{k+1} = Π(x_k + h v(x_k)) of a Transformer, optionally split into attention and feed-forward
sub-layers, :mod:`._layers`); a model with integrators of its own (``model.particle_methods``, the Filippov
stepper of the hard-max dynamics) takes only those. A model whose velocity switches at times
(``model.time_pieces``: weights that change with depth) is stepped piece by piece, each piece by a fresh stepper of
its own model's velocity, every step ending at the switching times (:class:`solvers.PiecewiseStepper`). ``path`` names how the velocity is summed; the model answers for the paths it has
(``model.particle_velocity``), and "ensemble" runs SA/USA systems each with its own adaptive step on
the compiled kernels of :mod:`._ensemble` where the model has them (``model.ensemble_kernel``).
"auto" takes "ensemble" where it applies and the systems hold at most
:data:`ENSEMBLE_MAX_PARTICLES` particles, else the model's own choice (NUFFT on S¹ from
:data:`meanfield.models._self_attention.NUFFT_MIN_PARTICLES` particles on, else direct sums). The
result records the path taken (attr ``path``) and the one asked for (``path_requested``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from solvers import PiecewiseStepper, SchemeError, Stepper

from ..models._self_attention import NUFFT_MIN_PARTICLES
from ..runs import EvolveIntegrator, Integrator
from ._chart_steppers import METHODS as CHART_METHODS
from ._chart_steppers import ChartDormandPrince, ChartFixedStep, check_fixed_step
from ._ensemble import EnsembleIntegrator
from ._layers import LAYER_SCHEME, SPLITS, DiscreteLayers
from ._moebius import MoebiusStepper
from ._network_moebius import NetworkMoebiusStepper

__all__ = ["ENSEMBLE_MAX_PARTICLES", "METHODS", "PATHS", "ParticleIntegrator", "particle_integrator"]

#: up to this many particles per system, "auto" integrates SelfAttention without noise by dopri5 with the
#: compiled per-system kernels of :mod:`._ensemble`; measured on one thread against the "direct" path (1 and
#: 8-16 systems): 12x-3.8x faster at n = 32 on S¹, 1.7x-2.1x at n = 256 on S¹, 2.3x-1.2x at n = 256 on S²
#: and S^31, 0.7x at n = 512 on S^31
ENSEMBLE_MAX_PARTICLES = NUFFT_MIN_PARTICLES - 1
PATHS = ("auto", "direct", "nufft", "fourier", "ensemble")
METHODS = {
    **CHART_METHODS,
    "moebius": "commutator-free Lie-group RK4 (Celledoni-Marthinsen-Owren) with exact Moebius flows of the "
               "frozen-Z Riccati equation (natural frequencies exact); adaptive by a local error estimate on Z "
               "(step doubling on a graph's local fields), or fixed step dt",
    "layers": LAYER_SCHEME,
}
ENSEMBLE_INTEGRATOR = "Dormand–Prince 5(4) in exponential charts, adaptive per system (compiled), dense output"


@dataclass
class ParticleIntegrator:
    """The integrator of a run, its initial state, how its states become positions and back, and the attrs
    that say what it is."""

    integrator: Integrator
    y0: Any
    positions: Any
    state: Any
    attrs: dict[str, Any]
    energy_accuracy: float | None


def _identity(t: float, x: np.ndarray) -> np.ndarray:
    return x


def particle_integrator(model: Any, geometry: Any, states: np.ndarray, weights: np.ndarray,
                        frequencies: np.ndarray | None, times: np.ndarray, method: str, *, path: str, rtol: float,
                        atol: float, dt: float | None, accuracy: float, block_elements: int, max_steps: int,
                        rng: np.random.Generator, live: bool, split: str | None = None) -> ParticleIntegrator:
    """The integrator of ``method`` and ``path`` for the model's particles (module docstring).

    Raises
    ------
    ValueError
        A path the model or the method has not (named), a method the model has not ("moebius" without a
        Riccati form), a fixed step beyond its stability bound.
    """
    if method in model.particle_methods:
        stepper = model.particle_stepper(method, geometry, weights, rtol=rtol, atol=atol)
        attrs = {"method": method, "path_requested": path, "path": "direct", "accuracy": -1.0, "fourier_modes": -1,
                 "integrator": model.particle_methods[method]}
        return ParticleIntegrator(EvolveIntegrator(stepper, max_steps=max_steps), states, _identity, _identity,
                                  attrs, None)
    kernel = model.ensemble_kernel(geometry)
    ensemble_applies = kernel is not None and (method == "dopri5" or (method == "layers" and split is None))
    if path == "ensemble" and not ensemble_applies:
        raise ValueError(f"path='ensemble' is available for the attractive SelfAttention without noise and "
                         f"method='dopri5' or 'layers' (unsplit) on the circle or a sphere (the compiled kernels), got "
                         f"{model.name} with noise = {model.noise}, method={method!r} on a {geometry.name!r} domain")
    if method == "layers":
        return _layers(model, geometry, states, weights, frequencies, times, kernel, path, dt, split, accuracy,
                       block_elements, max_steps)
    use_ensemble = path == "ensemble" or (path == "auto" and ensemble_applies
                                          and states.shape[1] <= ENSEMBLE_MAX_PARTICLES)
    attrs: dict[str, Any] = {"method": method, "path_requested": path, "accuracy": -1.0, "fourier_modes": -1}
    if use_ensemble:
        beta, normalized, time = kernel
        attrs.update(path="ensemble", integrator=ENSEMBLE_INTEGRATOR)
        integrator = EnsembleIntegrator(geometry.code, weights, beta, normalized, rtol=rtol, atol=atol,
                                        max_steps=max_steps, live=live, time=time)
        return ParticleIntegrator(integrator, states, _identity, _identity, attrs, None)
    attrs["integrator"] = METHODS[method]
    if method == "moebius":
        if geometry.name != "circle":
            raise ValueError(f"method='moebius' integrates angles on the circle (Möbius maps of S¹), got particles "
                             f"on the {geometry.name!r} domain; use method='dopri5'")
        omega = np.zeros(states.shape) if frequencies is None else frequencies
        local = model.local_riccati_form(omega, weights)
        if local is None:
            a, nu = model.riccati_form(frequencies)
            stepper = MoebiusStepper(a, np.broadcast_to(nu, weights.shape), weights, float(times[0]), rtol=rtol,
                                     atol=atol, dt=dt)
            attrs["path"] = "moments"  # the flow is driven by the first Fourier moment Z of the angles
        else:
            a, nu, operator = local
            stepper = NetworkMoebiusStepper(a, nu, operator, weights, float(times[0]), rtol=rtol, atol=atol, dt=dt)
            attrs["path"] = "edges"  # each oscillator is driven by its local field Z_i = Σ_j B_ij u_j
        return ParticleIntegrator(EvolveIntegrator(stepper, max_steps=max_steps), stepper.state(times[0], states),
                                  stepper.positions, stepper.state, attrs, None)
    def velocity_of(piece: Any) -> Any:
        return piece.particle_velocity(geometry, weights, frequencies, path=path, accuracy=accuracy,
                                       block_elements=block_elements)

    velocity = velocity_of(_first_piece(model, times))
    attrs.update(path=velocity.path, fourier_modes=int(velocity.fourier_modes))
    nufft = velocity.path == "nufft"
    if nufft:
        attrs["accuracy"] = accuracy
    if method == "dopri5":
        def make(v: Any) -> Stepper:
            return ChartDormandPrince(geometry, v, rtol, atol)
    else:
        if times.size > 1:  # for a velocity that switches: the bound of its first piece
            try:
                attrs["stability_rate"] = check_fixed_step(geometry, velocity, method, times, states, dt)
            except SchemeError:  # a velocity that cannot be evaluated at x0: the run's first step says so, success = 0
                pass

        def make(v: Any) -> Stepper:
            return ChartFixedStep(geometry, v, method, dt, model.noise, rng)
    stepper = _pieces(model, times, lambda piece: make(velocity_of(piece))) if model.time_pieces else make(velocity)
    return ParticleIntegrator(EvolveIntegrator(stepper, max_steps=max_steps), states, stepper.positions,
                              stepper.state, attrs, accuracy if nufft else None)


def _layers(model: Any, geometry: Any, states: np.ndarray, weights: np.ndarray, frequencies: np.ndarray | None,
            times: np.ndarray, kernel: tuple[float, bool, str] | None, path: str, dt: float, split: str | None,
            accuracy: float, block_elements: int, max_steps: int) -> ParticleIntegrator:
    """The discrete layers of step ``dt`` (:mod:`._layers`): compiled where the model has the ensemble kernels and
    ``path`` is "auto" or "ensemble" (unsplit), else of the model's velocity (or its parts with ``split``)."""
    attrs: dict[str, Any] = {"method": "layers", "path_requested": path, "accuracy": -1.0, "fourier_modes": -1,
                             "integrator": LAYER_SCHEME, "layer_step": float(dt), "order": 1,
                             "split": "none" if split is None else f"{split}: {SPLITS[split]}"}
    if kernel is not None and split is None and path in ("auto", "ensemble"):
        attrs["path"] = "ensemble"
        stepper = DiscreteLayers(geometry, (), dt, kernel=(np.ascontiguousarray(weights, dtype=float), *kernel))
        return ParticleIntegrator(EvolveIntegrator(stepper, max_steps=max_steps), states, stepper.positions,
                                  stepper.state, attrs, None)
    options = {"path": path, "accuracy": accuracy, "block_elements": block_elements}

    def parts_of(piece: Any) -> tuple[Any, ...]:
        if split is None:
            return (piece.particle_velocity(geometry, weights, frequencies, **options),)
        return piece.particle_velocity_parts(geometry, weights, frequencies, split, **options)

    parts = parts_of(_first_piece(model, times))
    attrs.update(path=parts[0].path, fourier_modes=int(parts[0].fourier_modes))
    nufft = parts[0].path == "nufft"
    if nufft:
        attrs["accuracy"] = accuracy
    stepper = (_pieces(model, times, lambda piece: DiscreteLayers(geometry, parts_of(piece), dt))
               if model.time_pieces else DiscreteLayers(geometry, parts, dt))
    return ParticleIntegrator(EvolveIntegrator(stepper, max_steps=max_steps), states, stepper.positions,
                              stepper.state, attrs, accuracy if nufft else None)


def _first_piece(model: Any, times: np.ndarray) -> Any:
    """The model of the run's first piece (the model itself when its velocity does not switch)."""
    return model.piece_model(model.piece_of(float(times[0]))) if model.time_pieces else model


def _pieces(model: Any, times: np.ndarray, make: Any) -> PiecewiseStepper:
    """The stepper of a velocity that switches: ``make(piece model)`` for each piece, every step ending at the
    model's switching times (:class:`solvers.PiecewiseStepper`)."""
    return PiecewiseStepper(lambda k: make(model.piece_model(k)), model.piece_of, model.switching_times,
                            float(times[0]))
