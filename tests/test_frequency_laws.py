"""Frequency laws beyond scipy.stats (mixtures, Lorentzian mixtures, discrete laws) and the phase lag.

Exact facts checked: a law's pdf integrates to 1 and its cdf is the integral of the pdf; ppf inverts cdf; its
poles reproduce ∫ g f dω = Σ_m p_m f(ζ_m) for f analytic and bounded in the upper half-plane (the residue
theorem); midpoint quantiles of a discrete law give its atoms in proportion to their weights; the phase lag α
turns the coupling function into h(u - α), so the particles' velocity is the direct sum of sin(θ_j - θ_i - α).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.integrate import quad

import meanfield as mf
from meanfield.models._frequency_laws import describe_law, law_poles

LAWS = [
    mf.LorentzianMixture([-1.0, 0.5, 2.0], [0.3, 0.8, 0.5], [1, 2, 1]),
    mf.bimodal_lorentzian(1.5, 1.0),
    mf.Mixture([scipy.stats.cauchy(-1, 0.5), scipy.stats.norm(1, 0.3)], [0.3, 0.7]),
    mf.Mixture([scipy.stats.cauchy(-1, 0.5), mf.LorentzianMixture([2.0], [0.4])]),
]


@pytest.mark.parametrize("law", LAWS, ids=describe_law)
def test_pdf_cdf_and_ppf_are_one_law(law):
    total = quad(law.pdf, -np.inf, np.inf, epsabs=1e-13, epsrel=1e-13, limit=400)[0]
    assert total == pytest.approx(1.0, abs=1e-10)
    for x in (-3.0, -0.4, 0.0, 1.7):
        assert law.cdf(x) == pytest.approx(quad(law.pdf, -np.inf, x, epsabs=1e-13, epsrel=1e-12, limit=400)[0],
                                           abs=1e-10)
    u = np.linspace(0.01, 0.99, 41)
    # bisection to one ulp of the bracket: the cdf at the quantile is u to round-off
    assert np.max(np.abs(law.cdf(law.ppf(u)) - u)) < 1e-13


@pytest.mark.parametrize("law", LAWS, ids=describe_law)
def test_samples_follow_the_law(law):
    sample = law.rvs(size=20_000, random_state=np.random.default_rng(5))
    # Kolmogorov–Smirnov at n = 20 000: the statistic of a correct sampler is ~1/√n; 0.015 is p ≈ 2e-4
    assert scipy.stats.kstest(sample, law.cdf).statistic < 0.015


@pytest.mark.parametrize("law", [LAWS[0], LAWS[1], LAWS[3], scipy.stats.cauchy(0.3, 0.7)], ids=describe_law)
def test_poles_give_the_average_of_functions_analytic_above(law):
    zeta, weights = law_poles(law)
    assert np.all(zeta.imag > 0) and weights.sum() == pytest.approx(1.0, abs=1e-15)
    for w in (2j - 0.4, 0.5j + 1.0):  # f(ω) = 1/(ω + w) has its pole at -w, in the lower half-plane
        exact = np.sum(weights / (zeta + w))
        real = quad(lambda x: law.pdf(x) * np.real(1 / (x + w)), -np.inf, np.inf, epsabs=1e-13, limit=400)[0]
        imag = quad(lambda x: law.pdf(x) * np.imag(1 / (x + w)), -np.inf, np.inf, epsabs=1e-13, limit=400)[0]
        assert abs(real + 1j * imag - exact) < 1e-10


def test_a_mixture_with_a_law_without_poles_has_none():
    assert LAWS[2].poles is None and law_poles(scipy.stats.norm(0, 1)) is None


def test_a_discrete_law_is_its_own_quadrature():
    law = mf.DiscreteLaw([1.0, -1.0, 0.25], [3, 1, 4])
    assert np.array_equal(law.values, [-1.0, 0.25, 1.0]) and np.allclose(law.weights, [1 / 8, 4 / 8, 3 / 8])
    n = 800
    omega = mf.Kuramoto(1.0, law).natural_frequencies("quantile", (n,), np.random.default_rng(0))
    counts = [int(np.sum(omega == v)) for v in law.values]
    assert counts == [100, 400, 300]
    nodes, weights = mf.Kuramoto(1.0, law).frequency_quadrature(7)
    assert np.array_equal(nodes, law.values) and np.array_equal(weights, law.weights)
    zeta, p = law_poles(law)
    assert np.array_equal(zeta.real, law.values) and np.all(zeta.imag == 0)
    with pytest.raises(ValueError, match="has no density"):
        law.pdf(0.0)


def test_laws_are_described_by_their_parameters_and_compare_by_them():
    law = mf.bimodal_lorentzian(1.5, 1.0)
    assert repr(law) == "lorentzian_mixture(centres=[-1.5, 1.5], widths=[1.0, 1.0], weights=[0.5, 0.5])"
    assert law == mf.LorentzianMixture([-1.5, 1.5], 1.0) and hash(law) == hash(mf.LorentzianMixture([-1.5, 1.5], 1))
    mixed = mf.Mixture([scipy.stats.cauchy(-1, 0.5), scipy.stats.norm(1, 0.3)])
    assert "0x" not in repr(mixed) and repr(mixed).startswith("mixture(weights=[0.5, 0.5]")
    model = mf.Kuramoto(2.0, law)
    assert model.attrs["frequencies"] == repr(law) and model == mf.Kuramoto(2.0, mf.bimodal_lorentzian(1.5, 1.0))


@pytest.mark.parametrize("make, match", [
    (lambda: mf.LorentzianMixture([0.0, 1.0], [1.0, 0.0]), "widths must be 2 finite half-widths > 0"),
    (lambda: mf.LorentzianMixture([0.0, np.nan], 1.0), "centres must be a non-empty 1-D sequence of finite"),
    (lambda: mf.LorentzianMixture([0.0, 1.0], 1.0, [1.0, -1.0]), "weights must be 2 finite positive"),
    (lambda: mf.DiscreteLaw([0.0, 0.0]), "values must be distinct"),
    (lambda: mf.DiscreteLaw([]), "values must be a non-empty"),
    (lambda: mf.Mixture([]), "at least one law"),
    (lambda: mf.Mixture([0.5, scipy.stats.norm(0, 1)]), "components must be continuous laws"),
    (lambda: mf.Mixture([mf.DiscreteLaw([1.0])]), "atoms belong in a DiscreteLaw"),
    (lambda: mf.bimodal_lorentzian(-1.0, 1.0), "separation must be finite and >= 0"),
    (lambda: mf.Kuramoto(1.0, scipy.stats.poisson(3)), "give the atoms as mf.DiscreteLaw"),
    (lambda: mf.Kuramoto(1.0, "cauchy"), "frequencies must be None, a number, a frozen scipy.stats law"),
    (lambda: mf.Kuramoto(1.0, phase_lag=np.inf), "phase_lag must be a finite angle"),
    (lambda: mf.Kuramoto.harmonics(1.0, []), "amplitudes must be a non-empty"),
])
def test_bad_laws_are_refused_by_name(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize("alpha", [0.0, 0.5, -1.2])
def test_the_phase_lag_shifts_the_coupling_function(alpha):
    rng = np.random.default_rng(1)
    theta = rng.uniform(0, 2 * np.pi, 50)
    omega = rng.normal(size=50)
    model = mf.Kuramoto.sakaguchi(1.7, alpha)
    direct = omega + 1.7 * np.mean(np.sin(theta[None, :] - theta[:, None] - alpha), axis=1)
    assert np.max(np.abs(model.velocity(theta, omega) - direct)) < 1e-13
    assert model.has_energy == (alpha == 0) and model.first_harmonic
    assert model.attrs.get("phase_lag", 0.0) == alpha
    a, nu = model.riccati_form(omega)
    assert a == pytest.approx(-0.5j * 1.7 * np.exp(-1j * alpha), abs=1e-15) and np.array_equal(nu, omega)


def test_daido_harmonics_are_a_sum_of_sines():
    rng = np.random.default_rng(2)
    theta = rng.uniform(0, 2 * np.pi, 40)
    model = mf.Kuramoto.harmonics(2.0, [1.0, -0.4, 0.25], phase_lag=0.3)
    u = theta[None, :] - theta[:, None] - 0.3
    direct = 2.0 * np.mean(np.sin(u) - 0.4 * np.sin(2 * u) + 0.25 * np.sin(3 * u), axis=1)
    assert np.max(np.abs(model.velocity(theta) - direct)) < 1e-13
    assert not model.first_harmonic and model.frequency_poles is None
