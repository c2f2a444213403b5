"""``success = 1`` only for a valid result: particles off the sphere, angles that lost their digits and
non-finite diagnostics are failures named in ``message``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import meanfield as mf


@pytest.fixture
def sphere_points(rng):
    x = rng.standard_normal((40, 3))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize("noise", [1e14, 1e100])
def test_particles_pushed_off_the_sphere_by_huge_noise_are_a_failure(sphere_points, noise):
    ds = mf.simulate(mf.SelfAttention(1.0, noise=noise), sphere_points, np.linspace(0, 1, 3), dt=0.1, seed=1)
    assert ds.attrs["success"] == 0
    assert ds.attrs["message"].startswith("invalid result: the particles left the sphere: max | |x_i| - 1 | = ")
    assert ds.attrs["max_sphere_deviation"] > 1e-10


def test_moderate_noise_on_the_sphere_stays_on_it_and_succeeds(sphere_points):
    ds = mf.simulate(mf.SelfAttention(1.0, noise=1.0), sphere_points, np.linspace(0, 1, 3), dt=0.01, seed=1)
    assert ds.attrs["success"] == 1 and ds.attrs["max_sphere_deviation"] < 1e-14


@pytest.mark.parametrize("noise", [1e40, 1e100])
def test_angles_beyond_the_resolution_of_doubles_are_a_failure(rng, noise):
    theta = rng.uniform(0, 2 * np.pi, 40)
    ds = mf.simulate(mf.SelfAttention(1.0, noise=noise), theta, np.linspace(0, 1, 3), dt=0.1, seed=1)
    assert ds.attrs["success"] == 0
    assert ds.attrs["message"].startswith("invalid result: the angles lost their digits: |θ| reaches ")


@pytest.mark.parametrize("width", [1e15, 1e18, 1e30])
def test_a_frequency_spread_beyond_the_resolution_of_doubles_is_a_failure(rng, width):
    theta = rng.uniform(0, 2 * np.pi, 40)
    ds = mf.simulate(mf.Kuramoto(1.0, frequencies=st.cauchy(0, width)), theta, np.linspace(0, 1, 3))
    assert ds.attrs["success"] == 0
    assert "the angles lost their digits" in ds.attrs["message"]


def test_a_wide_but_resolved_frequency_spread_succeeds(rng):
    # max |ω_i| ≈ 2 γ n / π = 1.3e4 over t = 10: |θ| ≈ 1.3e5, doubles 1.5e-11 apart
    theta = rng.uniform(0, 2 * np.pi, 40)
    ds = mf.simulate(mf.Kuramoto(1.0, frequencies=st.cauchy(0, 500.0)), theta, np.linspace(0, 10, 3))
    assert ds.attrs["success"] == 1


def test_a_cluster_energy_beyond_the_largest_double_makes_the_result_invalid():
    """success=1 only beside finite outputs: the positions are kept, the message names the energy."""
    ds = mf.simulate(mf.SelfAttention(800.0), np.linspace(0, 3, 5), [0, 1])
    assert ds.attrs["success"] == 0 and np.all(np.isinf(ds.energy.values))
    assert ds.attrs["message"] == ("invalid result: the energy is not finite (+inf (beyond the largest double)) "
                                   "from t = 0")
    assert np.all(np.isfinite(ds.positions.values)) and ds.sizes["time"] == 2
