"""compare(): synthetic datasets with known answers, a real PDE/particle pair, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import meanfield as mf

TWO_PI = 2 * np.pi


def pde_dataset(circle: mf.Circle, values: np.ndarray, times: np.ndarray, **extra) -> xr.Dataset:
    data = {"density": (("time", "theta"), values)}
    data.update({k: ("time", v) for k, v in extra.items()})
    return xr.Dataset(data, coords={"time": times, "theta": circle.theta}, attrs={"method": "synthetic"})


def particle_dataset(positions: np.ndarray, times: np.ndarray, **extra) -> xr.Dataset:
    dims = ("system", "time", "particle") if positions.ndim == 3 else ("time", "particle")
    data = {"positions": (dims, positions)}
    data.update({k: (dims[:-1], v) for k, v in extra.items()})
    return xr.Dataset(data, coords={"time": times}, attrs={"domain": "circle", "method": "synthetic"})


def test_point_masses_give_geodesic_distance_and_moment_gaps():
    # density: uniform on a grid of 8 nodes = atoms at the nodes; particles:
    # the same nodes rotated by s(t) (< half a spacing), so W1 = s(t) exactly
    circle = mf.Circle(8)
    times = np.array([0.0, 1.0, 2.0])
    shift = np.array([0.0, 0.1, 0.2])
    values = np.full((3, 8), 1 / TWO_PI)
    positions = circle.theta[None, None, :] + shift[None, :, None] + np.zeros((2, 1, 1))
    positions[1] += TWO_PI / 8  # second system: one node further, the same measure
    pde = pde_dataset(circle, values, times, energy=np.ones(3), order_parameter=np.zeros(3))
    particles = particle_dataset(positions, times, energy=np.full((2, 3), 1.5), order_parameter=np.full((2, 3), 0.25))
    out = mf.compare(pde, particles, p=1, density="atoms")
    np.testing.assert_allclose(out.wasserstein.values, np.stack([shift, shift]), atol=1e-14)
    # as cells the density is the uniform measure: W1 to 8 equispaced atoms is π/16 for every rotation
    cells = mf.compare(pde, particles, p=1)
    np.testing.assert_allclose(cells.wasserstein.values, np.pi / 16, atol=1e-14)
    assert (cells.attrs["wasserstein_method"], cells.attrs["wasserstein_algorithm"]) == ("exact", "circle-cdf-cells")
    np.testing.assert_allclose(out.wasserstein_std.values, 0.0, atol=1e-14)
    np.testing.assert_allclose(out.energy_gap_mean.values, 0.5)
    np.testing.assert_allclose(out.order_parameter_gap_mean.values, 0.25)
    # Fourier modes k = 1..3 of 8 equally spaced atoms vanish for both measures
    np.testing.assert_allclose(out.moment_gap.values, 0.0, atol=1e-14)
    assert out.attrs["wasserstein_algorithm"] == "circle-cdf" and out.attrs["n_systems"] == 2
    assert out.wasserstein.dims == ("system", "time") and out.moment_gap.dims == ("system", "time", "mode")


def test_single_system_and_first_moment_gap():
    circle = mf.Circle(64)
    times = np.array([0.0, 0.5])
    rho = mf.von_mises(circle, 0.0, 2.0)
    values = np.stack([rho.values, rho.values])
    x = np.array([[0.0], [np.pi / 2]])  # a point mass at angle 0, then at π/2
    out = mf.compare(pde_dataset(circle, values, times), particle_dataset(x, times), p=2)
    m1 = np.sum(rho.values * circle.weights * np.exp(1j * circle.theta))
    np.testing.assert_allclose(out.moment_gap.values[0, :, 0], np.abs(np.exp(1j * np.array([0, np.pi / 2])) - m1), atol=1e-13)
    expected = [mf.wasserstein(rho, x[k], 2, density="cells") for k in range(2)]
    np.testing.assert_allclose(out.wasserstein.values[0], expected, atol=1e-14)
    assert np.all(np.isnan(out.energy_gap.values))  # no energy in either input
    assert out.sizes["system"] == 1


def test_real_solve_and_simulate_agree_to_sampling_error():
    # SA, β = 2: 400 quantile particles; W1 stays at the sampling/grid level
    circle = mf.Circle(128)
    rho = mf.von_mises(circle, 0.0, 1.0)
    model = mf.SelfAttention(2.0)
    t = np.linspace(0.0, 1.0, 3)
    pde = mf.solve(model, rho, t, method="spectral")
    x0 = mf.sample(rho, 400, method="quantile").points
    particles = mf.simulate(model, x0, t, domain="circle")
    out = mf.compare(pde, particles)
    w = out.wasserstein.values[0]
    # initial: quantile atoms x_i = F⁻¹((i+½)/n) against the cell measure: W₁ = Σ_i ∫ |x - x_i| dμ
    # ≈ Σ_i (1/n)(1/(4n ρ(x_i))) = |S¹|/(4n) = π/(2n) to leading order for any smooth density
    # (measured 0.00392698 against π/800 = 0.00392699); not the node-atom floor h/4 ≈ 0.012
    assert w[0] == pytest.approx(np.pi / 800, rel=1e-3)
    # particles and PDE move together: W₁ changes by less than 1 % over t ∈ [0, 1] (measured 0.015 %)
    assert np.all(np.abs(w / w[0] - 1) < 1e-2)
    # energies agree to the quadrature of 400 atoms (measured 5e-11)
    assert np.all(np.abs(out.energy_gap.values) < 1e-9)


def test_bad_input():
    circle = mf.Circle(16)
    times = np.array([0.0, 1.0])
    pde = pde_dataset(circle, np.full((2, 16), 1 / TWO_PI), times)
    x = np.zeros((2, 5))
    with pytest.raises(ValueError, match=r"pde and particles must have the same output times"):
        mf.compare(pde, particle_dataset(x, np.array([0.0, 2.0])))
    with pytest.raises(ValueError, match=r"pde and particles must have the same output times"):
        mf.compare(pde, particle_dataset(np.zeros((3, 5)), np.array([0.0, 1.0, 2.0])))
    with pytest.raises(ValueError, match=r"p must be finite and >= 1, got 0"):
        mf.compare(pde, particle_dataset(x, times), p=0)
    with pytest.raises(TypeError, match="pde must be an xarray.Dataset with a 'density' variable"):
        mf.compare(particle_dataset(x, times), particle_dataset(x, times))
    sphere_particles = xr.Dataset(
        {"positions": (("time", "particle", "component"), np.tile([0.0, 0.0, 1.0], (2, 5, 1)))},
        coords={"time": times},
        attrs={"domain": "sphere"},
    )
    with pytest.raises(ValueError, match="same domain, got pde on 'circle' and particles on 'sphere'"):
        mf.compare(pde, sphere_particles)
    bad = pde_dataset(circle, np.full((2, 16), 1 / TWO_PI) - 0.5 * (np.arange(16) == 3), times)
    with pytest.raises(ValueError, match=r"pde: density at t = 0 has negative values down to -0.34"):
        mf.compare(bad, particle_dataset(x, times))
    shifted = pde.assign_coords(theta=pde.theta + 0.01)
    with pytest.raises(ValueError, match=r"theta must be the uniform grid"):
        mf.compare(shifted, particle_dataset(x, times))


def test_sphere_pde_and_particles_agree_to_sampling_error():
    # S², SA β = 4 from a smooth von Mises–Fisher start (κ = 2): by t = 1 the
    # order parameter grows from 0.54 to 0.72, far more than the sampling error
    # of 2 × 600 particles. The particles stay as close to the PDE solution as
    # the initial samples were (measured ratio 1.08; allow 1.15), while the PDE
    # of a different model (β = 2) is clearly further away (measured 1.47; require
    # > 1.3), so the check has power. Exact EMD against the Gauss–Legendre nodes.
    sphere = mf.Sphere(31)
    rho = mf.von_mises(sphere, np.array([0.0, 0.0, 1.0]), 2.0)
    model = mf.SelfAttention(4.0)
    t = np.array([0.0, 1.0])
    x0 = np.stack([mf.sample(rho, 600, seed=k).points for k in range(2)])
    particles = mf.simulate(model, x0, t)
    out = mf.compare(mf.solve(model, rho, t, method="spectral"), particles)
    assert out.attrs["wasserstein_algorithm"] == "emd" and out.attrs["wasserstein_exact"] == 1
    w0, w1 = out.wasserstein_mean.values
    assert 0 < w1 < 1.15 * w0
    other = mf.solve(mf.SelfAttention(2.0), rho, t, method="spectral")
    with pytest.raises(ValueError, match=r"runs of the same model, got different beta: pde 2.0, particles 4.0"):
        mf.compare(other, particles)
    # the β = 2 density relabelled as β = 4 only to measure its distance to the particles
    wrong = mf.compare(other.assign_attrs(beta=4.0), particles)
    assert wrong.wasserstein_mean.values[1] > 1.3 * w0
    assert out.moment_gap.sizes["mode"] == 2
