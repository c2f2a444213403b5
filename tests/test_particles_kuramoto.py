"""Kuramoto particles: long-time order parameter against Kuramoto's self-consistency theory."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.integrate import quad
from scipy.optimize import brentq

import meanfield as mf


def _lorentzian_run(n: int, t_end: float, t_avg: float):
    gamma, coupling = 0.5, 2.0
    model = mf.Kuramoto(coupling=coupling, frequencies=scipy.stats.cauchy(0, gamma))
    theta0 = np.random.default_rng(0).uniform(0, 2 * np.pi, n)
    ds = mf.simulate(model, theta0, np.linspace(0, t_end, int(2 * t_end) + 1), rtol=1e-6, atol=1e-8)
    late = ds["order_parameter"].values[ds["time"].values >= t_avg]
    return ds, late, np.sqrt(1 - 2 * gamma / coupling)


def test_lorentzian_frequencies_are_quantiles_on_the_moment_path():
    """The frequencies of n oscillators are the quantiles of g at (j + 1/2)/n, and the run takes the moment path.

    The long-time r∞ of this run is checked by the slow test below; by default,
    test_kuramoto_particles_exact_drift.py checks r∞ = √(1 - 2γ/K) at n = 5000.
    """
    model = mf.Kuramoto(coupling=2.0, frequencies=scipy.stats.cauchy(0, 0.5))
    ds = mf.simulate(model, np.random.default_rng(0).uniform(0, 2 * np.pi, 400), [0.0, 0.5], rtol=1e-6, atol=1e-8)
    assert ds.attrs["path"] == "moments"
    np.testing.assert_allclose(ds["frequency"].values, scipy.stats.cauchy(0, 0.5).ppf((np.arange(400) + 0.5) / 400))


@pytest.mark.slow  # r∞ of the same law is checked by default at n = 5000 (test_kuramoto_particles_exact_drift.py)
def test_lorentzian_frequencies_order_parameter():
    """Lorentzian g with half-width γ, K > 2γ: r∞ = √(1 - 2γ/K) (Kuramoto 1975)."""
    ds, late, r_theory = _lorentzian_run(400, 50.0, 30.0)
    # quantile frequencies remove the sampling noise of g; what remains are finite-n
    # fluctuations of r(t): measured std 0.016–0.018 at n = 400 and correlation time ~ 1,
    # so the mean of 41 samples has s.e. ≈ 0.004; 0.02 is 5 s.e. (measured |dev| ≤ 6e-4, 3 seeds)
    assert abs(late.mean() - r_theory) < 0.02
    assert ds.attrs["path"] == "moments"
    expected = scipy.stats.cauchy(0, 0.5).ppf((np.arange(400) + 0.5) / 400)
    np.testing.assert_allclose(ds["frequency"].values, expected)


@pytest.mark.slow
def test_lorentzian_frequencies_order_parameter_large_n():
    _, late, r_theory = _lorentzian_run(2000, 60.0, 40.0)
    # measured std 0.008 at n = 2000: s.e. of the mean of 41 samples ≈ 0.002 (measured dev 6e-4)
    assert abs(late.mean() - r_theory) < 0.008


def test_gaussian_frequencies_order_parameter():
    """Normal g: r∞ solves 1 = K ∫_{-π/2}^{π/2} cos²φ g(K r sin φ) dφ (locked oscillators; drifting ones cancel)."""
    s, coupling, n = 0.5, 1.2, 1000
    law = scipy.stats.norm(0, s)

    def residual(r):
        integrand = lambda p: np.cos(p) ** 2 * law.pdf(coupling * r * np.sin(p))  # noqa: E731
        return coupling * quad(integrand, -np.pi / 2, np.pi / 2)[0] - 1

    r_theory = brentq(residual, 1e-6, 1.0)  # 0.8510
    ds = mf.simulate(mf.Kuramoto(coupling=coupling, frequencies=law), np.random.default_rng(0).uniform(0, 2 * np.pi, n),
                     np.linspace(0, 100, 201), rtol=1e-6, atol=1e-8)
    late = ds["order_parameter"].values[-80:]
    # measured fluctuation std 0.004 at n = 1000; mean within 0.01 (measured deviation 3e-4)
    assert abs(late.mean() - r_theory) < 0.01


def test_identical_oscillators_synchronise_and_energy_is_k_m2_over_2():
    coupling = 1.5
    theta0 = np.random.default_rng(1).uniform(0, 2 * np.pi, 40)
    ds = mf.simulate(mf.Kuramoto(coupling=coupling), theta0, np.linspace(0, 40, 9), rtol=1e-10, atol=1e-12)
    r = ds["order_parameter"].values
    np.testing.assert_allclose(ds["energy"].values, coupling * r**2 / 2, rtol=1e-12)
    assert np.all(np.diff(ds["energy"].values) > -1e-14)
    assert r[-1] > 1 - 1e-9


def test_kuramoto_with_usa_interaction_matches_self_attention():
    """h(u) = e^{β cos u} sin u with K = 1 is USA on S¹ (paper 2, (7.5))."""
    beta = 1.5
    ks = np.arange(0, 30)
    from scipy.special import iv

    # e^{β cos u} sin u = Σ_k ĥ_k e^{iku} with ĥ_k = -i k I_k(β)/β (from h_β' = -β sin u e^{β cos u})
    coeffs = -1j * ks * iv(ks, beta) / beta
    theta0 = np.random.default_rng(2).uniform(0, 2 * np.pi, 20)
    times = np.linspace(0, 3, 4)
    a = mf.simulate(mf.Kuramoto(coupling=1.0, interaction=coeffs), theta0, times, rtol=1e-11, atol=1e-13)
    b = mf.simulate(mf.SelfAttention(beta, normalized=False), theta0, times, rtol=1e-11, atol=1e-13)
    diff = np.angle(np.exp(1j * (a["positions"].values - b["positions"].values)))
    assert np.abs(diff).max() < 1e-9  # truncation of ĥ at k = 29 is ~1e-30
