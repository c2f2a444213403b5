r"""The self-attention weights, the SA/USA velocity rule and the energy prefactor, each written once.

Weights (paper 2, arXiv:2312.10794, (SA), (USA), (3.2)). On the sphere <x, y> ≤ 1, so the exponent
β<x, y> is shifted by its maximum β and every weight lies in (0, 1]:

    a_β(x, y) = e^{β(<x,y> - 1)}                                    (:func:`attention_exponent`),
    N(x) = ∫ a_β(x, y) y dμ(y),   D(x) = ∫ a_β(x, y) dμ(y),
    SA:  X[μ](x) = P⊥_x N(x) / D(x)       (the shift cancels in the ratio),
    USA: X[μ](x) = e^β P⊥_x N(x)          (the factor e^β undoes the shift)   (:func:`attention_velocity`).

On S¹ in angles (paper 2, (7.1)) P⊥_x N becomes Σ_j w_j a_β(θ_i, θ_j) sin(θ_j - θ_i). The factor
f = 1 (SA) or e^β (USA) (:func:`velocity_factor`) is also the collapse rate: at a single cluster the
velocity's linearisation is f (x̄ - x_i), with eigenvalue -f. The kernel multipliers of a_β are
e^{-β} c_l(β) (:func:`meanfield.models._kernels.scaled_funk_hecke`).

Time (:data:`TIMES`). USA's factor e^β overflows a double for β > 709.78 (:data:`BETA_MAX_UNNORMALIZED`),
where its dynamics in t happen on time scales ~e^{-β}. In the rescaled time s = e^β t the factor is 1:

    USA in s:  dx/ds = e^{-β} dx/dt = P⊥_x N(x) = P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y),

finite for every β (``time="rescaled"``); its outputs carry log t = log s - β (:func:`rescaled_time_coordinates`).

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

from ..io._conventions import COORD_ATTRS

__all__ = [
    "BETA_MAX_UNNORMALIZED",
    "TIMES",
    "attention_exponent",
    "attention_velocity",
    "check_time",
    "check_unnormalized_beta",
    "energy_forms",
    "interaction_energy",
    "rescaled_time_coordinates",
    "velocity_factor",
]

logger = logging.getLogger(__name__)

#: largest β with e^β finite in float64 (log of the largest double, ≈ 709.78)
BETA_MAX_UNNORMALIZED = float(np.log(np.finfo(float).max))
#: the time variables of self-attention: "t", that of the equation, and "rescaled", s = e^β t (USA only)
TIMES = ("t", "rescaled")


def check_time(time: str, normalized: bool) -> str:
    """``time`` itself if it is one of :data:`TIMES` and applies to the model: "rescaled" needs USA.

    Raises
    ------
    ValueError
        ``time`` not in :data:`TIMES`, or "rescaled" with ``normalized=True`` (SA has no factor e^β to rescale).
    """
    if not isinstance(time, str) or time not in TIMES:
        raise ValueError(f"time must be one of {list(TIMES)} ('t': the time of the equation; 'rescaled': "
                         f"s = e^beta t, USA only), got {time!r}")
    if time == "rescaled" and normalized:
        raise ValueError("time='rescaled' applies to the unnormalized model (normalized=False), whose velocity "
                         "carries the factor e^beta; SA (normalized=True) has no such factor and runs in t")
    return time


def check_unnormalized_beta(beta: float, normalized: bool, time: str = "t") -> None:
    """Reject β whose factor e^β of the unnormalized (USA) velocity in t overflows float64, naming the rescaled
    time s = e^β t (``time="rescaled"``), in which the USA velocity P⊥_x ∫ e^{β(<x,y>-1)} y dμ(y) is finite for
    every β."""
    if not normalized and time == "t" and beta > BETA_MAX_UNNORMALIZED:
        raise ValueError(
            f"beta = {beta:g} is too large for the unnormalized model (USA): its velocity carries the factor "
            f"e^beta, which overflows float64 for beta > {BETA_MAX_UNNORMALIZED:.2f} in the time t; use "
            f"time='rescaled' (mf.SelfAttention(beta, normalized=False, time='rescaled')) to run USA in the rescaled "
            f"time s = e^beta t, whose velocity P_x^perp int e^(beta(<x,y>-1)) y dmu(y) carries no e^beta, or "
            f"normalized=True (SA), or a smaller beta"
        )


def velocity_factor(beta: float, normalized: bool, time: str = "t") -> float:
    """f = 1 (SA), e^β (USA in t) or 1 (USA in s = e^β t): the factor of the shifted sums in the USA velocity, and
    the collapse rate."""
    return float(np.exp(beta)) if not normalized and time == "t" else 1.0


def rescaled_time_coordinates(times: np.ndarray, beta: float) -> dict[str, tuple[str, np.ndarray, dict[str, str]]]:
    """The coordinates along ``time`` of a run in the rescaled time: ``time`` = s = e^β t and
    ``log_time`` = log s - β = log t (-inf at s = 0), finite where t itself underflows a double."""
    with np.errstate(divide="ignore"):
        log_t = np.log(times) - beta
    return {"time": ("time", times, COORD_ATTRS["rescaled_time"]),
            "log_time": ("time", log_t, COORD_ATTRS["log_time"])}


@numba.njit(cache=True, inline="always")
def attention_exponent(beta, inner):
    """β(<x,y> - 1) ≤ 0 from the inner product ``inner`` = <x, y>: a_β = e^{attention_exponent}."""
    return beta * (inner - 1.0)


@numba.njit(cache=True, inline="always")
def attention_velocity(numerator, denominator, normalized, factor):
    """N/D (SA) or f·N (USA, f = ``factor``: e^β in t, 1 in s = e^β t) from the shifted sums N (projected) and D."""
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
