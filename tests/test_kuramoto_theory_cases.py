"""Kuramoto theory functions: the cases they cover, exactly, and the cases they refuse.

* linear rates of incoherence (:func:`meanfield.kuramoto_linear_rates`) for a general coupling function with
  noise: measured as the growth of each Fourier mode of the PDE from 1/2π + ε cos kθ (exact in ω for
  identical oscillators and discrete laws), and for Lorentzian laws as the growth of the Ott–Antonsen amplitude;
* K_c = 2(γ + σ)/cos α with a phase lag; identical oscillators K_c = 2σ and r = I₁(Kr/σ)/I₀(Kr/σ);
* a bimodal law, a discrete law, a phase lag with a law other than the Lorentzian: refused with the name of the
  function that covers them.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats

import meanfield as mf

#: amplitude of the perturbation: its nonlinear feedback on mode k is O(ε²) relative
EPSILON = 1e-4


def mode_growth(model: mf.Kuramoto, k: int, t_end: float) -> complex:
    """(1/t) log of the k-th Fourier coefficient of the marginal from 1/2π + ε cos kθ, by the PDE."""
    circle = mf.Circle(64)
    start = mf.density(circle, 1 + EPSILON * np.cos(k * circle.theta))
    ds = mf.solve(model, start, [0.0, t_end], method="spectral", rtol=1e-12, atol=1e-16)
    c = [np.sum(ds.density.values[j] * np.exp(-1j * k * circle.theta)) for j in (0, 1)]
    return np.log(c[1] / c[0]) / t_end


def test_linear_rates_of_each_harmonic_with_noise_are_the_pde_growth():
    omega = 0.3
    model = mf.Kuramoto.harmonics(1.2, [1.0, 0.6, -0.3], omega, noise=0.05, phase_lag=0.2)
    rates = mf.kuramoto_linear_rates(model)
    assert rates.shape == (3, 1)
    a, k = np.array([1.0, 0.6, -0.3]), np.arange(1, 4)  # ĥ_k = -i a_k/2
    exact = -1j * k * omega - 1j * k * 1.2 * np.conj(-0.5j * a * np.exp(-1j * k * 0.2)) - 0.05 * k * k
    assert np.max(np.abs(rates[:, 0] - exact)) < 1e-14
    for k in (1, 2, 3):
        # one frequency, one rate per mode: the PDE's mode k grows at it to its tolerance (measured ≤ 2e-9) over
        # t = 3, and the imaginary part only modulo 2π/3 (the logarithm's branch)
        measured = mode_growth(model, k, 3.0)
        assert abs(measured.real - rates[k - 1, 0].real) < 1e-7
        assert abs(np.exp(3j * measured.imag) - np.exp(3j * rates[k - 1, 0].imag)) < 1e-6


def test_linear_rates_of_a_discrete_law_solve_its_dispersion_relation():
    law = mf.DiscreteLaw([-0.4, 0.9], [2, 1])
    model = mf.Kuramoto.harmonics(1.2, [1.0, 0.6, -0.3], law, noise=0.05, phase_lag=0.2)
    rates = mf.kuramoto_linear_rates(model)
    h = model.coefficients
    for k in (1, 2, 3):
        # 1 = -ikK conj(ĥ_k e^{-ikα}) Σ_m p_m / (λ + ikω_m + σk²) at each of the two rates of mode k
        for lam in rates[k - 1]:
            total = np.sum(law.weights / (lam + 1j * k * law.values + 0.05 * k * k))
            assert abs(-1j * k * 1.2 * np.conj(h[k]) * total - 1) < 1e-12


def test_lorentzian_rate_is_the_growth_of_the_amplitude():
    model = mf.Kuramoto.sakaguchi(2.0, 0.4, scipy.stats.cauchy(0.3, 0.25))
    (rate,) = mf.kuramoto_linear_rates(model)[0]
    assert rate == pytest.approx(-0.3j - 0.25 + np.exp(0.4j), abs=1e-14)  # -ic - γ - σ + (K/2) e^{iα}
    ds = mf.ott_antonsen(model, [0.0, 5.0], 1e-9, atol=1e-22)  # atol well below |z|: the error is relative
    z = ds.pole_amplitude_real.values[:, 0] + 1j * ds.pole_amplitude_imag.values[:, 0]
    measured = np.log(z[1] / z[0]) / 5.0
    # z is the conjugate convention (∫ e^{iθ}): its rate is conj λ; nonlinear terms are O(|z|²) = 1e-12 relative
    assert abs(measured - np.conj(rate)) < 1e-8


def test_critical_couplings_with_lag_and_noise():
    lorentz = scipy.stats.cauchy(0, 0.4)
    assert mf.kuramoto_critical_coupling(lorentz, 0.1, 0.6) == pytest.approx(2 * 0.5 / np.cos(0.6), rel=1e-14)
    assert mf.kuramoto_critical_coupling(None, 0.1, 0.6) == pytest.approx(0.2 / np.cos(0.6), rel=1e-14)
    # the rate of mode 1 vanishes there
    k_c = mf.kuramoto_critical_coupling(lorentz, 0.1, 0.6)
    rate = mf.kuramoto_linear_rates(mf.Kuramoto.sakaguchi(k_c, 0.6, lorentz, noise=0.1))[0, 0]
    assert abs(rate.real) < 1e-14


def test_noisy_identical_oscillators():
    sigma, coupling = 0.5, 2.0
    assert mf.kuramoto_critical_coupling(None, sigma) == 2 * sigma
    r = float(mf.kuramoto_theory(coupling, None, sigma))
    x = coupling * r / sigma
    assert r == pytest.approx(scipy.special.i1(x) / scipy.special.i0(x), abs=1e-11)


@pytest.mark.parametrize("call, match", [
    (lambda: mf.kuramoto_theory(5.0, mf.bimodal_lorentzian(1.5, 1.0)), "bimodal_boundaries"),
    (lambda: mf.kuramoto_critical_coupling(mf.bimodal_lorentzian(1.5, 1.0)), "rises away from its centre"),
    (lambda: mf.kuramoto_theory(2.0, mf.DiscreteLaw([-1, 1])), "kuramoto_linear_rates"),
    (lambda: mf.kuramoto_theory(3.0, scipy.stats.norm(0, 1), phase_lag=0.5), "covers Lorentzian laws"),
    (lambda: mf.kuramoto_theory(3.0, scipy.stats.cauchy(0, 1), noise=0.1, phase_lag=0.5), "covers σ = 0"),
    (lambda: mf.kuramoto_theory(3.0, scipy.stats.cauchy(0, 1), phase_lag=2.0), "cos α > 0"),
    (lambda: mf.kuramoto_locked_frequency(3.0, scipy.stats.norm(0, 1), 0.5), "covers Lorentzian laws"),
    (lambda: mf.kuramoto_linear_rates(mf.Kuramoto(1.0, scipy.stats.norm(0, 1))), "continuous spectrum"),
])
def test_out_of_case_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_unimodal_mixture_is_covered():
    # ω₀ < Δ/√3: the symmetric bimodal Lorentzian is unimodal and K_c = 2/(π g(0)) = 2(Δ² + ω₀²)/Δ
    law = mf.bimodal_lorentzian(0.3, 1.0)
    assert mf.kuramoto_critical_coupling(law) == pytest.approx(2 * (1 + 0.09), rel=1e-12)
    assert np.isnan(mf.kuramoto_locked_frequency(1.0, scipy.stats.cauchy(0, 1), 0.0))


def test_an_under_resolved_noiseless_law_names_the_engines_that_resolve_it():
    # two harmonics, σ = 0, a Lorentzian on quadrature nodes: the locked oscillators' Diracs outgrow any grid;
    # the warning says so and names particles and the Ott–Antonsen engine instead of only "a finer grid"
    model = mf.Kuramoto.harmonics(3.0, [1.0, 0.3], scipy.stats.cauchy(0, 0.5))
    rho = mf.density(mf.Circle(64), lambda t: (1 + 0.1 * np.cos(t)) / (2 * np.pi))
    with pytest.warns(RuntimeWarning, match=r"under-resolved .* or, without noise, particles \(mf.simulate\)"):
        ds = mf.solve(model, rho, np.linspace(0, 10, 3), frequency_nodes=8)
    assert ds.attrs["resolved"] == 0 and ds.attrs["method"] == "finite_volume"
    assert "mf.ott_antonsen" in ds.attrs["method_reason"]
