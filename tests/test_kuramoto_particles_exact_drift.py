"""Kuramoto particles by exact Möbius flows (method "moebius"): exactness, order, max|ω| independence."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.stats

import meanfield as mf
from meanfield.particles._moebius import MoebiusStepper, moebius_map, weighted_median
from solvers import evolve

SIN = np.array([0.0, -0.5j])


def integrate_moebius(coupling, interaction, omega, weights, theta0, times, dt=None, rtol=1e-8, atol=1e-10):
    """The Möbius stepper of θ̇_i = ω_i + K Σ_j w_j h(θ_j - θ_i) driven by evolve: (run, angles at each output)."""
    a, nu = coupling * complex(interaction[1]), omega + coupling * np.real(interaction[0])
    stepper = MoebiusStepper(a, nu, weights, float(times[0]), rtol=rtol, atol=atol, dt=dt)
    run = evolve(stepper, stepper.state(times[0], theta0), times)
    return run, [stepper.positions(t, u) for t, u in zip(run.t, run.y)]


def _wrapped(a: np.ndarray) -> np.ndarray:
    return np.angle(np.exp(1j * a))


def _order(states: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return np.sum(weights * np.exp(1j * states), axis=-1)


@pytest.mark.parametrize("nu, alpha, tau", [
    (0.0, 0.3 + 0.4j, 1.0),             # |α| > |ν|/2: hyperbolic, r = 0.5
    (1.0, 0.5j, 2.0),                   # |α| = |ν|/2: r = 0 exactly
    (1.0, 0.5000001j, 2.0),             # r = 6e-4: sinh(r)/r without cancellation
    (0.2, -2.0 + 1.0j, 9.0),            # r = 20: cosh and sinh near 10⁸
    (3.0, 0.2 - 0.1j, 0.7),             # elliptic: cos and sin of r
    (-250.0, 0.05j, 0.3),               # a fast oscillator, 12 turns
])
def test_the_frozen_field_flow_is_the_exact_moebius_map(nu, alpha, tau):
    """u̇ = α + iνu/2 - conj(α)u² (drift weight 1/2) integrated by DOP853 at rtol 1e-13, from four points."""
    u0 = np.exp(1j * np.array([0.3, 1.9, -2.4, 3.0]))

    def riccati(t, y):
        u = y[:4] + 1j * y[4:]
        du = alpha + 0.5j * nu * u - np.conj(alpha) * u ** 2
        return np.concatenate([du.real, du.imag])

    sol = scipy.integrate.solve_ivp(riccati, (0, tau), np.concatenate([u0.real, u0.imag]), method="DOP853",
                                    rtol=1e-13, atol=1e-14)
    exact = sol.y[:4, -1] + 1j * sol.y[4:, -1]
    mapped, _ = moebius_map(u0[None], np.full((1, 4), nu), 0.5, np.array([alpha]), tau, np.full((1, 4), 0.25))
    # the reference carries ~1e-12 per unit of |ν|τ + |α|τ; the map is exact to round-off
    np.testing.assert_allclose(mapped[0], exact, rtol=0, atol=1e-11 * (1 + abs(nu) * tau + abs(alpha) * tau))
    np.testing.assert_allclose(np.abs(mapped), 1.0, rtol=0, atol=4e-16)


def test_uncoupled_oscillators_rotate_exactly():
    n = 64
    rng = np.random.default_rng(0)
    omega = np.linspace(-1e4, 1e4, n)
    theta0 = rng.uniform(0, 2 * np.pi, n)
    times = np.linspace(0, 30, 4)
    ds = mf.simulate(mf.Kuramoto(coupling=0.0, frequencies=scipy.stats.norm(0, 1)), theta0, times,
                     frequencies=omega, dt=0.37)
    assert ds.attrs["method"] == "moebius"
    exact = theta0 + omega * times[:, None]
    # each step multiplies by e^{iωh} exactly; what remains is the rounding of the angle ωt
    # (|ωt| ≤ 3e5, eps·3e5 ≈ 7e-11): measured 7.7e-11
    assert np.abs(_wrapped(ds["positions"].values - exact)).max() < 1e-9


def _bulk(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    theta0 = rng.uniform(0, 2 * np.pi, (1, n))
    omega = np.clip(scipy.stats.cauchy(0, 0.5).ppf((np.arange(n) + 0.5) / n), -5, 5)[None]
    return theta0, omega, np.full((1, n), 1.0 / n)


def test_fourth_order_in_the_step_for_bounded_frequencies():
    theta0, omega, w = _bulk(200)
    times = np.array([0.0, 5.0])

    def z_end(dt: float) -> complex:
        _, states = integrate_moebius(2.0, SIN, omega, w, theta0, times, dt=dt)
        return _order(states[-1], w)[0]

    ref = z_end(0.1 / 64)
    errors = np.array([abs(z_end(dt) - ref) for dt in (0.1, 0.05, 0.025)])
    orders = np.log2(errors[:-1] / errors[1:])
    # max|ω| dt ≤ 0.5: every oscillator is resolved, the scheme is the plain order-4 CF method;
    # measured errors 3.6e-7, 2.3e-8, 1.5e-9 (orders 3.94, 3.97)
    assert np.all(orders > 3.7)
    assert errors[-1] < 5e-9


def test_error_does_not_grow_with_the_largest_frequency():
    theta0, omega_bulk, w = _bulk(200, seed=1)
    n_fast = 20
    rng = np.random.default_rng(2)
    signs = np.sign(rng.normal(size=n_fast))
    theta0 = np.concatenate([theta0, rng.uniform(0, 2 * np.pi, (1, n_fast))], axis=1)
    w = np.full((1, theta0.shape[1]), 1.0 / theta0.shape[1])
    times = np.array([0.0, 1.0])
    fast_field = abs(_order(theta0[:, -n_fast:], w[:, -n_fast:]))[0]  # |Σ_fast w_j e^{iθ_j}| = 0.0158
    errors, adaptive_errors, steps = [], [], []
    for top in (1e2, 1e3, 1e4):
        omega = np.concatenate([omega_bulk, (top * np.linspace(0.5, 1, n_fast) * signs)[None]], axis=1)
        _, ref = integrate_moebius(2.0, SIN, omega, w, theta0, times, dt=0.5 / top)
        _, run = integrate_moebius(2.0, SIN, omega, w, theta0, times, dt=0.05)
        errors.append(abs(_order(run[-1], w) - _order(ref[-1], w))[0])
        adaptive, states = integrate_moebius(2.0, SIN, omega, w, theta0, times, rtol=1e-6, atol=1e-9)
        adaptive_errors.append(abs(_order(states[-1], w) - _order(ref[-1], w))[0])
        steps.append(adaptive.n_steps)
    # The fast oscillators drive the others at their time average plus the impulse of their
    # uniform rotation; what is left is bounded by the whole oscillation's effect, 2K|Z_fast|/(Ω/2)
    # = 8|Z_fast|/Ω: the error falls with Ω (measured 2.2e-5, 6.6e-6, 6.9e-7 against
    # 8|Z_fast|/Ω = 1.3e-3, 1.3e-4, 1.3e-5) instead of growing
    assert np.all(np.array(errors) <= 8 * fast_field / np.array([1e2, 1e3, 1e4]))
    # The adaptive runs (rtol = 1e-6 on a local error) end within a few rtol of the reference at every Ω
    # (measured 3.7e-8, 1.1e-6, 7.7e-7). Ω = 10³ costs the most steps (measured 153, 850, 33): until
    # Ω h > RESOLVED its oscillators are resolved, and Simpson's error on their rotation, (Ωh)⁴/2880 of
    # their share, sets h; at Ω = 10⁴ the remainder of the averaged drive is small enough for long steps
    assert np.all(np.array(adaptive_errors) <= 3e-6)
    assert steps[2] < steps[0] < steps[1]


@pytest.mark.parametrize("lag", [0.0, 0.4])
def test_agrees_with_dopri5_on_moderate_frequencies(lag):
    # h(u) = sin(u + α): ĥ_0 = 0, ĥ_1 = e^{iα}/(2i)
    model = mf.Kuramoto(coupling=1.5, frequencies=scipy.stats.norm(0, 0.5), interaction=[0.0, np.exp(1j * lag) / 2j])
    theta0 = np.random.default_rng(3).uniform(0, 2 * np.pi, 50)
    times = np.linspace(0, 5, 6)
    a = mf.simulate(model, theta0, times, method="moebius", rtol=1e-11, atol=1e-13)
    b = mf.simulate(model, theta0, times, method="dopri5", rtol=1e-11, atol=1e-13)
    # both at tolerance 1e-11 over t = 5 (rates ≲ 3): measured max difference 1.7e-9 (α = 0), 6.0e-9 (α = 0.4)
    assert np.abs(_wrapped(a["positions"].values - b["positions"].values)).max() < 5e-8
    assert "Moebius" in a.attrs["integrator"]


def test_lorentzian_order_parameter_matches_ott_antonsen():
    gamma, coupling, n = 0.5, 2.0, 5000
    model = mf.Kuramoto(coupling=coupling, frequencies=scipy.stats.cauchy(0, gamma))
    theta0 = np.random.default_rng(4).uniform(0, 2 * np.pi, n)
    ds = mf.simulate(model, theta0, np.linspace(0, 40, 81), rtol=1e-4, atol=1e-7)
    late = ds["order_parameter"].values[ds["time"].values >= 20]
    # finite-n fluctuations: std of r(t) 0.004–0.006 at n = 5000 with correlation time ~1, so the
    # mean of 41 samples has s.e. ≈ 0.002; 0.01 is 5 s.e. (measured deviations 7e-4, 1e-5, 2e-4
    # for seeds 4, 5, 6)
    assert abs(late.mean() - np.sqrt(1 - 2 * gamma / coupling)) < 0.01


def test_rotating_frame_is_the_weighted_median():
    values = np.array([[3.0, -1.0, 10.0, 0.5]])
    weights = np.array([[0.1, 0.2, 0.6, 0.1]])
    assert weighted_median(values, weights)[0] == 10.0
    shifted = mf.Kuramoto(coupling=1.0, frequencies=scipy.stats.norm(7.0, 0.3))
    theta0 = np.random.default_rng(5).uniform(0, 2 * np.pi, 30)
    times = np.linspace(0, 3, 4)
    a = mf.simulate(shifted, theta0, times, rtol=1e-11, atol=1e-13)
    b = mf.simulate(shifted, theta0, times, method="dopri5", rtol=1e-11, atol=1e-13)
    # a law centred at 7 runs in the frame rotating at the median: measured difference 6e-10
    assert np.abs(_wrapped(a["positions"].values - b["positions"].values)).max() < 1e-8


def test_bad_input():
    theta0 = np.zeros(5)
    with pytest.raises(ValueError, match="method='moebius' needs a Kuramoto model whose interaction has one harmonic"):
        mf.simulate(mf.Kuramoto(interaction=[0.0, -0.5j, 0.1j]), theta0, [0.0, 1.0], method="moebius")
    with pytest.raises(ValueError, match="needs a Kuramoto model"):
        mf.simulate(mf.SelfAttention(1.0), theta0, [0.0, 1.0], method="moebius")
    with pytest.raises(ValueError, match="noise = 0.1 > 0 needs method='euler-maruyama'"):
        mf.simulate(mf.Kuramoto(noise=0.1), theta0, [0.0, 1.0], method="moebius")
    with pytest.raises(ValueError, match=r"dt must be a positive time step \(or None: adaptive\)"):
        mf.simulate(mf.Kuramoto(), theta0, [0.0, 1.0], method="moebius", dt=-1.0)
    with pytest.raises(ValueError, match="one harmonic"):
        mf.Kuramoto(interaction=[0, -0.5j, 0.2]).riccati_form(np.zeros((1, 5)))
