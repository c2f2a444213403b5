"""Paper 2, Theorem 6.9: inner products of iid uniform tokens concentrate on γ_β(t) with spread ~ d^{-1/2}."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf

N, BETA, SYSTEMS = 8, 1.0, 64


@pytest.fixture(scope="module")
def runs():
    times = np.concatenate([[0.0], [mf.equiangular_curve([BETA], N, 1.0 - g)[0] for g in (0.25, 0.5)]])
    return {d: mf.equiangular_concentration(d, N, BETA, times, SYSTEMS, seed=0) for d in (128, 512)}


def test_curve_and_layout(runs):
    ds = runs[128]
    np.testing.assert_allclose(ds.gamma.values, [0.0, 0.25, 0.5], atol=1e-9)
    assert ds.inner_product.shape == (SYSTEMS, 3, N * (N - 1))
    assert float(ds.scale) == pytest.approx(np.sqrt(np.log(128) / 128))


def test_initial_spread_is_one_over_sqrt_d(runs):
    # inner products of iid uniform points on S^{d-1} have mean 0 and variance exactly 1/d;
    # 64 systems × 56 pairs: measured √d · rms = 0.98 … 1.02 over eight seeds
    for d, ds in runs.items():
        assert float(ds.rms_deviation[0]) * np.sqrt(d) == pytest.approx(1.0, abs=0.05)


def test_deviation_within_a_multiple_of_sqrt_log_d_over_d(runs):
    # Theorem 6.9: |<x_i, x_j> - γ_β| ≲ √(log d/d) (its constant 2 c(β)^{nt} is astronomically large);
    # measured max over pairs, systems and times ≤ 1.82 √(log d/d) over eight seeds at d = 128
    for ds in runs.values():
        assert np.all(ds.max_deviation.values <= 2.5 * float(ds.scale))


def test_spread_shrinks_like_inverse_sqrt_d(runs):
    # rms(d = 128)/rms(d = 512) = 2 for a d^{-1/2} spread (√(log d/d) would give 1.76);
    # measured 1.87 … 2.08 over eight seeds while γ_β ≤ 0.5
    ratio = runs[128].rms_deviation.values / runs[512].rms_deviation.values
    np.testing.assert_allclose(ratio, 2.0, atol=0.2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="d must be"):
        mf.equiangular_concentration(1, 4, 1.0, [0.0, 1.0])
    with pytest.raises(ValueError, match="systems must be"):
        mf.equiangular_concentration(16, 4, 1.0, [0.0, 1.0], systems=0)
    with pytest.raises(ValueError, match="beta"):
        mf.equiangular_concentration(16, 4, -1.0, [0.0, 1.0])
    with pytest.raises(ValueError, match="t must"):
        mf.equiangular_concentration(16, 4, 1.0, [1.0, 0.5])
