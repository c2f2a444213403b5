"""Normalising densities whose node values are subnormal or so large that their mass overflows.

Masses are formed as 2^{e_ρ + e_w} Σ ρ̃_j w̃_j with ρ̃, w̃ scaled by the binary exponents of their maxima
(:mod:`meanfield.measures._measure`); before, ρ_j w_j of subnormal ρ_j kept a few bits (mass 0.99852 after
normalising 1e-320 on a circle of 64 nodes) and Σ ρ_j w_j of 1e308 overflowed ("zero mass").
"""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf

TINY = np.finfo(float).smallest_subnormal  # 5e-324
LARGEST = np.finfo(float).max  # 1.8e308
MASS_TOLERANCE = 1e-15  # a sum of ≤ 512 scaled products rounds to a few ε


def _domains():
    return [mf.Circle(64), mf.Sphere(7), mf.ZonalSphere(5, 16), mf.ZonalSphere(5, 16, nodes="cells"),
            mf.ZonalSphere(340, 16)]


def _alternating(shape: tuple[int, ...], low: float, high: float) -> np.ndarray:
    return np.where(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 0, low, high)


CASES = {
    "all 1e-320": lambda shape: np.full(shape, 1e-320),
    "all 5e-324": lambda shape: np.full(shape, TINY),
    "5e-324 and 1": lambda shape: _alternating(shape, TINY, 1.0),
    "all 1e308": lambda shape: np.full(shape, 1e308),
    "all the largest double": lambda shape: np.full(shape, LARGEST),
    "1e-300 and 1e300": lambda shape: _alternating(shape, 1e-300, 1e300),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("domain", _domains(), ids=repr)
def test_extreme_positive_values_normalise_to_mass_one(domain, case):
    values = CASES[case](domain.shape)
    rho = mf.density(domain, values)
    assert rho.mass == pytest.approx(1.0, abs=MASS_TOLERANCE)
    # the shape is kept: ρ is proportional to the input (the scaling by powers of two is exact)
    top = np.max(values)
    np.testing.assert_allclose(rho.values / np.max(rho.values), values / top, rtol=4e-16, atol=TINY)


@pytest.mark.parametrize("domain", _domains(), ids=repr)
def test_constant_values_of_any_size_give_the_uniform_density(domain):
    uniform = mf.uniform(domain).values
    for value in (TINY, 1e-320, 1e-200, 1.0, 1e200, 1e308, LARGEST):
        np.testing.assert_allclose(mf.density(domain, np.full(domain.shape, value)).values, uniform, rtol=1e-15)


def test_the_issue_example_on_a_circle():
    # mf.density(mf.Circle(64), np.full(64, 1e-320)) had mass 0.99852 (issue 20, item 9)
    assert mf.density(mf.Circle(64), np.full(64, 1e-320)).mass == pytest.approx(1.0, abs=MASS_TOLERANCE)


def test_the_mass_of_an_unnormalised_density_is_accurate_or_infinite():
    circle = mf.Circle(64)
    # 64 · 1e-320 · 2π/64 = 2π e-320, a subnormal, to the spacing of subnormals (5e-324)
    assert mf.density(circle, np.full(64, 1e-320), normalize=False).mass == pytest.approx(2 * np.pi * 1e-320,
                                                                                            abs=TINY)
    # 64 · 1e308 · 2π/64 > 1.8e308: the mass is not a double, reported as inf, and normalising still works
    huge = mf.density(circle, np.full(64, 1e308), normalize=False)
    assert huge.mass == np.inf
    assert huge.normalized().mass == pytest.approx(1.0, abs=MASS_TOLERANCE)


@pytest.mark.parametrize("domain", _domains(), ids=repr)
def test_zero_or_non_finite_values_are_refused(domain):
    with pytest.raises(ValueError, match="density has zero mass; a probability density needs positive mass"):
        mf.density(domain, np.zeros(domain.shape))
    for bad in (np.inf, np.nan):
        values = np.full(domain.shape, 1.0)
        values.flat[0] = bad
        with pytest.raises(ValueError, match=r"density values must be finite \(found NaN or infinity\)"):
            mf.density(domain, values)
    with pytest.raises(ValueError, match="density values must be non-negative"):
        mf.density(domain, -np.full(domain.shape, TINY))
