"""Zonal grids on S^{d-1}: Gegenbauer transforms, quadrature, Funk–Hecke, vMF, polar marginals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import comb, ive, roots_jacobi

import meanfield as mf
from meanfield.domains._funk_hecke import scaled_funk_hecke
from meanfield.measures import polar_angles, polar_wasserstein
from solvers import ZonalCellGrid, ZonalGaussGrid
from solvers._zonal_grid import gegenbauer_table


@pytest.mark.parametrize("d", [3, 5, 10, 100])
@pytest.mark.parametrize("n", [8, 64, 200])
def test_transform_round_trip_and_weights(d, n):
    grid = ZonalGaussGrid(d, n)
    area = mf.sphere_area(d)
    # Christoffel weights agree with scipy's Gauss–Jacobi weights times |S^{d-2}|
    # (scipy's are computed independently; both are accurate to ~1e-10 at n = 200).
    _, w_ref = roots_jacobi(n, 0.5 * (d - 3), 0.5 * (d - 3))
    np.testing.assert_allclose(np.sort(grid.weights), np.sort(w_ref * mf.sphere_area(d - 1)), rtol=1e-9)
    assert grid.weights.sum() == pytest.approx(area, rel=1e-14)
    # analysis ∘ synthesis = I on degrees < n (Gauss quadrature exact to degree 2n-1);
    # round-off grows ~ n·eps.
    eye = grid.analysis_matrix @ grid.synthesis_matrix
    assert np.max(np.abs(eye - np.eye(n))) < 1e-13
    # synthesis ∘ analysis = I, measured in the L²(σ) norm of the nodes: for large d the
    # polar nodes carry weights ~1e-80 and node values there are invisible to any integral.
    rng = np.random.default_rng(n + d)
    values = rng.standard_normal(n)
    error = grid.synthesis(grid.analysis(values)) - values
    assert np.sqrt(np.sum(grid.weights * error**2) / np.sum(grid.weights * values**2)) < 1e-12
    assert np.all(np.diff(grid.polar) > 0)


@pytest.mark.parametrize("d", [3, 4, 10])
def test_gegenbauer_normalisation_is_dimension_of_harmonics(d):
    # q_l(1)² = dim H_l = C(l+d-1, d-1) - C(l+d-3, d-1) (addition theorem), exact integers.
    ell = np.arange(12)
    q = gegenbauer_table(12, d, np.array([1.0]))[0]
    dim = comb(ell + d - 1, d - 1, exact=False) - comb(ell + d - 3, d - 1, exact=False)
    np.testing.assert_allclose(q**2, dim, rtol=1e-12)


@pytest.mark.parametrize("d", [3, 10])
def test_funk_hecke_convolution_matches_direct_integral(d):
    """(e^{β<·,y>} ⋆ ρ)(x) against the direct integral over S^{d-1}.

    Integrating over the S^{d-2} of azimuths first,
    ∫ e^{β<x,y>} dσ(y | ϑ_y) = e^{β cx cy} (2π)^{(d-1)/2} z^{-ν} I_ν(z) sin^{d-2}ϑ_y dϑ_y,
    z = β sx sy, ν = (d-3)/2; the ϑ_y integral is done by the Gauss rule itself
    (the integrand is entire, so 64 nodes are exact to round-off).
    """
    beta = 3.0
    zonal = mf.ZonalSphere(d, 64)
    rho = mf.Density(zonal, *zonal.von_mises_values(None, 2.0)).values
    cos, sin = np.cos(zonal.polar), np.sin(zonal.polar)
    nu = 0.5 * (d - 3)
    z = beta * np.outer(sin, sin)
    azimuthal = (2 * np.pi) ** (0.5 * (d - 1)) * z ** (-nu) * ive(nu, z) * np.exp(z)
    kernel = np.exp(beta * np.outer(cos, cos)) * azimuthal / mf.sphere_area(d - 1)
    direct = kernel @ (zonal.weights * rho)
    conv = zonal.convolve(rho, lambda ell: scaled_funk_hecke(ell, beta, d) * np.exp(beta))
    np.testing.assert_allclose(conv, direct, rtol=1e-12)


def test_cell_grid_volumes_and_moments():
    for d in (3, 10, 100):
        grid = ZonalCellGrid(d, 64)
        area = mf.sphere_area(d)
        assert grid.volumes.sum() == pytest.approx(area, rel=1e-13)
        np.testing.assert_allclose(grid.volumes, grid.volumes[::-1], rtol=1e-12)
        assert grid.face_areas[0] == 0 and grid.face_areas[-1] == 0
    # cell moments of q_0 are V_i/|S|; of q_1 = sqrt(d) t they integrate to 0 by symmetry
    grid = ZonalCellGrid(10, 33)
    moments = grid.cell_moments(4)
    np.testing.assert_allclose(moments[0].sum(), 1.0, rtol=1e-14)
    assert abs(moments[1].sum()) < 1e-14


@pytest.mark.parametrize("d", [3, 10, 100])
@pytest.mark.parametrize("kappa", [0.0, 1e-3, 1.0, 20.0, 200.0])
def test_von_mises_fisher_is_normalised(d, kappa):
    # n = 160 Gauss nodes resolve e^{κ t} for κ ≤ 200 to round-off (coefficients decay
    # like I_{l+ν}(κ)); cell averages use 8 Gauss–Legendre nodes per cell and exact
    # cell areas, so their mass is 1 to round-off as well.
    rho = mf.von_mises(mf.ZonalSphere(d, 160), None, kappa)
    assert rho.mass == pytest.approx(1.0, abs=1e-12)
    cells = mf.von_mises(mf.ZonalSphere(d, 400, nodes="cells"), "north", kappa)
    assert cells.mass == pytest.approx(1.0, abs=1e-12)
    assert rho.law["name"] == "von_mises" and rho.law["loc"][-1] == 1.0


def test_von_mises_fisher_in_three_dimensions_and_its_cdf():
    # d = 3: ρ = κ e^{κ t}/(4π sinh κ), F(ϑ) = (1 - e^{κ(cos ϑ - 1)}) / (1 - e^{-2κ}).
    kappa = 5.0
    theta = np.linspace(0, np.pi, 101)
    exact = -np.expm1(kappa * (np.cos(theta) - 1)) / -np.expm1(-2 * kappa)
    zonal = mf.ZonalSphere(3, 48)
    rho = mf.Density(zonal, *zonal.von_mises_values(None, kappa))
    exact_values = kappa * np.exp(kappa * np.cos(zonal.polar)) / (4 * np.pi * np.sinh(kappa))
    np.testing.assert_allclose(rho.values, exact_values, rtol=1e-13)
    np.testing.assert_allclose(zonal.polar_cdf(rho.values, theta), exact, atol=1e-13)
    # cells: CDF exact for the piecewise-constant cell averages, O(h²) off the smooth CDF
    errors = []
    for n in (50, 100):
        cells = mf.ZonalSphere(3, n, nodes="cells")
        errors.append(np.max(np.abs(cells.polar_cdf(mf.Density(cells, *cells.von_mises_values(None, kappa)).values, theta) - exact)))
    assert errors[1] < 1e-3 and np.log2(errors[0] / errors[1]) > 1.8


def test_points_weights_coords():
    zonal = mf.ZonalSphere(7, 20)
    assert zonal.kind == "zonal" and zonal.dimension == 7 and zonal.shape == (20,)
    pts = zonal.points
    assert pts.shape == (20, 7)
    np.testing.assert_allclose(np.linalg.norm(pts, axis=-1), 1.0, rtol=1e-15)
    assert np.all(pts[:, 1:-1] == 0)
    np.testing.assert_allclose(np.arccos(pts[:, -1]), zonal.polar, atol=1e-12)
    assert set(zonal.coords) == {"polar"}
    assert zonal.weights.sum() == pytest.approx(mf.sphere_area(7), rel=1e-14)
    cells = mf.ZonalSphere(7, 20, nodes="cells")
    assert cells.weights.sum() == pytest.approx(mf.sphere_area(7), rel=1e-13)
    # mean of vMF: m = A_d(κ) e_d with A_d(κ) = I_{d/2}(κ)/I_{d/2-1}(κ)
    rho = mf.von_mises(mf.ZonalSphere(7, 40), None, 3.0)
    mean = (rho.values * rho.domain.weights) @ rho.domain.moment_points
    np.testing.assert_allclose(mean, np.r_[np.zeros(6), ive(3.5, 3.0) / ive(2.5, 3.0)], atol=1e-14)


def test_cell_convolution_is_the_quadratic_form_of_the_coefficients():
    cells = mf.ZonalSphere(10, 40, nodes="cells")
    rho = mf.Density(cells, *cells.von_mises_values(None, 4.0)).values

    def mult(ell):
        return scaled_funk_hecke(ell, 2.0, 10)

    lhs = 0.5 * np.sum(cells.weights * rho * cells.convolve(rho, mult))
    coeffs = cells.coefficients(rho)
    rhs = 0.5 * cells.area * np.sum(mult(np.arange(40)) * coeffs**2)
    assert lhs == pytest.approx(rhs, rel=1e-12)


def test_polar_marginal_and_particles(rng):
    zonal = mf.ZonalSphere(16, 64)
    rho = mf.Density(zonal, *zonal.von_mises_values(None, 6.0))
    # the polar marginal integrates to 1 (Gauss quadrature in t, weights / |S^{d-2}| sin^{d-2})
    marginal = zonal.polar_marginal(rho.values)
    jacobian = mf.sphere_area(15) * np.sin(zonal.polar) ** 14
    assert np.sum(marginal * zonal.weights / jacobian) == pytest.approx(1.0, abs=1e-12)
    particles = mf.sample(rho, 4000, seed=rng)
    angles, weights = polar_angles(particles)
    assert angles.shape == (4000,) and weights.sum() == pytest.approx(1.0)
    # iid sampling: E W₁ ≤ n^{-1/2} ∫ sqrt(F(1-F)) dϑ; a 3× margin makes failure a > 3σ event
    grid = np.linspace(0, np.pi, 2001)
    cdf = zonal.polar_cdf(rho.values, grid)
    bound = np.sum(np.sqrt(np.clip(cdf * (1 - cdf), 0, None))) * (grid[1] - grid[0]) / np.sqrt(4000)
    w1 = polar_wasserstein(rho, particles)
    assert w1 < 3 * bound
    # against scipy's 1-D W₁ with the density's CDF increments as weights
    from scipy.stats import wasserstein_distance

    fine = np.linspace(0, np.pi, 40001)
    masses = np.clip(np.diff(zonal.polar_cdf(rho.values, fine)), 0, None)  # round-off in the empty tails
    ref = wasserstein_distance(angles, 0.5 * (fine[1:] + fine[:-1]), v_weights=masses)
    assert w1 == pytest.approx(ref, abs=1e-5)  # midpoint discretisation of F: O(π/40000)


def test_bad_input():
    with pytest.raises(ValueError, match="d must be >= 3"):
        mf.ZonalSphere(2, 16)
    with pytest.raises(ValueError, match="nodes must be one of"):
        mf.ZonalSphere(3, 16, nodes="lobatto")
    with pytest.raises(TypeError, match="n must be an integer"):
        mf.ZonalSphere(3, 16.0)
    zonal = mf.ZonalSphere(4, 16)
    with pytest.raises(ValueError, match=r"loc must be the axis e_d"):
        mf.Density(zonal, *zonal.von_mises_values(np.array([1.0, 0, 0, 0]), 1.0))
    with pytest.raises(ValueError, match=r"loc must be the axis e_d"):
        mf.von_mises(zonal, "south", 1.0)
    with pytest.raises(ValueError, match="kappa must be finite and >= 0"):
        mf.Density(zonal, *zonal.von_mises_values(None, -1.0))
    with pytest.raises(ValueError, match="points must have shape"):
        polar_angles(np.ones((5, 3)) / np.sqrt(3), d=4)
    with pytest.raises(ValueError, match="values must end with the grid's shape"):
        zonal.convolve(np.ones(5), lambda ell: ell)
