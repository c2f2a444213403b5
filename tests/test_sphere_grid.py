"""Gauss–Legendre grid on S², spherical-harmonic transforms and the Sphere domain."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import spherical_in

import meanfield as mf
from meanfield.domains._funk_hecke import scaled_funk_hecke
from solvers import SphereGrid
from solvers._sphere_grid import padded_lmax


def random_alm(grid: SphereGrid, rng: np.random.Generator) -> np.ndarray:
    alm = rng.standard_normal(grid.nalm) + 1j * rng.standard_normal(grid.nalm)
    alm[grid.orders == 0] = alm[grid.orders == 0].real  # a real field has real m = 0 coefficients
    return alm


def test_grid_layout_and_quadrature() -> None:
    g = SphereGrid(10)
    assert g.shape == (11, 22)
    assert np.all(np.diff(g.lat) < 0) and np.all(np.abs(g.lat) < np.pi / 2)
    assert g.weights.sum() == pytest.approx(4 * np.pi, rel=1e-14)
    assert np.allclose(np.linalg.norm(g.points, axis=-1), 1.0, atol=1e-15)
    # Gauss–Legendre: exact for z^k with k ≤ 2 lmax + 1 = 21: ∫ z^20 dσ = 4π/21
    z = g.points[..., 2]
    assert np.sum(g.weights * z**20) == pytest.approx(4 * np.pi / 21, rel=1e-13)


def test_round_trip_and_padded_grid(rng: np.random.Generator) -> None:
    g = SphereGrid(12)
    alm = random_alm(g, rng)
    # analysis is the exact inverse of synthesis on band-limited values (round-off only)
    assert np.abs(g.analysis(g.synthesis(alm)) - alm).max() < 1e-13
    pad = g.padded_shape(padded_lmax(g.lmax))
    assert np.abs(g.analysis(g.synthesis(alm, pad)) - alm).max() < 1e-13
    # Parseval: ∫ f² dσ = Σ_l P_l
    f = g.synthesis(alm)
    assert g.power(alm).sum() == pytest.approx(np.sum(f**2 * g.weights), rel=1e-13)


def test_gradient_of_y10_and_y11() -> None:
    g = SphereGrid(6)
    th = g.colatitude[:, None]
    ph = g.lon[None, :]
    alm = np.zeros(g.nalm, complex)
    alm[(g.degrees == 1) & (g.orders == 0)] = 1.0  # Y_10 = √(3/4π) cos ϑ
    grad = g.gradient(alm)
    c = np.sqrt(3 / (4 * np.pi))
    assert np.allclose(grad[0], -c * np.sin(th) * np.ones_like(ph), atol=1e-14)
    assert np.allclose(grad[1], 0, atol=1e-14)
    alm[:] = 0
    alm[(g.degrees == 1) & (g.orders == 1)] = 1.0  # Y_11 + conj = -2√(3/8π) sin ϑ cos φ
    c1 = -2 * np.sqrt(3 / (8 * np.pi))
    assert np.allclose(g.synthesis(alm), c1 * np.sin(th) * np.cos(ph), atol=1e-14)
    grad = g.gradient(alm)
    assert np.allclose(grad[0], c1 * np.cos(th) * np.cos(ph), atol=1e-14)
    assert np.allclose(grad[1], -c1 * np.sin(ph) * np.ones_like(th), atol=1e-14)


def test_divergence_of_gradient_is_laplacian(rng: np.random.Generator) -> None:
    g = SphereGrid(16)
    alm = random_alm(g, rng)
    for shape in (g.shape, g.padded_shape(padded_lmax(g.lmax))):
        div = g.divergence(g.gradient(alm, shape))
        # div ∇ Y_lm = -l(l+1) Y_lm; round-off grows like l² ≤ 272
        assert np.abs(div - g.laplacian_eigenvalues() * alm).max() < 1e-12 * g.lmax**2


def test_divergence_theorem_for_products(rng: np.random.Generator) -> None:
    """∫ g div(f∇h) dσ = -∫ f ∇g·∇h dσ, exact on the padded grid for f, g, h of degree ≤ lmax."""
    g = SphereGrid(10)
    f, gg, h = (random_alm(g, rng) for _ in range(3))
    pad = g.padded_shape(padded_lmax(g.lmax))
    flux = g.synthesis(f, pad) * g.gradient(h, pad)
    div = g.divergence(flux)
    lhs = np.sum(g.parseval_weights * np.real(np.conj(gg) * div))
    fine = g.padded_shape(2 * g.lmax)
    wf = np.repeat(SphereGrid.ring_weights(fine[0])[:, None] / fine[1], fine[1], axis=1)
    rhs = -np.sum(wf * g.synthesis(f, fine) * np.sum(g.gradient(gg, fine) * g.gradient(h, fine), axis=0))
    assert lhs == pytest.approx(rhs, rel=1e-12)


@pytest.mark.parametrize("bad", [1, 2.5, True])
def test_grid_rejects_bad_lmax(bad) -> None:
    with pytest.raises((TypeError, ValueError), match="lmax"):
        SphereGrid(bad)


# ---------------------------------------------------------------------------- the Sphere domain
def test_sphere_domain_protocol() -> None:
    s = mf.Sphere(15)
    assert s.kind == "sphere" and s.dimension == 3 and s.shape == (16, 32)
    assert s.points.shape == (16, 32, 3) and s.weights.shape == (16, 32)
    assert s.weights.sum() == pytest.approx(4 * np.pi, rel=1e-14) and s.area == pytest.approx(4 * np.pi)
    assert set(s.coords) == {"lat", "lon"}
    lat, lon = np.meshgrid(s.lat, s.lon, indexing="ij")
    assert np.allclose(s.points[..., 2], np.sin(lat)) and np.allclose(s.points[..., 1], np.cos(lat) * np.sin(lon))


def test_convolve_is_funk_hecke() -> None:
    """∫ e^{β<x,y>} Y_l(y) dσ(y) = c_l(β) Y_l(x), c_l = 4π i_l(β) (d = 3)."""
    s = mf.Sphere(12)
    beta = 3.0
    mult = lambda ell: scaled_funk_hecke(ell, beta, 3) * np.exp(beta)  # noqa: E731
    x = s.points
    f = 0.3 + x[..., 0] * x[..., 1] + x[..., 2] ** 3  # degrees 0, 2, 3, 1
    y3 = x[..., 2] ** 3 - 0.6 * x[..., 2]  # degree-3 part of z³ (z³ = (z³ - 3z/5) + 3z/5)
    xy = x[..., 0] * x[..., 1]
    expected = (
        4 * np.pi * spherical_in(0, beta) * 0.3
        + 4 * np.pi * spherical_in(2, beta) * xy
        + 4 * np.pi * spherical_in(3, beta) * y3
        + 4 * np.pi * spherical_in(1, beta) * 0.6 * x[..., 2]
    )
    # exact for band-limited values: round-off only
    assert np.allclose(s.convolve(f, mult), expected, rtol=1e-12, atol=1e-12)


def test_von_mises_fisher_moments_and_energy() -> None:
    s = mf.Sphere(31)
    kappa = 4.0
    loc = np.array([1.0, 2.0, 2.0]) / 3
    rho = mf.von_mises(s, loc, kappa)
    assert rho.law["name"] == "von_mises"
    # coefficients of a vMF with κ = 4 decay like 4^l/(2l+1)!!: at l = 31 below 1e-20 ⇒ quadrature exact to round-off
    assert rho.mass == pytest.approx(1.0, abs=1e-13)
    mean_length = 1 / np.tanh(kappa) - 1 / kappa
    assert np.allclose(rho.mean(), mean_length * loc, atol=1e-13)
    # E_0 = |m|²/2
    assert mf.energy(mf.SelfAttention(0.0), rho) == pytest.approx(0.5 * mean_length**2, rel=1e-12)
    # USA: E_β = (1/2β) ∬ e^{β<x,y>} ρρ = (1/2β) Σ_l c_l(β) P_l with vMF coefficients
    beta = 2.0
    alm = s.grid.analysis(rho.values)
    c = 4 * np.pi * spherical_in(np.arange(32), beta)
    exact = np.sum(c * s.grid.power(alm)) / (2 * beta)
    assert mf.energy(mf.SelfAttention(beta, normalized=False), rho) == pytest.approx(exact, rel=1e-12)


def test_von_mises_large_kappa_is_finite() -> None:
    s = mf.Sphere(8)
    rho = mf.Density(s, *s.von_mises_values([0.0, 0.0, 1.0], 800.0))  # node values (mf.von_mises refuses lmax = 8 for κ = 800)
    # ρ = κ e^{κ(cos ϑ - 1)}/(2π(1 - e^{-2κ})): no overflow although e^{κ} = e^{800} is not a float
    expected = 800 / (2 * np.pi) * np.exp(800 * (np.cos(s.grid.colatitude[0]) - 1))
    assert np.all(np.isfinite(rho.values)) and rho.values.max() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("loc", "match"),
    [([1.0, 0.0], "shape \\(3,\\)"), ([1.0, 1.0, 0.0], "unit vector"), ([np.nan, 0, 1], "finite unit vector")],
)
def test_von_mises_rejects_bad_loc(loc, match) -> None:
    with pytest.raises(ValueError, match=match):
        mf.von_mises(mf.Sphere(4), loc, 1.0)


def test_von_mises_rejects_negative_kappa() -> None:
    with pytest.raises(ValueError, match="kappa must be finite and >= 0"):
        mf.Density(mf.Sphere(4), *mf.Sphere(4).von_mises_values([0, 0, 1], -1.0))


def test_density_from_callable_of_lat_lon() -> None:
    s = mf.Sphere(8)
    rho = mf.density(s, lambda lat, lon: 1 + 0.5 * np.sin(lat) * np.cos(lon))
    assert rho.values.shape == s.shape and rho.mass == pytest.approx(1.0, abs=1e-14)


def test_degree_norms_are_the_rotation_invariant_l2_norms_of_the_degrees(rng: np.random.Generator) -> None:
    # ‖f_l‖² = |a_l0|² + 2 Σ_{m>0} |a_lm|² = ∫ f_l² dσ (orthonormal Y_lm, a real field stores m ≥ 0):
    # each degree's norm is its Gauss–Legendre L² norm, the squares sum to ∫ f² dσ, and a rotation
    # (which mixes the orders of a degree) leaves every norm unchanged: P_2(<x, e>) for the poles
    # e = e_3 (order 0 only) and e = e_1 (orders 0 and 2) has ‖f_2‖² = 4π/5.
    grid = SphereGrid(10)
    alm = random_alm(grid, rng)
    norms = grid.degree_norms(alm)
    weights = mf.Sphere(10).weights
    for ell in (0, 3, 10):
        part = grid.synthesis(np.where(grid.degrees == ell, alm, 0))
        assert norms[ell] == pytest.approx(np.sqrt(np.sum(weights * part**2)), rel=1e-12)
    assert np.sum(norms**2) == pytest.approx(np.sum(weights * grid.synthesis(alm) ** 2), rel=1e-12)
    np.testing.assert_allclose(grid.degree_norms(np.stack([alm, 2 * alm])), [norms, 2 * norms], rtol=1e-15)
    points = mf.Sphere(10).points
    for axis in (2, 0):
        legendre = 1.5 * points[..., axis] ** 2 - 0.5
        expected = np.zeros(11)
        expected[2] = np.sqrt(4 * np.pi / 5)
        np.testing.assert_allclose(grid.degree_norms(grid.analysis(legendre)), expected, atol=1e-13)
