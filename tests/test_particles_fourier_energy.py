"""Energies on the NUFFT path are Fourier sums as cheap as the velocity, accurate to ``accuracy``."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.domains import CircleGeometry
from meanfield.models import _self_attention
from meanfield.models._self_attention_sums import fourier_kernel_sums

CIRCLE = CircleGeometry()


@pytest.mark.parametrize("accuracy", [1e-4, 1e-8, 1e-12])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("beta", [0.1, 1.0, 9.0, 50.0, 300.0])
def test_fourier_energy_matches_direct_sum(beta, normalized, accuracy):
    rng = np.random.default_rng(1)
    theta = np.concatenate([rng.uniform(0, 2 * np.pi, (2, 1000)), rng.vonmises(1.0, 30.0, (2, 1000))], axis=1)
    w = rng.random(theta.shape)
    w /= w.sum(axis=1, keepdims=True)
    model = mf.SelfAttention(beta, normalized=normalized)
    direct = model.particle_energy(theta, w, CIRCLE)
    fast = model.particle_energy(theta, w, CIRCLE, accuracy)
    # the bound is relative to the energy; measured errors are 1e-3..1e-1 of accuracy (1e-15 at 1e-12)
    assert np.all(np.abs(fast - direct) <= accuracy * direct)


def test_fourier_kernel_sum_of_one_particle_is_its_squared_weight():
    # Σ_k e^{-β} I_k(β) = 1: one atom of weight w gives w² exactly (up to the dropped tail)
    out = fourier_kernel_sums(np.array([[2.0]]), np.array([[0.5]]), 7.0, 1e-12)
    assert out[0] == pytest.approx(0.25, rel=1e-13)  # measured 7.1e-15


def test_simulate_nufft_energies_avoid_the_pair_sum(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("O(n²) kernel sum called on the NUFFT path")

    theta = np.random.default_rng(2).uniform(0, 2 * np.pi, 3000)
    model = mf.SelfAttention(4.0)
    with monkeypatch.context() as patch:
        patch.setattr(_self_attention, "kernel_sums", refuse)
        ds = mf.simulate(model, theta, [0.0, 0.5, 1.0], path="nufft", accuracy=1e-9, progress=False)
    direct = model.particle_energy(ds["positions"].values, np.full((3, 3000), 1 / 3000), CIRCLE)
    np.testing.assert_allclose(ds["energy"].values, direct, rtol=1e-9)
