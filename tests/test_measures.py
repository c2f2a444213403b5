"""Densities and empirical measures: normalisation, laws, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import iv

import meanfield as mf


@pytest.mark.parametrize("n", [16, 64])
def test_circle_weights_sum_to_circumference(n):
    assert mf.Circle(n).weights.sum() == pytest.approx(2 * np.pi, rel=1e-15)
    assert np.allclose(np.linalg.norm(mf.Circle(n).points, axis=-1), 1.0)


@pytest.mark.parametrize("kappa", [0.0, 1.0, 50.0, 600.0])
def test_von_mises_has_unit_mass_and_the_exact_first_moment(kappa):
    # trapezoidal rule is spectrally accurate for periodic analytic functions:
    # with n = 2048 it resolves e^{κ cos θ} up to κ ≈ 600 to round-off.
    circle = mf.Circle(2048)
    rho = mf.von_mises(circle, loc=0.7, kappa=kappa)
    assert rho.mass == pytest.approx(1.0, abs=1e-12)
    m = rho.mean()
    # |m| = I_1(κ)/I_0(κ), direction loc
    expected = iv(1, kappa) / iv(0, kappa) if kappa < 700 else 1.0
    assert np.hypot(*m) == pytest.approx(expected, abs=1e-12)
    if kappa > 0:
        assert np.arctan2(m[1], m[0]) == pytest.approx(0.7, abs=1e-12)


def test_wrapped_cauchy_mean_resultant_is_r():
    rho = mf.wrapped_cauchy(mf.Circle(1024), loc=-1.0, r=0.6)
    assert rho.mass == pytest.approx(1.0, abs=1e-12)
    assert np.hypot(*rho.mean()) == pytest.approx(0.6, abs=1e-12)


def test_uniform_and_density_from_callable():
    circle = mf.Circle(32)
    assert np.allclose(mf.uniform(circle).values, 1 / (2 * np.pi))
    rho = mf.density(circle, lambda th: 2 + np.cos(th))
    assert rho.mass == pytest.approx(1.0, abs=1e-14)
    assert rho.values[0] / rho.values[16] == pytest.approx(3.0)


@pytest.mark.parametrize(
    "values, match",
    [
        (-np.ones(8), "non-negative"),
        (np.zeros(8), "zero mass"),
        (np.full(8, np.nan), "finite"),
        (np.ones(7), "grid's shape"),
    ],
)
def test_bad_density_values_are_rejected(values, match):
    with pytest.raises(ValueError, match=match):
        mf.density(mf.Circle(8), values)


def test_bad_laws_are_rejected():
    circle = mf.Circle(8)
    with pytest.raises(ValueError, match="kappa must be finite and >= 0"):
        mf.von_mises(circle, 0.0, -1.0)
    with pytest.raises(ValueError, match="r must satisfy 0 <= r < 1"):
        mf.wrapped_cauchy(circle, 0.0, 1.0)
    with pytest.raises(ValueError, match="n must be >= 4"):
        mf.Circle(2)
    with pytest.raises(TypeError, match="n must be an integer"):
        mf.Circle(8.0)


def test_empirical_measure_weights_are_checked():
    with pytest.raises(ValueError, match="weights must sum to 1"):
        mf.EmpiricalMeasure(np.zeros(3), np.ones(3))
    mu = mf.EmpiricalMeasure(np.zeros(4))
    assert np.allclose(mu.weights, 0.25)


@pytest.mark.parametrize("d, kappa", [(3, 5.0), (16, 40.0), (100, 200.0), (400, 1.0), (400, 3.0)])
def test_von_mises_fisher_has_unit_mass_in_any_dimension(d, kappa):
    # one normaliser for every domain, e^{-κ} c_0(κ) from the Funk–Hecke multipliers: the
    # Gauss–Gegenbauer quadrature integrates the smooth density to round-off
    assert mf.von_mises(mf.ZonalSphere(d, 96), kappa=kappa).mass == pytest.approx(1.0, abs=1e-12)
