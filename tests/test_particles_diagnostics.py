"""Diagnostics: clusters, order parameter, attention matrix and rank, pairwise inner products, energy."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

import meanfield as mf
from meanfield.models import particle_energy


def test_number_of_clusters_with_tolerance():
    theta = np.array([0.0, 1e-5, 2.0, 2.0 + 2e-5, 4.0, 2 * np.pi - 1e-5])
    assert mf.number_of_clusters(theta, tolerance=1e-3) == 3  # 0 and 2π - 1e-5 are one cluster
    assert mf.number_of_clusters(theta, tolerance=1e-6) == 6
    batch = np.stack([theta, np.zeros(6)])
    np.testing.assert_array_equal(mf.number_of_clusters(batch, tolerance=1e-3, domain="circle"), [3, 1])
    with pytest.raises(ValueError, match="tolerance must be finite and > 0"):
        mf.number_of_clusters(theta, tolerance=0)


def test_order_parameter_and_energy_of_particles():
    theta = np.array([0.0, np.pi / 2])
    assert mf.order_parameter(theta) == pytest.approx(np.sqrt(2) / 2, rel=1e-15)
    x = mf.particles.uniform_sphere(7, 3, seed=1)
    beta = 2.5
    g = x @ x.T
    assert particle_energy(mf.SelfAttention(beta), x) == pytest.approx(np.exp(beta * g).sum() / (2 * beta * 49),
                                                                       rel=1e-13)
    assert particle_energy(mf.SelfAttention(0.0), x) == pytest.approx(0.5 * np.sum(x.mean(0) ** 2), rel=1e-13)
    batch = np.stack([x, x[::-1]])
    np.testing.assert_allclose(mf.energy(mf.SelfAttention(beta), batch), particle_energy(mf.SelfAttention(beta), x))
    assert mf.energy(mf.Kuramoto(coupling=3.0), theta) == pytest.approx(3.0 * 0.5 / 2, rel=1e-14)


def test_attention_matrix_and_rank():
    x = mf.particles.uniform_sphere(6, 3, seed=2)
    p = mf.attention_matrix(mf.SelfAttention(1.0), x)
    e = np.exp(x @ x.T)
    np.testing.assert_allclose(p, e / e.sum(1, keepdims=True), rtol=1e-13)
    assert mf.numerical_rank(p) == 6  # e^{β<x_i,x_j>} is a positive definite kernel: full rank
    clustered = np.repeat(x[:2], 3, axis=0)
    assert mf.numerical_rank(mf.attention_matrix(mf.SelfAttention(1.0), clustered)) == 2


def test_pairwise_inner_products_and_histogram():
    x0 = mf.particles.uniform_sphere(16, 8, seed=3)
    ds = mf.simulate(mf.SelfAttention(1.0), x0, np.linspace(0, 8, 5))
    ip = mf.pairwise_inner_products(ds["positions"].values[-1])
    assert ip.shape == (16 * 15,) and ip.min() > 0.99
    fig = mf.plot.inner_products(ds)
    assert len(fig.axes[0].patches) == 4
    plt.close("all")


def test_diagnostics_read_a_plain_array_as_energy_does():
    """A (3, 10) array is read by its shape as 3 points of R^10, by energy and by every diagnostic alike."""
    model = mf.SelfAttention(1.0)
    angles = np.random.default_rng(5).uniform(0.0, 2 * np.pi, (3, 10))
    diagnostics = (mf.order_parameter, mf.number_of_clusters, mf.particles.pair_fraction, mf.pairwise_inner_products,
                   lambda x, **kw: mf.attention_matrix(model, x, **kw))
    with pytest.raises(ValueError) as energy_error:
        mf.energy(model, angles)
    assert "read by its shape as 3 points of R^10" in str(energy_error.value)
    for diagnostic in diagnostics:
        with pytest.raises(ValueError) as error:
            diagnostic(angles)
        # the one reader's message, naming the diagnostic's argument instead of energy's
        assert str(error.value) == str(energy_error.value).replace("measure", "positions", 1)
    # domain="circle": 3 systems of 10 angles for both; |m| per system is |mean e^{iθ}|
    assert mf.energy(model, angles, domain="circle").shape == (3,)
    np.testing.assert_allclose(mf.order_parameter(angles, domain="circle"), np.abs(np.exp(1j * angles).mean(1)),
                               rtol=1e-14)
    assert mf.number_of_clusters(angles, 1e-3, domain="circle").shape == (3,)
    # normalised rows: one configuration of 3 points on S^9 for both
    points = angles / np.linalg.norm(angles, axis=1, keepdims=True)
    assert np.ndim(mf.energy(model, points)) == 0
    assert mf.order_parameter(points) == pytest.approx(np.linalg.norm(points.mean(0)), rel=1e-14)
    assert mf.number_of_clusters(points, 1e-3) == 3


def test_stacks_with_leading_axes_and_measures_are_read_by_the_one_reader():
    x = mf.particles.uniform_sphere(5, 3, seed=7)
    stack = np.stack([np.stack([x, x[:1].repeat(5, 0)])] * 2)  # (2, 2, 5, 3): systems, time, n, d
    np.testing.assert_array_equal(mf.number_of_clusters(stack, 1e-6), [[5, 1], [5, 1]])
    off = stack.copy()
    off[1, 1, 2] *= 1.01
    with pytest.raises(ValueError, match=r"^positions must lie on the unit sphere S\^2: .*pass renormalize=True"):
        mf.particles.pair_fraction(off)
    w = np.array([0.5, 0.5, 0.0, 0.0, 0.0])
    measure = mf.EmpiricalMeasure(x, weights=w, domain="sphere")
    assert mf.order_parameter(measure) == pytest.approx(np.linalg.norm(x[:2].mean(0)), rel=1e-14)
