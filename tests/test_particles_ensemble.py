"""Compiled per-system ensembles (``path="ensemble"``) and the vectorised statistics."""

from __future__ import annotations

import numpy as np
import pytest
from _particles_theorem68 import gamma
from scipy.cluster.hierarchy import fcluster, linkage

import meanfield as mf
from meanfield.particles import number_of_clusters, pair_fraction
from meanfield.models._self_attention_sums import attention_sums


def _angle_gap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(np.angle(np.exp(1j * (a - b))))


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("domain", ["circle", "sphere"])
def test_ensemble_agrees_with_the_general_integrator(rng, normalized, domain):
    beta, times = 3.0, np.linspace(0, 4, 9)
    if domain == "circle":
        x0 = rng.uniform(0, 2 * np.pi, (3, 12))
    else:
        x0 = rng.standard_normal((3, 12, 5))
        x0 /= np.linalg.norm(x0, axis=-1, keepdims=True)
    model = mf.SelfAttention(beta, normalized=normalized)
    fast = mf.simulate(model, x0, times, rtol=1e-10, atol=1e-12, domain=domain)
    # the general path shares one step size across a batch: run each system alone so both take the same steps
    slow = np.stack([mf.simulate(model, x0[s], times, rtol=1e-10, atol=1e-12, domain=domain, path="direct")
                     ["positions"].values for s in range(3)])
    assert fast.attrs["path"] == "ensemble" and fast.attrs["integrator"].endswith("(compiled), dense output")
    got = fast["positions"].values
    gap = _angle_gap(got, slow) if domain == "circle" else np.abs(got - slow)
    # same ODE, same tableau, controller and first step: only round-off differs (the pair sums are
    # ordered differently), grown over 160-1217 steps to t = 4: measured ≤ 7.9e-13 (USA on S¹)
    assert gap.max() < 1e-11
    assert fast.attrs["success"] == 1 and fast.attrs["n_steps"] > 0


@pytest.mark.parametrize("domain", ["circle", "sphere"])
def test_ensemble_uses_the_weights_of_an_empirical_measure(rng, domain):
    shape = (2, 9) if domain == "circle" else (2, 9, 3)
    points = rng.uniform(0, 2 * np.pi, shape) if domain == "circle" else rng.standard_normal(shape)
    if domain == "sphere":
        points /= np.linalg.norm(points, axis=-1, keepdims=True)
    weights = rng.uniform(0.5, 2.0, (2, 9))
    measure = mf.EmpiricalMeasure(points, weights / weights.sum(axis=1, keepdims=True), domain)
    times = np.linspace(0, 3, 4)
    fast = mf.simulate(mf.SelfAttention(4.0), measure, times, rtol=1e-10, atol=1e-12)
    slow = np.stack([mf.simulate(mf.SelfAttention(4.0), mf.EmpiricalMeasure(points[s], measure.weights[s], domain),
                                 times, rtol=1e-10, atol=1e-12, path="direct")["positions"].values
                     for s in range(2)])
    got = fast["positions"].values
    gap = _angle_gap(got, slow) if domain == "circle" else np.abs(got - slow)
    assert fast.attrs["path"] == "ensemble" and gap.max() < 1e-13  # round-off only (measured ≤ 5.3e-15, 3 seeds)
    np.testing.assert_array_equal(fast["weights"].values, measure.weights)


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("beta,n,d", [(1.0, 4, 4), (4.0, 6, 32), (9.0, 8, 8)])
def test_ensemble_follows_theorem_6_8(normalized, beta, n, d):
    times = np.linspace(0.0, 6.0, 13)
    x0 = np.stack([mf.orthogonal_frame(n, d, seed=s) for s in range(3)])
    ds = mf.simulate(mf.SelfAttention(beta, normalized=normalized), x0, times, rtol=1e-10, atol=1e-12,
                     path="ensemble")
    x = ds["positions"].values
    gram = np.einsum("stia,stja->stij", x, x)
    off = gram[..., ~np.eye(n, dtype=bool)]
    ref = gamma(beta, n, times, normalized)
    # local tolerance 1e-10 over tens of steps: global error a few 1e-10 (measured ≤ 1.8e-10)
    np.testing.assert_allclose(off, np.broadcast_to(ref[None, :, None], off.shape), rtol=0, atol=1e-9)
    # exponential charts: |x_i| = 1 to round-off (measured ≤ 7.7e-15, USA at β = 9)
    assert ds.attrs["max_sphere_deviation"] < 1e-13


def test_a_system_is_the_same_bit_for_bit_alone_in_a_batch_and_output_by_output(rng, tmp_path):
    theta = rng.uniform(0, 2 * np.pi, (40, 16))
    times = np.linspace(0, 10, 11)
    model = mf.SelfAttention(6.0)
    batch = mf.simulate(model, theta, times, rtol=1e-5, atol=1e-7, domain="circle")["positions"].values
    for s in (0, 17, 39):
        alone = mf.simulate(model, theta[s:s + 1], times, rtol=1e-5, atol=1e-7, domain="circle")["positions"].values
        single = mf.simulate(model, theta[s], times, rtol=1e-5, atol=1e-7)["positions"].values
        assert np.array_equal(alone[0], batch[s]) and np.array_equal(single, batch[s])
    # interval by interval (a checkpoint asks for every output) continues each system's steps exactly
    stepped = mf.simulate(model, theta, times, rtol=1e-5, atol=1e-7, domain="circle",
                          checkpoint=tmp_path / "run.nc")
    assert np.array_equal(stepped["positions"].values, batch)


def test_step_count_scales_like_a_fifth_order_error_estimate(rng):
    # the controller keeps the local error estimate, O(h^5), at the tolerance: h ∝ tol^(1/5), so
    # 10^5 less tolerance takes 10x the steps (measured 133/16 = 8.3x, the start-up steps included)
    theta = rng.uniform(0, 2 * np.pi, (1, 24))
    steps = [mf.simulate(mf.SelfAttention(2.0), theta, [0, 8], rtol=r, atol=r, domain="circle").attrs["n_steps"]
             for r in (1e-6, 1e-11)]
    assert 7 < steps[1] / steps[0] < 13


def test_ensemble_keeps_the_sphere_and_reports_stops(rng):
    x0 = rng.standard_normal((4, 32, 128))
    x0 /= np.linalg.norm(x0, axis=-1, keepdims=True)
    ds = mf.simulate(mf.SelfAttention(4.0), x0, np.linspace(0, 5, 6), rtol=1e-6, atol=1e-8)
    # points are images of the exponential map: measured 4.4e-16
    assert ds.attrs["max_sphere_deviation"] < 1e-14
    short = mf.simulate(mf.SelfAttention(4.0), x0, np.linspace(0, 5, 6), rtol=1e-6, atol=1e-8, max_steps=5)
    assert short.attrs["success"] == 0 and short.sizes["time"] < 6
    assert "systems stopped: exceeded max_steps = 5 per system" in short.attrs["message"]


def test_ensemble_rejects_what_it_cannot_integrate(rng):
    theta = rng.uniform(0, 2 * np.pi, (2, 8))
    with pytest.raises(ValueError, match="path='ensemble' is available for the attractive SelfAttention without noise"):
        mf.simulate(mf.SelfAttention(1.0, noise=0.1), theta, [0, 1], domain="circle", path="ensemble", dt=0.1)
    with pytest.raises(ValueError, match="method='rk4'"):
        mf.simulate(mf.SelfAttention(1.0), theta, [0, 1], domain="circle", path="ensemble", method="rk4", dt=0.1)


def _clustered(rng, systems, n, d, spread):
    centres = rng.standard_normal((systems, 4, d))
    pick = rng.integers(0, 4, (systems, n))
    x = np.take_along_axis(centres, pick[..., None], axis=1) + spread * rng.standard_normal((systems, n, d))
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("d", [2, 3, 8])
def test_number_of_clusters_equals_single_linkage(rng, d):
    tol = 1e-2
    x = _clustered(rng, 60, 20, d, 3e-3)  # gaps near the tolerance: some clusters split, some merge
    counts = number_of_clusters(x.reshape(3, 20, 20, d), tol)
    expected = [fcluster(linkage(xs, method="single"), t=tol, criterion="distance").max() for xs in x]
    assert counts.shape == (3, 20) and np.array_equal(counts.ravel(), expected)
    assert 1 < np.mean(expected) < 20  # the data do exercise merging and splitting
    if d == 2:
        angles = np.arctan2(x[..., 1], x[..., 0])
        assert np.array_equal(number_of_clusters(angles, tol, domain="circle"), expected)


def test_pair_fraction_equals_a_loop_over_pairs(rng):
    delta = 1e-2
    x = _clustered(rng, 12, 9, 3, 0.05)
    brute = np.array([np.mean([x[s, i] @ x[s, j] >= 1 - delta for i in range(9) for j in range(9) if i != j])
                      for s in range(12)])
    np.testing.assert_array_equal(pair_fraction(x, delta), brute)
    theta = rng.normal(0, 0.1, (12, 9))
    brute = np.array([np.mean([np.cos(theta[s, i] - theta[s, j]) >= 1 - delta for i in range(9) for j in range(9)
                               if i != j]) for s in range(12)])
    np.testing.assert_allclose(pair_fraction(theta, delta, domain="circle"), brute, rtol=0, atol=1e-15)
    assert pair_fraction(np.zeros(1), domain="circle") == 0.0
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 2\], got -1"):
        pair_fraction(theta, -1, domain="circle")


def test_statistics_of_a_simulate_dataset_keep_its_dims(rng):
    theta = rng.uniform(0, 2 * np.pi, (5, 10))
    ds = mf.simulate(mf.SelfAttention(9.0), theta, np.linspace(0, 20, 5), rtol=1e-6, atol=1e-8, domain="circle")
    frac = pair_fraction(ds, 1e-3)
    clusters = number_of_clusters(ds, 1e-2)
    assert frac.dims == ("system", "time") and clusters.dims == ("system", "time")
    np.testing.assert_array_equal(frac.values, pair_fraction(ds["positions"].values, 1e-3, domain="circle"))
    # at t = 0 iid uniform angles: clusters are single particles
    assert np.all(clusters.values[:, 0] == 10)


def test_energy_pair_sums_equal_the_blas_sums(rng):
    x = rng.standard_normal((7, 15, 4))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    model = mf.SelfAttention(5.0)
    w = np.full((7, 15), 1 / 15)
    expected = np.exp(5.0) / 10.0 * np.einsum("sn,sn->s", w, attention_sums(x, w, 5.0)[1])
    # the same sum in another order: relative round-off ≲ n · eps (measured 4e-16)
    np.testing.assert_allclose(mf.models.particle_energy(model, x), expected, rtol=1e-13)


def test_vectorisable_exponential_matches_numpy():
    import numba

    from meanfield._vector_math import exp_nonpositive

    @numba.njit
    def many(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = exp_nonpositive(x[i])
        return out

    x = np.concatenate([np.linspace(-708, 0, 400_001), -np.logspace(-300, 2, 1001), [0.0, -1e-320]])
    # Taylor degree 13 after Cody–Waite reduction: measured 2.3e-16 (an ulp of e^r times 2^k exactly)
    np.testing.assert_allclose(many(x), np.exp(x), rtol=4.5e-16, atol=0)
    assert many(np.array([-800.0]))[0] == many(np.array([-708.0]))[0] and np.isnan(many(np.array([np.nan]))[0])


def test_vectorisable_sine_and_cosine_match_numpy():
    import numba

    from meanfield._vector_math import sincos

    @numba.njit
    def many(x):
        out = np.empty((2, x.size))
        for i in range(x.size):
            out[0, i], out[1, i] = sincos(x[i])
        return out

    x = np.concatenate([np.linspace(-20, 20, 400_001), np.linspace(-1e6, 1e6, 100_001), [0.0, -0.0, 1e-300]])
    got = many(x)
    # three-piece Cody–Waite reduction and degree 17/18 Taylor polynomials: measured 2.2e-16
    np.testing.assert_allclose(got[0], np.sin(x), rtol=0, atol=4.5e-16)
    np.testing.assert_allclose(got[1], np.cos(x), rtol=0, atol=4.5e-16)
