"""Zonal stationary states of noisy self-attention: Newton solver, stability, continuation, β_*."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ive

import meanfield as mf
from meanfield.studies.noisy._stationary_problem import StationaryProblem, coupling_ratios


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("normalized", [False, True])
def test_beta_zero_is_the_von_mises_fisher_self_consistency(d, normalized):
    """β = 0: X = P⊥ m, ρ ∝ e^{<x, m>/σ}, so r = I_{d/2}(r/σ)/I_{d/2-1}(r/σ) (S¹: I_1/I_0), σ_c = 1/d."""
    sigma = 0.6 / d
    ds = mf.stationary_state(mf.SelfAttention(0.0, normalized=normalized, noise=sigma), d)
    r = float(ds.order_parameter)
    assert ds.attrs["success"] == 1 and r > 0.3
    # Newton converges to max|R| ≤ 1e-12; the fixed point of the scalar map is then exact to ~1e-15
    assert r == pytest.approx(ive(d / 2, r / sigma) / ive(d / 2 - 1, r / sigma), abs=1e-12)
    assert mf.critical_noise(mf.SelfAttention(0.0, normalized=normalized), d) == pytest.approx(1 / d, rel=1e-15)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("normalized", [False, True])
def test_uniform_state_has_zero_residual_and_the_growth_rates_as_spectrum(d, normalized):
    model = mf.SelfAttention(3.0, normalized=normalized, noise=0.2)
    problem = StationaryProblem(3.0, normalized, d, 20, 96)
    # the quadrature integrates every q_l, l ≥ 1, to 0 exactly; round-off of a sum of 96 terms (measured 3e-16)
    assert np.max(np.abs(problem.residual(np.zeros(20), 0.2))) < 1e-14
    spectrum = np.sort(problem.linearised_spectrum(np.zeros(20), 0.2, 12).real)[::-1]
    expected = np.sort(model.growth_rate(np.arange(1, 13), d))[::-1]
    # Galerkin in the eigenbasis of the uniform state: exact up to round-off (measured 3e-14)
    np.testing.assert_allclose(spectrum, expected, rtol=0, atol=1e-11)


def test_stationary_state_is_a_fixed_point_of_the_circle_solver():
    """mf.solve started at the Newton solution stays there (spectral scheme, rtol 1e-8 by default)."""
    model = mf.SelfAttention(4.0, normalized=False, noise=2.5)
    state = mf.stationary_state(model, 2)
    rho = mf.stationary_density(state, mf.Circle(64))
    out = mf.solve(model, rho, [0.0, 2.0])
    drift = float(np.max(np.abs(out.density.values[-1] - rho.values)) / np.max(rho.values))
    # relative drift measured 5.7e-10, below the scheme's default rtol 1e-8
    assert drift < 1e-8
    # measured |Δr| = 1.7e-11
    assert float(out.order_parameter[-1]) == pytest.approx(float(state.order_parameter), abs=1e-9)


def test_stationary_state_is_a_fixed_point_of_the_zonal_solver():
    model = mf.SelfAttention(2.0, normalized=True, noise=0.15)
    state = mf.stationary_state(model, 3)
    rho = mf.stationary_density(state, mf.ZonalSphere(3, 48))
    out = mf.solve(model, rho, [0.0, 2.0])
    drift = float(np.max(np.abs(out.density.values[-1] - rho.values)) / np.max(rho.values))
    assert drift < 1e-8  # measured 2.1e-11, below the scheme's default rtol 1e-8


@pytest.mark.parametrize("d,normalized,beta", [(2, False, 1.5), (3, False, 4.0), (3, True, 3.0)])
def test_bifurcation_point_and_landau_coefficient_from_the_branch(d, normalized, beta):
    """σ(a) = σ_c + s a² + O(a⁴) on the branch (a = y_1): Richardson from a and 2a gives σ_c and s."""
    model = mf.SelfAttention(beta, normalized=normalized)
    root = brentq(lambda s: float(mf.SelfAttention(beta, normalized=normalized, noise=s).growth_rate(1, d)),
                  1e-3, 1e3, xtol=1e-15)
    sigma_c = mf.critical_noise(model, d)
    branch = mf.continuation(model, d, (0.5 * sigma_c, 2 * sigma_c), step=0.01, max_points=2)
    a = float(branch.moment[1, 0])
    twice = mf.continuation(model, d, (0.5 * sigma_c, 2 * sigma_c), step=0.02, max_points=2)
    s1, s2 = float(branch.noise[1]), float(twice.noise[1])
    extrapolated = (4 * s1 - s2) / 3
    assert a == pytest.approx(0.01, abs=1e-13)
    # O(a⁴) = 1e-8 plus Newton's 1e-12/a: measured ≤ 6e-9 relative
    assert abs(extrapolated - root) < 1e-8 * sigma_c
    curvature, curvature_twice = (s1 - sigma_c) / a**2, (s2 - sigma_c) / (2 * a) ** 2
    slope = (4 * curvature - curvature_twice) / 3  # Richardson on (σ - σ_c)/a² = s + O(a²)
    # landau_coefficient is s_r = d s in σ = σ_c + s_r r², r = a/√d
    assert slope * d == pytest.approx(mf.landau_coefficient(model, d), rel=1e-5)  # measured ≤ 4e-9


@pytest.mark.parametrize("d", [2, 3, 4, 7])
def test_critical_beta_is_where_the_landau_coefficient_changes_sign(d):
    beta_star = mf.critical_beta(d)
    direct = brentq(lambda b: ive(d / 2 + 1, b) / ive(d / 2, b) - 1 / d, 0.1, 50, xtol=1e-15)
    assert beta_star == pytest.approx(direct, rel=1e-12)
    # the same root from κ_1 = d κ_2 (Funk–Hecke multipliers, another code path)
    kappa = brentq(lambda b: float(np.subtract(*coupling_ratios(np.array([1, 2]), b, d, False) * [1, d])),
                   0.1, 50, xtol=1e-15)
    assert beta_star == pytest.approx(kappa, rel=1e-10)
    below = mf.landau_coefficient(mf.SelfAttention(0.99 * beta_star, normalized=False), d)
    above = mf.landau_coefficient(mf.SelfAttention(1.01 * beta_star, normalized=False), d)
    assert below < 0 < above


def test_critical_beta_values_and_sa_has_none():
    assert mf.critical_beta(2) == pytest.approx(2.4469183, abs=1e-6)
    assert mf.critical_beta(3) == pytest.approx(1.8161545, abs=1e-6)
    for d in (2, 3, 10):
        coefficients = [mf.landau_coefficient(mf.SelfAttention(b, normalized=True), d)
                        for b in np.geomspace(1e-2, 300, 60)]
        assert max(coefficients) < 0
    with pytest.raises(ValueError, match="normalized=True .SA. has no critical beta"):
        mf.critical_beta(2, normalized=True)


def test_continuation_finds_the_fold_and_hysteresis_window_above_beta_star():
    model = mf.SelfAttention(4.0, normalized=False)
    sigma_c = mf.critical_noise(model, 2)
    branch = mf.continuation(model, 2, (0.5 * sigma_c, 2 * sigma_c))
    assert branch.sizes["fold"] == 1 and str(branch.fold_kind.values[0]) == "maximum"
    fold = float(branch.fold_noise[0])
    assert fold > sigma_c
    stable = branch.stable.values
    # unstable from the bifurcation to the fold, stable beyond it (on the concentrated side)
    r_fold = float(branch.fold_order_parameter[0])
    r = branch.order_parameter.values
    assert not stable[(r > 0) & (r < r_fold - 0.02)].any() and stable[r > r_fold + 0.02].all()
    # two stable states inside the window: the uniform one (σ > σ_c) and the concentrated one
    inside = mf.SelfAttention(4.0, normalized=False, noise=0.5 * (sigma_c + fold))
    assert bool(mf.stationary_state(inside, 2).stable) and float(mf.stationary_state(inside, 2).order_parameter) > 0.5
    assert bool(mf.stationary_state(inside, 2, guess="uniform").stable)


@pytest.mark.parametrize("beta,normalized", [(2.0, False), (8.0, True)])
def test_no_fold_below_beta_star_nor_for_sa(beta, normalized):
    model = mf.SelfAttention(beta, normalized=normalized)
    sigma_c = mf.critical_noise(model, 2)
    branch = mf.continuation(model, 2, (0.3 * sigma_c, 2 * sigma_c))
    assert branch.sizes["fold"] == 0
    assert np.all(np.diff(branch.noise.values) < 0) and branch.stable.values[1:].all()


def test_free_energy_derivative_along_the_branch_is_the_entropy():
    """Envelope theorem: on stationary states dF/dσ = ∫ρ log(ρ|S|) (F stationary in ρ)."""
    model = mf.SelfAttention(4.0, normalized=False)
    sigma_c = mf.critical_noise(model, 2)
    branch = mf.continuation(model, 2, (0.5 * sigma_c, 2 * sigma_c), step=0.02, max_step=0.02)
    # stable concentrated branch away from the fold (there the entropy ~ √(σ_f - σ) has no bounded derivative)
    chosen = branch.stable.values & (branch.order_parameter.values > float(branch.fold_order_parameter[0]) + 0.05)
    sigma, free, entropy = (branch[v].values[chosen] for v in ("noise", "free_energy", "entropy"))
    slope = np.diff(free) / np.diff(sigma)
    midpoint = 0.5 * (entropy[1:] + entropy[:-1])
    # midpoint-rule error O(Δσ²) for arclength steps ≤ 0.02: measured ≤ 3.1e-4 relative
    assert sigma.size > 50
    np.testing.assert_allclose(slope, midpoint, rtol=1e-3)
    # F decreases as σ decreases on the stable branch (dF/dσ = relative entropy > 0)
    assert np.all(np.diff(free) * np.sign(np.diff(sigma)) > 0)


def test_bad_inputs_are_refused():
    model = mf.SelfAttention(2.0, normalized=False)
    with pytest.raises(ValueError, match="model.noise must be finite and > 0, got 0.0"):
        mf.stationary_state(model, 2)
    with pytest.raises(TypeError, match="model must be a meanfield.SelfAttention"):
        mf.stationary_state(mf.Kuramoto(noise=0.1), 2)
    with pytest.raises(ValueError, match="d must be"):
        mf.stationary_state(mf.SelfAttention(2.0, noise=0.1), 1)
    with pytest.raises(ValueError, match="guess must be 'clustered', 'uniform'"):
        mf.stationary_state(mf.SelfAttention(2.0, noise=0.1), 2, guess="peaked")
    with pytest.raises(ValueError, match="noise_range must satisfy 0 < sigma_min < sigma_max"):
        mf.continuation(model, 2, (1.0, 0.5))
    with pytest.raises(ValueError, match="must contain the bifurcation point"):
        mf.continuation(model, 2, (10.0, 20.0))
    with pytest.raises(ValueError, match="max_order must lie in"):
        mf.continuation(model, 2, (0.1, 2.0), max_order=1.5)
    state = mf.stationary_state(mf.SelfAttention(2.0, noise=0.1), 3)
    with pytest.raises(ValueError, match="domain is a Circle .d = 2. but the state lives on S"):
        mf.stationary_density(state, mf.Circle(32))
    with pytest.raises(ValueError, match="d must be"):
        mf.critical_beta(1)
