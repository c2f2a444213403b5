"""Fourier pseudo-spectral scheme on S¹: exact growth rates, spectral convergence,
conservation, equivariance, under-resolution detection, stiff diffusion, bad options."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats

import meanfield as mf
from solvers import (
    CallableVelocity,
    CircleGrid,
    ConvolutionVelocity,
    NegativeDensityError,
    StepSizeError,
    UnderResolvedError,
    evolve,
    schemes_for,
)
from solvers._circle_spectral import CircleSpectral
from solvers._fft import available_backends, plan_builds


def _normalised(grid: CircleGrid, values: np.ndarray) -> np.ndarray:
    return (values / (values.sum() * grid.spacing))[None]


def _interpolate(y: np.ndarray, n_fine: int) -> np.ndarray:
    """Trigonometric interpolant of node values y (shape (N,)) on n_fine nodes."""
    n = y.size
    c = np.fft.rfft(y) / n
    fine = np.zeros(n_fine // 2 + 1, dtype=complex)
    fine[: n // 2] = c[: n // 2]
    fine[n // 2] = c[n // 2] / 2  # the Nyquist mode split between ±N/2
    return np.fft.irfft(fine * n_fine, n_fine)


def test_registered():
    assert schemes_for(CircleGrid(8))["spectral"] is CircleSpectral


@pytest.mark.parametrize(
    "model",
    [
        mf.SelfAttention(1.0, normalized=False),
        mf.SelfAttention(1.0, normalized=True),
        mf.SelfAttention(0.0, normalized=True),
        mf.SelfAttention(1.0, normalized=False, noise=0.1),
        mf.SelfAttention(2.0, normalized=True, noise=0.1),
        mf.RepulsiveSelfAttention(1.0, normalized=False),
        mf.RepulsiveSelfAttention(2.0, normalized=True, noise=0.1),
    ],
    ids=["USA", "SA", "beta0", "USA-noise", "SA-noise", "USA-repulsive", "SA-repulsive-noise"],
)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_linear_growth_rate_about_uniform(model, k):
    grid = CircleGrid(32)
    eps = 1e-5
    y0 = (1 / (2 * np.pi) + eps * np.cos(k * grid.theta))[None]
    scheme = CircleSpectral(grid, model.velocity_spec(2), diffusion=model.noise, rtol=1e-12, atol=0.0)
    t_end = 1.0
    run = evolve(scheme, y0, [0.0, t_end], raise_on_error=True)
    growth = scheme.spectrum(run.y[-1])[0, k].real / (eps / 2)
    expected = np.exp(model.growth_rate(k, 2) * t_end)
    # ρ̂_k(t) = (ε/2) e^{λ_k t} (1 + O((2πε)²)): the cubic self-interaction is ≈ 4e-9
    # relative; each step adds a local error ≤ rtol·‖ρ - ρ̄‖, 1e-12 of the perturbation.
    assert growth == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize(("eps", "rel"), [(1e-7, 1e-5), (1e-4, 2e-6)])
def test_default_tolerances_integrate_a_tiny_perturbation_to_rtol_of_itself(eps, rel):
    # the error control is relative to the fluctuation ρ - ρ̄, not to ρ: with the default tolerances a
    # perturbation of relative size ε grows at its exact rate λ_3 = 9 I_3(4)/4 (USA, β = 4) over [0, 0.5];
    # measured against ‖ρ‖ instead, the error control saw ε = 1e-7 only to ≈ rtol/ε of itself and the
    # fitted rate was 0.4 % off in three steps. Left: at ε = 1e-7 the step error held to atol = 1e-12
    # against ‖ρ - ρ̄‖ ≈ 1.1e-8 (measured 2.5e-6); at ε = 1e-4 the cubic self-interaction, relative
    # O((ε e^{λt})²) (measured 6.0e-7, the same at rtol = 1e-12)
    model = mf.SelfAttention(4.0, normalized=False)
    rho0 = mf.density(mf.Circle(256), lambda theta: 1 + eps * np.cos(3 * theta))
    ds = mf.solve(model, rho0, [0.0, 0.5], method="spectral")
    modes = np.abs(np.fft.rfft(ds.density.values, axis=-1)[:, 3])
    rate = np.log(modes[-1] / modes[0]) / 0.5
    assert rate == pytest.approx(9 * scipy.special.iv(3, 4.0) / 4.0, rel=rel)


def test_spectral_convergence_is_exponential_in_n():
    model = mf.SelfAttention(3.0, normalized=True)

    def run(n: int) -> np.ndarray:
        grid = CircleGrid(n)
        y0 = _normalised(grid, np.exp(np.cos(grid.theta) + 0.5 * np.sin(2 * grid.theta)))
        # coarse grids are under-resolved on purpose here: switch the detector off
        scheme = CircleSpectral(grid, model.velocity_spec(2), rtol=1e-13, atol=0.0, tail_tol=1.0)
        return _interpolate(evolve(scheme, y0, [0.0, 1.0], raise_on_error=True).y[-1, 0], 256)

    reference = run(128)
    sizes = np.array([16, 24, 32, 40, 48, 56])
    errors = np.array([np.max(np.abs(run(n) - reference)) for n in sizes])
    ratios = errors[1:] / errors[:-1]
    # exponential convergence: every 8 more nodes divide the error by > 10 (measured
    # 16 … 38; an algebraic rate N^-p would need p > 15 at N = 56); the log-linear
    # slope is steeper than 0.35 per node (measured ≈ 0.42), down to ≈ 1e-8.
    assert np.all(ratios < 0.1), ratios
    slope = -np.polyfit(sizes, np.log(errors), 1)[0]
    assert slope > 0.35, slope
    assert errors[-1] < 1e-7


def test_mass_conserved_to_round_off_with_several_species():
    model = mf.Kuramoto(2.0, frequencies=scipy.stats.norm(0.0, 0.5), noise=0.2)
    velocity = model.velocity_spec(6)
    grid = CircleGrid(64)
    base = _normalised(grid, np.exp(np.cos(grid.theta - 1.0) + 0.3 * np.cos(3 * grid.theta)))
    y0 = np.repeat(base, velocity.n_species, axis=0)
    scheme = CircleSpectral(grid, velocity, diffusion=model.noise)
    run = evolve(scheme, y0, np.linspace(0.0, 2.0, 5), raise_on_error=True)
    mass = scheme.mass(run.y)
    # the k = 0 mode of -∂_θ(ρX) is exactly 0: only the FFT round-off (~1e-16) remains
    np.testing.assert_allclose(mass, 1.0, rtol=1e-13, atol=0)
    # the species drift apart (different ω_m), so the run did something
    assert np.max(np.abs(run.y[-1, 0] - run.y[-1, -1])) > 1e-2


def test_mass_conserved_for_self_attention():
    # resolved on 256 nodes up to t = 1 (on 128 nodes the tail reaches 3.6e-6 at t = 1
    # whatever rtol: a true lack of resolution, which the scheme reports)
    grid = CircleGrid(256)
    y0 = _normalised(grid, np.exp(2 * np.cos(grid.theta) + np.sin(3 * grid.theta)))
    scheme = CircleSpectral(grid, mf.SelfAttention(5.0).velocity_spec(2))
    run = evolve(scheme, y0, np.linspace(0.0, 1.0, 3), raise_on_error=True)
    np.testing.assert_allclose(scheme.mass(run.y), 1.0, rtol=1e-13, atol=0)


def test_rotation_equivariance():
    model = mf.SelfAttention(4.0, normalized=True, noise=0.02)
    grid = CircleGrid(64)
    y0 = _normalised(grid, np.exp(np.cos(grid.theta) + 0.4 * np.sin(2 * grid.theta)))
    t = [0.0, 0.5, 1.0]

    def run(y):
        scheme = CircleSpectral(grid, model.velocity_spec(2), diffusion=model.noise, rtol=1e-11, atol=0.0)
        return evolve(scheme, y, t, raise_on_error=True).y[-1]

    plain = run(y0)
    # shift by 5 grid nodes: the same discrete problem permuted; FFTs of a permuted
    # array differ in round-off only, so agreement is to ≈ 1e-15 relative
    shifted = run(np.roll(y0, 5, axis=-1))
    np.testing.assert_allclose(shifted, np.roll(plain, 5, axis=-1), rtol=0, atol=1e-13 * plain.max())
    # rotation by an arbitrary angle α through the spectral interpolant (ρ̂_k e^{-ikα});
    # the data are resolved to |ρ̂_{N/2}| ≈ 1e-17, so the rotated discrete problem is
    # the same one up to the time integration error (rtol = 1e-11)
    alpha = 0.3712

    def rotate(y):
        c = np.fft.rfft(y, axis=-1) * np.exp(-1j * np.arange(grid.n // 2 + 1) * alpha)
        return np.fft.irfft(c, grid.n, axis=-1)

    rotated = run(rotate(y0))
    np.testing.assert_allclose(rotated, rotate(plain), rtol=0, atol=1e-9 * plain.max())


def test_callable_velocity_matches_convolution_velocity():
    # Kuramoto, K = 1.5, two frequencies ω = ±0.3 with weights 1/2:
    # X_m(θ) = ω_m + K ∫ sin(φ - θ) ρ̄(φ) dφ = ω_m + K Im(e^{-iθ} Z), Z = ∫ e^{iφ} ρ̄ dφ
    coupling, drift, weights = 1.5, np.array([-0.3, 0.3]), np.array([0.5, 0.5])
    grid = CircleGrid(48)

    def velocity(rho):
        z = ((weights @ rho) * np.exp(1j * grid.theta)).sum() * grid.spacing
        return drift[:, None] + coupling * np.imag(np.exp(-1j * grid.theta) * z)[None, :]

    spec = ConvolutionVelocity(
        numerator=lambda k: np.where(k == 1, 2j * np.pi * coupling / 2, 0), drift=drift, weights=weights
    )
    y0 = np.repeat(_normalised(grid, np.exp(np.cos(grid.theta) + 0.3 * np.sin(2 * grid.theta))), 2, axis=0)
    opts = {"rtol": 1e-11, "atol": 0.0, "diffusion": 0.2}
    conv = CircleSpectral(grid, spec, **opts)
    call = CircleSpectral(grid, CallableVelocity(velocity), n_species=2, **opts)
    np.testing.assert_allclose(call.velocity_field(y0), conv.velocity_field(y0), rtol=0, atol=1e-14)
    a = evolve(conv, y0, [0.0, 1.0], raise_on_error=True).y[-1]
    b = evolve(call, y0, [0.0, 1.0], raise_on_error=True).y[-1]
    # the same semi-discrete system (X has only the modes 0 and 1): equal to the time
    # tolerance (measured: to round-off, the step sequences coincide)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    assert np.max(np.abs(a[0] - a[1])) > 0.1  # the two frequencies separate


def test_velocity_field_of_uniform_plus_mode_one():
    # SA at β = 0: X(θ) = ∫ sin(φ - θ) ρ(φ) dφ; ρ = (1 + a cos θ)/2π gives X = -(a/2) sin θ
    grid = CircleGrid(32)
    a = 0.4
    y = ((1 + a * np.cos(grid.theta)) / (2 * np.pi))[None]
    scheme = CircleSpectral(grid, mf.SelfAttention(0.0).velocity_spec(2))
    np.testing.assert_allclose(scheme.velocity_field(y)[0], -(a / 2) * np.sin(grid.theta), rtol=0, atol=1e-15)
    # and dρ/dt = -∂_θ(ρX) = (a/2) ∂_θ((1 + a cos θ) sin θ)/2π
    expected = (a / 2) * (np.cos(grid.theta) + a * np.cos(2 * grid.theta)) / (2 * np.pi)
    np.testing.assert_allclose(scheme.rhs(y)[0], expected, rtol=0, atol=1e-15)


def test_under_resolution_is_detected_not_returned():
    model = mf.SelfAttention(30.0, normalized=True)
    times = np.linspace(0.0, 30.0, 31)

    def initial(grid):
        return ((1 + 1e-3 * np.cos(3 * grid.theta) + 1e-3 * np.sin(5 * grid.theta)) / (2 * np.pi))[None]

    coarse = CircleGrid(32)
    scheme = CircleSpectral(coarse, model.velocity_spec(2))
    with pytest.raises(UnderResolvedError, match=r"under-resolved on N=32 nodes: spectral tail .* > tail_tol=1e-06.*larger grid \(e\.g\. N=64\)"):
        evolve(scheme, initial(coarse), times, raise_on_error=True)
    # without raising: the run stops early, and what it returned is still resolved
    scheme = CircleSpectral(coarse, model.velocity_spec(2))
    run = evolve(scheme, initial(coarse), times)
    assert not run.success and "under-resolved on N=32" in run.message
    assert 0.0 < run.t[-1] < times[-1]
    # … and agrees with a 4× finer grid at the last time returned: the truncated modes
    # (tail ≤ 1e-6 of the mean) barely feed back into the resolved ones, and both runs
    # meet rtol = 1e-8 per step; measured relative difference 5.4e-9
    fine = CircleGrid(128)
    fine_run = evolve(CircleSpectral(fine, model.velocity_spec(2)), initial(fine), run.t, raise_on_error=True)
    np.testing.assert_allclose(run.y[-1, 0], fine_run.y[-1, 0, ::4], rtol=1e-7)


def test_under_resolution_warns_in_warn_mode():
    model = mf.SelfAttention(30.0, normalized=True)
    grid = CircleGrid(32)
    y0 = ((1 + 1e-3 * np.cos(3 * grid.theta) + 1e-3 * np.sin(5 * grid.theta)) / (2 * np.pi))[None]
    scheme = CircleSpectral(grid, model.velocity_spec(2), on_underresolved="warn")
    with pytest.warns(RuntimeWarning, match="under-resolved on N=32 nodes"):
        run = evolve(scheme, y0, [0.0, 8.0])
    assert run.success


def test_negative_density_is_reported_when_asked():
    grid = CircleGrid(16)
    y = ((1 + 1.2 * np.cos(grid.theta)) / (2 * np.pi))[None]
    scheme = CircleSpectral(grid, mf.SelfAttention(1.0).velocity_spec(2), negative_tol=1e-8)
    with pytest.raises(NegativeDensityError, match="density reached"):
        scheme.check(y)
    CircleSpectral(grid, mf.SelfAttention(1.0).velocity_spec(2)).check(y)  # off by default


def test_stiff_diffusion_does_not_limit_the_step():
    sigma = 5.0
    model = mf.SelfAttention(1.0, normalized=True, noise=sigma)
    grid = CircleGrid(128)
    y0 = _normalised(grid, np.exp(2 * np.cos(grid.theta)))
    scheme = CircleSpectral(grid, model.velocity_spec(2), diffusion=sigma)
    run = evolve(scheme, y0, [0.0, 1.0], raise_on_error=True)
    # an explicit DP5 step on σ∂²_θ needs h ≤ 3.3/(σ k_max²) (real stability interval),
    # i.e. ≥ 6200 steps to t = 1 with k_max = 64; the integrating factor takes ≈ 17
    explicit_bound = sigma * (grid.n // 2) ** 2 / 3.3
    assert run.n_steps < 0.01 * explicit_bound, run.n_steps
    # and it is accurate: a run with rtol = 1e-12 agrees far below the default rtol = 1e-8
    # (the diffusion, exact in the integrating factor, damps the local errors; measured
    # 1.5e-11 of the maximum)
    tight = CircleSpectral(grid, model.velocity_spec(2), diffusion=sigma, rtol=1e-12, atol=0.0)
    reference = evolve(tight, y0, [0.0, 1.0], raise_on_error=True).y[-1]
    np.testing.assert_allclose(run.y[-1], reference, rtol=0, atol=3e-10 * reference.max())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"diffusion": -0.1}, ValueError, r"diffusion must be finite and >= 0, got -0.1"),
        ({"diffusion": np.nan}, ValueError, r"diffusion must be finite and >= 0, got nan"),
        ({"diffusion": "0.1"}, TypeError, r"diffusion must be a real number, got '0.1'"),
        ({"rtol": 0.0}, ValueError, r"rtol must be finite and > 0, got 0.0"),
        ({"rtol": -1e-6}, ValueError, r"rtol must be finite and > 0"),
        ({"rtol": None}, TypeError, r"rtol must be a real number, got None"),
        ({"atol": -1.0}, ValueError, r"atol must be finite and >= 0, got -1.0"),
        ({"tail_tol": 0}, ValueError, r"tail_tol must be finite and > 0, got 0"),
        ({"on_underresolved": "ignore"}, ValueError, r"on_underresolved must be 'raise' or 'warn', got 'ignore'"),
        ({"threads": 0}, ValueError, r"threads must be a positive integer, got 0"),
        ({"threads": 1.5}, TypeError, r"threads must be a positive integer, got 1.5"),
        ({"dealias": "yes"}, TypeError, r"dealias must be True or False, got 'yes'"),
        ({"n_species": 3}, ValueError, r"n_species must equal velocity.n_species=1"),
        ({"negative_tol": -1.0}, ValueError, r"negative_tol must be finite and >= 0, got -1.0"),
    ],
)
def test_bad_options_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        CircleSpectral(CircleGrid(16), mf.SelfAttention(1.0).velocity_spec(2), **kwargs)


def test_wrong_state_shape_and_types_are_named():
    scheme = CircleSpectral(CircleGrid(16), mf.SelfAttention(1.0).velocity_spec(2))
    with pytest.raises(ValueError, match=r"y must have shape \(m, N\) = \(1, 16\) \(species, nodes\), got \(16,\)"):
        scheme.rhs(np.ones(16))
    with pytest.raises(ValueError, match=r"y must have shape \(m, N\) = \(1, 16\)"):
        evolve(scheme, np.ones((2, 16)), [0.0, 1.0])
    with pytest.raises(TypeError, match="grid must be a CircleGrid"):
        CircleSpectral(16, mf.SelfAttention(1.0).velocity_spec(2))
    with pytest.raises(TypeError, match="velocity must be a ConvolutionVelocity or CallableVelocity"):
        CircleSpectral(CircleGrid(16), lambda rho: rho)
    with pytest.raises(ValueError, match=r"velocity.numerator must return finite multipliers"):
        CircleSpectral(CircleGrid(16), ConvolutionVelocity(numerator=lambda k: np.full(k.shape, np.nan)))


def test_scipy_backend_gives_the_same_solution():
    grid = CircleGrid(64)
    y0 = _normalised(grid, np.exp(np.cos(grid.theta) + 0.4 * np.sin(2 * grid.theta)))
    model = mf.SelfAttention(3.0, noise=0.05)
    runs = [
        evolve(CircleSpectral(grid, model.velocity_spec(2), diffusion=0.05, fft_backend=b), y0, [0.0, 1.0]).y[-1]
        for b in ("pyfftw", "scipy")
    ]
    # different FFT implementations: round-off differences amplified by the step
    # controller stay far below the tolerance rtol = 1e-8
    np.testing.assert_allclose(runs[0], runs[1], rtol=0, atol=1e-9)


def test_tail_tolerance_is_not_below_the_time_integration_floor():
    grid = CircleGrid(32)
    # a state whose tail (mode 12 > N/3) is 5e-4 of the mean
    y = ((1 + 2 * 5e-4 * np.cos(12 * grid.theta)) / (2 * np.pi))[None]
    velocity = mf.SelfAttention(1.0).velocity_spec(2)
    np.testing.assert_allclose(CircleSpectral(grid, velocity).spectral_tail(y), 5e-4, rtol=1e-12)
    with pytest.raises(UnderResolvedError, match="is 0.0005 > tail_tol=1e-06;"):
        CircleSpectral(grid, velocity).check(y)
    # rtol = 1e-5 admits tails of ≈ 10–30 rtol from the step control alone: threshold 1e-3
    CircleSpectral(grid, velocity, rtol=1e-5).check(y)
    with pytest.raises(UnderResolvedError, match=r"raised to 100·rtol=0.0001"):
        CircleSpectral(grid, velocity, rtol=1e-6).check(y)


def test_dealiased_rhs_is_the_exact_truncation_of_the_quadratic_flux(rng):
    # USA: ρX = ρ (A ⋆ ρ) is quadratic; with 3/2 padding its modes |k| < N/2 are exact
    n = 32
    grid = CircleGrid(n)
    k = np.arange(n // 2 + 1)
    c = (rng.standard_normal(k.size) + 1j * rng.standard_normal(k.size)) * np.exp(-0.15 * k) / 20
    c[0], c[-1] = 1 / (2 * np.pi), 0.0
    y = np.fft.irfft(c * n, n)[None]
    velocity = mf.SelfAttention(2.0, normalized=False).velocity_spec(2)
    fine = 4 * n  # no aliasing of products of modes < n/2 on 4n nodes
    kf = np.arange(fine // 2 + 1)
    cf = np.zeros(kf.size, dtype=complex)
    cf[: k.size] = c
    rho_f = np.fft.irfft(cf * fine, fine)
    a_f = np.fft.irfft(velocity.numerator(kf) * cf * fine, fine)
    d = -1j * kf * np.fft.rfft(rho_f * a_f) / fine
    d[n // 2 :] = 0.0
    expected = np.fft.irfft(d[: k.size] * n, n)
    got = CircleSpectral(grid, velocity).rhs(y)[0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13 * np.abs(expected).max())
    aliased = CircleSpectral(grid, velocity, dealias=False).rhs(y)[0]
    assert np.abs(aliased - expected).max() > 1e-6 * np.abs(expected).max()


@pytest.mark.parametrize("sigma", [0.0, 1.0])
def test_time_order_is_five_with_and_without_integrating_factor(sigma):
    # fixed steps h (rtol so loose that no step is rejected, max_step = h) against a
    # tight adaptive reference; DP5 and its Lawson (integrating-factor) form are of
    # order 5, also when σk²h ≫ 1 (σ = 1: σk²h up to 64 at h = 1/4)
    grid = CircleGrid(32)
    y0 = _normalised(grid, np.exp(np.cos(grid.theta) + 0.5 * np.sin(2 * grid.theta)))
    velocity = mf.SelfAttention(2.0).velocity_spec(2)
    opts = {"diffusion": sigma, "tail_tol": 1.0}
    reference = evolve(CircleSpectral(grid, velocity, rtol=1e-14, atol=0.0, **opts), y0, [0.0, 1.0]).y[-1]
    steps = np.array([1 / 4, 1 / 8, 1 / 16, 1 / 32])
    errors = []
    for h in steps:
        scheme = CircleSpectral(grid, velocity, rtol=1e6, **opts)
        run = evolve(scheme, y0, [0.0, 1.0], first_step=h, max_step=h, raise_on_error=True)
        assert run.n_steps == round(1 / h) and run.n_rejected == 0
        errors.append(np.max(np.abs(run.y[-1] - reference)))
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    # measured 4.9–5.3; errors stay ≥ 6e-13, above the reference's own error
    assert np.all((orders > 4.6) & (orders < 5.6)), orders


def test_drifts_are_integrated_exactly_whatever_their_size():
    # Uncoupled oscillators with a Lorentzian frequency law and noise: ρ̂_{m,k}(t) =
    # e^{(-ikω_m - σk²)t} ρ̂_k(0) exactly. The drift is part of the integrating factor,
    # so extreme nodes (|ω| ≈ 40 here) neither limit the step nor cost accuracy.
    circle = mf.Circle(32)
    model = mf.Kuramoto(0.0, scipy.stats.cauchy(0, 0.5), noise=0.05)
    rho0 = mf.density(circle, lambda th: 1 + 0.5 * np.cos(th) + 0.2 * np.sin(3 * th))
    ds = mf.solve(model, rho0, [0.0, 2.0], frequency_nodes=128)
    omega = ds.frequency.values
    k = np.arange(17)
    exact_hat = np.fft.rfft(rho0.values)[None, :] * np.exp((-1j * k[None, :] * omega[:, None] - 0.05 * k**2) * 2.0)
    computed_hat = np.fft.rfft(ds.density_by_frequency.values[-1], axis=-1)
    np.testing.assert_allclose(computed_hat, exact_hat, rtol=0, atol=1e-11)
    # growth from the first step by the controller's factor 10 only; an explicit
    # stepper would need h |ω|max k_max ≲ 3, i.e. ≥ 400 steps
    assert ds.attrs["n_steps"] <= 10


def _step_by_step(scheme: CircleSpectral) -> CircleSpectral:
    """``scheme`` driven one step at a time by :func:`evolve` (no compiled loop between outputs)."""
    scheme.advance = lambda *args, **kwargs: None
    return scheme


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_compiled_loop_repeats_the_steps_one_by_one(noise):
    grid = CircleGrid(64)
    y0 = _normalised(grid, np.exp(0.5 * np.cos(grid.theta)))
    velocity = mf.SelfAttention(4.0).velocity_spec(2)
    times = [0.0, 0.7, 2.0]
    loop = evolve(CircleSpectral(grid, velocity, diffusion=noise), y0, times)
    steps = evolve(_step_by_step(CircleSpectral(grid, velocity, diffusion=noise)), y0, times)
    # the same compiled step either way: equal bit for bit, with the same counts
    np.testing.assert_array_equal(loop.y, steps.y)
    assert (loop.n_steps, loop.n_rejected, loop.nfev, loop.dt_min, loop.dt_max) == (
        steps.n_steps, steps.n_rejected, steps.nfev, steps.dt_min, steps.dt_max)
    np.testing.assert_array_equal(loop.steps_per_output, steps.steps_per_output)


def test_compiled_loop_stops_where_the_steps_one_by_one_stop():
    grid = CircleGrid(64)
    y0 = _normalised(grid, np.exp(0.5 * np.cos(grid.theta)))
    velocity = mf.SelfAttention(4.0).velocity_spec(2)  # σ = 0: the density concentrates until under-resolved
    loop = evolve(CircleSpectral(grid, velocity), y0, [0.0, 5.0, 10.0])
    steps = evolve(_step_by_step(CircleSpectral(grid, velocity)), y0, [0.0, 5.0, 10.0])
    assert not loop.success and loop.message == steps.message and "under-resolved" in loop.message
    assert (loop.n_steps, loop.nfev, loop.t.size) == (steps.n_steps, steps.nfev, steps.t.size)
    with pytest.raises(StepSizeError, match="exceeded max_steps = 5 at t = "):
        evolve(CircleSpectral(grid, velocity), y0, [0.0, 5.0], max_steps=5, raise_on_error=True)


def test_repeated_solves_build_no_new_plans():
    grid = CircleGrid(96)
    y0 = _normalised(grid, np.exp(0.5 * np.cos(grid.theta)))
    velocity = mf.SelfAttention(2.0, noise=0.1).velocity_spec(2)
    evolve(CircleSpectral(grid, velocity, diffusion=0.1), y0, [0.0, 0.5])
    before = plan_builds()
    for backend in available_backends():
        evolve(CircleSpectral(grid, velocity, diffusion=0.1, fft_backend=backend), y0, [0.0, 0.5])
    evolve(CircleSpectral(grid, velocity, diffusion=0.1), y0, [0.0, 0.5])
    # the thread's plans of each layout are made once (the numpy path's own, at most once more)
    assert plan_builds() - before <= 3
    start = plan_builds()
    for _ in range(3):
        evolve(CircleSpectral(grid, velocity, diffusion=0.1, fft_backend="scipy"), y0, [0.0, 0.5])
        evolve(CircleSpectral(grid, velocity, diffusion=0.1), y0, [0.0, 0.5])
    assert plan_builds() == start
