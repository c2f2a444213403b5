"""One model, two views: X[μ] of a density on a grid equals X of its quadrature atoms."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf


@pytest.mark.parametrize(
    "model", [mf.SelfAttention(2.0), mf.SelfAttention(2.0, normalized=False), mf.SelfAttention(0.0), mf.Kuramoto(1.5)],
    ids=["SA", "USA", "beta0", "Kuramoto"],
)
def test_circle_density_velocity_equals_particle_velocity_of_its_nodes(model):
    # FFT multipliers on the grid and the direct O(n²) particle sum evaluate the
    # same trapezoidal quadrature: equal to round-off.
    circle = mf.Circle(128)
    rho = mf.von_mises(circle, 0.5, 2.0)
    atoms = mf.EmpiricalMeasure(circle.theta, rho.values * circle.weights)
    np.testing.assert_allclose(model.velocity(rho), model.velocity(atoms), rtol=0, atol=1e-13)


def test_beta_zero_velocity_is_projected_mean():
    # DESIGN §2: at β = 0, X = P⊥_x m, on S¹ dθ/dt = |m| sin(φ_m - θ)
    theta = np.array([0.1, 1.3, 2.0, 4.0])
    m = np.mean(np.exp(1j * theta))
    expected = np.abs(m) * np.sin(np.angle(m) - theta)
    np.testing.assert_allclose(mf.SelfAttention(0.0).velocity(theta), expected, atol=1e-15)


def test_sphere_density_velocity_is_tangent():
    sphere = mf.Sphere(12)
    rho = mf.von_mises(sphere, np.array([0.0, 0.0, 1.0]), 3.0)
    field = mf.SelfAttention(2.0).velocity(rho)
    assert field.shape == (*sphere.shape, 3)
    assert np.max(np.abs(np.sum(field * sphere.points, axis=-1))) < 1e-14
    # against the defining quadrature X(x) = P⊥_x Σ_j w_j ρ_j e^{β<x,y_j>} y_j / Σ_j w_j ρ_j e^{β<x,y_j>}
    x = sphere.points.reshape(-1, 3)
    kernel = np.exp(2.0 * x @ x.T) * (rho.values * sphere.weights).ravel()
    mean = kernel @ x / kernel.sum(axis=1, keepdims=True)
    direct = mean - np.sum(mean * x, axis=1, keepdims=True) * x
    np.testing.assert_allclose(field.reshape(-1, 3), direct, rtol=0, atol=1e-14)


def test_kuramoto_density_velocity_uses_the_given_frequency_not_the_law():
    # X_ω(θ) = ω + K ∫ h(φ - θ) ρ(φ) dφ: the law g only weights ω in the marginal, it does not shift X
    import scipy.stats

    rho = mf.von_mises(mf.Circle(64), 0.0, 1.0)
    base = mf.Kuramoto(1.5).velocity(rho)
    np.testing.assert_allclose(mf.Kuramoto(1.5, frequencies=2.0).velocity(rho), base, atol=1e-15)
    np.testing.assert_allclose(mf.Kuramoto(1.5, scipy.stats.norm(0.7, 1)).velocity(rho), base, atol=1e-15)
    np.testing.assert_allclose(mf.Kuramoto(1.5).velocity(rho, frequencies=0.5), base + 0.5, atol=1e-15)


def test_the_velocity_of_a_zonal_density_is_refused_not_summed_over_its_nodes_as_points():
    # a direct sum over the zonal nodes as points of a plane gave 0.73 for the uniform density on S², whose
    # velocity is 0
    with pytest.raises(ValueError, match=r"velocity at the nodes of a density on ZonalSphere\(d=3.*not computed"):
        mf.SelfAttention(1.0).velocity(mf.uniform(mf.ZonalSphere(3, 32)))
