"""Metastability on S¹: reduced cluster dynamics, the energy staircase and the two-cluster energy jump."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from scipy.integrate import quad

import meanfield as mf
from meanfield.models._self_attention_sums import DirectSelfAttention
from meanfield.studies.clustering._cluster_dynamics import cluster_velocity, merge_clusters

DELTA = 1e-3


def _merge_time_two_equal(beta: float, gap: float, normalized: bool) -> float:
    """Time for two clusters of mass 1/2 to go from separation ``gap`` to DELTA.

    Δ = θ_2 - θ_1 obeys Δ̇ = -2 sinΔ e^{β cosΔ}/(e^β + e^{β cosΔ}) (SA) or
    Δ̇ = -e^{β cosΔ} sinΔ (USA), so T = ∫_δ^{Δ0} dΔ / |Δ̇|.
    """
    if normalized:
        def inverse_speed(u):
            return (np.exp(beta * (1 - np.cos(u))) + 1.0) / (2 * np.sin(u))
    else:
        def inverse_speed(u):
            return np.exp(-beta * np.cos(u)) / np.sin(u)
    return quad(inverse_speed, DELTA, gap, epsabs=0, epsrel=1e-12, limit=200)[0]


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("beta, gap", [(3.0, 2.0), (8.0, 1.2)])
def test_two_equal_clusters_merge_time_and_jump(beta, gap, normalized):
    model = mf.SelfAttention(beta, normalized=normalized)
    ds = mf.cluster_dynamics(model, [0.0, gap], t_end=1e8, merge_distance=DELTA, rtol=1e-11, atol=1e-13)
    expected = _merge_time_two_equal(beta, gap, normalized)
    # DOP853 at rtol 1e-11 and the event root finder: measured relative error ≤ 1e-9
    assert ds.merge_time.values[0] == pytest.approx(expected, rel=1e-7)
    assert int(ds.n_clusters[-1]) == 1
    # energy gained = the two-cluster formula from the initial separation (no other cluster: exact)
    gained = float(ds.energy[-1] - ds.energy[0])
    assert gained == pytest.approx(mf.two_cluster_jump(beta, 0.5, 0.5, gap), rel=1e-12)
    # the merge event itself changes E by (m_a m_b/β)(e^β - e^{β cos δ}) ≈ m_a m_b e^β δ²/2: tiny
    step = float(ds.merge_energy_after[0] - ds.merge_energy_before[0])
    assert step == pytest.approx(mf.two_cluster_jump(beta, 0.5, 0.5, DELTA), rel=1e-3)


def test_cluster_velocity_is_the_particle_engines():
    rng = np.random.default_rng(3)
    theta = rng.uniform(0, 2 * np.pi, 7)
    m = rng.uniform(0.1, 1, 7)
    m /= m.sum()
    for normalized in (True, False):
        engine = DirectSelfAttention(5.0, normalized, m[None], True)(0.0, theta[None])[0]
        ours = cluster_velocity(theta, m, 5.0, normalized)
        # the two sum the same terms in different orders: round-off of the largest term (e^β for USA)
        np.testing.assert_allclose(ours, engine, rtol=0, atol=1e-13 * np.exp(5.0 if not normalized else 0.0))


def test_mass_and_usa_mean_angle_conserved_across_merges():
    rng = np.random.default_rng(7)
    theta = np.sort(rng.uniform(0.0, 2.0, 6))  # within an arc: the lifted mean angle is the plain one
    m = rng.uniform(0.5, 1.5, 6)
    m /= m.sum()
    ds = mf.cluster_dynamics(mf.SelfAttention(3.0, normalized=False), theta, m, t_end=1e4, merge_distance=DELTA)
    assert ds.sizes["merge"] == 5
    np.testing.assert_allclose(ds.mass.sum("cluster"), 1.0, rtol=0, atol=1e-14)
    mean = (ds.mass * ds.angle).sum("cluster")
    # USA: Σ m θ is invariant under the flow (antisymmetric interaction) and the merge rule; DOP853 drift
    np.testing.assert_allclose(mean, float(np.sum(m * theta)), rtol=0, atol=1e-8)
    assert np.all(np.diff(ds.n_clusters.values) <= 0)


def test_merge_rule():
    angles, masses, events = merge_clusters([6.28, 0.0005, 3.0], [0.25, 0.25, 0.5], 1e-2)
    assert masses.tolist() == [0.5, 0.5]
    wrapped = (6.28 - 2 * np.pi + 0.0005) / 2  # short arc across 0
    assert np.mod(angles[0] - wrapped, 2 * np.pi) == pytest.approx(0.0, abs=1e-12)
    assert events[0][:2] == (0, 1)


def test_equispaced_rate_against_a_numerical_jacobian():
    beta, k = 6.0, 4
    theta = 2 * np.pi * np.arange(k) / k
    m = np.full(k, 1.0 / k)
    h = 1e-6
    jac = np.empty((k, k))
    for j in range(k):
        e = np.zeros(k)
        e[j] = h
        jac[:, j] = (cluster_velocity(theta + e, m, beta, True) - cluster_velocity(theta - e, m, beta, True)) / (2 * h)
    # centred differences: O(h²) truncation, ~1e-10 round-off on rates of size 0.06
    assert mf.equispaced_instability_rate(beta, k) == pytest.approx(np.max(np.linalg.eigvals(jac).real), rel=1e-6)
    assert mf.equispaced_instability_rate(2.0, 2) == pytest.approx(2 * np.exp(-2) / (np.exp(2) + np.exp(-2)),
                                                                   rel=1e-13)


def _synthetic_particles(beta: float) -> xr.Dataset:
    """Clusters (1/3 each) at 0, 2, 4 until t = 10, then 1/3 at 0 and 2/3 at 3 until t = 30, then one."""
    time = np.linspace(0.0, 50.0, 501)
    three = np.repeat([0.0, 2.0, 4.0], 4)
    two = np.repeat([0.0, 3.0], [4, 8])
    one = np.zeros(12)
    pos = np.where(time[:, None] < 10, three, np.where(time[:, None] < 30, two, one))
    model = mf.SelfAttention(beta)
    energy = mf.energy(model, mf.EmpiricalMeasure(pos))
    return xr.Dataset({"positions": (("time", "particle"), pos), "energy": ("time", energy)},
                      coords={"time": time}, attrs={"beta": beta, "normalized": 1, "domain": "circle",
                                                    "model": "SA"})


def test_staircase_on_a_synthetic_run():
    beta = 7.0
    st = mf.energy_staircase(_synthetic_particles(beta))
    assert st.plateau_clusters.values.tolist() == [3, 2, 1]
    np.testing.assert_allclose(st.plateau_start, [0.0, 10.0, 30.0])
    np.testing.assert_allclose(st.plateau_end, [10.0, 30.0, 50.0])
    assert st.plateau_complete.values.tolist() == [1, 1, 0]
    np.testing.assert_allclose(st.merge_time, [10.0, 30.0])
    # merge 1: the clusters at 2 and 4 (masses 1/3, separation 2) become the one at 3; the cluster at 0
    # stays: the formula misses exactly the change of the cross terms, within the reported bound
    assert st.merge_mass_a.values[0] == pytest.approx(1 / 3)
    assert st.merge_separation.values[0] == pytest.approx(2.0)
    jump, pair, bound = (st[v].values for v in ("jump_measured", "jump_pair", "jump_bound"))
    assert np.all(np.abs(jump - pair) <= bound)
    # merge 2: clusters of 1/3 and 2/3 at distance 3, nothing else: the formula is exact
    assert jump[1] == pytest.approx(mf.two_cluster_jump(beta, 1 / 3, 2 / 3, 3.0), rel=1e-12)


def test_staircase_reduced_against_particles_of_collapsed_clusters():
    """Identical particles stay identical: the particle run *is* the reduced dynamics until merges."""
    beta, centers = 5.0, np.array([0.0, 2.0, 4.3])
    model = mf.SelfAttention(beta)
    reduced = mf.cluster_dynamics(model, centers, t_end=300.0, merge_distance=DELTA)
    times = np.linspace(0.0, 300.0, 6001)
    particles = mf.simulate(model, np.repeat(centers, 3), times)
    st = mf.energy_staircase(particles, tolerance=DELTA)
    # the particles' count drops at the first output (spacing 0.05) after the reduced merge
    np.testing.assert_array_less(reduced.merge_time.values - 1e-9, st.merge_time.values)
    np.testing.assert_array_less(st.merge_time.values, reduced.merge_time.values + 0.05 + 1e-9)


def test_density_clusters_are_counted():
    domain = mf.Circle(512)
    rho = mf.density(domain, 0.3 * mf.von_mises(domain, 1.0, 500.0).values
                     + 0.7 * mf.von_mises(domain, 4.0, 500.0).values)
    ds = mf.solve(mf.SelfAttention(4.0), rho, [0.0, 0.5], method="finite_volume")
    st = mf.energy_staircase(ds, min_length=0.0)
    assert st.plateau_clusters.values.tolist() == [2]
    # every node joins a lump: the lumps hold all the mass (quadrature of the grid)
    np.testing.assert_allclose(np.sort(st.plateau_masses.values[0]), [0.3, 0.7], atol=1e-6)


def test_bad_inputs():
    model = mf.SelfAttention(4.0)
    with pytest.raises(TypeError, match="model must be a meanfield.SelfAttention"):
        mf.cluster_dynamics(mf.Kuramoto(), [0.0, 1.0])
    with pytest.raises(ValueError, match="noise must be 0"):
        mf.cluster_dynamics(mf.SelfAttention(4.0, noise=0.1), [0.0, 1.0])
    with pytest.raises(ValueError, match="masses must sum to 1"):
        mf.cluster_dynamics(model, [0.0, 1.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="masses must have the shape"):
        mf.cluster_dynamics(model, [0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="angles must be finite"):
        mf.cluster_dynamics(model, [0.0, np.nan])
    with pytest.raises(ValueError, match="merge_distance must be finite and > 0"):
        mf.cluster_dynamics(model, [0.0, 1.0], merge_distance=0.0)
    with pytest.raises(ValueError, match="t_first must be < t_end"):
        mf.cluster_dynamics(model, [0.0, 1.0], t_end=1e-3)
    with pytest.raises(ValueError, match="n_outputs must be an integer"):
        mf.cluster_dynamics(model, [0.0, 1.0], n_outputs=0)
    with pytest.raises(TypeError, match="ds must be an xarray.Dataset"):
        mf.energy_staircase(np.zeros(3))
    with pytest.raises(ValueError, match="min_length must be finite and >= 0"):
        mf.energy_staircase(_synthetic_particles(3.0), min_length=-1.0)
    with pytest.raises(ValueError, match="ds must be a circle Dataset"):
        mf.energy_staircase(xr.Dataset({"energy": ("time", [1.0])}, attrs={"beta": 1.0}))
    with pytest.raises(ValueError, match="beta must be finite and > 0"):
        mf.two_cluster_jump(0.0, 0.5, 0.5, 1.0)
    with pytest.raises(ValueError, match=r"mass_a must be in \(0, 1\]"):
        mf.two_cluster_jump(1.0, 1.5, 0.5, 1.0)
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        mf.equispaced_instability_rate(1.0, 1)
