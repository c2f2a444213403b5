"""Orders of the exponential-chart integrators, dense output, sphere constraint, noise convention."""

from __future__ import annotations

import numpy as np
import pytest
from _particles_theorem68 import gamma

import meanfield as mf


def _gamma_sa(beta: float, n: int, t_end: float) -> float:
    return float(gamma(beta, n, [0.0, t_end])[-1])


@pytest.mark.parametrize("method,order", [("rk4", 4), ("euler", 1)])
def test_fixed_step_order_on_the_sphere(method, order):
    n, d, beta, t_end = 5, 8, 4.0, 2.0
    x0 = mf.orthogonal_frame(n, d, seed=7)
    ref = _gamma_sa(beta, n, t_end)
    errs = []
    for dt in (0.2, 0.1, 0.05):
        x = mf.simulate(mf.SelfAttention(beta), x0, [0, t_end], method=method, dt=dt)["positions"].values[-1]
        errs.append(abs(x[0] @ x[1] - ref))
    orders = np.log2(np.array(errs[:-1]) / errs[1:])
    # measured 3.87, 3.94 (rk4) and 0.97, 0.98 (euler): asymptotic order within 0.25
    assert np.all(np.abs(orders - order) < 0.25), orders


def test_rk4_order_on_the_circle():
    th = np.random.default_rng(1).uniform(0, 2 * np.pi, 16)
    model = mf.SelfAttention(2.0)
    ref = mf.simulate(model, th, [0, 2], rtol=1e-13, atol=1e-13)["positions"].values[-1]
    errs = []
    for dt in (0.2, 0.1, 0.05):
        p = mf.simulate(model, th, [0, 2], method="rk4", dt=dt)["positions"].values[-1]
        errs.append(np.abs(np.angle(np.exp(1j * (p - ref)))).max())
    orders = np.log2(np.array(errs[:-1]) / errs[1:])
    assert np.all(np.abs(orders - 4) < 0.25), orders  # measured 3.87, 3.94


def test_adaptive_error_scales_with_tolerance_and_dense_output_is_consistent():
    x0 = mf.orthogonal_frame(5, 8, seed=7)
    ref = _gamma_sa(4.0, 5, 6.0)
    errs = []
    for rtol in (1e-6, 1e-9):
        ds = mf.simulate(mf.SelfAttention(4.0), x0, np.linspace(0, 6, 25), rtol=rtol, atol=rtol / 100)
        x = ds["positions"].values[-1]
        errs.append(abs(x[0] @ x[1] - ref))
        # dense output (4th order interpolant) at 24 intermediate times vs a run ending there
        mid = mf.simulate(mf.SelfAttention(4.0), x0, [0, 6 * 7 / 24], rtol=rtol, atol=rtol / 100)
        # measured 0.27·rtol (rtol 1e-6) and 0.23·rtol (rtol 1e-9)
        assert np.abs(mid["positions"].values[-1] - ds["positions"].values[7]).max() < 3 * rtol
    # error proportional to the tolerance: at most 10·tol, and dropping with it
    assert errs[0] < 1e-5 and errs[1] < 1e-8 and errs[1] < errs[0] / 100


def test_sphere_constraint_holds_to_round_off_in_high_dimension():
    x0 = mf.particles.uniform_sphere(64, 64, seed=3)
    ds = mf.simulate(mf.SelfAttention(2.0, normalized=False), x0, np.linspace(0, 5, 51), rtol=1e-6, atol=1e-8)
    # more outputs than steps (measured 40 steps): most outputs are dense-output states
    # exp_x(h Σ b_i(θ) k_i) inside a step, so the check covers intermediate times too
    assert ds.attrs["n_steps"] < 50
    norms = np.linalg.norm(ds["positions"].values, axis=-1)
    assert np.abs(norms - 1).max() < 1e-14  # measured 7.8e-16
    assert ds.attrs["max_sphere_deviation"] == np.abs(norms - 1).max()


@pytest.mark.parametrize("d", [2, 3])
def test_noise_convention_generator_sigma_laplacian(d):
    """One particle (no interaction): Brownian motion with generator σΔ on S^{d-1}.

    E <x_t, x_0> = e^{-σ(d-1)t} (degree-1 eigenvalue of Δ: l(l+d-2) = d-1).
    """
    sigma, t_end, systems = 0.5, 1.0, 4000
    model = mf.SelfAttention(1.0, noise=sigma)
    if d == 2:
        x0 = np.zeros((systems, 1))
        ds = mf.simulate(model, x0, [0, t_end], dt=0.01, seed=11, domain="circle")
        values = np.cos(ds["positions"].values[:, -1, 0])
    else:
        x0 = np.tile([[0.0, 0.0, 1.0]], (systems, 1, 1))
        ds = mf.simulate(model, x0, [0, t_end], dt=0.01, seed=11)
        values = ds["positions"].values[:, -1, 0, 2]
    mean = values.mean()
    exact = np.exp(-sigma * (d - 1) * t_end)
    # Monte Carlo: the std of <x_t, x_0> is 0.447 for d = 2 (exact: var cos θ_1 = (1 - e^{-1})² / 2) and
    # 0.481 for d = 3 (measured with 5·10⁵ samples); the sample std agrees to within 4 of its own
    # standard errors (std/√(2·4000) ≈ 0.005). The mean's standard error std/√4000 is ≈ 0.0076; allow 4 SE
    # (false alarm 6e-5) plus the weak O(dt) bias of geodesic Euler–Maruyama, measured |bias| < 1e-3 at
    # dt = 0.01 with 5·10⁵ samples (0 for d = 2: Gaussian angle increments are exact), bounded by 2e-3
    std = {2: np.sqrt(0.5) * (1 - np.exp(-1)), 3: 0.481}[d]
    assert abs(values.std(ddof=1) - std) < 0.02
    assert abs(mean - exact) < 4 * std / np.sqrt(systems) + 2e-3
    assert ds.attrs["method"] == "euler-maruyama" and ds.attrs["seed"] == "11"


def test_fixed_step_beyond_the_stability_bound_is_an_error():
    # USA at β = 50: near a cluster the velocity's Jacobian has the eigenvalue -e^β ≈ -5.2e21
    with pytest.raises(ValueError, match=r"dt = 0.5 violates the stability bound of method='euler': .* "
                                         r"L = 5.18e\+21 .* h·L = 2.59e\+21 > 2.0; take dt <= 3.86e-22"):
        mf.simulate(mf.SelfAttention(50.0, normalized=False), np.linspace(0, 6, 8), [0, 5], method="euler", dt=0.5)
    # SA collapses at rate 1: Euler is stable for h ≤ 2, RK4 for h ≤ 2.785
    x = np.linspace(0, 0.3, 6)
    with pytest.raises(ValueError, match=r"dt = 2.1 violates the stability bound of method='euler'"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 4.2], method="euler", dt=2.1)
    with pytest.raises(ValueError, match=r"method='rk4': .* > 2.785"):
        mf.simulate(mf.SelfAttention(1.0), x, [0, 2.9], method="rk4", dt=2.9)
    ds = mf.simulate(mf.SelfAttention(1.0), x, [0, 2.7], method="rk4", dt=2.7)
    assert ds.attrs["success"] == 1 and 1.0 <= ds.attrs["stability_rate"] < 1.01
    with pytest.raises(ValueError, match="method='euler-maruyama': .*; take dt <= "):
        mf.simulate(mf.SelfAttention(4.0, normalized=False, noise=0.1), x, [0, 1], dt=0.1, seed=1)


@pytest.mark.parametrize("normalized,beta", [(True, 3.0), (False, 3.0), (False, 0.5)])
def test_jacobian_rate_at_a_cluster_is_the_collapse_rate(normalized, beta):
    # at x_i = x̄ + O(ε) the chart Jacobian is s (1 w^T - I) ⊗ I on tangent vectors, s = 1 (SA) or e^β (USA):
    # spectral radius s up to O(β ε) = O(1e-5) (power iteration converges in one step: one repeated eigenvalue)
    from meanfield.domains import SphereGeometry
    from meanfield.particles._chart_steppers import jacobian_rate
    from meanfield.models._self_attention_sums import DirectSelfAttention

    x = mf.particles.von_mises_fisher(8, np.array([0.0, 0.0, 1.0]), 1e10, seed=2)[None]
    velocity = DirectSelfAttention(beta, normalized, np.full((1, 8), 1 / 8), False)
    rate = jacobian_rate(SphereGeometry(3), velocity, 0.0, x)
    np.testing.assert_allclose(rate, 1.0 if normalized else np.exp(beta), rtol=1e-4)


def test_fixed_step_runs_honour_max_steps():
    x = np.linspace(0, 3, 5)
    ds = mf.simulate(mf.SelfAttention(1.0), x, [0, 1, 2, 3], method="rk4", dt=0.25, max_steps=9)
    # 4 steps per output interval: the third interval would take steps 9..12
    assert ds.attrs["success"] == 0 and ds.attrs["message"] == "rk4: exceeded max_steps = 9 at t = 2"
    assert ds.sizes["time"] == 3 and ds.attrs["n_steps"] == 8
