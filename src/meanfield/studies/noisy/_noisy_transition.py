r"""Where the uniform state of noisy self-attention bifurcates, and whether the transition is continuous.

Normalisation (paper 2, arXiv:2312.10794, (SA)/(USA) with noise): ∂_t ρ + div(ρ X[ρ]) = σ Δρ on S^{d-1}, density with
respect to the area measure. With the Funk–Hecke multipliers c_l(β) of
e^{β<x,y>} set κ_l = c_l/(β|S^{d-1}|) (USA) or c_l/(β c_0) (SA); the uniform
state's growth rates are λ_l = l(l+d-2)(κ_l - σ) and, since κ_l decreases in
l, it loses stability at σ_c = κ_1 through the degree-1 mode.

Lyapunov–Schmidt at σ_c (the derivation is in docs/noisy_transition.md). On
the branch ρ = |S^{d-1}|⁻¹(1 + a q_1 + a² b Q + O(a³)), q_1 = √d t,
Q = t² - 1/d, the noise is σ = σ_c + s a² + O(a⁴) = σ_c + d s r² + O(r⁴)
(r = |∫ x ρ dσ| = a/√d), with

    USA:  s/σ_c = [(d-1) κ_1/(κ_1 - κ_2) - d] / (d+2),
    SA:   s/σ_c = (1 - ϱ_1) [(d-1) ϱ_1 (1 - ϱ_2)/(ϱ_1 - ϱ_2) - d (1 + ϱ_1)] / (d+2),   ϱ_l = c_l/c_0.

s < 0: the branch exists for σ < σ_c and is stable (supercritical pitchfork,
continuous transition); s > 0: it exists for σ > σ_c, is unstable, and turns
at a fold σ_f > σ_c into the stable concentrated branch, so that for
σ_c < σ < σ_f the uniform and the concentrated states are both stable
(discontinuous transition, hysteresis). For USA s changes sign where
κ_1 = d κ_2, i.e.

    I_{d/2+1}(β_*) / I_{d/2}(β_*) = 1/d,

the statement of Mun–Rosenzweig (arXiv:2606.05140); it involves only the ratio
c_2/c_1, so the normalisation of the noise (their coupling is K = 1/(2σ): their
K_#(β) = β^{d/2}/(2^{d/2}Γ(d/2)I_{d/2}(β)) equals 1/(2σ_c)) does not enter.
For SA the bracket stays negative for every β > 0 (it decreases from -1 at
β → 0 to -4d/(d+1) as β → ∞; checked on a grid of β in the tests): the SA transition is continuous, and
:func:`critical_beta` says so by raising.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq
from scipy.special import ive

from ...models._self_attention import SelfAttention
from ..._validate import check_positive_int
from ._stationary import check_model
from ._stationary_problem import coupling_ratios

__all__ = ["critical_beta", "critical_noise", "landau_coefficient"]

#: the bracket searched for β_* (the root is ≈ 1.2–2.5 for d ≤ 10 and decreases towards 1 as d grows)
BETA_BRACKET = (1e-3, 100.0)


def critical_noise(model: SelfAttention, d: int = 2) -> float:
    """σ_c(β) = κ_1: USA c_1(β)/(β|S^{d-1}|) = 2^{d/2-1}Γ(d/2) I_{d/2}(β)/β^{d/2},
    SA c_1/(β c_0) = I_{d/2}(β)/(β I_{d/2-1}(β)).

    The noise below which the uniform density is linearly unstable (λ_1 = 0 in
    :meth:`SelfAttention.growth_rate`); 1/d at β = 0. ``model.noise`` is ignored.
    """
    d = check_model(model, d)
    return float(coupling_ratios(np.array([1]), model.beta, d, model.normalized)[0])


def landau_coefficient(model: SelfAttention, d: int = 2) -> float:
    r"""The coefficient s_r of σ = σ_c + s_r r² + O(r⁴) along the branch bifurcating from uniform.

    r = |∫ x ρ dσ| is the order parameter; s_r = d·s with s from the module
    docstring (USA: s/σ_c = [(d-1)κ_1/(κ_1-κ_2) - d]/(d+2); SA: see there).
    s_r < 0: continuous (supercritical) transition; s_r > 0: discontinuous
    (subcritical, with a fold and hysteresis). β = 0 (both models): s_r = -1/(d+2),
    the expansion of the von Mises–Fisher self-consistency r = I_{d/2}(r/σ)/I_{d/2-1}(r/σ).
    ``model.noise`` is ignored.
    """
    d = check_model(model, d)
    kappa1, kappa2 = coupling_ratios(np.array([1, 2]), model.beta, d, model.normalized)
    if model.beta == 0:
        return -1.0 / (d + 2)
    if not model.normalized:
        s = ((d - 1) * kappa1 / (kappa1 - kappa2) - d) / (d + 2)
    else:
        r1, r2 = model.beta * kappa1, model.beta * kappa2
        s = (1 - r1) * ((d - 1) * r1 * (1 - r2) / (r1 - r2) - d * (1 + r1)) / (d + 2)
    return float(d * s * kappa1)


def critical_beta(d: int = 2, normalized: bool = False) -> float:
    r"""β_*: the β above which the noisy transition from the uniform state is discontinuous.

    USA: the root of I_{d/2+1}(β)/I_{d/2}(β) = 1/d (equivalently κ_1 = dκ_2,
    where :func:`landau_coefficient` changes sign), found by ``brentq`` on
    ``ive`` ratios; d = 2: 2.4469, d = 3: 1.8162. (Mun–Rosenzweig,
    arXiv:2606.05140, state the same equation; it does not depend on how the
    noise or the coupling is normalised.)

    Raises
    ------
    ValueError
        ``normalized=True`` (SA): its Landau coefficient is negative for every
        β, so there is no β_* (the transition is always continuous).
    TypeError, ValueError
        d not an integer ≥ 2.
    """
    d = check_positive_int("d", d, minimum=2)
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"normalized must be True (SA) or False (USA), got {normalized!r}")
    if normalized:
        raise ValueError(
            "normalized=True (SA) has no critical beta: its Landau coefficient is negative for every beta, "
            "so the noisy transition is continuous; use normalized=False (USA)"
        )
    return float(brentq(lambda b: ive(d / 2 + 1, b) / ive(d / 2, b) - 1.0 / d, *BETA_BRACKET, xtol=1e-14, rtol=1e-15))
