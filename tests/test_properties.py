"""Cheap property tests (hypothesis) that run by default: mass, positivity, equivariances, W(μ, μ) = 0.

Few examples each, derandomized (the same examples on every run, so CI is
reproducible), no deadline; the whole file takes a few seconds. Longer searches
of related invariants are in test_particles_properties.py and
test_wasserstein_properties.py (marked slow).
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import meanfield as mf
from meanfield.measures import wasserstein

FEW = settings(max_examples=15, deadline=None, derandomize=True)
TWO_PI = 2 * np.pi

seeds = st.integers(0, 2**32 - 1)
betas = st.floats(0.0, 6.0, allow_nan=False)
noises = st.sampled_from([0.0, 0.02])


def _quietly(function, *args, **kwargs):
    """Call ``function`` with its under-resolution warnings silenced (rough data are the point here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(*args, **kwargs)


def _rough_positive(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Node values exp(2 z), z iid standard normal: positive, rough, a ratio of up to ~e^16 between nodes."""
    return np.exp(2.0 * np.random.default_rng(seed).standard_normal(shape))


def _band_limited(theta: np.ndarray, seed: int, modes: int = 4) -> np.ndarray:
    """1 + Σ_{k ≤ modes} a_k cos(kθ + φ_k) with Σ|a_k| = 0.8: positive and resolved by a spectral grid."""
    rng = np.random.default_rng(seed)
    amplitudes = rng.dirichlet(np.ones(modes)) * 0.8
    phases = rng.uniform(0.0, TWO_PI, modes)
    k = np.arange(1, modes + 1)
    return 1.0 + (amplitudes * np.cos(np.outer(theta, k) + phases)).sum(axis=1)


@FEW
@given(seed=seeds, beta=betas, noise=noises, normalized=st.booleans(),
       domain=st.sampled_from(["circle", "sphere", "zonal"]))
def test_finite_volume_conserves_mass_and_positivity(seed, beta, noise, normalized, domain):
    if domain == "sphere":
        # smooth data: the S² start is resampled from the Gauss nodes to the cells spectrally, which can
        # overshoot below 0 on rough node values before any step is taken
        grid = mf.Sphere(7)
        u = mf.particles.uniform_sphere(1, 3, np.random.default_rng(seed))[0]

        def along_u(lat, lon):  # e^{2 <u, x>}
            x = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], axis=-1)
            return np.exp(2.0 * x @ u)

        rho0 = mf.density(grid, along_u)
    else:
        grid = mf.Circle(32) if domain == "circle" else mf.ZonalSphere(5, 32, nodes="cells")
        rho0 = mf.density(grid, _rough_positive(grid.shape, seed))
    ds = _quietly(mf.solve, mf.SelfAttention(beta, normalized=normalized, noise=noise), rho0, [0.0, 0.25, 0.5],
                  method="finite_volume")
    assert ds.attrs["success"] == 1
    # the cell masses are only exchanged through faces: conserved to round-off (a few ulps per step)
    assert np.max(np.abs(ds.mass.values - 1.0)) < 1e-13
    assert np.all(ds.density.values > 0)


@FEW
@given(seed=seeds, beta=betas, noise=noises, shift=st.integers(1, 63),
       method=st.sampled_from(["finite_volume", "spectral"]))
def test_rotating_the_start_by_a_grid_shift_rotates_the_solution(seed, beta, noise, shift, method):
    circle = mf.Circle(64)
    values = _band_limited(circle.theta, seed)
    model = mf.SelfAttention(beta, noise=noise)
    times = [0.0, 0.2, 0.4]
    a = _quietly(mf.solve, model, mf.density(circle, values), times, method=method)
    b = _quietly(mf.solve, model, mf.density(circle, np.roll(values, shift)), times, method=method)
    # the schemes commute with the cyclic shift up to the round-off of their FFTs; the steps are the same
    assert a.attrs["n_steps"] == b.attrs["n_steps"]
    np.testing.assert_allclose(b.density.values, np.roll(a.density.values, shift, axis=1), rtol=0, atol=1e-12)


@FEW
@given(seed=seeds, beta=betas, alpha=st.floats(-10.0, 10.0, allow_nan=False), normalized=st.booleans())
def test_particles_on_the_circle_are_rotation_and_permutation_equivariant(seed, beta, alpha, normalized):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(0.0, TWO_PI, 7)
    perm = rng.permutation(7)
    model = mf.SelfAttention(beta, normalized=normalized)
    options = {"rtol": 1e-10, "atol": 1e-12}
    a = mf.simulate(model, x0, [0.0, 0.5, 1.0], **options).positions.values
    b = mf.simulate(model, (x0 + alpha)[perm], [0.0, 0.5, 1.0], **options).positions.values
    gap = np.angle(np.exp(1j * (b - (a[:, perm] + alpha))))  # angles compared on the circle
    # a rotation changes the rounding of the positions (|x| ≤ 2π + 10) only: 1e-9 is 10⁵ ulps of 16
    assert np.max(np.abs(gap)) < 1e-9


@FEW
@given(seed=seeds, beta=betas, n=st.integers(2, 9))
def test_particles_on_the_sphere_are_permutation_equivariant(seed, beta, n):
    rng = np.random.default_rng(seed)
    x0 = mf.particles.uniform_sphere(n, 3, rng)
    perm = rng.permutation(n)
    model = mf.SelfAttention(beta)
    a = mf.simulate(model, x0, [0.0, 1.0]).positions.values
    b = mf.simulate(model, x0[perm], [0.0, 1.0]).positions.values
    # the velocity is a sum over particles; reordering it changes its rounding only
    np.testing.assert_allclose(b, a[:, perm], rtol=0, atol=1e-12)


angles = st.lists(st.floats(-10.0, 10.0, allow_nan=False), min_size=1, max_size=10)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(x=angles, y=angles, p=st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_wasserstein_on_the_circle_vanishes_on_the_diagonal_and_is_symmetric(x, y, p):
    x, y = np.array(x), np.array(y)
    assert wasserstein(x, x, p, domain="circle") < 1e-12
    assert wasserstein(x, np.mod(x, TWO_PI)[::-1], p, domain="circle") < 1e-12  # the same measure, rewritten
    forward, backward = wasserstein(x, y, p, domain="circle"), wasserstein(y, x, p, domain="circle")
    assert abs(forward - backward) <= 1e-12 * max(1.0, forward)
    assert 0.0 <= forward <= np.pi  # the geodesic distance is at most π
