"""Most-unstable mode of the uniform state (arXiv 2410.23228) and the linear phase that selects it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ive

import meanfield as mf
from meanfield.measures._perturbed_uniform import perturbed_uniform
from meanfield.studies.clustering._unstable_modes import degree_amplitudes, density_peaks


def bessel_argmax(beta: float, d: int) -> int:
    """argmax_l l(l+d-2) I_{l+d/2-1}(β), written out with scipy (σ = 0: the SA and USA factors drop out)."""
    ell = np.arange(1, 80)
    return int(ell[np.argmax(ell * (ell + d - 2) * ive(ell + d / 2 - 1, beta))])


@pytest.mark.parametrize("normalized", [True, False])
def test_design_values_of_k_star(normalized):
    # DESIGN §7: k* = 3 at β = 5, 4 at β = 9, 6 at β = 20, for SA and USA alike
    found = [mf.most_unstable_mode(mf.SelfAttention(b, normalized=normalized)).degree for b in (5.0, 9.0, 20.0)]
    assert found == [3, 4, 6]


@pytest.mark.parametrize("d", [2, 3, 5])
def test_prediction_equals_independent_bessel_argmax(d):
    betas = np.linspace(0.25, 60.0, 120)
    for beta in betas:
        result = mf.most_unstable_mode(mf.SelfAttention(float(beta)), d=d)
        assert result.degree == bessel_argmax(float(beta), d), beta
        assert result.rate == result.rates.max() and result.degrees[0] == 1


def test_k_star_follows_sqrt_two_beta():
    # I_k(β) ≈ e^β e^{-k²/2β}/√(2πβ) puts the maximum of k² I_k at √(2β); the integer argmax
    # stays within 0.53 of it over β ∈ [0.5, 40] (measured 0.52 at β ≈ 1.09)
    for beta in np.linspace(0.5, 40.0, 400):
        assert abs(mf.most_unstable_mode(mf.SelfAttention(float(beta))).degree - np.sqrt(2 * beta)) <= 0.53


def test_max_degree_restricts_the_comparison():
    result = mf.most_unstable_mode(mf.SelfAttention(20.0), max_degree=4)
    assert result.degree == 4 and result.degrees.tolist() == [1, 2, 3, 4]


def test_noise_shifts_the_argmax_down():
    # λ_k = k² (I_k/(β I_0) - σ): σ penalises high k, so k* cannot increase with σ
    clean = mf.most_unstable_mode(mf.SelfAttention(20.0)).degree
    noisy = mf.most_unstable_mode(mf.SelfAttention(20.0, noise=0.02)).degree
    assert noisy < clean


def test_flat_noise_has_equal_amplitudes():
    circle = mf.Circle(64)
    rho = perturbed_uniform(circle, 1e-3, 6, seed=3, spectrum="flat")
    amps = degree_amplitudes(circle, rho.values)
    np.testing.assert_allclose(amps[1:7], amps[1], rtol=1e-12)
    assert np.all(amps[7:] < 1e-14)
    sphere = mf.Sphere(12)
    amps = degree_amplitudes(sphere, perturbed_uniform(sphere, 1e-3, 5, seed=3, spectrum="flat").values)
    np.testing.assert_allclose(amps[1:6], amps[1], rtol=1e-12)
    assert np.all(amps[6:] < 1e-13 * amps[1] / 1e-3)


def test_density_peaks_counts_maxima_above_the_mean():
    theta = mf.Circle(128).theta
    assert density_peaks(1 + 0.1 * np.cos(3 * theta)) == 3
    # a small secondary bump below the mean is not a peak
    assert density_peaks(1 + np.cos(theta) + 0.3 * np.cos(3 * theta)) == 1


@pytest.mark.parametrize("normalized", [True, False])
def test_beta_five_gives_three_clusters_on_the_circle(normalized):
    ds = mf.unstable_mode_run(mf.SelfAttention(5.0, normalized=normalized), mf.Circle(128), seed=1)
    assert ds.attrs["predicted_degree"] == ds.attrs["measured_degree"] == ds.attrs["peaks"] == 3
    assert 0.05 <= ds.attrs["stop_amplitude"] < 0.05 * 1.1  # the first output past the stated fraction
    # the measured growth of k* over the linear phase equals λ_3: the nonlinearity at ±10 % density
    # changes it by 6e-5 (measured 5.7e-5 SA, 6.5e-5 USA), the step cap keeps the time error at 1e-8
    k = 3
    assert float(ds.measured_rate[k]) == pytest.approx(float(ds.predicted_rate[k]), rel=2e-4)
    # separation over the runner-up: measured/predicted - 1 = 2.3e-3 (SA), 2.7e-3 (USA)
    assert ds.attrs["measured_separation"] == pytest.approx(ds.attrs["predicted_separation"], rel=5e-3)


def test_dominant_degree_on_the_sphere():
    # S², SA, β = 5: l* = 3, runner-up l = 2 with separation 5.0 at the end of the linear phase
    ds = mf.unstable_mode_run(mf.SelfAttention(5.0), mf.Sphere(24), seed=0)
    assert ds.attrs["predicted_degree"] == ds.attrs["measured_degree"] == 3
    assert ds.attrs["predicted_separation"] > 4
    # measured rate of l* = 3: relative error 1.2e-5
    assert float(ds.measured_rate[3]) == pytest.approx(float(ds.predicted_rate[3]), rel=1e-4)


def test_bad_arguments():
    with pytest.raises(TypeError, match="model must be a meanfield.SelfAttention"):
        mf.most_unstable_mode(mf.Kuramoto())
    with pytest.raises(ValueError, match="d must be"):
        mf.most_unstable_mode(mf.SelfAttention(1.0), d=1)
    with pytest.raises(ValueError, match="max_degree must be"):
        mf.most_unstable_mode(mf.SelfAttention(1.0), max_degree=0)
    with pytest.raises(ValueError, match="linearly stable"):
        mf.unstable_mode_run(mf.SelfAttention(1.0, noise=1.0), mf.Circle(64))
    with pytest.raises(ValueError, match="fraction must satisfy"):
        mf.unstable_mode_run(mf.SelfAttention(1.0), mf.Circle(64), fraction=0.6)
    with pytest.raises(ValueError, match="amplitude must satisfy"):
        mf.unstable_mode_run(mf.SelfAttention(1.0), mf.Circle(64), amplitude=2.0)
    with pytest.raises(ValueError, match="domain must be a Circle or a Sphere"):
        mf.unstable_mode_run(mf.SelfAttention(1.0), mf.ZonalSphere(4, 32))
    with pytest.raises(ValueError, match="modes must be >= the most unstable degree 3"):
        mf.unstable_mode_run(mf.SelfAttention(5.0), mf.Circle(64), modes=2)
    with pytest.raises(ValueError, match="spectrum must be 'smooth' or 'flat'"):
        perturbed_uniform(mf.Circle(16), spectrum="white")
    with pytest.raises(ValueError, match="spectrum='flat' is available on a circle or a sphere"):
        perturbed_uniform(mf.ZonalSphere(4, 16), spectrum="flat")
