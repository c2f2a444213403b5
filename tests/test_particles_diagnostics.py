"""Diagnostics: clusters, order parameter, attention matrix and rank, pairwise inner products, energy."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

import meanfield as mf
from meanfield.particles import particle_energy, plot_pairwise_inner_products


def test_number_of_clusters_with_tolerance():
    theta = np.array([0.0, 1e-5, 2.0, 2.0 + 2e-5, 4.0, 2 * np.pi - 1e-5])
    assert mf.number_of_clusters(theta, tolerance=1e-3) == 3  # 0 and 2π - 1e-5 are one cluster
    assert mf.number_of_clusters(theta, tolerance=1e-6) == 6
    batch = np.stack([theta, np.zeros(6)])
    np.testing.assert_array_equal(mf.number_of_clusters(batch, tolerance=1e-3, kind="circle"), [3, 1])
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
    ax = plot_pairwise_inner_products(ds)
    assert len(ax.patches) == 4
    plt.close("all")
