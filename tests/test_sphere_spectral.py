"""Spherical-harmonic scheme on S² against the exact facts of DESIGN.md §2."""

from __future__ import annotations

import numpy as np
import pytest

import meanfield as mf
from meanfield.domains._funk_hecke import scaled_funk_hecke
from solvers import (
    CallableVelocity,
    ConvolutionVelocity,
    SphereGrid,
    SphereSpectral,
    UnderResolvedError,
    evolve,
    schemes_for,
)


def perturbed_uniform(grid: SphereGrid, ell: int, m: int, eps: float) -> tuple[np.ndarray, int]:
    alm = np.zeros(grid.nalm, complex)
    alm[grid.degrees == 0] = np.sqrt(4 * np.pi) / (4 * np.pi)
    index = int(np.flatnonzero((grid.degrees == ell) & (grid.orders == m))[0])
    alm[index] = eps * (1.0 + 0.5j if m else 1.0)
    return grid.synthesis(alm)[None], index


def test_registered() -> None:
    assert schemes_for(SphereGrid(4))["spectral"] is SphereSpectral


@pytest.mark.parametrize("model_class", [mf.SelfAttention, mf.RepulsiveSelfAttention])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("noise", [0.0, 0.3])
def test_growth_rates_about_uniform(model_class, normalized: bool, noise: float) -> None:
    """A degree-l perturbation ε Y_lm of 1/4π grows like e^{λ_l t}, λ_l of DESIGN §2 (repulsive: its sign turned)."""
    grid = SphereGrid(8)
    model = model_class(2.0, normalized=normalized, noise=noise)
    scheme = SphereSpectral(grid, model.velocity_spec(3), diffusion=noise, rtol=1e-11, atol=1e-14)
    t = 0.5
    for ell, m in [(1, 0), (2, 0), (3, 0), (4, 0), (2, 1), (3, 2), (4, 4)]:
        y0, index = perturbed_uniform(grid, ell, m, 1e-8)
        # the error control sees the O(1) mean, not the 1e-8 mode: cap the step (DP5 error (λh)^6 ≲ 1e-10)
        run = evolve(scheme, y0, [0.0, t], max_step=0.02)
        a = grid.analysis(run.y[-1][0])[index]
        rate = np.log(np.abs(a) / np.abs(grid.analysis(y0[0])[index])) / t
        # nonlinear terms are O(ε) = 1e-8 relative; time error below rtol = 1e-11
        assert rate == pytest.approx(model.growth_rate(ell, 3), rel=1e-6, abs=1e-7)
        phase = np.angle(a) - np.angle(1.0 + 0.5j if m else 1.0)
        assert abs(phase) < 1e-7  # no rotation of the mode: the linearised operator is real and zonal


def test_mass_is_conserved_to_round_off() -> None:
    s = mf.Sphere(24)
    rho0 = mf.von_mises(s, [0.6, 0.0, 0.8], 3.0)
    model = mf.SelfAttention(3.0, noise=0.05)
    scheme = SphereSpectral(s.grid, model.velocity_spec(3), diffusion=0.05)
    run = evolve(scheme, rho0.values[None], [0.0, 0.5, 1.0])
    assert run.success
    # the l = 0 coefficient of div(ρX) vanishes identically: mass changes by round-off only
    assert np.abs(scheme.mass(run.y) - 1.0).max() < 1e-13


def _solve(grid: SphereGrid, model: mf.SelfAttention, values: np.ndarray, times, **opts):
    scheme = SphereSpectral(grid, model.velocity_spec(3), diffusion=model.noise, **opts)
    return scheme, evolve(scheme, values[None], times, raise_on_error=True)


def test_rotation_about_the_axis_by_grid_shifts_is_exact() -> None:
    s = mf.Sphere(20)
    model = mf.SelfAttention(2.0, noise=0.02)
    shift = 5
    angle = shift * 2 * np.pi / s.shape[1]
    loc = np.array([np.cos(0.4), 0.0, np.sin(0.4)])
    loc_rot = np.array([np.cos(0.4) * np.cos(angle), np.cos(0.4) * np.sin(angle), np.sin(0.4)])
    _, a = _solve(s.grid, model, mf.von_mises(s, loc, 3.0).values, [0, 0.5])
    _, b = _solve(s.grid, model, mf.von_mises(s, loc_rot, 3.0).values, [0, 0.5])
    # transforms commute with shifts by whole grid steps; identical step sequences ⇒ round-off only
    assert np.abs(np.roll(a.y[-1], shift, axis=-1) - b.y[-1]).max() < 1e-12


def test_general_rotation_equivariance() -> None:
    """Rotating ρ₀ by R rotates ρ(t): the first moment rotates and the power per degree is invariant."""
    s = mf.Sphere(24)
    model = mf.SelfAttention(2.0, normalized=False)
    loc = np.array([0.0, 0.0, 1.0])
    axis = np.array([1.0, 2.0, 0.5]) / np.linalg.norm([1.0, 2.0, 0.5])
    angle = 1.1
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rot = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    opts = {"rtol": 1e-10, "atol": 1e-13}
    _, a = _solve(s.grid, model, mf.von_mises(s, loc, 2.0).values, [0, 0.1], **opts)
    _, b = _solve(s.grid, model, mf.von_mises(s, rot @ loc, 2.0).values, [0, 0.1], **opts)
    ra, rb = (mf.Density(s, run.y[-1][0]) for run in (a, b))
    # the Galerkin scheme with exact (padded) quadrature commutes with rotations, and its L²
    # error norms (hence its step sizes) are rotation invariant: the two runs differ by
    # round-off only (measured 1.3e-15), not by the time error ~ rtol = 1e-10
    assert np.allclose(rb.mean(), rot @ ra.mean(), rtol=0, atol=3e-14)
    pa, pb = (s.grid.power(s.grid.analysis(r.values)) for r in (ra, rb))
    assert np.allclose(pa, pb, rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("normalized", [False, True])
def test_energy_identity(normalized: bool) -> None:
    """σ = 0: dE/dt = ∫|X|² dμ (USA, Lemma 3.7) and ∫|X|² Z_μ dμ (SA, (3.6))."""
    s = mf.Sphere(24)
    beta = 1.5
    model = mf.SelfAttention(beta, normalized=normalized)
    rho0 = mf.von_mises(s, [0.0, 0.6, 0.8], 1.5)
    t0, h = 0.2, 1e-3
    scheme, run = _solve(s.grid, model, rho0.values, [0.0, t0 - h, t0, t0 + h], rtol=1e-12, atol=1e-15)
    energies = [mf.energy(model, mf.Density(s, y[0])) for y in run.y[1:]]
    dedt = (energies[2] - energies[0]) / (2 * h)
    y = run.y[2]
    x = scheme.velocity_field(y)[0]  # (nlat, nlon, 2): the components (X_ϑ, X_φ) last
    speed2 = np.sum(x**2, axis=-1)
    if normalized:
        z = s.convolve(y[0], lambda ell: scaled_funk_hecke(ell, beta, 3) * np.exp(beta))
        speed2 = speed2 * z
    expected = np.sum(speed2 * y[0] * s.weights)
    # central difference: O(h²) = 1e-6 relative; time integration ≪ that
    assert dedt == pytest.approx(expected, rel=1e-5)


def test_spectral_convergence_in_lmax() -> None:
    model = mf.SelfAttention(2.0)
    loc = np.array([0.48, 0.6, 0.64])
    t = [0.0, 0.5]

    def final(lmax: int) -> np.ndarray:
        s = mf.Sphere(lmax)
        _, run = _solve(s.grid, model, mf.von_mises(s, loc, 3.0).values, t, rtol=1e-12, atol=1e-15, tail_tol=1.0)
        return s.grid.analysis(run.y[-1][0])

    ref_grid = SphereGrid(40)
    ref = final(40)
    errors = []
    for lmax in (6, 10, 14, 18):
        keep = ref_grid.degrees <= lmax
        diff = np.zeros_like(ref)
        diff[keep] = final(lmax) - ref[keep]
        diff[~keep] = ref[~keep]
        errors.append(np.sqrt(np.sum(ref_grid.parseval_weights * np.abs(diff) ** 2)))
    errors = np.array(errors)
    # exponential convergence: each +4 degrees gains at least a factor 10 (algebraic order p would give (l+4)/l)^p ≈ 2–5)
    assert np.all(errors[1:] / errors[:-1] < 0.1), errors
    assert errors[-1] < 1e-7


def test_under_resolution_is_reported() -> None:
    """USA at β = 2 concentrates a vMF(κ = 5) fast: lmax = 20 cannot follow it to t = 0.5."""
    s = mf.Sphere(20)
    model = mf.SelfAttention(2.0, normalized=False)
    scheme = SphereSpectral(s.grid, model.velocity_spec(3))
    run = evolve(scheme, mf.von_mises(s, [0, 0, 1], 5.0).values[None], [0.0, 0.5])
    assert not run.success and "under-resolved" in run.message and "increase lmax" in run.message
    with pytest.raises(UnderResolvedError, match="under-resolved"):
        evolve(scheme, mf.von_mises(s, [0, 0, 1], 5.0).values[None], [0.0, 0.5], raise_on_error=True)


def test_rhs_and_mass_shapes() -> None:
    s = mf.Sphere(8)
    model = mf.SelfAttention(1.0, noise=0.1)
    scheme = SphereSpectral(s.grid, model.velocity_spec(3), diffusion=0.1)
    y = mf.uniform(s).values[None]
    assert scheme.mass(y) == pytest.approx([1.0], abs=1e-14)
    assert np.abs(scheme.rhs(y)).max() < 1e-14  # the uniform measure is stationary
    with pytest.raises(ValueError, match="state must have shape"):
        scheme.rhs(y[0])


def test_rejects_bad_arguments() -> None:
    g = SphereGrid(8)
    spec = mf.SelfAttention(1.0).velocity_spec(3)
    with pytest.raises(TypeError, match="grid must be a SphereGrid"):
        SphereSpectral(mf.Circle(8).grid, spec)
    with pytest.raises(TypeError, match="velocity must be a ConvolutionVelocity"):
        SphereSpectral(g, CallableVelocity(lambda y: y))
    with pytest.raises(ValueError, match="diffusion must be finite and >= 0"):
        SphereSpectral(g, spec, diffusion=-1.0)


def test_solve_on_the_sphere() -> None:
    s = mf.Sphere(24)
    ds = mf.solve(mf.SelfAttention(1.0), mf.von_mises(s, [0, 0, 1], 2.0), [0.0, 0.25, 0.5])
    assert ds.density.dims == ("time", "lat", "lon") and ds.attrs["success"] == 1
    assert np.allclose(ds.mass, 1.0, atol=1e-13)
    # σ = 0, SA: the energy is non-decreasing ((3.6): dE/dt = ∫|X|² Z dμ ≥ 0)
    assert np.all(np.diff(ds.energy.values) > 0)


def test_non_positive_normaliser_rejects_a_trial_step_but_not_the_run() -> None:
    """SA, β = 4: a first step of 2 overshoots so far that B ⋆ ρ ≤ 0 inside its stages."""
    s = mf.Sphere(24)
    model = mf.SelfAttention(4.0)
    y0 = mf.von_mises(s, [0.48, 0.6, 0.64], 2.0).values[None]
    scheme = SphereSpectral(s.grid, model.velocity_spec(3))
    result = scheme.step(0.0, y0, 2.0)
    # rejected like a non-finite error estimate: retry with min_factor · h = 0.4 …
    assert not result.accepted and result.error == np.inf and result.dt_next == pytest.approx(0.4)
    # … and stopped inside its stages (N(y0) plus fewer than the six stage evaluations)
    assert scheme.nfev < 7
    run = evolve(scheme, y0, [0.0, 1.0], first_step=2.0)
    assert run.success and run.n_rejected >= 1, run.message
    reference = evolve(SphereSpectral(s.grid, model.velocity_spec(3)), y0, [0.0, 1.0], raise_on_error=True)
    # both runs meet the default rtol = 1e-7 per step; the global difference is below it
    # (measured 5.7e-10 of the maximum)
    np.testing.assert_allclose(run.y[-1], reference.y[-1], rtol=0, atol=1e-8 * reference.y[-1].max())


def test_non_positive_normaliser_at_an_accepted_state_is_under_resolution() -> None:
    s = mf.Sphere(8)
    scheme = SphereSpectral(s.grid, mf.SelfAttention(1.0).velocity_spec(3))
    y = -mf.uniform(s).values[None]  # B ⋆ ρ < 0 everywhere
    with pytest.raises(UnderResolvedError, match=r"under-resolved — the normaliser B ⋆ ρ became non-positive .*increase lmax"):
        scheme.rhs(y)
    result = evolve(scheme, y, [0.0, 1.0])
    assert not result.success and "normaliser" in result.message and result.t.tolist() == [0.0]
    with pytest.raises(UnderResolvedError, match="normaliser"):
        evolve(scheme, y, [0.0, 1.0], raise_on_error=True)


def _mode_state(grid: SphereGrid, ell: int, amplitude: float) -> np.ndarray:
    alm = np.zeros(grid.nalm, complex)
    alm[grid.degrees == 0] = 1 / np.sqrt(4 * np.pi)
    alm[(grid.degrees == ell) & (grid.orders == 0)] = amplitude / np.sqrt(4 * np.pi)
    return grid.synthesis(alm)[None]


def test_tail_is_checked_on_the_initial_state_with_the_time_integration_floor() -> None:
    grid = SphereGrid(12)
    # a degree-10 (> 2/3 · 12) mode of relative amplitude 5e-4: tail ‖ρ_10‖/‖ρ_0‖ = 5e-4
    y = _mode_state(grid, 10, 5e-4)
    velocity = mf.SelfAttention(1.0).velocity_spec(3)
    assert SphereSpectral(grid, velocity).spectral_tail(y) == pytest.approx([5e-4], rel=1e-12)
    # defaults tail_tol = 1e-6, rtol = 1e-7: threshold max(1e-6, 100·1e-7) = 1e-5
    with pytest.raises(UnderResolvedError, match=r"is 0\.0005 > tail_tol=1e-06 \(raised to 100·rtol=1e-05\);.*increase lmax"):
        SphereSpectral(grid, velocity).check(y)
    # rtol = 1e-6 raises the threshold to 100·rtol = 1e-4
    with pytest.raises(UnderResolvedError, match=r"is 0\.0005 > tail_tol=1e-06 \(raised to 100·rtol=0\.0001\)"):
        SphereSpectral(grid, velocity, rtol=1e-6).check(y)
    # the initial state is checked before any step is taken; the initial output is kept
    scheme = SphereSpectral(grid, velocity)
    with pytest.raises(UnderResolvedError, match="increase lmax"):
        evolve(scheme, y, [0.0, 0.1], raise_on_error=True)
    assert scheme.nfev == 0
    result = evolve(scheme, y, [0.0, 0.1])
    assert not result.success and "increase lmax" in result.message
    assert result.t.tolist() == [0.0] and scheme.nfev == 0
    np.testing.assert_array_equal(result.y[0], y)
    # rtol = 1e-5 admits tails of ≈ 10–30 rtol from the step control alone: threshold 1e-3
    SphereSpectral(grid, velocity, rtol=1e-5).check(y)
    SphereSpectral(grid, velocity, tail_tol=1e-3).check(y)
    with pytest.raises(UnderResolvedError, match=r"> tail_tol=0\.0001;"):
        SphereSpectral(grid, velocity, tail_tol=1e-4, rtol=1e-8).check(y)


def test_kernel_multipliers_are_validated() -> None:
    g = SphereGrid(8)
    # the circle's multipliers carry the ik of a derivative: refused, not cast to zero velocity
    with pytest.raises(ValueError, match=r"velocity.numerator must return real multipliers .* degrees 0..8"):
        SphereSpectral(g, mf.SelfAttention(1.0).velocity_spec(2))
    with pytest.raises(ValueError, match=r"velocity.numerator must return finite multipliers of shape \(45,\)"):
        SphereSpectral(g, ConvolutionVelocity(numerator=lambda ell: np.ones(3)))
    with pytest.raises(ValueError, match=r"velocity.denominator must return finite multipliers"):
        SphereSpectral(g, ConvolutionVelocity(numerator=np.ones_like, denominator=lambda ell: np.full(ell.shape, np.inf)))
    with pytest.raises(TypeError, match=r"velocity.numerator must return numeric multipliers"):
        SphereSpectral(g, ConvolutionVelocity(numerator=lambda ell: np.array(["a"] * ell.size)))
    # complex dtype with zero imaginary part is accepted as real
    SphereSpectral(g, ConvolutionVelocity(numerator=lambda ell: np.ones(ell.shape, complex)))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"rtol": "1e-6"}, TypeError, "rtol must be a real number, got '1e-6'"),
        ({"tail_tol": 0.0}, ValueError, "tail_tol must be finite and > 0, got 0.0"),
        ({"atol": np.nan}, ValueError, "atol must be finite and >= 0, got nan"),
        ({"rtol": 0.0, "atol": 0.0}, ValueError, "rtol and atol must not both be 0"),
        ({"dealias": 1}, TypeError, "dealias must be True or False, got 1"),
    ],
)
def test_bad_options_are_named(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        SphereSpectral(SphereGrid(8), mf.SelfAttention(1.0).velocity_spec(3), **kwargs)
