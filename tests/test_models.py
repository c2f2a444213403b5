"""Model parameters, kernel multipliers and the linear growth rates of DESIGN §2."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.special import iv, spherical_in

import meanfield as mf
from meanfield._kernels import scaled_funk_hecke


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
    # ive avoids overflow: c_1/c_0 → 1 - (d-1)/(2β) + O(β⁻²) for β → ∞
    beta = 800.0
    ratio = scaled_funk_hecke(1, beta, 3) / scaled_funk_hecke(0, beta, 3)
    assert np.isfinite(ratio) and ratio == pytest.approx(1 - 1 / beta, rel=1e-5)


@pytest.mark.parametrize("d", [2, 3, 10])
@pytest.mark.parametrize("normalized", [True, False])
def test_beta_to_zero_is_continuous(d, normalized):
    # β → 0: c_l/β → |S^{d-1}|/d at l = 1, → 0 for l ≥ 2 (DESIGN §2), so λ_1 → (d-1)/d.
    ell = np.arange(1, 5)
    at_zero = mf.SelfAttention(0.0, normalized).growth_rate(ell, d)
    near_zero = mf.SelfAttention(1e-7, normalized).growth_rate(ell, d)
    assert np.allclose(at_zero, [(d - 1) / d, 0, 0, 0], atol=1e-15)
    # first-order difference in β: |λ(β) - λ(0)| = O(β)
    assert np.allclose(near_zero, at_zero, atol=1e-6)


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
