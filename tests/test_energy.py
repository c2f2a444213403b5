"""E_β of densities against direct quadrature and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import iv

import meanfield as mf


def test_energy_of_a_density_equals_the_double_integral():
    circle = mf.Circle(96)
    rho = mf.von_mises(circle, 0.3, 2.0)
    beta = 1.7
    th, w, r = circle.theta, circle.weights, rho.values
    direct = np.einsum("i,j,ij->", r * w, r * w, np.exp(beta * np.cos(th[:, None] - th[None, :]))) / (2 * beta)
    # both are the trapezoidal rule of an analytic periodic integrand: equal to round-off
    assert mf.energy(mf.SelfAttention(beta), rho) == pytest.approx(direct, rel=1e-13)


@pytest.mark.parametrize("beta", [0.5, 3.0, 20.0])
def test_energy_of_uniform_is_i0_over_2beta(beta):
    # E_β[uniform] = (1/2β) (1/2π) ∫ e^{β cos θ} dθ = I_0(β)/(2β)
    e = mf.energy(mf.SelfAttention(beta, normalized=False), mf.uniform(mf.Circle(256)))
    assert e == pytest.approx(iv(0, beta) / (2 * beta), rel=1e-13)


def test_energy_at_beta_zero_is_half_squared_mean():
    rho = mf.wrapped_cauchy(mf.Circle(512), 0.0, 0.4)
    assert mf.energy(mf.SelfAttention(0.0), rho) == pytest.approx(0.5 * 0.4**2, rel=1e-12)
    assert mf.energy(mf.Kuramoto(coupling=3.0), rho) == pytest.approx(1.5 * 0.4**2, rel=1e-12)


def test_energy_without_gradient_structure_is_an_error():
    with pytest.raises(ValueError, match="not odd"):
        mf.energy(mf.Kuramoto(interaction=[0.0, 0.5]), mf.uniform(mf.Circle(16)))


@pytest.mark.parametrize("beta", [5e-324, 800.0])
def test_energy_beyond_the_largest_double_is_inf_with_a_warning(beta, caplog):
    # E_β ≥ e^{β min<x,y>}/(2β): 1/(2β) overflows for subnormal β, e^β for β > 709.78
    rho = mf.von_mises(mf.Circle(64), 0.0, 1.0)
    points = np.array([[1.0, 0.0], [0.0, 1.0]])
    with caplog.at_level("WARNING"):
        assert mf.energy(mf.SelfAttention(beta), rho) == np.inf
        assert mf.energy(mf.SelfAttention(beta, normalized=False), points) == np.inf
    assert "exceeds the largest double" in caplog.text


def test_energy_at_large_beta_is_finite_and_exact():
    # E_β[uniform on S¹] = I_0(β)/(2β) with I_0 from the scaled ive: β = 600 has e^β ≈ 4e260
    from scipy.special import ive

    e = mf.energy(mf.SelfAttention(600.0), mf.uniform(mf.Circle(4096)))
    assert e == pytest.approx(np.exp(600.0) * ive(0, 600.0) / 1200.0, rel=1e-12)
