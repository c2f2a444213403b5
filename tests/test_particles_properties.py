"""Property tests (hypothesis): equivariances and invariants of the particle engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import meanfield as mf

pytestmark = pytest.mark.slow


@settings(max_examples=25, deadline=None)
# β = 0 or β ≥ 1e-6: below ~1e-300 the energy ≈ 1/(2β) is not a double (it is returned as inf)
@given(n=st.integers(2, 12), d=st.integers(2, 6), beta=st.one_of(st.just(0.0), st.floats(1e-6, 6.0)),
       normalized=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_permutation_rotation_equivariance_and_sphere_constraint(n, d, beta, normalized, seed):
    rng = np.random.default_rng(seed)
    x0 = mf.particles.uniform_sphere(n, d, rng)
    perm = rng.permutation(n)
    rot = mf.orthogonal_frame(d, d, rng)
    model = mf.SelfAttention(beta, normalized)
    times = [0.0, 1.0, 2.0]
    opts = {"rtol": 1e-10, "atol": 1e-12}
    a = mf.simulate(model, x0, times, **opts)
    b = mf.simulate(model, x0[perm] @ rot.T, times, **opts)
    np.testing.assert_allclose(b["positions"].values, a["positions"].values[:, perm] @ rot.T, atol=1e-8)
    assert a.attrs["max_sphere_deviation"] < 1e-13
    e = a["energy"].values
    assert np.all(np.diff(e) >= -1e-12 * np.abs(e).max())
