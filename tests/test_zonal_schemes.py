"""Zonal schemes on S^{d-1}: growth rates, mass, positivity, convergence, energy identity."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import simpson

import meanfield as mf
from solvers import (
    NegativeDensityError,
    UnderResolvedError,
    ZonalCellGrid,
    ZonalFiniteVolume,
    ZonalGaussGrid,
    ZonalSpectral,
    evolve,
    schemes_for,
)
from solvers._zonal_grid import gegenbauer_table

EPS = 1e-6  # relative size of the perturbation: nonlinear terms change the rate by O(EPS)


def _spectral_rate(model, d, ell, horizon=0.5):
    grid = ZonalGaussGrid(d, 24)
    coeffs = np.zeros(grid.n)
    coeffs[0] = 1 / grid.area
    coeffs[ell] = EPS / grid.area
    scheme = ZonalSpectral(grid, model.velocity_spec(d), diffusion=model.noise, rtol=1e-12)
    run = evolve(scheme, grid.synthesis(coeffs)[None], [0.0, horizon], raise_on_error=True)
    return np.log(grid.analysis(run.y[-1, 0])[ell] / coeffs[ell]) / horizon


@pytest.mark.parametrize("model_class", [mf.SelfAttention, mf.RepulsiveSelfAttention])
@pytest.mark.parametrize("d", [3, 5, 10, 100])
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_spectral_growth_rates(model_class, d, normalized, noise):
    model = model_class(2.0, normalized=normalized, noise=noise)
    for ell in (1, 2, 3, 4):
        exact = model.growth_rate(ell, d)
        # Galerkin is exact for the linearised operator; what remains is the O(EPS)
        # nonlinear contamination (measured ≤ 2e-6 relative) and round-off ≈ 1e-16/EPS/T.
        # Relative to the size of the two competing terms (attraction and diffusion).
        scale = abs(exact) + ell * (ell + d - 2) * noise
        assert abs(_spectral_rate(model, d, ell) - exact) < 1e-5 * scale + 1e-9


def _fv_rate(model, d, ell, n, horizon=0.5):
    grid = ZonalCellGrid(d, n)
    moments = grid.cell_moments(8)
    base = np.full(n, 1 / grid.area)
    bump = EPS / grid.area * moments[ell] * grid.area / grid.volumes  # cell averages of EPS q_l/|S|
    # No max_step: near the uniform state the positivity bound is ~1/EPS, and the scheme's own
    # cap cfl_growth/Λ = 0.1/Λ (Λ the largest linear rate) keeps SSP-RK3's change of λ
    # ≤ λ (0.1)³/24 ≈ 4e-5 λ, below the O(h²) space error (measured: within 3 % of it).
    scheme = ZonalFiniteVolume(grid, model.velocity_spec(d), diffusion=model.noise)
    run = evolve(scheme, (base + bump)[None], [0.0, horizon], raise_on_error=True)
    assert run.dt_max <= scheme.growth_step(base[None]) * (1 + 1e-12)
    return np.log((moments[ell] @ (run.y[-1, 0] - base)) / (moments[ell] @ bump)) / horizon


@pytest.mark.parametrize(
    ("model_class", "d"),
    [(mf.SelfAttention, 3), (mf.SelfAttention, 10), (mf.RepulsiveSelfAttention, 5)],
)
@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("noise", [0.0, 0.05])
@pytest.mark.parametrize("beta", [2.0, 5.0])
def test_finite_volume_growth_rates_converge_at_second_order(model_class, d, normalized, noise, beta):
    model = model_class(beta, normalized=normalized, noise=noise)
    for ell in (1, 2, 4):
        exact = model.growth_rate(ell, d)
        coarse, fine = (abs(_fv_rate(model, d, ell, n) - exact) for n in (32, 64))
        # second order: halving h divides the error by ≈ 4 (measured orders 1.81–2.10 from 32 to 64 cells, 1.74–2.03 from 64 to 128)
        assert np.log2(coarse / fine) > 1.8
        # at 64 cells within 1.04 % of max(1, |λ|) (largest: d = 5, l = 4, β = 5, attractive and repulsive
        # alike; d = 3 and 10 at most 0.8 %)
        assert fine < 0.012 * max(1.0, abs(exact))


@pytest.mark.parametrize("d", [3, 10])
@pytest.mark.parametrize(("normalized", "beta", "noise"), [(False, 5.0, 0.0), (True, 2.0, 0.05)])
def test_finite_volume_growth_bound_is_the_largest_linear_rate(d, normalized, beta, noise):
    # Λ = max_l l(l+d-2)|a_l| ρ̄/(b_0 ρ̄) equals the largest exact rate λ_l at σ = 0 (DESIGN §2;
    # a_l > 0 for these kernels, diffusion excluded), over the degrees l < n of the scheme.
    grid = ZonalCellGrid(d, 32)
    model = mf.SelfAttention(beta, normalized=normalized, noise=noise)
    scheme = ZonalFiniteVolume(grid, model.velocity_spec(d), diffusion=noise)
    uniform = np.full((1, grid.n), 1 / grid.area)
    rates = mf.SelfAttention(beta, normalized=normalized).growth_rate(np.arange(1, grid.n), d)
    assert scheme.growth_step(uniform) == pytest.approx(0.1 / rates.max(), rel=1e-10)
    if noise == 0:
        assert scheme.initial_step(uniform) == scheme.growth_step(uniform)  # X = 0, σ = 0: only Λ limits the step


def _smooth_initial(theta):
    return np.exp(2 * np.cos(theta)) + 0.8 * np.exp(-4 * (np.cos(theta) + 0.5) ** 2)


@pytest.mark.parametrize("method,nodes,n", [("spectral", "gauss", 64), ("finite_volume", "cells", 100)])
@pytest.mark.parametrize("d", [3, 10])
def test_mass_conservation_through_solve(method, nodes, n, d):
    zonal = mf.ZonalSphere(d, n, nodes=nodes)
    rho0 = mf.density(zonal, _smooth_initial)
    ds = mf.solve(mf.SelfAttention(3.0, noise=0.02), rho0, np.linspace(0, 2, 5), method=method)
    assert ds.attrs["success"] == 1, ds.attrs["message"]
    assert ds.density.dims == ("time", "polar")
    # both schemes conserve Σ w_i ρ_i exactly up to round-off (spectral: the l = 0
    # coefficient has no transport term; FV: telescoping fluxes)
    np.testing.assert_allclose(ds.mass.values, 1.0, atol=1e-12)


@pytest.mark.parametrize("d", [3, 10])
def test_finite_volume_positivity_through_clustering(d):
    # SA at β = 9 from a vMF law: the mass collapses to the north pole, a near-Dirac
    # cluster that a spectral scheme cannot resolve; the FV scheme stays ≥ 0. By t = 6 the
    # cluster is no longer resolved by 80 cells either, and the run says so: Gegenbauer tail
    # measured 0.0114 (d = 3) and 524 (d = 10); for d = 3 the L1 distance of the t = 6 density
    # to the 160-cell run is 0.11 (0.059 from 160 to 320 cells: first order, not the scheme's second)
    zonal = mf.ZonalSphere(d, 80, nodes="cells")
    rho0 = mf.density(zonal, lambda th: np.exp(np.cos(th)) + 0.5 * (th > 2.0))
    with pytest.warns(RuntimeWarning, match=r"zonal S\^\d with n=80 cells is under-resolved from t=6"):
        ds = mf.solve(mf.SelfAttention(9.0), rho0, [0.0, 2.0, 6.0], method="finite_volume")
    assert ds.attrs["resolved"] == 0
    assert ds.attrs["success"] == 1, ds.attrs["message"]
    assert ds.density.values.min() >= 0.0
    np.testing.assert_allclose(ds.mass.values, 1.0, atol=1e-12)
    # the mass of the cap polar ≤ π/8 increases towards 1
    caps = [zonal.polar_cdf(v, np.pi / 8) for v in ds.density.values]
    assert caps[0] < caps[1] < caps[2] and caps[2] > 0.7


def test_spectral_convergence_in_n():
    d = 10
    model = mf.SelfAttention(2.0)
    horizon = [0.0, 1.0]

    def run(n):
        zonal = mf.ZonalSphere(d, n)
        # tail_tol=1: the coarse grids are under-resolved on purpose
        ds = mf.solve(model, mf.Density(zonal, *zonal.von_mises_values(None, 4.0)), horizon, method="spectral", rtol=1e-12, tail_tol=1.0)
        return zonal.coefficients(ds.density.values[-1])

    ref = run(64)
    errors = []
    for n in (8, 16, 24, 32, 40):
        coeffs = run(n)
        errors.append(np.sqrt(np.sum((coeffs - ref[:n]) ** 2) + np.sum(ref[n:] ** 2)) / np.linalg.norm(ref))
    errors = np.array(errors)
    # spectral convergence: every +8 degrees gains more than a factor 20 (measured
    # 7.6e-3 → 1.1e-4 → …), down to the level of the time-stepping tolerance
    assert np.all((errors[1:] < errors[:-1] / 20) | (errors[1:] < 1e-10)), errors
    assert errors[-1] < 1e-10


@pytest.mark.parametrize("d", [3, 10])
def test_finite_volume_second_order_on_smooth_solution(d):
    model = mf.SelfAttention(1.0, normalized=False, noise=0.05)
    horizon = [0.0, 0.5]
    spec = mf.ZonalSphere(d, 64)
    ref = mf.solve(model, mf.density(spec, _smooth_initial), horizon, method="spectral", rtol=1e-12)
    ref_coeffs = spec.coefficients(ref.density.values[-1])
    errors = []
    for n in (40, 80, 160):
        zonal = mf.ZonalSphere(d, n, nodes="cells")
        rho0 = mf.density(zonal, zonal.grid.cell_averages(_smooth_initial))
        ds = mf.solve(model, rho0, horizon, method="finite_volume")
        moments = zonal.grid.cell_moments(64)
        exact_avg = (ref_coeffs @ moments) * zonal.area / zonal.grid.volumes  # cell averages of the reference
        errors.append(np.sum(zonal.weights * np.abs(ds.density.values[-1] - exact_avg)))  # L¹(σ)
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(orders > 1.8), (errors, orders)


@pytest.mark.parametrize("d", [3, 10])
def test_energy_identity_usa(d):
    """dE/dt = ∫ |X|² dμ (Lemma 3.7): E(T) - E(0) against the time integral of the dissipation.

    |X|² = (∂_ϑ Φ)² = (1-t²) Φ_t², Φ = 𝖦_β ⋆ ρ, integrated by a 3/2-padded Gauss rule
    (exact for the polynomial integrand); E from mf.energy via domain.convolve.
    """
    model = mf.SelfAttention(1.0, normalized=False)
    n = 96
    zonal = mf.ZonalSphere(d, n)
    times = np.linspace(0.0, 1.0, 41)
    ds = mf.solve(model, mf.density(zonal, _smooth_initial), times, method="spectral", rtol=1e-12)
    assert ds.attrs["success"] == 1, ds.attrs["message"]
    energies = np.array([mf.energy(model, mf.Density(zonal, v)) for v in ds.density.values])
    np.testing.assert_allclose(energies, ds.energy.values, rtol=1e-13)
    fine = ZonalGaussGrid(d, 144)
    q, dq = gegenbauer_table(n, d, fine.t, derivative=True)
    mult = model.potential_multipliers(np.arange(n), d)
    coeffs = zonal.coefficients(ds.density.values)
    grad_potential = (coeffs * mult) @ dq.T  # Φ_t at the fine nodes, shape (time, 144)
    dissipation = ((1 - fine.t**2) * grad_potential**2 * (coeffs @ q.T)) @ fine.weights
    gained = simpson(dissipation, x=times)
    # Simpson with h = 0.025: error O(h⁴) with a small constant for this slowly varying
    # dissipation, plus rtol = 1e-12; measured 8e-9 (d = 3) and 3e-8 (d = 10) relative
    assert energies[-1] - energies[0] == pytest.approx(gained, rel=3e-7)
    assert np.all(np.diff(energies) > 0)


def test_under_resolution_is_reported():
    # a vMF with κ = 200 needs ~60 degrees on S²; 16 nodes are refused at the start (the initial output is kept)
    zonal = mf.ZonalSphere(3, 16)
    with pytest.raises(UnderResolvedError, match="increase n"):
        mf.solve(mf.SelfAttention(1.0), mf.Density(zonal, *zonal.von_mises_values(None, 200.0)), [0.0, 0.1], raise_on_error=True)
    ds = mf.solve(mf.SelfAttention(1.0), mf.Density(zonal, *zonal.von_mises_values(None, 200.0)), [0.0, 0.1])
    assert ds.attrs["success"] == 0 and "increase n" in ds.attrs["message"] and ds.sizes["time"] == 1
    # SA from a vMF law concentrates into a cluster: 96 degrees resolve it up to t = 1,
    # not up to t = 3 (200 degrees do); the run stops with the reason instead of oscillating
    zonal = mf.ZonalSphere(3, 96)
    ds = mf.solve(mf.SelfAttention(2.0), mf.Density(zonal, *zonal.von_mises_values(None, 2.0)), [0.0, 1.0, 3.0])
    assert ds.attrs["success"] == 0 and "spectral tail" in ds.attrs["message"]
    assert ds.sizes["time"] == 2


def test_registration_and_bad_grids():
    assert schemes_for(ZonalGaussGrid(5, 8)) == {"spectral": ZonalSpectral}
    assert schemes_for(ZonalCellGrid(5, 8)) == {"finite_volume": ZonalFiniteVolume}
    spec = mf.SelfAttention(1.0).velocity_spec(5)
    with pytest.raises(ValueError, match=r"grid must be a ZonalGaussGrid \(ZonalSphere\(d, n, nodes='gauss'\)\)"):
        ZonalSpectral(ZonalCellGrid(5, 16), spec)
    with pytest.raises(ValueError, match=r"finite volume needs ZonalSphere\(d, n, nodes='cells'\)"):
        mf.solve(mf.SelfAttention(1.0), mf.uniform(mf.ZonalSphere(5, 16)), [0, 1], method="finite_volume")
    with pytest.raises(ValueError, match="cfl must satisfy"):
        ZonalFiniteVolume(ZonalCellGrid(5, 16), spec, cfl=1.5)
    with pytest.raises(ValueError, match=r"cfl_growth must satisfy 0 < cfl_growth <= 1, got 2.0"):
        ZonalFiniteVolume(ZonalCellGrid(5, 16), spec, cfl_growth=2.0)
    with pytest.raises(ValueError, match="rtol must be finite and > 0"):
        ZonalSpectral(ZonalGaussGrid(5, 16), spec, rtol=0.0)


def test_negative_density_is_refused_by_finite_volume_check():
    grid = ZonalCellGrid(3, 8)
    scheme = ZonalFiniteVolume(grid, mf.SelfAttention(1.0).velocity_spec(3))
    with pytest.raises(NegativeDensityError, match="negative density -0.1 beyond round-off"):
        scheme.check(np.array([[1.0, 1, 1, -0.1, 1, 1, 1, 1]]))
    scheme.check(np.array([[1.0, 1, 1, -1e-15, 1, 1, 1, 1]]))  # round-off: below 100 ε max|ρ|


@pytest.mark.parametrize("d", [3, 10])
def test_finite_volume_energy_gain_converges_to_the_spectral_one(d):
    # E(T) - E(0) = ∫_0^T ∫|X|² dμ dt (checked for the spectral scheme above); the FV
    # energy of the cell averages approaches it at second order.
    model = mf.SelfAttention(1.0, normalized=False)
    times = [0.0, 1.0]
    spec = mf.solve(model, mf.density(mf.ZonalSphere(d, 96), _smooth_initial), times, method="spectral", rtol=1e-12)
    gained = float(spec.energy.values[-1] - spec.energy.values[0])
    errors = []
    for n in (50, 100, 200):
        zonal = mf.ZonalSphere(d, n, nodes="cells")
        rho0 = mf.density(zonal, zonal.grid.cell_averages(_smooth_initial))
        ds = mf.solve(model, rho0, times, method="finite_volume")
        errors.append(abs(float(ds.energy.values[-1] - ds.energy.values[0]) - gained) / gained)
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    # measured: relative errors 9.6e-4 (d = 3) and 2.0e-3 (d = 10) at n = 200, orders 1.9–2.0
    assert np.all(orders > 1.8) and errors[-1] < 4e-3, (errors, orders)


@pytest.mark.parametrize("normalized,beta,kappa", [(True, 2.0, 3.0), (False, 0.5, 1.0)])
def test_zonal_solution_matches_the_full_sphere_solver_in_d3(normalized, beta, kappa):
    # Independent discretisations (ducc0 spherical harmonics on S² vs Gegenbauer on the
    # polar angle) of the same equation from a vMF law about e_3: the S² solution must be
    # zonal and equal the zonal one, evaluated through its Gegenbauer series at the
    # S² latitudes (polar = π/2 - lat), to the time-stepping tolerance (rtol = 1e-10).
    model = mf.SelfAttention(beta, normalized=normalized, noise=0.02)
    sphere = mf.Sphere(47)
    times = [0.0, 0.5, 1.0]
    full = mf.solve(model, mf.von_mises(sphere, np.array([0.0, 0.0, 1.0]), kappa), times, method="spectral", rtol=1e-10)
    zonal = mf.ZonalSphere(3, 64)
    reduced = mf.solve(model, mf.Density(zonal, *zonal.von_mises_values(None, kappa)), times, method="spectral", rtol=1e-10)
    assert full.attrs["success"] == 1 and reduced.attrs["success"] == 1
    series = gegenbauer_table(64, 3, np.sin(sphere.lat))  # cos(polar) = sin(lat)
    for k in range(len(times)):
        expected = series @ zonal.coefficients(reduced.density.values[k])
        values = full.density.values[k]
        assert np.max(np.abs(values - expected[:, None])) < 1e-8 * np.max(values)
    np.testing.assert_allclose(full.energy.values, reduced.energy.values, rtol=1e-9)


def test_non_positive_normaliser_rejects_a_trial_step_and_is_under_resolution_at_a_state():
    from solvers import NonPositiveNormaliser

    zonal = mf.ZonalSphere(5, 48)
    y0 = mf.von_mises(zonal, kappa=2.0).values[None]
    scheme = ZonalSpectral(zonal.grid, mf.SelfAttention(4.0).velocity_spec(5))
    transport = scheme._transport
    calls = {"n": 0}

    def failing_inside_stages(coeffs):
        calls["n"] += 1
        if calls["n"] > 1:  # the first call is N(y0) of the accepted state
            raise NonPositiveNormaliser(-1.0)
        return transport(coeffs)

    scheme._transport = failing_inside_stages
    h = 0.5 * scheme.initial_step(y0)
    calls["n"] = 0
    scheme._fsal.clear()
    result = scheme.step(0.0, y0, h)
    # rejected like a non-finite error estimate: retried with the controller's minimum factor 0.2
    assert not result.accepted and result.dt_next == pytest.approx(0.2 * h)
    calls["n"] = 1
    with pytest.raises(UnderResolvedError, match=r"under-resolved — the normaliser B ⋆ ρ became non-positive .*increase n"):
        scheme.rhs(y0)


def test_finite_volume_starts_from_a_cap_indicator():
    # On zonal cells the state is the cell values themselves (from_grid is the identity), so rough
    # non-negative data start as they are: a polar-cap indicator on S⁴ runs with ρ ≥ 0 and its mass
    # to round-off; the resolution rule rightly calls the jump under-resolved.
    zonal = mf.ZonalSphere(5, 64, nodes="cells")
    cap = mf.density(zonal, lambda theta: (theta < 0.8).astype(float))
    with pytest.warns(RuntimeWarning, match="under-resolved from t=0"):
        ds = mf.solve(mf.SelfAttention(2.0, noise=0.05), cap, [0.0, 0.5], method="finite_volume")
    assert float(ds.density.min()) >= 0
    np.testing.assert_allclose(ds.mass.values, 1.0, atol=1e-13)
