"""Zonal PDE vs particles drawn from a von Mises–Fisher law (d = 3 and d = 16).

The polar-angle marginal of the PDE solution is compared in W₁ with the
polar angles of independent particle systems. "To the sampling error" is
made precise by comparing with the spread of the particle systems: if the
PDE is the mean-field limit, its distance to one system is, on average,
no larger than the distance between two independent systems (for iid-like
fluctuations E W₁(μ_n, μ'_n) ≈ √2 E W₁(μ, μ_n)), while a PDE off by more
than the sampling error fails this.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

import meanfield as mf
from meanfield._zonal import polar_angles

CASES = [
    # d, β, κ, spectral degrees that resolve the cluster up to t = 3, particles per system
    pytest.param(3, 2.0, 2.0, 200, 400, id="d3"),
    pytest.param(16, 1.0, 4.0, 320, 250, id="d16"),
]


@pytest.mark.slow
@pytest.mark.parametrize("d,beta,kappa,n_degrees,n_particles", CASES)
def test_zonal_pde_matches_particles_in_polar_wasserstein(d, beta, kappa, n_degrees, n_particles):
    model = mf.SelfAttention(beta)
    zonal = mf.ZonalSphere(d, n_degrees)
    rho0 = zonal.von_mises(None, kappa)
    times = [0.0, 1.0, 3.0]
    pde = mf.solve(model, rho0, times)
    assert pde.attrs["success"] == 1, pde.attrs["message"]
    n_systems = 4
    x0 = np.stack([mf.sample(rho0, n_particles, seed=seed).points for seed in range(n_systems)])
    particles = mf.simulate(model, x0, times, rtol=1e-6)
    assert particles.attrs["success"] == 1
    positions = particles.positions.values  # (system, time, particle, component)
    for k in (1, 2):
        values = pde.density.values[k]
        to_pde = [zonal.polar_wasserstein(values, positions[s, k]) for s in range(n_systems)]
        angles = [polar_angles(positions[s, k])[0] for s in range(n_systems)]
        between = [wasserstein_distance(a, b) for a, b in itertools.combinations(angles, 2)]
        # mean distance PDE ↔ system ≤ mean distance system ↔ system (expected ratio 1/√2)
        assert np.mean(to_pde) < np.mean(between), (times[k], to_pde, between)
