"""Zonal grids and schemes in high dimension: the limit d ≤ 438, weights from logarithms, the uniform state.

Densities on a ZonalSphere are taken w.r.t. the area of S^{d-1}, so the uniform one is 1/|S^{d-1}|
(6.5e219 at d = 340); |S^{d-1}| leaves the normal doubles at d = 439, and larger d are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import betaln

import meanfield as mf
from meanfield.domains._funk_hecke import scaled_funk_hecke
from solvers import ZonalCellGrid, ZonalGaussGrid, ZonalSpectral, evolve
from solvers._zonal_grid import MAX_DIMENSION, gegenbauer_table, log_sphere_area

EPS = 1e-6  # relative size of the perturbation of the growth-rate test: the nonlinear terms change the rate by O(EPS)


def _l1_change(domain: mf.ZonalSphere, values: np.ndarray) -> np.ndarray:
    """Σ_j w_j |ρ_j(t) - ρ_j(0)| per output: the total-variation distance moved, mass-relative."""
    return np.abs(values - values[0]) @ domain.weights


def test_the_largest_dimension_is_the_last_with_a_normal_area():
    tiny = np.finfo(float).tiny
    assert MAX_DIMENSION == 438
    assert mf.sphere_area(MAX_DIMENSION) >= tiny > mf.sphere_area(MAX_DIMENSION + 1)
    assert np.isfinite(1.0 / mf.sphere_area(MAX_DIMENSION))
    # the logarithm stays finite far beyond: log|S^{d-1}| = log 2 + (d/2) log π - log Γ(d/2)
    assert log_sphere_area(10_000) == pytest.approx(-31858.283739257793, rel=1e-13)


@pytest.mark.parametrize("d", [439, 600, 1000, 5000, 10_000])
def test_larger_dimensions_are_refused_naming_d_and_the_reason(d):
    # today's code divided by |S^{d-1}| = 0.0 from d = 456 (ZeroDivisionError in mf.uniform)
    message = rf"d must be <= 438 for a zonal grid on S\^\(d-1\), got d={d}: .*uniform density 1/\|S\^\(d-1\)\| overflows"
    for nodes in ("gauss", "cells"):
        with pytest.raises(ValueError, match=message):
            mf.ZonalSphere(d, 32, nodes=nodes)
    for grid in (ZonalGaussGrid, ZonalCellGrid):
        with pytest.raises(ValueError, match=message):
            grid(d, 32)


@pytest.mark.parametrize("d", [340, 400, 438])
def test_gauss_quadrature_of_the_polar_weight_matches_the_beta_normalisation(d):
    grid = ZonalGaussGrid(d, 32)
    # Σ_j w_j = |S^{d-1}| = |S^{d-2}| ∫_0^π sin^{d-2}ϑ dϑ = |S^{d-2}| B(1/2, (d-1)/2), compared in logarithms;
    # log|S^{d-1}| ≈ -506 (d = 340) to -708 (d = 438) comes from log Γ of ~200 and is known to ≈ |log| ε
    # absolute (measured 1.4e-13 at d = 340), hence the tolerance 1e-15 |log|
    log_total = np.log(grid.weights.sum())
    assert log_total - log_sphere_area(d - 1) == pytest.approx(betaln(0.5, 0.5 * (d - 1)), abs=1e-15 * abs(log_total))
    # the weights of σ̄ never pass through |S^{d-1}|: they sum to 1 and give the moments exactly,
    # ∫ t² dσ̄ = 1/d and ∫ t⁴ dσ̄ = 3/(d(d+2)) (degree < 2n)
    w = grid.relative_weights
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert w @ grid.t**2 == pytest.approx(1.0 / d, rel=1e-13)
    assert w @ grid.t**4 == pytest.approx(3.0 / (d * (d + 2)), rel=1e-13)
    np.testing.assert_allclose(grid.analysis_matrix @ grid.synthesis_matrix, np.eye(32), atol=1e-13)


@pytest.mark.parametrize(("d", "n"), [(250, 13), (300, 7), (370, 4)])
def test_cell_areas_and_moments_in_high_dimension(d, n):
    grid = ZonalCellGrid(d, n)  # the largest n with a normal polar cell area at d = 250, 300
    assert grid.volumes.sum() == pytest.approx(mf.sphere_area(d), rel=1e-14)
    assert grid.relative_weights.sum() == pytest.approx(1.0, abs=1e-14)  # differences of betainc, a few ε
    moments = grid.cell_moments(n)
    # closed form: the l ≥ 1 rows telescope to 0 (no spurious velocity of the uniform state) ...
    np.testing.assert_allclose(moments[1:].sum(axis=1), 0.0, atol=1e-16)
    # ... and agree with a Gauss–Legendre rule fine enough for the bump sin^{d-2}ϑ (the former 8 points per
    # cell left Σ_i M[l, i] = 6e-2 at d = 300, n = 7); the reference sums 4d terms of size ≤ 1 per cell, so
    # its own round-off is ≈ 1e-13 (d = 370, n = 4: M[2, 1] = 1.2e-13 for an exact value of ≈ 0)
    theta, wq = grid._subcells(4 * d)
    q = gegenbauer_table(n, d, np.cos(theta))
    reference = (q * wq[:, None]).reshape(n, 4 * d, n).sum(axis=1).T
    np.testing.assert_allclose(moments, reference, atol=3e-13)
    # ⟨cos ϑ⟩_i by the cell_averages rule (8 + ⌈d/2⌉ nodes per cell) equals its closed form
    # M[1, i]/(√d V_i/|S^{d-1}|); measured 1.3e-12 in the polar cells at d = 300, n = 7 (weight ≈ ϑ^298)
    exact = moments[1] / (np.sqrt(d) * grid.relative_weights)
    np.testing.assert_allclose(grid.cell_averages(np.cos), exact, rtol=1e-11, atol=1e-15)


def test_too_many_cells_in_high_dimension_are_refused_naming_the_largest_n():
    with pytest.raises(ValueError, match=r"ZonalCellGrid\(d=300, n=8\) have area .* below the smallest normal "
                                         r"double .*; use n <= 7 cells, nodes='gauss' or a smaller d"):
        mf.ZonalSphere(300, 8, nodes="cells")
    with pytest.raises(ValueError, match=r"no cell grid \(n >= 4\) is representable at d=400; use nodes='gauss'"):
        mf.ZonalSphere(400, 4, nodes="cells")


@pytest.mark.parametrize(("d", "n", "nodes"), [(340, 64, "gauss"), (400, 64, "gauss"), (438, 32, "gauss"),
                                               (250, 13, "cells"), (300, 7, "cells")])
def test_uniform_density_is_normalised_and_stationary(d, n, nodes):
    # Today's code: from d ≈ 260 the squared coefficient norm of the spectral error estimate overflowed
    # (ρ_l ~ 1/|S^{d-1}|), every step was rejected and the run stopped at t = 0 on the step floor (d = 340);
    # the finite volumes' 8-point cell moments moved the uniform state by 3e-3 (d = 300, n = 7).
    zonal = mf.ZonalSphere(d, n, nodes=nodes)
    rho = mf.uniform(zonal)
    assert rho.mass == pytest.approx(1.0, abs=1e-13)
    method = "spectral" if nodes == "gauss" else "finite_volume"
    with np.errstate(under="ignore"):
        ds = mf.solve(mf.SelfAttention(1.0), rho, [0.0, 0.5, 1.0], method=method)
    assert ds.attrs["success"] == 1, ds.attrs["message"]
    np.testing.assert_allclose(ds.mass.values, 1.0, atol=1e-13)
    values = ds.density.values
    # The motion is round-off: in total variation for every scheme. The spectral node values at the polar nodes
    # carry the coefficients' round-off as ε(w_j/|S^{d-1}|)^{-1/2} (1e4 relative at d = 340, n = 64) on nodes
    # holding < 1e-40 of the mass, so node values are compared pointwise on the cells only.
    assert np.max(_l1_change(zonal, values)) < 1e-13
    coefficients = zonal.coefficients(values)
    np.testing.assert_allclose(coefficients[:, 1:], 0.0, atol=1e-14 * coefficients[0, 0])
    if nodes == "cells":
        assert np.max(np.abs(values / values[0] - 1.0)) < 1e-12


@pytest.mark.parametrize(("d", "n"), [(340, 64), (438, 32)])
def test_velocity_of_the_uniform_density_vanishes(d, n):
    grid = ZonalGaussGrid(d, n)
    for normalized in (True, False):
        scheme = ZonalSpectral(grid, mf.SelfAttention(1.0, normalized=normalized).velocity_spec(d))
        field = scheme.velocity_field(np.full((1, n), 1.0 / grid.area))
        assert np.all(np.isfinite(field)) and np.max(np.abs(field)) < 1e-14


@pytest.mark.parametrize("d", [340, 438])
@pytest.mark.parametrize("normalized", [True, False])
def test_spectral_growth_rates_in_high_dimension(d, normalized):
    # The exact rates λ_l = l(l+d-2) c_l/(β c_0) (SA) or c_l/(β|S^{d-1}|) (USA) are met to the O(EPS)
    # nonlinear contamination (measured ≤ 5e-6 relative): the velocity and the scheme are right, not only finite.
    model = mf.SelfAttention(1.0, normalized=normalized)
    grid = ZonalGaussGrid(d, 24)
    for ell in (1, 2):
        coeffs = np.zeros(grid.n)
        coeffs[0] = 1.0 / grid.area
        coeffs[ell] = EPS / grid.area
        scheme = ZonalSpectral(grid, model.velocity_spec(d), rtol=1e-12)
        run = evolve(scheme, grid.synthesis(coeffs)[None], [0.0, 0.5], raise_on_error=True)
        rate = np.log(grid.analysis(run.y[-1, 0])[ell] / coeffs[ell]) / 0.5
        assert rate == pytest.approx(float(model.growth_rate(ell, d)), rel=1e-5)


@pytest.mark.parametrize(("d", "n", "make"), [
    (400, 64, lambda z: mf.von_mises(z, kappa=10.0)),
    (438, 32, lambda z: mf.perturbed_uniform(z, amplitude=0.5, modes=4, seed=3)),
])
def test_a_non_uniform_start_in_high_dimension_runs_and_conserves_mass(d, n, make):
    zonal = mf.ZonalSphere(d, n)
    rho = make(zonal)
    # the von Mises normaliser log(e^{-κ} c_0(κ)) ≈ -640 carries ≈ |log| ε absolute (measured 2e-13 at d = 400)
    assert rho.mass == pytest.approx(1.0, abs=1e-12)
    with np.errstate(under="ignore"):
        ds = mf.solve(mf.SelfAttention(1.0, noise=0.01), rho, [0.0, 0.5, 1.0], method="spectral")
    assert ds.attrs["success"] == 1, ds.attrs["message"]
    np.testing.assert_allclose(ds.mass.values, 1.0, atol=1e-13)
    assert np.all(np.isfinite(ds.energy.values))
    assert np.max(_l1_change(zonal, ds.density.values)) > 1e-6  # it moved


def test_node_values_beyond_the_largest_double_are_reported_naming_d_and_n():
    # d = 438, n = 64: the polar weights w_j/|S^{d-1}| = 2e-43 turn the coefficient round-off of ρ ~ 3e307 into
    # node values beyond 1.8e308 (today: "step size fell below the smallest step" at t = 0).
    with np.errstate(under="ignore"):
        ds = mf.solve(mf.SelfAttention(1.0), mf.uniform(mf.ZonalSphere(438, 64)), [0.0, 1.0])
    assert ds.attrs["success"] == 0
    assert ds.attrs["message"].startswith("spectral: node values overflow on the zonal S^437 with n=64 nodes")
    assert "at d=438 that exceeds the largest double; use fewer nodes (n=32) or a smaller d" in ds.attrs["message"]


def test_von_mises_normalisation_in_high_dimension():
    # e^{-κ} c_0(κ) is formed in logarithms: (2π)^{d/2} κ^{1-d/2} = 1e-326 at d = 340, κ = 60 underflowed to 0
    # (divide by zero in today's von_mises)
    assert scaled_funk_hecke(0, 60.0, 340) > 0
    assert mf.von_mises(mf.ZonalSphere(340, 96), kappa=60.0).mass == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match=r"von_mises: kappa = 100 on ZonalSphere\(d=438, n=32, nodes='gauss'\): "
                                         r"the density exceeds the largest double near the pole"):
        mf.von_mises(mf.ZonalSphere(438, 32), kappa=100.0)
