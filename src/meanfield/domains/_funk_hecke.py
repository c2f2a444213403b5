"""Fourier and Funk–Hecke multipliers of the attention kernel e^{β<x,y>}.

Fourier on S¹: e^{β cos θ} = Σ_k I_k(β) e^{ikθ}. Funk–Hecke on S^{d-1}:
∫ e^{β<x,y>} Y_l(y) dσ(y) = c_l(β) Y_l(x),

    c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β)     (d = 2: 2π I_l; d = 3: 4π i_l(β)),

with the limit c_l(0) = |S^{d-1}| δ_{l0}. Everything is computed from the
exponentially scaled ``scipy.special.ive`` so that β up to several hundred
neither overflows nor loses ratios; functions return the scaled value
e^{-β} c_l(β) and callers multiply by e^{β} only where the absolute scale
matters (USA).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, hyp0f1, ive

from solvers import sphere_area

__all__ = ["scaled_funk_hecke", "scaled_funk_hecke_over_beta", "von_mises_fisher_values"]


SERIES_BETA = 50.0
"""Below this β the multipliers are summed from the power series of I_ν in
logarithms; above it ``ive`` is used (there β^{1-d/2} can no longer overflow)."""


def scaled_funk_hecke(degrees: np.ndarray, beta: float, d: int) -> np.ndarray:
    """e^{-β} c_l(β) for the degrees l (d = 2: e^{-β} 2π I_l(β)); c_0(0) = |S^{d-1}|, c_l(0) = 0 for l ≥ 1.

    For β ≥ :data:`SERIES_BETA` the product (2π)^{d/2} β^{1-d/2} Ĩ_ν(β) (``ive``) while its prefactor is a
    normal double, otherwise the exponential of :func:`_log_scaled_funk_hecke`."""
    ell = np.abs(np.asarray(degrees))
    if beta == 0:
        return np.where(ell == 0, sphere_area(d), 0.0)
    if beta >= SERIES_BETA:  # the product (2π)^{d/2} β^{1-d/2} Ĩ_ν(β) directly while its prefactor is a normal double
        with np.errstate(over="ignore", under="ignore"):
            prefactor = (2 * np.pi) ** (d / 2) * beta ** (1 - d / 2)
        if np.isfinite(prefactor) and prefactor >= np.finfo(float).tiny:
            return prefactor * ive(ell + d / 2 - 1, beta)
    return np.exp(_log_scaled_funk_hecke(ell, beta, d))


def _log_scaled_funk_hecke(ell: np.ndarray, beta: float, d: int) -> np.ndarray:
    """log(e^{-β} c_l(β)) for degrees l ≥ 0 and β > 0, ν = l + d/2 - 1.

    For β < :data:`SERIES_BETA`, from I_ν(β) = (β/2)^ν ₀F₁(; ν+1; β²/4) / Γ(ν+1):

        log(e^{-β} c_l(β)) = (d/2) log 2π - ν log 2 + l log β - log Γ(ν+1) + log ₀F₁(; ν+1; β²/4) - β,

    for larger β from the exponentially scaled ``ive``:

        log(e^{-β} c_l(β)) = (d/2) log 2π + (1 - d/2) log β + log Ĩ_ν(β).

    Neither form multiplies factors that over- or underflow on their own
    (β^{1-d/2} at small β, (2π)^{d/2} β^{1-d/2} ≈ 1e-370 at d = 438, β = 50).
    -inf where Ĩ_ν(β) underflows: for β ≥ 50 the prefactor (2π/β)^{d/2} β is
    below β, so e^{-β} c_l(β) is then below the doubles as well.
    """
    nu = ell + d / 2 - 1
    if beta < SERIES_BETA:
        return (
            0.5 * d * np.log(2 * np.pi)
            - nu * np.log(2.0)
            + ell * np.log(beta)
            - gammaln(nu + 1)
            + np.log(hyp0f1(nu + 1, 0.25 * beta * beta))
            - beta
        )
    with np.errstate(divide="ignore"):
        return 0.5 * d * np.log(2 * np.pi) + (1 - 0.5 * d) * np.log(beta) + np.log(ive(nu, beta))


def scaled_funk_hecke_over_beta(degrees: np.ndarray, beta: float, d: int) -> np.ndarray:
    """e^{-β} c_l(β)/β for degrees l ≥ 1, with its β → 0 limit; 0 at l = 0.

    The l = 0 entry multiplies a gradient (or a wavenumber 0) and is set to 0;
    its limit |S^{d-1}|/(d) at l = 1 is β → 0 continuous:
    c_1(β)/β → |S^{d-1}|/d, c_l(β)/β → 0 for l ≥ 2.
    """
    ell = np.abs(np.asarray(degrees))
    if beta == 0:
        area = sphere_area(d)
        return np.where(ell == 1, area / d, 0.0)
    out = scaled_funk_hecke(ell, beta, d) / beta
    return np.where(ell == 0, 0.0, out)


def von_mises_fisher_values(cos_angle: np.ndarray, kappa: float, d: int) -> np.ndarray:
    """Von Mises–Fisher density on S^{d-1} at points with <x, loc> = ``cos_angle``:

        ρ(x) = e^{κ <x, loc>} / c_0(κ) = e^{κ(<x, loc> - 1)} / (e^{-κ} c_0(κ)),

    since ∫ e^{κ<x,loc>} dσ(x) = c_0(κ) (Funk–Hecke, l = 0); d = 2 gives
    e^{κ cos θ}/(2π I_0(κ)), κ = 0 the uniform density 1/|S^{d-1}|. Where
    e^{-κ} c_0(κ) is not a normal double (it underflows at d = 438, κ ≥ 1) it is
    formed as exp(κ(<x, loc> - 1) - log(e^{-κ} c_0(κ))), finite wherever ρ is.
    """
    cos_angle = np.asarray(cos_angle)
    if kappa == 0:
        return np.full(cos_angle.shape, 1.0 / sphere_area(d))
    scale = float(scaled_funk_hecke(0, kappa, d))
    if np.isfinite(scale) and scale >= np.finfo(float).tiny:
        return np.exp(kappa * (cos_angle - 1.0)) / scale
    return np.exp(kappa * (cos_angle - 1.0) - _log_scaled_funk_hecke(np.zeros(1), kappa, d)[0])
