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
