"""The aggregation–diffusion model Interaction against exact facts: the built-in models are instances of it
(to round-off, on every scheme and in the particle engine), its linear rates, its energy dissipation, its
Gibbs states, and the repulsive Riesz flow to the uniform state."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import eval_legendre

import meanfield as mf
from solvers import gegenbauer_table


BETA = 3.0
USA_KERNEL = -mf.Kernel.exponential(BETA) / BETA


def model_pairs():
    """(built-in model, the same dynamics as an Interaction)."""
    return [
        (mf.SelfAttention(BETA, normalized=False), mf.Interaction(USA_KERNEL)),
        (mf.SelfAttention(BETA), mf.Interaction(USA_KERNEL, normalized=True)),
        (mf.RepulsiveSelfAttention(BETA, normalized=False), mf.Interaction(-USA_KERNEL)),
        (mf.SelfAttention(BETA, normalized=False, noise=0.05), mf.Interaction(USA_KERNEL, noise=0.05)),
    ]


def relative(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(np.asarray(a))))


@pytest.mark.parametrize("builtin, general", model_pairs(), ids=lambda m: m.name)
@pytest.mark.parametrize("domain_name, method", [("circle", "spectral"), ("circle", "finite_volume"),
                                                 ("sphere", "spectral"), ("sphere", "finite_volume"),
                                                 ("zonal", "spectral"), ("zonal", "finite_volume")])
def test_self_attention_is_an_interaction_on_every_scheme(builtin, general, domain_name, method):
    if domain_name == "circle":
        rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.1 * np.cos(3 * th) + 0.05 * np.sin(2 * th))
    elif domain_name == "sphere":
        rho0 = mf.perturbed_uniform(mf.Sphere(23), amplitude=0.05, seed=1)
    else:
        rho0 = mf.von_mises(mf.ZonalSphere(5, 48, nodes="gauss" if method == "spectral" else "cells"), kappa=1.0)
    t = np.linspace(0, 0.3, 3)
    a = mf.solve(builtin, rho0, t, method=method)
    b = mf.solve(general, rho0, t, method=method)
    assert a.attrs["success"] and b.attrs["success"]
    assert a.attrs["n_steps"] == b.attrs["n_steps"]
    # the same multipliers up to the order of a product: round-off, accumulated over the steps
    assert relative(a.density, b.density) < 1e-13
    sign = -1.0 if builtin.name in ("SA", "USA") else 1.0  # E = ½∬W dρ dρ = ∓E_β
    assert relative(a.energy, sign * b.energy) < 1e-13
    if builtin.has_free_energy:
        assert relative(a.free_energy, b.free_energy) < 1e-13


@pytest.mark.parametrize("builtin, general", model_pairs()[:3], ids=lambda m: m.name)
@pytest.mark.parametrize("where", ["circle", "sphere"])
def test_self_attention_particles_are_interaction_particles(builtin, general, where, rng):
    if where == "circle":
        x0 = rng.uniform(0, 2 * np.pi, 300)
    else:
        x0 = rng.standard_normal((200, 3))
        x0 /= np.linalg.norm(x0, axis=1, keepdims=True)
    t = np.linspace(0, 0.5, 3)
    a = mf.simulate(builtin, x0, t, path="direct", method="dopri5")
    b = mf.simulate(general, x0, t, path="direct", method="dopri5")
    assert a.attrs["n_steps"] == b.attrs["n_steps"]
    assert float(np.max(np.abs(a.positions - b.positions))) < 1e-13
    sign = -1.0 if builtin.name in ("SA", "USA") else 1.0
    assert relative(a.energy, sign * b.energy) < 1e-13


@pytest.mark.parametrize("kernel", [mf.Kernel.fourier([0.0, -0.75]), mf.Kernel.legendre([0.0, -1.5], 2), "-1.5*t"],
                         ids=["fourier", "legendre", "formula"])
def test_identical_kuramoto_oscillators_are_the_kernel_minus_k_t(kernel, rng):
    coupling = 1.5
    model = mf.Interaction(kernel)
    x0 = rng.uniform(-1, 1, 400)
    t = np.linspace(0, 2, 5)
    kuramoto = mf.simulate(mf.Kuramoto(coupling), x0, t)
    general = mf.simulate(model, x0, t)
    assert general.attrs["method"] == "moebius"  # one harmonic: the exact Möbius flow of both
    # the same Riccati coefficient (a formula's Chebyshev coefficients are interpolated: to round-off)
    assert float(np.max(np.abs(general.positions - kuramoto.positions))) < 1e-14
    # E = ½∬(-K<x, y>) = -K|m|²/2, the negative of Kuramoto's energy K|m|²/2
    np.testing.assert_allclose(general.energy, -kuramoto.energy, rtol=1e-15, atol=1e-16)
    rho0 = mf.density(mf.Circle(64), lambda th: 1 + 0.2 * np.cos(th) + 0.1 * np.sin(2 * th))
    for method in ("spectral", "finite_volume"):
        a = mf.solve(mf.Kuramoto(coupling), rho0, t, method=method)
        b = mf.solve(model, rho0, t, method=method)
        assert relative(a.density, b.density) < 1e-14 and a.attrs["n_steps"] == b.attrs["n_steps"]


# ---------------------------------------------------------------------- linear rates
KERNELS = {
    "exponential": "-exp(2*t)/2",                       # USA, β = 2, from a formula (quadrature)
    "riesz": mf.Kernel.riesz(1.0),                      # |x - y|: attractive, algebraically decaying multipliers
    "morse": mf.Kernel.morse(1.0, 1.0, 0.5, 0.3),       # smooth in |x - y|, not in t
}


def perturbed(domain, degree: int, eps: float):
    """(1 + ε Y)/|S^{d-1}| with Y of one degree (cos kθ, P_l(z), q_l(cos ϑ)), and a function giving Y's coefficient."""
    if isinstance(domain, mf.Circle):
        mode = np.cos(degree * domain.theta)
        return mf.density(domain, (1 + eps * mode) / domain.area), lambda v: np.fft.rfft(v)[degree].real
    if isinstance(domain, mf.Sphere):
        mode = eval_legendre(degree, domain.points[..., 2])
        grid = domain.grid
        index = np.nonzero((grid.degrees == degree) & (grid.orders == 0))[0][0]
        return mf.density(domain, (1 + eps * mode) / domain.area), lambda v: grid.analysis(v)[index].real
    mode = gegenbauer_table(degree + 1, domain.d, np.cos(domain.polar))[:, degree]
    return mf.density(domain, (1 + eps * mode) / domain.area), lambda v: domain.coefficients(v)[degree]


@pytest.mark.parametrize("kernel", KERNELS.values(), ids=KERNELS.keys())
@pytest.mark.parametrize("domain, degree", [(mf.Circle(64), 3), (mf.Sphere(15), 3), (mf.ZonalSphere(5, 24), 3)],
                         ids=["circle", "sphere", "zonal_d5"])
@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_linear_rates_from_the_kernel_multipliers(kernel, domain, degree, noise):
    model = mf.Interaction(kernel, noise=noise)
    rate = float(model.growth_rate(degree, domain.dimension))
    eps = 1e-5
    rho0, coefficient = perturbed(domain, degree, eps)
    horizon = min(1.0, 1.0 / abs(rate))
    # atol scaled to the perturbation; tail_tol lifted: the Riesz kernel is truncated at the band limit, which a
    # single mode does not feel (its multiplier is exact)
    ds = mf.solve(model, rho0, [0.0, horizon], method="spectral", rtol=1e-12, atol=1e-12 * eps / domain.area,
                  tail_tol=1.0)
    assert ds.attrs["success"]
    measured = np.log(coefficient(ds.density.values[-1]) / coefficient(ds.density.values[0])) / horizon
    # an odd degree has no quadratic self-interaction: the nonlinear error is O(ε²), the time error O(rtol/ε)
    assert abs(measured - rate) < 1e-6 * abs(rate)


def test_growth_rates_reduce_to_paper_2s_rates():
    for d in (2, 3, 5):
        ell = np.arange(12)
        np.testing.assert_allclose(mf.Interaction(USA_KERNEL, noise=0.1).growth_rate(ell, d),
                                   mf.SelfAttention(BETA, normalized=False, noise=0.1).growth_rate(ell, d),
                                   rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(mf.Interaction(USA_KERNEL, normalized=True).growth_rate(ell, d),
                                   mf.SelfAttention(BETA).growth_rate(ell, d), rtol=1e-14, atol=1e-14)
    with pytest.raises(ValueError, match="potential=None"):
        mf.Interaction(USA_KERNEL, potential="-t").growth_rate(2)


# ---------------------------------------------------------------------- dissipation
def fourth_order_derivative(values: np.ndarray, h: float) -> np.ndarray:
    """(f_{i-2} - 8 f_{i-1} + 8 f_{i+1} - f_{i+2}) / 12h at the interior points i = 2 … n-3 (error O(h⁴))."""
    return (values[:-4] - 8 * values[1:-3] + 8 * values[3:-1] - values[4:]) / (12 * h)


def test_free_energy_dissipation_on_the_circle():
    sigma = 0.2
    model = mf.Interaction("-exp(2*t)/2", potential=mf.Potential.fourier([0.0, 0.3 - 0.1j]), noise=sigma)
    circle = mf.Circle(128)
    rho0 = mf.density(circle, lambda th: 1 + 0.5 * np.cos(th) + 0.3 * np.sin(3 * th))
    h = 0.01
    ds = mf.solve(model, rho0, np.arange(0, 0.4 + h / 2, h), method="spectral", rtol=1e-12, atol=1e-14)
    free = ds.free_energy.values
    assert np.all(np.diff(free) < 0)
    rate = fourth_order_derivative(free, h)
    k = np.fft.rfftfreq(circle.n, 1.0 / circle.n)
    dissipation = []
    for rho in ds.density.values[2:-2]:
        drho = np.fft.irfft(1j * k * np.fft.rfft(rho), circle.n)
        x = model.velocity(mf.density(circle, rho, normalize=False))
        dissipation.append(np.sum(circle.weights * (rho * x - sigma * drho) ** 2 / rho))
    dissipation = np.array(dissipation)
    # dF/dt = -∫ ρ |X - σ ∂_θ log ρ|² dθ: the finite difference is O(h⁴), the quadrature spectral
    assert np.max(np.abs(rate + dissipation) / dissipation) < 1e-6


def test_free_energy_dissipation_on_s2():
    sigma = 0.1
    model = mf.Interaction(mf.Kernel.gaussian(0.5), potential="-t", noise=sigma)
    sphere = mf.Sphere(31)
    rho0 = mf.density(sphere, lambda lat, lon: 1 + 0.4 * np.cos(lat) * np.cos(lon) + 0.2 * np.sin(lat))
    h = 0.01
    ds = mf.solve(model, rho0, np.arange(0, 0.2 + h / 2, h), method="spectral", rtol=1e-12, atol=1e-14)
    free = ds.free_energy.values
    assert np.all(np.diff(free) < 0)
    rate = fourth_order_derivative(free, h)
    grid = sphere.grid
    colat, lon = np.meshgrid(grid.colatitude, grid.lon, indexing="ij")
    e_theta = np.stack([np.cos(colat) * np.cos(lon), np.cos(colat) * np.sin(lon), -np.sin(colat)], axis=-1)
    e_phi = np.stack([-np.sin(lon), np.cos(lon), np.zeros_like(lon)], axis=-1)
    dissipation = []
    for rho in ds.density.values[2:-2]:
        d_theta, d_phi = grid.gradient(grid.analysis(rho))
        gradient = d_theta[..., None] * e_theta + d_phi[..., None] * e_phi
        x = model.velocity(mf.density(sphere, rho, normalize=False))
        flux = rho[..., None] * x - sigma * gradient
        dissipation.append(np.sum(sphere.weights * np.sum(flux**2, axis=-1) / rho))
    dissipation = np.array(dissipation)
    assert np.max(np.abs(rate + dissipation) / dissipation) < 1e-6


# ---------------------------------------------------------------------- Gibbs states
KAPPA, SIGMA = 1.0, 0.5


@pytest.mark.parametrize("domain, equilibrium", [
    (mf.Circle(64), lambda d: mf.von_mises(d, np.pi / 2, KAPPA / SIGMA)),   # e_2 on S¹ is θ = π/2
    (mf.Sphere(23), lambda d: mf.von_mises(d, [0, 0, 1], KAPPA / SIGMA)),
    (mf.ZonalSphere(5, 32), lambda d: mf.von_mises(d, kappa=KAPPA / SIGMA)),
], ids=["circle", "sphere", "zonal_d5"])
def test_the_potential_alone_relaxes_to_von_mises_fisher(domain, equilibrium):
    # W = 0, U(x) = -κ x_d: ρ_∞ ∝ e^{κ x_d/σ}, reached at the rate of the Fokker–Planck gap
    model = mf.Interaction(0.0, potential=f"-{KAPPA}*t", noise=SIGMA)
    ds = mf.solve(model, mf.uniform(domain), [0.0, 30.0], method="spectral", rtol=1e-10)
    target = equilibrium(domain).values
    # spectral in space; 30 time units leave e^{-30 σ (d-1)} of the start, below the time tolerance
    assert np.max(np.abs(ds.density.values[-1] - target)) < 1e-8 * np.max(target)


def test_the_finite_volume_scheme_is_well_balanced_at_the_gibbs_state():
    # its face velocity -(U_{j+1} - U_j)/h - σ(log ρ_{j+1} - log ρ_j)/h vanishes exactly at ρ_j ∝ e^{-U_j/σ}: the
    # nodal values of the exact Gibbs state, normalised by the (spectrally accurate) midpoint rule
    model = mf.Interaction(0.0, potential=f"-{KAPPA}*t", noise=SIGMA)
    for n in (32, 64):
        circle = mf.Circle(n)
        ds = mf.solve(model, mf.uniform(circle), [0.0, 40.0], method="finite_volume")
        target = mf.von_mises(circle, np.pi / 2, KAPPA / SIGMA).values
        # what remains after 40 time units is the start's e^{-40 σ}, below 1e-8
        assert np.max(np.abs(ds.density.values[-1] - target)) < 1e-9 * np.max(target)


# ---------------------------------------------------------------------- Riesz
def test_repulsive_riesz_flow_tends_to_the_uniform_state_and_stays_positive():
    sphere = mf.Sphere(15)
    z = sphere.points[..., 2]
    rho0 = mf.density(sphere, 1 + 0.5 * eval_legendre(1, z) + 0.3 * eval_legendre(2, z) + 0.2 * sphere.points[..., 0])
    model = mf.Interaction(-mf.Kernel.riesz(1.0))
    ds = mf.solve(model, rho0, np.linspace(0, 20, 11), method="finite_volume")
    assert ds.attrs["success"] and float(ds.density.min()) >= 0
    deviation = np.max(np.abs(ds.density.values - 1 / (4 * np.pi)), axis=(1, 2))
    assert np.all(np.diff(deviation) < 0)
    # the slowest of these modes, l = 2, decays at λ_2 = -6 λ_2^{|x-y|}/(4π) ≈ -0.23: e^{-4.6} ≈ 1e-2 by t = 20
    slowest = float(mf.Interaction(-mf.Kernel.riesz(1.0)).growth_rate(2, 3))
    assert deviation[-1] < 2 * np.exp(slowest * 20) * deviation[0]
    # the energy decreases towards that of the uniform state, -½ · 4/3; it is the energy of the cell averages
    # reconstructed on the Gauss–Legendre nodes, whose mass differs from 1 at O(h²) (3e-4 at t = 6 here), so it is
    # monotone while it changes by more than that and ends within it
    assert np.all(np.diff(ds.energy.values[:3]) < 0) and abs(float(ds.energy[-1]) + 2 / 3) < 1e-3
