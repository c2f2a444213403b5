"""The interaction energy E_β of a measure (paper 2, (3.5)).

    E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ(x) dμ(y)   (β > 0),    E_0[μ] = |m|²/2,  m = ∫ y dμ(y).

For a density the double integral is a convolution evaluated by the domain's
transform: E_β = (1/2) ∫ ρ (𝖦_β ⋆ ρ) dσ with Funk–Hecke multipliers
c_l(β)/β of 𝖦_β(t) = e^{βt}/β (the l = 0 term c_0(β)/β is the constant
1/(2β) · mass² and is dropped at β = 0, which gives E_0). For Kuramoto
models with an odd interaction h, E = (1/2) ∬ G(θ - φ) dμ dμ with G' = h(-·)
(K|m|²/2 for h = sin).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._kernels import scaled_funk_hecke
from ._measures import Density, EmpiricalMeasure
from ._models import Kuramoto, SelfAttention

__all__ = ["energy", "energy_multipliers"]


def energy_multipliers(model: Any, d: int) -> Callable[[np.ndarray], np.ndarray]:
    """Funk–Hecke multipliers of the kernel whose half-quadratic form is the energy."""
    if isinstance(model, SelfAttention):
        beta = model.beta

        def multipliers(ell: np.ndarray) -> np.ndarray:
            ell = np.asarray(ell)
            out = model.potential_multipliers(ell, d)
            if beta > 0:
                out = np.where(ell == 0, scaled_funk_hecke(0, beta, d) * np.exp(beta) / beta, out)
            return out

        return multipliers
    if isinstance(model, Kuramoto):
        if d != 2:
            raise ValueError(f"Kuramoto models live on the circle (d = 2), got d = {d}")
        if not model.is_gradient:
            raise ValueError("the Kuramoto interaction h is not odd, so the dynamics has no interaction energy")
        return lambda k: np.real(model.potential_multipliers(np.asarray(k)))
    raise TypeError(f"model must be SelfAttention or Kuramoto, got {type(model).__name__}")


def energy(model: Any, measure: Density | EmpiricalMeasure | np.ndarray, **particle_options: Any) -> float | np.ndarray:
    """Interaction energy E_β of a density or of particles.

    Parameters
    ----------
    model : SelfAttention or Kuramoto
    measure : Density, EmpiricalMeasure, or array of particle positions
        Densities are integrated by their domain's quadrature (spectrally
        accurate for smooth densities); particles give
        E_β = (1/2β) Σ_ij w_i w_j e^{β<x_i,x_j>}.
    **particle_options
        For particles: ``renormalize``, ``sphere_tolerance`` (points off the
        sphere beyond the tolerance are an error unless renormalised).

    Returns
    -------
    float, or ndarray over systems for a batch of particle systems.

    Examples
    --------
    >>> import meanfield as mf
    >>> round(mf.energy(mf.SelfAttention(0.0), mf.uniform(mf.Circle(64))), 12)
    0.0
    """
    if isinstance(measure, Density):
        domain = measure.domain
        mult = energy_multipliers(model, domain.dimension)
        potential = domain.convolve(measure.values, mult)
        return 0.5 * float(np.sum(measure.values * potential * domain.weights))
    from .particles import particle_energy

    return particle_energy(model, measure, **particle_options)
