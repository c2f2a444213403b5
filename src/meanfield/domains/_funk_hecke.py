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
    """e^{-β} c_l(β) for the degrees l (d = 2: e^{-β} 2π I_l(β)).

    For β < :data:`SERIES_BETA` the product β^{1-d/2} I_{l+d/2-1}(β) is formed
    in logarithms from I_ν(β) = (β/2)^ν ₀F₁(; ν+1; β²/4) / Γ(ν+1):

        e^{-β} c_l(β) = exp((d/2) log 2π - ν log 2 + l log β - log Γ(ν+1) + log ₀F₁(; ν+1; β²/4) - β),

    which neither overflows (β^{1-d/2} at small β and large d) nor underflows
    to a spurious 0/0; for larger β the exponentially scaled ``ive`` is exact.
    """
    ell = np.abs(np.asarray(degrees))
    if beta == 0:
        return np.where(ell == 0, sphere_area(d), 0.0)
    nu = ell + d / 2 - 1
    if beta < SERIES_BETA:
        log_c = (
            0.5 * d * np.log(2 * np.pi)
            - nu * np.log(2.0)
            + ell * np.log(beta)
            - gammaln(nu + 1)
            + np.log(hyp0f1(nu + 1, 0.25 * beta * beta))
            - beta
        )
        return np.exp(log_c)
    return (2 * np.pi) ** (d / 2) * beta ** (1 - d / 2) * ive(nu, beta)


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
    e^{κ cos θ}/(2π I_0(κ)), κ = 0 the uniform density 1/|S^{d-1}|.
    """
    return np.exp(kappa * (np.asarray(cos_angle) - 1.0)) / scaled_funk_hecke(0, kappa, d)
