"""The one definition of the SA/USA weights, velocity rule and energy prefactor, and the paths that use it.

Every path (BLAS sums, compiled ensemble kernels, reduced cluster dynamics, grid and particle energies)
evaluates the formulas of :mod:`meanfield.models._attention_weights` (paper 2, arXiv:2312.10794, (SA),
(USA), (3.2), (3.5), (7.1)); where two paths compute them differently for speed or round-off, they must
agree to round-off.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy.special import ive

import meanfield as mf
from meanfield.models._attention_weights import (
    BETA_MAX_UNNORMALIZED,
    attention_exponent,
    attention_velocity,
    interaction_energy,
    velocity_factor,
)
from meanfield.domains._geometry import ANGLES, POINTS
from meanfield.models._compiled_kernels import attention_velocity_kernel
from meanfield._vector_math import exp_nonpositive
from meanfield.models._self_attention_sums import DirectSelfAttention, attention_sums
from meanfield.studies.clustering._cluster_dynamics import cluster_velocity


@numba.njit
def _compiled_weights(beta, gram):
    """a_ij = e^{β(<x_i,x_j> - 1)} entry by entry, as the compiled kernels form them."""
    out = np.empty_like(gram)
    for i in range(gram.shape[0]):
        for j in range(gram.shape[1]):
            out[i, j] = exp_nonpositive(attention_exponent(beta, gram[i, j]))
    return out


def _unit_vectors(rng, shape):
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("beta", [0.0, 1.5, 8.0])
def test_blas_sums_equal_the_weights_of_the_compiled_formula(rng, beta):
    x = _unit_vectors(rng, (2, 40, 3))
    w = rng.uniform(0.5, 1.5, (2, 40))
    w /= w.sum(axis=1, keepdims=True)
    num, den = attention_sums(x, w, beta)
    for s in range(2):
        a = _compiled_weights(beta, x[s] @ x[s].T)
        # exponents (βx_i)·x_j - β and β(<x_i,x_j> - 1) differ by a few β·eps, the exponentials by 2.3e-16:
        # relative error of each positive weight ≲ (4β + 2) eps ≤ 8e-15 (measured 4.3e-16), of the sums
        # of positive terms the same
        np.testing.assert_allclose(den[s], a @ w[s], rtol=1e-14, atol=0)
        # |N_i| ≤ D_i: the components are compared on the scale of D_i
        assert np.max(np.abs(num[s] - a @ (w[s, :, None] * x[s])) / den[s][:, None]) < 1e-14


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("beta", [0.0, 2.0, 9.0])
@pytest.mark.parametrize("kind, d", [(ANGLES, 1), (POINTS, 3), (POINTS, 20)])
def test_compiled_velocity_equals_the_numpy_velocity(rng, normalized, beta, kind, d):
    n = 33
    circle = kind == ANGLES
    x = rng.uniform(0, 2 * np.pi, (1, n)) if circle else _unit_vectors(rng, (1, n, d))
    compiled_x = np.ascontiguousarray(x[0][:, None] if circle else x[0])
    w = np.full(n, 1 / n)
    factor = velocity_factor(beta, normalized)
    out = np.empty_like(compiled_x)
    attention_velocity_kernel(kind, compiled_x, w, beta, normalized, factor, out, np.empty((n + d + 2, n)))
    expected = DirectSelfAttention(beta, normalized, w[None], circle)(0.0, x)[0]
    # the same sums in another order (and 1/D times the components instead of a division): |X| ≤ s,
    # round-off ≲ n eps · s = 7e-15 s, measured ≤ 3.2e-16 s (d = 20 exercises the pairwise Gram branch)
    assert np.max(np.abs(out.reshape(expected.shape) - expected)) < 1e-14 * factor


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("beta", [0.5, 6.0, 14.0])
def test_cluster_velocity_is_the_particle_velocity_of_weighted_diracs(rng, normalized, beta):
    theta = rng.uniform(0, 2 * np.pi, 7)
    masses = rng.uniform(0.2, 1.0, 7)
    masses /= masses.sum()
    reduced = cluster_velocity(theta, masses, beta, normalized)
    engine = DirectSelfAttention(beta, normalized, masses[None], True)(0.0, theta[None])[0]
    # angle differences vs the product form c_a s_b - s_a c_b: |θ̇| ≤ s, round-off ≲ k eps · s = 1.6e-15 s
    # (measured ≤ 2.2e-16 s)
    assert np.max(np.abs(reduced - engine)) < 2e-15 * velocity_factor(beta, normalized)


@pytest.mark.parametrize("normalized", [True, False])
def test_a_cluster_exerts_exactly_no_force_on_itself(normalized):
    # the reason the reduced dynamics sums over angle differences: sin(θ_a - θ_a) = 0 exactly
    for angle in (0.0, 0.7, 2.0, 5.5):
        assert cluster_velocity(np.array([angle]), np.array([1.0]), 12.0, normalized)[0] == 0.0


def test_the_velocity_rule_on_numpy_arrays_is_the_compiled_rule():
    num, den = np.array([0.3, -1.2]), np.array([0.5, 2.0])
    for normalized in (True, False):
        assert np.array_equal(attention_velocity.py_func(num, den, normalized, np.exp(3.0)),
                              np.array([attention_velocity(a, b, normalized, np.exp(3.0)) for a, b in zip(num, den)]))
    np.testing.assert_array_equal(attention_velocity.py_func(num, den, True, 7.0), num / den)
    np.testing.assert_array_equal(attention_velocity.py_func(num, den, False, np.exp(3.0)), np.exp(3.0) * num)
    assert velocity_factor(3.0, True) == 1.0 and velocity_factor(3.0, False) == np.exp(3.0)


@pytest.mark.parametrize("beta", [0.0, 0.5, 4.0, 30.0])
def test_grid_and_particle_energies_of_the_same_quadrature_measure_agree(beta):
    circle = mf.Circle(128)
    rho = mf.von_mises(circle, 0.4, 1.3)
    grid = mf.energy(mf.SelfAttention(beta), rho)
    nodes = mf.EmpiricalMeasure(circle.theta, rho.values * circle.weights)
    particles = mf.energy(mf.SelfAttention(beta), nodes)
    # FFT convolution vs the trapezoidal double sum of the same analytic periodic integrand (aliasing of
    # I_k(β), k ≥ 128, below 1e-30): equal to round-off of sums of positive terms (measured ≤ 7.6e-16)
    assert grid == pytest.approx(particles, rel=1e-14)


@pytest.mark.parametrize("beta", [700.0, BETA_MAX_UNNORMALIZED - 1e-9, BETA_MAX_UNNORMALIZED + 1e-9, 712.0, 720.0])
def test_energy_prefactor_in_logarithms_is_exact_beyond_the_overflow_of_exp_beta(beta):
    # uniform measure on S¹: E_β = I_0(β)/(2β) ≈ e^β/(2β √(2πβ)), finite up to β ≈ 721 while e^β
    # overflows above 709.78; grid (FFT) and particles (2048 equispaced angles) both reach it through
    # interaction_energy
    exact = np.exp(beta - 700.0) * ive(0, beta) / (2 * beta) * np.exp(700.0)  # e^β split: no overflow
    assert np.isfinite(exact)
    grid = mf.energy(mf.SelfAttention(beta), mf.uniform(mf.Circle(2048)))
    particles = mf.energy(mf.SelfAttention(beta), np.arange(2048) * (2 * np.pi / 2048))
    # e^{β + log S - log 2β}: the argument ≈ 700 carries a few 700 eps of absolute error, so relative
    # ≲ 5e-13 (measured ≤ 3e-14)
    assert grid == pytest.approx(exact, rel=5e-13) and particles == pytest.approx(exact, rel=5e-13)


def test_interaction_energy_at_beta_zero_is_half_the_squared_mean():
    m = np.array([0.3, -0.4])
    assert interaction_energy(0.0, np.sum(m * m)) == 0.5 * 0.25
