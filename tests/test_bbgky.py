"""BBGKY hierarchy of paper 2 §8: estimators against exact identities, closures, the closed equation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import iv

import meanfield as mf
from meanfield import (ClusterClosure, KirkwoodClosure, bbgky_averages, bbgky_closed_equation, bbgky_closure_distance,
                       bbgky_ensemble, bbgky_estimates, bbgky_residual_scaling, bbgky_study)
from meanfield.studies.open_problems._bbgky import fejer_weights, hprime


def usa_velocity(theta, beta):
    """(7.1) by the model the ensembles are run with, for configurations of shape (..., n)."""
    flat = np.reshape(theta, (-1, np.shape(theta)[-1]))
    return mf.SelfAttention(beta, normalized=False).velocity(flat, domain="circle").reshape(np.shape(theta))

BETA, N_PARTICLES = 2.0, 12


def direct_averages(theta, beta, k_max):
    """Pair and triple averages by broadcasting over all (i, j, l), O(n³): the definitions written out."""
    n = theta.shape[-1]
    k = np.arange(k_max + 1)
    d = theta[..., None, :] - theta[..., :, None]                       # d[i, j] = θ_j - θ_i
    phase = np.exp(-1j * d[..., None] * k)                               # (..., i, j, k)
    distinct2 = ~np.eye(n, dtype=bool)
    idx = np.arange(n)
    distinct3 = ((idx[:, None, None] != idx[None, :, None]) & (idx[:, None, None] != idx[None, None, :])
                 & (idx[None, :, None] != idx[None, None, :]))          # (i, j, l)
    velocity = -np.sum(np.exp(beta * np.cos(-d)) * np.sin(-d), axis=-1) / n   # (7.1): θ̇_i, sum over j
    pair = np.sum(phase * distinct2[..., None], axis=(-3, -2)) / (n * (n - 1))
    hprime_pair = np.sum(hprime(d, beta)[..., None] * phase * distinct2[..., None], axis=(-3, -2)) / (n * (n - 1))
    weight = -hprime(d, beta)                                            # -h'(θ_l - θ_i): [i, l]
    triple = np.sum(weight[..., :, None, :, None] * phase[..., :, :, None, :] * distinct3[..., None],
                    axis=(-4, -3, -2)) / (n * (n - 1) * (n - 2))
    rate_pair = velocity[..., None, :] - velocity[..., :, None]          # θ̇_j - θ̇_i
    pair_rate = np.sum(-1j * k * rate_pair[..., None] * phase * distinct2[..., None], axis=(-3, -2)) / (n * (n - 1))
    rho1 = np.exp(-1j * theta[..., None] * k).mean(axis=-2)
    return velocity, rho1, pair, hprime_pair, triple, pair_rate


@pytest.mark.parametrize("n", [3, 4, 7])
def test_averages_equal_the_direct_sums(n, rng):
    theta = rng.uniform(0, 2 * np.pi, (5, 2, n))
    velocity, rho1, pair, hprime_pair, triple, pair_rate = direct_averages(theta, BETA, 6)
    got = bbgky_averages(theta, BETA, 6)
    tol = dict(rtol=0, atol=1e-12)  # round-off of sums of O(n³) terms of size ≤ β e^β ≈ 15
    np.testing.assert_allclose(usa_velocity(theta, BETA), velocity, **tol)
    np.testing.assert_allclose(got.rho1, rho1, **tol)
    np.testing.assert_allclose(got.pair, pair.real, **tol)
    np.testing.assert_allclose(got.hprime_pair, hprime_pair, **tol)
    np.testing.assert_allclose(got.triple, triple, **tol)
    np.testing.assert_allclose(got.pair_rate, pair_rate.real, **tol)
    assert np.abs(pair.imag).max() < 1e-13 and np.abs(pair_rate.imag).max() < 1e-12  # both real by i <-> j


def test_three_fixed_particles():
    # n = 3 at 0, π/2, π: every triple is a permutation, so (gψ)^_k is a six-term sum written by hand
    theta = np.array([0.0, np.pi / 2, np.pi])
    got = bbgky_averages(theta, BETA, 3)
    triples = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    k = np.arange(4)
    expected = sum(-hprime(theta[l] - theta[i], BETA) * np.exp(-1j * k * (theta[j] - theta[i]))
                   for i, j, l in triples) / 6
    np.testing.assert_allclose(got.triple, expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(got.pair[0], 1.0, rtol=0, atol=1e-15)


def test_residual_per_system_is_the_reflection_odd_statistic(rng):
    # r_k = -(ik/π) Re(P_k conj Q_k) / (n(n-1)) per system: the velocity terms of (8.1) cancel identically
    theta = rng.uniform(0, 2 * np.pi, (6, 1, 9))
    n, k = 9, np.arange(9)
    est = bbgky_estimates(theta, BETA, [0.0], max_wavenumber=8)
    p = np.exp(-1j * theta[:, 0, :, None] * k).sum(axis=1)
    q = (usa_velocity(theta[:, 0], BETA)[:, :, None] * np.exp(-1j * theta[:, 0, :, None] * k)).sum(axis=1)
    per_system = -1j * k / np.pi * np.real(p * q.conj()) / (n * (n - 1))
    np.testing.assert_allclose(est["residual"].values[0], per_system.mean(axis=0), rtol=0, atol=1e-13)
    assert est["residual"].values[0, 0] == 0


def test_pair_rate_is_the_time_derivative_along_the_engine(rng):
    # central difference in time of the pair average along mf.simulate: truncation δ²|d³A/dt³|/6 (1.1e-5 at
    # δ = 1e-3 for k = 6, so ≈ 1e-7 here) and integration error / δ ≈ 1e-12 / 1e-4
    theta0 = rng.uniform(0, 2 * np.pi, (4, 8))
    delta = 1e-4
    run = mf.simulate(mf.SelfAttention(BETA, normalized=False), theta0, [0.0, 1 - delta, 1.0, 1 + delta],
                      domain="circle", rtol=1e-12, atol=1e-14)
    avg = bbgky_averages(run["positions"].values, BETA, 6)
    difference = (avg.pair[:, 3] - avg.pair[:, 1]) / (2 * delta)
    np.testing.assert_allclose(avg.pair_rate[:, 2], difference, rtol=0, atol=1e-6)


@pytest.fixture(scope="module")
def uniform_start():
    """iid uniform configurations, the t = 0 law (M = 8192 systems, n = 12)."""
    theta = 2 * np.pi * np.random.default_rng(7).random((8192, 1, N_PARTICLES))
    return bbgky_estimates(theta, BETA, [0.0], max_wavenumber=8)


def test_uniform_start_expectations(uniform_start):
    # iid uniform: ψ̂_k = δ_k0/2π, (gψ)^_k = 0, (h'ψ)^_k = ik I_k(β)/2π, ∂_t ψ̂_k = 2k² I_k(β)/(2π β n);
    # the estimates agree within 4 standard errors (per-k two-sided Gaussian tail 6e-5)
    est = uniform_start.isel(time=0)
    k = est["wavenumber"].values
    expected = {"psi_hat": np.where(k == 0, 1 / (2 * np.pi), 0.0), "g_psi_hat": np.zeros(k.size),
                "hprime_psi_hat": 1j * k * iv(k, BETA) / (2 * np.pi),
                "dpsi_hat_dt": 2 * k**2 * iv(k, BETA) / (2 * np.pi * BETA * N_PARTICLES),
                "rho1_hat": np.where(k == 0, 1 / (2 * np.pi), 0.0)}
    for name, value in expected.items():
        gap = np.abs(est[name].values - value)
        assert np.all(gap <= 4 * est[f"{name}_stderr"].values + 1e-13), name  # + round-off of the mean of M
    per_system = bbgky_averages(2 * np.pi * np.random.default_rng(7).random((4, N_PARTICLES)), BETA, 2)
    assert np.all(per_system.pair[:, 0] == 1.0)  # the pair average of e^0 is exactly 1
    assert float(est["residual_norm"]) <= 4 * float(est["residual_norm_stderr"])


@pytest.fixture(scope="module")
def clustering():
    """An ensemble through cluster formation (β = 2, n = 12, M = 2048) and its estimates at t = 0, 1, 3."""
    run = bbgky_ensemble(BETA, N_PARTICLES, 2048, [0.0, 1.0, 3.0], seed=3)
    return run, bbgky_estimates(run["positions"].values, BETA, [0.0, 1.0, 3.0], max_wavenumber=12)


def test_one_particle_law_stays_uniform(clustering):
    _, est = clustering
    ratio = np.abs(est["rho1_hat"].values[:, 1:]) / est["rho1_hat_stderr"].values[:, 1:]
    assert ratio.max() <= 4  # rotation invariance; 4 standard errors
    np.testing.assert_allclose(est["rho1_hat"].values[:, 0], 1 / (2 * np.pi), rtol=1e-13)  # mean of M values
    assert float(est["psi_hat"].sel(time=3.0, wavenumber=2)) > 0.1  # and pairs did cluster (0 at t = 0)


def test_psi_hat_matches_the_pair_histogram(clustering):
    # Fourier coefficients of a histogram of all ordered pair differences (bin width Δ) differ from the exact
    # pair average by at most kΔ/(4π): |e^{-ikx} - e^{-ikc}| ≤ k|x - c| ≤ kΔ/2 for x in the bin of centre c
    run, est = clustering
    theta = run["positions"].values[:, 2]
    d = np.mod(theta[:, None, :] - theta[:, :, None], 2 * np.pi)[:, ~np.eye(N_PARTICLES, dtype=bool)]
    bins = 2048
    counts, edges = np.histogram(d, bins=bins, range=(0, 2 * np.pi))
    centres = 0.5 * (edges[1:] + edges[:-1])
    k = np.arange(13)
    hist_hat = (counts @ np.exp(-1j * np.outer(centres, k))) / counts.sum() / (2 * np.pi)
    bound = k * (2 * np.pi / bins) / (4 * np.pi)
    assert np.all(np.abs(hist_hat - est["psi_hat"].sel(time=3.0).values) <= bound + 1e-13)  # + round-off


def test_reconstruction_is_the_fejer_mean(clustering):
    _, est = clustering
    x = est["x"].values
    k = est["wavenumber"].values
    w = fejer_weights(12)
    psi_hat = est["psi_hat"].sel(time=1.0).values
    psi = psi_hat[0] + 2 * np.sum((w * psi_hat)[1:, None] * np.cos(k[1:, None] * x), axis=0)
    np.testing.assert_allclose(est["psi"].sel(time=1.0).values, psi, rtol=0, atol=1e-13)
    assert est["psi"].values.min() > 0  # a positive kernel of positive coefficients' law: ψ_K ≥ 0
    h = 2 * np.pi / x.size
    np.testing.assert_allclose(h * est["psi"].values.sum(axis=-1), 1.0, rtol=1e-13)
    g = est["g"].sel(time=1.0).values
    np.testing.assert_allclose(g[1:], -g[1:][::-1], rtol=0, atol=1e-12)  # g odd


def test_residual_falls_like_inverse_square_root_of_systems():
    # sizes 128, 512, 2048 with 64, 16, 4 replicates; the exponent measured over seeds 0-9: mean -0.49,
    # standard deviation 0.08, extremes -0.31 and -0.59, so |a + 1/2| < 0.25 is a 3-standard-deviation check
    out = bbgky_residual_scaling(BETA, N_PARTICLES, [128, 512, 2048], [0.0, 1.0], budget=8192, seed=2)
    assert abs(float(out["exponent"].sel(fit_time=1.0)) + 0.5) < 0.25
    ratio = out["residual_norm"] / out["residual_norm_stderr"]
    assert np.all((ratio > 0.3) & (ratio < 3))  # R is the Monte-Carlo noise of a zero mean
    assert list(out["replicates"].values) == [64, 16, 4]


def test_study_records_its_run():
    ds = bbgky_study(BETA, 5, 64, [0.0, 0.5], max_wavenumber=3, seed=11)
    again = bbgky_study(BETA, 5, 64, [0.0, 0.5], max_wavenumber=3, seed=11)
    assert ds.attrs["seed"] == "11" and ds.attrs["systems"] == 64 and ds.attrs["max_wavenumber"] == 3
    np.testing.assert_array_equal(ds["psi_hat"].values, again["psi_hat"].values)
    assert set(ds["psi_hat"].dims) == {"time", "wavenumber"} and set(ds["psi"].dims) == {"time", "x"}


# -- closures --------------------------------------------------------------------------------------------------

def von_mises_nodes(kappa, n_grid):
    x = 2 * np.pi * np.arange(n_grid) / n_grid
    return x, np.exp(kappa * np.cos(x)) / (2 * np.pi * iv(0, kappa))


@pytest.mark.parametrize("closure", [KirkwoodClosure(BETA), ClusterClosure(BETA)], ids=["kirkwood", "cluster"])
def test_closures_vanish_on_the_uniform_law(closure):
    assert np.abs(closure(np.full(64, 1 / (2 * np.pi)))).max() < 1e-14  # h' has zero mean on the nodes


def test_kirkwood_against_direct_quadrature():
    x, psi = von_mises_nodes(1.5, 96)
    h = 2 * np.pi / x.size
    shifted = np.exp(1.5 * np.cos(x[None, :] - x[:, None])) / (2 * np.pi * iv(0, 1.5))   # ψ(y_m - x_j)
    direct = (h * (-hprime(x, BETA) * psi)[None] * shifted).sum(axis=1) / (h * psi[None] * shifted).sum(axis=1)
    got = KirkwoodClosure(BETA)(psi)
    np.testing.assert_allclose(got, direct, rtol=0, atol=1e-13)
    np.testing.assert_allclose(got[1:], -got[1:][::-1], rtol=0, atol=1e-13)  # odd for even ψ


def test_cluster_closure_closed_form():
    # ψ von Mises(κ): G(x) = -(h' * ψ)(x)/2 = Σ_{k≥1} k I_k(β) I_k(κ)/I_0(κ) sin(kx), spectrally accurate
    kappa = 1.5
    x, psi = von_mises_nodes(kappa, 128)
    k = np.arange(1, 40)[:, None]
    exact = np.sum(k * iv(k, BETA) * iv(k, kappa) / iv(0, kappa) * np.sin(k * x), axis=0)
    np.testing.assert_allclose(ClusterClosure(BETA)(psi), exact, rtol=0, atol=1e-12)


@pytest.mark.parametrize("closure", [KirkwoodClosure(BETA), ClusterClosure(BETA)], ids=["kirkwood", "cluster"])
def test_closed_equation_conserves_mass_keeps_evenness(closure):
    out = bbgky_closed_equation(closure, BETA, N_PARTICLES, [0.0, 1.0, 3.0], grid_size=128)
    assert out.attrs["success"] == 1
    np.testing.assert_allclose(out["mass"].values, 1.0, rtol=0, atol=1e-13)  # telescoping fluxes
    assert out["asymmetry"].values.max() <= 1e-12 * out["psi"].values.max()  # reflection-equivariant scheme
    assert out["psi"].values.min() >= 0
    assert float(out["psi_hat"].sel(time=3.0, wavenumber=2)) > 0.05  # it did cluster


def test_closed_equation_initial_rate_and_scheme_cross_check():
    # G[1/2π] = 0, so ∂_t ψ̂_k(0) = 2k² I_k(β)/(2πβn), the ensemble's exact E ∂_t ψ̂_k(0); forward difference
    # over δ = 1e-3: O(δ) and O(h²) errors, measured ≤ 9e-4 relative for k ≤ 4 on N = 256
    k = np.arange(1, 5)
    delta = 1e-3
    out = bbgky_closed_equation(KirkwoodClosure(BETA), BETA, N_PARTICLES, [0.0, delta], grid_size=256)
    rate = (out["psi_hat"].values[1, 1:5] - out["psi_hat"].values[0, 1:5]) / delta
    np.testing.assert_allclose(rate, 2 * k**2 * iv(k, BETA) / (2 * np.pi * BETA * N_PARTICLES), rtol=2e-3)
    # finite volume converges to the spectral solution at second order before ψ sharpens (t = 0.25)
    ref = bbgky_closed_equation(ClusterClosure(BETA), BETA, N_PARTICLES, [0.0, 0.25], grid_size=256, method="spectral")
    errors = [np.abs(bbgky_closed_equation(ClusterClosure(BETA), BETA, N_PARTICLES, [0.0, 0.25], grid_size=size)
                     ["psi_hat"].values[-1] - ref["psi_hat"].values[-1]).max() for size in (128, 256)]
    assert errors[1] < 2e-5 and 1.8 < np.log2(errors[0] / errors[1]) < 2.2


def test_closure_distance():
    closed = bbgky_closed_equation(ClusterClosure(BETA), BETA, N_PARTICLES, [0.0, 0.5], grid_size=64, max_wavenumber=4)
    ensemble = closed[["psi_hat"]].copy(deep=True)
    ensemble["psi_hat"][1, 2] += 0.01
    ensemble["psi_hat_stderr"] = ensemble["psi_hat"] * 0 + 1e-3
    d = bbgky_closure_distance(closed, ensemble)
    np.testing.assert_allclose(d["distance"].values, [0.0, np.sqrt(4 * np.pi) * 0.01], rtol=0, atol=1e-15)
    np.testing.assert_allclose(d["noise"].values, np.sqrt(4 * np.pi * 4) * 1e-3, rtol=1e-14)


# -- bad input -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: bbgky_ensemble(BETA, 2, 10, [0, 1]), "n_particles must be >= 3"),
    (lambda: bbgky_ensemble(0.0, 5, 10, [0, 1]), "beta must be finite and > 0"),
    (lambda: bbgky_ensemble(-1.0, 5, 10, [0, 1]), "beta must be finite and > 0"),
    (lambda: bbgky_ensemble(BETA, 5, 1, [0, 1]), "systems must be >= 2"),
    (lambda: bbgky_ensemble(BETA, 5, 10, [1, 0]), "times must be strictly increasing"),
    (lambda: bbgky_study(BETA, 5, 10, [0, 1], max_wavenumber=0), "max_wavenumber must be >= 1"),
    (lambda: bbgky_estimates(np.zeros((1, 1, 5)), BETA, [0.0]), r"theta must have shape \(systems >= 2"),
    (lambda: bbgky_estimates(np.zeros((4, 2, 5)), BETA, [0.0]), r"time = 1"),
    (lambda: bbgky_estimates(np.zeros((4, 1, 5)), BETA, [0.0], smoothing="gauss"), "smoothing must be one of"),
    (lambda: bbgky_estimates(np.zeros((4, 1, 5)), BETA, [0.0], grid_size=2), "grid_size must be >= 4"),
    (lambda: bbgky_averages(np.zeros((4, 2)), BETA, 3), "n >= 3 particles"),
    (lambda: bbgky_averages(np.full((4, 3), np.nan), BETA, 3), "finite angles"),
    (lambda: KirkwoodClosure(0.0), "beta must be finite and > 0"),
    (lambda: KirkwoodClosure(BETA)(np.ones(3)), "at least 4 nodes"),
    (lambda: ClusterClosure(BETA)(np.full(8, np.inf)), "psi must be finite"),
    (lambda: bbgky_closed_equation(KirkwoodClosure(1.0), BETA, 5, [0, 1]), "closure.beta = 1.0 differs from beta = 2.0"),
    (lambda: bbgky_closed_equation(KirkwoodClosure(BETA), BETA, 5, [0, 1], method="euler"), "method must be one of"),
    (lambda: bbgky_closed_equation(KirkwoodClosure(BETA), BETA, 2, [0, 1]), "n_particles must be >= 3"),
    (lambda: bbgky_residual_scaling(BETA, 5, [64, 64], [0, 1]), "at least two distinct ensemble sizes"),
    (lambda: bbgky_residual_scaling(BETA, 5, [1, 64], [0, 1]), "sizes entry must be >= 2"),
])
def test_bad_input_is_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
