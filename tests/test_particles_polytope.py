"""Paper 1, Theorem 3.1 (V = I, QᵀK > 0): the rescaled tokens z_i = e^{-t} x_i stay in
the shrinking convex hull of their past positions and converge to finitely many
points, the vertices of a convex polytope K (generic initial data)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial import ConvexHull

import meanfield as mf


@pytest.mark.parametrize("beta, seed", [(3.0, 4), (6.0, 5), (10.0, 1)])
def test_rescaled_tokens_converge_to_vertices_of_a_polytope(beta, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((16, 2))
    times = np.array([0.0, 1.0, 2.0, 5.0, 20.0, 60.0, 120.0])
    model = mf.Attention(beta, projection=False, rescaled=True)
    z = mf.simulate(model, x0, times, rtol=1e-10, atol=1e-12).positions.values
    # ż_i = Σ_j P_ij z_j - z_i points into conv{z_j}: hulls are nested (to the integrator's
    # tolerance, far below 1e-8 of the diameter)
    scale = np.ptp(x0, axis=0).max()
    for before, after in zip(z[:-1], z[1:]):
        if np.linalg.matrix_rank(before - before.mean(0), tol=1e-6) < 2:
            break  # collapsed onto a segment: the hull has no interior left to test against
        faces = ConvexHull(before).equations
        assert np.max(after @ faces[:, :2].T + faces[:, 2]) < 1e-8 * scale
    # converged: the last 60 time units move no token by more than 1e-6
    assert np.max(np.abs(z[-1] - z[-2])) < 1e-6 * scale
    labels = fcluster(linkage(z[-1], "single"), 1e-4 * scale, "distance")
    limits = np.array([z[-1][labels == c].mean(axis=0) for c in range(1, labels.max() + 1)])
    # fewer limit points than tokens, each a vertex of the polytope they span
    assert 2 <= len(limits) < len(x0)
    if len(limits) > 2:
        assert len(ConvexHull(limits).vertices) == len(limits)
