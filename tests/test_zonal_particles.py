"""Zonal PDE vs particles drawn from a von Mises–Fisher law (d = 3 and d = 16).

The polar-angle marginal of the spectral PDE solution (converged: its W₁
change from 320 to 400 degrees is 1e-10 in d = 16) is compared in W₁ with
the polar angles ϑ_i = arccos <x_i, e_d> of independent particle systems
started from iid vMF samples. "Agreement to the sampling error" is tested as
what it means quantitatively: the mean W₁ over systems decays like n^{-1/2}
when the number n of particles is multiplied by 4 (expected factor 2; we
require 1.4 to allow for the scatter of a mean over 4–32 systems). A PDE that
is off by more than the sampling error would show a floor instead.

In d = 16 the distance at t = 3 is dominated by the tilt of each system's
cluster axis (its initial empirical mean direction deviates from e_d by
≈ n^{-1/2}/A_d(κ), and SA dynamics concentrates around it), which is a
sampling effect with the same n^{-1/2} law.
"""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf

CASES = [
    # d, β, κ, spectral degrees resolving the cluster up to t = 3, (particles, systems) small and 4× larger
    pytest.param(3, 2.0, 2.0, 200, ((200, 16), (800, 4)), id="d3"),
    pytest.param(16, 1.0, 4.0, 320, ((100, 32), (400, 8)), id="d16"),
]
TIMES = [0.0, 1.0, 3.0]


def _polar_distances(zonal, pde, model, rho0, n_particles, n_systems, seed):
    x0 = np.stack([mf.sample(rho0, n_particles, seed=seed + s).points for s in range(n_systems)])
    particles = mf.simulate(model, x0, TIMES, rtol=1e-6)
    assert particles.attrs["success"] == 1
    positions = particles.positions.values  # (system, time, particle, component)
    to_pde = np.array(
        [[zonal.polar_wasserstein(pde.density.values[k], positions[s, k]) for s in range(n_systems)] for k in range(3)]
    )
    return to_pde.mean(axis=1)


@pytest.mark.slow
@pytest.mark.parametrize("d,beta,kappa,n_degrees,sizes", CASES)
def test_zonal_pde_matches_particles_in_polar_wasserstein(d, beta, kappa, n_degrees, sizes):
    model = mf.SelfAttention(beta)
    zonal = mf.ZonalSphere(d, n_degrees)
    rho0 = mf.Density(zonal, *zonal.von_mises_values(None, kappa))
    pde = mf.solve(model, rho0, TIMES)
    assert pde.attrs["success"] == 1, pde.attrs["message"]
    (n_small, sys_small), (n_large, sys_large) = sizes
    small = _polar_distances(zonal, pde, model, rho0, n_small, sys_small, seed=1000)
    large = _polar_distances(zonal, pde, model, rho0, n_large, sys_large, seed=2000)
    for k in (1, 2):
        assert small[k] / large[k] > 1.4, (TIMES[k], small, large)
