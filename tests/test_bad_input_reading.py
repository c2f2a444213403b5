"""One reading of particle positions, models refused by type, compare refused across models."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import meanfield as mf

TWO_PI = 2 * np.pi


def test_a_3_by_10_array_is_read_the_same_way_by_every_function():
    angles = np.random.default_rng(0).uniform(0, TWO_PI, (3, 10))
    model = mf.SelfAttention(1.0)
    by_shape = r"the plain array of shape \(3, 10\) was read by its shape as 3 points of R\^10: if its rows are " \
               r"systems of angles, pass domain='circle'"
    for call in (lambda: mf.energy(model, angles), lambda: model.velocity(angles),
                 lambda: mf.simulate(model, angles, [0, 0.1]), lambda: mf.wasserstein(angles[0], angles),
                 lambda: mf.wasserstein(mf.uniform(mf.Circle(16)), angles)):
        with pytest.raises(ValueError, match=by_shape):
            call()
    # with domain='circle' all four read 3 systems of 10 angles: each equals its row alone
    energies = mf.energy(model, angles, domain="circle")
    np.testing.assert_allclose(energies, [mf.energy(model, row) for row in angles], rtol=1e-14)
    np.testing.assert_allclose(model.velocity(angles, domain="circle"), [model.velocity(row) for row in angles],
                               rtol=1e-13, atol=1e-15)
    ds = mf.simulate(model, angles, [0, 0.1], domain="circle")
    assert ds["positions"].shape == (3, 2, 10)
    np.testing.assert_allclose(mf.wasserstein(angles[0], angles, domain="circle"),
                               [mf.wasserstein(angles[0], row) for row in angles], atol=1e-13)


def test_renormalize_is_not_offered_for_an_array_that_may_hold_angles():
    angles = np.random.default_rng(1).uniform(0, TWO_PI, (3, 10))
    with pytest.raises(ValueError) as info:
        mf.energy(mf.SelfAttention(1.0), angles)
    message = str(info.value)
    # domain='circle' comes before renormalize, and renormalize only for points meant for the sphere
    assert message.index("domain='circle'") < message.index("renormalize=True")
    assert "if they are points meant for S^9" in message


def test_one_sphere_tolerance():
    x = np.array([[1.0 + 1e-9, 0.0, 0.0], [0.0, 1.0, 0.0]])  # 1e-9 off: accepted by wasserstein before, not by energy
    for call in (lambda: mf.energy(mf.SelfAttention(1.0), x), lambda: mf.wasserstein(x, x)):
        with pytest.raises(ValueError, match=r"= 1e-09 exceeds sphere_tolerance = 1e-10"):
            call()


def test_empty_and_non_finite_positions():
    model = mf.SelfAttention(1.0)
    with pytest.raises(ValueError, match=r"measure on the circle domain must have shape \(n,\) or \(systems, n\) and n >= 1, "
                                         r"got \(0,\)"):
        mf.energy(model, [])
    with pytest.raises(ValueError, match=r"measure must be finite \(found NaN or infinity\)"):
        mf.energy(model, [np.nan, 1.0])


@pytest.mark.parametrize("beta", ["4", True, np.bool_(False), b"1"])
def test_self_attention_beta_must_be_a_number(beta):
    with pytest.raises(TypeError, match=r"beta must be a real number, got"):
        mf.SelfAttention(beta)


def test_noise_and_coupling_must_be_numbers():
    with pytest.raises(TypeError, match=r"noise must be a real number, got '0.1'"):
        mf.SelfAttention(1.0, noise="0.1")
    with pytest.raises(TypeError, match=r"coupling must be a real number, got True"):
        mf.Kuramoto(True)


def test_kuramoto_equality():
    assert mf.Kuramoto() == mf.Kuramoto()
    assert mf.Kuramoto(1.0, scipy.stats.norm(0, 1)) == mf.Kuramoto(1.0, scipy.stats.norm(0, 1))
    assert mf.Kuramoto(1.0) != mf.Kuramoto(2.0)
    assert mf.Kuramoto(1.0, scipy.stats.norm(0, 1)) != mf.Kuramoto(1.0, scipy.stats.norm(0, 2))
    assert mf.Kuramoto(interaction=[0, -0.5j]) != mf.Kuramoto(interaction=[0, -0.5j, 0.1j])
    assert len({mf.Kuramoto(), mf.Kuramoto()}) == 1


def test_unfrozen_frequency_law_is_refused():
    with pytest.raises(TypeError, match=r"frequencies must be a frozen distribution with its parameters, e.g. "
                                        r"scipy.stats.norm\(0, 1\), got the unfrozen family scipy.stats.norm"):
        mf.Kuramoto(1.0, scipy.stats.norm)


def test_compare_refuses_runs_of_different_models():
    t = [0.0, 0.1]
    pde = mf.solve(mf.SelfAttention(4.0), mf.von_mises(mf.Circle(32), 0.0, 1.0), t)
    particles = mf.simulate(mf.SelfAttention(1.0, normalized=False), np.linspace(0, 6, 10), t)
    with pytest.raises(ValueError, match=r"pde and particles must be runs of the same model, got different model: "
                                         r"pde 'SA', particles 'USA'; beta: pde 4.0, particles 1.0; normalized"):
        mf.compare(pde, particles)


def test_kuramoto_particles_off_the_circle_are_refused_by_the_one_reader():
    points = np.tile([0.0, 0.0, 1.0], (5, 1))
    with pytest.raises(ValueError, match="Kuramoto particles are angles on the circle, got positions on the 'sphere' domain"):
        mf.energy(mf.Kuramoto(), points, domain="sphere")
    with pytest.raises(ValueError, match="Kuramoto particles are angles on the circle, got positions on the 'sphere' domain"):
        mf.Kuramoto().velocity(points, domain="sphere")
