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
    r"""The critical noise σ_c(β) = κ_1 below which the uniform density of noisy self-attention is unstable.

    The uniform state's degree-l growth rate is λ_l = l(l+d-2)(κ_l - σ) (:meth:`SelfAttention.growth_rate`);
    κ_l decreases in l, so λ_1 = 0 at σ = σ_c = κ_1:

    .. math::

        \sigma_c^{\mathrm{USA}} = \frac{c_1(\beta)}{\beta\,\lvert\mathbb{S}^{d-1}\rvert}
        = \frac{2^{d/2-1}\,\Gamma(d/2)\, I_{d/2}(\beta)}{\beta^{d/2}}, \qquad
        \sigma_c^{\mathrm{SA}} = \frac{c_1(\beta)}{\beta\, c_0(\beta)} = \frac{I_{d/2}(\beta)}{\beta\, I_{d/2-1}(\beta)},

    with the Funk–Hecke multipliers c_l(β) = (2π)^{d/2} β^{1-d/2} I_{l+d/2-1}(β) of e^{β<x,y>}; both are 1/d
    at β = 0 (on S¹, d = 2: USA I_1(β)/β, SA I_1(β)/(β I_0(β))). The noise is the coefficient σ of σΔρ in
    ∂_t ρ + div(ρ X[ρ]) = σ Δρ (paper 2, Problem 7).

    Parameters
    ----------
    model : SelfAttention
        β and SA/USA (``model.normalized``); ``model.noise`` is ignored.
    d : int, default 2
        Ambient dimension d ≥ 2 of S^{d-1} (d = 2: the circle).

    Returns
    -------
    float
        σ_c(β) = κ_1 > 0.

    Raises
    ------
    TypeError, ValueError
        A model other than SelfAttention, d not an integer ≥ 2.

    Examples
    --------
    >>> import numpy as np
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> usa = mf.SelfAttention(4.0, normalized=False)
    >>> round(mf.critical_noise(usa), 8), round(float(iv(1, 4.0) / 4.0), 8)  # S¹: I_1(β)/β
    (2.43986629, 2.43986629)
    >>> # at σ = σ_c the degree-1 growth rate vanishes
    >>> sigma_c = mf.critical_noise(usa, d=3)
    >>> abs(float(mf.SelfAttention(4.0, normalized=False, noise=sigma_c).growth_rate(1, d=3))) < 1e-12
    True
    >>> # SA on S²: I_{3/2}(β)/(β I_{1/2}(β)) = (coth β - 1/β)/β; and 1/d at β = 0
    >>> sa = mf.SelfAttention(2.0)
    >>> bool(np.isclose(mf.critical_noise(sa, d=3), (1 / np.tanh(2.0) - 0.5) / 2.0))
    True
    >>> mf.critical_noise(mf.SelfAttention(0.0), d=4)
    0.25
    """
    d = check_model(model, d)
    return float(coupling_ratios(np.array([1]), model.beta, d, model.normalized)[0])


def landau_coefficient(model: SelfAttention, d: int = 2) -> float:
    r"""The Landau coefficient s_r of σ = σ_c + s_r r² + O(r⁴) along the branch that bifurcates from uniform.

    r = |∫ x ρ dσ| is the order parameter of the stationary densities near σ_c (:func:`critical_noise`), and
    the value returned is s_r itself, the coefficient of r² in σ - σ_c (not divided by σ_c): s_r = d·s, with
    the s of the module docstring, σ = σ_c + s a² in the amplitude a = √d r of q_1 = √d t,

    .. math::

        \frac{s^{\mathrm{USA}}}{\sigma_c} = \frac{1}{d+2}\Big[\frac{(d-1)\,\kappa_1}{\kappa_1 - \kappa_2} - d\Big],
        \qquad
        \frac{s^{\mathrm{SA}}}{\sigma_c} = \frac{1 - \varrho_1}{d+2}\Big[\frac{(d-1)\,\varrho_1 (1 - \varrho_2)}
        {\varrho_1 - \varrho_2} - d\,(1 + \varrho_1)\Big],

    with κ_l = c_l/(β|S^{d-1}|) (USA), c_l/(β c_0) (SA), ϱ_l = c_l/c_0 and σ_c = κ_1, so that
    s_r = d σ_c (s/σ_c). s_r < 0: continuous (supercritical) transition, the branch exists for σ < σ_c with
    r ≈ √((σ - σ_c)/s_r); s_r > 0: discontinuous (subcritical, with a fold and hysteresis). β = 0 (both
    models): s_r = -1/(d+2), the expansion of the von Mises–Fisher self-consistency
    r = I_{d/2}(r/σ)/I_{d/2-1}(r/σ).

    Parameters
    ----------
    model : SelfAttention
        β and SA/USA (``model.normalized``); ``model.noise`` is ignored.
    d : int, default 2
        Ambient dimension d ≥ 2 of S^{d-1} (d = 2: the circle).

    Returns
    -------
    float
        s_r, in units of the noise σ per unit r² (σ - σ_c ≈ s_r r²).

    Raises
    ------
    TypeError, ValueError
        A model other than SelfAttention, d not an integer ≥ 2.

    Examples
    --------
    >>> import meanfield as mf
    >>> mf.landau_coefficient(mf.SelfAttention(0.0), d=3)  # -1/(d+2)
    -0.2

    USA at β = 1 on S¹ is continuous; the stationary state just below σ_c has r² = (σ - σ_c)/s_r to
    O(r⁴):

    >>> usa = mf.SelfAttention(1.0, normalized=False)
    >>> sigma_c, s_r = mf.critical_noise(usa), mf.landau_coefficient(usa)
    >>> s_r < 0
    True
    >>> eps = 1e-4 * sigma_c
    >>> ds = mf.stationary_state(mf.SelfAttention(1.0, normalized=False, noise=sigma_c - eps))
    >>> round(float(ds.order_parameter) ** 2 / (-eps / s_r), 3)
    1.0

    s_r changes sign at β_* (:func:`critical_beta`):

    >>> abs(mf.landau_coefficient(mf.SelfAttention(mf.critical_beta(2), normalized=False))) < 1e-12
    True
    >>> mf.landau_coefficient(mf.SelfAttention(4.0, normalized=False)) > 0
    True
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

    USA: the root of

    .. math::

        \frac{I_{d/2+1}(\beta_*)}{I_{d/2}(\beta_*)} = \frac{1}{d}

    (equivalently κ_1 = dκ_2, where :func:`landau_coefficient` changes sign), found by ``brentq`` on
    ``ive`` ratios in :data:`BETA_BRACKET`; d = 2: 2.4469, d = 3: 1.8162. (Mun–Rosenzweig,
    arXiv:2606.05140, state the same equation; it does not depend on how the
    noise or the coupling is normalised.) For β < β_* the transition at σ_c is continuous, for β > β_* it
    is discontinuous, with hysteresis.

    Parameters
    ----------
    d : int, default 2
        Ambient dimension d ≥ 2 of S^{d-1} (d = 2: the circle).
    normalized : bool, default False
        False for USA; True (SA) has no β_* and raises.

    Returns
    -------
    float
        β_* > 0, to about 1e-14.

    Raises
    ------
    ValueError
        ``normalized=True`` (SA): its Landau coefficient is negative for every
        β, so there is no β_* (the transition is always continuous).
    TypeError, ValueError
        d not an integer ≥ 2, ``normalized`` not a bool.

    Examples
    --------
    >>> import meanfield as mf
    >>> from scipy.special import iv
    >>> beta = mf.critical_beta(2)
    >>> round(beta, 4), round(float(iv(2, beta) / iv(1, beta)), 12)  # I_2/I_1 = 1/2 on S¹
    (2.4469, 0.5)
    >>> beta3 = mf.critical_beta(3)
    >>> round(beta3, 4), round(float(iv(2.5, beta3) / iv(1.5, beta3)), 12)  # I_{5/2}/I_{3/2} = 1/3 on S²
    (1.8162, 0.333333333333)
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
