"""Extreme inputs refused in words a user can act on: the parameter named, the value shown."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import meanfield as mf


@pytest.fixture
def rho():
    return mf.density(mf.Circle(64), lambda th: 1 + 0.1 * np.cos(th))


def test_usa_solve_beyond_the_range_of_e_beta_names_beta(rho):
    with pytest.raises(ValueError, match=r"beta = 800 is too large for the unnormalized model \(USA\).*beta > 709.78"):
        mf.solve(mf.SelfAttention(800.0, normalized=False), rho, [0.0, 1.0])


@pytest.mark.parametrize("law", [st.uniform(0.5, 0), st.norm(0, 0)], ids=["uniform(0.5, 0)", "norm(0, 0)"])
def test_a_frequency_law_without_spread_is_refused_naming_it(rho, law):
    message = r"frequencies \w+\(.*\) is not a law with a spread .* pass frequencies=ω, a number"
    with pytest.raises(ValueError, match=message):
        mf.solve(mf.Kuramoto(1.0, frequencies=law), rho, [0.0, 1.0])
    with pytest.raises(ValueError, match=message):
        mf.simulate(mf.Kuramoto(1.0, frequencies=law), np.linspace(0, 3, 10), [0.0, 1.0])


def test_weights_a_little_off_one_show_by_how_much():
    weights = np.full(4, 0.25)
    weights[0] -= 1e-9
    with pytest.raises(ValueError, match=r"weights must sum to 1 \(per system\) to within 1e-10, got sums 1 - 1e-09$"):
        mf.EmpiricalMeasure(np.linspace(0, 3, 4), weights)
    with pytest.raises(ValueError, match=r"got sums 1.2, 0.8 \(2 systems off\)$"):
        mf.EmpiricalMeasure(np.zeros((2, 4)), np.array([[0.3] * 4, [0.2] * 4]))
