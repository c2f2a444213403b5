"""Property-based checks (hypothesis) of W_p on S¹ and of the sliced distance's stated accuracy; slow.

Cheap deterministic versions of the same invariants run in the default suite
(test_wasserstein.py::test_identity_symmetry_rotation_and_emd_on_fixed_cases).
"""

from __future__ import annotations

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meanfield.measures import wasserstein

pytestmark = pytest.mark.slow

TWO_PI = 2 * np.pi

angles = st.lists(st.floats(-10.0, 10.0, allow_nan=False), min_size=1, max_size=12)
orders = st.sampled_from([1.0, 1.5, 2.0, 3.0])


def uniform_emd(x: np.ndarray, y: np.ndarray, p: float) -> float:
    """Network simplex with the explicit geodesic cost min(|θ - φ| mod 2π, 2π - ...)^p, equal weights.

    The cost is scaled to a largest entry of 1 for the solver (whose optimality test is absolute, so that
    costs of 1e-15, atoms 1e-5 apart at p = 3, would all look equal to it) and scaled back."""
    gap = np.abs(np.mod(x[:, None] - y[None, :], TWO_PI))
    cost = np.minimum(gap, TWO_PI - gap) ** p
    scale = cost.max() if cost.max() > 0 else 1.0
    total = ot.emd2(np.full(x.size, 1 / x.size), np.full(y.size, 1 / y.size), cost / scale, numItermax=10_000_000)
    return (scale * total) ** (1 / p)


@settings(max_examples=60, deadline=None)
@given(angles, angles, orders)
def test_identity_symmetry_and_emd(x, y, p):
    # exact solvers: rounding (1e-12) between ours; against the network simplex, its objective W_p^p to 1e-12
    # (its optimality is decided on costs of order π^p, so W_p^p, not its p-th root, carries the solver's
    # absolute accuracy: a root of 1e-16 rounding near W = 0 is 1e-5)
    x, y = np.array(x), np.array(y)
    assert wasserstein(x, x, p) == pytest.approx(0.0, abs=1e-12)
    d_xy, d_yx = wasserstein(x, y, p), wasserstein(y, x, p)
    assert d_xy == pytest.approx(d_yx, abs=1e-12)
    assert 0 <= d_xy <= np.pi + 1e-12
    assert d_xy**p == pytest.approx(uniform_emd(x, y, p) ** p, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(angles, angles, orders, st.floats(-7.0, 7.0, allow_nan=False), st.randoms(use_true_random=False))
def test_rotation_reflection_and_permutation_invariance(x, y, p, alpha, random):
    x, y = np.array(x), np.array(y)
    d_xy = wasserstein(x, y, p)
    perm_x, perm_y = np.array(random.sample(range(x.size), x.size)), np.array(random.sample(range(y.size), y.size))
    assert wasserstein(x + alpha, y + alpha, p) == pytest.approx(d_xy, abs=1e-11)
    assert wasserstein(-x, -y, p) == pytest.approx(d_xy, abs=1e-12)
    assert wasserstein(x[perm_x], y[perm_y], p) == pytest.approx(d_xy, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(angles, angles, orders)
def test_triangle_inequality_through_a_third_measure(x, y, p):
    x, y = np.array(x), np.array(y)
    z = np.concatenate([x, y + 0.5])
    assert wasserstein(x, y, p) <= wasserstein(x, z, p) + wasserstein(z, y, p) + 1e-12


@pytest.mark.parametrize("p", [1, 2])
def test_sliced_estimate_within_its_stated_standard_error(p):
    # 100 projections against an independent 2000-projection reference: both are means of iid
    # terms, so |estimate - reference| <= 4 x (sum of the stated SEs) fails with probability < 1e-4
    rng = np.random.default_rng(7)
    x = rng.normal(size=(80, 3))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.normal(size=(80, 3)) + [0.0, 0.0, 1.0]
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    options = {"method": "sliced", "return_info": True}
    estimate = wasserstein(x, y, p, n_projections=100, seed=1, **options)
    reference = wasserstein(x, y, p, n_projections=2000, seed=2, **options)
    assert reference.accuracy < estimate.accuracy / 3  # SE ~ K^{-1/2}: sqrt(20) ≈ 4.5
    assert abs(estimate.value - reference.value) <= 4 * (estimate.accuracy + reference.accuracy)
    assert estimate.accuracy < 0.1 * estimate.value  # the error bar is informative, not vacuous
