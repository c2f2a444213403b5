"""The NUFFT path on S¹ agrees with the direct O(n²) sum to the requested accuracy."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.models._self_attention_sums import DirectSelfAttention, NufftSelfAttention, fourier_truncation


@pytest.mark.parametrize("accuracy", [1e-6, 1e-10])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("beta", [0.0, 1.0, 9.0, 50.0])
def test_nufft_velocity_matches_direct_sum(beta, normalized, accuracy):
    rng = np.random.default_rng(0)
    theta = np.concatenate([rng.uniform(0, 2 * np.pi, (2, 700)), rng.vonmises(1.0, 4.0, (2, 700))], axis=1)
    w = np.full(theta.shape, 1 / theta.shape[1])
    direct = DirectSelfAttention(beta, normalized, w, True)(0.0, theta)
    fast = NufftSelfAttention(beta, normalized, w, accuracy)(0.0, theta)
    # accuracy is relative to the size of the velocity field (measured ratios 0.03–0.4)
    assert np.abs(fast - direct).max() <= accuracy * np.abs(direct).max()


def test_fourier_truncation_grows_like_beta_and_log_accuracy():
    assert fourier_truncation(0.0, 1e-10) == 1
    k6, k10 = fourier_truncation(9.0, 1e-6), fourier_truncation(9.0, 1e-10)
    assert 9 < k6 < k10 < 40


def test_simulate_paths_agree_and_are_reported():
    rng = np.random.default_rng(3)
    theta = rng.uniform(0, 2 * np.pi, 600)
    model = mf.SelfAttention(4.0)
    times = np.linspace(0, 2, 3)
    fast = mf.simulate(model, theta, times, rtol=1e-8, atol=1e-10, accuracy=1e-12)
    direct = mf.simulate(model, theta, times, rtol=1e-8, atol=1e-10, path="direct")
    assert fast.attrs["path"] == "nufft" and direct.attrs["path"] == "direct"
    assert fast.attrs["fourier_modes"] > 0 and direct.attrs["fourier_modes"] == -1
    diff = np.angle(np.exp(1j * (fast["positions"].values - direct["positions"].values)))
    # both runs take the same 8 steps (sizes equal to 3e-10), so the gap is the effect of the NUFFT
    # velocity error (relative accuracy 1e-12; measured 2e-14 at t = 0) over t = 2: measured 4.7e-14
    assert np.abs(diff).max() < 1e-12
    small = mf.simulate(model, theta[:50], times)
    assert small.attrs["path"] == "ensemble"  # few particles: compiled per-system kernels
    assert mf.simulate(model, theta[:300], times[:2]).attrs["path"] == "nufft"


def test_nufft_rejected_off_the_circle():
    x = mf.particles.uniform_sphere(8, 3, seed=1)
    with pytest.raises(ValueError, match="path='nufft' is available for SelfAttention on the circle only"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 1], path="nufft")
