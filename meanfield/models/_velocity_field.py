"""The velocity field X[μ] of a model, at the atoms of particles or the nodes of a density.

For a density ρ on a grid, μ is taken as the quadrature measure
Σ_j ρ_j w_j δ_{x_j} of its nodes, so X is exact to the quadrature's accuracy.
On the circle X is computed by FFT from the model's Fourier multipliers
(angular velocity dθ/dt); on spheres by blocked direct sums (tangent vectors
in R^d, bounded memory). For particles the engine's velocity paths are used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..measures._measure import Density, EmpiricalMeasure
from ._dynamics import Kuramoto, SelfAttention
from ..measures._read_particles import SPHERE_TOLERANCE, read_particles
from ._attention_weights import check_unnormalized_beta
from ..particles._velocity import DirectSelfAttention, KuramotoVelocity

__all__ = ["velocity_field"]


def velocity_field(
    model: SelfAttention | Kuramoto, measure: Density | EmpiricalMeasure | np.ndarray, frequencies: Any = None,
    *, domain: str | None = None, renormalize: bool = False, sphere_tolerance: float = SPHERE_TOLERANCE,
) -> np.ndarray:
    """X[μ] at the nodes of a density or at the atoms of an empirical measure.

    Parameters
    ----------
    model : SelfAttention or Kuramoto
    measure : Density, EmpiricalMeasure or array
        A density (X at its nodes), or particles: angles (n,) on S¹, unit
        vectors (n, d), or batches with a leading system axis.
    frequencies : array_like, optional
        Natural frequencies ω (default 0): per particle, or for a Kuramoto
        density the frequency (scalar or per node) of the oscillators whose
        velocity ω + K ∫ h(φ - θ) ρ(φ) dφ is returned; the model's frequency law
        does not enter.
    domain : {"circle", "sphere"}, optional
        How a plain array is read (:mod:`meanfield.measures._read_particles`: default the
        circle for Kuramoto, else by shape; "circle" for systems of angles).
    renormalize : bool
        Project particles onto the sphere instead of rejecting points off it.
    sphere_tolerance : float
        Allowed | |x_i| - 1 | of particles on S^{d-1}.

    Returns
    -------
    ndarray
        On S¹: angular velocities, shaped like the nodes or the angles. On
        S^{d-1}: tangent vectors, shape (*nodes, d) or (…, n, d).

    Raises
    ------
    ValueError
        Particles off the unit sphere (beyond ``sphere_tolerance``) or in R^d for
        SelfAttention; β > 709.78 for the unnormalized model (e^β overflows).
    """
    if isinstance(model, SelfAttention):
        check_unnormalized_beta(model.beta, model.normalized)

    if isinstance(measure, Density):
        domain = measure.domain
        rho = measure.values
        if domain.kind == "circle":
            if isinstance(model, Kuramoto):
                omega = 0.0 if frequencies is None else np.asarray(frequencies, dtype=float)
                return domain.convolve(rho, model.interaction_multipliers) + omega
            spec = model.velocity_spec(2)
            numerator = domain.convolve(rho, spec.numerator)
            return numerator if spec.denominator is None else numerator / domain.convolve(rho, spec.denominator)
        if not isinstance(model, SelfAttention):
            raise ValueError(f"Kuramoto models live on the circle, got a {domain.kind} domain")
        points = domain.points.reshape(1, -1, domain.points.shape[-1])
        weights = (rho * domain.weights).reshape(1, -1)
        field = DirectSelfAttention(model.beta, model.normalized, weights, "sphere")(0.0, points)
        return field.reshape(*domain.shape, -1)
    read = read_particles(measure, name="measure", domain=domain, model=model, kinds=("circle", "sphere"),
                          renormalize=renormalize, tolerance=sphere_tolerance)
    states, weights, batch = read.points, read.weights, read.batched
    if isinstance(model, Kuramoto):
        omega = np.broadcast_to(np.zeros(1) if frequencies is None else np.asarray(frequencies, float), states.shape)
        out = KuramotoVelocity(model.coupling, model.interaction, omega, weights)(0.0, states)
    elif isinstance(model, SelfAttention):
        out = DirectSelfAttention(model.beta, model.normalized, weights, read.kind)(0.0, states)
    else:
        raise TypeError(f"model must be SelfAttention or Kuramoto, got {type(model).__name__}")
    return out if batch else out[0]
