"""The interaction energy E_β of a measure (paper 2, arXiv:2312.10794, (3.5)).

    E_β[μ] = (1/2β) ∬ e^{β<x,y>} dμ(x) dμ(y) = e^β/(2β) ∬ e^{β(<x,y>-1)} dμ dμ   (β > 0),
    E_0[μ] = |m|²/2,  m = ∫ y dμ(y),

the prefactor and its overflow rule those of :func:`meanfield.models._attention_weights.interaction_energy`,
shared with the particle energy. For a density the double integral is a convolution evaluated by the
domain's transform, ∬ e^{β(<x,y>-1)} dμ dμ = ∫ ρ (a_β ⋆ ρ) dσ with the Funk–Hecke multipliers
e^{-β} c_l(β) of a_β(t) = e^{β(t-1)}; at β = 0 the kernel is t (multiplier |S^{d-1}|/d at l = 1), which
gives E_0 = (1/2) ∬ <x,y> dμ dμ. For Kuramoto models with an odd interaction h,
E = (1/2) ∬ G(θ - φ) dμ dμ with G' = h(-·) (K|m|²/2 for h = sin).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._attention_weights import interaction_energy
from ._kernels import scaled_funk_hecke, scaled_funk_hecke_over_beta
from ..measures._measure import Density, EmpiricalMeasure
from ._dynamics import Kuramoto, SelfAttention

__all__ = ["density_energy", "energy", "energy_multipliers"]


def energy_multipliers(model: Any, d: int) -> tuple[Callable[[np.ndarray], np.ndarray], float]:
    """Scaled Funk–Hecke multipliers of the energy's potential, and the log of their scale.

    E[ρ] = e^{s} · (1/2) ∫ ρ (G̃ ⋆ ρ) dσ with G̃ the returned multipliers and s
    the returned log-scale: for self-attention G̃_l = e^{-β} c_l(β)/β (the
    l = 0 term only for β > 0) and s = β, so that β up to several hundred
    neither overflows the multipliers nor turns e^{β} · 0 into NaN; e^{s} G̃ are
    the multipliers of the potential 𝖦_β(t) = e^{βt}/β whose gradient is the USA
    velocity. For Kuramoto models G̃ = 2π Ĝ_k (:meth:`Kuramoto.potential_multipliers`), s = 0.
    """
    if isinstance(model, SelfAttention):
        beta = model.beta

        def multipliers(ell: np.ndarray) -> np.ndarray:
            ell = np.asarray(ell)
            out = scaled_funk_hecke_over_beta(ell, beta, d)
            if beta > 0:
                with np.errstate(over="ignore"):
                    out = np.where(ell == 0, scaled_funk_hecke(0, beta, d) / beta, out)
            return out

        return multipliers, beta
    if isinstance(model, Kuramoto):
        if d != 2:
            raise ValueError(f"Kuramoto models live on the circle (d = 2), got d = {d}")
        if not model.is_gradient:
            raise ValueError("the Kuramoto interaction h is not odd, so the dynamics has no interaction energy")
        return (lambda k: np.real(model.potential_multipliers(np.asarray(k)))), 0.0
    raise TypeError(f"model must be SelfAttention or Kuramoto, got {type(model).__name__}")


def density_energy(model: Any, domain: Any, values: np.ndarray) -> np.ndarray:
    """E of node values ``values`` (shape (..., *domain.shape)) on ``domain``, one per leading index.

    Self-attention: E_β = e^β/(2β) ∫ ρ (a_β ⋆ ρ) dσ by :func:`interaction_energy`; an energy
    beyond the largest double (β ≳ 700, or β below ~1e-300 where 1/(2β) overflows) is returned
    as inf with a logged warning. Kuramoto: E = (1/2) ∫ ρ (G ⋆ ρ) dσ.
    """
    d = domain.dimension
    if isinstance(model, SelfAttention):
        beta = model.beta
        scaled = scaled_funk_hecke if beta > 0 else scaled_funk_hecke_over_beta  # a_β, or t at β = 0
        return interaction_energy(beta, _double_integral(domain, values, lambda ell: scaled(ell, beta, d)))
    multipliers, _ = energy_multipliers(model, d)
    return 0.5 * _double_integral(domain, values, multipliers)


def _double_integral(domain: Any, values: np.ndarray, multipliers: Callable[[np.ndarray], np.ndarray]
                     ) -> np.ndarray:
    """∫ ρ (K ⋆ ρ) dσ by the domain's quadrature, K given by its multipliers; one per leading index."""
    axes = tuple(range(values.ndim - len(domain.shape), values.ndim))
    return np.sum(values * domain.convolve(values, multipliers) * domain.weights, axis=axes)


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
        return float(density_energy(model, measure.domain, measure.values))
    from ..particles import particle_energy

    return particle_energy(model, measure, **particle_options)
