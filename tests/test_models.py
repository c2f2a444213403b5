"""Model parameters, kernel multipliers and the linear growth rates of DESIGN §2."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.special import iv, spherical_in

import meanfield as mf
from meanfield.domains._funk_hecke import scaled_funk_hecke


@pytest.mark.parametrize("beta", [0.5, 4.0, 9.0])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_circle_growth_rates_match_bessel_formulas(beta, k):
    # DESIGN §2 on S¹: USA λ_k = k² I_k(β)/β - σk²; SA λ_k = k² I_k(β)/(β I_0(β)) - σk²
    sigma = 0.03
    usa = mf.SelfAttention(beta, normalized=False, noise=sigma).growth_rate(k)
    sa = mf.SelfAttention(beta, normalized=True, noise=sigma).growth_rate(k)
    assert usa == pytest.approx(k**2 * iv(k, beta) / beta - sigma * k**2, rel=1e-13)
    assert sa == pytest.approx(k**2 * iv(k, beta) / (beta * iv(0, beta)) - sigma * k**2, rel=1e-13)


def test_funk_hecke_multipliers_on_s2_are_spherical_bessel():
    ell = np.arange(6)
    beta = 3.3
    assert np.allclose(scaled_funk_hecke(ell, beta, 3) * np.exp(beta), 4 * np.pi * spherical_in(ell, beta), rtol=1e-13)


def test_funk_hecke_large_beta_keeps_ratios():
    # ive avoids overflow at β = 800
    beta = 800.0
    ratio = scaled_funk_hecke(1, beta, 3) / scaled_funk_hecke(0, beta, 3)
    # i_1/i_0 = coth β - 1/β exactly
    assert np.isfinite(ratio) and ratio == pytest.approx(1 / np.tanh(beta) - 1 / beta, rel=1e-13)


@pytest.mark.parametrize("d", [2, 3, 10])
@pytest.mark.parametrize("normalized", [True, False])
def test_beta_to_zero_is_continuous(d, normalized):
    # β → 0: c_l/β → |S^{d-1}|/d at l = 1, → 0 for l ≥ 2 (DESIGN §2), so λ_1 → (d-1)/d.
    ell = np.arange(1, 5)
    at_zero = mf.SelfAttention(0.0, normalized).growth_rate(ell, d)
    near_zero = mf.SelfAttention(1e-7, normalized).growth_rate(ell, d)
    assert np.allclose(at_zero, [(d - 1) / d, 0, 0, 0], atol=1e-15)
    # first-order difference in β: |λ(β) - λ(0)| = O(β) (measured 0.5β for d = 2, 0.17β for d = 10)
    assert np.allclose(near_zero, at_zero, rtol=0, atol=1e-7)


def test_kuramoto_frequency_quadrature():
    identical = mf.Kuramoto(1.0)
    nodes, weights = identical.frequency_quadrature()
    assert nodes.tolist() == [0.0] and weights.tolist() == [1.0]
    gauss = mf.Kuramoto(1.0, scipy.stats.norm(0.3, 0.5))
    nodes, weights = gauss.frequency_quadrature(12)
    # Gauss–Hermite is exact for E[ω²] and E[ω⁴]
    assert np.sum(weights * nodes**2) == pytest.approx(0.3**2 + 0.5**2, rel=1e-13)
    assert np.sum(weights * (nodes - 0.3) ** 4) == pytest.approx(3 * 0.5**4, rel=1e-12)
    cauchy = mf.Kuramoto(1.0, scipy.stats.cauchy(0, 0.5))
    nodes, weights = cauchy.frequency_quadrature(16)
    assert weights.sum() == pytest.approx(1.0) and np.allclose(nodes, -nodes[::-1])


def test_bad_model_parameters_are_rejected():
    with pytest.raises(ValueError, match="beta must be finite and >= 0"):
        mf.SelfAttention(-1.0)
    with pytest.raises(ValueError, match="noise must be finite and >= 0"):
        mf.SelfAttention(1.0, noise=-0.1)
    with pytest.raises(TypeError, match="normalized must be True"):
        mf.SelfAttention(1.0, normalized="yes")
    with pytest.raises(ValueError, match="coupling must be finite and >= 0"):
        mf.Kuramoto(coupling=-1)
    with pytest.raises(TypeError, match="frequencies must be None, a number"):
        mf.Kuramoto(frequencies="gaussian")
    with pytest.raises(ValueError, match="interaction must be a 1-D array"):
        mf.Kuramoto(interaction=[0.0])


@pytest.mark.parametrize("d", [4, 7, 12])
@pytest.mark.parametrize("beta", [0.05, 2.0, 30.0, 80.0])
def test_funk_hecke_multipliers_match_the_funk_hecke_integral(d, beta):
    # c_l(β) = |S^{d-2}| ∫_{-1}^{1} e^{βt} P_l(t) (1-t²)^{(d-3)/2} dt with the
    # Gegenbauer polynomial normalised to P_l(1) = 1 (Funk–Hecke). Gauss–Jacobi
    # with 80 nodes integrates e^{β(t-1)} P_l to round-off for β ≤ 80; at small β
    # the value ~ β^l carries cancellation of O(1) terms, hence rel = 1e-9.
    from scipy.special import eval_gegenbauer, roots_jacobi

    alpha = (d - 2) / 2
    nodes, weights = roots_jacobi(80, (d - 3) / 2, (d - 3) / 2)
    for ell in range(4):
        legendre = eval_gegenbauer(ell, alpha, nodes) / eval_gegenbauer(ell, alpha, 1.0)
        value = mf.sphere_area(d - 1) * np.sum(weights * np.exp(beta * (nodes - 1)) * legendre)
        assert scaled_funk_hecke(ell, beta, d) == pytest.approx(value, rel=1e-9)


def test_multipliers_stay_finite_for_small_beta_in_high_dimension():
    # β^{1-d/2} I_ν(β) in logarithms: no overflow at d = 100, β = 1e-6 (λ_1 → (d-1)/d)
    assert mf.SelfAttention(1e-6).growth_rate(1, 100) == pytest.approx(0.99, rel=1e-10)
