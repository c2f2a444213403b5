r"""The self-attention weights, the SA/USA velocity rule and the energy prefactor, each written once.

Weights (paper 2, arXiv:2312.10794, (SA), (USA), (3.2)). On the sphere <x, y> ≤ 1, so the exponent
β<x, y> is shifted by its maximum β and every weight lies in (0, 1]:

    a_β(x, y) = e^{β(<x,y> - 1)}                                    (:func:`attention_exponent`),
    N(x) = ∫ a_β(x, y) y dμ(y),   D(x) = ∫ a_β(x, y) dμ(y),
    SA:  X[μ](x) = P⊥_x N(x) / D(x)       (the shift cancels in the ratio),
    USA: X[μ](x) = e^β P⊥_x N(x)          (the factor e^β undoes the shift)   (:func:`attention_velocity`).

On S¹ in angles (paper 2, (7.1)) P⊥_x N becomes Σ_j w_j a_β(θ_i, θ_j) sin(θ_j - θ_i). The factor
s = 1 (SA) or e^β (USA) (:func:`velocity_factor`) is also the collapse rate: at a single cluster the
velocity's linearisation is s (x̄ - x_i), with eigenvalue -s. The kernel multipliers of a_β are
e^{-β} c_l(β) (:func:`meanfield.models._kernels.scaled_funk_hecke`).

Energy (paper 2, (3.5)):

    E_β[μ] = e^β/(2β) · ∬ a_β(x, y) dμ(x) dμ(y)   (β > 0),     E_0[μ] = |m|²/2,  m = ∫ y dμ(y)
                                                                          (:func:`interaction_energy`).

E_β overflows a double once β - log 2β > 709.78, so every energy is also reported in two forms that stay
finite for any β (:func:`energy_forms`): the normalised energy e^{-β}E_β = S/(2β) ∈ (0, 1/(2β)] and
log E_β = β + log S - log 2β, with S = ∬ a_β dμ dμ ∈ (0, 1] (S/2 and log(S/2) at β = 0).

:func:`attention_exponent` and :func:`attention_velocity` are compiled with ``numba.njit(inline="always")``:
the compiled kernels inline them (with the kernel's own compiler flags) and NumPy paths call the same
formula on arrays as ``attention_exponent.py_func`` / ``attention_velocity.py_func``. The exponential
itself is the path's own: :func:`numpy.exp`, or :func:`meanfield.particles._vector_math.exp_nonpositive`
(relative error ≤ 2.3e-16) in compiled kernels.
"""

from __future__ import annotations

import logging

import numba
import numpy as np

__all__ = [
    "BETA_MAX_UNNORMALIZED",
    "attention_exponent",
    "attention_velocity",
    "check_unnormalized_beta",
    "energy_forms",
    "interaction_energy",
    "velocity_factor",
]

logger = logging.getLogger(__name__)

#: largest β with e^β finite in float64 (log of the largest double, ≈ 709.78)
BETA_MAX_UNNORMALIZED = float(np.log(np.finfo(float).max))


def check_unnormalized_beta(beta: float, normalized: bool) -> None:
    """Reject β whose factor e^β of the unnormalized (USA) velocity overflows float64, naming the rescaled
    alternative: in s = e^β t the USA velocity is P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y), the interaction model of the kernel
    W(t) = -e^{β(t-1)}/β (``-Kernel.gaussian(2/β)/β``), finite for every β."""
    if not normalized and beta > BETA_MAX_UNNORMALIZED:
        raise ValueError(
            f"beta = {beta:g} is too large for the unnormalized model (USA): its velocity carries the "
            f"factor e^beta, which overflows float64 for beta > {BETA_MAX_UNNORMALIZED:.2f}; use "
            f"normalized=True (SA) or a smaller beta, or run USA in the rescaled time s = e^beta t, whose velocity "
            f"P_x^perp int e^(beta(<x,y>-1)) y dmu(y) carries no e^beta: "
            f"mf.Interaction(-mf.Kernel.gaussian(2 / beta) / beta) (its energy is -e^(-beta) E_beta; E_beta itself "
            f"in logarithms: mf.energy(model, x, scale='log'))"
        )


def velocity_factor(beta: float, normalized: bool) -> float:
    """s = 1 (SA) or e^β (USA): the factor of the shifted sums in the USA velocity, and the collapse rate."""
    return 1.0 if normalized else float(np.exp(beta))


@numba.njit(cache=True, inline="always")
def attention_exponent(beta, inner):
    """β(<x,y> - 1) ≤ 0 from the inner product ``inner`` = <x, y>: a_β = e^{attention_exponent}."""
    return beta * (inner - 1.0)


@numba.njit(cache=True, inline="always")
def attention_velocity(numerator, denominator, normalized, factor):
    """N/D (SA) or s·N (USA, s = ``factor`` = e^β) from the shifted sums N (projected) and D."""
    return numerator / denominator if normalized else factor * numerator


def interaction_energy(beta: float, kernel_integral: float | np.ndarray, *, warn: bool = True
                       ) -> float | np.ndarray:
    """E_β = e^β/(2β) · S from S = ∬ e^{β(<x,y> - 1)} dμ dμ (paper 2, (3.5)); E_0 = S/2 from S = |m|² at β = 0.

    Where the prefactor e^β/(2β) overflows (β > :data:`BETA_MAX_UNNORMALIZED`, or β below ~1e-308)
    it is applied in logarithms, E = exp(β + log S - log 2β); an energy beyond the largest double is
    returned as inf, with a logged warning unless ``warn`` is False (a caller that also reports the
    finite forms of :func:`energy_forms`).
    """
    if beta == 0:
        return 0.5 * kernel_integral
    with np.errstate(over="ignore", divide="ignore"):
        prefactor = np.exp(beta) / (2 * beta) if beta <= BETA_MAX_UNNORMALIZED else np.inf
        out = (prefactor * kernel_integral if np.isfinite(prefactor)
               else np.exp(beta + np.log(kernel_integral) - np.log(2 * beta)))
    if not np.all(np.isfinite(out)):
        if warn:
            logger.warning("the interaction energy at beta = %g exceeds the largest double: returned as inf", beta)
        out = np.where(np.isnan(out), np.inf, out)
    return out


def energy_forms(beta: float, kernel_integral: float | np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(E_β, e^{-β}E_β, log E_β) from S = ∬ e^{β(<x,y> - 1)} dμ dμ (S = |m|² at β = 0), without a warning.

    E_β is :func:`interaction_energy` (inf beyond the largest double); the normalised energy
    e^{-β}E_β = S/(2β) (S/2 at β = 0) and log E_β = β + log S - log 2β (log(S/2) at β = 0; -inf where S = 0)
    involve no e^β and are finite for every normal β > 0 and S > 0: each is S times or plus a few correctly
    rounded operations, so accurate to a few ulps of S (of log E_β: a few ulps of β + |log S|).
    """
    total = np.asarray(kernel_integral, dtype=float)
    energy = np.asarray(interaction_energy(beta, total, warn=False), dtype=float)
    with np.errstate(divide="ignore"):
        if beta == 0:
            return energy, 0.5 * total, np.log(0.5 * total)
        return energy, total / (2 * beta), beta + (np.log(total) - np.log(2 * beta))
