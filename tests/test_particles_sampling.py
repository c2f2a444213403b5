"""Sampling: circle densities (exact laws, grid inverse CDF, quantiles), uniform and vMF on spheres, frames."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from scipy.special import iv

import meanfield as mf
from meanfield.particles import orthogonal_frame, uniform_sphere, von_mises_fisher


def test_grid_density_sampler_passes_ks_against_its_cdf():
    circle = mf.Circle(512)
    rho = mf.density(circle, lambda th: 1 + 0.5 * np.cos(2 * th) + 0.3 * np.sin(th))  # no law: grid sampler
    x = mf.sample(rho, 4000, seed=1).points
    cdf = lambda t: (t + 0.25 * np.sin(2 * t) + 0.3 * (1 - np.cos(t))) / (2 * np.pi)  # noqa: E731
    # piecewise-linear interpolation error O(h²) ≈ 1e-5 ≪ KS resolution 1/√4000
    assert scipy.stats.kstest(x, cdf).pvalue > 1e-3
    q = mf.sample(rho, 1000, method="quantile").points
    np.testing.assert_allclose(cdf(np.sort(q)), (np.arange(1000) + 0.5) / 1000, atol=1e-5)


@pytest.mark.parametrize("maker", [
    lambda c: mf.von_mises(c, 1.0, 3.0), lambda c: mf.wrapped_cauchy(c, 2.0, 0.6), lambda c: mf.uniform(c)])
def test_exact_circle_laws_have_the_right_first_moment(maker):
    rho = maker(mf.Circle(256))
    x = mf.sample(rho, 20000, seed=2).points
    m_exact = np.sum(rho.values * np.exp(1j * rho.domain.theta) * rho.domain.weights)
    # |e^{iθ}| = 1: standard error ≤ 1/√20000 = 0.007 per component; 4 s.e.
    assert abs(np.mean(np.exp(1j * x)) - m_exact) < 0.03
    assert x.min() >= 0 and x.max() < 2 * np.pi
    q = mf.sample(rho, 2000, method="quantile").points
    assert abs(np.mean(np.exp(1j * q)) - m_exact) < 2e-3  # deterministic quantiles: O(1/n)


def test_uniform_sphere_and_von_mises_fisher_moments():
    x = uniform_sphere(20000, 5, seed=3)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-15)
    assert np.abs(x.mean(axis=0)).max() < 4 / np.sqrt(20000)
    d, kappa = 4, 3.0
    mu = np.array([0.0, 0.6, 0.0, 0.8])
    y = von_mises_fisher(20000, mu, kappa, seed=4)
    # E<mu, x> = A_d(κ) = I_{d/2}(κ)/I_{d/2-1}(κ); std ≤ 1, 4 standard errors
    assert abs((y @ mu).mean() - iv(d / 2, kappa) / iv(d / 2 - 1, kappa)) < 4 / np.sqrt(20000)
    # orthogonal part isotropic in mu⊥
    perp = y - np.outer(y @ mu, mu)
    assert np.abs(perp.mean(axis=0)).max() < 4 / np.sqrt(20000)


def test_orthogonal_frame_is_orthonormal_and_seeded():
    f = orthogonal_frame(5, 9, seed=3)
    np.testing.assert_allclose(f @ f.T, np.eye(5), atol=1e-14)
    np.testing.assert_array_equal(f, orthogonal_frame(5, 9, seed=3))
    with pytest.raises(ValueError, match="an orthogonal frame needs n <= d, got n = 4, d = 3"):
        orthogonal_frame(4, 3)


def test_sampling_errors():
    rho = mf.uniform(mf.Circle(64))
    with pytest.raises(ValueError, match="method must be one of"):
        mf.sample(rho, 10, method="sobol")
    with pytest.raises(ValueError, match="n must be >= 1"):
        mf.sample(rho, 0)
    with pytest.raises(TypeError, match="measure must be a Density"):
        mf.sample(np.zeros(3), 10)
    with pytest.raises(ValueError, match="loc must be a unit vector"):
        von_mises_fisher(3, [1.0, 1.0], 1.0)


def test_sample_von_mises_fisher_density_on_s2():
    rho = mf.von_mises(mf.Sphere(15), [0.0, 0.6, 0.8], 5.0)
    x = mf.sample(rho, 20000, seed=5)
    assert x.kind == "sphere" and x.points.shape == (20000, 3)
    # E<loc, x> = coth κ - 1/κ on S²; 4 standard errors (std ≤ 1)
    assert abs((x.points @ np.array([0.0, 0.6, 0.8])).mean() - (1 / np.tanh(5.0) - 0.2)) < 4 / np.sqrt(20000)
    with pytest.raises(ValueError, match="method='quantile' is available on the circle only"):
        mf.sample(rho, 10, method="quantile")
