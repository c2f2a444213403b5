"""solve keeps its outputs when the initial density is already under-resolved."""

from __future__ import annotations

import numpy as np
import pytest
from solvers import UnderResolvedError

import meanfield as mf


def test_under_resolved_initial_density_returns_the_initial_output():
    # κ = 30 on 16 nodes: the spectral tail |ρ̂_k|/|ρ̂_0| beyond k = 5 is 0.71, far above tail_tol = 1e-6
    # (built from the node values: von_mises refuses a grid this coarse for κ = 30)
    circle = mf.Circle(16)
    rho0 = mf.Density(circle, np.exp(30.0 * (np.cos(circle.theta) - 1.0)))
    ds = mf.solve(mf.SelfAttention(1.0), rho0, [0.0, 1.0], "spectral")
    assert ds.attrs["success"] == 0
    assert ds.attrs["message"].startswith("spectral: under-resolved on N=16 nodes")
    assert ds.sizes["time"] == 1
    np.testing.assert_array_equal(ds["density"].values[0], rho0.normalized().values)
    assert ds.attrs["n_steps"] == 0
    with pytest.raises(UnderResolvedError, match="under-resolved on N=16 nodes"):
        mf.solve(mf.SelfAttention(1.0), rho0, [0.0, 1.0], "spectral", raise_on_error=True)
